package conf

import (
	"strconv"
	"strings"
)

// This file holds the checks of slurm.conf's flag-list and enumerated
// values that 22.05 reads with its own small parsers, each with the
// severity real slurmctld gives a bad value (see testdata/README.md):
//
//	fatal (error)          TaskPluginParam, AccountingStorageEnforce,
//	                       PropagateResourceLimits[Except], Licenses,
//	                       SchedulerParameters=max_job_bf
//	logged, value ignored  HealthCheckNodeState, CpuFreqDef,
//	(warning)              CpuFreqGovernors, ReconfigFlags, node and
//	                       partition CpuBind, node CPUSpecList,
//	                       backfill SchedulerParameters values, node Gres
//	                       names missing from GresTypes
//	silently accepted      PrivateData, PriorityFlags (substring matches),
//	                       PropagateResourceLimits when ...Except is set

// PrivateDataFlags is PrivateData as 22.05 reads it (PRIVATE_DATA_* bits).
type PrivateDataFlags uint16

// PrivateData bits.
const (
	PrivateJobs PrivateDataFlags = 1 << iota
	PrivateNodes
	PrivatePartitions
	PrivateUsage
	PrivateUsers
	PrivateAccounts
	PrivateReservations
	PrivateCloud
	PrivateEvents
	PrivateAll PrivateDataFlags = 0xffff
)

// PriorityFlagBits is PriorityFlags as 22.05 reads it (PRIORITY_FLAGS_*).
type PriorityFlagBits uint16

// PriorityFlags bits.
const (
	PriorityAccrueAlways PriorityFlagBits = 1 << iota
	PriorityMaxTRES
	PrioritySizeRelative
	PriorityDepthOblivious
	PriorityCalculateRunning
	PriorityFairTree
	PriorityIncrOnly
	PriorityNoNormalAssoc
	PriorityNoNormalPart
	PriorityNoNormalQOS
	PriorityNoNormalTRES
)

// CPU binding bits shared by TaskPluginParam and CpuBind (22.05's
// cpu_bind_type_t values).
const (
	CPUBindVerbose         uint32 = 0x0001
	CPUBindToThreads       uint32 = 0x0002
	CPUBindToCores         uint32 = 0x0004
	CPUBindToSockets       uint32 = 0x0008
	CPUBindToLdoms         uint32 = 0x0010
	CPUBindNone            uint32 = 0x0020
	CPUBindOff             uint32 = 0x80000
	CPUAutoBindToThreads   uint32 = 0x04000
	CPUAutoBindToCores     uint32 = 0x10000
	CPUAutoBindToSockets   uint32 = 0x20000
	TaskParamSlurmdOffSpec uint32 = 0x40000
)

// License is one item of Licenses=name[:count].
type License struct {
	Name  string
	Count uint32
}

// bitWords maps a case-insensitive word to its bits.
type bitWords map[string]uint32

var (
	healthCheckStates = bitWords{"any": 0x000f, "alloc": 0x0002, "cycle": 0x8000, "idle": 0x0001, "mixed": 0x0004}
	acctEnforceWords  = bitWords{"1": 0x1, "associations": 0x1, "2": 0x3, "limits": 0x3, "safe": 0x13,
		"wckeys": 0x5, "qos": 0x9, "all": 0xffff &^ 0x60, "nojobs": 0x60, "nosteps": 0x40}
	rlimitNames = words("CPU FSIZE DATA STACK CORE RSS NPROC NOFILE MEMLOCK AS")
	// cpuBindTypes are the mutually exclusive binding units of
	// xlate_cpu_bind_str; "v"/"verbose" may be added to any.
	cpuBindTypes = bitWords{"no": CPUBindNone, "none": CPUBindNone, "socket": CPUBindToSockets,
		"sockets": CPUBindToSockets, "ldom": CPUBindToLdoms, "ldoms": CPUBindToLdoms,
		"core": CPUBindToCores, "cores": CPUBindToCores, "thread": CPUBindToThreads,
		"threads": CPUBindToThreads, "off": CPUBindOff}
)

