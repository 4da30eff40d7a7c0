package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// cmdUpdate is "update SPEC...": the entity is chosen by the keys present.
func cmdUpdate(s *state, args []string) {
	if len(args) < 2 {
		s.exitCode = 1
		s.eprintf("too few arguments for %s keyword\n", args[0])
		return
	}
	argv := args[1:]
	var nodeTag, partTag, jobTag, stepTag, resTag, debugTag, feTag bool
	for i := 0; i < len(argv); i++ {
		tag := argv[i]
		tagLen := len(tag)
		if k := strings.IndexByte(tag, '='); k >= 0 {
			tagLen = k
		} else {
			i++
		}
		m := func(kw string, min int) bool { return hasPrefixFold(tag, kw, max(tagLen, min)) }
		switch {
		case m("NodeName", 3):
			nodeTag = true
		case m("PartitionName", 3):
			partTag = true
		case m("JobId", 3) || m("JobNAME", 3):
			jobTag = true
		case m("StepId", 4):
			stepTag = true
		case m("FrontendName", 2):
			feTag = true
		case m("ReservationName", 3):
			resTag = true
		case m("SlurmctldDebug", 2):
			debugTag = true
		}
	}
	var err error
	switch {
	case jobTag:
		if s.updateJob(argv) {
			s.exitCode = 1
		}
		return
	case stepTag:
		s.exitCode = 1
		s.errorf("update of this entity is not implemented yet by this scontrol")
		return
	case resTag:
		err = s.updateReservation(argv)
	case nodeTag:
		err = s.updateNode(argv)
	case feTag:
		s.exitCode = 1
		s.errorf("update of this entity is not implemented yet by this scontrol")
		return
	case partTag:
		err = s.updatePartition(argv)
	case debugTag:
		s.exitCode = 1
		s.errorf("update of this entity is not implemented yet by this scontrol")
		return
	default:
		s.exitCode = 1
		s.eprintf("No valid entity in update command\n")
		s.eprintf("Input line must include \"NodeName\", ")
		s.eprintf("\"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n")
		return
	}
	if err != nil {
		s.exitCode = 1
		s.perror("slurm_update error", err)
	}
}

// errQuiet is an update failure already reported; slurm_perror then
// prints errno, which nothing has set.
var errQuiet error = noError{}

type noError struct{}

func (noError) Error() string { return "No error" }

// timeStr2Secs is time_str2secs: [D-]H:M:S style durations; -1,
// INFINITE and UNLIMITED are infinite; noVal when invalid.
func timeStr2Secs(str string) uint32 {
	if str == "" {
		return noVal
	}
	if str == "-1" || strings.EqualFold(str, "INFINITE") || strings.EqualFold(str, "UNLIMITED") {
		return infinite
	}
	digit, dash, colon := 0, 0, 0
	already := false
	for _, c := range str {
		switch {
		case c >= '0' && c <= '9':
			if !already {
				digit++
				already = true
			}
		case c == '-':
			already = false
			dash++
			if colon != 0 {
				return noVal
			}
		case c == ':':
			already = false
			colon++
		default:
			return noVal
		}
	}
	if digit == 0 || dash > 1 || colon > 2 {
		return noVal
	}
	if dash != 0 && (colon == 1 && digit < 3 || colon == 2 && digit < 4) ||
		dash == 0 && (colon == 1 && digit < 2 || colon == 2 && digit < 3) {
		return noVal
	}
	nums := func(sep string, dst ...*int) {
		parts := strings.FieldsFunc(str, func(r rune) bool { return strings.ContainsRune(sep, r) })
		for i := 0; i < len(parts) && i < len(dst); i++ {
			n, _ := strconv.Atoi(parts[i])
			*dst[i] = n
		}
	}
	var d, h, m, sec int
	if strings.Contains(str, "-") {
		nums("-:", &d, &h, &m, &sec)
		return uint32(d*86400 + h*3600 + m*60 + sec)
	}
	if colon == 2 {
		nums(":", &h, &m, &sec)
		return uint32(h*3600 + m*60 + sec)
	}
	nums(":", &h, &m)
	return uint32(h*60 + m)
}

// timeStr2Mins is time_str2mins: minutes, rounded up.
func timeStr2Mins(str string) uint32 {
	v := timeStr2Secs(str)
	if v == infinite || v == noVal {
		return v
	}
	return (v + 59) / 60
}

// parseUint is parse_uint16/32/64: a whole decimal number below limit.
func parseUint(v string, limit uint64) (uint64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || uint64(n) >= limit {
		return 0, false
	}
	return uint64(n), true
}

