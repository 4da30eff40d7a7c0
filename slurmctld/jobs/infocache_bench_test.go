package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
)

// What slurmctld does for one squeue, at n pending jobs.
//
//	go test -run '^$' -bench 'JobInfoList' -benchmem ./slurmctld/jobs/
//
// Struct: build JobInfoMsg and pack it (the path without the cache).
// Cached: PackJobInfo under the lock plus AppendTo after it, nothing
// changed since the last list but the clock. Locked: PackJobInfo alone
// (what the controller's lock covers). Changed: every job changed since
// the last list (all records packed again: the worst case).

func BenchmarkJobInfoListStruct1k(b *testing.B)  { benchListStruct(b, 1000) }
func BenchmarkJobInfoListStruct10k(b *testing.B) { benchListStruct(b, 10000) }
func BenchmarkJobInfoListCached1k(b *testing.B)  { benchListPacked(b, 1000, true, false) }
func BenchmarkJobInfoListCached10k(b *testing.B) { benchListPacked(b, 10000, true, false) }
func BenchmarkJobInfoListLocked10k(b *testing.B) { benchListPacked(b, 10000, false, false) }
func BenchmarkJobInfoListChanged10k(b *testing.B) {
	benchListPacked(b, 10000, true, true)
}

func benchListStruct(b *testing.B, n int) {
	m, cl := pendingManager(b, n)
	bc, err := jobInfoCodec()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := m.JobInfoMsg(cl, len(cl.Nodes), msg.ShowAll|msg.ShowLocal, ^uint32(0), t0+int64(i))
		w := pack.NewWriter(nil)
		if err := bc.Encode(w, codec.Version2205, r); err != nil {
			b.Fatal(err)
		}
		if len(r.Jobs) != n {
			b.Fatal(len(r.Jobs))
		}
	}
}

func benchListPacked(b *testing.B, n int, appendBody, change bool) {
	m, cl := pendingManager(b, n)
	if _, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), msg.ShowAll|msg.ShowLocal, ^uint32(0), nil, t0); err != nil {
		b.Fatal(err)
	}
	jobs := m.Jobs()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if change {
			for _, j := range jobs {
				j.Priority++
			}
		}
		p, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), msg.ShowAll|msg.ShowLocal, ^uint32(0), nil, t0+int64(i))
		if err != nil {
			b.Fatal(err)
		}
		if p.Count() != n {
			b.Fatal(p.Count())
		}
		if appendBody {
			_ = p.AppendTo(nil)
		}
	}
}
