package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestDiagCounters: sdiag's running totals count as slurmctld does: an
// array at submit by its tasks, each task when it starts, a requeued job
// again when it restarts, an allocation request as a submit and a start;
// backfill's starts apart. StateCounts counts an array's pending tasks.
func TestDiagCounters(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	want := func(step string, w DiagCounters) {
		t.Helper()
		if got := m.DiagCounters(); got != w {
			t.Errorf("%s: %+v, want %+v", step, got, w)
		}
	}
	arr := batchDesc(alice)
	arr.ArrayInx = msg.Str("0-2%2")
	mustSubmit(t, m, cl, arr, alice, t0)
	want("array submitted", DiagCounters{Submitted: 3})
	if p, r := m.StateCounts(); p != 3 || r != 0 {
		t.Errorf("array pending %d running %d", p, r)
	}
	mustSchedule(t, m, cl, t0)
	want("two tasks started (throttle 2)", DiagCounters{Submitted: 3, Started: 2})
	if p, r := m.StateCounts(); p != 1 || r != 2 {
		t.Errorf("after start: pending %d running %d", p, r)
	}
	if ps := m.LastPass(); ps.MainQueue == 0 || ps.MainDepth == 0 {
		t.Errorf("pass stats %+v", ps)
	}

	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	want("batch job started", DiagCounters{Submitted: 4, Started: 3})
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, alice, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	m.EpilogComplete(id, m.Job(id).Nodes[0], root, t0+11)
	mustSchedule(t, m, cl, t0+11+credLifetime)
	if !m.Job(id).Running() {
		t.Fatal("requeued job not restarted")
	}
	want("requeued job restarted", DiagCounters{Submitted: 4, Started: 4})

	d := msg.NewJobDesc()
	d.MinNodes = 1
	if _, _, err := m.Allocate(d, alice, cl, t0+10+credLifetime); err != nil {
		t.Fatal(err)
	}
	want("allocation", DiagCounters{Submitted: 5, Started: 5})
}

// TestDiagCountersBackfill: a job the backfill pass starts counts as
// backfilled too.
func TestDiagCountersBackfill(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	first := batchDesc(alice)
	first.TimeLimit = 10
	mustSubmit(t, m, cl, first, alice, t0)
	mustSchedule(t, m, cl, t0)
	big := batchDesc(alice)
	big.MinNodes, big.TimeLimit = 4, 10
	mustSubmit(t, m, cl, big, alice, t0)
	fill := batchDesc(bob)
	fill.TimeLimit = 5
	mustSubmit(t, m, cl, fill, bob, t0)
	p := m.Snapshot(cl, t0+1)
	if _, err := m.ApplyPlan(p, sched.Backfill(p.Snapshot), t0+1); err != nil {
		t.Fatal(err)
	}
	if got := m.DiagCounters(); got != (DiagCounters{Submitted: 3, Started: 2, Backfilled: 1}) {
		t.Errorf("%+v", got)
	}
}