// strtokFields splits like C strtok: empty fields are dropped.
func strtokFields(s, seps string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) })
}

// ParseCPUBind implements xlate_cpu_bind_str (node and partition CpuBind=).
func ParseCPUBind(s string) (uint32, bool) {
	var flags uint32
	haveType := false
	for _, tok := range strtokFields(s, ",;") {
		l := strings.ToLower(tok)
		if l == "v" || l == "verbose" {
			flags |= CPUBindVerbose
			continue
		}
		b, ok := cpuBindTypes[l]
		if !ok || haveType {
			return 0, false
		}
		flags |= b
		haveType = true
	}
	return flags, true
}

// parseTaskPluginParam implements 22.05's TaskPluginParam reader; msg is
// Slurm's error on failure.
func parseTaskPluginParam(s, taskPlugin string) (flags uint32, msg string) {
	setUnit, setAuto := false, false
	units := map[string]uint32{"none": CPUBindNone, "sockets": CPUBindToSockets,
		"cores": CPUBindToCores, "threads": CPUBindToThreads}
	autos := map[string]uint32{"none": 0, "threads": CPUAutoBindToThreads,
		"cores": CPUAutoBindToCores, "sockets": CPUAutoBindToSockets}
	for _, tok := range strtokFields(s, ",") {
		l := strings.ToLower(tok)
		if b, ok := units[l]; ok {
			if setUnit {
				return 0, "Bad TaskPluginParam: " + tok
			}
			setUnit = true
			flags |= b
			continue
		}
		switch {
		case l == "verbose":
			flags |= CPUBindVerbose
		case strings.HasPrefix(l, "autobind="):
			if setAuto {
				return 0, "Bad TaskPluginParam: autobind already set"
			}
			b, ok := autos[l[len("autobind="):]]
			if !ok {
				return 0, "Bad TaskPluginParam autobind value: " + tok[len("autobind="):]
			}
			setAuto = true
			flags |= b
		case l == "slurmdoffspec":
			if strings.Contains(strings.ToLower(taskPlugin), "cray_aries") {
				return 0, "TaskPluginParam=SlurmdOffSpec invalid with TaskPlugin=task/cray_aries"
			}
			flags |= TaskParamSlurmdOffSpec
		default:
			return 0, "Bad TaskPluginParam: " + tok
		}
	}
	return flags, ""
}

// parseRlimits implements parse_rlimits: "ALL", "NONE" (exact case) or
// a list of rlimit names (case-sensitive, optional RLIMIT_ prefix). It
// returns the first bad name.
func parseRlimits(s string) (bad string, ok bool) {
	if s == "ALL" || s == "NONE" {
		return "", true
	}
	for _, tok := range strtokFields(s, ", \t\n") {
		name := tok
		for i := 0; i < len(rlimitNames) && strings.HasPrefix(name, "RLIMIT_"); i++ {
			name = name[len("RLIMIT_"):]
		}
		if !rlimitNames[strings.ToLower(name)] || strings.ToUpper(name) != name {
			return name, false
		}
	}
	return "", true
}

// ParseLicenses implements slurmctld's _build_license_list: name[:count]
// items separated by ',' or ';', no blanks, count a non-negative decimal;
// repeated names add up.
func ParseLicenses(s string) ([]License, bool) {
	var out []License
	for _, tok := range strtokFields(s, ",;") {
		name, num := tok, int64(1)
		if strings.ContainsAny(strings.SplitN(tok, ":", 2)[0], " \t\n\v\f\r") {
			return nil, false
		}
		if i := strings.IndexByte(tok, ':'); i >= 0 {
			name = tok[:i]
			v, n, neg := cStrtol(tok[i+1:])
			if n != len(tok)-i-1 {
				return nil, false
			}
			num = int64(int32(v))
			if neg {
				num = -num
			}
		}
		if num < 0 {
			return nil, false
		}
		found := false
		for j := range out {
			if out[j].Name == name {
				out[j].Count += uint32(num)
				found = true
			}
		}
		if !found {
			out = append(out, License{Name: name, Count: uint32(num)})
		}
	}
	return out, true
}

