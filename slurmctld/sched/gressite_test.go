package sched

import (
	"slices"
	"testing"
)

// TestSiteGresOverTheJob: a site GRES counted over the job or per task
// (JobGres) is placed as GPUs are, from that GRES's counts only, and a
// job that gave -n has no more nodes than tasks (_eval_nodes caps
// max_nodes at num_tasks), as real slurmctld 22.05 does
// (TestSlurmctldGresSchedSiteGres in testsuite/interop compares with it).
func TestSiteGresOverTheJob(t *testing.T) {
	noN := nodesN(1, Infinite32)
	foo := func(n, per uint32) jobOpt {
		return func(j *Job) { j.GPUs, j.GPUsPerTask, j.JobGres = n, per, "foo" }
	}
	withFoo := func(nd *Node) { nd.Gres = append(nd.Gres, Gres{Name: "foo", Count: 4}) }
	// holder: a running job holds one core and 3 foo of node 0.
	holder := func(s *Snapshot) {
		a := running(9000, 5000, 1, 0)
		a.Nodes[0].Gres = []Gres{{Name: "foo", Count: 3}}
		s.Running = append(s.Running, a)
	}
	tests := []struct {
		name  string
		busy  bool
		job   Job
		nodes []int // nil: must pend
		foo   []uint64
	}{
		{"per task fits one node", false, mkJob(1, noN, tasks(2), foo(4, 2)), []int{0}, []uint64{4}},
		{"per task spreads", false, mkJob(1, noN, tasks(3), foo(6, 2)), []int{0, 1}, []uint64{4, 2}},
		{"per task, -N1 too small", false, mkJob(1, nodesN(1, 1), tasks(4), foo(8, 2)), nil, nil},
		{"per job on one node", false, mkJob(1, noN, tasks(1), foo(3, 0)), []int{0}, []uint64{3}},
		{"per job, -n1 holds no second node", false, mkJob(1, noN, tasks(1), foo(6, 0)), nil, nil},
		{"per job without -n spreads", false, mkJob(1, noN, foo(6, 0)), []int{0, 1}, []uint64{4, 2}},
		{"held foo is not free", true, mkJob(1, noN, tasks(1), reqNodes(0), foo(2, 0)), nil, nil},
		{"held foo: the other node", true, mkJob(1, noN, tasks(1), foo(2, 0)), []int{1}, []uint64{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The nodes have GPUs too: a job counting foo must not
			// count them.
			s := snap(mkNodes(3, 4, 8000, withFoo, withGPUs("", 8)))
			s.Nodes[2].Weight = 10
			if tc.busy {
				holder(s)
			}
			s.Pending = []Job{tc.job}
			st := startOf(Schedule(s), tc.job.JobID)
			if tc.nodes == nil {
				if st != nil {
					t.Fatalf("started on %v, want pending", nodesOf(st))
				}
				return
			}
			if st == nil {
				t.Fatal("not started")
			}
			var got []uint64
			for _, na := range st.Alloc.Nodes {
				var n uint64
				for _, g := range na.Gres {
					if g.Name != "foo" {
						t.Fatalf("node %d holds %+v", na.Node, g)
					}
					n += g.Count
				}
				got = append(got, n)
			}
			if nodes := nodesOf(st); !slices.Equal(nodes, tc.nodes) || !slices.Equal(got, tc.foo) {
				t.Fatalf("nodes %v foo %v, want %v %v", nodes, got, tc.nodes, tc.foo)
			}
		})
	}
}