// resourceRange is get_resource_arg_range: "n", "n-m", with k/m suffixes.
func (s *state) resourceRange(arg, what string) (int, int, bool) {
	if arg == "" || arg[0] == '*' {
		return 1, 1<<31 - 1, true
	}
	num := func(p string) (int64, string) {
		v, rest := strtolInt(p)
		n := int64(v)
		if rest != "" && (rest[0] == 'k' || rest[0] == 'K') {
			n *= 1024
			rest = rest[1:]
		} else if rest != "" && (rest[0] == 'm' || rest[0] == 'M') {
			n *= 1048576
			rest = rest[1:]
		}
		return n, rest
	}
	lo, rest := num(arg)
	if rest != "" && rest[0] != '-' || lo < 0 {
		s.errorf("Invalid numeric value \"%s\" for %s.", arg, what)
		return 0, 0, false
	}
	if lo > 1<<31-1 {
		s.errorf("Numeric argument (%d) to big for %s.", lo, what)
		return 0, 0, false
	}
	if rest == "" {
		return int(lo), 0, true
	}
	hi, rest := num(rest[1:])
	if rest != "" && rest[0] != '-' || hi <= 0 {
		s.errorf("Invalid numeric value \"%s\" for %s.", arg, what)
		return 0, 0, false
	}
	if hi > 1<<31-1 {
		s.errorf("Numeric argument (%d) to big for %s.", hi, what)
		return 0, 0, false
	}
	return int(lo), int(hi), true
}

