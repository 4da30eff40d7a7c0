package jobs

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// A job ended while it waits for its powered-down nodes is not left
// COMPLETING: deallocate_nodes expects no epilog complete from nodes that
// are powered down or powering up. A requeued one pends again at once.
func TestPowerUpEndedJobNotCompleting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func(m *Manager, cl *Cluster, id uint32) error
		pending bool
	}{
		{"cancel", func(m *Manager, cl *Cluster, id uint32) error {
			_, err := killStr(m, cl, alice, fmt.Sprint(id), 9, t0+2)
			return err
		}, false},
		{"requeue", func(m *Manager, cl *Cluster, id uint32) error {
			_, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, alice, cl, t0+2)
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := hookManager(HookConfig{})
			cl := testCluster()
			for i := range cl.Nodes {
				cl.Nodes[i].State |= sched.NodePoweredDown
			}
			id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			if j.State&msg.JobPowerUpNode == 0 {
				t.Fatalf("job state %#x, want POWER_UP_NODE", j.State)
			}
			if err := tc.end(m, cl, id); err != nil {
				t.Fatal(err)
			}
			if j.State&msg.JobCompleting != 0 || len(j.Completing) != 0 {
				t.Errorf("state %#x completing %v: waits for powered-down nodes", j.State, j.Completing)
			}
			if j.Pending() != tc.pending {
				t.Errorf("pending %v, want %v (state %#x)", j.Pending(), tc.pending, j.State)
			}
			if tc.pending && len(j.Nodes) != 0 {
				t.Errorf("requeued job keeps nodes %v", j.Nodes)
			}
		})
	}
}

// PowerUpReady runs every tick: with no job waiting for power up it only
// looks at the job table, without copying it.
func TestPowerUpReadyIdleNoAlloc(t *testing.T) {
	m := hookManager(HookConfig{})
	cl := testCluster()
	for range 20 {
		mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	}
	mustSchedule(t, m, cl, t0)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := m.PowerUpReady(cl, t0+1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("PowerUpReady with no job waiting allocates %v times per call", allocs)
	}
}
