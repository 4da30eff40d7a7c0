package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// Job bit flags and values slurm_sprint_job_info looks at (slurm.h 22.05).
const (
	flagKillInvDep    = 1 << 0
	flagNoKillInvDep  = 1 << 1
	flagGresEnforce   = 1 << 4
	flagSpreadJob     = 1 << 8
	flagGresNoBind    = 1 << 19
	flagCronJob       = 1 << 22
	flagBackfillSched = 1 << 32
	flagBackfillLast  = 1 << 33

	memPerCPU      = 0x8000000000000000
	coreSpecThread = 0x8000
	niceOffset     = 0x80000000
	noVal16        = slurmcli.NoVal16
	infinite16     = slurmcli.Infinite16
	noVal          = slurmcli.NoVal
	infinite       = slurmcli.Infinite
)

// jobView is a job record with what the client computes when unpacking:
// the readable array task string and bitmap, and the multi-core fields
// (zero when the record carries none).
type jobView struct {
	*msg.JobInfo
	taskStr     msg.NullString
	taskBitmap  []bool
	mc          msg.MultiCore
	overrideTID bool // scontrol prints one task of a pending array
}

func (s *state) viewJobs(m *msg.JobInfoMsg) []*jobView {
	bitstrLen := -1
	if v, ok := s.getenv("SLURM_BITSTR_LEN"); ok {
		n, _ := strtolInt(v)
		bitstrLen = n
	}
	out := make([]*jobView, len(m.Jobs))
	for i := range m.Jobs {
		j := &m.Jobs[i]
		v := &jobView{JobInfo: j}
		if j.ArrayTaskStr.Valid {
			str, bits := slurmcli.XlateArrayTaskStr(j.ArrayTaskStr.Value, j.ArrayMaxTasks, bitstrLen)
			v.taskStr, v.taskBitmap = msg.Str(str), bits
		}
		if j.MultiCore != nil {
			v.mc = *j.MultiCore
		}
		if j.Bitflags&flagBackfillSched != 0 && m.LastBackfill != 0 &&
			j.JobState&slurmcli.JobStateBase == slurmcli.JobPending &&
			m.LastBackfill <= j.LastSchedEval {
			j.Bitflags |= flagBackfillLast
		}
		out[i] = v
	}
	return out
}

// strtolInt is atoi as C's strtol reads it (leading number, else 0).
func strtolInt(str string) (int, string) {
	i := 0
	for i < len(str) && (str[i] == ' ' || str[i] == '\t') {
		i++
	}
	neg := false
	if i < len(str) && (str[i] == '-' || str[i] == '+') {
		neg = str[i] == '-'
		i++
	}
	st := i
	n := 0
	for i < len(str) && str[i] >= '0' && str[i] <= '9' {
		if n < 1<<40 {
			n = n*10 + int(str[i]-'0')
		}
		i++
	}
	if i == st {
		return 0, str
	}
	if neg {
		n = -n
	}
	return n, str[i:]
}

func rangeStr(lo, hi uint32) string {
	if hi > 0 {
		return fmt.Sprintf("%d-%d", lo, hi)
	}
	return fmt.Sprintf("%d", lo)
}

// exitParts splits a wait status as WIFSIGNALED/WEXITSTATUS do.
func exitParts(st uint32) (status, sig uint32) {
	termSig := st & 0x7f
	switch {
	case termSig == 0:
		return (st >> 8) & 0xff, 0
	case termSig != 0x7f && int8(termSig+1)>>1 > 0:
		return 0, termSig
	}
	return 0, 0
}

