package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// pickCluster: n1..n4 of 2 cores (1 thread), CR_Core.
func pickCluster() *Cluster {
	cl := &Cluster{Config: sched.DefaultConfig()}
	cl.Config.MemoryConsumable, cl.Config.CPUsConsumable = false, false
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 1,
			CPUs: 2, RealMemory: 1000, Weight: 1})
	}
	cl.Partitions = []sched.Partition{{Name: "debug", Default: true, Nodes: []int{0, 1, 2, 3}, MaxTime: sched.Infinite32,
		DefaultTime: sched.NoValue32, MaxNodes: sched.Infinite32, MaxCPUsPerNode: sched.Infinite32}}
	return cl
}

// pickJob starts a job on n[1-3] holding all 6 of their CPUs.
func pickJob(t *testing.T) (*Manager, *Cluster, uint32) {
	t.Helper()
	m := newTestManager(nil)
	cl := pickCluster()
	d := batchDesc(alloc)
	d.NumTasks, d.MinNodes = 6, 3
	id := mustSubmit(t, m, cl, d, alloc, 100)
	mustSchedule(t, m, cl, 101)
	j := m.Job(id)
	if !j.Running() || !slices.Equal(j.Nodes, []string{"n1", "n2", "n3"}) || !slices.Equal(j.NodeCPUs, []uint32{2, 2, 2}) {
		t.Fatalf("job state %#x nodes %v CPUs %v", j.State, j.Nodes, j.NodeCPUs)
	}
	return m, cl, id
}

// preq is a step request as real srun makes it in pickJob's job: node
// counts (srun sends the maximum equal to the minimum unless -N gives a
// range), tasks, CPUs (tasks, as without -c), the node list srun
// computed (-x rewrites it), -x's list, -r (-1: none), SSF_* flags.
type preq struct {
	min, max, tasks uint32
	nodelist, exc   string
	rel             int
	flags           uint32
	overcommit      bool
}

func (r preq) msg(id uint32) *msg.StepCreateRequest {
	q := &msg.StepCreateRequest{UserID: alloc.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: r.min, MaxNodes: r.max, NumTasks: r.tasks, CPUCount: r.tasks, Flags: r.flags, TaskDist: distUnknown,
		Relative: NoVal16, Host: msg.Str("login"), Port: 7000, SrunPID: 4242, PnMinMemory: NoVal64, ThreadsPerCore: NoVal16}
	if r.max == 0 {
		q.MaxNodes = r.min
	}
	if r.rel >= 0 {
		q.Relative = uint16(r.rel)
	}
	if r.nodelist != "" {
		q.NodeList = msg.Str(r.nodelist)
	}
	if r.exc != "" {
		q.ExcNodes = msg.Str(r.exc)
	}
	if r.overcommit {
		q.Flags |= ssfOvercommit
		q.CPUCount = r.min
	}
	return q
}

