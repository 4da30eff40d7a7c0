package sched

import (
	"slices"
	"testing"
)

// boundNode is one node of 2 sockets x 4 cores with two GPUs, GPU 0
// bound to cores 0-3 (socket 0), GPU 1 to cores 4-7 (socket 1): the
// interop test's node (TestSlurmctldGresCoreBinding).
func boundNode(nd *Node) {
	nd.Sockets, nd.CoresPerSocket, nd.CPUs = 2, 4, 8
	nd.Gres = []Gres{{Name: "gpu", Count: 2}}
	nd.GresBind = []GresBind{{Name: "gpu", Count: 1, Cores: []uint16{0, 1, 2, 3}}, {Name: "gpu", Count: 1, Cores: []uint16{4, 5, 6, 7}}}
}

func enforce() jobOpt { return func(j *Job) { j.GresEnforceBind = true } }

// TestGresCoreBinding: the cores and GPU records a job asking for bound
// GPUs gets, alone on the node or beside a job holding cores (busy) or
// GPU 0 (gpu0: core 0 and GPU 0); every expectation is what real 22.05
// slurmctld gave in the interop test.
func TestGresCoreBinding(t *testing.T) {
	noN := nodesN(1, Infinite32)
	tests := []struct {
		name  string
		busy  []uint16
		gpu0  bool
		job   Job
		cores []uint16
		bind  []uint64
	}{
		{"gpu:1", nil, false, mkJob(1, noN, gres("gpu", "", 1)), []uint16{0}, []uint64{1, 0}},
		{"gpu:1 -n2", nil, false, mkJob(1, noN, tasks(2), gres("gpu", "", 1)), []uint16{0, 1}, []uint64{1, 0}},
		{"gpu:1 -c6: beyond the GPU's socket", nil, false, mkJob(1, noN, cpt(6), gres("gpu", "", 1)), []uint16{0, 1, 2, 3, 4, 5}, []uint64{1, 0}},
		{"gpu:1 -c4 enforce", nil, false, mkJob(1, noN, cpt(4), gres("gpu", "", 1), enforce()), []uint16{0, 1, 2, 3}, []uint64{1, 0}},
		{"gpu:2", nil, false, mkJob(1, noN, gres("gpu", "", 2)), []uint16{0}, []uint64{1, 1}},
		{"gpu:2 -n3: cyclic over both sockets", nil, false, mkJob(1, noN, tasks(3), gres("gpu", "", 2)), []uint16{0, 1, 4}, []uint64{1, 1}},
		{"--gpus=1 -n2", nil, false, mkJob(1, noN, tasks(2), gpus(1)), []uint16{0, 1}, []uint64{1, 0}},
		{"busy 0-1,4: gpu:1 on socket 1", []uint16{0, 1, 4}, false, mkJob(1, noN, gres("gpu", "", 1)), []uint16{5}, []uint64{0, 1}},
		{"busy 0-1,4: gpu:1 -n2", []uint16{0, 1, 4}, false, mkJob(1, noN, tasks(2), gres("gpu", "", 1)), []uint16{5, 6}, []uint64{0, 1}},
		{"busy 0-1,4: gpu:2", []uint16{0, 1, 4}, false, mkJob(1, noN, gres("gpu", "", 2)), []uint16{2}, []uint64{1, 1}},
		{"gpu 0 busy: gpu:1", nil, true, mkJob(1, noN, gres("gpu", "", 1)), []uint16{4}, []uint64{0, 1}},
		{"gpu 0 busy: gpu:1 -n4", nil, true, mkJob(1, noN, tasks(4), gres("gpu", "", 1)), []uint16{4, 5, 6, 7}, []uint64{0, 1}},
		{"gpu 0 busy: gpu:1 -n6", nil, true, mkJob(1, noN, tasks(6), gres("gpu", "", 1)), []uint16{1, 2, 3, 4, 5, 6}, []uint64{0, 1}},
		{"busy 0-1,4-5: gpu:2", []uint16{0, 1, 4, 5}, false, mkJob(1, noN, gres("gpu", "", 2)), []uint16{2}, []uint64{1, 1}},
		{"busy 0-1,4-5: gpu:1 -n2", []uint16{0, 1, 4, 5}, false, mkJob(1, noN, tasks(2), gres("gpu", "", 1)), []uint16{2, 3}, []uint64{1, 0}},
		{"busy 0-2,4-5: gpu:1 -n3", []uint16{0, 1, 2, 4, 5}, false, mkJob(1, noN, tasks(3), gres("gpu", "", 1)), []uint16{3, 6, 7}, []uint64{1, 0}},
		{"busy 0-2,4-5: gpu:2 -n2 enforce", []uint16{0, 1, 2, 4, 5}, false, mkJob(1, noN, tasks(2), gres("gpu", "", 2), enforce()), []uint16{3, 6}, []uint64{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(1, 8, 8000, boundNode))
			switch {
			case tc.gpu0:
				a := running(90, 5000, 1, 0)
				a.Nodes[0].Gres = []Gres{{Name: "gpu", Count: 1}}
				a.Nodes[0].GresBind = []uint64{1, 0}
				s.Running = []Allocation{a}
			case tc.busy != nil:
				a := running(90, 5000, 0, 0)
				a.Nodes[0].Cores, a.Nodes[0].CPUs = tc.busy, uint32(len(tc.busy))
				s.Running = []Allocation{a}
			}
			s.Pending = []Job{tc.job}
			st := mustStart(t, Schedule(s), 1)
			na := st.Alloc.Nodes[0]
			if !slices.Equal(na.Cores, tc.cores) || !slices.Equal(na.GresBind, tc.bind) {
				t.Fatalf("cores %v GPU records %v, want %v %v", na.Cores, na.GresBind, tc.cores, tc.bind)
			}
		})
	}
}

