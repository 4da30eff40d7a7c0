package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

func BenchmarkSubmit(b *testing.B) {
	cl := testCluster()
	m := newTestManager(&MemJournal{})
	m.cfg.MaxJobCount = 0
	d := batchDesc(alice)
	for i := 0; i < b.N; i++ {
		if _, _, err := m.Submit(d, alice, cl, t0); err != nil {
			b.Fatal(err)
		}
		if m.nextID > 60_000_000 {
			b.StopTimer()
			m = newTestManager(&MemJournal{})
			m.cfg.MaxJobCount = 0
			b.StartTimer()
		}
	}
}

// pendingManager holds n pending jobs on a full cluster.
func pendingManager(b *testing.B, n int) (*Manager, *Cluster) {
	cl := testCluster()
	m := newTestManager(nil)
	m.cfg.MaxJobCount = 0
	d := batchDesc(alice)
	d.MinNodes = 4
	for i := 0; i < n; i++ {
		if _, _, err := m.Submit(d, alice, cl, t0); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := m.Schedule(cl, t0, false); err != nil {
		b.Fatal(err)
	}
	return m, cl
}

func BenchmarkSchedule10kPending(b *testing.B) {
	m, cl := pendingManager(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Schedule(cl, t0+int64(i), false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobInfo10kPending(b *testing.B) {
	m, cl := pendingManager(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := m.JobInfoMsg(cl, len(cl.Nodes), msg.ShowLocal, ^uint32(0), t0)
		if len(r.Jobs) != 10000 {
			b.Fatal(len(r.Jobs))
		}
	}
}
