package conf

import (
	"strconv"
	"strings"
)

// Known values of enumerated keys (22.05).
var (
	debugFlagNames = words("Accrue Agent Backfill BackfillMap BurstBuffer cgroup CPU_Bind Data DB_Archive " +
		"DB_Assoc DB_TRES DB_Event DB_Job DB_QOS DB_Query DB_Reservation DB_Resource DB_Step DB_Usage " +
		"DB_WCKey Dependency Elasticsearch Energy ExtSensors Federation FrontEnd Gang Gres Hetjob " +
		"Interconnect JobAccountGather JAG JobContainer License MPI Network Net NetworkRaw NetRaw " +
		"NO_CONF_HASH NodeFeatures Priority Profile Protocol Reservation Route Script SelectType Steps " +
		"Switch Task TraceJobs Trigger Triggers CpuFrequency Power PowerSave TimeCray WorkQueue WorkQ")
	selectParamNames = words("CR_Socket CR_Socket_Memory CR_Core CR_Core_Memory CR_Memory CR_CPU " +
		"CR_CPU_Memory other_cons_res other_cons_tres CR_ALLOCATE_FULL_SOCKET CR_ONE_TASK_PER_CORE " +
		"CR_CORE_DEFAULT_DIST_BLOCK CR_LLN CR_PACK_NODES")
	prologFlagNames = words("Alloc Contain DeferBatch NoHold Serial X11") // 22.05 prolog_str2flags
	logLevelNames   = words("quiet fatal error info verbose debug debug2 debug3 debug4 debug5 " +
		"0 1 2 3 4 5 6 7 8 9")
	preemptModeNames = words("off cancel requeue suspend gang within cluster on")
	resetPeriods     = words("none now daily weekly monthly quarterly yearly")
)

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[strings.ToLower(w)] = true
	}
	return m
}

func (p *parser) pos(key string) Pos { return p.raw[key].Pos }

func (p *parser) given(key string) (string, bool) {
	v, ok := p.raw[key]
	return v.Value, ok
}