// cStrtol reads a base-10 integer like strtol: leading blanks and a sign;
// n is the number of bytes consumed (0 when there are no digits, as
// strtol then leaves the end pointer at the start). v saturates.
func cStrtol(s string) (v uint64, n int, neg bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if v < 1<<62 {
			v = v*10 + uint64(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, 0, false
	}
	return v, i, neg
}

// cpuFreqGovernor implements _cpu_freq_check_gov: a governor name by its
// prefix (co, perf, pow, user, onde, sche), "" if none.
func cpuFreqGovernor(s string) string {
	l := strings.ToLower(s)
	for _, g := range []struct{ prefix, name string }{
		{"co", "Conservative"}, {"perf", "Performance"}, {"pow", "PowerSave"},
		{"user", "UserSpace"}, {"onde", "OnDemand"}, {"sche", "SchedUtil"},
	} {
		if strings.HasPrefix(l, g.prefix) {
			return g.name
		}
	}
	return ""
}

// cpuSpecListFits implements bit_unfmt on a bitmap of size cpus: the
// "1-17:4" step form or digits/'-'/',' with every other byte skipped; only
// indexes at or beyond cpus (or a bad step form) fail.
func cpuSpecListFits(s string, cpus int) bool {
	if s == "" {
		return true
	}
	if strings.Contains(s, ":") {
		a, rest, _ := strings.Cut(s, "-")
		b, step, _ := strings.Cut(rest, ":")
		first, err1 := strconv.ParseInt(a, 10, 32)
		last, err2 := strconv.ParseInt(b, 10, 32)
		st, err3 := strconv.ParseInt(step, 10, 32)
		if err1 != nil || err2 != nil || err3 != nil || last < first || st <= 0 {
			return false
		}
		for i := first; i < last; i += st {
			if i < 0 || i >= int64(cpus) {
				return false
			}
		}
		return true
	}
	var sum, start int64 = 0, -1
	for i := 0; i <= len(s); i++ {
		c := byte(0)
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c >= '0' && c <= '9':
			sum = int64(int32(sum*10 + int64(c-'0')))
		case c == '-':
			start, sum = sum, 0
		case c == ',' || c == 0:
			if i == 0 {
				return true
			}
			if start == -1 {
				start = sum
			}
			if start < 0 || start >= int64(cpus) || sum < 0 || sum >= int64(cpus) {
				return false
			}
			start, sum = -1, 0
		}
	}
	return true
}

// schedParam finds key (e.g. "bf_interval=") anywhere in the raw
// SchedulerParameters string, case-insensitively, as xstrcasestr does, and
// returns what follows it.
func schedParam(raw, key string) (string, bool) {
	i := strings.Index(strings.ToLower(raw), strings.ToLower(key))
	if i < 0 {
		return "", false
	}
	return raw[i+len(key):], true
}

// catoi is C atoi on an int.
func catoi(s string) int64 { return int64(int32(atoi(s))) }

// bfIntParam is one integer option of the backfill plugin's _load_config.
type bfIntParam struct {
	key      string
	mult     int64 // bf_window is minutes, reported in seconds
	min, max int64 // valid range; max 0 = no upper bound
	exempt   int64 // a value accepted outside the range (bf_interval=-1), 0 = none
	msg      string
}