// TestStepNodePick checks the nodes a step gets, or the error, against
// what real slurmctld 22.05 answered for the same srun in the same job
// (testsuite/interop TestSlurmctldStepNodes).
func TestStepNodePick(t *testing.T) {
	const none = -1
	whole := ssfWhole
	tests := []struct {
		name   string
		before []preq // steps running
		req    preq
		code   int
		nodes  []string
		layout []int // tasks per node, when checked
	}{
		// -w
		{name: "-w one node, 3 wanted: the rest picked", req: preq{min: 3, tasks: 3, nodelist: "n2", rel: none, flags: whole},
			nodes: []string{"n1", "n2", "n3"}},
		{name: "-N2 -w n3", req: preq{min: 2, tasks: 2, nodelist: "n3", rel: none, flags: whole},
			nodes: []string{"n1", "n3"}},
		{name: "-N1 -w n2", req: preq{min: 1, tasks: 1, nodelist: "n2", rel: none, flags: whole},
			nodes: []string{"n2"}},
		{name: "-w a node of no job", req: preq{min: 3, tasks: 3, nodelist: "n4", rel: none, flags: whole},
			code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "-w an unknown node", req: preq{min: 3, tasks: 3, nodelist: "n9", rel: none, flags: whole},
			code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "-w more nodes than the maximum", req: preq{min: 1, tasks: 1, nodelist: "n[2-3]", rel: none, flags: whole},
			code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "-w more nodes than the minimum: a pool", req: preq{min: 1, max: 2, tasks: 2, nodelist: "n[2-3]", rel: none, flags: whole},
			nodes: []string{"n2", "n3"}},
		{name: "-w node with too few CPUs", req: preq{min: 1, tasks: 5, nodelist: "n2", rel: none, flags: whole},
			code: slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS},
		// -x (srun sends the nodes left as -w)
		{name: "-N1 -x n1", req: preq{min: 1, tasks: 1, nodelist: "n2", exc: "n1", rel: none, flags: whole},
			nodes: []string{"n2"}},
		{name: "-x an unknown node", req: preq{min: 3, tasks: 3, nodelist: "n[1-3]", exc: "n9", rel: none, flags: whole},
			code: slurmerr.ESLURM_INVALID_NODE_NAME},
		{name: "-x a node of no job", req: preq{min: 3, tasks: 3, nodelist: "n[1-3]", exc: "n4", rel: none, flags: whole},
			nodes: []string{"n1", "n2", "n3"}},
		{name: "-w and -x the same node", req: preq{min: 1, tasks: 1, nodelist: "n2", exc: "n2", rel: none, flags: whole},
			code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "-x leaves too few nodes", req: preq{min: 3, tasks: 3, exc: "n1", rel: none, flags: whole},
			code: slurmerr.ESLURM_NODES_BUSY},
		// -r
		{name: "-r 1 -N1", req: preq{min: 1, tasks: 1, rel: 1, flags: whole}, nodes: []string{"n2"}},
		{name: "-r 2 -N1", req: preq{min: 1, tasks: 1, rel: 2, flags: whole}, nodes: []string{"n3"}},
		{name: "-r 1 -N2", req: preq{min: 2, tasks: 2, rel: 1, flags: whole}, nodes: []string{"n2", "n3"}},
		{name: "-r past the job's nodes", req: preq{min: 1, tasks: 1, rel: 4, flags: whole},
			code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "-r leaves too few nodes", req: preq{min: 2, tasks: 2, rel: 2, flags: whole},
			code: slurmerr.ESLURM_NODES_BUSY},
		// -N and -n
		{name: "-N1-2 -n3", req: preq{min: 1, max: 2, tasks: 3, rel: none, flags: whole},
			nodes: []string{"n1", "n2"}},
		{name: "-n7", req: preq{min: 3, tasks: 7, rel: none, flags: whole},
			code: slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS},
		{name: "-N1 -n3", req: preq{min: 1, tasks: 3, rel: none, flags: whole},
			code: slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS},
		{name: "-N1 -n3 -O", req: preq{min: 1, tasks: 3, rel: none, flags: whole, overcommit: true},
			nodes: []string{"n1"}},
		{name: "min over max", req: preq{min: 3, max: 2, tasks: 3, rel: none, flags: whole},
			code: slurmerr.ESLURM_INVALID_NODE_COUNT},
		// Beside a step holding n1 whole.
		{name: "n1 held: -N1 goes to n2", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 1, tasks: 1, rel: none, flags: whole}, nodes: []string{"n2"}},
		{name: "n1 held: -r 0 -N1 skips it", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 1, tasks: 1, rel: 0, flags: whole}, nodes: []string{"n2"}},
		{name: "n1 held: -N3 waits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 3, tasks: 3, rel: none, flags: whole}, code: slurmerr.ESLURM_NODES_BUSY},
		{name: "n1 held: -n5 waits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 3, tasks: 5, rel: none}, code: slurmerr.ESLURM_NODES_BUSY},
		{name: "n1 held: -w n1 waits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 2, tasks: 2, nodelist: "n[1,3]", exc: "n2", rel: none, flags: whole}, code: slurmerr.ESLURM_NODES_BUSY},
		{name: "n1 held: --overlap shares it", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none, flags: whole}},
			req: preq{min: 3, tasks: 3, rel: none, flags: whole | ssfOverlapForce}, nodes: []string{"n1", "n2", "n3"}},
		// Beside a step holding one CPU of n1.
		{name: "one CPU of n1 held: its other CPU", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 1, tasks: 1, nodelist: "n1", rel: none}, nodes: []string{"n1"}},
		{name: "one CPU of n1 held: -N1 goes to an idle node", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 1, tasks: 1, rel: none}, nodes: []string{"n2"}},
		{name: "one CPU of n1 held: -w n1 -n2 adds a node", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 1, max: 3, tasks: 2, nodelist: "n1", rel: none}, nodes: []string{"n1", "n2"}},
		{name: "one CPU of n1 held: -n6 waits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 3, tasks: 6, rel: none}, code: slurmerr.ESLURM_NODES_BUSY},
		{name: "one CPU of n1 held: -n5 fits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 3, tasks: 5, rel: none}, nodes: []string{"n1", "n2", "n3"}, layout: []int{1, 2, 2}},
		{name: "one CPU of n1 held: whole n1 waits", before: []preq{{min: 1, tasks: 1, nodelist: "n1", rel: none}},
			req: preq{min: 3, tasks: 3, nodelist: "n1", rel: none, flags: whole}, code: slurmerr.ESLURM_NODES_BUSY},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, id := pickJob(t)
			for i, b := range tc.before {
				if _, _, err := m.CreateStep(b.msg(id), alloc, cl, 102); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			g, _, err := m.CreateStep(tc.req.msg(id), alloc, cl, 103)
			if code(err) != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
			if tc.code != 0 {
				return
			}
			j := m.Job(id)
			if st := j.Steps[len(j.Steps)-1]; !slices.Equal(st.Nodes, tc.nodes) {
				t.Errorf("nodes %v, want %v", st.Nodes, tc.nodes)
			}
			var layout []int
			for _, tids := range g.Resp.Layout.TIDs {
				layout = append(layout, len(tids))
			}
			if tc.layout != nil && !slices.Equal(layout, tc.layout) {
				t.Errorf("tasks per node %v, want %v", layout, tc.layout)
			}
		})
	}
}

