package ctld

import "testing"

// TestNodeAllocCPUs: the node reports whole cores allocated, each as its
// threads, as cons_tres does (CR_CPU: a one-task job shows two CPUs on
// a node of two-thread cores).
func TestNodeAllocCPUs(t *testing.T) {
	smt := &Node{CPUs: 4, Sockets: 1, Cores: 2, Threads: 2}
	flat := &Node{CPUs: 4, Sockets: 1, Cores: 4, Threads: 1}
	spec := &Node{CPUs: 4, Sockets: 1, Cores: 2, Threads: 2, CoreSpecCnt: 1}
	spec4 := &Node{CPUs: 4, Sockets: 4, Cores: 1, Threads: 1, CoreSpecCnt: 1}
	for _, tc := range []struct {
		name               string
		n                  *Node
		cpus, cores, loose uint32
		whole              bool
		want               uint16
	}{
		{"one thread of a core", smt, 1, 1, 0, false, 2},
		{"three threads of two cores", smt, 3, 2, 0, false, 4},
		{"no core list", smt, 3, 0, 3, false, 3},
		{"cores and a job without a list", smt, 2, 1, 1, false, 3},
		{"no threads", flat, 3, 3, 0, false, 3},
		{"specialized core not counted", spec, 4, 2, 0, false, 2},
		{"nothing", smt, 0, 0, 0, false, 0},
		// A whole-node job given fewer cores than the node's effective
		// ones (--core-spec=2 on a node keeping one core): every core is
		// taken, the specialized one not counted.
		{"whole node, core-spec above the node's", spec4, 2, 2, 0, true, 3},
		{"whole node, threads", spec, 2, 1, 0, true, 2},
		{"whole node, no specialized cores", flat, 1, 1, 0, true, 4},
	} {
		if got := tc.n.allocCPUs(hardwareOf(tc.n), tc.cpus, tc.cores, tc.loose, tc.whole); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// slurm.conf lowered to one CPU while a job holds two cores: counted
	// on the hardware kept from the start (real shows CPUAlloc=2 with
	// CPUTot=1 until a restart).
	lowered := &Node{CPUs: 1, Sockets: 1, Cores: 1, Threads: 1}
	if got := lowered.allocCPUs(nodeHW{CPUs: 2, Sockets: 1, Cores: 2, Threads: 1}, 2, 2, 0, false); got != 2 {
		t.Errorf("kept hardware: %d, want 2", got)
	}
}
