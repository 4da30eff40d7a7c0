package ctld

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestMemTrimCheck drives the trimmer through a burst and its aftermath
// with made-up heap figures: one step per check, 100 ms apart.
func TestMemTrimCheck(t *testing.T) {
	const mb = 1 << 20
	type step struct {
		allocs, excess uint64 // what the heap reports at this check
		live           uint64
		trim           bool
		wait           time.Duration
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"little to free", []step{
			{0, 4 * mb, 0, false, memTrimEvery},
			{1 * mb, 7 * mb, 0, false, memTrimEvery},
		}},
		{"a quarter of the live heap at least", []step{
			{0, 20 * mb, 100 * mb, false, memTrimEvery},
			{0, 26 * mb, 100 * mb, true, memTrimEvery},
		}},
		{"burst then quiet", []step{
			{0, 0, 0, false, memTrimEvery},
			{30 * mb, 20 * mb, 0, false, memTrimFast}, // 300 MB/s: busy
			{60 * mb, 30 * mb, 0, false, memTrimFast},
			{60 * mb, 30 * mb, 0, true, memTrimEvery}, // nothing allocated: quiet
		}},
		{"slow allocation counts as quiet", []step{
			{0, 0, 0, false, memTrimEvery},
			{500 * 1024, 10 * mb, 0, true, memTrimEvery}, // 5 MB/s < 10 MB per second
		}},
		{"backoff after a trim", []step{ // each trim takes 10 ms: 500 ms backoff
			{0, 20 * mb, 0, true, memTrimEvery},
			{0, 20 * mb, 0, false, memTrimFast}, // 100 ms after the first
			{0, 20 * mb, 0, false, memTrimFast},
			{0, 20 * mb, 0, false, memTrimFast},
			{0, 20 * mb, 0, false, memTrimFast},
			{0, 20 * mb, 0, true, memTrimEvery}, // 500 ms later
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var allocs, excess, live uint64
			trims := 0
			now := time.Unix(1000, 0)
			trimTime := time.Unix(0, 0)
			tr := &memTrimmer{
				heap: func() (uint64, uint64, uint64) { return allocs, excess, live },
				trim: func() { trims++; excess = 0; trimTime = trimTime.Add(10 * time.Millisecond) },
				// Two readings per trim, 10 ms apart.
				clock: func() time.Time { return trimTime },
			}
			tr.read(now)
			for i, s := range tc.steps {
				now = now.Add(memTrimFast)
				allocs, excess, live = s.allocs, s.excess, s.live
				before := trims
				trimmed, wait := tr.check(now)
				if trimmed != s.trim || (trims > before) != s.trim || wait != s.wait {
					t.Fatalf("step %d: trimmed %v wait %v, want %v %v", i, trimmed, wait, s.trim, s.wait)
				}
			}
		})
	}
}

// TestMemTrimFragmented: what a trim cannot return (free slots in spans
// still in use) does not make the next one due.
func TestMemTrimFragmented(t *testing.T) {
	const mb = 1 << 20
	excess := uint64(20 * mb)
	trims := 0
	tr := &memTrimmer{
		heap:  func() (uint64, uint64, uint64) { return 0, excess, 0 },
		trim:  func() { trims++; excess = 9 * mb },
		clock: time.Now,
	}
	now := time.Unix(1000, 0)
	tr.read(now)
	for range 30 {
		now = now.Add(time.Second)
		tr.check(now)
	}
	if trims != 1 {
		t.Fatalf("%d trims of a heap left with 9 MB it cannot return, want 1", trims)
	}
	// The fragmentation goes (spans reused), then 10 MB of garbage come.
	excess = 1 * mb
	now = now.Add(time.Second)
	tr.check(now)
	excess = 11 * mb
	now = now.Add(time.Second)
	if trimmed, _ := tr.check(now); !trimmed || trims != 2 {
		t.Fatalf("10 MB beyond the new floor: trimmed %v (%d trims), want a second trim", trimmed, trims)
	}
}

// TestHeapFigures: garbage counts as excess, and a trim returns it.
func TestHeapFigures(t *testing.T) {
	samples := make([]metrics.Sample, len(memTrimNames))
	for i, n := range memTrimNames {
		samples[i].Name = n
	}
	// No collection between the allocations and the reading: the garbage
	// is all still there.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.FreeOSMemory()
	a0, _, _ := heapFigures(samples)
	for range 64 {
		runtime.KeepAlive(make([]byte, 512<<10))
	}
	a1, excess, _ := heapFigures(samples)
	if a1-a0 < 32<<20 {
		t.Fatalf("allocated %d bytes, want at least 32 MiB", a1-a0)
	}
	if excess < 16<<20 {
		t.Fatalf("excess %d after dropping 32 MiB, want at least 16 MiB", excess)
	}
	debug.FreeOSMemory()
	if _, after, _ := heapFigures(samples); after >= excess/2 {
		t.Fatalf("excess %d after a trim, want under half the %d before", after, excess)
	}
}

// TestRunMemTrimStops: the watcher returns once its context is done.
func TestRunMemTrimStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		RunMemTrim(ctx)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("RunMemTrim still running 60 s after its context ended")
	}
}