// sprintJob is slurm_sprint_job_info.
func (s *state) sprintJob(j *jobView, oneLiner bool) string {
	if j.JobID == 0 {
		return ""
	}
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("JobId=%d ", j.JobID)
	if j.ArrayJobID != 0 {
		if j.taskStr.Valid && !j.overrideTID {
			p("ArrayJobId=%d ArrayTaskId=%s ", j.ArrayJobID, j.taskStr.Value)
		} else {
			p("ArrayJobId=%d ArrayTaskId=%d ", j.ArrayJobID, j.ArrayTaskID)
		}
		if j.ArrayMaxTasks != 0 {
			p("ArrayTaskThrottle=%d ", j.ArrayMaxTasks)
		}
	} else if j.HetJobID != 0 {
		p("HetJobId=%d HetJobOffset=%d ", j.HetJobID, j.HetJobOffset)
	}
	p("JobName=%s%s", cs(j.Name), nl)
	if j.HetJobIDSet.Valid {
		p("HetJobIdSet=%s%s", j.HetJobIDSet.Value, nl)
	}
	mcs := "N/A"
	if j.MCSLabel.Valid {
		mcs = j.MCSLabel.Value
	}
	p("UserId=%s(%d) GroupId=%s(%d) MCS_label=%s%s", s.userName(j.UserID), j.UserID,
		s.groupName(j.GroupID), j.GroupID, mcs, nl)
	p("Priority=%d Nice=%d Account=%s QOS=%s", j.Priority, int64(j.Nice)-niceOffset, cs(j.Account), cs(j.QOS))
	if s.ctl().Conf.TrackWCKey {
		p(" WCKey=%s", cs(j.WCKey))
	}
	b.WriteString(nl)
	p("JobState=%s ", slurmcli.JobStateString(j.JobState))
	if j.StateDesc.Valid {
		p("Reason=%s ", strings.Map(func(r rune) rune {
			if r == ' ' || (r >= '\t' && r <= '\r') {
				return '_'
			}
			return r
		}, j.StateDesc.Value))
	} else {
		p("Reason=%s ", slurmcli.JobReasonString(j.StateReason))
	}
	p("Dependency=%s%s", cs(j.Dependency), nl)
	p("Requeue=%d Restarts=%d BatchFlag=%d Reboot=%d ", j.Requeue, j.RestartCnt, j.BatchFlag, j.Reboot)
	st, sig := exitParts(j.ExitCode)
	p("ExitCode=%d:%d%s", st, sig, nl)
	if j.ShowFlags&slurmcli.ShowDetail != 0 {
		st, sig := exitParts(j.DerivedEC)
		p("DerivedExitCode=%d:%d%s", st, sig, nl)
	}
	base := j.JobState & slurmcli.JobStateBase
	var runTime int64
	switch base {
	case slurmcli.JobPending:
	case slurmcli.JobSuspended:
		runTime = j.PreSusTime
	default:
		end := j.EndTime
		if base == slurmcli.JobRunning || j.EndTime == 0 {
			end = s.now().Unix()
		}
		if j.SuspendTime != 0 {
			runTime = end - j.SuspendTime + j.PreSusTime
		} else {
			runTime = end - j.StartTime
		}
	}
	p("RunTime=%s ", secs2time(runTime))
	if j.TimeLimit == noVal {
		b.WriteString("TimeLimit=Partition_Limit ")
	} else {
		p("TimeLimit=%s ", mins2time(j.TimeLimit))
	}
	if j.TimeMin == 0 {
		b.WriteString("TimeMin=N/A")
	} else {
		p("TimeMin=%s", mins2time(j.TimeMin))
	}
	b.WriteString(nl)
	p("SubmitTime=%s EligibleTime=%s%s", s.timeStr(j.SubmitTime), s.timeStr(j.EligibleTime), nl)
	p("AccrueTime=%s%s", s.timeStr(j.AccrueTime), nl)
	if j.ResizeTime != 0 {
		p("ResizeTime=%s%s", s.timeStr(j.ResizeTime), nl)
	}
	p("StartTime=%s ", s.timeStr(j.StartTime))
	if j.TimeLimit == infinite && j.EndTime > s.now().Unix() {
		b.WriteString("EndTime=Unknown ")
	} else {
		p("EndTime=%s ", s.timeStr(j.EndTime))
	}
	if j.Deadline != 0 {
		p("Deadline=%s", s.timeStr(j.Deadline))
	} else {
		b.WriteString("Deadline=N/A")
	}
	b.WriteString(nl)
	if j.Bitflags&flagCronJob != 0 || j.Cronspec.Valid {
		if j.Bitflags&flagCronJob != 0 {
			b.WriteString("CronJob=Yes ")
		}
		p("CrontabSpec=\"%s\"%s", cs(j.Cronspec), nl)
	}
	if j.PreemptableTime != 0 {
		p("PreemptEligibleTime=%s ", s.timeStr(j.PreemptableTime))
		if j.PreemptTime == 0 {
			b.WriteString("PreemptTime=None")
		} else {
			p("PreemptTime=%s", s.timeStr(j.PreemptTime))
		}
		b.WriteString(nl)
	}
	if j.SuspendTime != 0 {
		p("SuspendTime=%s ", s.timeStr(j.SuspendTime))
	} else {
		b.WriteString("SuspendTime=None ")
	}
	p("SecsPreSuspend=%d ", j.PreSusTime)
	sched := "Main"
	if j.Bitflags&flagBackfillSched != 0 {
		sched = "Backfill"
	}
	if j.Bitflags&flagBackfillLast != 0 {
		sched += ":*"
	}
	p("LastSchedEval=%s Scheduler=%s%s", s.timeStr(j.LastSchedEval), sched, nl)
	p("Partition=%s AllocNode:Sid=%s:%d%s", cs(j.Partition), cs(j.AllocNode), j.AllocSID, nl)
	p("ReqNodeList=%s ExcNodeList=%s%s", cs(j.ReqNodes), cs(j.ExcNodes), nl)
	p("NodeList=%s", slurmcli.SortHostlist(j.Nodes.Value))
	if j.SchedNodes.Valid {
		p(" SchedNodeList=%s", j.SchedNodes.Value)
	}
	b.WriteString(nl)
	if j.BatchFeatures.Valid {
		p("BatchFeatures=%s", j.BatchFeatures.Value)
	}
	if j.BatchHost.Valid {
		sep := ""
		if j.BatchFeatures.Valid {
			sep = " "
		}
		p("%sBatchHost=%s", sep, j.BatchHost.Value)
	}
	if j.BatchFeatures.Valid || j.BatchHost.Valid {
		b.WriteString(nl)
	}
	if j.FedSiblingsActive != 0 || j.FedSiblingsViable != 0 {
		p("FedOrigin=%s FedViableSiblings=%s FedActiveSiblings=%s%s", cs(j.FedOriginStr),
			cs(j.FedSiblingsViableStr), cs(j.FedSiblingsActiveStr), nl)
	}
	minNodes, maxNodes := j.NumNodes, uint32(0)
	if base == slurmcli.JobPending {
		maxNodes = j.MaxNodes
		if maxNodes != 0 && maxNodes < minNodes {
			minNodes = maxNodes
		}
	}
	p("NumNodes=%s ", rangeStr(minNodes, maxNodes))
	p("NumCPUs=%s ", rangeStr(j.NumCPUs, j.MaxCPUs))
	if j.NumTasks == noVal {
		b.WriteString("NumTasks=N/A ")
	} else {
		p("NumTasks=%d ", j.NumTasks)
	}
	if j.CPUsPerTask == noVal16 {
		b.WriteString("CPUs/Task=N/A ")
	} else {
		p("CPUs/Task=%d ", j.CPUsPerTask)
	}
	star := func(v uint16, sep string) string {
		if v == noVal16 {
			return "*" + sep
		}
		return fmt.Sprintf("%d%s", v, sep)
	}
	star2 := func(v uint16, sep string) string {
		if v == noVal16 || v == infinite16 {
			return "*" + sep
		}
		return fmt.Sprintf("%d%s", v, sep)
	}
	p("ReqB:S:C:T=%s%s%s%s%s", star(j.mc.BoardsPerNode, ":"), star(j.mc.SocketsPerBoard, ":"),
		star(j.mc.CoresPerSocket, ":"), star(j.mc.ThreadsPerCore, ""), nl)
	tres := j.TresAllocStr
	if !tres.Valid {
		tres = j.TresReqStr
	}
	p("TRES=%s%s", cs(tres), nl)
	p("Socks/Node=%s", star(j.mc.SocketsPerNode, " "))
	p("NtasksPerN:B:S:C=%s%s%s%s", star(j.NtasksPerNode, ":"), star(j.mc.NtasksPerBoard, ":"),
		star2(j.mc.NtasksPerSocket, ":"), star2(j.mc.NtasksPerCore, " "))
	switch {
	case j.CoreSpec == noVal16:
		b.WriteString("CoreSpec=*")
	case j.CoreSpec&coreSpecThread != 0:
		p("ThreadSpec=%d", j.CoreSpec&^coreSpecThread)
	default:
		p("CoreSpec=%d", j.CoreSpec)
	}
	b.WriteString(nl)
	s.sprintJobResources(&b, j, nl)
	memKind := "Node"
	mem := j.PnMinMemory
	if mem&memPerCPU != 0 {
		mem &^= memPerCPU
		memKind = "CPU"
	}
	p("MinCPUsNode=%d ", j.PnMinCPUs)
	p("MinMemory%s=%s MinTmpDiskNode=%s%s", memKind,
		slurmcli.ConvertNumUnit(float64(float32(mem)), slurmcli.UnitMega, slurmcli.ConvertExact),
		slurmcli.ConvertNumUnit(float64(float32(j.PnMinTmpDisk)), slurmcli.UnitMega, slurmcli.ConvertExact), nl)
	p("Features=%s DelayBoot=%s%s", cs(j.Features), secs2time(int64(j.DelayBoot)), nl)
	if j.ClusterFeatures.Valid {
		p("ClusterFeatures=%s%s", j.ClusterFeatures.Value, nl)
	}
	if j.Prefer.Valid {
		p("Prefer=%s%s", j.Prefer.Value, nl)
	}
	if j.ResvName.Valid {
		p("Reservation=%s%s", j.ResvName.Value, nl)
	}
	p("OverSubscribe=%s Contiguous=%d Licenses=%s Network=%s%s", slurmcli.JobShareString(j.Shared),
		j.Contiguous, cs(j.Licenses), cs(j.Network), nl)
	p("Command=%s%s", cs(j.Command), nl)
	p("WorkDir=%s", cs(j.WorkDir))
	if j.AdminComment.Valid {
		p("%sAdminComment=%s ", nl, j.AdminComment.Value)
	}
	if j.SystemComment.Valid {
		p("%sSystemComment=%s ", nl, j.SystemComment.Value)
	}
	if j.Comment.Valid {
		p("%sComment=%s ", nl, j.Comment.Value)
	}
	if j.BatchFlag != 0 {
		p("%sStdErr=%s", nl, s.jobStderr(j))
		p("%sStdIn=%s", nl, s.jobStdin(j))
		p("%sStdOut=%s", nl, s.jobStdout(j))
	}
	if j.ReqSwitch != 0 {
		p("%sSwitches=%d@%s", nl, j.ReqSwitch, secs2time(int64(j.Wait4Switch)))
	}
	if j.BurstBuffer.Valid {
		p("%sBurstBuffer=%s", nl, j.BurstBuffer.Value)
	}
	if j.BurstBufferState.Valid {
		p("%sBurstBufferState=%s", nl, j.BurstBufferState.Value)
	}
	if f, ok := cpuFreqDebug(j.CPUFreqGov, j.CPUFreqMin, j.CPUFreqMax); ok {
		p("%s%s", nl, f)
	}
	power := ""
	if j.PowerFlags&1 != 0 {
		power = "LEVEL"
	}
	p("%sPower=%s", nl, power)
	if j.Bitflags&(flagGresNoBind|flagGresEnforce|flagKillInvDep|flagNoKillInvDep|flagSpreadJob) != 0 {
		b.WriteString(nl)
		if j.Bitflags&flagGresNoBind != 0 {
			b.WriteString("GresEnforceBind=No")
		}
		if j.Bitflags&flagGresEnforce != 0 {
			b.WriteString("GresEnforceBind=Yes")
		}
		if j.Bitflags&flagKillInvDep != 0 {
			b.WriteString("KillOInInvalidDependent=Yes")
		}
		if j.Bitflags&flagNoKillInvDep != 0 {
			b.WriteString("KillOInInvalidDependent=No")
		}
		if j.Bitflags&flagSpreadJob != 0 {
			b.WriteString("SpreadJob=Yes")
		}
	}
	for _, kv := range []struct {
		k string
		v msg.NullString
	}{{"CpusPerTres", j.CPUsPerTres}, {"MemPerTres", j.MemPerTres}, {"TresBind", j.TresBind},
		{"TresFreq", j.TresFreq}, {"TresPerJob", j.TresPerJob}, {"TresPerNode", j.TresPerNode},
		{"TresPerSocket", j.TresPerSocket}, {"TresPerTask", j.TresPerTask}} {
		if kv.v.Valid {
			p("%s%s=%s", nl, kv.k, kv.v.Value)
		}
	}
	if j.MailType != 0 && j.MailUser.Valid {
		p("%sMailUser=%s MailType=%s", nl, j.MailUser.Value, mailTypeString(j.MailType))
	}
	if j.NtasksPerTres != 0 && j.NtasksPerTres != noVal16 && j.NtasksPerTres != infinite16 {
		p("%sNtasksPerTRES=%d", nl, j.NtasksPerTres)
	}
	if j.Container.Valid {
		p("%sContainer=%s", nl, j.Container.Value)
	}
	if j.SelinuxContext.Valid {
		p("%sSELinuxContext=%s", nl, j.SelinuxContext.Value)
	}
	b.WriteString(nl)
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// sprintJobResources prints the -d lines: JOB_GRES and one line per group
// of nodes with the same CPU ids, memory and GRES.
func (s *state) sprintJobResources(b *strings.Builder, j *jobView, nl string) {
	r := j.JobResrcs
	if r == nil || r.CoreBitmap.Null {
		return
	}
	coreBits, err := r.CoreBitmap.Bits()
	if err != nil || len(coreBits) == 0 {
		return
	}
	last := coreBits[len(coreBits)-1]
	set := make(map[int]bool, len(coreBits))
	for _, c := range coreBits {
		set[c] = true
	}
	fmt.Fprintf(b, "JOB_GRES=%s%s", cs(j.GresTotal), nl)
	hosts := []string{}
	if hl, err := hostlist.Parse(r.Nodes.Value); err == nil {
		hosts = hl.Hosts()
	}
	var lastHosts []string
	prevCPUs, gresLast := "", ""
	lastMemSet := false // last_mem_alloc_ptr != NULL
	var lastMem uint64 = slurmcli.NoVal64
	haveMem := len(r.MemoryAllocated) > 0
	flush := func() {
		if len(lastHosts) == 0 {
			return
		}
		mem := uint64(0)
		if lastMemSet {
			mem = lastMem
		}
		fmt.Fprintf(b, "  Nodes=%s CPU_IDs=%s Mem=%d GRES=%s%s", rangedHosts(lastHosts), prevCPUs, mem, gresLast, nl)
		lastHosts = nil
	}
	bitInx, sockInx, sockReps := 0, 0, 0
	nhosts := len(r.CPUs)
	for rel := 0; rel < nhosts; rel++ {
		if sockInx < len(r.SockCoreRepCount) && uint32(sockReps) >= r.SockCoreRepCount[sockInx] {
			sockInx++
			sockReps = 0
		}
		sockReps++
		bitReps := 0
		if sockInx < len(r.SocketsPerNode) && sockInx < len(r.CoresPerSocket) {
			bitReps = int(r.SocketsPerNode[sockInx]) * int(r.CoresPerSocket[sockInx])
		}
		host := ""
		if rel < len(hosts) {
			host = hosts[rel]
		}
		threads := s.threadsPerCore(host)
		cpuBits := make([]bool, bitReps*threads)
		for c := 0; c < bitReps; c++ {
			if set[bitInx] {
				for k := 0; k < threads; k++ {
					cpuBits[c*threads+k] = true
				}
			}
			bitInx++
		}
		cpus := slurmcli.BitFmt(cpuBits, 128)
		gres := ""
		if rel < len(j.GresDetailStr) {
			gres = cs(j.GresDetailStr[rel])
		}
		if cpus != prevCPUs || (rel < len(j.GresDetailStr) && gres != gresLast) ||
			lastMemSet != haveMem || (haveMem && lastMem != r.MemoryAllocated[rel]) {
			flush()
			prevCPUs = cpus
			gresLast = ""
			if rel < len(j.GresDetailStr) {
				gresLast = gres
			}
			lastMemSet = haveMem
			if haveMem {
				lastMem = r.MemoryAllocated[rel]
			} else {
				lastMem = slurmcli.NoVal64
			}
		}
		lastHosts = append(lastHosts, host)
		if bitInx > last {
			break
		}
	}
	flush()
}

func rangedHosts(hosts []string) string {
	hl, err := hostlist.Parse(strings.Join(hosts, ","))
	if err != nil {
		return strings.Join(hosts, ",")
	}
	return hl.Ranged()
}

// threadsPerCore finds a node's thread count in the node table, loaded
// once (as the API does for CPU ids).
func (s *state) threadsPerCore(host string) int {
	if host == "" {
		return 1
	}
	if s.nodes == nil {
		m, err := s.ctl().LoadNodes(s.ctx(), 0, 0)
		if err != nil {
			m = &msg.NodeInfoResponse{}
		}
		s.nodes = m
	}
	for _, n := range s.nodes.Nodes {
		if n.Name.Valid && n.Name.Value == host {
			return int(n.Threads)
		}
	}
	return 1
}

func mailTypeString(t uint16) string {
	if t == 0 {
		return "NONE"
	}
	var parts []string
	for _, f := range []struct {
		bit  uint16
		name string
	}{{1 << 9, "ARRAY_TASKS"}, {1 << 10, "INVALID_DEPEND"}, {1 << 0, "BEGIN"}, {1 << 1, "END"},
		{1 << 2, "FAIL"}, {1 << 3, "REQUEUE"}, {1 << 8, "STAGE_OUT"}, {1 << 7, "TIME_LIMIT_50"},
		{1 << 6, "TIME_LIMIT_80"}, {1 << 5, "TIME_LIMIT_90"}, {1 << 4, "TIME_LIMIT"}} {
		if t&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	return strings.Join(parts, ",")
}

// cpuFreqDebug is cpu_freq_debug without a label: the job's CPU frequency
// request, ok false when none is set.
func cpuFreqDebug(gov, min, max uint32) (string, bool) {
	set := func(v uint32) bool { return v != noVal && v != 0 }
	if !set(gov) && !set(min) && !set(max) {
		return "", false
	}
	var bmin, bmax, bgov string
	sep2, sep3 := " ", " "
	if set(min) {
		bmin = "CPU_min_freq=" + cpuFreqString(min)
	} else {
		sep2 = ""
	}
	if set(max) {
		bmax = "CPU_max_freq=" + cpuFreqString(max)
	} else {
		sep3 = ""
	}
	if set(gov) {
		bgov = "Governor=" + cpuFreqString(gov)
	}
	return bmin + sep2 + bmax + sep3 + bgov, true
}

// cpuFreqString is cpu_freq_to_string for the values jobs carry.
func cpuFreqString(v uint32) string {
	const rangeFlag = 0x80000000
	if v&rangeFlag == 0 {
		return fmt.Sprintf("%d", v)
	}
	switch v {
	case 0x80000001:
		return "Low"
	case 0x80000002:
		return "Medium"
	case 0x80000003:
		return "High"
	case 0x80000004:
		return "HighM1"
	case 0x88000000:
		return "Conservative"
	case 0x84000000:
		return "OnDemand"
	case 0x82000000:
		return "Performance"
	case 0x81000000:
		return "PowerSave"
	case 0x80800000:
		return "UserSpace"
	case 0x80400000:
		return "SchedUtil"
	}
	return "Unknown"
}

// fnameFormat expands %A %a %j %u %x in an output path and makes it
// absolute against the work dir (_fname_format).
func (s *state) fnameFormat(j *jobView, name string) string {
	arrayID := j.JobID
	if j.ArrayTaskID != noVal {
		arrayID = j.ArrayJobID
	}
	name = strings.ReplaceAll(name, "%A", fmt.Sprint(arrayID))
	name = strings.ReplaceAll(name, "%a", fmt.Sprint(j.ArrayTaskID))
	name = strings.ReplaceAll(name, "%j", fmt.Sprint(j.JobID))
	name = strings.ReplaceAll(name, "%u", s.userName(j.UserID))
	name = strings.ReplaceAll(name, "%x", cs(j.Name))
	if strings.HasPrefix(name, "/") {
		return name
	}
	return cs(j.WorkDir) + "/" + name
}

func (s *state) defaultOut(j *jobView) string {
	if j.ArrayJobID != 0 {
		return fmt.Sprintf("%s/slurm-%d_%d.out", cs(j.WorkDir), j.ArrayJobID, j.ArrayTaskID)
	}
	return fmt.Sprintf("%s/slurm-%d.out", cs(j.WorkDir), j.JobID)
}

func (s *state) jobStderr(j *jobView) string {
	switch {
	case j.StdErr.Valid:
		return s.fnameFormat(j, j.StdErr.Value)
	case j.BatchFlag == 0:
		return ""
	case j.StdOut.Valid:
		return s.fnameFormat(j, j.StdOut.Value)
	}
	return s.defaultOut(j)
}

func (s *state) jobStdin(j *jobView) string {
	switch {
	case j.StdIn.Valid:
		return s.fnameFormat(j, j.StdIn.Value)
	case j.BatchFlag == 0:
		return ""
	}
	return "/dev/null"
}

func (s *state) jobStdout(j *jobView) string {
	switch {
	case j.StdOut.Valid:
		return s.fnameFormat(j, j.StdOut.Value)
	case j.BatchFlag == 0:
		return ""
	}
	return s.defaultOut(j)
}