// validateGlobals applies the derived defaults and checks of 22.05's
// _validate_and_set_defaults (and the few slurmctld-only checks), reporting
// every problem instead of stopping at the first.
func (p *parser) validateGlobals() {
	c := p.cfg
	if c.ClusterName == "" {
		p.d.errorf(Pos{}, "ClusterName needs to be specified")
	} else {
		c.ClusterName = strings.ToLower(c.ClusterName)
	}
	p.controllers()

	if v, ok := p.given("AcctGatherInfinibandType"); ok && !p.isSet("AcctGatherInterconnectType") {
		c.AcctGatherInterconnectType = v
	}
	c.AcctGatherInterconnectType = strings.ReplaceAll(c.AcctGatherInterconnectType, "infiniband", "interconnect")
	c.AcctGatherEnergyType = strings.ReplaceAll(c.AcctGatherEnergyType, "rsmi", "gpu")
	if p.isSet("SbcastParameters") && !p.isSet("BcastParameters") {
		c.BcastParameters = c.SbcastParameters
		p.d.warnf(p.pos("SbcastParameters"), "SbcastParameters has been renamed to BcastParameters. Please update your configuration.")
	}
	if c.CommunicationParameters.Has("DisableIPv4") && !c.CommunicationParameters.Has("EnableIPv6") {
		p.d.errorf(p.pos("CommunicationParameters"), "Both IPv4 and IPv6 support disabled, cannot communicate")
	}
	if !p.isSet("CredType") {
		c.CredType = "cred/munge"
		if v, ok := p.given("CryptoType"); ok {
			c.CredType = strings.Replace(v, "crypto", "cred", 1)
		}
	}
	if p.isSet("DefMemPerNode") && p.isSet("DefMemPerCPU") {
		p.d.warnf(p.pos("DefMemPerCPU"), "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode")
		c.DefMemPerCPU = 0
	}
	if p.isSet("MaxMemPerNode") && p.isSet("MaxMemPerCPU") {
		p.d.warnf(p.pos("MaxMemPerCPU"), "MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode")
		c.MaxMemPerCPU = 0
	}
	for _, f := range c.DebugFlags {
		if !debugFlagNames[strings.ToLower(f)] {
			p.d.errorf(p.pos("DebugFlags"), "DebugFlags invalid: %s", strings.Join(c.DebugFlags, ","))
			break
		}
	}
	if v, ok := p.given("EnforcePartLimits"); ok {
		switch strings.ToUpper(v) {
		case "YES", "ANY":
			c.EnforcePartLimits = "ANY"
		case "ALL":
			c.EnforcePartLimits = "ALL"
		case "NO":
			c.EnforcePartLimits = "NO"
		default:
			p.d.errorf(p.pos("EnforcePartLimits"), "Bad EnforcePartLimits: %s", v)
		}
	} else {
		c.EnforcePartLimits = "NO"
	}
	if v, ok := p.given("FastSchedule"); ok {
		n, _ := ParseUint16("FastSchedule", v)
		switch n {
		case 1:
			p.d.warnf(p.pos("FastSchedule"), "Ignoring obsolete FastSchedule=1 option. Please remove from your configuration.")
		case 2:
			p.d.errorf(p.pos("FastSchedule"), "The FastSchedule option has been removed. The FastSchedule=2 functionality is available through the SlurmdParameters=config_overrides option.")
		default:
			p.d.errorf(p.pos("FastSchedule"), "The FastSchedule option has been removed. Please update your configuration.")
		}
	}
	if c.FirstJobId == 0 {
		p.d.errorf(p.pos("FirstJobId"), "FirstJobId cannot be zero")
	}
	if c.JobAcctGatherParams.Has("UsePSS") && c.JobAcctGatherParams.Has("NoShared") {
		p.d.errorf(p.pos("JobAcctGatherParams"), "JobAcctGatherParams options UsePSS and NoShared are mutually exclusive.")
	}
	if !p.isSet("JobCompLoc") {
		if c.JobCompType == "jobcomp/mysql" {
			c.JobCompLoc = "slurm_jobcomp_db"
		} else {
			c.JobCompLoc = "/var/log/slurm_jobcomp.log"
		}
	}
	if c.JobRequeue > 1 {
		c.JobRequeue = 1
	}
	if p.isSet("KeepAliveTime") {
		p.d.warnf(p.pos("KeepAliveTime"), "KeepAliveTime parameter has moved to CommunicationParameters. Please update your config.")
	}
	if c.LaunchParameters.Has("enable_nss_slurm") && c.LaunchParameters.Has("disable_send_gids") {
		p.d.errorf(p.pos("LaunchParameters"), "LaunchParameters options enable_nss_slurm and disable_send_gids are mutually exclusive.")
	}
	if v, ok := p.given("LogTimeFormat"); ok {
		lv := strings.ToLower(v)
		c.LogTimeFormat = "iso8601_ms"
		for _, f := range []string{"iso8601_ms", "iso8601", "rfc5424_ms", "rfc5424", "clock", "short", "thread_id"} {
			if strings.Contains(lv, f) {
				c.LogTimeFormat = f
				break
			}
		}
	} else {
		c.LogTimeFormat = "iso8601_ms"
	}
	if c.MaxArraySize > 4000001 {
		p.d.warnf(p.pos("MaxArraySize"), "MaxArraySize value (%d) is greater than 4000001", c.MaxArraySize)
	}
	if p.isSet("MaxDBDMsgs") && c.MaxDBDMsgs < 10000 {
		p.d.errorf(p.pos("MaxDBDMsgs"), "MaxDBDMsgs value (%d) needs to be greater than 10000", c.MaxDBDMsgs)
	}
	if c.MaxJobCount < 1 {
		p.d.errorf(p.pos("MaxJobCount"), "MaxJobCount=%d, No jobs permitted", c.MaxJobCount)
	}
	if c.MaxJobId > 0x03ffffff {
		p.d.warnf(p.pos("MaxJobId"), "MaxJobId can not exceed MAX_JOB_ID, resetting value")
		c.MaxJobId = 0x03ffffff
	}
	if c.FirstJobId > c.MaxJobId {
		p.d.errorf(p.pos("FirstJobId"), "FirstJobId > MaxJobId")
	} else if n := c.MaxJobId - c.FirstJobId + 1; c.MaxJobCount > n {
		c.MaxJobCount = n
	}
	if c.MaxStepCount < 1 {
		p.d.errorf(p.pos("MaxStepCount"), "MaxStepCount=%d, No steps permitted", c.MaxStepCount)
	}
	if !p.isSet("MCSPlugin") && c.MCSParameters != "" {
		p.d.errorf(p.pos("MCSParameters"), "MCSParameters=%s used and no MCSPlugin", c.MCSParameters)
	}
	if c.MCSPlugin == "mcs/group" && c.MCSParameters == "" {
		p.d.errorf(p.pos("MCSPlugin"), "MCSPlugin is mcs/group and no MCSParameters")
	}
	if c.MessageTimeout > 100 {
		p.d.warnf(p.pos("MessageTimeout"), "MessageTimeout is too high for effective fault-tolerance")
	}
	if p.isSet("MinJobAge") && c.MinJobAge < 2 {
		p.d.warnf(p.pos("MinJobAge"), "MinJobAge must be at least 2")
		c.MinJobAge = 2
	}
	if c.MpiDefault == "openmpi" {
		c.MpiDefault = "none"
		p.d.warnf(p.pos("MpiDefault"), "Translating obsolete 'MpiDefault=openmpi' option to 'MpiDefault=none'. Please update your configuration.")
	}
	if strings.Contains(strings.ToLower(c.AccountingStorageType), "mysql") {
		p.d.errorf(p.pos("AccountingStorageType"), "AccountingStorageType=accounting_storage/mysql only permitted in SlurmDBD.")
	}
	c.AccountingStorageTRES = append(c.AccountingStorageTRES, splitList("cpu,mem,energy,node,billing,fs/disk,vmem,pages")...)
	if p.isSet("AccountingStorageLoc") {
		p.d.errorf(p.pos("AccountingStorageLoc"), "The AccountingStorageLoc option has been removed. It is safe to remove from your configuration.")
	}
	if p.isSet("AccountingStoreJobComment") {
		p.d.errorf(p.pos("AccountingStoreJobComment"), "The AccountingStoreJobComment option has been removed, please use AccountingStoreFlags=job_comment option instead.")
	}
	if !p.isSet("AccountingStoragePort") && c.AccountingStorageType == "accounting_storage/slurmdbd" {
		c.AccountingStoragePort = 6819
	}
	if c.AccountingStorageType == "accounting_storage/slurmdbd" {
		c.AccountingStorageUser = "N/A"
	}
	p.preempt()
	p.priority()
	p.prologFlags()
	if p.isSet("SallocDefaultCommand") {
		p.d.errorf(p.pos("SallocDefaultCommand"), "SallocDefaultCommand has been removed. Please consider setting LaunchParameters=use_interactive_step instead.")
	}
	if c.SchedulerTimeSlice < 5 {
		p.d.warnf(p.pos("SchedulerTimeSlice"), "SchedulerTimeSlice must be at least 5 seconds")
		c.SchedulerTimeSlice = 30
	}
	if c.SelectType != "select/cons_tres" && c.MaxNodeCount != 0 {
		p.d.warnf(p.pos("MaxNodeCount"), "MaxNodeCount only compatible with cons_tres")
		c.MaxNodeCount = 0
	}
	if (c.SelectType == "select/cons_res" || c.SelectType == "select/cons_tres") && len(c.SelectTypeParameters) == 0 {
		// The plugin's default (it logs this at info level).
		c.SelectTypeParameters = List{"CR_Core_Memory"}
	}
	for _, s := range c.SelectTypeParameters {
		if !selectParamNames[strings.ToLower(s)] {
			p.d.errorf(p.pos("SelectTypeParameters"), "Bad SelectTypeParameter: %s", strings.Join(c.SelectTypeParameters, ","))
			break
		}
	}
	for _, k := range []string{"SlurmctldDebug", "SlurmctldSyslogDebug", "SlurmdDebug", "SlurmdSyslogDebug"} {
		v, ok := p.given(k)
		switch {
		case ok && !logLevelNames[strings.ToLower(v)]:
			p.d.errorf(p.pos(k), "Invalid %s %s", k, v)
		case ok:
			p.setString(k, strings.ToLower(v))
		case k == "SlurmctldDebug" || k == "SlurmdDebug":
			p.setString(k, "info")
		}
	}
	c.SlurmctldPort = PortRange{First: 6817, Count: 1}
	if v, ok := p.given("SlurmctldPort"); ok {
		if pr, good := parsePortRange(v, false); good {
			c.SlurmctldPort = pr
		} else {
			p.d.errorf(p.pos("SlurmctldPort"), "Invalid SlurmctldPort %s", v)
		}
	}
	if v, ok := p.given("SrunPortRange"); ok {
		if pr, good := parsePortRange(v, true); good {
			c.SrunPortRange = pr
		} else {
			p.d.warnf(p.pos("SrunPortRange"), "Invalid SrunPortRange %s, ignored", v)
		}
	}
	if p.isSet("SlurmSchedLogLevel") && c.SlurmSchedLogFile == "" {
		p.d.warnf(p.pos("SlurmSchedLogLevel"), "SlurmSchedLogLevel requires SlurmSchedLogFile value")
	}
	c.SuspendTime = Infinite32
	if v, ok := p.given("SuspendTime"); ok {
		if strings.EqualFold(v, "NONE") || strings.EqualFold(v, "INFINITE") || v == "-1" {
			c.SuspendTime = Infinite32
		} else {
			c.SuspendTime = Seconds(uint32(atoi(v)))
		}
	}
	if c.TreeWidth == 0 {
		p.d.warnf(p.pos("TreeWidth"), "TreeWidth=0 is invalid")
		c.TreeWidth = 50
	}
	if c.SchedulerParameters.Has("max_script_size") {
		v, _ := c.SchedulerParameters.Get("max_script_size")
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n > 512*1024*1024 {
			p.d.errorf(p.pos("SchedulerParameters"), "SchedulerParameters option max_script_size cannot exceed 512 MB")
		}
	}
}