// updateJob is scontrol_update_job; true means the exit code must be 1.
func (s *state) updateJob(argv []string) bool {
	d := msg.NewJobDesc()
	updates := 0
	updateSize := false
	jobUID := uint32(noVal)
	fail := func(format string, a ...any) bool {
		s.errorf(format, a...)
		return true
	}
	for i := 0; i < len(argv); i++ {
		tag := argv[i]
		var val string
		var addInfo byte
		tagLen := 0
		if k := strings.IndexByte(tag, '='); k >= 0 {
			tagLen = k
			if k > 0 && (tag[k-1] == '+' || tag[k-1] == '-') {
				addInfo = tag[k-1]
				tagLen--
			}
			val = tag[k+1:]
		} else if hasPrefixFold(tag, "Nice", max(len(tag), 2)) {
			d.Nice = niceOffset + 100
			updates++
			continue
		} else if hasPrefixFold(tag, "ResetAccrueTime", max(len(tag), 3)) {
			d.Bitflags |= 1 << 29
			updates++
			continue
		} else if i+1 < len(argv) {
			tagLen = len(tag)
			i++
			val = argv[i]
		} else {
			s.eprintf("Invalid input: %s\n", argv[i])
			s.eprintf("Request aborted\n")
			return true
		}
		tagName := tag[:tagLen]
		m := func(kw string, min int) bool { return hasPrefixFold(tagName, kw, max(tagLen, min)) }
		str := func(dst *msg.NullString) { *dst = msg.Str(val); updates++ }
		u16 := func(dst *uint16, what string) bool {
			n, ok := parseUint(val, noVal16)
			if !ok {
				return fail("Invalid %s value: %s", what, val)
			}
			*dst = uint16(n)
			updates++
			return false
		}
		u32 := func(dst *uint32, what string) bool {
			n, ok := parseUint(val, noVal)
			if !ok {
				return fail("Invalid %s value: %s", what, val)
			}
			*dst = uint32(n)
			updates++
			return false
		}
		yesNo := func(dst *uint16, what string) bool {
			switch {
			case hasPrefixFold(val, "YES", max(len(val), 1)):
				*dst = 1
			case hasPrefixFold(val, "NO", max(len(val), 1)):
				*dst = 0
			default:
				return u16(dst, what)
			}
			updates++
			return false
		}
		switch {
		case m("JobId", 3):
			d.JobIDStr = msg.Str(val)
		case m("AdminComment", 6):
			if addInfo == '-' {
				return fail("Invalid syntax, AdminComment can not be subtracted from.")
			}
			if addInfo == '+' {
				d.AdminComment = msg.Str("+=" + val)
				addInfo = 0
			} else {
				d.AdminComment = msg.Str(val)
			}
			updates++
		case m("SiteFactor", 5):
			n, _ := strconv.ParseInt(leadingInt(val), 10, 64)
			if n > niceOffset-3 || n < -(niceOffset-3) {
				return fail("SiteFactor value out of range (+/- %d). Value ignored", niceOffset-3)
			}
			d.SiteFactor = uint32(niceOffset + n)
			updates++
		case m("ArrayTaskThrottle", 10):
			if n, _ := strtolInt(val); n < 0 {
				return fail("Invalid ArrayTaskThrottle value")
			}
			d.ArrayInx = msg.Str(val)
			updates++
		case m("Comment", 3):
			str(&d.Comment)
		case m("Clusters", 8):
			str(&d.Clusters)
		case m("ClusterFeatures", 8):
			str(&d.ClusterFeatures)
		case m("DelayBoot", 5):
			sec := timeStr2Secs(val)
			if sec == noVal {
				return fail("Invalid DelayBoot value")
			}
			d.DelayBoot = sec
			updates++
		case m("CpusPerTres", 9):
			str(&d.CPUsPerTres)
		case m("ReqSockets", 4):
			if u16(&d.SocketsPerNode, "ReqSockets") {
				return true
			}
		case m("ReqCores", 4):
			if u16(&d.CoresPerSocket, "ReqCores") {
				return true
			}
		case m("TasksPerNode", 2):
			if u16(&d.NtasksPerNode, "TasksPerNode") {
				return true
			}
		case m("ReqThreads", 4):
			if u16(&d.ThreadsPerCore, "ReqThreads") {
				return true
			}
		case m("CoreSpec", 4), m("ThreadSpec", 4):
			what := "CoreSpec"
			if m("ThreadSpec", 4) {
				what = "ThreadSpec"
			}
			if val == "-1" || val == "*" {
				d.CoreSpec = infinite16
				updates++
			} else {
				if u16(&d.CoreSpec, what) {
					return true
				}
				if what == "ThreadSpec" {
					d.CoreSpec |= coreSpecThread
				}
			}
		case m("MemPerTres", 5):
			str(&d.MemPerTres)
		case m("TresBind", 5):
			str(&d.TresBind)
		case m("TresFreq", 5):
			str(&d.TresFreq)
		case m("TresPerJob", 8):
			str(&d.TresPerJob)
		case m("TresPerNode", 8):
			if d.TresPerNode.Valid {
				d.TresPerNode.Value += "," + val
			} else {
				d.TresPerNode = msg.Str(val)
			}
			updates++
		case m("TresPerSocket", 8):
			str(&d.TresPerSocket)
		case m("TresPerTask", 8):
			str(&d.TresPerTask)
		case m("Gres", 2):
			g := jobopt.PrependTresType(val)
			if d.TresPerNode.Valid {
				d.TresPerNode.Value += "," + g
			} else {
				d.TresPerNode = msg.Str(g)
			}
			updates++
		case m("BurstBuffer", 1):
			str(&d.BurstBuffer)
		case m("Switches", 5):
			n, rest := strtolInt(val)
			d.ReqSwitch = uint32(n)
			updates++
			if strings.HasPrefix(rest, "@") {
				d.Wait4Switch = timeStr2Mins(rest[1:]) * 60
			}
		case m("wait-for-switch", 5):
			if u32(&d.Wait4Switch, "wait-for-switch") {
				return true
			}
		case m("EndTime", 2):
			t, pos, ok := jobopt.ParseTime(val, s.now())
			if !ok {
				s.stdout.Flush()
				s.eprintf("Invalid time specification (pos=%d): %s\n", pos, val)
			}
			d.EndTime = t
			updates++
		case m("Deadline", 3):
			t, pos, ok := jobopt.ParseTime(val, s.now())
			if !ok {
				s.stdout.Flush()
				s.eprintf("Invalid time specification (pos=%d): %s\n", pos, val)
			}
			if t != 0 {
				d.Deadline = t
				updates++
			}
		case m("MailType", 5):
			mt := jobopt.ParseMailType(val)
			if mt == infinite16 {
				s.eprintf("Invalid MailType: %s\n", val)
				return true
			}
			d.MailType = mt
			updates++
		case m("TimeLimit", 5):
			if val != "" && (val[0] == '+' || val[0] == '-') {
				if addInfo != 0 {
					return fail("Invalid syntax, variations of +=- are not accepted.")
				}
				addInfo = val[0]
				val = val[1:]
			}
			limit := timeStr2Mins(val)
			if limit == noVal {
				return fail("Invalid TimeLimit value")
			}
			if addInfo != 0 {
				if !d.JobIDStr.Valid {
					return fail("JobId must precede TimeLimit increment or decrement")
				}
				cur := s.jobTime(d.JobIDStr.Value)
				if cur == noVal {
					return true
				}
				if addInfo == '+' {
					limit += cur
				} else if limit > cur {
					return fail("TimeLimit decrement larger than current time limit (%d > %d)", limit, cur)
				} else {
					limit = cur - limit
				}
				addInfo = 0
			}
			d.TimeLimit = limit
			updates++
		case m("TimeMin", 5):
			t := timeStr2Mins(val)
			if t == noVal {
				return fail("Invalid TimeMin value")
			}
			d.TimeMin = t
			updates++
		case m("Priority", 2):
			if u32(&d.Priority, "Priority") {
				return true
			}
		case m("Nice", 2):
			n, _ := strconv.ParseInt(leadingInt(val), 10, 64)
			if n > niceOffset-3 || n < -(niceOffset-3) {
				return fail("Nice value out of range (+/- %d). Value ignored", niceOffset-3)
			}
			d.Nice = uint32(niceOffset + n)
			updates++
		case m("CPUsPerTask", 9):
			if u16(&d.CPUsPerTask, "CPUsPerTask") {
				return true
			}
		case m("NumCPUs", 6):
			lo, hi, ok := s.resourceRange(val, "NumCPUs")
			if !ok || lo <= 0 || hi != 0 && hi < lo {
				return fail("Invalid NumCPUs value: %s", val)
			}
			d.MinCPUs = uint32(lo)
			if hi != 0 {
				d.MaxCPUs = uint32(hi)
			}
			updates++
		case m("NumTasks", 8) || m("ReqProcs", 8):
			if u32(&d.NumTasks, "NumTasks") {
				return true
			}
		case m("Requeue", 4):
			if u16(&d.Requeue, "Requeue") {
				return true
			}
		case m("ReqNodes", 8) || m("NumNodes", 8):
			switch {
			case val == "0":
				d.MinNodes = 0
			case strings.EqualFold(val, "ALL"):
				d.MinNodes = infinite
			default:
				lo, hi, ok := s.resourceRange(val, "requested node count")
				if !ok {
					return false
				}
				d.MinNodes = uint32(lo)
				if hi != 0 {
					d.MaxNodes = uint32(hi)
				}
			}
			updateSize = true
			updates++
		case m("MinCPUsNode", 4):
			if u16(&d.PnMinCPUs, "MinCPUsNode") {
				return true
			}
		case m("MinMemoryNode", 10):
			n, ok := parseUint(val, slurmNoVal64)
			if !ok {
				return fail("Invalid MinMemoryNode value: %s", val)
			}
			d.PnMinMemory = n
			updates++
		case m("MinMemoryCPU", 10):
			n, ok := parseUint(val, slurmNoVal64)
			if !ok {
				return fail("Invalid MinMemoryCPU value: %s", val)
			}
			d.PnMinMemory = n | memPerCPU
			updates++
		case m("MinTmpDiskNode", 5):
			if u32(&d.PnMinTmpDisk, "MinTmpDiskNode") {
				return true
			}
		case m("Partition", 2):
			str(&d.Partition)
		case m("QOS", 2):
			str(&d.QOS)
		case m("ReservationName", 3):
			str(&d.Reservation)
		case m("Name", 2) || m("JobName", 4):
			str(&d.Name)
		case m("WCKey", 1):
			str(&d.WCKey)
		case m("StdOut", 6):
			str(&d.StdOut)
		case m("OverSubscribe", 2) || m("Shared", 2):
			if yesNo(&d.Shared, "OverSubscribe") {
				return true
			}
		case m("Contiguous", 3):
			if yesNo(&d.Contiguous, "Contiguous") {
				return true
			}
		case m("ExcNodeList", 3):
			str(&d.ExcNodes)
		case m("NodeList", 8) || m("ReqNodeList", 8):
			str(&d.ReqNodes)
			updateSize = true
		case m("Features", 1):
			str(&d.Features)
		case m("Prefer", 3):
			str(&d.Prefer)
		case m("Account", 1):
			str(&d.Account)
		case m("Dependency", 1):
			str(&d.Dependency)
		case m("Licenses", 1):
			str(&d.Licenses)
		case m("EligibleTime", 2) || m("StartTime", 2):
			now := s.now()
			t, pos, ok := jobopt.ParseTime(val, now)
			if !ok {
				s.stdout.Flush()
				s.eprintf("Invalid time specification (pos=%d): %s\n", pos, val)
			}
			if ok && t != 0 {
				if t < now.Unix() {
					t = now.Unix()
				}
				d.BeginTime = t
				updates++
			}
		case m("Reboot", 3):
			var r uint16
			if yesNo(&r, "reboot") {
				return true
			}
			d.Reboot = r
		case m("UserID", 3):
			uid, ok := lookupUID(val)
			if !ok {
				s.eprintf("Invalid UserID: %s\n", val)
				s.eprintf("Request aborted\n")
				return true
			}
			jobUID = uint32(uid)
		case m("WorkDir", 2):
			str(&d.WorkDir)
		case m("MailUser", 5):
			str(&d.MailUser)
		default:
			s.eprintf("Update of this parameter is not supported: %s\n", argv[i])
			s.eprintf("Request aborted\n")
			return true
		}
		if addInfo != 0 {
			return fail("Option %s does not accept [+|-]= syntax", tag)
		}
	}
	if updates == 0 {
		s.eprintf("No changes specified\n")
		return true
	}
	if s.uid >= 0 {
		d.UserID = uint32(s.uid)
	}
	if !d.JobIDStr.Valid && d.Name.Valid {
		ids, ok := s.jobNameToIDs(d.Name.Value, jobUID)
		if !ok {
			return true
		}
		d.JobIDStr = msg.Str(ids)
	}
	if !d.JobIDStr.Valid {
		return fail("No job ID specified")
	}
	if updateSize && !s.isSingleJob(d.JobIDStr.Value) {
		return true
	}
	ids, ok := jobIDList(d.JobIDStr.Value)
	if !ok {
		s.jobIDError(slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}, d.JobIDStr.Value)
		return true
	}
	failed := false
	for _, id := range ids {
		d.JobIDStr = msg.Str(id)
		resp, err := s.jobRPCResp(msgtype.REQUEST_UPDATE_JOB, d)
		if err == nil && updateSize {
			s.writeResizeScripts(id)
		}
		if err != nil {
			s.jobIDError(err, id)
			failed = true
		} else if resp != nil {
			s.reportArrayErrors(resp)
		}
	}
	return failed
}

