package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// A job CONFIGURING only because its nodes power up is prolog-ready
// (job_node_ready clears READY_PROLOG_STATE only while PrologSlurmctld
// runs); with a PrologSlurmctld running it is not.
func TestJobReadyPrologBit(t *testing.T) {
	for _, prolog := range []string{"", "/etc/prolog"} {
		m := hookManager(HookConfig{PrologSlurmctld: prolog})
		cl := testCluster()
		for i := range cl.Nodes {
			cl.Nodes[i].State |= sched.NodePoweredDown
		}
		id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
		mustSchedule(t, m, cl, t0)
		if m.Job(id).State&msg.JobConfiguring == 0 {
			t.Fatalf("state %#x, want CONFIGURING", m.Job(id).State)
		}
		rc, _, err := m.JobReady(id, cl, t0)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rc&ReadyPrologState != 0, prolog == ""; got != want {
			t.Errorf("PrologSlurmctld %q: ready %#x, prolog bit %v, want %v", prolog, rc, got, want)
		}
	}
}

// The first step of a job whose nodes power up waits with
// ESLURM_NODES_BUSY (not ESLURM_PROLOG_RUNNING: no PrologSlurmctld
// runs); once they are up it ends the job's configuration itself
// (job_config_fini from _pick_step_nodes), before the tick does.
func TestFirstStepWaitsForPowerUp(t *testing.T) {
	m := hookManager(HookConfig{})
	cl := testCluster()
	cl.Nodes[0].State |= sched.NodePoweredDown
	d := msg.NewJobDesc()
	d.MinNodes, d.AllocRespPort, d.OtherPort = 1, 4000, 4001
	d.ReqNodes = msg.Str("n1")
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(a.JobID)
	if want := msg.JobRunning | msg.JobConfiguring | msg.JobPowerUpNode; j.State != want {
		t.Fatalf("state %#x, want %#x", j.State, want)
	}
	req := &msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 1, Host: msg.Str("login"), Port: 7000}
	if _, _, err := m.CreateStep(req, alice, cl, t0+1); code(err) != slurmerr.ESLURM_NODES_BUSY {
		t.Fatalf("step with n1 powered down: %v, want ESLURM_NODES_BUSY", err)
	}
	cl.Nodes[0].State &^= sched.NodePoweredDown
	if _, _, err := m.CreateStep(req, alice, cl, t0+5); err != nil {
		t.Fatalf("step with n1 up: %v", err)
	}
	if j.State != msg.JobRunning || j.StartTime != t0+5 {
		t.Errorf("state %#x start %d, want RUNNING from %d", j.State, j.StartTime, t0+5)
	}
}

// A "TBD" alias list is filled in by job_node_ready once the job is
// ready, and by job_alloc_info.
func TestAliasRefreshedWhenReady(t *testing.T) {
	for _, via := range []string{"ready", "alloc info"} {
		m := hookManager(HookConfig{})
		cl := testCluster()
		cl.CloudAliases = make([]string, len(cl.Nodes))
		cl.CloudAliases[0] = "n1:[10.0.0.1]:h1"
		cl.Nodes[0].State |= sched.NodePoweredDown
		d := batchDesc(alice)
		d.ReqNodes = msg.Str("n1")
		id := mustSubmit(t, m, cl, d, alice, t0)
		mustSchedule(t, m, cl, t0)
		j := m.Job(id)
		if j.AliasList != "TBD" {
			t.Fatalf("alias list %q, want TBD", j.AliasList)
		}
		// Up, and prolog-free, before the tick ends the configuration.
		cl.Nodes[0].State &^= sched.NodePoweredDown
		if via == "ready" {
			if _, _, err := m.JobReady(id, cl, t0+1); err != nil {
				t.Fatal(err)
			}
		} else if _, err := m.RefreshAlias(id, cl, t0+1); err != nil {
			t.Fatal(err)
		}
		if j.AliasList != "n1:[10.0.0.1]:h1" {
			t.Errorf("%s: alias list %q", via, j.AliasList)
		}
	}
}