// backfillParams lists the startup checks of backfill.c's _load_config,
// in its order. bf_max_job_test is checked even when absent.
var backfillParams = []bfIntParam{
	{key: "bf_interval=", mult: 1, min: 1, max: 10800, exempt: -1},
	{key: "bf_max_time=", mult: 1, min: 1, max: 3600},
	{key: "bf_window=", mult: 60, min: 1, max: 30 * 24 * 60 * 60},
	{key: "bf_max_job_test=", mult: 1, min: 1, max: 1000000},
	{key: "bf_node_space_size=", mult: 1, min: 2, max: 2000000},
	{key: "bf_resolution=", mult: 1, min: 1, max: 3600},
	{key: "bf_max_job_array_resv=", mult: 1, min: 0, max: 1000},
	{key: "bf_max_job_part=", mult: 1, min: 0},
	{key: "bf_max_job_start=", mult: 1, min: 0, max: 10000},
	{key: "bf_max_job_user=", mult: 1, min: 0},
	{key: "bf_job_part_count_reserve=", mult: 1, min: 0, max: 100000},
	{key: "bf_max_job_user_part=", mult: 1, min: 0},
	{key: "bf_max_job_assoc=", mult: 1, min: 0},
	{key: "bf_min_age_reserve=", mult: 1, min: 0, max: 30 * 24 * 60 * 60},
	{key: "bf_yield_interval=", mult: 1, min: 1, max: 10000000, msg: "Invalid backfill scheduler bf_yield_interval: %d"},
	{key: "bf_yield_sleep=", mult: 1, min: 1, max: 10000000, msg: "Invalid backfill scheduler bf_yield_sleep: %d"},
}

// checkSchedulerParameters reports what the scheduler plugin logs when it
// loads SchedulerParameters at startup (backfill.c / builtin.c
// _load_config). Values are read with atoi, so "abc" is 0. Options read by
// the main scheduling loop (default_queue_depth, sched_interval, ...) are
// only looked at when jobs are scheduled and are not checked here.
func (p *parser) checkSchedulerParameters() {
	c := p.cfg
	raw, _ := p.given("SchedulerParameters")
	pos := p.pos("SchedulerParameters")
	warn := func(format string, args ...any) { p.d.warnf(pos, format, args...) }
	switch c.SchedulerType {
	case "sched/backfill":
		if _, ok := schedParam(raw, "bf_max_job_test="); !ok {
			if _, old := schedParam(raw, "max_job_bf="); old {
				p.d.errorf(pos, "Invalid parameter max_job_bf. The option is no longer supported, please use bf_max_job_test instead.")
				return
			}
		}
		jobTest := int64(500) // DEF_BF_MAX_JOB_TEST; bf_node_space_size defaults to it
		got := map[string]int64{}
		for _, bp := range backfillParams {
			v, ok := schedParam(raw, bp.key)
			n := jobTest
			switch {
			case ok:
				n = catoi(v) * bp.mult
			case bp.key != "bf_max_job_test=" && bp.key != "bf_node_space_size=":
				continue
			}
			if (bp.exempt != 0 && n == bp.exempt) || (n >= bp.min && (bp.max == 0 || n <= bp.max)) {
				if bp.key == "bf_max_job_test=" {
					jobTest = n
				}
				got[bp.key] = n
				continue
			}
			msg := bp.msg
			if msg == "" {
				msg = "Invalid SchedulerParameters " + strings.TrimSuffix(bp.key, "=") + ": %d"
			}
			warn(msg, n)
		}
		if n := got["bf_max_job_part="]; n != 0 && n >= jobTest {
			warn("bf_max_job_part >= bf_max_job_test (%d >= %d)", n, jobTest)
		}
		if got["bf_max_job_assoc="] != 0 && got["bf_max_job_user="] != 0 {
			warn("Both bf_max_job_user and bf_max_job_assoc are set: bf_max_job_assoc taking precedence.")
		}
		if v, ok := schedParam(raw, "bf_min_prio_reserve="); ok {
			// strtoull: a negative value wraps to a huge one.
			n, _, neg := cStrtol(v)
			if neg && n != 0 {
				n = -n
			}
			if n == 0 || n > Infinite32 {
				warn("Invalid SchedulerParameters bf_min_prio_reserve: %d", n)
			}
		}
		if v, ok := schedParam(raw, "bf_hetjob_prio="); ok {
			l := strings.ToLower(v)
			if !strings.HasPrefix(l, "min") && !strings.HasPrefix(l, "max") && !strings.HasPrefix(l, "avg") {
				warn("Invalid SchedulerParameters bf_hetjob_prio: %s", v)
			}
		}
		v, ok := schedParam(raw, "max_rpc_cnt=")
		if !ok {
			v, ok = schedParam(raw, "max_rpc_count=")
		}
		if n := catoi(v); ok && (n < 0 || n > 1000) {
			warn("Invalid SchedulerParameters max_rpc_cnt: %d", n)
		}
	case "sched/builtin":
		if v, ok := schedParam(raw, "interval="); ok && catoi(v) < 1 {
			warn("Invalid SchedulerParameters interval: %d", catoi(v))
		}
		v, ok := schedParam(raw, "bf_max_job_test=")
		if !ok {
			v, ok = schedParam(raw, "max_job_bf=")
		}
		if ok && catoi(v) < 1 {
			warn("Invalid SchedulerParameters bf_max_job_test: %d", catoi(v))
		}
	}
}