const slurmNoVal64 = 0xfffffffffffffffe

func leadingInt(v string) string {
	n, _ := strtolInt(v)
	return strconv.Itoa(n)
}

// splitJobID parses "J" or "J_T" for the single-job checks.
func (s *state) splitJobID(str string) (uint32, uint32, bool) {
	n, rest := strtolInt(str)
	task := uint32(noVal)
	if strings.HasPrefix(rest, "_") {
		var t int
		t, rest = strtolInt(rest[1:])
		task = uint32(t)
	}
	if rest != "" {
		s.errorf("Invalid job ID %s", str)
		return 0, 0, false
	}
	return uint32(n), task, true
}

// jobTime is _get_job_time: the job's current time limit, noVal on error.
func (s *state) jobTime(str string) uint32 {
	id, task, ok := s.splitJobID(str)
	if !ok {
		return noVal
	}
	m, err := s.ctl().LoadJob(s.ctx(), id, 1)
	if err != nil {
		s.errorf("Could not load state information for job %s: %s", str, strerror(err))
		return noVal
	}
	if len(m.Jobs) == 0 {
		s.errorf("Job ID %s not found", str)
		return noVal
	}
	if len(m.Jobs) > 1 && task == noVal {
		s.errorf("TimeLimit increment/decrement not supported for job arrays")
		return noVal
	}
	for _, j := range s.viewJobs(m) {
		if j.JobID == id && j.ArrayTaskID == noVal && j.taskBitmap == nil {
			return j.TimeLimit
		}
		if j.ArrayJobID != id {
			continue
		}
		if task == noVal || j.ArrayTaskID == task ||
			j.taskBitmap != nil && int(task) < len(j.taskBitmap) && j.taskBitmap[task] {
			return j.TimeLimit
		}
	}
	return noVal
}

