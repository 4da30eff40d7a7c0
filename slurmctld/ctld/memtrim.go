package ctld

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Returning memory after a burst. A burst of requests (squeue on a queue
// of 10,000 jobs packs megabytes per call) grows the heap to twice what
// stays live, and Go's background scavenger gives the free pages back only
// slowly, and only down to about the last heap goal: the controller would
// keep its peak size long after the burst. C's malloc returns a large
// freed block at once (munmap) and trims the top of its heap; memTrimmer
// does the same once a burst is over: when the heap holds much more than
// is live and little was allocated since the last check, it collects and
// releases the free pages (debug.FreeOSMemory). While requests keep
// coming nothing is forced: the free pages are about to be used again.
//
// A forced collection costs CPU in proportion to the live heap (5 to 15
// ms at 10,000 jobs), so it is done only when it frees megabytes, and a
// quarter of the live heap at least (the cost per byte returned stays
// bounded as the queue grows), and after a trim the next one waits
// memTrimBackoff times as long as the trim took (memTrimSpacing at
// least): forced collections take at most 2% of the time, and only while
// bursts and quiet spells alternate.
//
// The heap is looked at once a second, and every memTrimFast while it
// holds enough to trim, so that memory comes back a fraction of a second
// after a burst.
const (
	memTrimEvery   = time.Second
	memTrimFast    = 100 * time.Millisecond
	memTrimSpacing = 200 * time.Millisecond
	memTrimBackoff = 50
	memTrimMin     = 8 << 20 // bytes the heap holds beyond the live ones
	memTrimShare   = 4       // and at least live/memTrimShare
	// Quiet: at the allocation rate since the last look, the free memory
	// would last longer than memTrimQuiet; at a higher rate it is about
	// to be used again.
	memTrimQuiet = time.Second
)

// GCPercent is the controller's GC target (GOGC). A squeue over 10,000
// jobs holds about 28 MB live while its reply is packed, and at Go's
// default of 100 the heap may grow to twice the live bytes before the next
// collection: the burst's peak RSS was above real slurmctld's. At 50 the
// peak drops by about a sixth (62 MB against 71-75 in the 10,000-job
// repro) for twice as many, small, collections (each costs in proportion
// to the live heap, 5 to 15 ms at 10,000 jobs).
const GCPercent = 50

// SetGCPercent applies GCPercent unless GOGC is set in the environment
// (which the runtime has already applied).
func SetGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}

var memTrimNames = []string{
	"/gc/heap/allocs:bytes",              // cumulative allocations
	"/gc/heap/live:bytes",                // live after the last collection
	"/memory/classes/heap/objects:bytes", // live and not yet collected
	"/memory/classes/heap/free:bytes",    // free, not yet returned
	"/memory/classes/heap/unused:bytes",  // free slots in spans in use
}

// memTrimmer watches the heap. heap, trim and clock are runtime/metrics,
// debug.FreeOSMemory and time.Now, replaceable in tests.
type memTrimmer struct {
	lastAlloc uint64
	lastRead  time.Time
	next      time.Time // no trim before
	// floor is the excess the last trim could not return (free slots in
	// spans still in use): the next trim needs memTrimMin beyond it, or a
	// fragmented heap would be collected every second for nothing.
	floor uint64
	heap  func() (allocs, excess, live uint64)
	trim  func()
	clock func() time.Time
}

// memTrims counts the trims done, for the benchmarks' memory dumps.
var memTrims atomic.Int64

func newMemTrimmer() *memTrimmer {
	samples := make([]metrics.Sample, len(memTrimNames))
	for i, n := range memTrimNames {
		samples[i].Name = n
	}
	return &memTrimmer{heap: func() (uint64, uint64, uint64) { return heapFigures(samples) }, trim: debug.FreeOSMemory, clock: time.Now}
}

// heapFigures returns the bytes allocated since the program started, what
// the heap holds beyond its live bytes (garbage not yet collected, free
// pages not yet returned, free slots in spans in use), and the live bytes
// at the last collection.
func heapFigures(samples []metrics.Sample) (allocs, excess, live uint64) {
	metrics.Read(samples)
	u := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	live = u(1)
	if held := u(2) + u(3) + u(4); held > live {
		excess = held - live
	}
	return u(0), excess, live
}

// RunMemTrim watches the heap until ctx is done, and returns its free
// memory to the system at the end of each burst.
func RunMemTrim(ctx context.Context) {
	t := newMemTrimmer()
	t.read(time.Now())
	timer := time.NewTimer(memTrimEvery)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-timer.C:
			_, wait := t.check(now)
			timer.Reset(wait)
		}
	}
}

// read returns what was allocated since the last read, how long ago that
// was, the heap's excess and its live bytes.
func (t *memTrimmer) read(now time.Time) (allocated uint64, since time.Duration, excess, live uint64) {
	alloc, excess, live := t.heap()
	allocated, since = alloc-t.lastAlloc, now.Sub(t.lastRead)
	t.lastAlloc, t.lastRead = alloc, now
	return allocated, since, excess, live
}

// check trims when the heap holds enough beyond its live bytes, the last
// interval was quiet, and the backoff after the last trim has passed. It
// returns whether it trimmed and when to look again.
func (t *memTrimmer) check(now time.Time) (trimmed bool, wait time.Duration) {
	allocated, since, excess, live := t.read(now)
	t.floor = min(t.floor, excess)
	excess -= t.floor
	enough := max(memTrimMin, live/memTrimShare)
	if excess < enough {
		return false, memTrimEvery
	}
	if !memTrimQuietFor(allocated, since, excess) || now.Before(t.next) {
		return false, memTrimFast
	}
	start := t.clock()
	t.trim()
	took := t.clock().Sub(start)
	// The collection's own allocations are not the next interval's.
	_, _, t.floor, _ = t.read(now)
	t.next = now.Add(max(memTrimSpacing, memTrimBackoff*took))
	memTrims.Add(1)
	return true, memTrimEvery
}

// memTrimQuietFor: at the rate allocated over since, excess would last
// longer than memTrimQuiet.
func memTrimQuietFor(allocated uint64, since time.Duration, excess uint64) bool {
	if since <= 0 {
		return false
	}
	return float64(allocated)*float64(memTrimQuiet)/float64(since) < float64(excess)
}