// TestPickNodesCPUs: _pick_step_nodes_cpus takes nodes with their even
// share of CPUs first, then smaller ones largest first, or none.
func TestPickNodesCPUs(t *testing.T) {
	all := []bool{true, true, true, true}
	tests := []struct {
		name      string
		set       []bool
		cnt, cpus int
		usable    []uint32
		want      []int // nil: cannot
	}{
		{"CPUs no concern: the first nodes", all, 2, 2, []uint32{1, 1, 1, 1}, []int{0, 1}},
		{"even share", all, 2, 4, []uint32{1, 2, 2, 2}, []int{1, 2}},
		{"one large, one small", all, 2, 5, []uint32{1, 4, 1, 1}, []int{0, 1}},
		{"too few CPUs", all, 2, 6, []uint32{1, 4, 1, 1}, nil},
		{"enough nodes first, CPUs short", all, 1, 3, []uint32{2, 2, 2, 2}, nil},
		{"fewer nodes than asked", []bool{true, false, false, false}, 2, 2, []uint32{2, 2, 2, 2}, nil},
		{"largest smaller nodes first", all, 3, 8, []uint32{3, 1, 2, 3}, []int{0, 2, 3}},
	}
	for _, tc := range tests {
		got := pickNodesCPUs(tc.set, tc.cnt, tc.cpus, tc.usable)
		var ranks []int
		if got != nil {
			ranks = ranksOf(got)
		}
		if (got == nil) != (tc.want == nil) || !slices.Equal(ranks, tc.want) {
			t.Errorf("%s: got %v (nil %v), want %v", tc.name, ranks, got == nil, tc.want)
		}
	}
}