// isSingleJob is _is_single_job: a size change needs one job.
func (s *state) isSingleJob(str string) bool {
	id, task, ok := s.splitJobID(str)
	if !ok {
		return false
	}
	m, err := s.ctl().LoadJob(s.ctx(), id, 1)
	if err != nil {
		s.errorf("Could not load state information for job %s: %s", str, strerror(err))
		return false
	}
	if len(m.Jobs) == 0 {
		s.errorf("Job ID %s not found", str)
		return false
	}
	if len(m.Jobs) > 1 && task == noVal {
		s.errorf("Job resizing not supported for job arrays")
		return false
	}
	return true
}

// jobNameToIDs is _job_name2id.
func (s *state) jobNameToIDs(name string, uid uint32) (string, bool) {
	m, err := s.ctl().LoadJobs(s.ctx(), 0, s.jobShowFlags())
	if err != nil {
		s.errorf("Could not load state information: %s", strerror(err))
		return "", false
	}
	if len(m.Jobs) == 0 {
		s.errorf("JobName %s not found", name)
		return "", false
	}
	var ids []string
	for _, j := range m.Jobs {
		if uid != noVal && uid != j.UserID {
			continue
		}
		if !j.Name.Valid || j.Name.Value != name {
			continue
		}
		if j.ArrayTaskID != noVal {
			ids = append(ids, fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID))
		} else {
			ids = append(ids, fmt.Sprintf("%d", j.JobID))
		}
	}
	if len(ids) == 0 {
		if uid == noVal {
			s.errorf("No jobs with name '%s'", name)
		} else {
			s.errorf("No jobs with user ID %d and name '%s'", uid, name)
		}
		return "", false
	}
	return strings.Join(ids, ","), true
}

// Node states and flags an update can ask for.
const (
	nodeStateNoRespond   = 1 << 11
	nodeStateRebootCncl  = 1 << 17
	nodeStateDrain       = 1 << 9
	nodeStateFail        = 1 << 13
	nodeStateFuture      = 6
	nodeResume           = 1 << 8
	nodeStatePowerDown   = 1 << 23
	nodeStatePowerUp     = 1 << 24
	nodeStatePowerDrain  = 1 << 25
	nodeStatePoweredDown = 1 << 12
	nodeStateUndrain     = 1 << 6
	nodeStateDown        = 1
)

var nodeBaseStates = []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"}