// TestGresEnforceBinding: with --gres-flags=enforce-binding a job needing
// more cores than its GPU's socket has could never run (real refuses it
// at submission), and with GPU 0's socket full a job needing both GPUs
// still runs on a core of socket 0 left free; without enforcing, both run.
func TestGresEnforceBinding(t *testing.T) {
	noN := nodesN(1, Infinite32)
	s := snap(mkNodes(1, 8, 8000, boundNode))
	for _, tc := range []struct {
		job  Job
		fits bool
	}{
		{mkJob(1, noN, cpt(6), gres("gpu", "", 1), enforce()), false},
		{mkJob(1, noN, tasks(6), gres("gpu", "", 1), enforce()), false},
		{mkJob(1, noN, cpt(4), gres("gpu", "", 1), enforce()), true},
		{mkJob(1, noN, tasks(8), gres("gpu", "", 2), enforce()), true},
		{mkJob(1, noN, cpt(6), gres("gpu", "", 1)), true},
	} {
		if got := FitsEmpty(s, &tc.job, "batch"); got != tc.fits {
			t.Errorf("job %+v: FitsEmpty = %v, want %v", tc.job, got, tc.fits)
		}
	}
	// Cores 0-3 busy: GPU 0 is free but its socket has no core.
	s = snap(mkNodes(1, 8, 8000, boundNode))
	a := running(90, 5000, 4, 0)
	s.Running = []Allocation{a}
	s.Pending = []Job{mkJob(1, noN, gres("gpu", "", 2), enforce())}
	mustPend(t, Schedule(s), 1, ReasonResources)
	s.Pending = []Job{mkJob(1, noN, gres("gpu", "", 2))}
	st := mustStart(t, Schedule(s), 1)
	if na := st.Alloc.Nodes[0]; !slices.Equal(na.Cores, []uint16{4}) || !slices.Equal(na.GresBind, []uint64{1, 1}) {
		t.Fatalf("cores %v GPU records %v, want [4] [1 1]", na.Cores, na.GresBind)
	}
}

