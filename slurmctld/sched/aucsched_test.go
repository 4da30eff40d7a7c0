package sched

import (
	"slices"
	"testing"
)

// Fixtures from the AUCSCHED paper (../shared/papers/aucsched-auction-gpu-
// scheduler.txt): the 12-node nodeset example and the 144-node, 4-job
// example. AUCSCHED's auction packs all four 144-node jobs at once; Slurm's
// backfill with cons_tres (which this package follows) packs the 512-core
// job onto whole nodes and leaves two jobs waiting. The tests pin down the
// Slurm-like outcome.

// busyAs makes node i of a 4-core, 2-GPU cluster show free[i] cores and
// gpus[i] GPUs by a running allocation holding the rest.
func busyAs(s *Snapshot, freeCores, freeGPUs []int) {
	for i := range s.Nodes {
		usedC := int(s.Nodes[i].Cores()) - freeCores[i]
		usedG := 2 - freeGPUs[i]
		if usedC == 0 && usedG == 0 {
			continue
		}
		na := NodeAlloc{Node: i}
		for k := 0; k < usedC; k++ {
			na.Cores = append(na.Cores, uint16(k))
		}
		if usedG > 0 {
			na.Gres = []Gres{{Name: "gpu", Count: uint64(usedG)}}
		}
		s.Running = append(s.Running, Allocation{JobID: uint32(900 + i), UserID: 1, End: 99999, Nodes: []NodeAlloc{na}})
	}
}

func TestAucsched12Node(t *testing.T) {
	free := []int{4, 4, 0, 2, 0, 2, 3, 2, 2, 0, 4, 4}
	gpu := []int{0, 0, 0, 0, 0, 1, 1, 1, 2, 0, 0, 1}
	tests := []struct {
		name string
		job  Job
		want []int
	}{
		// The nodeset (6,9,9,1): 9 cores with a GPU on every node.
		{"9 cores with a gpu per node, contiguous", mkJob(1, tasks(9), gres("gpu", "", 1), contiguous()), []int{5, 6, 7, 8}},
		// The nodeset (12,12,4,1).
		{"4 cores and a gpu on one node", mkJob(1, tasks(4), nodesN(1, 1), gres("gpu", "", 1)), []int{11}},
		// 8 cores, no GPU: the block n1-n2 fits exactly (best fit).
		{"8 cores best fit", mkJob(1, tasks(8)), []int{0, 1}},
		// 2 nodes with 2 GPUs each: only n9 has two free.
		{"2 gpus per node on 2 nodes", mkJob(1, nodesN(2, 2), gres("gpu", "", 2)), nil},
		// 3 cores per node on 3 nodes: n1,n2 and then the best fitting
		// remaining block, n7 (3 free), rather than n11/n12.
		{"3 cores per node on 3 nodes", mkJob(1, nodesN(3, 3), tasks(3), cpt(3)), []int{0, 1, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(12, 4, 4000, withGPUs("", 2)))
			s.Config.MemoryConsumable = false
			busyAs(s, free, gpu)
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			st := startOf(p, 1)
			if tc.want == nil {
				if st != nil {
					t.Fatalf("started on %v", nodesOf(st))
				}
				return
			}
			if st == nil {
				t.Fatalf("not started: %+v", p.Pending)
			}
			if got := nodesOf(st); !slices.Equal(got, tc.want) {
				t.Fatalf("nodes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAucsched144Node(t *testing.T) {
	s := snap(mkNodes(144, 8, 16000, withGPUs("", 2)))
	s.Config.MemoryConsumable = false
	s.Config.Backfill = true
	var busy []int
	for i := 64; i < 80; i++ {
		busy = append(busy, i)
	}
	s.Running = []Allocation{running(99, 1000+7200, 8, busy...)}
	for i := range s.Running[0].Nodes {
		s.Running[0].Nodes[i].Gres = []Gres{{Name: "gpu", Count: 2}}
	}
	s.Pending = []Job{
		mkJob(1, tasks(512)),
		mkJob(2, nodesN(64, 64), tasks(64), cpt(2), gres("gpu", "", 1)),
		mkJob(3, nodesN(64, 64), tasks(64), cpt(4), gres("gpu", "", 2)),
		mkJob(4, nodesN(128, 128), tasks(128)),
	}
	p := Schedule(s)
	j1 := mustStart(t, p, 1)
	want := allIdx(64)
	if got := nodesOf(j1); !slices.Equal(got, want) {
		t.Fatalf("J1 on %v, want nodes 1-64", got)
	}
	j2 := mustStart(t, p, 2)
	if got := nodesOf(j2); got[0] != 80 || got[63] != 143 {
		t.Fatalf("J2 on %v, want nodes 81-144", got)
	}
	mustPend(t, p, 3, ReasonResources)
	if p3 := pendingOf(p, 3); p3.StartTime == 0 {
		t.Fatalf("J3 has no expected start")
	}
	pd4 := pendingOf(p, 4)
	if pd4 == nil {
		t.Fatalf("J4 started")
	}
}
