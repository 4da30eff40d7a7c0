package sched

import (
	"slices"
	"testing"
)

func TestSplitGPUs(t *testing.T) {
	tests := []struct {
		name  string
		want  uint64
		avail []uint64
		pos   []int
		out   []uint64 // nil: the total is not reached
	}{
		{"even", 4, []uint64{2, 2}, []int{0, 1}, []uint64{2, 2}},
		{"first node first", 3, []uint64{2, 2}, []int{0, 1}, []uint64{2, 1}},
		{"one left for the node after", 2, []uint64{2, 2}, []int{0, 1}, []uint64{1, 1}},
		{"busy first node", 3, []uint64{1, 2}, []int{0, 1}, []uint64{1, 2}},
		{"chosen positions only", 3, []uint64{8, 2, 2}, []int{1, 2}, []uint64{2, 1}},
		{"three nodes", 5, []uint64{4, 4, 4}, []int{0, 1, 2}, []uint64{3, 1, 1}},
		{"too few", 5, []uint64{2, 2}, []int{0, 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := splitGPUs(tc.want, tc.avail, tc.pos); !slices.Equal(got, tc.out) {
				t.Fatalf("splitGPUs = %v, want %v", got, tc.out)
			}
		})
	}
}

// TestGPUsOverTheJob: --gpus=N spreads over as many nodes as the free
// GPUs need, in node order, as real slurmctld 22.05 does
// (TestSlurmctldGresSpread in testsuite/interop compares with it).
func TestGPUsOverTheJob(t *testing.T) {
	noN := nodesN(1, Infinite32)
	// busyGPU: a running job holds one core and one GPU of node 0.
	busyGPU := func(s *Snapshot) {
		a := running(9000, 5000, 1, 0)
		a.Nodes[0].Gres = []Gres{{Name: "gpu", Count: 1}}
		s.Running = append(s.Running, a)
	}
	tests := []struct {
		name  string
		busy  bool
		job   Job
		nodes []int // nil: must pend
		tasks []int
		gpus  []uint64
	}{
		{"4 over two nodes", false, mkJob(1, noN, gpus(4)), []int{0, 1}, []int{1, 1}, []uint64{2, 2}},
		{"3 unevenly", false, mkJob(1, noN, gpus(3)), []int{0, 1}, []int{1, 1}, []uint64{2, 1}},
		{"2 on one node", false, mkJob(1, noN, gpus(2)), []int{0}, []int{1}, []uint64{2}},
		{"3 on -N2", false, mkJob(1, nodesN(2, 2), tasks(2), gpus(3)), []int{0, 1}, []int{1, 1}, []uint64{2, 1}},
		{"2 on -N2", false, mkJob(1, nodesN(2, 2), tasks(2), gpus(2)), []int{0, 1}, []int{1, 1}, []uint64{1, 1}},
		{"3 on -N1-2", false, mkJob(1, nodesN(1, 2), gpus(3)), []int{0, 1}, []int{1, 1}, []uint64{2, 1}},
		{"tasks fill the first node", false, mkJob(1, noN, tasks(5), gpus(2)), []int{0, 1}, []int{4, 1}, []uint64{1, 1}},
		{"-c3", false, mkJob(1, noN, cpt(3), gpus(3)), []int{0, 1}, []int{1, 1}, []uint64{2, 1}},
		{"--gpus-per-task: tasks as the GPUs serve", false, mkJob(1, noN, tasks(4), gpus(4), modify(func(j *Job) { j.GPUsPerTask = 1 })),
			[]int{0, 1}, []int{2, 2}, []uint64{2, 2}},
		{"more than there are", false, mkJob(1, noN, gpus(7)), nil, nil, nil},
		{"-N1 cannot hold them", false, mkJob(1, nodesN(1, 1), gpus(4)), nil, nil, nil},
		{"busy GPU: what is free, in node order", true, mkJob(1, noN, gpus(3)), []int{0, 1}, []int{1, 1}, []uint64{1, 2}},
		{"busy GPU: the node that holds them alone", true, mkJob(1, noN, gpus(2)), []int{1}, []int{1}, []uint64{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(3, 4, 8000, withGPUs("", 2)))
			s.Nodes[2].Weight = 10 // a spare node the jobs never need
			if tc.busy {
				busyGPU(s)
			}
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			st := startOf(p, tc.job.JobID)
			if tc.nodes == nil {
				if st != nil {
					t.Fatalf("started on %v, want pending", nodesOf(st))
				}
				return
			}
			if st == nil {
				t.Fatalf("not started: %+v", p.Pending)
			}
			var tasks []int
			var got []uint64
			for _, na := range st.Alloc.Nodes {
				tasks = append(tasks, int(na.CPUs))
				var n uint64
				for _, g := range na.Gres {
					n += g.Count
				}
				got = append(got, n)
			}
			if nodes := nodesOf(st); !slices.Equal(nodes, tc.nodes) || !slices.Equal(got, tc.gpus) {
				t.Fatalf("nodes %v GPUs %v, want %v %v", nodes, got, tc.nodes, tc.gpus)
			}
			if tc.job.CPUsPerTask <= 1 && !slices.Equal(tasks, tc.tasks) {
				t.Fatalf("CPUs %v, want %v", tasks, tc.tasks)
			}
		})
	}
}

