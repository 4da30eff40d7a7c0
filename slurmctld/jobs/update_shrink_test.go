package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// startBatch starts a batch job of alice on nodes n[1-nodes].
func startBatch(t *testing.T, m *Manager, cl *Cluster, nodes uint32) *Job {
	t.Helper()
	d := batchDesc(alice)
	d.MinNodes = nodes
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if !j.Running() || len(j.Nodes) != int(nodes) {
		t.Fatalf("job not started on %d nodes: state %#x nodes %v", nodes, j.State, j.Nodes)
	}
	return j
}

// _update_job's checks of NumNodes and ReqNodeList on a running job.
func TestShrinkRefused(t *testing.T) {
	tests := []struct {
		name       string
		numNodes   uint32 // NoVal: not given
		maxNodes   uint32
		reqNodes   string
		batchHost  string // "" keeps n1
		want       int
		wantChange bool
	}{
		{"NumNodes=0", 0, NoVal, "", "", slurmerr.ESLURM_INVALID_NODE_COUNT, false},
		{"grow", 3, NoVal, "", "", slurmerr.ESLURM_NOT_SUPPORTED, false},
		{"same count", 2, NoVal, "", "", 0, false},
		{"with a maximum", 1, 2, "", "", slurmerr.ESLURM_JOB_NOT_PENDING, false},
		{"unknown node", NoVal, NoVal, "n9", "", slurmerr.ESLURM_INVALID_NODE_NAME, false},
		{"node not in the job", NoVal, NoVal, "n1,n3", "", slurmerr.ESLURM_INVALID_NODE_NAME, false},
		{"without the batch host", NoVal, NoVal, "n2", "", slurmerr.ESLURM_INVALID_NODE_NAME, false},
		{"batch host n2 kept", NoVal, NoVal, "n2", "n2", 0, true},
		{"same nodes", NoVal, NoVal, "n[1-2]", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			j := startBatch(t, m, cl, 2)
			if tc.batchHost != "" {
				j.BatchHost = tc.batchHost
			}
			d := msg.NewJobDesc()
			d.JobID, d.MinNodes, d.MaxNodes = j.ID, tc.numNodes, tc.maxNodes
			if tc.reqNodes != "" {
				d.ReqNodes = msg.Str(tc.reqNodes)
			}
			out, err := m.Update(d, alice, cl, t0+10)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if changed := len(j.Nodes) != 2; changed != tc.wantChange || changed != (len(out.Actions) > 0) {
				t.Fatalf("nodes %v, actions %+v", j.Nodes, out.Actions)
			}
		})
	}
}

// scontrol update NumNodes=1 of a running 3-node allocation with a step on
// every node: REQUEST_ABORT_JOB for the job (RESIZING) to the two released
// nodes, the step's tasks there SIGKILLed with REQUEST_TERMINATE_TASKS and
// their ranks done; the nodes are free at once and the job's CPU count is
// that of the node it keeps (scontrol show job's NumCPUs on real slurmctld).
func TestShrinkRunningAllocation(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes = 3
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 3, NumTasks: 3, Host: msg.Str("login"), Port: 7000}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	j := m.Job(a.JobID)
	cpus := j.NodeCPUs[0]
	u := msg.NewJobDesc()
	u.JobID, u.MinNodes = a.JobID, 1
	out, err := m.Update(u, alice, cl, t0+2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(j.Nodes, []string{"n1"}) || len(j.NodeIdx) != 1 || len(j.NodeCPUs) != 1 || len(j.NodeMem) != 1 ||
		j.TotalCPUs != cpus || !j.Running() || j.Bitflags&jobResized == 0 {
		t.Fatalf("job after shrink: nodes %v idx %v cpus %v total %d state %#x flags %#x",
			j.Nodes, j.NodeIdx, j.NodeCPUs, j.TotalCPUs, j.State, j.Bitflags)
	}
	if len(out.Actions) != 3 {
		t.Fatalf("actions %+v", out.Actions)
	}
	abort := out.Actions[0].(NodeMessage)
	k, ok := abort.Msg.(*msg.KillJob)
	if abort.MsgType != msgtype.REQUEST_ABORT_JOB || !slices.Equal(abort.Nodes, []string{"n2", "n3"}) || !ok ||
		k.Nodes.Value != "n[2-3]" || k.JobState != msg.JobRunning|msg.JobResizing {
		t.Fatalf("abort %+v", abort)
	}
	for i, node := range []string{"n2", "n3"} {
		nm := out.Actions[1+i].(NodeMessage)
		st, ok := nm.Msg.(*msg.SignalTasks)
		if nm.MsgType != msgtype.REQUEST_TERMINATE_TASKS || !slices.Equal(nm.Nodes, []string{node}) || !ok ||
			st.Signal != sigKill || st.StepID.StepID != 0 {
			t.Fatalf("step kill %d: %+v", i, nm)
		}
	}
	if len(j.Steps) != 1 || !slices.Equal(j.Steps[0].Done, []bool{false, true, true}) || j.Steps[0].ExitRC != 9 {
		t.Fatalf("step %+v", j.Steps)
	}
	u2 := m.NodeUsage(len(cl.Nodes))
	if u2[0].CPUs == 0 || u2[1] != (Usage{}) || u2[2] != (Usage{}) {
		t.Fatalf("usage %+v", u2)
	}
	// The last rank reports: the step ends.
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: a.JobID, StepID: 0, StepHetComp: NoVal}}, alice, t0+3); err != nil {
		t.Fatal(err)
	}
	if len(j.Steps) != 0 {
		t.Fatalf("steps %+v", j.Steps)
	}
}

// NumNodes keeps the batch host wherever it is in the node list, then the
// job's first other nodes; the released nodes run the next job.
func TestShrinkBatchKeepsBatchHost(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	j := startBatch(t, m, cl, 4)
	j.BatchHost = "n3"
	u := msg.NewJobDesc()
	u.JobID, u.MinNodes = j.ID, 2
	if _, err := m.Update(u, alice, cl, t0+5); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(j.Nodes, []string{"n1", "n3"}) {
		t.Fatalf("nodes %v", j.Nodes)
	}
	d := batchDesc(bob)
	d.MinNodes = 2
	d.Shared = 0 // exclusive: needs whole idle nodes
	next := mustSubmit(t, m, cl, d, bob, t0+6)
	mustSchedule(t, m, cl, t0+7)
	if n := m.Job(next); !n.Running() || !slices.Equal(n.Nodes, []string{"n2", "n4"}) {
		t.Fatalf("next job: state %#x nodes %v", n.State, n.Nodes)
	}
}
