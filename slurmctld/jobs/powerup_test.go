package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestPowerUpWaits: a batch job started on powered-down nodes is
// CONFIGURING (POWER_UP_NODE), launched only once they are up, its start
// time then reset; with a PrologSlurmctld it waits for both.
func TestPowerUpWaits(t *testing.T) {
	for _, prolog := range []bool{false, true} {
		h := HookConfig{}
		if prolog {
			h.PrologSlurmctld = "/etc/prolog"
		}
		m := hookManager(h)
		cl := testCluster()
		for i := range cl.Nodes {
			cl.Nodes[i].State |= sched.NodePoweredDown
		}
		id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
		if acts := mustSchedule(t, m, cl, t0); len(launches(acts)) != 0 {
			t.Fatal("launched before the nodes are up")
		}
		j := m.Job(id)
		if want := msg.JobRunning | msg.JobConfiguring | msg.JobPowerUpNode; j.State != want {
			t.Fatalf("prolog %v: state %#x, want %#x", prolog, j.State, want)
		}
		if prolog {
			out, err := m.PrologDone(id, 0, false, cl, t0+1)
			if err != nil || len(launches(out.Actions)) != 0 || j.State&msg.JobConfiguring == 0 {
				t.Fatalf("prolog done: %v, %d launches, state %#x", err, len(launches(out.Actions)), j.State)
			}
		}
		// Not ready while its nodes are powered down.
		if out, err := m.PowerUpReady(cl, t0+5); err != nil || len(out.Actions) != 0 {
			t.Fatalf("ready while powered down: %v %v", out.Actions, err)
		}
		for i := range cl.Nodes {
			cl.Nodes[i].State &^= sched.NodePoweredDown
		}
		out, err := m.PowerUpReady(cl, t0+30)
		if err != nil || len(launches(out.Actions)) != 1 {
			t.Fatalf("prolog %v: once up: %v, %d launches", prolog, err, len(launches(out.Actions)))
		}
		if j.State != msg.JobRunning || j.StartTime != t0+30 {
			t.Errorf("state %#x start %d, want RUNNING from %d", j.State, j.StartTime, t0+30)
		}
	}
}