// TestGPUsOverTheJobNeverFits: a count no set of the partition's nodes
// holds fails the test-only pass (sbatch is refused).
func TestGPUsOverTheJobNeverFits(t *testing.T) {
	s := snap(mkNodes(2, 4, 8000, withGPUs("", 2)))
	for _, tc := range []struct {
		job  Job
		fits bool
	}{
		{mkJob(1, nodesN(1, Infinite32), gpus(4)), true},
		{mkJob(1, nodesN(1, Infinite32), gpus(5)), false},
		{mkJob(1, nodesN(1, 1), gpus(4)), false},
		{mkJob(1, nodesN(1, Infinite32), tpn(1), gpus(4)), false},
	} {
		j := tc.job
		if got := FitsEmpty(s, &j, "batch"); got != tc.fits {
			t.Errorf("job %+v: FitsEmpty = %v, want %v", j, got, tc.fits)
		}
	}
}

// TestGresJobCores: a job with GRES and a bounded task count on a node
// gets the cores gres_select_filter_sock_core leaves it (real slurmctld
// gives -c 3 cores 1-3 on four one-core sockets); without a bound, the
// lowest free cores.
func TestGresJobCores(t *testing.T) {
	perTask := func(n uint32) jobOpt { return func(j *Job) { j.GPUsPerTask = n } }
	fourSockets := func(nd *Node) { nd.Sockets, nd.CoresPerSocket = 4, 1 }
	twoSockets := func(nd *Node) { nd.Sockets, nd.CoresPerSocket = 2, 2 }
	tests := []struct {
		name  string
		shape nodeOpt
		job   Job
		cores []uint16
	}{
		{"-c3 on four sockets", fourSockets, mkJob(1, nodesN(1, Infinite32), cpt(3), gres("gpu", "", 1)), []uint16{1, 2, 3}},
		{"--gpus -c3 on four sockets", fourSockets, mkJob(1, nodesN(1, Infinite32), cpt(3), gpus(1)), []uint16{1, 2, 3}},
		{"-c3 on two sockets", twoSockets, mkJob(1, nodesN(1, Infinite32), cpt(3), gres("gpu", "", 1)), []uint16{0, 2, 3}},
		{"-n2 --gpus-per-task=1", fourSockets, mkJob(1, nodesN(1, Infinite32), tasks(2), gpus(2), perTask(1)), []uint16{2, 3}},
		{"-n1 --gpus-per-task=2", fourSockets, mkJob(1, nodesN(1, Infinite32), tasks(1), gpus(2), perTask(2)), []uint16{3}},
		{"no -c: lowest cores", fourSockets, mkJob(1, nodesN(1, Infinite32), gres("gpu", "", 1)), []uint16{0}},
		{"no GRES: lowest cores", fourSockets, mkJob(1, nodesN(1, Infinite32), cpt(3)), []uint16{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(1, 4, 8000, withGPUs("", 2), tc.shape))
			s.Pending = []Job{tc.job}
			st := mustStart(t, Schedule(s), 1)
			if got := st.Alloc.Nodes[0].Cores; !slices.Equal(got, tc.cores) {
				t.Fatalf("cores %v, want %v", got, tc.cores)
			}
		})
	}
}