// updateNode is scontrol_update_node.
func (s *state) updateNode(argv []string) error {
	req := msg.NewUpdateNodeRequest()
	updates := 0
	for _, arg := range argv {
		k := strings.IndexByte(arg, '=')
		if k < 0 {
			s.errorf("Invalid input: %s  Request aborted", arg)
			return errQuiet
		}
		tag, val := arg[:k], arg[k+1:]
		m := func(kw string, min int) bool { return hasPrefixFold(tag, kw, max(len(tag), min)) }
		vm := func(kw string, min int) bool { return hasPrefixFold(val, kw, max(len(val), min)) }
		switch {
		case m("NodeAddr", 5):
			req.NodeAddr = msg.Str(val)
			updates++
		case m("NodeHostName", 5):
			req.NodeHostname = msg.Str(val)
			updates++
		case m("NodeName", 1):
			req.NodeNames = msg.Str(val)
		case m("ActiveFeatures", 3):
			req.FeaturesAct = msg.Str(val)
			updates++
		case m("Extra", 1):
			req.Extra = msg.Str(val)
			updates++
		case m("Features", 1) || m("AvailableFeatures", 3):
			req.Features = msg.Str(val)
			updates++
		case m("Gres", 1):
			req.Gres = msg.Str(val)
			updates++
		case m("Weight", 1):
			w, ok := parseWeight(val)
			if !ok {
				s.errorf("Weight value (%s) is not a valid number", val)
				continue
			}
			req.Weight = w
			updates++
		case m("Comment", 2):
			req.Comment = msg.Str(val)
			updates++
		case m("Reason", 1):
			r := strings.TrimPrefix(val, "\"")
			r = strings.TrimSuffix(r, "\"")
			req.Reason = msg.Str(r)
			updates++
		case m("State", 1):
			switch {
			case vm("NoResp", 3):
				req.NodeState = nodeStateNoRespond
			case vm("CANCEL_REBOOT", 3):
				req.NodeState = nodeStateRebootCncl
			case vm("DRAIN", 3):
				req.NodeState = nodeStateDrain
			case vm("FAIL", 3):
				req.NodeState = nodeStateFail
			case vm("FUTURE", 3):
				req.NodeState = nodeStateFuture
			case vm("RESUME", 3):
				req.NodeState = nodeResume
			case vm("POWER_DOWN_ASAP", 12):
				req.NodeState = nodeStatePowerDown | nodeStatePowerDrain
			case vm("POWER_DOWN_FORCE", 12):
				req.NodeState = nodeStatePowerDown | nodeStatePoweredDown
			case vm("POWER_DOWN", 7):
				req.NodeState = nodeStatePowerDown
			case vm("POWER_UP", 7):
				req.NodeState = nodeStatePowerUp
			case vm("UNDRAIN", 3):
				req.NodeState = nodeStateUndrain
			default:
				found := false
				for j, name := range nodeBaseStates {
					if hasPrefixFold(name, val, max(len(val), 3)) {
						req.NodeState = uint32(j)
						found = true
						break
					}
				}
				if !found {
					s.exitCode = 1
					s.eprintf("Invalid input: %s\n", arg)
					s.eprintf("Request aborted\n")
					s.eprintf("Valid states are: ")
					s.eprintf("NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN")
					s.eprintf("\n")
					s.eprintf("Not all states are valid given a node's prior state\n")
					return nil
				}
			}
			updates++
		default:
			s.exitCode = 1
			s.eprintf("Update of this parameter is not supported: %s\n", arg)
			s.eprintf("Request aborted\n")
			return nil
		}
	}
	if (req.NodeState == nodeStateDown || req.NodeState == nodeStateDrain || req.NodeState == nodeStateFail) &&
		req.Reason.Value == "" {
		s.exitCode = 1
		s.eprintf("You must specify a reason when DOWNING or DRAINING a node. Request denied\n")
		return nil
	}
	if updates == 0 {
		s.exitCode = 1
		s.eprintf("No changes specified\n")
		return nil
	}
	return s.rpcRC(msgtype.REQUEST_UPDATE_NODE, req)
}

func parseWeight(val string) (uint32, bool) {
	if strings.EqualFold(val, "UNLIMITED") || strings.EqualFold(val, "INFINITE") {
		return infinite, true
	}
	if strings.HasPrefix(val, "-") {
		return 0, false
	}
	mult := uint64(1)
	num := val
	if strings.HasSuffix(num, "k") || strings.HasSuffix(num, "K") {
		mult = 1024
		num = num[:len(num)-1]
	}
	n, err := strconv.ParseUint(num, 0, 64)
	if err != nil || n*mult > 0xfffffff0 {
		return 0, false
	}
	return uint32(n * mult), true
}

// NewUpdatePartitionRequest values: slurm_init_part_desc_msg.
func newUpdatePartition() msg.UpdatePartitionRequest {
	return msg.UpdatePartitionRequest{
		DefaultTime: noVal, DefMemPerCPU: slurmNoVal64, GraceTime: noVal,
		MaxCPUsPerNode: noVal, MaxMemPerCPU: slurmNoVal64, MaxNodes: noVal,
		MaxShare: noVal16, MinNodes: noVal, MaxTime: noVal, OverTimeLimit: noVal16,
		PreemptMode: noVal16, PriorityJobFactor: noVal16, PriorityTier: noVal16,
		StateUp: noVal16,
	}
}

