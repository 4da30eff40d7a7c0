package ctld

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

const memDumpEnv = "GOSLURM_PERF_MEMDUMP"

// MemProfileRate is the heap sampling rate slurmctld sets at start: off,
// unless StartMemDump will write profiles (then the runtime's default, or
// GOSLURM_PERF_MEMDUMP_RATE bytes for a finer profile; 0 for the memory
// figures alone, without the sampling's own memory).
func MemProfileRate() int {
	if os.Getenv(memDumpEnv) == "" {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv(memDumpEnv + "_RATE")); err == nil && n >= 0 {
		return n
	}
	return runtime.MemProfileRate
}

// StartMemDump is a benchmark aid, off unless GOSLURM_PERF_MEMDUMP names a
// directory: each SIGUSR1 then writes there a heap profile
// (heap-<n>.pprof) and the runtime's memory figures with the process's
// VmRSS (mem-<n>.txt), so a run can tell the live heap from what the
// runtime holds and from what the kernel counts.
func StartMemDump() {
	dir := os.Getenv(memDumpEnv)
	if dir == "" {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-ch
			writeMemDump(dir, n)
		}
	}()
}

func writeMemDump(dir string, n int) {
	// With sampling off there is no profile to write: the figures only.
	if runtime.MemProfileRate > 0 {
		if f, err := os.Create(filepath.Join(dir, "heap-"+strconv.Itoa(n)+".pprof")); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	f, err := os.Create(filepath.Join(dir, "mem-"+strconv.Itoa(n)+".txt"))
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "time %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(f, "memtrims %d\n", memTrims.Load())
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		f.Write(b)
	}
	if b, err := os.ReadFile("/proc/self/smaps_rollup"); err == nil {
		f.Write(b)
	}
	descs := metrics.All()
	samples := make([]metrics.Sample, len(descs))
	for i, d := range descs {
		samples[i].Name = d.Name
	}
	metrics.Read(samples)
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			fmt.Fprintf(f, "%s %d\n", s.Name, s.Value.Uint64())
		case metrics.KindFloat64:
			fmt.Fprintf(f, "%s %g\n", s.Name, s.Value.Float64())
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(f, "memstats HeapAlloc %d HeapInuse %d HeapIdle %d HeapReleased %d HeapSys %d StackInuse %d StackSys %d MSpanInuse %d MCacheInuse %d GCSys %d OtherSys %d BuckHashSys %d Sys %d NumGC %d NumGoroutine %d\n",
		ms.HeapAlloc, ms.HeapInuse, ms.HeapIdle, ms.HeapReleased, ms.HeapSys, ms.StackInuse, ms.StackSys,
		ms.MSpanInuse, ms.MCacheInuse, ms.GCSys, ms.OtherSys, ms.BuckHashSys, ms.Sys, ms.NumGC, runtime.NumGoroutine())
}
