package sched

import "testing"

// TestExclusiveJobMemory checks the memory a whole-node job holds: with
// memory per CPU (asked for or DefMemPerCPU) cons_tres gives it the
// per-CPU amount times every CPU of the node, not the node's memory, and
// a node whose memory does not cover that is out (can_job_run_on_node).
// Real slurmctld 22.05 with CR_CPU_Memory or CR_Core_Memory,
// DefMemPerCPU=100 and 4-CPU 1000 MB nodes shows AllocMem=400 for an
// --exclusive job (testsuite/interop TestSlurmctldCRCPUNodes).
func TestExclusiveJobMemory(t *testing.T) {
	// Two nodes of 1 socket x 2 cores x 2 threads, 1000 MB and 2000 MB.
	nodes := func() []Node {
		ns := mkNodes(2, 2, 1000)
		for i := range ns {
			ns[i].ThreadsPerCore = 2
			ns[i].CPUs = 4
		}
		ns[1].RealMemory = 2000
		return ns
	}
	cases := []struct {
		name     string
		cpus     bool // CR_CPU_Memory, else CR_Core_Memory
		linear   bool // select/linear
		defMem   uint64
		opts     []jobOpt
		wantNode int // -1: does not start
		wantMem  uint64
	}{
		{name: "CR_Core_Memory DefMemPerCPU", defMem: 100, wantNode: 0, wantMem: 400},
		{name: "CR_CPU_Memory DefMemPerCPU", cpus: true, defMem: 100, wantNode: 0, wantMem: 400},
		{name: "select/linear DefMemPerCPU", linear: true, defMem: 100, wantNode: 0, wantMem: 400},
		{name: "all CPUs' memory just fits", defMem: 100, opts: []jobOpt{memCPU(250), tasks(4)}, wantNode: 0, wantMem: 1000},
		// 4 x 300 MB is more than node 1 has: only node 2 will do,
		// although node 1's memory covers the one task.
		{name: "node memory short of all CPUs", defMem: 100, opts: []jobOpt{memCPU(300)}, wantNode: 1, wantMem: 1200},
		{name: "CR_CPU_Memory memory short", cpus: true, defMem: 100, opts: []jobOpt{memCPU(300)}, wantNode: 1, wantMem: 1200},
		{name: "no node covers all CPUs", defMem: 100, opts: []jobOpt{memCPU(600)}, wantNode: -1},
		{name: "memory per node", defMem: 100, opts: []jobOpt{memNode(500)}, wantNode: 0, wantMem: 500},
		{name: "no memory default", wantNode: 0, wantMem: 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(nodes())
			s.Config.DefMemPerCPU = tc.defMem
			s.Config.CPUsConsumable = tc.cpus
			s.Config.WholeNodes = tc.linear
			s.Pending = []Job{mkJob(1, append([]jobOpt{exclusive()}, tc.opts...)...)}
			p := Schedule(s)
			st := startOf(p, 1)
			if tc.wantNode < 0 {
				if st != nil {
					t.Fatalf("job started on %v, want it not to start", nodesOf(st))
				}
				return
			}
			st = mustStart(t, p, 1)
			if len(st.Alloc.Nodes) != 1 {
				t.Fatalf("job got nodes %v, want [%d]", nodesOf(st), tc.wantNode)
			}
			na := st.Alloc.Nodes[0]
			if na.Node != tc.wantNode || na.CPUs != 4 || na.MemoryMB != tc.wantMem {
				t.Errorf("job got node %d, %d CPUs, %d MB; want node %d, 4 CPUs, %d MB",
					na.Node, na.CPUs, na.MemoryMB, tc.wantNode, tc.wantMem)
			}
		})
	}
}
