package sched

import (
	"slices"
	"testing"
)

// TestGeometryCPUs checks the CPU counts of jobs on nodes of 1 socket x 2
// cores x 2 threads under CR_CPU (a job gets the threads its tasks use,
// its cores are taken whole) and CR_Core, and tasks of several CPUs
// counted in CPUs (-n 4 -c 3 on three 4-CPU nodes), as real slurmctld
// 22.05 gave them in testsuite/interop's geometry corpus.
func TestGeometryCPUs(t *testing.T) {
	noMax := modify(func(j *Job) {
		if j.MinNodes == 0 {
			j.MinNodes = 1
		}
		j.MaxNodes = Infinite32
	})
	cpt := func(n uint16) jobOpt { return modify(func(j *Job) { j.CPUsPerTask = n }) }
	tests := []struct {
		name  string
		job   Job
		crCPU bool     // CR_CPU, else CR_Core
		mem   bool     // memory consumable
		want  []int    // node indexes; nil = must not start
		cpus  []uint32 // CPUs per node
		cores []int    // cores per node
		memMB []uint64 // MB per node, optional
	}{
		{name: "CR_CPU -n 1 gets one thread of a core", job: mkJob(1, tasks(1), noMax), crCPU: true,
			want: []int{0}, cpus: []uint32{1}, cores: []int{1}},
		{name: "CR_CPU -n 3 gets three threads of two cores", job: mkJob(1, tasks(3), noMax), crCPU: true,
			want: []int{0}, cpus: []uint32{3}, cores: []int{2}},
		{name: "CR_CPU -n 5 over two nodes", job: mkJob(1, tasks(5), noMax), crCPU: true,
			want: []int{0, 1}, cpus: []uint32{4, 1}, cores: []int{2, 1}},
		{name: "CR_CPU --mincpus=3", job: mkJob(1, noMax, modify(func(j *Job) { j.MinCPUs = 3 })), crCPU: true,
			want: []int{0}, cpus: []uint32{3}, cores: []int{2}},
		{name: "CR_CPU --ntasks-per-core=1", job: mkJob(1, tasks(4), noMax, modify(func(j *Job) { j.TasksPerCore = 1 })),
			crCPU: true, want: []int{0, 1}, cpus: []uint32{2, 2}, cores: []int{2, 2}},
		{name: "CR_CPU -O -n 16", job: mkJob(1, tasks(16), noMax, modify(func(j *Job) { j.Overcommit = true })),
			crCPU: true, want: []int{0}, cpus: []uint32{1}, cores: []int{1}},
		{name: "CR_CPU --exclusive gets every thread", job: mkJob(1, tasks(1), noMax, modify(func(j *Job) { j.Share = ShareExclusive })),
			crCPU: true, want: []int{0}, cpus: []uint32{4}, cores: []int{2}},
		{name: "CR_CPU -c 3", job: mkJob(1, tasks(1), noMax, cpt(3)), crCPU: true,
			want: []int{0}, cpus: []uint32{3}, cores: []int{2}},
		{name: "CR_CPU -n 4 -c 3 puts the fourth task on the first node", job: mkJob(1, tasks(4), noMax, cpt(3)), crCPU: true,
			want: []int{0, 1, 2}, cpus: []uint32{4, 3, 3}, cores: []int{2, 2, 2}},
		{name: "CR_Core -n 4 -c 3 runs on three nodes", job: mkJob(1, tasks(4), noMax, cpt(3)),
			want: []int{0, 1, 2}, cpus: []uint32{4, 4, 4}, cores: []int{2, 2, 2}},
		{name: "CR_Core -n 6 -c 2", job: mkJob(1, tasks(6), noMax, cpt(2)),
			want: []int{0, 1, 2}, cpus: []uint32{4, 4, 4}, cores: []int{2, 2, 2}},
		{name: "CR_CPU -n 2 -c 3 keeps a task's CPUs for the second node", job: mkJob(1, tasks(2), noMax, cpt(3)), crCPU: true,
			want: []int{0, 1}, cpus: []uint32{3, 3}, cores: []int{2, 2}},
		{name: "CR_Core -c 5 never fits", job: mkJob(1, tasks(1), noMax, cpt(5))},
		// can_job_run_on_node takes memory off one CPU at a time under
		// CR_CPU (a core at a time under CR_Core: 2+2 CPUs, TestGeometry).
		{name: "CR_CPU_Memory --mem-per-cpu=300", job: mkJob(1, tasks(4), noMax, memCPU(300)), crCPU: true, mem: true,
			want: []int{0, 1}, cpus: []uint32{3, 1}, cores: []int{2, 1}, memMB: []uint64{900, 300}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := mkNodes(3, 2, 1000)
			for i := range ns {
				ns[i].ThreadsPerCore, ns[i].CPUs = 2, 4
			}
			s := snap(ns)
			s.Config.DefMemPerCPU = 0
			s.Config.MemoryConsumable = tc.mem
			s.Config.CPUsConsumable = tc.crCPU
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			st := startOf(p, tc.job.JobID)
			if tc.want == nil {
				if st != nil {
					t.Fatalf("started on %v, want pending", nodesOf(st))
				}
				return
			}
			if st == nil {
				t.Fatalf("not started: %+v", p.Pending)
			}
			if got := nodesOf(st); !slices.Equal(got, tc.want) {
				t.Fatalf("nodes %v, want %v", got, tc.want)
			}
			var cpus []uint32
			var cores []int
			var mem []uint64
			for _, na := range st.Alloc.Nodes {
				cpus, cores, mem = append(cpus, na.CPUs), append(cores, len(na.Cores)), append(mem, na.MemoryMB)
			}
			if !slices.Equal(cpus, tc.cpus) {
				t.Errorf("CPUs per node %v, want %v", cpus, tc.cpus)
			}
			if !slices.Equal(cores, tc.cores) {
				t.Errorf("cores per node %v, want %v", cores, tc.cores)
			}
			if tc.memMB != nil && !slices.Equal(mem, tc.memMB) {
				t.Errorf("memory per node %v, want %v", mem, tc.memMB)
			}
		})
	}
}

// TestCPUsShareNoCore checks that under CR_CPU a core one job has a thread
// of is not free for another (cons_tres keeps one bit a core): four -n 3
// jobs on three 4-CPU nodes start three.
func TestCPUsShareNoCore(t *testing.T) {
	ns := mkNodes(3, 2, 1000)
	for i := range ns {
		ns[i].ThreadsPerCore, ns[i].CPUs = 2, 4
	}
	s := snap(ns)
	s.Config.MemoryConsumable = false
	s.Config.CPUsConsumable = true
	for id := uint32(1); id <= 4; id++ {
		s.Pending = append(s.Pending, mkJob(id, tasks(3)))
	}
	p := Schedule(s)
	if len(p.Starts) != 3 {
		t.Fatalf("%d jobs started, want 3", len(p.Starts))
	}
	for _, st := range p.Starts {
		if na := st.Alloc.Nodes; len(na) != 1 || na[0].CPUs != 3 || len(na[0].Cores) != 2 {
			t.Errorf("job %d: %+v, want 3 CPUs on 2 cores of one node", st.JobID, na)
		}
	}
}
