package bench

// Step launch latency: real `srun -N1 true` and `srun -N2 true` under one
// real Slurm 22.05 slurmctld whose nodes n1, n2 are goslurm's slurmd and
// n3, n4 real slurmd (same host, same munged, proctrack/linuxproc for
// both). Each iteration is a whole srun process, started when every node
// is idle: allocation, launch, I/O, task exit, step completion, release.
// Reports ns/op (mean) and the median in ms; nothing asserts on speed.
// Run with
//
//	go test -run '^$' -bench SrunLaunch -benchtime 30x ./testsuite/bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

func BenchmarkSrunLaunch(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("our slurmd runs jobs as their user: needs root")
	}
	bin := buildGoSlurmd(b)
	c := realslurm.Start(b, realslurm.Options{Nodes: 4, External: []string{"n1", "n2"}})
	for _, n := range []string{"n1", "n2"} {
		if _, err := c.Launch("goslurmd-"+n, bin, nil, "-D", "-N", n, "-f", c.Conf); err != nil {
			b.Fatal(err)
		}
	}
	waitIdle(b, c, 4)

	for _, tc := range []struct{ name, nodes string }{
		{"goslurm/N1", "n1"}, {"real/N1", "n3"},
		{"goslurm/N2", "n[1-2]"}, {"real/N2", "n[3-4]"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			n := strconv.Itoa(strings.Count(tc.nodes, "-") + 1)
			var ds []time.Duration
			for b.Loop() {
				// A node still completing the previous job makes the
				// next allocation wait for a scheduling pass (up to
				// seconds): that is the controller's cadence, not launch
				// latency, so each iteration starts on idle nodes.
				b.StopTimer()
				waitIdle(b, c, 4)
				b.StartTimer()
				t0 := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				cmd := c.Command(ctx, "srun", "-N"+n, "-w", tc.nodes, "true")
				cmd.Dir = c.Dir
				out, err := cmd.CombinedOutput()
				cancel()
				if err != nil {
					b.Fatalf("srun -N%s -w %s true: %v\n%s", n, tc.nodes, err, out)
				}
				ds = append(ds, time.Since(t0))
			}
			slices.Sort(ds)
			med := ds[len(ds)/2]
			b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
			b.Logf("srun -N%s -w %s true: median %v, min %v, max %v over %d", n, tc.nodes,
				med.Round(time.Millisecond), ds[0].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), len(ds))
		})
	}
}

// buildGoSlurmd builds slurmd and slurmstepd side by side in a directory
// any user may enter, and returns the slurmd path.
func buildGoSlurmd(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "goslurm-bin-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		killExe(dir)
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"slurmd", "slurmd/slurmstepd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, filepath.Base(p)), "github.com/goslurm/goslurm/"+p)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", p, err, out)
		}
	}
	return filepath.Join(dir, "slurmd")
}

// killExe SIGKILLs every process running a binary from dir.
func killExe(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		exe, err := os.Readlink(filepath.Join(d, "exe"))
		if err != nil || filepath.Dir(strings.TrimSuffix(exe, " (deleted)")) != dir {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// waitIdle waits until sinfo shows n idle nodes.
func waitIdle(b *testing.B, c *realslurm.Cluster, n int) {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, _ := c.Command(ctx, "sinfo", "-h", "-N", "-o", "%T").Output()
		cancel()
		if strings.Count(string(out), "idle\n") == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("not %d idle nodes in 60 s: %q", n, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
