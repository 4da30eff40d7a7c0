package jobs

import (
	"runtime"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
)

// The job list cache's heap per pending job: what squeue leaves live.
//
//	go test -run '^$' -bench InfoCacheHeap -benchtime 1x ./slurmctld/jobs/
func BenchmarkInfoCacheHeap(b *testing.B) {
	const n = 10000
	m, cl := pendingManager(b, n)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	var body int
	for range b.N {
		p, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), msg.ShowAll|msg.ShowLocal, ^uint32(0), nil, t0)
		if err != nil {
			b.Fatal(err)
		}
		body = p.Len()
	}
	after := heap()
	runtime.KeepAlive(m)
	b.ReportMetric(float64(after-before)/n, "cache-B/job")
	b.ReportMetric(float64(body)/n, "record-B/job")
}
