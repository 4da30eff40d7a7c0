package interop

// Real Slurm 22.05 (slurmctld, sbatch, srun, scancel, scontrol) drives
// goslurm's slurmd as its only compute node, with proctrack/cgroup and
// task/cgroup: jobs run and write their output, scancel and time limits
// kill, memory over-use is an OUT_OF_MEMORY job, a one-core job is bound to
// one CPU, a slurmd restarted mid-job keeps the job, and Prolog and Epilog
// run once per job with a clean environment.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/slurmd/stepd"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// submit runs real sbatch --parsable with args in dir (env added to the
// cluster's) and returns the job id.
func submit(t *testing.T, c *realslurm.Cluster, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := c.Command(ctx, "sbatch", append([]string{"--parsable"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// jobInfo is `scontrol -o show job` as key -> value.
func jobInfo(t *testing.T, c *realslurm.Cluster, job string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := c.Command(ctx, "scontrol", "-o", "show", "job", job).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", job, err)
	}
	m := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// waitJob polls the job until its JobState is one of want, and fails when
// it reaches another final state or within passes.
func waitJob(t *testing.T, c *realslurm.Cluster, job string, want []string, within time.Duration) map[string]string {
	t.Helper()
	final := map[string]bool{"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true,
		"OUT_OF_MEMORY": true, "NODE_FAIL": true, "BOOT_FAIL": true, "DEADLINE": true, "PREEMPTED": true}
	deadline := time.Now().Add(within)
	for {
		info := jobInfo(t, c, job)
		st := info["JobState"]
		for _, w := range want {
			if st == w {
				return info
			}
		}
		if final[st] {
			t.Fatalf("job %s ended %s (reason %s, exit %s), want %v", job, st, info["Reason"], info["ExitCode"], want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %v, want %v", job, st, within, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitFile waits for path to hold a line (a job's "I am running" mark).
func waitFile(t *testing.T, path string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within %v", path, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// cgroupV1 reports whether the cgroup v1 controllers task/cgroup needs
// are mounted where Slurm looks for them.
func cgroupV1() bool {
	for _, ctl := range []string{"cpuset", "memory", "freezer", "devices"} {
		var st syscall.Statfs_t
		if err := syscall.Statfs(filepath.Join("/sys/fs/cgroup", ctl), &st); err != nil || st.Type != 0x27e0eb {
			return false
		}
	}
	return true
}

// cgroupV2 reports a cgroup2 unified hierarchy at /sys/fs/cgroup.
func cgroupV2() bool {
	var st syscall.Statfs_t
	return syscall.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == 0x63677270
}

// goslurmdCluster is a real controller whose only node, n1, is our slurmd
// with cgroup confinement, Prolog and Epilog (scripts in scripts/ that log
// their job ids and environments there).
type goslurmdCluster struct {
	*realslurm.Cluster
	bin     string
	slurmd  *realslurm.Proc
	scripts string
}

func startGoslurmdCluster(t *testing.T) *goslurmdCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: jobs run as other users and in cgroups")
	}
	if !cgroupV1() && !cgroupV2() {
		t.Skip("no cgroup v1 controllers or cgroup2 hierarchy at /sys/fs/cgroup")
	}
	bin := buildSlurmd(t)
	scripts, err := os.MkdirTemp("", "goslurm-scripts-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scripts) })
	for _, s := range []string{"prolog", "epilog"} {
		body := fmt.Sprintf("#!/bin/sh\necho \"$SLURM_JOB_ID\" >> %[1]s/%[2]s.log\nenv > %[1]s/%[2]s-$SLURM_JOB_ID.env\n", scripts, s)
		if err := os.WriteFile(filepath.Join(scripts, s), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := realslurm.Start(t, realslurm.Options{
		Nodes:    1,
		External: []string{"n1"},
		ExtraConf: []string{
			// Step cgroups are /slurm_n1/uid_<uid>/job_<id>: job ids
			// apart from any other such cluster on the host.
			fmt.Sprintf("FirstJobId=%d", 100_000+rand.IntN(1_000_000)*10),
			"ProctrackType=proctrack/cgroup",
			"TaskPlugin=task/cgroup",
			"SelectTypeParameters=CR_Core_Memory",
			"DefMemPerCPU=100",
			// The smallest time limit is a minute; no grace on top.
			"OverTimeLimit=0",
			"KillWait=3",
			"Prolog=" + filepath.Join(scripts, "prolog"),
			"Epilog=" + filepath.Join(scripts, "epilog"),
		},
	})
	cg := "CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n"
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "cgroup.conf"), []byte(cg), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &goslurmdCluster{Cluster: c, bin: bin, scripts: scripts}
	g.start(t)
	// A failed test may leave jobs running: end their steps through the
	// supervisors' sockets, which also empties their cgroups.
	t.Cleanup(func() {
		m := stepd.NewManager(stepd.Config{NodeName: "n1", SpoolDir: filepath.Join(c.Dir, "spool", "n1")})
		m.Timeout = 2 * time.Second
		for _, r := range m.Running() {
			m.Kill(r.JobID)
		}
	})
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("GOSLURM_SHOW_LOGS") != "" {
			t.Logf("logs:\n%s", c.Logs())
		}
	})
	return g
}

// start launches our slurmd for n1 and waits until the controller has
// its registration.
func (g *goslurmdCluster) start(t *testing.T) {
	t.Helper()
	before := count(g.Log("n1"), "registered with the controller")
	p, err := g.Launch("goslurmd-n1", g.bin, nil, "-D", "-vv", "-N", "n1", "-f", g.Conf)
	if err != nil {
		t.Fatal(err)
	}
	g.slurmd = p
	deadline := time.Now().Add(60 * time.Second)
	for count(g.Log("n1"), "registered with the controller") <= before {
		select {
		case <-p.Done():
			t.Fatalf("our slurmd exited: %v", p.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("our slurmd did not register within 60 s")
		}
	}
	if before == 0 {
		waitState(t, g.Cluster, p, "n1", "idle", 60*time.Second)
	}
}

// userDir is a directory under the cluster's that uid owns.
func userDir(t *testing.T, c *realslurm.Cluster, name string, uid, gid int) string {
	t.Helper()
	d := filepath.Join(c.Dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, uid, gid); err != nil {
		t.Fatal(err)
	}
	return d
}

// userMarker is a variable set in the submitting user's environment: jobs
// get it, Prolog and Epilog must not.
const userMarker = "GOSLURM_USER_MARKER"

func TestGoSlurmdJobs(t *testing.T) {
	g := startGoslurmdCluster(t)
	c := g.Cluster
	work := userDir(t, c, "work", 0, 0)
	out := func(name string) string { return filepath.Join(work, name) }
	var jobs []string // every job that ran, for the Prolog/Epilog check

	t.Run("sbatch output", func(t *testing.T) {
		job := submit(t, c, work, []string{userMarker + "=1"}, "-o", out("hello-%j.out"), "-e", out("hello-%j.err"),
			"--wrap", "echo out $SLURM_JOB_ID $SLURMD_NODENAME; echo err >&2; env > "+out("hello.env"))
		jobs = append(jobs, job)
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		if b, _ := os.ReadFile(out("hello-" + job + ".out")); string(b) != "out "+job+" n1\n" {
			t.Errorf("stdout %q", b)
		}
		if b, _ := os.ReadFile(out("hello-" + job + ".err")); string(b) != "err\n" {
			t.Errorf("stderr %q", b)
		}
		info := jobInfo(t, c, job)
		if info["ExitCode"] != "0:0" || info["NodeList"] != "n1" {
			t.Errorf("ExitCode=%s NodeList=%s", info["ExitCode"], info["NodeList"])
		}
	})

	t.Run("exit code reported", func(t *testing.T) {
		job := submit(t, c, work, nil, "-o", out("exit.out"), "--wrap", "exit 3")
		jobs = append(jobs, job)
		info := waitJob(t, c, job, []string{"FAILED"}, 60*time.Second)
		if info["ExitCode"] != "3:0" {
			t.Errorf("ExitCode=%s, want 3:0", info["ExitCode"])
		}
	})

	t.Run("srun on the goslurm node", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := c.Command(ctx, "srun", "-N1", "-n2", "-l", "sh", "-c", "echo task $SLURM_PROCID of $SLURM_NTASKS; echo $SLURM_JOB_ID > "+out("srun.job"))
		cmd.Dir = work
		cmd.Env = append(cmd.Env, userMarker+"=1")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("srun: %v\n%s", err, b)
		}
		for _, want := range []string{"0: task 0 of 2\n", "1: task 1 of 2\n"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("srun output %q lacks %q", b, want)
			}
		}
		if id, err := os.ReadFile(out("srun.job")); err == nil {
			jobs = append(jobs, strings.TrimSpace(string(id)))
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel2()
		cmd = c.Command(ctx2, "srun", "-N1", "sh", "-c", "exit 7")
		cmd.Dir = work
		err = cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Errorf("srun of a task exiting 7: %v", err)
		}
	})

	t.Run("one core: bound to one CPU", func(t *testing.T) {
		job := submit(t, c, work, nil, "-n1", "-c1", "-o", out("cpus.out"),
			"--wrap", "grep Cpus_allowed_list /proc/self/status; nproc")
		jobs = append(jobs, job)
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		b, _ := os.ReadFile(out("cpus.out"))
		f := strings.Fields(string(b))
		if len(f) != 3 || (f[1] != "0" && f[1] != "1") || f[2] != "1" {
			t.Errorf("a one-core job sees %q, want one CPU in Cpus_allowed_list and nproc 1", b)
		}
		// Two cores: both CPUs.
		job = submit(t, c, work, nil, "-n2", "-o", out("cpus2.out"), "--wrap", "grep Cpus_allowed_list /proc/self/status")
		jobs = append(jobs, job)
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		if b, _ := os.ReadFile(out("cpus2.out")); !strings.Contains(string(b), "0-1") {
			t.Errorf("a two-core job sees %q", b)
		}
	})

	// The time limit takes over a minute of the controller's time: start
	// it now (the jobs above need both CPUs, those below one) and check
	// it last.
	tlStart := time.Now()
	tlJob := submit(t, c, work, nil, "-t", "1", "-o", out("tl.out"), "--wrap", "echo $$ > "+out("tl.pid")+"; sleep 600")
	jobs = append(jobs, tlJob)

	t.Run("scancel kills a running job", func(t *testing.T) {
		pidFile := out("cancel.pid")
		job := submit(t, c, work, nil, "-o", out("cancel.out"),
			"--wrap", "sleep 600 & echo $! > "+pidFile+"; setsid sleep 600 & wait")
		jobs = append(jobs, job)
		waitJob(t, c, job, []string{"RUNNING"}, 60*time.Second)
		pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, pidFile, 30*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		if !alive(pid) {
			t.Fatalf("job's sleep %d not running", pid)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if b, err := c.Command(ctx, "scancel", job).CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v\n%s", err, b)
		}
		waitJob(t, c, job, []string{"CANCELLED"}, 60*time.Second)
		deadline := time.Now().Add(30 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pid %d of the cancelled job still runs", pid)
		}
		// The daemonized sleep (its own session) was in the step's
		// cgroup: nothing of the job is left.
		if b, err := exec.Command("pgrep", "-f", "^sleep 600$").Output(); err == nil {
			for _, p := range strings.Fields(string(b)) {
				if n, _ := strconv.Atoi(p); n > 0 && inJobCgroup(n, job) {
					t.Errorf("process %d of job %s survived scancel", n, job)
				}
			}
		}
	})

	t.Run("--mem over-use is OUT_OF_MEMORY", func(t *testing.T) {
		job := submit(t, c, work, nil, "--mem=60", "-o", out("oom.out"),
			// tail buffers a line with no end: 400 MB of it, if nothing
			// stops it first.
			"--wrap", "head -c 400M /dev/zero | tail | wc -c")
		jobs = append(jobs, job)
		info := waitJob(t, c, job, []string{"OUT_OF_MEMORY"}, 60*time.Second)
		t.Logf("JobState=%s Reason=%s ExitCode=%s", info["JobState"], info["Reason"], info["ExitCode"])
		b, _ := os.ReadFile(out("oom.out"))
		if strings.Contains(string(b), "419430400") {
			t.Errorf("the job allocated its 400 MB: %q", b)
		}
		// slurmstepd's report, in the job's output and the node's log.
		const report = "oom-kill event(s) in StepId="
		if !strings.Contains(string(b), "slurmstepd: error: Detected 1 "+report+job+".batch") {
			t.Errorf("job output lacks the oom-kill report: %q", b)
		}
		if !strings.Contains(c.Log("n1"), report+job+".batch") {
			t.Errorf("our slurmd's log lacks the oom-kill report")
		}
		if info["ExitCode"] != "0:125" {
			t.Errorf("ExitCode=%s, want 0:125 (SIG_OOM) as real Slurm reports", info["ExitCode"])
		}
	})

	t.Run("slurmd restarted mid-job keeps the job", func(t *testing.T) {
		mark := out("restart.mark")
		job := submit(t, c, work, nil, "-o", out("restart.out"),
			"--wrap", "echo start; echo x > "+mark+"; sleep 8; echo done")
		jobs = append(jobs, job)
		waitJob(t, c, job, []string{"RUNNING"}, 60*time.Second)
		waitFile(t, mark, 30*time.Second)
		if err := g.slurmd.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-g.slurmd.Done()
		g.start(t)
		if st := jobInfo(t, c, job)["JobState"]; st != "RUNNING" {
			t.Errorf("after the restart the job is %s", st)
		}
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		if b, _ := os.ReadFile(out("restart.out")); string(b) != "start\ndone\n" {
			t.Errorf("output %q, want start and done", b)
		}
	})

	t.Run("time limit kills", func(t *testing.T) {
		info := waitJob(t, c, tlJob, []string{"TIMEOUT"}, 150*time.Second-time.Since(tlStart))
		t.Logf("sbatch -t 1 ended TIMEOUT %v after submission (RunTime=%s)", time.Since(tlStart).Round(time.Second), info["RunTime"])
		pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, out("tl.pid"), time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("the timed-out job's shell %d still runs", pid)
		}
		if b, _ := os.ReadFile(out("tl.out")); !strings.Contains(string(b), "DUE TO TIME LIMIT") {
			t.Errorf("job output lacks Slurm's time limit line: %q", b)
		}
	})

	t.Run("Prolog and Epilog once per job, clean environment", func(t *testing.T) {
		for _, job := range jobs {
			waitJob(t, c, job, []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"}, 30*time.Second)
		}
		for _, s := range []string{"prolog", "epilog"} {
			b, _ := os.ReadFile(filepath.Join(g.scripts, s+".log"))
			runs := map[string]int{}
			for _, id := range strings.Fields(string(b)) {
				runs[id]++
			}
			for _, job := range jobs {
				if runs[job] != 1 {
					t.Errorf("%s ran %d times for job %s (log %q)", s, runs[job], job, b)
				}
				env, err := os.ReadFile(filepath.Join(g.scripts, s+"-"+job+".env"))
				if err != nil {
					t.Errorf("%s environment of job %s: %v", s, job, err)
					continue
				}
				if strings.Contains(string(env), userMarker) {
					t.Errorf("the user's environment reached the %s of job %s:\n%s", s, job, env)
				}
				for _, want := range []string{"SLURM_JOB_ID=" + job + "\n", "SLURM_SCRIPT_CONTEXT=" + s + "_slurmd\n"} {
					if !strings.Contains(string(env), want) {
						t.Errorf("%s environment of job %s lacks %q", s, job, want)
					}
				}
			}
		}
		// The marker did reach the job itself.
		if b, _ := os.ReadFile(out("hello.env")); !strings.Contains(string(b), userMarker+"=1\n") {
			t.Errorf("the job's environment lacks the user's %s", userMarker)
		}
	})
}

// inJobCgroup reports whether pid is in a cgroup of job.
func inJobCgroup(pid int, job string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(b), "/job_"+job+"/")
}