// updatePartition is scontrol_update_part.
func (s *state) updatePartition(argv []string) error {
	p, updates, err := s.parsePartOptions(argv)
	if err != nil {
		return err
	}
	if !p.Name.Valid {
		s.exitCode = 1
		s.errorf("PartitionName must be given.")
		return nil
	}
	if updates <= 1 {
		s.exitCode = 1
		s.errorf("No changes specified")
		return nil
	}
	return s.rpcRC(msgtype.REQUEST_UPDATE_PARTITION, p)
}

// parsePartOptions is scontrol_parse_part_options: the request and the
// number of keys set (PartitionName included).
func (s *state) parsePartOptions(argv []string) (msg.UpdatePartitionRequest, int, error) {
	p := newUpdatePartition()
	updates := 0
	for _, arg := range argv {
		k := strings.IndexByte(arg, '=')
		if k < 0 {
			s.exitCode = 1
			s.errorf("Invalid input: %s  Request aborted", arg)
			return p, updates, errQuiet
		}
		tag, val := arg[:k], arg[k+1:]
		m := func(kw string, min int) bool { return hasPrefixFold(tag, kw, max(len(tag), min)) }
		vm := func(v, kw string) bool { return hasPrefixFold(v, kw, max(len(v), 1)) }
		flag := func(set, clr uint16, what string) error {
			switch {
			case vm(val, "NO"):
				p.Flags |= clr
			case vm(val, "YES"):
				p.Flags |= set
			default:
				s.exitCode = 1
				s.errorf("Invalid input: %s", arg)
				s.errorf("Acceptable %s values are YES and NO", what)
				return errQuiet
			}
			updates++
			return nil
		}
		u16 := func(dst *uint16, what string) error {
			n, ok := parseUint(val, noVal16)
			if !ok {
				s.errorf("Invalid %s value: %s", what, val)
				return errQuiet
			}
			*dst = uint16(n)
			updates++
			return nil
		}
		var err error
		switch {
		case m("PartitionName", 2):
			p.Name = msg.Str(val)
			updates++
		case m("MaxTime", 4), m("DefaultTime", 8):
			t := timeStr2Mins(val)
			if t == noVal {
				s.exitCode = 1
				s.errorf("Invalid input %s", arg)
				return p, updates, errQuiet
			}
			if m("MaxTime", 4) {
				p.MaxTime = t
			} else {
				p.DefaultTime = t
			}
			updates++
		case m("MaxCPUsPerNode", 4):
			if strings.EqualFold(val, "UNLIMITED") || strings.EqualFold(val, "INFINITE") {
				p.MaxCPUsPerNode = infinite
			} else if n, ok := parseUint(val, noVal); ok {
				p.MaxCPUsPerNode = uint32(n)
			} else {
				s.errorf("Invalid MaxCPUsPerNode value: %s", val)
				return p, updates, errQuiet
			}
			updates++
		case m("MaxNodes", 4):
			if strings.EqualFold(val, "UNLIMITED") || strings.EqualFold(val, "INFINITE") {
				p.MaxNodes = infinite
			} else if lo, _, ok := s.resourceRange(val, "MaxNodes"); ok {
				p.MaxNodes = uint32(lo)
			} else {
				s.exitCode = 1
			}
			updates++
		case m("MinNodes", 2):
			lo, _, ok := s.resourceRange(val, "MinNodes")
			if !ok {
				lo = 1
			}
			p.MinNodes = uint32(lo)
			updates++
		case m("Default", 7):
			err = flag(partDefault, 0x0100, "Default")
		case m("DisableRootJobs", 1):
			err = flag(partNoRoot, 0x0400, "DisableRootJobs")
		case m("ExclusiveUser", 1):
			err = flag(partExclUser, 0x4000, "ExclusiveUser")
		case m("Hidden", 1):
			err = flag(partHidden, 0x0200, "Hidden")
		case m("LLN", 1):
			err = flag(partLLN, 0x2000, "LLN")
		case m("RootOnly", 3):
			err = flag(partRootOnly, 0x0800, "RootOnly")
		case m("ReqResv", 3):
			err = flag(partReqResv, 0x1000, "ReqResv")
		case m("OverSubscribe", 5) || m("Shared", 2):
			v, count, hasCount := val, "", false
			if c := strings.IndexByte(v, ':'); c >= 0 {
				v, count, hasCount = v[:c], v[c+1:], true
			}
			n := uint16(4)
			if hasCount {
				x, _ := strtolInt(count)
				n = uint16(x)
			}
			switch {
			case vm(v, "NO"):
				p.MaxShare = 1
			case vm(v, "EXCLUSIVE"):
				p.MaxShare = 0
			case vm(v, "YES"):
				p.MaxShare = n
			case vm(v, "FORCE"):
				p.MaxShare = n | sharedForce
			default:
				s.exitCode = 1
				s.errorf("Invalid input: %s", arg)
				s.errorf("Acceptable OverSubscribe values are NO, EXCLUSIVE, YES:#, and FORCE:#")
				return p, updates, errQuiet
			}
			updates++
		case m("OverTimeLimit", 5):
			if strings.EqualFold(val, "UNLIMITED") || strings.EqualFold(val, "INFINITE") {
				p.OverTimeLimit = infinite16
				updates++
			} else {
				err = u16(&p.OverTimeLimit, "OverTimeLimit")
			}
		case m("Priority", 3) && !m("PriorityJobFactor", 3) && !m("PriorityTier", 3):
			err = u16(&p.PriorityTier, "Priority")
			p.PriorityJobFactor = p.PriorityTier
		case m("PreemptMode", 3):
			mode, ok := preemptModeNum(val)
			if !ok {
				s.errorf("Invalid input: %s", arg)
				return p, updates, errQuiet
			}
			p.PreemptMode = mode
			updates++
		case m("PriorityJobFactor", 3):
			err = u16(&p.PriorityJobFactor, "PriorityJobFactor")
		case m("PriorityTier", 3):
			err = u16(&p.PriorityTier, "PriorityTier")
		case m("State", 2):
			switch {
			case vm(val, "INACTIVE"):
				p.StateUp = msg.PartitionInactive
			case vm(val, "DOWN"):
				p.StateUp = msg.PartitionDown
			case vm(val, "UP"):
				p.StateUp = msg.PartitionUp
			case vm(val, "DRAIN"):
				p.StateUp = msg.PartitionDrain
			default:
				s.exitCode = 1
				s.errorf("Invalid input: %s", arg)
				s.errorf("Acceptable State values are UP, DOWN, DRAIN and INACTIVE")
				return p, updates, errQuiet
			}
			updates++
		case m("Nodes", 1):
			p.Nodes = msg.Str(val)
			updates++
		case m("AllowGroups", 6):
			p.AllowGroups = msg.Str(val)
			updates++
		case m("AllowAccounts", 6):
			p.AllowAccounts = msg.Str(val)
			updates++
		case m("AllowQos", 6):
			p.AllowQOS = msg.Str(val)
			updates++
		case m("DenyAccounts", 5):
			p.DenyAccounts = msg.Str(val)
			updates++
		case m("DenyQos", 5):
			p.DenyQOS = msg.Str(val)
			updates++
		case m("AllocNodes", 6):
			p.AllowAllocNodes = msg.Str(val)
			updates++
		case m("Alternate", 3):
			p.Alternate = msg.Str(val)
			updates++
		case m("GraceTime", 5):
			n, ok := parseUint(val, noVal)
			if !ok {
				s.errorf("Invalid GraceTime value: %s", val)
				return p, updates, errQuiet
			}
			p.GraceTime = uint32(n)
			updates++
		case m("DefMemPerCPU", 10), m("DefMemPerNode", 10), m("MaxMemPerCPU", 10), m("MaxMemPerNode", 10):
			n, ok := parseUint(val, slurmNoVal64)
			if !ok {
				s.errorf("Invalid %s value: %s", tag, val)
				return p, updates, errQuiet
			}
			switch {
			case m("DefMemPerCPU", 10):
				p.DefMemPerCPU = n | memPerCPU
			case m("DefMemPerNode", 10):
				p.DefMemPerCPU = n
			case m("MaxMemPerCPU", 10):
				p.MaxMemPerCPU = n | memPerCPU
			default:
				p.MaxMemPerCPU = n
			}
			updates++
		case m("QoS", 3):
			p.QOSChar = msg.Str(val)
			updates++
		case m("JobDefaults", 4):
			p.JobDefaultsStr = msg.Str(val)
			updates++
		case m("TresBillingWeights", 1):
			p.BillingWeightsStr = msg.Str(val)
			updates++
		default:
			s.exitCode = 1
			s.errorf("Update of this parameter is not supported: %s\n", arg)
			s.errorf("Request aborted")
			return p, updates, errQuiet
		}
		if err != nil {
			return p, updates, err
		}
	}
	return p, updates, nil
}

// preemptModeNum is preempt_mode_num: one mode, optionally with GANG or
// WITHIN (not both).
func preemptModeNum(v string) (uint16, bool) {
	var mode uint16
	modes := 0
	for _, tok := range strings.Split(v, ",") {
		switch strings.ToLower(tok) {
		case "gang":
			mode |= preemptGang
		case "within":
			mode |= preemptWithin
		case "off", "cluster":
			modes++
		case "cancel":
			mode += 0x8
			modes++
		case "requeue":
			mode += 0x2
			modes++
		case "on", "suspend":
			mode += 0x1
			modes++
		case "":
			// strtok skips empty fields.
		default:
			return 0, false
		}
	}
	if modes > 1 || mode&preemptGang != 0 && mode&preemptWithin != 0 {
		return 0, false
	}
	return mode, true
}
