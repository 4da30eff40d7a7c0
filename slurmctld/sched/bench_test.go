package sched

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// cpuTime is the process's user+system CPU time in ms: the machine the
// benchmarks run on is shared, so wall time alone misleads.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// benchSnapshot builds a busy cluster of n 32-core nodes: about 90% of the
// cores are held by running jobs ending over the next day, and pending jobs
// have a trace-like mix: mostly single-node jobs, some multi-node, a few
// large, with time limits from 10 minutes to a day.
func benchSnapshot(nNodes, nPending int) *Snapshot {
	rng := rand.New(rand.NewPCG(uint64(nNodes), uint64(nPending)))
	nodes := mkNodes(nNodes, 32, 128000)
	s := &Snapshot{
		Now:        1_000_000,
		Config:     DefaultConfig(),
		Nodes:      nodes,
		Partitions: []Partition{mkPart("batch", allIdx(nNodes))},
	}
	s.Config.DefMemPerCPU = 2000
	s.Config.BF.MaxJobTest = 0 // the whole queue
	id := uint32(1)
	for ni := 0; ni < nNodes; ni++ {
		used := 0
		for used < 29 {
			c := 1 << rng.IntN(5) // 1..16 cores
			if used+c > 32 {
				break
			}
			na := NodeAlloc{Node: ni, CPUs: uint32(c), MemoryMB: uint64(c) * 2000}
			for k := used; k < used+c; k++ {
				na.Cores = append(na.Cores, uint16(k))
			}
			used += c
			end := s.Now + int64(60+rng.IntN(24*3600))
			s.Running = append(s.Running, Allocation{JobID: id, UserID: 1, Start: s.Now - 100, End: end, Nodes: []NodeAlloc{na}})
			id++
		}
	}
	for i := 0; i < nPending; i++ {
		j := Job{
			JobID:      id,
			Priority:   uint32(rng.IntN(100000) + 1),
			SubmitTime: s.Now - int64(rng.IntN(86400)),
			UserID:     uint32(rng.IntN(200) + 1),
			TimeLimit:  uint32(10 + rng.IntN(24*60)),
		}
		switch x := rng.IntN(100); {
		case x < 70:
			j.NumTasks = uint32(1 << rng.IntN(6)) // 1..32 tasks, one node
		case x < 95:
			j.MinNodes = uint32(2 + rng.IntN(15))
			j.NumTasks = j.MinNodes * 32
		default:
			j.MinNodes = uint32(32 << rng.IntN(4)) // 32..256 nodes
			j.NumTasks = j.MinNodes * 32
			j.Share = ShareExclusive
		}
		s.Pending = append(s.Pending, j)
		id++
	}
	return s
}

func benchPass(b *testing.B, pass func(*Snapshot) *Plan) { benchPassOn(b, pass, false) }

func benchPassOn(b *testing.B, pass func(*Snapshot) *Plan, empty bool) {
	benchPassWith(b, pass, func(s *Snapshot) {
		if empty {
			s.Running = nil
		}
	})
}

func benchPassWith(b *testing.B, pass func(*Snapshot) *Plan, mod func(*Snapshot)) {
	for _, nn := range []int{1000, 10000} {
		for _, np := range []int{1000, 10000, 50000} {
			b.Run(fmt.Sprintf("nodes=%d/pending=%d", nn, np), func(b *testing.B) {
				s := benchSnapshot(nn, np)
				mod(s)
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				var p *Plan
				for i := 0; i < b.N; i++ {
					p = pass(s)
				}
				b.StopTimer()
				b.ReportMetric((cpuTime()-cpu0)/float64(b.N), "cpu-ms/pass")
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
				b.ReportMetric(float64(len(p.Starts)), "starts")
				withStart := 0
				for _, pd := range p.Pending {
					if pd.StartTime > 0 {
						withStart++
					}
				}
				b.ReportMetric(float64(withStart), "expected-starts")
			})
		}
	}
}

func BenchmarkMainPass(b *testing.B) { benchPass(b, MainPass) }
func BenchmarkBackfill(b *testing.B) { benchPass(b, Backfill) }

// BenchmarkBackfillReserve100 is the backfill pass with
// bf_job_part_count_reserve=100: every job is still tested for an
// immediate start, but only the first 100 that cannot start get a
// reservation and an expected start.
func BenchmarkBackfillReserve100(b *testing.B) {
	benchPassWith(b, Backfill, func(s *Snapshot) { s.Config.BF.JobPartCountReserve = 100 })
}

// BenchmarkMainPassEmpty starts from an empty cluster, so the main pass
// places jobs until the cluster is full: the costly case for FIFO.
func BenchmarkMainPassEmpty(b *testing.B) { benchPassOn(b, MainPass, true) }

// BenchmarkBackfillWholeNodes is the same queue on a cluster that hands
// out whole nodes (select/linear): every node is busy until its job ends.
func BenchmarkBackfillWholeNodes(b *testing.B) {
	for _, nn := range []int{1000, 10000} {
		for _, np := range []int{1000, 10000, 50000} {
			b.Run(fmt.Sprintf("nodes=%d/pending=%d", nn, np), func(b *testing.B) {
				s := benchSnapshot(nn, np)
				s.Config.WholeNodes = true
				// One whole-node job per node, ending over the next day.
				rng := rand.New(rand.NewPCG(3, uint64(nn)))
				s.Running = s.Running[:0]
				for ni := 0; ni < nn; ni++ {
					na := NodeAlloc{Node: ni, CPUs: 32, MemoryMB: 128000}
					for k := 0; k < 32; k++ {
						na.Cores = append(na.Cores, uint16(k))
					}
					s.Running = append(s.Running, Allocation{JobID: uint32(ni + 1), UserID: 1, Exclusive: true,
						Start: s.Now - 100, End: s.Now + int64(60+rng.IntN(24*3600)), Nodes: []NodeAlloc{na}})
				}
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				var p *Plan
				for i := 0; i < b.N; i++ {
					p = Backfill(s)
				}
				b.StopTimer()
				b.ReportMetric((cpuTime()-cpu0)/float64(b.N), "cpu-ms/pass")
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
				withStart := 0
				for _, pd := range p.Pending {
					if pd.StartTime > 0 {
						withStart++
					}
				}
				b.ReportMetric(float64(withStart), "expected-starts")
			})
		}
	}
}