// TestCyclicCores: cons_tres's default core distribution over sockets.
func TestCyclicCores(t *testing.T) {
	all := func(n int) []bool {
		b := make([]bool, n)
		for i := range b {
			b[i] = true
		}
		return b
	}
	holes := all(8)
	holes[0], holes[1], holes[4] = false, false, false
	for _, tc := range []struct {
		name                  string
		avail                 []bool
		socks, per, want, cpt int
		vpus                  int
		out                   []uint16
	}{
		{"-n3", all(8), 2, 4, 3, 1, 1, []uint16{0, 1, 4}},
		{"-n5", all(8), 2, 4, 5, 1, 1, []uint16{0, 1, 2, 4, 5}},
		{"-c3: a task's CPUs on one socket", all(8), 2, 4, 3, 3, 1, []uint16{0, 1, 2}},
		{"-c2 -n2", all(8), 2, 4, 4, 2, 1, []uint16{0, 1, 2, 3}},
		{"-c6: no socket holds a task", all(8), 2, 4, 6, 6, 1, []uint16{0, 1, 2, 4, 5, 6}},
		{"busy 0-1,4", holes, 2, 4, 2, 1, 1, []uint16{2, 5}},
		{"one socket", all(4), 1, 4, 2, 1, 1, []uint16{0, 1}},
		{"too few", holes, 2, 4, 7, 1, 1, []uint16{2, 3, 5, 6, 7}},
	} {
		if got := cyclicCores(tc.avail, tc.socks, tc.per, tc.want, tc.cpt, tc.vpus); !slices.Equal(got, tc.out) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.out)
		}
	}
}

// TestCoreDistribution: a -n3 job on an idle node of 2 sockets x 4
// cores gets 0-1,4 under CR_Core (real 22.05 does), the lowest cores
// with -m block:block, under CR_Core_Default_Dist_Block or CR_CPU; -m
// *:cyclic stays cyclic under CR_Core_Default_Dist_Block.
func TestCoreDistribution(t *testing.T) {
	twoByFour := func(nd *Node) { nd.Sockets, nd.CoresPerSocket, nd.CPUs = 2, 4, 8 }
	for _, tc := range []struct {
		name  string
		cfg   func(*Config)
		block bool
		cores []uint16
		cyc   bool
	}{
		{"CR_Core", func(*Config) {}, false, []uint16{0, 1, 4}, false},
		{"CR_Core, -m block:block", func(*Config) {}, true, []uint16{0, 1, 2}, false},
		{"CR_Core_Default_Dist_Block", func(c *Config) { c.CoreDistBlock = true }, false, []uint16{0, 1, 2}, false},
		{"CR_CPU", func(c *Config) { c.CPUsConsumable = true }, false, []uint16{0, 1, 2}, false},
		{"CR_Core_Default_Dist_Block, -m block:cyclic", func(c *Config) { c.CoreDistBlock = true }, false, []uint16{0, 1, 4}, true},
	} {
		s := snap(mkNodes(1, 8, 8000, twoByFour))
		tc.cfg(&s.Config)
		s.Pending = []Job{mkJob(1, nodesN(1, Infinite32), tasks(3), modify(func(j *Job) { j.CoreBlock, j.CoreCyclic = tc.block, tc.cyc }))}
		if got := mustStart(t, Schedule(s), 1).Alloc.Nodes[0].Cores; !slices.Equal(got, tc.cores) {
			t.Errorf("%s: cores %v, want %v", tc.name, got, tc.cores)
		}
	}
}

// --gpus=2 with enforce-binding: the per-node device limit is the job's
// count (gres_per_job), so both sockets' devices and cores count and the
// job fits, as real runs it.
func TestGPUsEnforceBindingBothSockets(t *testing.T) {
	noN := nodesN(1, Infinite32)
	s := snap(mkNodes(1, 8, 8000, boundNode))
	j := mkJob(1, noN, tasks(6), gpus(2), enforce())
	if !FitsEmpty(s, &j, "batch") {
		t.Fatalf("FitsEmpty --gpus=2 -n6 enforce-binding: false")
	}
	s.Pending = []Job{j}
	p := Schedule(s)
	st := startOf(p, 1)
	if st == nil {
		t.Fatalf("pending %+v", pendingOf(p, 1))
	}
	if na := st.Alloc.Nodes[0]; len(na.Cores) != 6 || !slices.Equal(na.GresBind, []uint64{1, 1}) {
		t.Errorf("cores %v bind %v, want 6 cores and one GPU of each socket", na.Cores, na.GresBind)
	}
}

