package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// arrayTaskSpec splits "123_4", "123_[1-3,5]" or "123_1-2" into the array
// id and its task ids; ok is false for anything else ("123", "123_*").
func arrayTaskSpec(sjob string) (id uint32, tasks []uint32, ok bool, err error) {
	js, ts, found := strings.Cut(sjob, "_")
	if !found || ts == "*" {
		return 0, nil, false, nil
	}
	v, perr := strconv.ParseUint(js, 10, 32)
	if perr != nil || v == 0 {
		return 0, nil, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	l, _, good := parseArray(strings.TrimSuffix(strings.TrimPrefix(ts, "["), "]"), ^uint32(0))
	if !good || len(l) == 0 {
		return 0, nil, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return uint32(v), l, true, nil
}

// killArrayTasks signals the named tasks of an array (job_str_signal with
// a task expression): the pending ones leave the meta record's pending
// set, without a record of their own (a meta record left without tasks
// ends CANCELLED); the others are signalled in their own records, or in
// the meta record cancelled with them in its range (which answers
// ESLURM_ALREADY_DONE). A task with no record answers "Invalid job id
// specified" while the rest go on; the highest error code is the answer.
func (m *Manager) killArrayTasks(id uint32, tasks []uint32, req *msg.JobStepKillRequest, c Caller,
	cl *Cluster, now int64) (Outcome, error) {
	var any *Job
	if j := m.jobs[id]; j != nil && j.Array != nil {
		any = j
	} else {
		for _, r := range m.Jobs() {
			if r.ArrayJobID == id && r.ArrayTaskID != NoVal {
				any = r
				break
			}
		}
	}
	if any == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(c.UID, any) {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	rc := 0
	rest := tasks
	if meta := m.jobs[id]; meta != nil && meta.Pending() && meta.IsArrayMeta() {
		rest = nil
		var inMeta []uint32
		for _, t := range tasks {
			if containsTask(meta.Array.Pending, t) {
				inMeta = append(inMeta, t)
			} else {
				rest = append(rest, t)
			}
		}
		switch {
		case len(inMeta) == 0:
		case req.Signal != sigKill:
			rc = slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE
		default:
			m.dropPendingTasks(meta, inMeta, now)
		}
	}
	var actions []Action
	idx := m.arrayIndex(id)
	for _, t := range rest {
		// find_job_array_rec: the task's own record, or a meta record
		// that ended with the task still in its range.
		rec := idx.task(t)
		if rec == nil {
			rc = max(rc, slurmerr.ESLURM_INVALID_JOB_ID)
			continue
		}
		if err := m.signalJob(target{rec, NoVal}, req.Signal, req.Flags, cl, now, &actions); err != nil {
			rc = max(rc, slurmerr.Code(err))
		}
	}
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	if rc != 0 {
		return out, serr(rc)
	}
	return out, nil
}

// dropPendingTasks takes tasks off a pending meta record's task set
// (job_str_signal's bit_and_not with SIGKILL): they get no record of
// their own. A meta record left without tasks ends CANCELLED with an
// empty task range, and ends as any cancelled job does
// (job_completion_logger: the array's exit tally, END mail, jobcomp
// record); with tasks left, only the tally counts the dropped ones.
func (m *Manager) dropPendingTasks(meta *Job, tasks []uint32, now int64) {
	left := meta.Array.Pending[:0]
	for _, t := range meta.Array.Pending {
		if !containsTask(tasks, t) {
			left = append(left, t)
		}
	}
	meta.Array.Pending = left
	m.touch(meta, now)
	if len(left) != 0 {
		// _job_array_comp counts the dropped tasks once, with the
		// status of the pending meta record (9).
		m.arrayComp(meta, false, now)
		return
	}
	meta.Array.Pending = nil
	meta.setBase(msg.JobCancelled)
	meta.StartTime, meta.EndTime = now, now
	m.ended(meta, false, false, now)
}

// wholeJobSpec parses the id strings job_str_signal takes for a whole job
// or array: "123" and "123_*".
func wholeJobSpec(sjob string) (uint32, error) {
	v, err := strconv.ParseUint(strings.TrimSuffix(sjob, "_*"), 10, 32)
	if err != nil || v == 0 {
		return 0, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return uint32(v), nil
}

// killRecord is job_signal_id: the one record with that id, whatever it
// is (a pending array's meta record stands for its pending tasks only).
func (m *Manager) killRecord(id uint32, req *msg.JobStepKillRequest, c Caller, cl *Cluster,
	now int64) (Outcome, error) {
	j := m.jobs[id]
	if j == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(c.UID, j) {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	var actions []Action
	sigErr := m.signalJob(target{j, NoVal}, req.Signal, req.Flags, cl, now, &actions)
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	return out, sigErr
}

// killWhole is job_str_signal for "123" or "123_*": a job that is no
// array is signalled alone; for an array, its meta record first (a
// pending one is cancelled in place, keeping its task ids), so no task
// starts only to be killed, then every task split off it. The answer is
// the highest error code, ESLURM_ALREADY_DONE when every record had
// ended.
func (m *Manager) killWhole(id uint32, req *msg.JobStepKillRequest, c Caller, cl *Cluster,
	now int64) (Outcome, error) {
	j := m.jobs[id]
	if j != nil && !m.mayAct(c.UID, j) {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	if j != nil && j.Array == nil && j.ArrayTaskID == NoVal {
		return m.killRecord(id, req, c, cl, now)
	}
	var actions []Action
	rc, signaled, done := 0, 0, 0
	account := func(err error) {
		signaled++
		switch code := slurmerr.Code(err); code {
		case 0:
		case slurmerr.ESLURM_ALREADY_DONE:
			done++
		default:
			rc = max(rc, code)
		}
	}
	var meta *Job
	if j != nil && j.Array != nil {
		meta = j
		account(m.signalJob(target{meta, NoVal}, req.Signal, req.Flags, cl, now, &actions))
	}
	// Slurm looks the tasks up by array id only: an id that is a split-off
	// task's own finds nothing ("Invalid job id specified").
	for _, r := range m.Jobs() {
		if r == meta || r.ArrayJobID != id {
			continue
		}
		// Real slurmctld checks the meta record's owner only, and
		// nobody's when it is gone: every task has the same owner.
		if !m.mayAct(c.UID, r) {
			account(serr(slurmerr.ESLURM_ACCESS_DENIED))
			continue
		}
		account(m.signalJob(target{r, NoVal}, req.Signal, req.Flags, cl, now, &actions))
	}
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	switch {
	case signaled == 0:
		return out, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	case rc == 0 && done == signaled:
		return out, serr(slurmerr.ESLURM_ALREADY_DONE)
	case rc != 0:
		return out, serr(rc)
	}
	return out, nil
}

// anyTask reports whether one of tasks is in ids.
func anyTask(ids, tasks []uint32) bool {
	for _, t := range tasks {
		if containsTask(ids, t) {
			return true
		}
	}
	return false
}