func (p *parser) isSet(key string) bool { _, ok := p.raw[key]; return ok }

func (p *parser) setString(key, v string) {
	switch key {
	case "SlurmctldDebug":
		p.cfg.SlurmctldDebug = v
	case "SlurmctldSyslogDebug":
		p.cfg.SlurmctldSyslogDebug = v
	case "SlurmdDebug":
		p.cfg.SlurmdDebug = v
	case "SlurmdSyslogDebug":
		p.cfg.SlurmdSyslogDebug = v
	}
}

// atoi behaves like C atoi: leading blanks, sign, digits, rest ignored.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<40 {
			break
		}
	}
	if neg {
		n = -n
	}
	return n
}

// parsePortRange reads "port" or "first-last". needRange requires the
// range form (SrunPortRange).
func parsePortRange(v string, needRange bool) (PortRange, bool) {
	a, b, isRange := strings.Cut(v, "-")
	first, err := strconv.ParseUint(a, 10, 16)
	if err != nil || first == 0 {
		return PortRange{}, false
	}
	if !isRange {
		if needRange {
			return PortRange{}, false
		}
		return PortRange{First: uint16(first), Count: 1}, true
	}
	last, err := strconv.ParseUint(b, 10, 16)
	if err != nil || last <= first {
		return PortRange{}, false
	}
	return PortRange{First: uint16(first), Count: uint16(last - first + 1)}, true
}