// Backfill refuses what the main pass refuses: a --gpus-per-node=1 -n4
// enforce-binding job may only use the cores of the socket of a free
// GPU, and neither socket has 4 free cores there (gres_select_filter's
// enforce-binding failure), so it waits for the running job.
func TestBackfillEnforceBindingFewCores(t *testing.T) {
	noN := nodesN(1, Infinite32)
	for _, bf := range []bool{false, true} {
		for _, busy := range [][]uint16{{0, 1, 4}, {0}} {
			s := snap(mkNodes(1, 8, 8000, boundNode))
			s.Config.Backfill = bf
			a := running(90, 5000, 0, 0)
			a.Nodes[0].Cores, a.Nodes[0].CPUs = busy, uint32(len(busy))
			s.Running = []Allocation{a}
			if len(busy) == 1 {
				// GPU 1 and two cores of socket 1 taken: socket 0
				// keeps 3 free cores and GPU 0.
				b := running(91, 5000, 0, 0)
				b.Nodes[0].Cores, b.Nodes[0].CPUs = []uint16{4, 5}, 2
				b.Nodes[0].Gres = []Gres{{Name: "gpu", Count: 1}}
				b.Nodes[0].GresBind = []uint64{0, 1}
				s.Running = append(s.Running, b)
			}
			s.Pending = []Job{mkJob(1, noN, tasks(4), gres("gpu", "", 1), enforce())}
			p := Schedule(s)
			if st := startOf(p, 1); st != nil {
				na := st.Alloc.Nodes[0]
				t.Errorf("bf=%v busy %v: started with cores %v cpus %d bind %v", bf, busy, na.Cores, na.CPUs, na.GresBind)
			} else if pd := pendingOf(p, 1); pd == nil || pd.Reason != ReasonResources {
				t.Errorf("bf=%v busy %v: pending %+v, want Resources", bf, busy, pd)
			}
		}
	}
}

// allocate itself refuses, changing nothing, a placement whose
// enforce-binding cores fall short of the tasks (a guard under any
// placement path that counted more cores than the job may use).
func TestAllocateEnforceBindingShort(t *testing.T) {
	s := snap(mkNodes(1, 8, 8000, boundNode))
	a := running(90, 5000, 0, 0)
	a.Nodes[0].Cores, a.Nodes[0].CPUs = []uint16{0, 1, 4}, 3
	s.Running = []Allocation{a}
	c := newCluster(s)
	j := mkJob(1, nodesN(1, Infinite32), tasks(4), gres("gpu", "", 1), enforce())
	r, why := c.newRequest(&j, 0)
	if why != ReasonNone {
		t.Fatalf("request: %v", why)
	}
	before := c.freeCore[0]
	if got, ok := c.allocate(r, placement{nodes: []int{0}, tasks: []int{4}}); ok {
		t.Fatalf("allocated %+v", got.Nodes)
	}
	if c.freeCore[0] != before {
		t.Errorf("free cores %d after a refused allocation, want %d", c.freeCore[0], before)
	}
	j.GresEnforceBind = false
	r, _ = c.newRequest(&j, 0)
	if got, ok := c.allocate(r, placement{nodes: []int{0}, tasks: []int{4}}); !ok || len(got.Nodes[0].Cores) != 4 {
		t.Errorf("without enforce-binding: ok %v, %+v", ok, got.Nodes)
	}
}

// A --gpus job over two nodes: cons_tres's _select_cores trims every
// node that is not required before any node is added, so the second
// node sees all 3 GPUs of the job still wanted (both sockets usable),
// not the 1 left after the first node.
func TestMultiNodeGPUsCoresSeeJobCount(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000, boundNode))
	s.Pending = []Job{mkJob(1, nodesN(2, 2), tasks(2), gpus(3))}
	st := mustStart(t, Schedule(s), 1)
	want := [][]uint16{{4}, {4}}
	for i, na := range st.Alloc.Nodes {
		if !slices.Equal(na.Cores, want[i]) {
			t.Errorf("node %d cores %v bind %v, want cores %v", na.Node, na.Cores, na.GresBind, want[i])
		}
	}
}
