package munge_test

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

// BenchmarkClientDecodeEncode measures this process's CPU per munged
// transaction (munged's own CPU is not counted): 64 callers at once, each
// op one Encode and one Decode, as a server verifying a request and
// signing its reply does.
//
//	go test -run '^$' -bench ClientDecodeEncode -benchtime 10000x ./credential/munge
func BenchmarkClientDecodeEncode(b *testing.B) {
	benchDecodeEncode(b, mungetest.Start(b, mungetest.Options{}).Client())
}

// benchDecodeEncode runs b.N Encode+Decode pairs on c from 64 callers and
// reports this process's CPU per transaction.
func benchDecodeEncode(b *testing.B, c munge.Codec) {
	ctx := context.Background()
	run := func(n int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					cred, err := c.Encode(ctx, []byte("0123456789abcdef0123456789abcdef"))
					if err == nil {
						_, err = c.Decode(ctx, cred)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	run(200)
	b.ResetTimer()
	before := benchCPU()
	run(b.N)
	b.ReportMetric(float64((benchCPU()-before).Nanoseconds())/1e3/float64(2*b.N), "cpu-us/transaction")
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
