package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
)

// jobComp is job_completion_logger's jobcomp_g_write: for
// JobCompType=jobcomp/filetxt one line per finished job in JobCompLoc
// (and one per resize of a running job, preResize).
// The TRES and the partition time limit need the cluster view, so the
// line is completed when the controller takes the hooks (TakeScripts).
func (m *Manager) jobComp(j *Job) {
	if m.cfg.Hooks.JobCompLoc == "" {
		return
	}
	jc := *j // the fields the record still needs, as they are now
	limit := func(cl *Cluster) (uint32, bool) {
		l := m.timeLimit(&jc, cl)
		return l, l != Infinite && l != NoVal
	}
	switch m.cfg.Hooks.JobCompType {
	case "jobcomp/filetxt":
		rec := m.jobCompRecord(j)
		m.addScript(Script{Kind: ScriptJobCompFile, JobID: j.ID, Path: m.cfg.Hooks.JobCompLoc,
			complete: func(s *Script, cl *Cluster) {
				rec.TimeLimit = "UNLIMITED"
				if l, ok := limit(cl); ok {
					rec.TimeLimit = strconv.FormatUint(uint64(l), 10)
				}
				rec.Tres = m.tresReq(&jc, cl)
				s.Line = rec.line()
			}})
	case "jobcomp/script":
		env := m.jobCompEnv(j)
		m.addScript(Script{Kind: ScriptJobCompScript, JobID: j.ID, Argv: []string{m.cfg.Hooks.JobCompLoc},
			complete: func(s *Script, cl *Cluster) {
				lim := "UNLIMITED"
				if l, ok := limit(cl); ok {
					lim = secsString(int64(l) * 60) // mins2time_str
				}
				s.Env = append(env, "LIMIT="+lim, "PATH=/usr/bin:/bin:/usr/sbin:/sbin")
			}})
	}
}

// jobCompEnv is jobcomp/script's environment (_create_environment), less
// LIMIT (it needs the partition) and PATH.
func (m *Manager) jobCompEnv(j *Job) []string {
	var env []string
	set := func(k, v string) { env = append(env, k+"="+v) }
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	set("JOBID", u(j.ID))
	set("EXITCODE", exitPair(j.ExitCode))
	set("DERIVED_EC", exitPair(j.DerivedEC))
	set("ARRAYJOBID", u(j.ArrayJobID))
	task := j.ArrayTaskID
	if j.ArrayJobID == 0 {
		task = NoVal
	}
	set("ARRAYTASKID", u(task))
	set("UID", u(j.UserID))
	set("GID", u(j.GroupID))
	start, end := j.StartTime, j.EndTime
	if j.ResizeTime != 0 {
		start = j.ResizeTime
	} else if j.StartTime > j.EndTime {
		start = 0
	}
	state := jobStateBaseName(j)
	if j.State&msg.JobResizing != 0 {
		// The part of the job that ran until the resize (preResize).
		end, state = j.ResizeTime, "RESIZING"
	}
	set("START", i64(start))
	set("END", i64(end))
	set("SUBMIT", i64(j.SubmitTime))
	set("PROCS", u(j.TotalCPUs))
	set("NODECNT", strconv.Itoa(len(j.Nodes)))
	// db_flags: which scheduler started the job (backfill is not told
	// apart here), None for one that never ran.
	flags := "None"
	if len(j.Nodes) > 0 {
		flags = "SchedMain"
	}
	set("DB_FLAGS", flags)
	batch := "no"
	if j.Batch {
		batch = "yes"
	}
	set("BATCH", batch)
	set("CLUSTER", "")
	set("CONSTRAINTS", j.Features)
	set("NODES", j.nodeList())
	set("ACCOUNT", j.Account)
	set("JOBNAME", j.Name)
	set("JOBSTATE", state)
	part := j.Partition
	if part == "" {
		part = joinPartitions(j.Partitions)
	}
	set("PARTITION", part)
	set("QOS", "")
	dep := ""
	if j.Dependency != nil {
		dep = j.Dependency.String()
	}
	set("DEPENDENCY", dep)
	workDir := j.WorkDir
	if workDir == "" {
		workDir = "unknown"
	}
	set("WORK_DIR", workDir)
	set("RESERVATION", j.Reservation)
	set("USERNAME", m.userName(j))
	set("GROUPNAME", m.groupName(j.GroupID))
	set("STATEREASONPREV", "None")
	if j.StdIn != "" {
		set("STDIN", j.StdIn)
	}
	if j.StdOut != "" {
		set("STDOUT", j.StdOut)
	}
	if j.StdErr != "" {
		set("STDERR", j.StdErr)
	}
	return env
}

// compTime is _make_time_str: local time, ISO 8601, or Unknown.
func compTime(t int64) string {
	if t == 0 {
		return "Unknown"
	}
	return time.Unix(t, 0).Format("2006-01-02T15:04:05")
}