// TestBackfillGPUsOverTheJob: a --gpus job that waits for a GPU a running
// job frees reserves its nodes from then on (a GPU release alone, with
// cores free all along, is when it can start), so a long job does not
// take the other node's GPU before it.
func TestBackfillGPUsOverTheJob(t *testing.T) {
	s := snap(mkNodes(2, 4, 8000, withGPUs("", 2)))
	s.Config.Backfill = true
	a := running(90, 5000, 1, 0)
	a.Nodes[0].Gres = []Gres{{Name: "gpu", Count: 1}}
	s.Running = []Allocation{a}
	noN := nodesN(1, Infinite32)
	s.Pending = []Job{mkJob(1, noN, gpus(4)), mkJob(2, noN, gpus(1), limit(600))}
	p := Schedule(s)
	if startOf(p, 2) != nil {
		t.Fatal("job 2 took a GPU job 1 waits for")
	}
	pd := pendingOf(p, 1)
	if res := s.Config.BF.Resolution; pd == nil || pd.StartTime < 5000 || pd.StartTime >= 5000+max(res, 1) {
		t.Fatalf("job 1: %+v, want an expected start at 5000 (the next bucket)", pd)
	}
	// A short job ends before and may start.
	s.Pending[1].TimeLimit = 30
	mustStart(t, Schedule(s), 2)
}

// TestGPUsWeightedTaskLayout: with n1 weighted above n2, a --gpus job
// takes n2 first, and n2 keeps the CPUs n1 is not needed for: real
// 22.05 runs --gpus=2 -n5 as 1 task on n1 and 4 on n2, and -n3
// --gpus-per-task=1 as 1 on n1 (one GPU) and 2 on n2 (two).
func TestGPUsWeightedTaskLayout(t *testing.T) {
	noN := nodesN(1, Infinite32)
	for _, tc := range []struct {
		name string
		job  Job
		cpus []uint32
		gpus []uint64
	}{
		{"--gpus=2 -n5", mkJob(1, noN, tasks(5), gpus(2)), []uint32{1, 4}, []uint64{1, 1}},
		{"-n3 --gpus-per-task=1", mkJob(1, noN, tasks(3), gpus(3), perTaskGPUsOpt(1)), []uint32{1, 2}, []uint64{1, 2}},
		{"--gpus=3: GPUs still split in node order", mkJob(1, noN, gpus(3)), []uint32{1, 1}, []uint64{2, 1}},
	} {
		s := snap(mkNodes(2, 4, 8000, withGPUs("", 2)))
		s.Nodes[0].Weight = 10
		s.Pending = []Job{tc.job}
		st := mustStart(t, Schedule(s), 1)
		var cpus []uint32
		var g []uint64
		for _, na := range st.Alloc.Nodes {
			cpus = append(cpus, na.CPUs)
			var n uint64
			for _, x := range na.Gres {
				n += x.Count
			}
			g = append(g, n)
		}
		if !slices.Equal(cpus, tc.cpus) || !slices.Equal(g, tc.gpus) {
			t.Errorf("%s: CPUs %v GPUs %v, want %v %v", tc.name, cpus, g, tc.cpus, tc.gpus)
		}
	}
}

// TestWeightedTaskLayout: without GPUs too, the lighter node taken first
// keeps the CPUs the heavier one is not needed for (-n5 on two 4-CPU
// nodes, n1 weighted above n2: 1 task on n1, 4 on n2; -n3 -c2: 2 CPUs on
// n1, 4 on n2).
func TestWeightedTaskLayout(t *testing.T) {
	noN := nodesN(1, Infinite32)
	for _, tc := range []struct {
		name string
		job  Job
		cpus []uint32
	}{
		{"-n5", mkJob(1, noN, tasks(5)), []uint32{1, 4}},
		{"-n3 -c2", mkJob(1, noN, tasks(3), cpt(2)), []uint32{2, 4}},
	} {
		s := snap(mkNodes(2, 4, 8000))
		s.Nodes[0].Weight = 10
		s.Pending = []Job{tc.job}
		st := mustStart(t, Schedule(s), 1)
		var cpus []uint32
		for _, na := range st.Alloc.Nodes {
			cpus = append(cpus, na.CPUs)
		}
		if !slices.Equal(cpus, tc.cpus) {
			t.Errorf("%s: CPUs %v, want %v", tc.name, cpus, tc.cpus)
		}
	}
}
