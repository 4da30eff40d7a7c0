package jobs

import (
	"sort"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// ArrayErrors is the answer to an update of array tasks that failed for
// some of them: RESPONSE_JOB_ARRAY_ERRORS, one entry per error code with
// the tasks that got it ("<id>_<tasks>"), lowest task first.
type ArrayErrors struct {
	Entries []msg.JobArrayError
}

func (e *ArrayErrors) Error() string {
	var parts []string
	for _, x := range e.Entries {
		parts = append(parts, strOf(x.JobArrayID)+": "+slurmerr.Message(int(x.ErrorCode)))
	}
	return strings.Join(parts, "; ")
}

// Unwrap gives the first error code, for callers that want one.
func (e *ArrayErrors) Unwrap() error {
	for _, x := range e.Entries {
		if x.ErrorCode != 0 {
			return slurmerr.Error{Code: int(x.ErrorCode)}
		}
	}
	return nil
}

// taskResults collects the per-record results of an array update
// (_resp_array_add): task ids grouped by return code.
type taskResults struct {
	byRC map[int][]uint32
}

func (r *taskResults) add(tasks []uint32, rc int) {
	if r.byRC == nil {
		r.byRC = map[int][]uint32{}
	}
	r.byRC[rc] = append(r.byRC[rc], tasks...)
}

// err is nil when every record took the update, else the ArrayErrors
// (entries ordered by their lowest task, as _resp_array_xlate does).
func (r *taskResults) err(id uint32) error {
	failed := false
	for rc := range r.byRC {
		failed = failed || rc != 0
	}
	if !failed {
		return nil
	}
	type entry struct {
		rc    int
		tasks []uint32
	}
	var es []entry
	for rc, ts := range r.byRC {
		sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
		es = append(es, entry{rc, ts})
	}
	sort.Slice(es, func(a, b int) bool { return es[a].tasks[0] < es[b].tasks[0] })
	out := &ArrayErrors{}
	for _, e := range es {
		out.Entries = append(out.Entries, msg.JobArrayError{ErrorCode: uint32(e.rc),
			JobArrayID: msg.Str(strconv.FormatUint(uint64(id), 10) + "_" + rangeString(e.tasks))})
	}
	return out
}

// updateArrayTasks is update_job_str for "<id>_<tasks>": when the tasks
// cover every pending task of the meta record it is updated as a whole;
// otherwise the named pending tasks are split off into records of their
// own first. Each record named is then updated on its own.
func (m *Manager) updateArrayTasks(id uint32, tasks []uint32, d *msg.JobDesc, c Caller, cl *Cluster, now int64) (Outcome, error) {
	var res taskResults
	rest := tasks
	if meta := m.jobs[id]; meta != nil && meta.Pending() && meta.IsArrayMeta() {
		var overlap []uint32
		for _, t := range tasks {
			if containsTask(meta.Array.Pending, t) {
				overlap = append(overlap, t)
			}
		}
		switch {
		case len(overlap) == 0:
		case len(overlap) == len(meta.Array.Pending):
			pend := append([]uint32(nil), meta.Array.Pending...)
			res.add(pend, slurmerr.Code(m.updateOne(meta, d, c, cl, now)))
			m.touch(meta, now)
			rest = nil
			for _, t := range tasks {
				if !containsTask(pend, t) {
					rest = append(rest, t)
				}
			}
		default:
			for _, t := range overlap {
				if !m.splitTaskID(meta, t, now) {
					return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
				}
			}
		}
	}
	for _, t := range rest {
		rec := m.arrayTaskRecord(id, t)
		if rec == nil {
			res.add([]uint32{t}, slurmerr.ESLURM_INVALID_JOB_ID)
			continue
		}
		res.add([]uint32{t}, slurmerr.Code(m.updateOne(rec, d, c, cl, now)))
		m.touch(rec, now)
	}
	out, err := m.finish(nil)
	if err != nil {
		return out, err
	}
	return out, res.err(id)
}

// arrayTaskRecord is the record of its own that task t of array id has.
func (m *Manager) arrayTaskRecord(id, t uint32) *Job {
	for _, r := range m.Jobs() {
		if r.ArrayJobID == id && r.ArrayTaskID == t && !r.IsArrayMeta() {
			return r
		}
	}
	return nil
}

// splitTaskID takes pending task t off meta into a new record of its own
// (job_array_split), pending like the meta record; meta left with one
// pending task becomes that task's record (lastPending).
func (m *Manager) splitTaskID(meta *Job, task uint32, now int64) bool {
	id, ok := m.allocID()
	if !ok {
		return false
	}
	t := *meta
	t.ID = id
	t.ArrayTaskID = task
	t.Array, t.ArrayExit = nil, nil
	t.Steps = nil
	if meta.Dependency != nil {
		d := *meta.Dependency
		t.Dependency = &d
	}
	left := make([]uint32, 0, len(meta.Array.Pending))
	for _, p := range meta.Array.Pending {
		if p != task {
			left = append(left, p)
		}
	}
	meta.Array.Pending = left
	lastPending(meta)
	m.insert(&t)
	m.pending = append(m.pending, record{kind: recSubmit, job: &t})
	m.touch(meta, now)
	return true
}
