package jobs

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// A PrologSlurmctld that ends after the job's powered-down nodes came
// back ends the configuration: job_config_fini resets the start time of
// a POWER_UP_NODE job there too, as PowerUpReady does.
func TestPowerUpPrologLast(t *testing.T) {
	m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog"})
	cl := testCluster()
	for i := range cl.Nodes {
		cl.Nodes[i].State |= sched.NodePoweredDown
	}
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if want := msg.JobRunning | msg.JobConfiguring | msg.JobPowerUpNode; j.State != want {
		t.Fatalf("state %#x, want %#x", j.State, want)
	}
	for i := range cl.Nodes {
		cl.Nodes[i].State &^= sched.NodePoweredDown
	}
	// The prolog still runs: PowerUpReady leaves the job alone.
	if out, err := m.PowerUpReady(cl, t0+10); err != nil || len(out.Actions) != 0 {
		t.Fatalf("ready with the prolog running: %v %v", out.Actions, err)
	}
	out, err := m.PrologDone(id, 0, false, cl, t0+20)
	if err != nil || len(launches(out.Actions)) != 1 {
		t.Fatalf("prolog done: %v, %d launches", err, len(launches(out.Actions)))
	}
	if j.State != msg.JobRunning || j.StartTime != t0+20 {
		t.Errorf("state %#x start %d, want RUNNING from %d", j.State, j.StartTime, t0+20)
	}
}

// A job waiting for power up waits for every node (reboot_job_nodes sets
// wait_all_nodes), not only its batch host; srun's REQUEST_JOB_READY
// says its nodes are not ready meanwhile.
func TestPowerUpWaitsForAllNodes(t *testing.T) {
	m := hookManager(HookConfig{})
	cl := testCluster()
	d := batchDesc(alice)
	d.MinNodes, d.MaxNodes = 2, 2
	d.ReqNodes = msg.Str("n1,n2")
	cl.Nodes[1].State |= sched.NodePoweredDown
	id := mustSubmit(t, m, cl, d, alice, t0)
	if l := launches(mustSchedule(t, m, cl, t0)); len(l) != 0 {
		t.Fatalf("launched at start: %+v", l)
	}
	j := m.Job(id)
	if want := msg.JobRunning | msg.JobConfiguring | msg.JobPowerUpNode; j.State != want || j.BatchHost != "n1" {
		t.Fatalf("state %#x batch host %s, want %#x on n1", j.State, j.BatchHost, want)
	}
	if rc, _, err := m.JobReady(id, cl, t0); err != nil || rc&ReadyNodeState != 0 {
		t.Errorf("job ready %#x %v with n2 powered down", rc, err)
	}
	if out, _ := m.PowerUpReady(cl, t0+2); len(out.Actions) != 0 {
		t.Fatalf("ready with n2 powered down: %v", out.Actions)
	}
	cl.Nodes[1].State &^= sched.NodePoweredDown
	out, err := m.PowerUpReady(cl, t0+3)
	if l := launches(out.Actions); err != nil || len(l) != 1 || l[0].Node != "n1" {
		t.Fatalf("n2 up: %v %+v", err, out.Actions)
	}
	if j.State != msg.JobRunning || j.StartTime != t0+3 {
		t.Errorf("state %#x start %d, want RUNNING from %d", j.State, j.StartTime, t0+3)
	}
	if rc, _, _ := m.JobReady(id, cl, t0); rc&ReadyNodeState == 0 {
		t.Errorf("job ready %#x once its nodes are up", rc)
	}
}

// A job that ends with one of its nodes DOWN does not wait for that
// node's epilog complete (deallocate_nodes): the others only, and with
// none left it is no longer COMPLETING.
func TestEndedJobSkipsDownNodes(t *testing.T) {
	for _, down := range [][]int{{1}, {0, 1}} {
		t.Run(fmt.Sprint(down), func(t *testing.T) {
			m := hookManager(HookConfig{})
			cl := testCluster()
			d := batchDesc(alice)
			d.MinNodes, d.MaxNodes = 2, 2
			d.ReqNodes = msg.Str("n1,n2")
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			if !j.Running() {
				t.Fatalf("state %#x", j.State)
			}
			for _, i := range down {
				cl.Nodes[i].State |= sched.NodeDown | sched.NodeDownBase
			}
			out, err := killStr(m, cl, alice, fmt.Sprint(id), 9, t0+5)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"n1"}
			if len(down) == 2 {
				want = nil
			}
			if fmt.Sprint(j.Completing) != fmt.Sprint(want) || j.IsCompleting() != (want != nil) {
				t.Errorf("completing %v (state %#x), want %v", j.Completing, j.State, want)
			}
			// The kill still goes to every node, answered or not.
			var killed []string
			for _, a := range out.Actions {
				if nm, ok := a.(NodeMessage); ok {
					killed = append(killed, nm.Nodes...)
				}
			}
			if fmt.Sprint(killed) != "[n1 n2]" {
				t.Errorf("kill sent to %v", killed)
			}
		})
	}
}

// A job on CLOUD nodes carries their addresses (alias_list): "TBD" while
// one is powered down, the list once they are up (job_config_fini), in
// the batch launch and the allocation.
func TestCloudAliasList(t *testing.T) {
	m := hookManager(HookConfig{})
	cl := testCluster()
	cl.CloudAliases = []string{"", "n2:[10.0.0.2]:h2", "n3:[10.0.0.3]:h3", ""}
	d := batchDesc(alice)
	d.MinNodes, d.MaxNodes = 3, 3
	d.ReqNodes = msg.Str("n1,n2,n3")
	cl.Nodes[2].State |= sched.NodePoweredDown
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if j.AliasList != "TBD" || m.allocation(j).AliasList.Value != "TBD" {
		t.Fatalf("alias list %q while n3 is powered down, want TBD", j.AliasList)
	}
	cl.Nodes[2].State &^= sched.NodePoweredDown
	out, err := m.PowerUpReady(cl, t0+5)
	l := launches(out.Actions)
	if err != nil || len(l) != 1 {
		t.Fatalf("ready: %v %+v", err, out.Actions)
	}
	const want = "n2:[10.0.0.2]:h2,n3:[10.0.0.3]:h3"
	if j.AliasList != want || l[0].Msg.AliasList.Value != want {
		t.Errorf("alias list %q, launch %q, want %q", j.AliasList, l[0].Msg.AliasList.Value, want)
	}

	// No CLOUD node: no alias list.
	id2 := mustSubmit(t, m, testCluster(), batchDesc(alice), alice, t0+6)
	mustSchedule(t, m, testCluster(), t0+6)
	if a := m.Job(id2).AliasList; a != "" {
		t.Errorf("alias list %q without CLOUD nodes", a)
	}
}

// A node not usable but not DOWN either (UNKNOWN after a controller
// restart, INVALID_REG) is still expected to answer: deallocate_nodes
// skips IS_NODE_DOWN nodes only, so the job waits for its epilog.
func TestEndedJobWaitsForUnknownNode(t *testing.T) {
	m := hookManager(HookConfig{})
	cl := testCluster()
	d := batchDesc(alice)
	d.MinNodes, d.MaxNodes = 2, 2
	d.ReqNodes = msg.Str("n1,n2")
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	for i := 0; i < 2; i++ {
		cl.Nodes[i].State |= sched.NodeDown
	}
	if _, err := killStr(m, cl, alice, fmt.Sprint(id), 9, t0+5); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(j.Completing) != "[n1 n2]" || !j.IsCompleting() {
		t.Errorf("completing %v (state %#x), want [n1 n2]", j.Completing, j.State)
	}
}
