package bench

// Quick iteration on the "short jobs" phase of BenchmarkCtldCompare: one
// controller (goslurm's, or Debian's with GOSLURM_SHORTBENCH_REAL=1), the
// same configuration and four real slurmd nodes, N held trivial batch jobs
// (GOSLURM_SHORTBENCH_JOBS, default 100) released with one scontrol
// command, timed until none is pending and until the queue is empty.
// Nothing asserts on speed.
//
//	go test -v -run '^$' -bench CtldShortJobs -benchtime 1x ./testsuite/bench
//
// With our controller it prints a time split per job (launch RPC, slurmd
// run, completion RPC, terminate and epilog) from the controller's event
// trace (slurmctld/ctld/perf.go) and the slurmd logs. It prints the CPU
// the controller and the whole host used over the window; run in a cpuacct
// cgroup of its own (cgroup v1), it also prints the cluster's CPU per job,
// which on a 2-core host is the floor of the release-to-done time.
// GOSLURM_SHORTBENCH_LOGS copies the logs and trace to a directory,
// GOSLURM_SHORTBENCH_PROFILE writes a CPU profile of the controller,
// GOSLURM_SHORTBENCH_CONF adds slurm.conf lines.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

func BenchmarkCtldShortJobs(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("GOSLURM_SHORTBENCH_JOBS")); err == nil && v > 0 {
		n = v
	}
	opts := ctldharness.Options{
		Nodes: 4, CPUs: 4, RealMemory: 4000,
		ExtraConf: []string{
			"MaxJobCount=" + strconv.Itoa(n+1000),
			"DefMemPerCPU=100",
			"MessageTimeout=10",
			"SchedulerParameters=default_queue_depth=100,bf_interval=30",
			"MinJobAge=300",
		},
	}
	// GOSLURM_SHORTBENCH_CONF adds configuration lines (";"-separated),
	// e.g. SlurmdDebug=debug for a finer split from slurmd's log.
	if v := os.Getenv("GOSLURM_SHORTBENCH_CONF"); v != "" {
		opts.ExtraConf = append(opts.ExtraConf, strings.Split(v, ";")...)
	}
	c := ctldharness.New(b, opts)
	bin := ""
	if os.Getenv("GOSLURM_SHORTBENCH_REAL") == "1" {
		bin = ctldharness.RealSbin(b, "slurmctld")
	} else {
		bin = ctldBuild(b)
	}
	// The harness gives the daemons a fixed environment: a wrapper passes
	// the trace file (slurmctld/ctld/perf.go) to our controller.
	trace := ""
	if os.Getenv("GOSLURM_SHORTBENCH_REAL") != "1" {
		trace = filepath.Join(b.TempDir(), "trace")
		w := filepath.Join(b.TempDir(), "slurmctld")
		env := "GOSLURM_PERF_TRACE=" + trace
		// GOSLURM_SHORTBENCH_PROFILE=file: a CPU profile of the
		// controller's first 6 s from the first launch (slurmctld/ctld/perf.go).
		if p := os.Getenv("GOSLURM_SHORTBENCH_PROFILE"); p != "" {
			env += " GOSLURM_PERF_CPUPROFILE=" + p + " GOSLURM_PERF_CPUPROFILE_SECS=6"
		}
		script := "#!/bin/sh\n" + env + " exec " + bin + " \"$@\"\n"
		if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
			b.Fatal(err)
		}
		bin = w
	}
	c.Start(bin, "-c")
	idle := func() int {
		out, _, err := c.Run("sinfo", "-h", "-N", "-o", "%T")
		if err != nil {
			return -1
		}
		return strings.Count(out, "idle\n")
	}
	if err := c.Poll(60*time.Second, func() bool { return idle() == len(c.Nodes) }); err != nil {
		b.Fatalf("nodes not idle: %v\n%s", err, c.Logs())
	}
	var ids []string
	for i := range n {
		out, errOut, err := c.Run("sbatch", "-H", "--parsable", "-o", "/dev/null", "-D", "/tmp",
			"-J", "short"+strconv.Itoa(i), "--wrap", "true")
		if err != nil {
			b.Fatalf("sbatch: %v %s", err, errOut)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	count := func(args ...string) int {
		out, _, err := c.Run("squeue", append([]string{"-h", "-o", "%i"}, args...)...)
		if err != nil {
			return -1
		}
		return len(strings.Fields(out))
	}
	pid := c.Ctld().Pid
	cpu0, sys0, cg0 := procCPU(pid), sysBusy(), cgroupCPU()
	b.ResetTimer()
	t0 := time.Now()
	if _, errOut, err := c.Run("scontrol", "release", strings.Join(ids, ",")); err != nil {
		b.Fatalf("scontrol release: %v %s", err, errOut)
	}
	if err := c.Poll(180*time.Second, func() bool { return count("-t", "PD") == 0 }); err != nil {
		b.Fatalf("not all started: %v", err)
	}
	started := time.Since(t0)
	if err := c.Poll(180*time.Second, func() bool { return count() == 0 }); err != nil {
		b.Fatalf("not all done: %v", err)
	}
	done := time.Since(t0)
	b.StopTimer()
	ctldCPU, allCPU, cgCPU := procCPU(pid)-cpu0, sysBusy()-sys0, cgroupCPU()-cg0
	b.Logf("CPU over the window: controller %.2fs, whole host %.2fs of %.2fs (%d cores)", ctldCPU.Seconds(),
		allCPU.Seconds(), done.Seconds()*float64(runtime.NumCPU()), runtime.NumCPU())
	if cg0 > 0 {
		// Run the benchmark in a cgroup of its own to count only this
		// cluster (controller, slurmd, slurmstepd, munged, commands).
		b.Logf("CPU of this benchmark's cgroup: %.2fs (%.1f ms a job), of it the controller %.2fs", cgCPU.Seconds(),
			cgCPU.Seconds()*1000/float64(n), ctldCPU.Seconds())
		t := time.Now()
		k0 := cgroupCPU()
		for range 10 {
			count()
		}
		b.Logf("one squeue poll: %.1f ms CPU, %.1f ms wall", (cgroupCPU()-k0).Seconds()*100, time.Since(t).Seconds()*100)
	}
	b.ReportMetric(started.Seconds(), "s-started")
	b.ReportMetric(done.Seconds(), "s-done")
	b.ReportMetric(float64(n)/done.Seconds(), "jobs/s")
	b.Logf("%d jobs (%s): all started %.2fs, all done %.2fs, release at %s", n, bin, started.Seconds(), done.Seconds(),
		t0.UTC().Format("15:04:05.000"))
	c.Stop()
	if trace != "" {
		if s, err := shortSplit(trace, filepath.Join(c.Dir, "log"), t0, done, len(c.Nodes)*opts.CPUs); err != nil {
			b.Logf("time split: %v", err)
		} else {
			b.Logf("time split:\n%s", s)
		}
	}
	if dst := os.Getenv("GOSLURM_SHORTBENCH_LOGS"); dst != "" {
		_ = os.MkdirAll(dst, 0o755)
		_ = exec.Command("cp", "-r", filepath.Join(c.Dir, "log"), dst).Run()
		if trace != "" {
			_ = exec.Command("cp", trace, dst).Run()
		}
	}
}

// sysBusy is the CPU time the whole host spent busy (not idle or waiting
// for I/O) since boot, from /proc/stat in 1/100 s ticks.
func sysBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var t int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		t += n
	}
	return time.Duration(t) * 10 * time.Millisecond
}

// cgroupCPU is the CPU time used by the cpuacct cgroup this process is
// in (cgroup v1), or 0 when it cannot be read.
func cgroupCPU() time.Duration {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 || !strings.Contains(f[1], "cpuacct") {
			continue
		}
		if f[2] == "/" {
			return 0 // the whole host: sysBusy says it
		}
		v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", f[2], "cpuacct.usage"))
		if err != nil {
			return 0
		}
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		return time.Duration(ns)
	}
	return 0
}
