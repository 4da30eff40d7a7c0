package sched

import (
	"slices"
	"testing"
)

// TestGeometry checks job shapes on three nodes of 1 socket x 2 cores x
// 2 threads and 1000 MB (CR_Core_Memory), as real slurmctld 22.05 gave
// them in testsuite/interop's geometry corpus.
func TestGeometry(t *testing.T) {
	nodes := func() []Node {
		ns := mkNodes(3, 2, 1000)
		for i := range ns {
			ns[i].ThreadsPerCore, ns[i].CPUs = 2, 4
		}
		return ns
	}
	noMax := modify(func(j *Job) {
		if j.MinNodes == 0 {
			j.MinNodes = 1
		}
		j.MaxNodes = Infinite32
	})
	tests := []struct {
		name  string
		job   Job
		want  []int    // node indexes; nil = must not start
		cpus  []uint32 // CPUs per node
		mem   []uint64 // MB per node, optional
		nomem bool     // memory not consumable
	}{
		{"-n 8 without -N spreads over nodes", mkJob(1, tasks(8), noMax), []int{0, 1}, []uint32{4, 4}, nil, false},
		{"-n 12 takes every node", mkJob(1, tasks(12), noMax), []int{0, 1, 2}, []uint32{4, 4, 4}, nil, false},
		{"-n 1 takes a whole core", mkJob(1, tasks(1), noMax), []int{0}, []uint32{2}, nil, false},
		{"--ntasks-per-core=1 leaves threads idle", mkJob(1, tasks(4), noMax, modify(func(j *Job) { j.TasksPerCore = 1 })),
			[]int{0, 1}, []uint32{4, 4}, nil, false},
		{"--threads-per-core=1", mkJob(1, tasks(4), noMax, modify(func(j *Job) { j.ThreadsPerCore = 1 })),
			[]int{0, 1}, []uint32{4, 4}, nil, false},
		{"--mincpus=3 takes two cores", mkJob(1, noMax, modify(func(j *Job) { j.MinCPUs = 3 })),
			[]int{0}, []uint32{4}, nil, false},
		{"--mem-per-cpu counts allocated CPUs", mkJob(1, tasks(4), noMax, memCPU(300)),
			[]int{0, 1}, []uint32{2, 2}, []uint64{600, 600}, false},
		{"--mem-per-cpu not consumable", mkJob(1, tasks(6), noMax, memCPU(500)),
			[]int{0, 1}, []uint32{4, 2}, nil, true},
		{"-O -n 16 needs one CPU", mkJob(1, tasks(16), noMax, modify(func(j *Job) { j.Overcommit = true })),
			[]int{0}, []uint32{2}, nil, false},
		{"--spread-job", mkJob(1, tasks(3), noMax, modify(func(j *Job) { j.Spread = true })),
			[]int{0, 1, 2}, []uint32{2, 2, 2}, nil, false},
		{"-w n2 -n 5 grows after the required node", mkJob(1, tasks(5), noMax, reqNodes(1)),
			[]int{1, 2}, []uint32{4, 2}, nil, false},
		{"-N 1 -n 5 never fits", mkJob(1, tasks(5), nodesN(1, 1)), nil, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(nodes())
			s.Config.DefMemPerCPU = 0
			s.Config.MemoryConsumable = !tc.nomem
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
			var mem []uint64
			for _, na := range st.Alloc.Nodes {
				cpus, mem = append(cpus, na.CPUs), append(mem, na.MemoryMB)
			}
			if !slices.Equal(cpus, tc.cpus) {
				t.Errorf("CPUs per node %v, want %v", cpus, tc.cpus)
			}
			if tc.mem != nil && !slices.Equal(mem, tc.mem) {
				t.Errorf("memory per node %v, want %v", mem, tc.mem)
			}
		})
	}
}
