package sched

import "testing"

// TestHetJobPasses: the main pass starts no het component and lets no
// later job of the partition start either; backfill plans each component
// and keeps a planned component's nodes whole for the rest of the pass.
func TestHetJobPasses(t *testing.T) {
	het := func(id uint32) jobOpt { return modify(func(j *Job) { j.HetJobID = id }) }
	s := snap(mkNodes(2, 4, 1000))
	s.Pending = []Job{mkJob(1, het(1)), mkJob(2, het(1)), mkJob(3)}
	p := MainPass(s)
	if len(p.Starts) != 0 {
		t.Fatalf("main pass started %+v", p.Starts)
	}
	p = Backfill(s)
	a, b := startOf(p, 1), startOf(p, 2)
	if a == nil || b == nil {
		t.Fatalf("backfill starts %+v", p.Starts)
	}
	if a.Alloc.Nodes[0].Node == b.Alloc.Nodes[0].Node {
		t.Errorf("both components planned on node %d", a.Alloc.Nodes[0].Node)
	}
	if c := startOf(p, 3); c != nil {
		t.Errorf("job 3 started on the components' nodes: %+v", c)
	}
}
