package bench

// Idle memory of the controller, real slurmctld 22.05 against goslurm's,
// broken down by mapping: the binary's text, read-only data (rodata and
// Go's pclntab) and data, the anonymous memory (Go heap, stacks and
// runtime metadata; malloc arenas and thread stacks), libc and ld.so, and
// the rest of the shared libraries (libslurmfull, plugins, NSS). Each
// controller is started several times, each time from an empty state
// directory, on the same slurm.conf as BenchmarkCtldCompare, and measured
// GOSLURM_RSS_SETTLE after the nodes are idle (default 5s); the table
// gives the median of every figure. For goslurm it also gives the Go
// runtime's own figures (runtime/metrics, written by the controller's
// GOSLURM_PERF_MEMDUMP hook with heap sampling off, after smaps is read).
// Nothing asserts on memory.
//
// Reading the figures: the read-only mappings of an executable or library
// are nearly all resident once started (measured on this host's kernel:
// real's binary 93%, libslurmfull 84%, ours about 95% of 8 MB of text,
// rodata and pclntab), so the binary rows follow the code's size, and
// move by a few hundred kB from one build to the next with the page
// cache's state. Go's heap stays uncollected until the runtime's forced
// collection two minutes in, which adds about 1 MB of collector memory
// (anon): GOSLURM_RSS_SETTLE=150s gives the steady idle figures (real
// 8.0-8.1 MB, goslurm 12.1-12.3 MB here), the default 5s the lower ones
// just after start.
//
//	go test -timeout 30m -run '^$' -bench IdleRSS -benchtime 1x ./testsuite/bench
//
// GOSLURM_CTLD_BIN names a goslurm slurmctld already built (else it is
// built); GOSLURM_RSS_BINS adds more, as name=path,name=path (variants to
// compare); GOSLURM_RSS_RUNS sets the starts per controller (default 5);
// GOSLURM_RSS_NODES=down leaves the four slurmd unstarted (the controller
// idles with its nodes not responding).

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// rssClasses are the rows of the table, in order.
var rssClasses = []string{
	"VmRSS", "binary text", "binary rodata", "binary data+bss", "anon", "brk heap",
	"libc", "ld.so", "libslurmfull", "slurm plugins", "NSS libs", "other libs", "stack+vdso",
}

// rssRuntime are the runtime/metrics figures shown for goslurm, with the
// label of their row.
var rssRuntime = []struct{ name, label string }{
	{"/memory/classes/heap/objects:bytes", "go heap objects"},
	{"/gc/heap/live:bytes", "go heap live (last GC)"},
	{"/memory/classes/heap/unused:bytes", "go heap unused (in spans)"},
	{"/memory/classes/heap/free:bytes", "go heap free (not returned)"},
	{"/memory/classes/heap/released:bytes", "go heap released"},
	{"/memory/classes/heap/stacks:bytes", "go stacks"},
	{"/memory/classes/metadata/mspan/inuse:bytes", "go mspan metadata"},
	{"/memory/classes/metadata/other:bytes", "go GC/other metadata (virtual)"},
	{"/memory/classes/other:bytes", "go other"},
	{"/memory/classes/profiling/buckets:bytes", "go profiling buckets"},
	{"/gc/heap/goal:bytes", "go heap goal"},
	{"/sched/goroutines:goroutines", "goroutines"},
	{"/gc/cycles/total:gc-cycles", "GC cycles"},
}

func BenchmarkIdleRSS(b *testing.B) {
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("GOSLURM_RSS_RUNS")); err == nil && v > 0 {
		runs = v
	}
	settle := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("GOSLURM_RSS_SETTLE")); err == nil && d >= 0 {
		settle = d
	}
	opts := ctldharness.Options{
		Nodes: 4, CPUs: 4, RealMemory: 4000,
		ExtraConf: []string{
			"MaxJobCount=11500", "DefMemPerCPU=100", "MessageTimeout=10",
			"SchedulerParameters=default_queue_depth=100,bf_interval=30", "MinJobAge=300",
		},
	}
	down := os.Getenv("GOSLURM_RSS_NODES") == "down"
	if down {
		opts.NotStarted = []string{"n1", "n2", "n3", "n4"}
	}
	bins := []struct{ name, path string }{
		{"real", ctldharness.RealSbin(b, "slurmctld")},
		{"goslurm", ctldBuild(b)},
	}
	for _, kv := range strings.Split(os.Getenv("GOSLURM_RSS_BINS"), ",") {
		if name, path, ok := strings.Cut(kv, "="); ok {
			bins = append(bins, struct{ name, path string }{name, path})
		}
	}
	c := ctldharness.New(b, opts)
	results := map[string][]map[string]int64{}
	for _, bin := range bins {
		for range runs {
			results[bin.name] = append(results[bin.name], rssOnce(b, c, bin.name, bin.path, settle, down))
		}
	}
	var t strings.Builder
	fmt.Fprintf(&t, "idle slurmctld memory, %s, median of %d starts, %s after the nodes are idle", time.Now().UTC().Format(time.RFC3339), runs, settle)
	if down {
		t.WriteString(" (nodes not started)")
	}
	t.WriteString("\nkB; binary rows are the controller executable (goslurm) only\n\n")
	width := 10
	for _, bin := range bins {
		width = max(width, len(bin.name)+2)
	}
	fmt.Fprintf(&t, "%-32s", "")
	for _, bin := range bins {
		fmt.Fprintf(&t, "%*s", width, bin.name)
	}
	t.WriteString("\n")
	rows := slices.Clone(rssClasses)
	for _, r := range rssRuntime {
		rows = append(rows, r.label)
	}
	for _, row := range rows {
		fmt.Fprintf(&t, "%-32s", row)
		for _, bin := range bins {
			var vs []int64
			for _, m := range results[bin.name] {
				if v, ok := m[row]; ok {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				fmt.Fprintf(&t, "%*s", width, "-")
				continue
			}
			slices.Sort(vs)
			fmt.Fprintf(&t, "%*d", width, vs[len(vs)/2])
		}
		t.WriteString("\n")
	}
	fmt.Print(t.String())
	ctldSave(b, "idle-rss.txt", t.String())
}