// controllers implements SlurmctldHost and its obsolete forms.
func (p *parser) controllers() {
	c := p.cfg
	if len(c.SlurmctldHost) > 0 {
		for _, k := range []string{"ControlMachine", "ControlAddr", "BackupController", "BackupAddr"} {
			if p.isSet(k) {
				p.d.warnf(p.pos(k), "Ignoring %s since SlurmctldHost is set.", k)
			}
		}
	} else {
		cm, ok := p.given("ControlMachine")
		if !ok {
			p.d.errorf(Pos{}, "No SlurmctldHost defined.")
			return
		}
		addr, haveAddr := p.given("ControlAddr")
		if !haveAddr && strings.Contains(cm, ",") {
			p.d.errorf(p.pos("ControlMachine"), "ControlMachine has multiple host names, so ControlAddr must be specified.")
			return
		}
		if !haveAddr {
			addr = cm
		}
		c.SlurmctldHost = append(c.SlurmctldHost, ControllerHost{Host: cm, Addr: addr, Pos: p.pos("ControlMachine")})
		bc, haveBackup := p.given("BackupController")
		if ba, ok := p.given("BackupAddr"); ok {
			if !haveBackup {
				p.d.errorf(p.pos("BackupAddr"), "BackupAddr specified without BackupController")
				return
			}
			c.SlurmctldHost = append(c.SlurmctldHost, ControllerHost{Host: bc, Addr: ba, Pos: p.pos("BackupController")})
		} else if haveBackup {
			c.SlurmctldHost = append(c.SlurmctldHost, ControllerHost{Host: bc, Addr: bc, Pos: p.pos("BackupController")})
		}
	}
	for i, h := range c.SlurmctldHost {
		for _, o := range c.SlurmctldHost[:i] {
			if o.Host == h.Host {
				p.d.errorf(h.Pos, "Duplicate SlurmctldHost records: %s", h.Host)
			}
		}
	}
}

// parsePreemptMode reads a PreemptMode list; ok is false on unknown words,
// on more than one mode (OFF, CANCEL, REQUEUE, SUSPEND and their aliases
// CLUSTER, ON) and on GANG with WITHIN, as preempt_mode_num.
func parsePreemptMode(v string) (List, bool) {
	l := splitList(v)
	modes := 0
	for _, m := range l {
		w := strings.ToLower(m)
		if !preemptModeNames[w] {
			return l, false
		}
		if w != "gang" && w != "within" {
			modes++
		}
	}
	if modes > 1 || l.Has("GANG") && l.Has("WITHIN") {
		return l, false
	}
	return l, true
}

