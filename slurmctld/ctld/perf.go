package ctld

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

// GOSLURM_PERF_CPUPROFILE names a file that gets a CPU profile of
// GOSLURM_PERF_CPUPROFILE_SECS seconds (default 30) from the first batch
// launch: a benchmark aid, off unless set.
var perfProfileOnce sync.Once

func perfProfile() {
	path := os.Getenv("GOSLURM_PERF_CPUPROFILE")
	if path == "" {
		return
	}
	secs, err := strconv.Atoi(os.Getenv("GOSLURM_PERF_CPUPROFILE_SECS"))
	if err != nil || secs <= 0 {
		secs = 30
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	})
}

// perfTrace appends one line per job event ("<unix ns> <event> <job id>
// <detail>") to the file GOSLURM_PERF_TRACE names, for the short-jobs
// benchmark's time split (testsuite/bench). Unset, every call is a
// nil check.
var perfTrace = openPerfTrace(os.Getenv("GOSLURM_PERF_TRACE"))

type perfFile struct {
	mu sync.Mutex
	f  *os.File
}

func openPerfTrace(path string) *perfFile {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return &perfFile{f: f}
}

// perfEvent records event for job id (0: not about one job).
func perfEvent(event string, id uint32, detail any) {
	if event == "launch-send" {
		perfProfileOnce.Do(perfProfile) // with or without a trace
	}
	p := perfTrace
	if p == nil {
		return
	}
	line := fmt.Sprintf("%d %s %d %v\n", time.Now().UnixNano(), event, id, detail)
	p.mu.Lock()
	_, _ = p.f.WriteString(line)
	p.mu.Unlock()
}
