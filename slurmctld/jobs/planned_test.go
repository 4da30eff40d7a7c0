package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestNotePlanned: only a backfill pass replaces the planned nodes; one
// with nothing to schedule empties them.
func TestNotePlanned(t *testing.T) {
	m := &Manager{}
	steps := []struct {
		backfill bool
		plan     *sched.Plan
		want     []int
	}{
		{true, &sched.Plan{Planned: []int{2, 3}}, []int{2, 3}},
		{false, &sched.Plan{}, []int{2, 3}},
		{true, &sched.Plan{Planned: []int{3}}, []int{3}},
		{true, nil, nil},
	}
	for i, s := range steps {
		m.notePlanned(s.backfill, s.plan)
		if got := m.PlannedNodes(); !slices.Equal(got, s.want) {
			t.Errorf("step %d: planned %v, want %v", i, got, s.want)
		}
	}
}

// TestNoteSchedNodes: a backfill pass sets every pending job's
// sched_nodes to its planned nodes or clears them; a main pass and a
// job that is no longer pending are left alone.
func TestNoteSchedNodes(t *testing.T) {
	cl := &Cluster{Nodes: []sched.Node{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}}}
	pend := func(id uint32) *Job {
		j := &Job{ID: id}
		j.setBase(msg.JobPending)
		return j
	}
	a, b, done := pend(1), pend(2), pend(3)
	done.setBase(msg.JobCancelled)
	done.schedNodes = "n1"
	m := &Manager{jobs: map[uint32]*Job{1: a, 2: b, 3: done}}
	ids := map[uint32]entry{1: {a}, 2: {b}}
	steps := []struct {
		plan  *sched.Plan
		wantA string
		wantB string
	}{
		{&sched.Plan{Backfill: true, Pending: []sched.Pending{{JobID: 1, SchedNodes: []int{0, 1}}, {JobID: 2}}}, "n[1-2]", ""},
		{&sched.Plan{Pending: []sched.Pending{{JobID: 1}, {JobID: 2, SchedNodes: []int{2}}}}, "n[1-2]", ""},
		{&sched.Plan{Backfill: true, Pending: []sched.Pending{{JobID: 2, SchedNodes: []int{2}}}}, "", "n3"},
	}
	for i, s := range steps {
		m.noteSchedNodes(cl, s.plan, ids, 100)
		if a.schedNodes != s.wantA || b.schedNodes != s.wantB {
			t.Errorf("step %d: %q %q, want %q %q", i, a.schedNodes, b.schedNodes, s.wantA, s.wantB)
		}
		if done.schedNodes != "n1" {
			t.Errorf("step %d: a cancelled job's sched_nodes changed to %q", i, done.schedNodes)
		}
	}
}

// TestSkippedReason: a job bf_licenses' main pass did not reach keeps its
// reason; one without keeps none when its licenses are not free, else it
// waits with Priority.
func TestSkippedReason(t *testing.T) {
	blocked := &Job{ID: 1}
	m := &Manager{licBlocked: []*Job{blocked}}
	for _, tc := range []struct {
		name   string
		j      *Job
		p      sched.Pending
		reason sched.Reason
	}{
		{"not skipped", &Job{ID: 2, Reason: ReasonResources}, sched.Pending{Reason: sched.ReasonPriority}, sched.ReasonPriority},
		{"keeps its reason", &Job{ID: 3, Reason: ReasonResources}, sched.Pending{Reason: sched.ReasonPriority, Skipped: true}, sched.ReasonResources},
		{"none, licenses busy", blocked, sched.Pending{Reason: sched.ReasonPriority, Skipped: true}, sched.ReasonNone},
		{"none, licenses free", &Job{ID: 4}, sched.Pending{Reason: sched.ReasonPriority, Skipped: true}, sched.ReasonPriority},
	} {
		if got := m.skippedReason(tc.j, tc.p).Reason; got != tc.reason {
			t.Errorf("%s: reason %v, want %v", tc.name, got, tc.reason)
		}
	}
}
