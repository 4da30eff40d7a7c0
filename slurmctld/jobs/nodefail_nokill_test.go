package jobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// noKillAlloc starts a 3-node allocation (salloc -k) with srun port 4001,
// a step on all its nodes from srun --no-kill (port 7001) and one on n1
// and n2 from a plain srun (port 7002).
func noKillAlloc(t *testing.T, m *Manager, cl *Cluster, kill uint16) *Job {
	t.Helper()
	d := msg.NewJobDesc()
	d.MinNodes, d.OtherPort, d.RespHost = 3, 4001, msg.Str("login")
	d.KillOnNodeFail = kill
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		nodes uint32
		port  uint16
		flags uint32
	}{{3, 7001, ssfNoKill | ssfOverlapForce}, {2, 7002, ssfOverlapForce}} {
		if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
			MinNodes: s.nodes, MaxNodes: s.nodes, NumTasks: s.nodes, Host: msg.Str("login"), Port: s.port, Flags: s.flags}, alice, cl, t0+1); err != nil {
			t.Fatal(err)
		}
	}
	return m.Job(a.JobID)
}

// A job that asked not to be killed (kill_on_node_fail 0) keeps running
// without its failed node (kill_running_job_by_node_name): each srun of
// a step on the node and the allocation's srun get SRUN_NODE_FAIL
// (srun_node_fail); the --no-kill step loses its tasks on the node only,
// the other step is killed on all its nodes (kill_step_on_node); the
// node leaves the job, whose CPU count is that of the nodes left.
func TestNodeDownNoKillKeepsJob(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	j := noKillAlloc(t, m, cl, 0)
	cpus := j.NodeCPUs[0] + j.NodeCPUs[2]
	out, err := m.NodeDown("n2", cl, t0+5)
	if err != nil {
		t.Fatal(err)
	}
	if j.Base() != msg.JobRunning || !slices.Equal(j.Nodes, []string{"n1", "n3"}) || j.TotalCPUs != cpus ||
		j.ResizeTime != t0+5 || j.Bitflags&jobResized == 0 || len(j.NodeIdx) != 2 || len(j.NodeMem) != 2 {
		t.Fatalf("job: state %#x nodes %v cpus %d (want %d) resize %d flags %#x", j.State, j.Nodes, j.TotalCPUs, cpus,
			j.ResizeTime, j.Bitflags)
	}
	type sent struct {
		port  uint16
		step  uint32
		nodes string
	}
	var srun []sent
	var kills []sent
	for _, a := range out.Actions {
		switch a := a.(type) {
		case SrunMessage:
			nf, ok := a.Msg.(*msg.SrunNodeFailMsg)
			if a.MsgType != msgtype.SRUN_NODE_FAIL || !ok || nf.NodeList.Value != "n2" {
				t.Fatalf("srun message %+v", a)
			}
			srun = append(srun, sent{a.Port, nf.StepID.StepID, nf.NodeList.Value})
		case NodeMessage:
			st, ok := a.Msg.(*msg.SignalTasks)
			if a.MsgType != msgtype.REQUEST_TERMINATE_TASKS || !ok || st.Signal != sigKill {
				t.Fatalf("node message %+v", a)
			}
			kills = append(kills, sent{0, st.StepID.StepID, strings.Join(a.Nodes, ",")})
		default:
			t.Fatalf("action %T %+v", a, a)
		}
	}
	if want := []sent{{7001, 0, "n2"}, {7002, 1, "n2"}, {4001, NoVal, "n2"}}; !slices.Equal(srun, want) {
		t.Fatalf("SRUN_NODE_FAIL %+v, want %+v", srun, want)
	}
	if want := []sent{{0, 0, "n2"}, {0, 1, "n1,n2"}}; !slices.Equal(kills, want) {
		t.Fatalf("step kills %+v, want %+v", kills, want)
	}
	if len(j.Steps) != 2 || !slices.Equal(j.Steps[0].Done, []bool{false, true, false}) || j.Steps[0].ExitRC != 9 ||
		!slices.Equal(j.Steps[1].Done, []bool{false, true}) {
		t.Fatalf("steps %+v %+v", j.Steps[0], j.Steps[1])
	}
	if u := m.NodeUsage(len(cl.Nodes)); u[1] != (Usage{}) || u[0].CPUs == 0 || u[2].CPUs == 0 {
		t.Fatalf("usage %+v", u)
	}
	// Another node failing is the same again; the last node is not
	// removed: the job ends NODE_FAIL.
	m.NodeDown("n3", cl, t0+6)
	if j.Base() != msg.JobRunning || !slices.Equal(j.Nodes, []string{"n1"}) {
		t.Fatalf("after n3: state %#x nodes %v", j.State, j.Nodes)
	}
	m.NodeDown("n1", cl, t0+7)
	if j.Base() != msg.JobNodeFail || j.Reason != ReasonNodeDown {
		t.Fatalf("after n1: state %#x reason %v", j.State, j.Reason)
	}
}

// Without --no-kill the job ends NODE_FAIL as before, and the sruns of its
// steps on the node are told too.
func TestNodeDownKillTellsStepSruns(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	j := noKillAlloc(t, m, cl, NoVal16)
	out, err := m.NodeDown("n3", cl, t0+5)
	if err != nil {
		t.Fatal(err)
	}
	if j.Base() != msg.JobNodeFail || len(j.Nodes) != 3 {
		t.Fatalf("state %#x nodes %v", j.State, j.Nodes)
	}
	var ports []uint16
	for _, a := range out.Actions {
		if s, ok := a.(SrunMessage); ok && s.MsgType == msgtype.SRUN_NODE_FAIL {
			ports = append(ports, s.Port)
		}
	}
	// The plain step is not on n3.
	if !slices.Equal(ports, []uint16{7001, 4001}) {
		t.Fatalf("SRUN_NODE_FAIL to ports %v", ports)
	}
}

// A step created after the job lost a node gets the nodes left; the
// steps still running keep what they hold on those nodes, at their new
// places in the job (their ranks were renumbered).
func TestNodeDownNoKillNewStep(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes, d.KillOnNodeFail = 3, 0
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(a.JobID)
	// One task a node, on every node: it holds one CPU of each.
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 3, MaxNodes: 3, NumTasks: 3, CPUCount: 3, Host: msg.Str("login"), Port: 7001, Flags: ssfNoKill}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	before := m.use(j, cl)
	m.NodeDown("n2", cl, t0+5)
	if r := j.Steps[0].Alloc.Ranks; !slices.Equal(r, []int{0, -1, 1}) {
		t.Fatalf("step ranks %v, want [0 -1 1]", r)
	}
	u := m.use(j, cl)
	if len(u.cpus) != 2 || u.cpus[0] != before.cpus[0] || u.cpus[1] != before.cpus[2] || !u.busy[0] || !u.busy[1] {
		t.Fatalf("use after n2 went: %+v (before %+v)", u, before)
	}
	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 2, Host: msg.Str("login"), Port: 7002, Flags: ssfOverlapForce}, alice, cl, t0+6)
	if err != nil {
		t.Fatal(err)
	}
	if nl := g.Resp.Layout.NodeList.Value; nl != "n[1,3]" && nl != "n1" && nl != "n3" {
		t.Fatalf("new step on %q", nl)
	}
}
