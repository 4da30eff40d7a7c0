package sched

import (
	"slices"
	"testing"
)

// TestSelection checks where single jobs land on small clusters.
func TestSelection(t *testing.T) {
	busy := func(s *Snapshot, nodes ...int) {
		for _, ni := range nodes {
			s.Running = append(s.Running, running(uint32(9000+ni), 5000, int(s.Nodes[ni].Cores()), ni))
		}
	}
	tests := []struct {
		name  string
		setup func() *Snapshot
		job   Job
		want  []int // node indexes; nil = must not start
		cores []int // cores per node, optional
	}{
		{"one task packs on the first node", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1), []int{0}, []int{1}},
		{"tasks pack onto few nodes", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(12)), []int{0, 1}, []int{8, 4}},
		{"cpus-per-task", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(3), cpt(4)), []int{0, 1}, []int{8, 4}},
		{"ntasks-per-node", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(6), tpn(2)), []int{0, 1, 2}, []int{2, 2, 2}},
		{"ntasks-per-node with a remainder", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(5), tpn(2)), []int{0, 1, 2}, []int{2, 2, 1}},
		{"min nodes spreads", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(4), nodesN(4, 4)), []int{0, 1, 2, 3}, []int{1, 1, 1, 1}},
		{"too many nodes", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, nodesN(5, 5)), nil, nil},
		{"exclusive takes whole nodes", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, tasks(2), exclusive()), []int{0}, []int{8}},
		{"best fit block", func() *Snapshot {
			// free blocks: [0-1] [3-5] [7-9] [11]; a 3 node job takes the
			// first 3-node block, not part of a bigger one.
			s := snap(mkNodes(12, 4, 4000))
			busy(s, 2, 6, 10)
			return s
		}, mkJob(1, nodesN(3, 3), exclusive()), []int{3, 4, 5}, nil},
		{"best fit prefers the smallest sufficient block", func() *Snapshot {
			s := snap(mkNodes(12, 4, 4000))
			busy(s, 5, 8) // blocks [0-4] [6-7] [9-11]
			return s
		}, mkJob(1, nodesN(2, 2), exclusive()), []int{6, 7}, nil},
		{"fewest blocks when none suffices", func() *Snapshot {
			s := snap(mkNodes(12, 4, 4000))
			busy(s, 2, 5, 9) // blocks [0-1] [3-4] [6-8] [10-11]
			return s
		}, mkJob(1, nodesN(5, 5), exclusive()), []int{0, 1, 6, 7, 8}, nil},
		{"contiguous is hard", func() *Snapshot {
			s := snap(mkNodes(8, 4, 4000))
			busy(s, 2, 5) // blocks [0-1] [3-4] [6-7]
			return s
		}, mkJob(1, nodesN(3, 3), exclusive(), contiguous()), nil, nil},
		{"contiguous finds a block", func() *Snapshot {
			s := snap(mkNodes(8, 4, 4000))
			busy(s, 1) // blocks [0] [2-7]
			return s
		}, mkJob(1, nodesN(3, 3), exclusive(), contiguous()), []int{2, 3, 4}, nil},
		{"lowest weight first", func() *Snapshot {
			ns := mkNodes(4, 4, 4000)
			ns[0].Weight, ns[1].Weight = 10, 10
			return snap(ns)
		}, mkJob(1), []int{2}, nil},
		{"higher weight added when needed", func() *Snapshot {
			ns := mkNodes(4, 4, 4000)
			ns[0].Weight, ns[1].Weight = 10, 10
			return snap(ns)
		}, mkJob(1, nodesN(3, 3)), []int{0, 2, 3}, nil},
		{"feature and", func() *Snapshot {
			ns := mkNodes(4, 4, 4000)
			ns[1].Features = []string{"a"}
			ns[2].Features = []string{"a", "b"}
			return snap(ns)
		}, mkJob(1, feat("a&b")), []int{2}, nil},
		{"feature or", func() *Snapshot {
			ns := mkNodes(4, 4, 4000)
			ns[1].Features = []string{"a"}
			ns[3].Features = []string{"b"}
			return snap(ns)
		}, mkJob(1, nodesN(2, 2), feat("a|b")), []int{1, 3}, nil},
		{"matching or takes one feature for all nodes", func() *Snapshot {
			ns := mkNodes(5, 4, 4000)
			ns[0].Features = []string{"a"}
			ns[1].Features = []string{"b"}
			ns[2].Features = []string{"b"}
			return snap(ns)
		}, mkJob(1, nodesN(2, 2), feat("[a|b]")), []int{1, 2}, nil},
		{"feature counts", func() *Snapshot {
			ns := mkNodes(6, 4, 4000)
			ns[0].Features = []string{"a"}
			ns[1].Features = []string{"a"}
			ns[2].Features = []string{"a"}
			ns[4].Features = []string{"b"}
			return snap(ns)
		}, mkJob(1, nodesN(3, 3), feat("[a*2&b*1]")), []int{0, 1, 4}, nil},
		{"memory per cpu limits tasks per node", func() *Snapshot { return snap(mkNodes(4, 8, 1000)) },
			mkJob(1, tasks(8), memCPU(250)), []int{0, 1}, []int{4, 4}},
		{"memory per node too big", func() *Snapshot { return snap(mkNodes(4, 8, 1000)) },
			mkJob(1, memNode(2000)), nil, nil},
		{"gres per node", func() *Snapshot {
			ns := mkNodes(4, 8, 8000)
			ns[2].Gres = []Gres{{Name: "gpu", Type: "a100", Count: 2}}
			ns[3].Gres = []Gres{{Name: "gpu", Type: "v100", Count: 4}}
			return snap(ns)
		}, mkJob(1, gres("gpu", "", 3)), []int{3}, nil},
		{"gres type", func() *Snapshot {
			ns := mkNodes(4, 8, 8000)
			ns[2].Gres = []Gres{{Name: "gpu", Type: "a100", Count: 2}}
			ns[3].Gres = []Gres{{Name: "gpu", Type: "v100", Count: 4}}
			return snap(ns)
		}, mkJob(1, gres("gpu", "a100", 1)), []int{2}, nil},
		{"gpus over the job", func() *Snapshot {
			return snap(mkNodes(4, 8, 8000, withGPUs("", 2)))
		}, mkJob(1, nodesN(2, 2), tasks(2), gpus(4)), []int{0, 1}, nil},
		{"include list", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, reqNodes(2)), []int{2}, nil},
		// _eval_nodes grows the block from the required node: after it,
		// then before it.
		{"include list plus more nodes", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, nodesN(2, 2), reqNodes(3)), []int{2, 3}, nil},
		{"exclude list", func() *Snapshot { return snap(mkNodes(4, 8, 8000)) },
			mkJob(1, excNodes(0, 1)), []int{2}, nil},
		{"down and drained nodes skipped", func() *Snapshot {
			ns := mkNodes(4, 8, 8000)
			ns[0].State = NodeDown
			ns[1].State = NodeDrain
			return snap(ns)
		}, mkJob(1), []int{2}, nil},
		{"partition oversubscribe exclusive", func() *Snapshot {
			s := snap(mkNodes(2, 8, 8000))
			s.Partitions[0].OverSubscribe = OverSubscribeExclusive
			return s
		}, mkJob(1), []int{0}, []int{8}},
		{"select/linear takes whole nodes", func() *Snapshot {
			s := snap(mkNodes(2, 8, 8000))
			s.Config.WholeNodes = true
			return s
		}, mkJob(1), []int{0}, []int{8}},
		{"threads: cores counted per task", func() *Snapshot {
			ns := mkNodes(2, 4, 8000)
			for i := range ns {
				ns[i].ThreadsPerCore = 2
				ns[i].CPUs = 8
			}
			return snap(ns)
		}, mkJob(1, tasks(3), cpt(2)), []int{0}, []int{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup()
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
			if tc.cores != nil {
				var got []int
				for _, na := range st.Alloc.Nodes {
					got = append(got, len(na.Cores))
				}
				if !slices.Equal(got, tc.cores) {
					t.Fatalf("cores per node %v, want %v", got, tc.cores)
				}
			}
		})
	}
}
