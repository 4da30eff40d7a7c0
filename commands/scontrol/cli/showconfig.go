package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// showConfig is "show config": the controller's configuration as
// slurm_print_ctl_conf prints it, then a blank line and the ping lines.
func showConfig(s *state, _ []string, _ *string) {
	v, err := s.rpc(msgtype.REQUEST_BUILD_INFO, msg.LastUpdateRequest{}, msgtype.RESPONSE_BUILD_INFO)
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_ctl_conf error", err)
		}
		return
	}
	bi, ok := v.(msg.BuildInfo)
	if !ok {
		return
	}
	fmt.Fprintf(s.stdout, "Configuration data as of %s\n", s.timeStr(bi.LastUpdate))
	for _, kv := range s.configPairs(&bi) {
		fmt.Fprintf(s.stdout, "%-23s = %s\n", kv[0], kv[1])
	}
	printPairs := func(title string, pairs []msg.KeyPair) {
		if len(pairs) == 0 {
			return
		}
		s.stdout.WriteString(title)
		for _, p := range pairs {
			fmt.Fprintf(s.stdout, "%-23s = %s\n", cs(p.Name), cs(p.Value))
		}
	}
	printPairs("\nAccount Gather Configuration:\n", bi.AcctGatherConf)
	printPairs("\nCgroup Support Configuration:\n", bi.CgroupConf)
	printPairs("\nExternal Sensors Configuration:\n", bi.ExtSensorsConf)
	printPairs("\nMPI Plugins Configuration:\n", bi.MPIConf)
	printPlugins := func(title string, l []msg.PluginParams) {
		if len(l) == 0 {
			return
		}
		s.stdout.WriteString(title)
		for _, p := range l {
			fmt.Fprintf(s.stdout, "\n----- %s -----\n", cs(p.Name))
			printPairs("", p.KeyPairs)
		}
	}
	printPlugins("\nNode Features Configuration:", bi.NodeFeaturesConf)
	printPlugins("\nSlurmctld Plugstack Plugins Configuration:", bi.SlurmctldPlugStackConf)
	printPairs("Select Plugin Configuration", bi.SelectConfKeyPairs)
	s.stdout.WriteString("\n")
	s.pingMachines(bi.ControlMachine)
}

// pingMachines is _ping_slurmctld with the controller names given.
func (s *state) pingMachines(names []msg.NullString) {
	c := s.ctl()
	s.exitCode = 1
	down := false
	for i, h := range names {
		status := "DOWN"
		if err := c.Client.Ping(s.ctx(), i); err == nil {
			status = "UP"
			s.exitCode = 0
		} else {
			down = true
		}
		mode := fmt.Sprintf("backup%d", i)
		switch {
		case i == 0:
			mode = "primary"
		case i == 1 && len(names) == 2:
			mode = "backup"
		}
		fmt.Fprintf(s.stdout, "Slurmctld(%s) at %s is %s\n", mode, cs(h), status)
	}
	if down && os.Getuid() == 0 {
		s.stdout.WriteString("*****************************************\n")
		s.stdout.WriteString("** RESTORE SLURMCTLD DAEMON TO SERVICE **\n")
		s.stdout.WriteString("*****************************************\n")
	}
}

func flagList(v uint64, names []struct {
	bit  uint64
	name string
}) string {
	var out []string
	for _, n := range names {
		if v&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, ",")
}

type bitName = struct {
	bit  uint64
	name string
}