func (p *parser) preempt() {
	c := p.cfg
	c.PreemptMode = List{"OFF"}
	if v, ok := p.given("PreemptMode"); ok {
		l, good := parsePreemptMode(v)
		if !good {
			p.d.errorf(p.pos("PreemptMode"), "PreemptMode=%s invalid", v)
			return
		}
		c.PreemptMode = l
		// Exactly SUSPEND (or ON): WITHIN or GANG with it passes.
		if (l.Has("SUSPEND") || l.Has("ON")) && !l.Has("GANG") && !l.Has("WITHIN") {
			p.d.errorf(p.pos("PreemptMode"), "PreemptMode=SUSPEND requires GANG too")
			return
		}
	}
	var rest []string
	for _, m := range c.PreemptMode {
		switch strings.ToLower(m) {
		case "gang", "within", "off":
		default:
			rest = append(rest, m)
		}
	}
	off := len(rest) == 0
	switch c.PreemptType {
	case "preempt/qos", "preempt/partition_prio":
		if off {
			p.d.errorf(p.pos("PreemptType"), "PreemptType and PreemptMode values incompatible")
		}
	case "preempt/none":
		offNone := true
		for _, m := range c.PreemptMode {
			if l := strings.ToLower(m); l != "gang" && l != "off" {
				offNone = false
			}
		}
		if !offNone {
			p.d.errorf(p.pos("PreemptMode"), "PreemptType and PreemptMode values incompatible")
		}
	}
}

func (p *parser) priority() {
	c := p.cfg
	if v, ok := p.given("PriorityUsageResetPeriod"); ok {
		if !resetPeriods[strings.ToLower(v)] {
			p.d.errorf(p.pos("PriorityUsageResetPeriod"), "Bad value \"%s\" for PriorityUsageResetPeriod", v)
		} else {
			c.PriorityUsageResetPeriod = strings.ToUpper(v)
		}
	} else {
		c.PriorityUsageResetPeriod = "NONE"
		if c.PriorityDecayHalfLife == 0 {
			p.d.errorf(p.pos("PriorityDecayHalfLife"), "You have to either have PriorityDecayHalfLife != 0 or PriorityUsageResetPeriod set to something or the priority plugin will result in rolling over.")
		}
	}
	sum := uint64(c.PriorityWeightAge) + uint64(c.PriorityWeightAssoc) + uint64(c.PriorityWeightFairshare) +
		uint64(c.PriorityWeightJobSize) + uint64(c.PriorityWeightPartition) + uint64(c.PriorityWeightQOS)
	if sum > 0xffffffff {
		p.d.warnf(Pos{}, "PriorityWeight values too high, job priority value may overflow")
	}
}

func (p *parser) prologFlags() {
	c := p.cfg
	for _, f := range c.PrologFlags {
		if !prologFlagNames[strings.ToLower(f)] {
			p.d.errorf(p.pos("PrologFlags"), "PrologFlags invalid: %s", strings.Join(c.PrologFlags, ","))
			return
		}
	}
	// Contain implies Alloc, X11 implies Contain and Alloc, NoHold implies
	// Alloc; the effective set is kept in Slurm's canonical order.
	f := c.PrologFlags
	if len(f) > 0 {
		has := func(n string) bool { return f.Has(n) }
		eff := List{}
		for _, n := range []string{"Alloc", "Contain", "DeferBatch", "NoHold", "Serial", "X11"} {
			switch {
			case has(n),
				n == "Alloc" && (has("Contain") || has("X11") || has("NoHold")),
				n == "Contain" && has("X11"):
				eff = append(eff, n)
			}
		}
		c.PrologFlags = eff
	}
	if f.Has("NoHold") && (f.Has("Contain") || f.Has("X11")) {
		p.d.errorf(p.pos("PrologFlags"), "PrologFlags invalid combination: NoHold cannot be combined with Contain and/or X11")
	}
	if f.Has("X11") && c.ProctrackType == "proctrack/linuxproc" {
		p.d.errorf(p.pos("PrologFlags"), "Invalid combination: PrologFlags=X11 cannot be combined with proctrack/linuxproc")
	}
	if c.JobContainerType == "job_container/tmpfs" && !f.Has("Contain") {
		p.d.errorf(p.pos("JobContainerType"), "PrologFlags=Contain is required for use with job_container/tmpfs")
	}
}