// rssOnce starts the controller at path from an empty state, waits settle
// once the nodes are idle, and returns its memory figures in kB (counts
// for the goroutine and GC rows).
func rssOnce(b *testing.B, c *ctldharness.Cluster, name, path string, settle time.Duration, down bool) map[string]int64 {
	b.Helper()
	dump := b.TempDir()
	// The memory dump hook is goslurm's; the real controller ignores the
	// variable. A wrapper sets it, as the harness sets the daemons'
	// environment itself; exec keeps the controller's pid.
	wrap := filepath.Join(dump, "ctld.sh")
	script := fmt.Sprintf("#!/bin/sh\nGOSLURM_PERF_MEMDUMP=%s GOSLURM_PERF_MEMDUMP_RATE=0 exec %s \"$@\"\n", dump, path)
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := ctldEmptyState(c); err != nil {
		b.Fatal(err)
	}
	c.Start(wrap, "-c")
	defer c.Stop()
	if !down {
		err := c.Poll(60*time.Second, func() bool {
			out, _, err := c.Run("sinfo", "-h", "-N", "-o", "%T")
			return err == nil && strings.Count(out, "idle") == len(c.Nodes)
		})
		if err != nil {
			b.Fatalf("%s: nodes not idle: %v\n%s", name, err, c.Logs())
		}
	}
	time.Sleep(settle)
	pid := c.Ctld().Pid
	m, err := smapsClasses(pid, path)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	if name != "real" {
		rssRuntimeFigures(b, pid, dump, m)
	}
	return m
}

// smapsClasses sums the Rss of /proc/pid/smaps by class of mapping.
func smapsClasses(pid int, bin string) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	exe, _ := filepath.EvalSymlinks(bin)
	m := map[string]int64{}
	class := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			path := ""
			if len(fs) >= 6 {
				path = fs[5]
			}
			class = smapsClass(path, fs[1], exe)
			continue
		}
		if len(fs) >= 2 && fs[0] == "Rss:" {
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			m[class] += v
			m["VmRSS"] += v
		}
	}
	return m, sc.Err()
}

// smapsClass names the class of a mapping of path with permissions perms.
func smapsClass(path, perms, exe string) string {
	base := filepath.Base(path)
	switch {
	case path == "":
		return "anon"
	case path == "[heap]":
		return "brk heap"
	case strings.HasPrefix(path, "["):
		return "stack+vdso"
	case path == exe:
		switch {
		case strings.Contains(perms, "x"):
			return "binary text"
		case strings.Contains(perms, "w"):
			return "binary data+bss"
		}
		return "binary rodata"
	case strings.HasPrefix(base, "libc.so"):
		return "libc"
	case strings.HasPrefix(base, "ld-linux"):
		return "ld.so"
	case strings.HasPrefix(base, "libslurmfull"):
		return "libslurmfull"
	case strings.Contains(path, "/slurm"):
		return "slurm plugins"
	case strings.HasPrefix(base, "libnss") || strings.HasPrefix(base, "libresolv"):
		return "NSS libs"
	}
	return "other libs"
}

// rssRuntimeFigures asks goslurm's controller for its memory dump
// (SIGUSR1) and adds the runtime's figures to m, in kB.
func rssRuntimeFigures(b *testing.B, pid int, dir string, m map[string]int64) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	_ = p.Signal(syscall.SIGUSR1)
	file := filepath.Join(dir, "mem-1.txt")
	var text []byte
	// The dump ends with the memstats line.
	_ = pollUntil(30*time.Second, func() bool {
		text, err = os.ReadFile(file)
		return err == nil && strings.Contains(string(text), "\nmemstats ")
	})
	for _, l := range strings.Split(string(text), "\n") {
		name, val, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		for _, r := range rssRuntime {
			if r.name != name {
				continue
			}
			v, _ := strconv.ParseInt(val, 10, 64)
			if strings.HasSuffix(name, ":bytes") {
				v /= 1024
			}
			m[r.label] = v
		}
	}
}

// pollUntil calls ready every 50 ms until it returns true or timeout
// passes.
func pollUntil(timeout time.Duration, ready func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ready() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
