package jobs

import "testing"

// BenchmarkNodeUsage: the node table's usage with 64 one-core jobs
// running on 4 nodes (after every job operation the controller calls it).
func BenchmarkNodeUsage(b *testing.B) {
	cl := testCluster()
	m := newTestManager(nil)
	for i := 0; i < 64; i++ {
		if _, _, err := m.Submit(batchDesc(alice), alice, cl, t0); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := m.Schedule(cl, t0, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		u := m.NodeUsage(len(cl.Nodes))
		if u[0].RunJobs == 0 {
			b.Fatal("nothing running")
		}
	}
}