var (
	enforceNames = []bitName{{0x1, "associations"}, {0x2, "limits"}, {0x8, "nojobs"}, {0x10, "nosteps"},
		{0x4, "qos"}, {0x20, "safe"}, {0x40, "wckeys"}}
	privateNames = []bitName{{1 << 5, "accounts"}, {1 << 7, "cloud"}, {1 << 8, "events"}, {1 << 0, "jobs"},
		{1 << 1, "nodes"}, {1 << 2, "partitions"}, {1 << 6, "reservations"}, {1 << 3, "usage"}, {1 << 4, "users"}}
	prologNames = []bitName{{0x1, "Alloc"}, {0x4, "Contain"}, {0x20, "DeferBatch"}, {0x2, "NoHold"},
		{0x8, "Serial"}, {0x10, "X11"}}
	reconfigNames = []bitName{{0x1, "KeepPartInfo"}, {0x2, "KeepPartState"}}
	debugNames    = []bitName{{1 << 50, "Accrue"}, {1 << 54, "JobAccountGather"}, {1 << 52, "Agent"},
		{1 << 12, "Backfill"}, {1 << 27, "BackfillMap"}, {1 << 40, "BurstBuffer"}, {1 << 55, "Cgroup"},
		{1 << 41, "CpuFrequency"}, {1 << 3, "CPU_Bind"}, {1 << 8, "Data"}, {1 << 44, "DB_Archive"},
		{1 << 30, "DB_Assoc"}, {1 << 45, "DB_TRES"}, {1 << 31, "DB_Event"}, {1 << 32, "DB_Job"},
		{1 << 33, "DB_QOS"}, {1 << 34, "DB_Query"}, {1 << 35, "DB_Reservation"}, {1 << 36, "DB_Resource"},
		{1 << 37, "DB_Step"}, {1 << 38, "DB_Usage"}, {1 << 39, "DB_WCKey"}, {1 << 53, "Dependency"},
		{1 << 46, "Elasticsearch"}, {1 << 18, "Energy"}, {1 << 19, "ExtSensors"}, {1 << 48, "Federation"},
		{1 << 15, "FrontEnd"}, {1 << 13, "Gang"}, {1 << 6, "Gres"}, {1 << 49, "Hetjob"},
		{1 << 22, "Interconnect"}, {1 << 24, "JobContainer"}, {1 << 47, "NodeFeatures"}, {1 << 20, "License"},
		{1 << 7, "MPI"}, {1 << 10, "Network"}, {1 << 4, "NetworkRaw"}, {1 << 5, "NO_CONF_HASH"},
		{1 << 42, "Power"}, {1 << 11, "Priority"}, {1 << 21, "Profile"}, {1 << 26, "Protocol"},
		{1 << 14, "Reservation"}, {1 << 29, "Route"}, {1 << 56, "Script"}, {1 << 0, "SelectType"},
		{1 << 1, "Steps"}, {1 << 17, "Switch"}, {1 << 43, "TimeCray"}, {1 << 28, "TraceJobs"},
		{1 << 2, "Triggers"}, {1 << 9, "WorkQueue"}}
	govNames = []struct {
		mask uint32
		name string
	}{{0x88000000, "Conservative"}, {0x84000000, "OnDemand"}, {0x82000000, "Performance"},
		{0x81000000, "PowerSave"}, {0x80400000, "SchedUtil"}, {0x80800000, "UserSpace"}}
)

// nullIfEmpty is what a NULL string from xstrdup of "" looks like: the
// *2str helpers return NULL when no flag is set.
func nullIfEmpty(v string) string {
	if v == "" {
		return "(null)"
	}
	return v
}

