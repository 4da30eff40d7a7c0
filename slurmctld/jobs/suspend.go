package jobs

import (
	"sort"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// SuspendReply is how a REQUEST_SUSPEND is answered when the call itself
// did not fail: nothing at all (NoReply), RESPONSE_JOB_ARRAY_ERRORS (Array),
// or RESPONSE_SLURM_RC 0.
type SuspendReply struct {
	// NoReply: no job has the request's id. slurmctld 22.05 closes the
	// connection without an answer then (scontrol prints "Unexpected
	// message received for job N").
	NoReply bool
	// Array holds one error code per group of array tasks when the
	// request named a job array or some of its tasks.
	Array *msg.JobArrayErrorsResponse
}

// Suspend handles REQUEST_SUSPEND (scontrol suspend / resume) as
// slurmctld's _slurm_rpc_suspend, job_suspend and job_suspend2: root or
// SlurmUser only; a suspended job keeps its nodes and memory but gives
// its cores back, its priority drops to 0 until it resumes (which takes
// it out of gang scheduling, gang.go), and the time it spends suspended
// does not count against its time limit. Every node of
// the job gets REQUEST_SUSPEND_INT, an salloc/srun holding the allocation
// gets SRUN_REQUEST_SUSPEND. A non-nil error is the RESPONSE_SLURM_RC code.
func (m *Manager) Suspend(req *msg.SuspendRequest, c Caller, cl *Cluster, now int64) (SuspendReply, Outcome, error) {
	id := req.JobID
	if id == NoVal && req.JobIDStr.Valid {
		id = uint32(leadingInt(req.JobIDStr.Value))
	}
	if m.jobs[id] == nil {
		return SuspendReply{NoReply: true}, Outcome{}, nil
	}
	var actions []Action
	var rep SuspendReply
	var err error
	if !req.JobIDStr.Valid {
		err = m.suspendByID(req, c, cl, now, &actions)
	} else {
		rep.Array, err = m.suspendByString(req, c, cl, now, &actions)
	}
	out, ferr := m.finish(actions)
	if ferr != nil {
		return rep, out, ferr
	}
	return rep, out, err
}

// suspendByID is job_suspend: the numeric id only.
func (m *Manager) suspendByID(req *msg.SuspendRequest, c Caller, cl *Cluster, now int64, actions *[]Action) error {
	if !m.privileged(c.UID) {
		return serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	return m.suspendJob(m.jobs[req.JobID], req.Op, cl, now, actions)
}

// suspendByString is job_suspend2: "123", "123_4", "123_[1-3,5]"; a whole
// array or a task list is answered per task (RESPONSE_JOB_ARRAY_ERRORS).
func (m *Manager) suspendByString(req *msg.SuspendRequest, c Caller, cl *Cluster, now int64, actions *[]Action) (*msg.JobArrayErrorsResponse, error) {
	if !m.privileged(c.UID) {
		return nil, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	s := req.JobIDStr.Value
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	rest := s[digits:]
	v, perr := strconv.ParseUint(s[:digits], 10, 32)
	switch {
	case strings.HasPrefix(rest, "+"):
		return nil, serr(slurmerr.ESLURM_NOT_WHOLE_HET_JOB)
	case perr != nil || v == 0 || (rest != "" && rest[0] != '_'):
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	id := uint32(v)
	res := arrayResults{}
	if rest == "" {
		j := m.jobs[id]
		if j != nil && (j.ArrayJobID == 0 || j.ArrayJobID != id) {
			// A plain job, or one task of an array named by its own id.
			return nil, m.suspendJob(j, req.Op, cl, now, actions)
		}
		found := false
		for _, r := range m.Jobs() {
			if r.ArrayJobID != id {
				continue
			}
			found = true
			m.suspendRecord(r, req.Op, cl, now, actions, res)
		}
		if !found {
			return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		return res.response(id), nil
	}
	spec := strings.NewReplacer("[", "", "]", "").Replace(rest[1:])
	tasks, _, ok := parseArray(spec, m.cfg.MaxArraySize)
	if !ok {
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	idx := m.arrayIndex(id)
	for _, t := range tasks {
		r := idx.task(t)
		switch {
		case r == nil:
			res.add(slurmerr.ESLURM_INVALID_JOB_ID, t)
		case r.IsArrayMeta() && r.ArrayTaskID != t:
			// A pending task: the meta record answers for it.
			res.add(m.suspendCode(r, req.Op, cl, now, actions), t)
		default:
			res.add(m.suspendCode(r, req.Op, cl, now, actions), r.ArrayTaskID)
		}
	}
	return res.response(id), nil
}

// suspendRecord suspends one record of an array and files its result
// under its task ids (every pending task for the meta record).
func (m *Manager) suspendRecord(r *Job, op uint16, cl *Cluster, now int64, actions *[]Action, res arrayResults) {
	rc := m.suspendCode(r, op, cl, now, actions)
	if r.IsArrayMeta() {
		for _, t := range r.Array.Pending {
			res.add(rc, t)
		}
	}
	if r.ArrayTaskID != NoVal {
		res.add(rc, r.ArrayTaskID)
	}
}

// arrayTasks is find_job_array_rec for many tasks of one array (the
// record of a task, the meta record when it has not started yet): the
// table is scanned once, not once per task (scancel 1_[0-999] on a table
// of 10,000 jobs would be ten million looks under the lock).
type arrayTasks struct {
	recs   []*Job
	byTask map[uint32]int // a task's own record: its index in recs
	metas  []int          // records with array data, by index in recs
}

// arrayIndex collects the records of array id, in table order.
func (m *Manager) arrayIndex(id uint32) *arrayTasks {
	a := &arrayTasks{byTask: map[uint32]int{}}
	m.sortOrder()
	for _, jid := range m.order {
		r := m.jobs[jid]
		if r.ArrayJobID != id {
			continue
		}
		if _, ok := a.byTask[r.ArrayTaskID]; !ok {
			a.byTask[r.ArrayTaskID] = len(a.recs)
		}
		if r.Array != nil {
			a.metas = append(a.metas, len(a.recs))
		}
		a.recs = append(a.recs, r)
	}
	return a
}

// task is the first record, in table order, that is task t's own or a
// meta record holding t. Meta records are looked at when asked, as
// their task sets change while a request is applied.
func (a *arrayTasks) task(t uint32) *Job {
	best, ok := a.byTask[t]
	if !ok {
		best = len(a.recs)
	}
	for _, i := range a.metas {
		if i >= best {
			break
		}
		if r := a.recs[i]; r.IsArrayMeta() && containsTask(r.Array.Pending, t) {
			best = i
			break
		}
	}
	if best == len(a.recs) {
		return nil
	}
	return a.recs[best]
}

func (m *Manager) suspendCode(j *Job, op uint16, cl *Cluster, now int64, actions *[]Action) int {
	return slurmerr.Code(m.suspendJob(j, op, cl, now, actions))
}

// suspendJob is _job_suspend, by scontrol (indefinitely: the job leaves
// gang scheduling): a het job's leader stands for every component
// (hetSuspend), any other record for itself.
func (m *Manager) suspendJob(j *Job, op uint16, cl *Cluster, now int64, actions *[]Action) error {
	if j != nil && j.HetJobID != 0 {
		return m.hetSuspend(j, op, cl, now, actions)
	}
	return m.suspendOne(j, op, cl, now, actions)
}

// suspendOne is _job_suspend_op for one record, by scontrol.
func (m *Manager) suspendOne(j *Job, op uint16, cl *Cluster, now int64, actions *[]Action) error {
	return m.suspendOp(j, op, true, cl, now, actions)
}

// suspendOp suspends or resumes a job. indf is a suspension by scontrol,
// which holds the job (priority 0) until scontrol resumes it; without it
// the gang logic suspends or resumes it (gang.go) and the job keeps its
// priority, by which it stays in gang scheduling.
func (m *Manager) suspendOp(j *Job, op uint16, indf bool, cl *Cluster, now int64, actions *[]Action) error {
	if !j.Batch && j.OtherPort != 0 && j.RespHost != "" {
		// salloc hears of it whatever the outcome, as srun_job_suspend.
		*actions = append(*actions, SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.OtherPort, UID: j.UserID,
			ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_REQUEST_SUSPEND,
			Msg: &msg.SuspendRequest{Op: op, JobID: j.ID}})
	}
	switch {
	case j.Pending():
		return serr(slurmerr.ESLURM_JOB_PENDING)
	case j.Finished():
		return serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	switch op {
	case msg.SuspendJob:
		if j.Base() == msg.JobSuspended && indf {
			// Suspended again: only the hold is renewed.
			j.Priority = 0
			m.touch(j, now)
			return nil
		}
		if j.Base() != msg.JobRunning {
			return serr(slurmerr.ESLURM_JOB_NOT_RUNNING)
		}
		*actions = append(*actions, m.suspendInt(j, op, indf))
		j.State = msg.JobSuspended
		if indf {
			j.Priority = 0
		}
		// PreSusTime is the run time so far: what the limit is charged.
		if j.SuspendTime != 0 {
			j.PreSusTime += now - j.SuspendTime
		} else {
			j.PreSusTime += now - j.StartTime
		}
	case msg.ResumeJob:
		if j.Base() != msg.JobSuspended {
			return serr(slurmerr.ESLURM_JOB_NOT_SUSPENDED)
		}
		if err := m.resumeTest(j, cl); err != nil {
			return err
		}
		*actions = append(*actions, m.suspendInt(j, op, indf))
		if j.Priority == 0 {
			j.Priority = m.prio.Assign(int32(j.Nice - niceOff))
		}
		j.State = msg.JobRunning
		resumeSteps(j, now)
		if l := m.timeLimit(j, cl); l != Infinite && l != NoVal && j.PreemptTime == 0 {
			j.EndTime = now + int64(l)*60 - j.PreSusTime
		}
	}
	// Any other op changes nothing but the times, as in slurmctld.
	j.SuspendTime = now
	m.touch(j, now)
	return nil
}

// resumeTest is _resume_job_nodes' and _job_resume_test's refusals: a node
// of the job is DOWN (SLURM_ERROR), or a job with specialized cores would
// share a node with another running one (ESLURM_NODES_BUSY).
func (m *Manager) resumeTest(j *Job, cl *Cluster) error {
	for _, i := range j.NodeIdx {
		if cl != nil && i >= 0 && i < len(cl.Nodes) && cl.Nodes[i].State&sched.NodeDownBase != 0 {
			return serr(slurmerr.SLURM_ERROR)
		}
	}
	if j.CoreSpec == NoVal16 || len(j.NodeIdx) == 0 {
		return nil
	}
	for _, o := range m.jobs {
		if o == j || o.CoreSpec == NoVal16 || o.Base() != msg.JobRunning {
			continue
		}
		for _, a := range o.NodeIdx {
			for _, b := range j.NodeIdx {
				if a == b {
					return serr(slurmerr.ESLURM_NODES_BUSY)
				}
			}
		}
	}
	return nil
}

// suspendInt is the REQUEST_SUSPEND_INT to every node of the job.
func (m *Manager) suspendInt(j *Job, op uint16, indf bool) NodeMessage {
	var flag uint8
	if indf {
		flag = 1
	}
	return NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...), MsgType: msgtype.REQUEST_SUSPEND_INT,
		Msg: &msg.SuspendInt{IndfSusp: flag, JobCoreSpec: j.CoreSpec, JobID: j.ID, Op: op}}
}

// arrayResults groups array task ids by the code their operation gave.
type arrayResults map[int][]uint32

func (a arrayResults) add(rc int, task uint32) { a[rc] = append(a[rc], task) }

// response lists the groups by their lowest task id, each named
// "<array id>_<task ranges>" (_resp_array_xlate).
func (a arrayResults) response(id uint32) *msg.JobArrayErrorsResponse {
	type group struct {
		rc    int
		tasks []uint32
	}
	var gs []group
	for rc, ts := range a {
		sort.Slice(ts, func(x, y int) bool { return ts[x] < ts[y] })
		gs = append(gs, group{rc, dedup(ts)})
	}
	sort.Slice(gs, func(x, y int) bool { return gs[x].tasks[0] < gs[y].tasks[0] })
	out := &msg.JobArrayErrorsResponse{}
	for _, g := range gs {
		out.Errors = append(out.Errors, msg.JobArrayError{ErrorCode: uint32(int32(g.rc)),
			JobArrayID: msg.Str(strconv.FormatUint(uint64(id), 10) + "_" + rangeString(g.tasks))})
	}
	return out
}

func dedup(ts []uint32) []uint32 {
	out := ts[:0]
	for i, t := range ts {
		if i == 0 || t != ts[i-1] {
			out = append(out, t)
		}
	}
	return out
}

// leadingInt is strtol's value of s's leading decimal digits (0 if none).
func leadingInt(s string) uint64 {
	n := len(s) - len(strings.TrimLeft(s, "0123456789"))
	v, err := strconv.ParseUint(s[:n], 10, 32)
	if err != nil {
		return 0
	}
	return v
}