// checkFlagKeys validates the flag-list keys of _validate_and_set_defaults
// and slurmctld's Licenses, filling the typed fields.
func (p *parser) checkFlagKeys() {
	c := p.cfg
	if v, ok := p.given("AccountingStorageEnforce"); ok {
		var bits uint32
		for _, tok := range strtokFields(v, ",") {
			b, good := acctEnforceWords[strings.ToLower(tok)]
			if !good {
				p.d.errorf(p.pos("AccountingStorageEnforce"), "Invalid parameter for AccountingStorageEnforce: %s", tok)
				p.d.errorf(p.pos("AccountingStorageEnforce"), "AccountingStorageEnforce invalid: %s", v)
				bits = 0
				break
			}
			if strings.EqualFold(tok, "all") {
				bits = b
			} else {
				bits |= b
			}
		}
		c.AccountingEnforceFlags = uint16(bits)
	}
	if v, ok := p.given("CpuFreqDef"); ok {
		if g := cpuFreqGovernor(v); g == "" || g == "UserSpace" {
			p.d.warnf(p.pos("CpuFreqDef"), "cpu_freq_verify_def: CpuFreqDef=%s invalid", v)
			p.d.warnf(p.pos("CpuFreqDef"), "Ignoring invalid CpuFreqDef: %s", v)
			c.CpuFreqDef = ""
		}
	}
	if v, ok := p.given("CpuFreqGovernors"); ok {
		toks := strtokFields(v, ",")
		bad := ""
		if len(toks) == 0 {
			p.d.warnf(p.pos("CpuFreqGovernors"), "cpu_freq_verify_govlist: governor list '%s' invalid", v)
			bad = v
		}
		for _, t := range toks {
			if cpuFreqGovernor(t) == "" {
				p.d.warnf(p.pos("CpuFreqGovernors"), "cpu_freq_verify_govlist: governor '%s' invalid", t)
				bad = t
				break
			}
		}
		if len(toks) == 0 || bad != "" {
			p.d.warnf(p.pos("CpuFreqGovernors"), "Ignoring invalid CpuFreqGovernors: %s", v)
			c.CpuFreqGovernors = List{"OnDemand", "Performance", "UserSpace"}
		}
	}
	if v, ok := p.given("HealthCheckNodeState"); ok {
		var kept List
		for _, tok := range strtokFields(v, ",") {
			if _, good := healthCheckStates[strings.ToLower(tok)]; !good {
				p.d.warnf(p.pos("HealthCheckNodeState"), "Invalid HealthCheckNodeState value %s ignored", tok)
				continue
			}
			kept = append(kept, tok)
		}
		if len(kept) == 0 || (len(kept) == 1 && strings.EqualFold(kept[0], "CYCLE")) {
			kept = append(kept, "ANY")
		}
		c.HealthCheckNodeState = kept
	}
	if v, ok := p.given("PrivateData"); ok {
		lv := strings.ToLower(v)
		for i, w := range []string{"job", "node", "partition", "usage", "user", "account", "reservation", "cloud", "event"} {
			if strings.Contains(lv, w) {
				c.PrivateDataFlags |= 1 << i
			}
		}
		if strings.Contains(lv, "all") {
			c.PrivateDataFlags = PrivateAll
		}
	}
	c.PriorityFlagBits = PriorityFairTree
	if v, ok := p.given("PriorityFlags"); ok {
		uv := strings.ToUpper(v)
		for _, f := range []struct {
			word string
			bits PriorityFlagBits
		}{
			{"ACCRUE_ALWAYS", PriorityAccrueAlways}, {"SMALL_RELATIVE_TO_TIME", PrioritySizeRelative},
			{"CALCULATE_RUNNING", PriorityCalculateRunning}, {"INCR_ONLY", PriorityIncrOnly},
			{"MAX_TRES", PriorityMaxTRES},
			{"NO_NORMAL_ALL", PriorityNoNormalAssoc | PriorityNoNormalPart | PriorityNoNormalQOS | PriorityNoNormalTRES},
			{"NO_NORMAL_ASSOC", PriorityNoNormalAssoc}, {"NO_NORMAL_PART", PriorityNoNormalPart},
			{"NO_NORMAL_QOS", PriorityNoNormalQOS}, {"NO_NORMAL_TRES", PriorityNoNormalTRES},
		} {
			if strings.Contains(uv, f.word) {
				c.PriorityFlagBits |= f.bits
			}
		}
		if strings.Contains(uv, "DEPTH_OBLIVIOUS") {
			c.PriorityFlagBits = c.PriorityFlagBits&^PriorityFairTree | PriorityDepthOblivious
		} else if strings.Contains(uv, "NO_FAIR_TREE") {
			c.PriorityFlagBits &^= PriorityFairTree
		}
	}
	// Only one of the two is read: ...Except wins.
	if v, ok := p.given("PropagateResourceLimitsExcept"); ok {
		if bad, good := parseRlimits(v); !good {
			p.d.errorf(p.pos("PropagateResourceLimitsExcept"), "Bad rlimit name: %s", bad)
			p.d.errorf(p.pos("PropagateResourceLimitsExcept"), "Bad PropagateResourceLimitsExcept: %s", v)
		}
	} else if v, ok := p.given("PropagateResourceLimits"); ok {
		if bad, good := parseRlimits(v); !good {
			p.d.errorf(p.pos("PropagateResourceLimits"), "Bad rlimit name: %s", bad)
			p.d.errorf(p.pos("PropagateResourceLimits"), "Bad PropagateResourceLimits: %s", v)
		}
	}
	if v, ok := p.given("ReconfigFlags"); ok {
		for _, tok := range strtokFields(v, ",") {
			if !strings.EqualFold(tok, "KeepPartInfo") && !strings.EqualFold(tok, "KeepPartState") {
				// reconfig_str2flags returns NO_VAL16 (0xfffe) and the
				// caller tests for 0xffff, so the bad value is kept as
				// flags 0xfffe: KeepPartState without KeepPartInfo.
				p.d.warnf(p.pos("ReconfigFlags"), "Invalid ReconfigFlag: %s", tok)
				c.ReconfigFlags = List{"KeepPartState"}
				break
			}
		}
	}
	if v, ok := p.given("TaskPluginParam"); ok {
		flags, msg := parseTaskPluginParam(v, strings.Join(c.TaskPlugin, ","))
		if msg != "" {
			p.d.errorf(p.pos("TaskPluginParam"), "%s", msg)
		}
		c.TaskPluginParamFlags = flags
	}
	if v, ok := p.given("Licenses"); ok {
		l, good := ParseLicenses(v)
		if !good {
			p.d.errorf(p.pos("Licenses"), "Invalid configured licenses: %s", v)
		}
		c.LicenseList = l
	}
}