func noneIfEmpty(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

// cpuFreqConfString is cpu_freq_to_string.
func cpuFreqConfString(v uint32) string {
	switch v {
	case 0x80000001:
		return "Low"
	case 0x80000002:
		return "Medium"
	case 0x80000004:
		return "Highm1"
	case 0x80000003:
		return "High"
	case 0x88000000:
		return "Conservative"
	case 0x82000000:
		return "Performance"
	case 0x81000000:
		return "PowerSave"
	case 0x80800000:
		return "UserSpace"
	case 0x84000000:
		return "OnDemand"
	case 0x80400000:
		return "SchedUtil"
	}
	if v&0x80000000 != 0 {
		return "Unknown"
	}
	return slurmcli.ConvertNumUnit2(float64(v), slurmcli.UnitKilo, 1000, 0)
}

func logLevelName(v uint16) string {
	names := []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5", "(null)"}
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

func memConfPair(v uint64, what string) [2]string {
	switch {
	case v == 0xffffffffffffffff:
		return [2]string{what + "PerNode", "UNLIMITED"}
	case v&memPerCPU != 0:
		return [2]string{what + "PerCPU", fmt.Sprint(v &^ memPerCPU)}
	case v != 0:
		return [2]string{what + "PerNode", fmt.Sprint(v)}
	}
	return [2]string{what + "PerNode", "UNLIMITED"}
}

// configPairs is slurm_ctl_conf_2_key_pairs.
func (s *state) configPairs(b *msg.BuildInfo) [][2]string {
	var out [][2]string
	add := func(k, v string) { out = append(out, [2]string{k, v}) }
	str := func(k string, v msg.NullString) { add(k, cs(v)) }
	num := func(k string, v any) { add(k, fmt.Sprint(v)) }
	sec := func(k string, v any) { add(k, fmt.Sprintf("%v sec", v)) }
	yn := func(k string, flag uint32) {
		if b.ConfFlags&flag != 0 {
			add(k, "Yes")
		} else {
			add(k, "No")
		}
	}
	str("AccountingStorageBackupHost", b.AccountingStorageBackupHost)
	add("AccountingStorageEnforce", noneIfEmpty(flagList(uint64(b.AccountingStorageEnforce), enforceNames)))
	str("AccountingStorageHost", b.AccountingStorageHost)
	str("AccountingStorageExternalHost", b.AccountingStorageExtHost)
	str("AccountingStorageParameters", b.AccountingStorageParams)
	num("AccountingStoragePort", b.AccountingStoragePort)
	str("AccountingStorageTRES", b.AccountingStorageTRES)
	str("AccountingStorageType", b.AccountingStorageType)
	str("AccountingStorageUser", b.AccountingStorageUser)
	add("AccountingStoreFlags", nullIfEmpty(flagList(uint64(b.ConfFlags),
		[]bitName{{1 << 1, "job_comment"}, {1 << 10, "job_env"}, {1 << 9, "job_script"}})))
	str("AcctGatherEnergyType", b.AcctGatherEnergyType)
	str("AcctGatherFilesystemType", b.AcctGatherFilesystemType)
	str("AcctGatherInterconnectType", b.AcctGatherInterconnectType)
	sec("AcctGatherNodeFreq", b.AcctGatherNodeFreq)
	str("AcctGatherProfileType", b.AcctGatherProfileType)
	yn("AllowSpecResourcesUsage", 1<<3)
	str("AuthAltTypes", b.AuthAltTypes)
	str("AuthAltParameters", b.AuthAltParams)
	str("AuthInfo", b.AuthInfo)
	str("AuthType", b.AuthType)
	sec("BatchStartTimeout", b.BatchStartTimeout)
	str("BcastExclude", b.BcastExclude)
	str("BcastParameters", b.BcastParameters)
	add("BOOT_TIME", s.timeStr(b.BootTime))
	str("BurstBufferType", b.BBType)
	str("CliFilterPlugins", b.CliFilterPlugins)
	str("ClusterName", b.ClusterName)
	str("CommunicationParameters", b.CommParams)
	sec("CompleteWait", b.CompleteWait)
	str("CoreSpecPlugin", b.CoreSpecPlugin)
	add("CpuFreqDef", cpuFreqConfString(b.CPUFreqDef))
	var govs []string
	for _, g := range govNames {
		if b.CPUFreqGovs&g.mask == g.mask {
			govs = append(govs, g.name)
		}
	}
	if len(govs) == 0 {
		add("CpuFreqGovernors", "No Governors defined")
	} else {
		add("CpuFreqGovernors", strings.Join(govs, ","))
	}
	str("CredType", b.CredType)
	add("DebugFlags", nullIfEmpty(flagList(b.DebugFlags, debugNames)))
	p := memConfPair(b.DefMemPerCPU, "DefMem")
	add(p[0], p[1])
	str("DependencyParameters", b.DependencyParams)
	yn("DisableRootJobs", 1<<2)
	num("EioTimeout", b.EIOTimeout)
	switch b.EnforcePartLimits {
	case 0:
		add("EnforcePartLimits", "NO")
	case 2:
		add("EnforcePartLimits", "ANY")
	case 1:
		add("EnforcePartLimits", "ALL")
	default:
		add("EnforcePartLimits", "")
	}
	str("Epilog", b.Epilog)
	add("EpilogMsgTime", fmt.Sprintf("%d usec", b.EpilogMsgTime))
	str("EpilogSlurmctld", b.EpilogSlurmctld)
	str("ExtSensorsType", b.ExtSensorsType)
	sec("ExtSensorsFreq", b.ExtSensorsFreq)
	basic := b.PriorityType.Valid && b.PriorityType.Value == "priority/basic"
	if !basic {
		num("FairShareDampeningFactor", b.FSDampeningFactor)
	}
	str("FederationParameters", b.FedParams)
	num("FirstJobId", b.FirstJobID)
	sec("GetEnvTimeout", b.GetEnvTimeout)
	str("GresTypes", b.GresPlugins)
	str("GpuFreqDef", b.GPUFreqDef)
	num("GroupUpdateForce", b.GroupForce)
	sec("GroupUpdateTime", b.GroupTime)
	if b.HashVal != noVal {
		ours := s.confHash()
		if ours == b.HashVal {
			add("HASH_VAL", "Match")
		} else {
			add("HASH_VAL", fmt.Sprintf("Different Ours=0x%x Slurmctld=0x%x", ours, b.HashVal))
		}
	}
	sec("HealthCheckInterval", b.HealthCheckInterval)
	add("HealthCheckNodeState", healthCheckState(b.HealthCheckNodeState))
	str("HealthCheckProgram", b.HealthCheckProgram)
	sec("InactiveLimit", b.InactiveLimit)
	str("InteractiveStepOptions", b.InteractiveStepOpts)
	str("JobAcctGatherFrequency", b.JobAcctGatherFreq)
	str("JobAcctGatherType", b.JobAcctGatherType)
	str("JobAcctGatherParams", b.JobAcctGatherParams)
	str("JobCompHost", b.JobCompHost)
	str("JobCompLoc", b.JobCompLoc)
	num("JobCompPort", b.JobCompPort)
	str("JobCompType", b.JobCompType)
	str("JobCompUser", b.JobCompUser)
	str("JobContainerType", b.JobContainerPlugin)
	str("JobCredentialPrivateKey", b.JobCredentialPrivateKey)
	str("JobCredentialPublicCertificate", b.JobCredentialPublicCertificate)
	add("JobDefaults", jobDefaultsString(b.JobDefaultsList))
	num("JobFileAppend", b.JobFileAppend)
	num("JobRequeue", b.JobRequeue)
	str("JobSubmitPlugins", b.JobSubmitPlugins)
	num("KillOnBadExit", b.KillOnBadExit)
	sec("KillWait", b.KillWait)
	str("LaunchParameters", b.LaunchParams)
	str("LaunchType", b.LaunchType)
	str("Licenses", b.Licenses)
	logFmts := []string{"iso8601_ms", "iso8601", "rfc5424_ms", "rfc5424", "clock", "short", "thread_id"}
	if int(b.LogFmt) < len(logFmts) {
		add("LogTimeFormat", logFmts[b.LogFmt])
	} else {
		add("LogTimeFormat", "(null)")
	}
	str("MailDomain", b.MailDomain)
	str("MailProg", b.MailProg)
	num("MaxArraySize", b.MaxArraySz)
	num("MaxDBDMsgs", b.MaxDBDMsgs)
	num("MaxJobCount", b.MaxJobCnt)
	num("MaxJobId", b.MaxJobID)
	p = memConfPair(b.MaxMemPerCPU, "MaxMem")
	add(p[0], p[1])
	num("MaxNodeCount", b.MaxNodeCnt)
	num("MaxStepCount", b.MaxStepCnt)
	num("MaxTasksPerNode", b.MaxTasksPerNode)
	str("MCSPlugin", b.MCSPlugin)
	str("MCSParameters", b.MCSPluginParams)
	sec("MessageTimeout", b.MsgTimeout)
	sec("MinJobAge", b.MinJobAge)
	str("MpiDefault", b.MPIDefault)
	str("MpiParams", b.MPIParams)
	// Debian's 22.05 is built with --enable-multiple-slurmd.
	add("MULTIPLE_SLURMD", "Yes")
	num("NEXT_JOB_ID", b.NextJobID)
	str("NodeFeaturesPlugins", b.NodeFeaturesPlugins)
	if b.OverTimeLimit == infinite16 {
		add("OverTimeLimit", "UNLIMITED")
	} else {
		add("OverTimeLimit", fmt.Sprintf("%d min", b.OverTimeLimit))
	}
	str("PluginDir", b.PluginDir)
	str("PlugStackConfig", b.PlugStack)
	str("PowerParameters", b.PowerParameters)
	str("PowerPlugin", b.PowerPlugin)
	add("PreemptMode", preemptModeString(b.PreemptMode))
	str("PreemptType", b.PreemptType)
	if b.PreemptExemptTime == infinite {
		add("PreemptExemptTime", "NONE")
	} else {
		add("PreemptExemptTime", secs2time(int64(b.PreemptExemptTime)))
	}
	str("PrEpParameters", b.PrEpParams)
	str("PrEpPlugins", b.PrEpPlugins)
	str("PriorityParameters", b.PriorityParams)
	// 22.05 does not send these two; the client prints them unset.
	add("PrioritySiteFactorParameters", "(null)")
	add("PrioritySiteFactorPlugin", "(null)")
	if basic {
		str("PriorityType", b.PriorityType)
	} else {
		add("PriorityDecayHalfLife", secs2time(int64(b.PriorityDecayHL)))
		add("PriorityCalcPeriod", secs2time(int64(b.PriorityCalcPeriod)))
		if b.PriorityFavorSmall != 0 {
			add("PriorityFavorSmall", "Yes")
		} else {
			add("PriorityFavorSmall", "No")
		}
		add("PriorityFlags", priorityFlagsString(b.PriorityFlags))
		add("PriorityMaxAge", secs2time(int64(b.PriorityMaxAge)))
		resets := []string{"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}
		if int(b.PriorityResetPeriod) < len(resets) {
			add("PriorityUsageResetPeriod", resets[b.PriorityResetPeriod])
		} else {
			add("PriorityUsageResetPeriod", "UNKNOWN")
		}
		str("PriorityType", b.PriorityType)
		num("PriorityWeightAge", b.PriorityWeightAge)
		num("PriorityWeightAssoc", b.PriorityWeightAssoc)
		num("PriorityWeightFairShare", b.PriorityWeightFS)
		num("PriorityWeightJobSize", b.PriorityWeightJS)
		num("PriorityWeightPartition", b.PriorityWeightPart)
		num("PriorityWeightQOS", b.PriorityWeightQOS)
		str("PriorityWeightTRES", b.PriorityWeightTRES)
	}
	add("PrivateData", noneIfEmpty(flagList(uint64(b.PrivateData), privateNames)))
	str("ProctrackType", b.ProctrackType)
	str("Prolog", b.Prolog)
	num("PrologEpilogTimeout", b.PrologEpilogTimeout)
	str("PrologSlurmctld", b.PrologSlurmctld)
	add("PrologFlags", nullIfEmpty(flagList(uint64(b.PrologFlags), prologNames)))
	num("PropagatePrioProcess", b.PropagatePrioProcess)
	str("PropagateResourceLimits", b.PropagateRlimits)
	str("PropagateResourceLimitsExcept", b.PropagateRlimitsExcept)
	str("RebootProgram", b.RebootProgram)
	add("ReconfigFlags", nullIfEmpty(flagList(uint64(b.ReconfigFlags), reconfigNames)))
	str("RequeueExit", b.RequeueExit)
	str("RequeueExitHold", b.RequeueExitHold)
	str("ResumeFailProgram", b.ResumeFailProgram)
	str("ResumeProgram", b.ResumeProgram)
	add("ResumeRate", fmt.Sprintf("%d nodes/min", b.ResumeRate))
	sec("ResumeTimeout", b.ResumeTimeout)
	str("ResvEpilog", b.ResvEpilog)
	if b.ResvOverRun == infinite16 {
		add("ResvOverRun", "UNLIMITED")
	} else {
		add("ResvOverRun", fmt.Sprintf("%d min", b.ResvOverRun))
	}
	str("ResvProlog", b.ResvProlog)
	num("ReturnToService", b.Ret2Service)
	str("RoutePlugin", b.RoutePlugin)
	str("SchedulerParameters", b.SchedParams)
	sec("SchedulerTimeSlice", b.SchedTimeSlice)
	str("SchedulerType", b.SchedType)
	str("ScronParameters", b.ScronParams)
	str("SelectType", b.SelectType)
	if b.SelectTypeParam != 0 {
		add("SelectTypeParameters", selectTypeParamString(b.SelectTypeParam))
	}
	add("SlurmUser", fmt.Sprintf("%s(%d)", cs(b.SlurmUserName), b.SlurmUserID))
	str("SlurmctldAddr", b.SlurmctldAddr)
	add("SlurmctldDebug", logLevelName(b.SlurmctldDebug))
	for i := range b.ControlMachine {
		m := b.ControlMachine[i]
		var a msg.NullString
		if i < len(b.ControlAddr) {
			a = b.ControlAddr[i]
		}
		if m != a {
			add(fmt.Sprintf("SlurmctldHost[%d]", i), fmt.Sprintf("%s(%s)", cs(m), cs(a)))
		} else {
			add(fmt.Sprintf("SlurmctldHost[%d]", i), cs(m))
		}
	}
	str("SlurmctldLogFile", b.SlurmctldLogFile)
	if b.SlurmctldPortCount > 1 {
		add("SlurmctldPort", fmt.Sprintf("%d-%d", b.SlurmctldPort, b.SlurmctldPort+uint32(b.SlurmctldPortCount)-1))
	} else {
		num("SlurmctldPort", b.SlurmctldPort)
	}
	add("SlurmctldSyslogDebug", logLevelName(b.SlurmctldSyslogDebug))
	str("SlurmctldPrimaryOffProg", b.SlurmctldPrimaryOffProg)
	str("SlurmctldPrimaryOnProg", b.SlurmctldPrimaryOnProg)
	sec("SlurmctldTimeout", b.SlurmctldTimeout)
	str("SlurmctldParameters", b.SlurmctldParams)
	add("SlurmdDebug", logLevelName(b.SlurmdDebug))
	str("SlurmdLogFile", b.SlurmdLogFile)
	str("SlurmdParameters", b.SlurmdParams)
	str("SlurmdPidFile", b.SlurmdPidFile)
	num("SlurmdPort", b.SlurmdPort)
	str("SlurmdSpoolDir", b.SlurmdSpoolDir)
	add("SlurmdSyslogDebug", logLevelName(b.SlurmdSyslogDebug))
	sec("SlurmdTimeout", b.SlurmdTimeout)
	add("SlurmdUser", fmt.Sprintf("%s(%d)", cs(b.SlurmdUserName), b.SlurmdUserID))
	str("SlurmSchedLogFile", b.SchedLogFile)
	num("SlurmSchedLogLevel", b.SchedLogLevel)
	str("SlurmctldPidFile", b.SlurmctldPidFile)
	str("SlurmctldPlugstack", b.SlurmctldPlugStack)
	str("SLURM_CONF", b.SlurmConf)
	str("SLURM_VERSION", b.Version)
	str("SrunEpilog", b.SrunEpilog)
	add("SrunPortRange", fmt.Sprintf("%d-%d", b.SrunPortRangeLo, b.SrunPortRangeHi))
	str("SrunProlog", b.SrunProlog)
	str("StateSaveLocation", b.StateSaveLocation)
	str("SuspendExcNodes", b.SuspendExcNodes)
	str("SuspendExcParts", b.SuspendExcParts)
	str("SuspendProgram", b.SuspendProgram)
	add("SuspendRate", fmt.Sprintf("%d nodes/min", b.SuspendRate))
	if b.SuspendTime == infinite {
		add("SuspendTime", "INFINITE")
	} else {
		sec("SuspendTime", b.SuspendTime)
	}
	if b.SuspendTimeout == 0 {
		add("SuspendTimeout", "NONE")
	} else {
		sec("SuspendTimeout", b.SuspendTimeout)
	}
	str("SwitchParameters", b.SwitchParam)
	str("SwitchType", b.SwitchType)
	str("TaskEpilog", b.TaskEpilog)
	str("TaskPlugin", b.TaskPlugin)
	add("TaskPluginParam", cpuBindString(b.TaskPluginParam))
	str("TaskProlog", b.TaskProlog)
	sec("TCPTimeout", b.TCPTimeout)
	str("TmpFS", b.TmpFS)
	str("TopologyParam", b.TopologyParam)
	str("TopologyPlugin", b.TopologyPlugin)
	yn("TrackWCKey", 1<<5)
	num("TreeWidth", b.TreeWidth)
	yn("UsePam", 1<<4)
	str("UnkillableStepProgram", b.UnkillableProgram)
	sec("UnkillableStepTimeout", b.UnkillableTimeout)
	add("VSizeFactor", fmt.Sprintf("%d percent", b.VSizeFactor))
	sec("WaitTime", b.WaitTime)
	str("X11Parameters", b.X11Params)
	return out
}

func healthCheckState(st uint16) string {
	var parts []string
	if st&0x8000 != 0 {
		parts = append(parts, "CYCLE")
	}
	if st&0xf == 0xf {
		return strings.Join(append(parts, "ANY"), ",")
	}
	for _, f := range []bitName{{0x1, "IDLE"}, {0x2, "ALLOC"}, {0x4, "MIXED"}} {
		if uint64(st)&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	return strings.Join(parts, ",")
}

func jobDefaultsString(l []msg.JobDefault) string {
	if len(l) == 0 {
		return "(null)"
	}
	var parts []string
	for _, d := range l {
		name := fmt.Sprintf("Unknown(%d)", d.Type)
		switch d.Type {
		case 1:
			name = "DefCpuPerGPU"
		case 2:
			name = "DefMemPerGPU"
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, d.Value))
	}
	return strings.Join(parts, ",")
}

func priorityFlagsString(f uint16) string {
	var parts []string
	if f&(1<<0) != 0 {
		parts = append(parts, "ACCRUE_ALWAYS")
	}
	if f&(1<<2) != 0 {
		parts = append(parts, "SMALL_RELATIVE_TO_TIME")
	}
	if f&(1<<4) != 0 {
		parts = append(parts, "CALCULATE_RUNNING")
	}
	if f&(1<<3) != 0 {
		parts = append(parts, "DEPTH_OBLIVIOUS")
	}
	if f&(1<<5) == 0 {
		parts = append(parts, "NO_FAIR_TREE")
	}
	if f&(1<<6) != 0 {
		parts = append(parts, "INCR_ONLY")
	}
	if f&(1<<1) != 0 {
		parts = append(parts, "MAX_TRES")
	}
	// Slurm 22.05 tests the four NO_NORMAL flags together and prints
	// NO_NORMAL_ALL when any is set.
	if f&(0xf<<7) != 0 {
		parts = append(parts, "NO_NORMAL_ALL")
	}
	return strings.Join(parts, ",")
}

// confHash is slurm.conf's hash_val as Slurm's parser computes it: a
// CRC-16 style fold of every line read (with included files).
func (s *state) confHash() uint32 {
	path := "/etc/slurm/slurm.conf"
	if v, ok := s.getenv("SLURM_CONF"); ok && v != "" {
		path = v
	}
	var h uint32
	hashFile(path, &h, 0)
	return h
}

func hashFile(path string, h *uint32, depth int) {
	f, err := os.Open(path)
	if err != nil || depth > 8 {
		return
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		for i := 0; i < len(line); i++ {
			*h ^= uint32(int32(int8(line[i])) << 8)
			for k := 0; k < 8; k++ {
				if *h&0x8000 != 0 {
					*h = *h<<1 ^ 4129
				} else {
					*h <<= 1
				}
			}
		}
		t := strings.TrimSpace(line)
		if len(t) > 8 && strings.EqualFold(t[:8], "include ") {
			inc := strings.TrimSpace(t[8:])
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			hashFile(inc, h, depth+1)
		}
		if err != nil {
			return
		}
	}
}
