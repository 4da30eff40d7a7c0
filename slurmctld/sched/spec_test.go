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

// TestSpecJobCores: the cores a whole-node --core-spec/--thread-spec job
// gets with AllowSpecResourcesUsage (real 22.05 on a 4-core node keeping
// core 3, and one keeping cores 1 and 2).
func TestSpecJobCores(t *testing.T) {
	n1 := mkNodes(1, 4, 1000)[0]
	n1.SpecCores = []uint16{3}
	n2 := n1
	n2.SpecCores = []uint16{1, 2}
	for _, tc := range []struct {
		name string
		nd   Node
		job  Job
		want []uint16
	}{
		{"count 0 takes every core", n1, Job{SpecSet: true}, []uint16{0, 1, 2, 3}},
		{"count of the node's own", n1, Job{SpecSet: true, SpecCount: 1}, []uint16{0, 1, 2}},
		{"count above the node's", n1, Job{SpecSet: true, SpecCount: 2}, []uint16{0, 1}},
		{"threads on one-thread cores", n2, Job{SpecSet: true, SpecThreads: true, SpecCount: 1}, []uint16{0, 2, 3}},
		{"count below the node's", n2, Job{SpecSet: true, SpecCount: 1}, []uint16{0, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base []uint16
			for k := range tc.nd.Cores() {
				if !slices.Contains(tc.nd.SpecCores, uint16(k)) {
					base = append(base, uint16(k))
				}
			}
			if got := specJobCores(&tc.job, &tc.nd, base); !slices.Equal(got, tc.want) {
				t.Errorf("cores %v, want %v", got, tc.want)
			}
		})
	}
}