// exitPair is the "exit:signal" of a raw wait status.
func exitPair(st uint32) string {
	if st == NoVal {
		return "0:0"
	}
	ws := syscall.WaitStatus(st)
	switch {
	case ws.Signaled():
		return fmt.Sprintf("0:%d", int(ws.Signal()))
	case ws.Exited():
		return fmt.Sprintf("%d:0", ws.ExitStatus())
	}
	return "0:0"
}

// compRecord is one jobcomp/filetxt record, field by field, each as the
// plugin prints it.
type compRecord struct {
	JobID, UID, GID                         uint32
	User, Group, Name, State, Partition     string
	TimeLimit, Start, End, Nodes            string
	NodeCnt, ProcCnt                        uint32
	WorkDir, Resv, Tres, Account, QOS       string
	WcKey, Cluster, Submit, Eligible, Array string
	DerivedEC, ExitCode                     string
}

// compRecordMax is the size of jobcomp_filetxt's record buffer: a
// longer record is cut to one byte less (its newline lost with it).
const compRecordMax = 1024

// cString is how C prints a Go string with %s: up to its first NUL.
func cString(s string) string {
	if k := strings.IndexByte(s, 0); k >= 0 {
		return s[:k]
	}
	return s
}

// cName is a name printed from a 32-byte buffer (_get_user_name,
// _get_group_name): at most 31 bytes.
func cName(s string) string {
	s = cString(s)
	if len(s) > 31 {
		s = s[:31]
	}
	return s
}

// line is the record as jobcomp_p_log_record writes it (JOB_FORMAT):
// every field printed as it is, user text included (a name may hold
// spaces, '=' or a newline: C's %s prints them, up to a NUL).
func (r *compRecord) line() string {
	var b strings.Builder
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	for _, f := range [...]string{
		"JobId=", u(r.JobID), " UserId=", cName(r.User), "(", u(r.UID), ") GroupId=", cName(r.Group), "(", u(r.GID),
		") Name=", r.Name, " JobState=", r.State, " Partition=", r.Partition, " TimeLimit=", r.TimeLimit,
		" StartTime=", r.Start, " EndTime=", r.End, " NodeList=", r.Nodes, " NodeCnt=", u(r.NodeCnt),
		" ProcCnt=", u(r.ProcCnt), " WorkDir=", r.WorkDir, " ReservationName=", r.Resv, " Tres=", r.Tres,
		" Account=", r.Account, " QOS=", r.QOS, " WcKey=", r.WcKey, " Cluster=", r.Cluster,
		" SubmitTime=", r.Submit, " EligibleTime=", r.Eligible, r.Array,
		" DerivedExitCode=", r.DerivedEC, " ExitCode=", r.ExitCode, " \n",
	} {
		b.WriteString(cString(f))
	}
	s := b.String()
	if len(s) >= compRecordMax {
		s = s[:compRecordMax-1]
	}
	return s
}

// jobCompRecord takes jobcomp_filetxt's record of j as it ends; the time
// limit and the TRES need the cluster view and are filled in later.
func (m *Manager) jobCompRecord(j *Job) compRecord {
	var start string
	end, state := j.EndTime, jobStateBaseName(j)
	if j.State&msg.JobResizing != 0 {
		// The part of the job that ran until the resize (preResize),
		// in the state with its flags (job_state_string).
		end, state = j.ResizeTime, jobStateString(j.State)
	}
	switch {
	case j.ResizeTime != 0:
		start = compTime(j.ResizeTime)
	case j.StartTime > j.EndTime:
		start = "Unknown" // cancelled while pending, expected start ahead
	default:
		start = compTime(j.StartTime)
	}
	part := j.Partition
	if part == "" {
		part = joinPartitions(j.Partitions)
	}
	workDir := j.WorkDir
	if workDir == "" {
		workDir = "unknown"
	}
	submit, eligible := "unknown", "unknown"
	if j.SubmitTime != 0 {
		submit = compTime(j.SubmitTime)
	}
	if b := max(j.BeginTime, j.EligibleTime); b != 0 {
		eligible = compTime(b)
	}
	array := ""
	if j.ArrayJobID != 0 && j.ArrayTaskID != NoVal {
		array = fmt.Sprintf(" ArrayJobId=%d ArrayTaskId=%d", j.ArrayJobID, j.ArrayTaskID)
	}
	return compRecord{JobID: j.ID, UID: j.UserID, GID: j.GroupID,
		User: m.userName(j), Group: m.groupName(j.GroupID), Name: orNull(j.Name), State: state,
		Partition: orNull(part), Start: start, End: compTime(end), Nodes: orNull(j.nodeList()),
		NodeCnt: uint32(len(j.Nodes)), ProcCnt: j.TotalCPUs, WorkDir: workDir, Resv: j.Reservation,
		Account: j.Account, QOS: j.QOS, Cluster: "unknown", Submit: submit, Eligible: eligible, Array: array,
		DerivedEC: exitPair(j.DerivedEC), ExitCode: exitPair(j.ExitCode)}
}
