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
// ends CANCELLED); the others are signalled in their own records. A task
// with neither answers "Invalid job id specified" while the rest go on;
// the highest error code is the answer.
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
			left := meta.Array.Pending[:0]
			for _, t := range meta.Array.Pending {
				if !containsTask(inMeta, t) {
					left = append(left, t)
				}
			}
			meta.Array.Pending = left
			if len(left) == 0 {
				meta.Array.Pending = nil
				meta.setBase(msg.JobCancelled)
				meta.StartTime, meta.EndTime = now, now
			}
			m.touch(meta, now)
		}
	}
	var actions []Action
	for _, t := range rest {
		var rec *Job
		for _, r := range m.Jobs() {
			if r.ArrayJobID == id && r.ArrayTaskID == t && !r.IsArrayMeta() {
				rec = r
				break
			}
		}
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
