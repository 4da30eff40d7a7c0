package sched

import (
	"slices"
	"testing"
)

// TestSpecResources: specialized cores are never allocated and
// MemSpecLimit is kept off the memory jobs get (real 22.05 on 4-CPU
// 1000 MB nodes, testsuite/interop/slurmctld_corespec_test.go).
func TestSpecResources(t *testing.T) {
	nodes := mkNodes(2, 4, 1000)
	nodes[0].SpecCores, nodes[0].MemSpec = []uint16{3}, 200 // CoreSpecCount=1 MemSpecLimit=200
	nodes[1].SpecCores = []uint16{1, 2}                     // CPUSpecList=1,2
	for _, tc := range []struct {
		name  string
		job   Job
		cores [][]uint16 // per allocated node
		mem   []uint64
		none  bool // cannot start (nor ever run)
	}{
		{"exclusive on n1", mkJob(1, exclusive(), reqNodes(0), modify(func(j *Job) { j.MemAll = true })),
			[][]uint16{{0, 1, 2}}, []uint64{800}, false},
		{"exclusive on n2", mkJob(1, exclusive(), reqNodes(1), modify(func(j *Job) { j.MemAll = true })),
			[][]uint16{{0, 3}}, []uint64{1000}, false},
		{"required node fills first", mkJob(1, tasks(3), reqNodes(1), memNode(100)),
			[][]uint16{{0}, {0, 3}}, []uint64{100, 100}, false},
		{"memory over what n1 keeps", mkJob(1, reqNodes(0), memNode(900)), nil, nil, true},
		{"more tasks than effective cpus", mkJob(1, tasks(6), memNode(100)), nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(slices.Clone(nodes))
			s.Pending = []Job{tc.job}
			p := MainPass(s)
			if tc.none {
				mustPend(t, p, 1, ReasonBadConstraints)
				if FitsEmpty(s, &tc.job, "batch") {
					t.Error("FitsEmpty = true, want false")
				}
				return
			}
			st := mustStart(t, p, 1)
			if len(st.Alloc.Nodes) != len(tc.cores) {
				t.Fatalf("nodes %v, want %d", st.Alloc.Nodes, len(tc.cores))
			}
			for i, na := range st.Alloc.Nodes {
				if !slices.Equal(na.Cores, tc.cores[i]) || na.MemoryMB != tc.mem[i] {
					t.Errorf("node %d: cores %v mem %d, want %v %d", na.Node, na.Cores, na.MemoryMB, tc.cores[i], tc.mem[i])
				}
			}
		})
	}
}
