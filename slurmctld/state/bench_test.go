package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures fsync-bound Append with 1, 8 and 64 concurrent
// appenders, 512-byte records. ns/op is wall time per record over all
// appenders (1e9/ns/op = records/s); p50/p99 are per-Append latency; rec/sync
// is the group-commit batch size. GOSLURM_STATE_BENCH_DIR picks the disk
// (default: the test temp dir).
func BenchmarkAppend(b *testing.B) {
	for _, par := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("appenders=%d", par), func(b *testing.B) {
			base := os.Getenv("GOSLURM_STATE_BENCH_DIR")
			if base == "" {
				base = b.TempDir()
			}
			dir, err := os.MkdirTemp(base, "bench")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			os.Chmod(dir, 0o700)
			s, err := Open(filepath.Join(dir), Options{}, &memLoader{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := make([]byte, 512)
			lat := make([][]time.Duration, par)
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.SetBytes(int64(frameHeader + len(data)))
			b.ResetTimer()
			for g := 0; g < par; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						t0 := time.Now()
						if _, err := s.Append(context.Background(), Record{Type: 1, Data: data}); err != nil {
							b.Error(err)
							return
						}
						lat[g] = append(lat[g], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			}
			st := s.Stats()
			if st.Batches > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Batches), "rec/sync")
			}
		})
	}
}
