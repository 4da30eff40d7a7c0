package jobs

import (
	"cmp"
	"slices"
)

// arrayGate is job_array_start_test for one scheduling pass: an array's
// records (its meta record, tasks split off it and still pending, the
// meta record turned into its last task) start no task while as many
// tasks as its % throttle hold resources. The counts of running tasks
// are taken once, by one scan of the table at the first array record
// asked about, and follow the tasks the pass starts (started).
type arrayGate struct {
	m       *Manager
	running map[uint32]uint32 // array id -> tasks holding resources
}

func (m *Manager) newArrayGate() *arrayGate { return &arrayGate{m: m} }

// count fills the running counts: tasks of arrays that are RUNNING or
// SUSPENDED (slurmctld's tot_run_tasks, which a task leaves when it ends).
func (g *arrayGate) count() {
	g.running = map[uint32]uint32{}
	for _, j := range g.m.jobs {
		if j.ArrayJobID != 0 && j.ArrayTaskID != NoVal && j.Running() {
			g.running[j.ArrayJobID]++
		}
	}
}

// limit is the throttle of j's array, 0 for none (or no array).
func (g *arrayGate) limit(j *Job) uint32 {
	if j.ArrayJobID == 0 || (j.Array == nil && j.ArrayTaskID == NoVal) {
		return 0
	}
	return g.m.arrayThrottle(j)
}

// left is how many more tasks of j's array may start now; ok is false
// when j's array has no throttle.
func (g *arrayGate) left(j *Job) (n uint32, ok bool) {
	lim := g.limit(j)
	if lim == 0 {
		return 0, false
	}
	if g.running == nil {
		g.count()
	}
	if run := g.running[j.ArrayJobID]; run < lim {
		return lim - run, true
	}
	return 0, true
}

// throttled reports whether j's array is at its throttle.
func (g *arrayGate) throttled(j *Job) bool {
	n, ok := g.left(j)
	return ok && n == 0
}

// copies is how many tasks of pending array record j the pass may try to
// start (an array's meta record stands for up to maxTasksPerPass of its
// pending tasks, any other record for itself); 0 when its throttle is
// reached.
func (g *arrayGate) copies(j *Job) int {
	n := 1
	if j.IsArrayMeta() {
		n = min(len(j.Array.Pending), maxTasksPerPass)
	}
	if left, ok := g.left(j); ok && int(left) < n {
		n = int(left)
	}
	return n
}

// started counts a task of j's array that the pass started.
func (g *arrayGate) started(j *Job) {
	if g.running != nil && j.ArrayJobID != 0 {
		g.running[j.ArrayJobID]++
	}
}

// limitReasons gives every record of the pass still pending whose array
// reached its throttle the reason JobArrayTaskLimit, as slurmctld does
// in the pass that starts the last task the throttle allows (it comes
// back to the array's record for another task, and job_array_start_test
// refuses it), not at the next pass.
func (g *arrayGate) limitReasons(ids map[uint32]entry, now int64) {
	var recs []*Job
	for id, e := range ids {
		if id < synthBase && e.job.Pending() && g.throttled(e.job) {
			recs = append(recs, e.job)
		}
	}
	// In id order, so the journal gets the same records every time.
	slices.SortFunc(recs, func(a, b *Job) int { return cmp.Compare(a.ID, b.ID) })
	for _, j := range recs {
		g.m.setReason(j, ReasonArrayTaskLimit, now)
	}
}
