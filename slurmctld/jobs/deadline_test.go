package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

func TestDeadline(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	// A job with no time limit gets TimeMin 1 and, started, the minutes
	// left before its deadline as its limit.
	d := batchDesc(alice)
	d.Deadline = t0 + 3600 + 30
	free := mustSubmit(t, m, cl, d, alice, t0)
	if j := m.Job(free); j.TimeMin != 1 {
		t.Fatalf("TimeMin %d, want 1", j.TimeMin)
	}
	// One that needs all nodes for 2 minutes with its deadline 90 s away
	// waits behind it and is cancelled when the pass considers it.
	d = batchDesc(alice)
	d.MinNodes = 4
	d.TimeLimit = 2
	d.Deadline = t0 + 150
	late := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if j := m.Job(free); !j.Running() || j.TimeLimit != 60 {
		t.Fatalf("free job running %v limit %d, want running with 60", j.Running(), j.TimeLimit)
	}
	if j := m.Job(late); !j.Pending() {
		t.Fatalf("late job state %#x before its deadline passed", j.State)
	}
	mustSchedule(t, m, cl, t0+31)
	j := m.Job(late)
	if j.State != msg.JobDeadline || j.Reason != ReasonDeadline || j.ExitCode != 1 || j.EndTime != t0+31 {
		t.Fatalf("late job state %#x reason %d exit %d end %d", j.State, j.Reason, j.ExitCode, j.EndTime)
	}
}
