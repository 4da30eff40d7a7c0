package interop

// Clusters whose controller is goslurm's slurmctld: a mixed one (one
// Debian slurmd, one goslurm slurmd) driven by Debian's real commands, and
// an all-goslurm one (our slurmctld, our slurmd on both nodes, our
// commands) with munge and with the built-in auth/slurm.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// goslurmBuildCommands builds our client commands (and, when sackd is
// set, contrib/demo/sackd) into one directory and returns it.
//
// GOSLURM_CMD_DIR names a directory holding them already built, to use
// instead.
func goslurmBuildCommands(t *testing.T, sackd bool) string {
	t.Helper()
	if d := os.Getenv("GOSLURM_CMD_DIR"); d != "" {
		return d
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkgs := []string{"sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol"}
	for i, p := range pkgs {
		pkgs[i] = "github.com/goslurm/goslurm/commands/" + p
	}
	if sackd {
		pkgs = append(pkgs, "github.com/goslurm/goslurm/contrib/demo/sackd")
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build commands: %v\n%s", err, b)
	}
	return dir
}

// goslurmRun runs a command of the cluster (ours or real, per its
// options) and fails the test when it fails.
func goslurmRun(t *testing.T, c *ctldharness.Cluster, name string, args ...string) string {
	t.Helper()
	out, errOut, err := c.Run(name, args...)
	if err != nil {
		t.Fatalf("%s %q: %v\n%s%s", name, args, err, out, errOut)
	}
	return out
}

// goslurmWaitIdle waits until every node is idle.
func goslurmWaitIdle(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	var last string
	if err := c.Poll(30*time.Second, func() bool {
		last, _, _ = c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(last) == "idle"
	}); err != nil {
		t.Fatalf("nodes not idle (%q): %v", last, err)
	}
}

// goslurmWaitGone waits until the process whose pid the job wrote to file
// has exited.
func goslurmWaitGone(t *testing.T, c *ctldharness.Cluster, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		t.Fatalf("pid file %s: %v %v", file, err, perr)
	}
	if err := c.Poll(20*time.Second, func() bool { return !alive(pid) }); err != nil {
		t.Errorf("process %d of a killed job still runs", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestGoslurmMixedCluster: our slurmctld with a real slurmd (n1) and our
// slurmd (n2), driven by the real commands: batch output on each node,
// srun across both, scancel, a time limit, and our slurmd restarted while
// its jobs run.
func TestGoslurmMixedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctld := ctldBuildOurs(t)
	slurmd := buildSlurmd(t)
	c := ctldharness.New(t, ctldharness.Options{
		Nodes:     2,
		OurSlurmd: slurmd,
		OurNodes:  []string{"n2"},
		// The smallest time limit is a minute; no grace on top.
		ExtraConf: []string{"OverTimeLimit=0", "KillWait=3"},
	})
	c.Start(ctld, "-c")
	t.Cleanup(c.Stop)
	dir := c.Dir
	file := func(f string, id uint32) string { return filepath.Join(dir, fmt.Sprintf(f, id)) }

	// Submitted first, so its minute runs while the rest goes on; it
	// also lives through the slurmd restart below.
	timed := ctldSbatch(t, c, "-w", "n2", "-t", "1", "-o", "/dev/null", "--wrap", "sleep 300")

	t.Run("sbatch on each node", func(t *testing.T) {
		for _, node := range []string{"n1", "n2"} {
			id := ctldSbatch(t, c, "-w", node, "-o", filepath.Join(dir, "out-%j.txt"), "--wrap",
				"echo hello from $SLURM_JOB_ID on $SLURMD_NODENAME; echo oops >&2")
			ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
			ctldWaitFile(t, c, file("out-%d.txt", id), fmt.Sprintf("hello from %d on %s\noops\n", id, node), 10*time.Second)
		}
	})
	t.Run("srun -N2", func(t *testing.T) {
		out := goslurmRun(t, c, "srun", "-N2", "-l", "sh", "-c", "echo $SLURMD_NODENAME $(hostname)")
		host, _ := os.Hostname()
		want := fmt.Sprintf("0: n1 %s\n1: n2 %s\n", host, host)
		lines := strings.SplitAfter(out, "\n")
		if len(lines) == 3 && lines[0] > lines[1] {
			lines[0], lines[1] = lines[1], lines[0]
		}
		if strings.Join(lines, "") != want {
			t.Errorf("srun -N2 -l printed %q, want %q", out, want)
		}
		out = goslurmRun(t, c, "srun", "-N2", "hostname")
		if got := strings.Fields(out); len(got) != 2 || got[0] != host || got[1] != host {
			t.Errorf("srun -N2 hostname printed %q", out)
		}
	})
	t.Run("scancel", func(t *testing.T) {
		for _, node := range []string{"n1", "n2"} {
			pidFile := filepath.Join(dir, "cancel-"+node+".pid")
			id := ctldSbatch(t, c, "-w", node, "-o", "/dev/null", "--wrap", "sleep 300 & echo $! > "+pidFile+"; wait")
			ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
			waitFile(t, pidFile, 20*time.Second)
			goslurmRun(t, c, "scancel", strconv.Itoa(int(id)))
			ctldWaitJob(t, c, id, 30*time.Second, "CANCELLED")
			goslurmWaitGone(t, c, pidFile)
		}
	})
	t.Run("slurmd restart mid-job", func(t *testing.T) {
		gate := filepath.Join(dir, "gate")
		id := ctldSbatch(t, c, "-w", "n2", "-o", filepath.Join(dir, "restart-%j.txt"), "--wrap",
			"echo started; while [ ! -e "+gate+" ]; do sleep 0.2; done; echo finished")
		ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
		ctldWaitFile(t, c, file("restart-%d.txt", id), "started\n", 20*time.Second)
		c.StopNode("n2")
		c.StartNode("n2")
		// The job keeps running while our slurmd is away and back.
		if st := ctldJobState(c, id); st != "RUNNING" {
			t.Fatalf("job after the restart: %s", st)
		}
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
		ctldWaitFile(t, c, file("restart-%d.txt", id), "started\nfinished\n", 10*time.Second)
		out := goslurmRun(t, c, "scontrol", "show", "job", strconv.Itoa(int(id)))
		if !strings.Contains(out, "ExitCode=0:0") {
			t.Errorf("job after the restart:\n%s", out)
		}
	})
	t.Run("time limit", func(t *testing.T) {
		ctldWaitJob(t, c, timed, 100*time.Second, "TIMEOUT")
		goslurmWaitIdle(t, c)
	})
}

var goslurmJobID = regexp.MustCompile(`^\d+$`)

// TestGoslurmAllOurs: our slurmctld, our slurmd on both nodes and our
// commands, with munge and with the built-in auth/slurm (no munged).
func TestGoslurmAllOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctld := ctldBuildOurs(t)
	slurmd := buildSlurmd(t)
	cmds := goslurmBuildCommands(t, true)
	for _, auth := range []string{"munge", "slurm"} {
		t.Run(auth, func(t *testing.T) {
			opts := ctldharness.Options{Nodes: 2, OurSlurmd: slurmd, Commands: cmds, Auth: auth}
			if auth == "slurm" {
				opts.Sackd = filepath.Join(cmds, "sackd")
			}
			c := ctldharness.New(t, opts)
			c.Start(ctld, "-c")
			t.Cleanup(c.Stop)
			goslurmAllOurs(t, c)
		})
	}
}

func goslurmAllOurs(t *testing.T, c *ctldharness.Cluster) {
	dir := c.Dir
	host, _ := os.Hostname()
	sbatch := func(args ...string) uint32 {
		t.Helper()
		out := strings.TrimSpace(goslurmRun(t, c, "sbatch", append([]string{"--parsable"}, args...)...))
		if !goslurmJobID.MatchString(out) {
			t.Fatalf("sbatch --parsable %q printed %q", args, out)
		}
		id, _ := strconv.Atoi(out)
		return uint32(id)
	}
	job := func(id uint32) string { return strconv.Itoa(int(id)) }

	if out := goslurmRun(t, c, "sinfo"); out != "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ndebug*       up   infinite      2   idle n[1-2]\n" {
		t.Errorf("sinfo:\n%s", out)
	}
	if out := goslurmRun(t, c, "sinfo", "-N", "-h", "-o", "%N %c %m %T"); out != "n1 2 1000 idle\nn2 2 1000 idle\n" {
		t.Errorf("sinfo -N:\n%s", out)
	}

	// A batch job on each node writes its output.
	for _, node := range []string{"n1", "n2"} {
		id := sbatch("-w", node, "-o", filepath.Join(dir, "out-%j.txt"), "--wrap", "echo hello from $SLURM_JOB_ID on $SLURMD_NODENAME")
		ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
		ctldWaitFile(t, c, filepath.Join(dir, fmt.Sprintf("out-%d.txt", id)), fmt.Sprintf("hello from %d on %s\n", id, node), 10*time.Second)
	}

	// An array: every task runs and writes its file.
	arr := sbatch("--array=1-4", "-o", filepath.Join(dir, "arr-%A_%a.txt"), "--wrap", "echo task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID")
	for i := 1; i <= 4; i++ {
		ctldWaitFile(t, c, filepath.Join(dir, fmt.Sprintf("arr-%d_%d.txt", arr, i)), fmt.Sprintf("task %d of %d\n", i, arr), 60*time.Second)
	}
	if err := c.Poll(30*time.Second, func() bool {
		out, _, _ := c.Run("squeue", "-h", "-j", job(arr))
		return out == ""
	}); err != nil {
		t.Errorf("array %d still queued: %v", arr, err)
	}
	if out := goslurmRun(t, c, "scontrol", "show", "job", job(arr)+"_3"); !strings.Contains(out, "JobState=COMPLETED") ||
		!strings.Contains(out, fmt.Sprintf("ArrayJobId=%d ArrayTaskId=3", arr)) {
		t.Errorf("scontrol show job %d_3:\n%s", arr, out)
	}

	// A dependency: the second job waits for the first.
	gate := filepath.Join(dir, "gate")
	first := sbatch("-o", "/dev/null", "--wrap", "while [ ! -e "+gate+" ]; do sleep 0.2; done")
	second := sbatch("-d", "afterok:"+job(first), "-o", filepath.Join(dir, "dep.txt"), "--wrap", "echo after")
	ctldWaitJob(t, c, first, 30*time.Second, "RUNNING")
	if out := goslurmRun(t, c, "squeue", "-h", "-j", job(second), "-o", "%i %T %r"); out != job(second)+" PENDING Dependency\n" {
		t.Errorf("squeue of the dependent job: %q", out)
	}
	if out := goslurmRun(t, c, "scontrol", "show", "job", job(second)); !strings.Contains(out, "Dependency=afterok:"+job(first)+"(unfulfilled)") {
		t.Errorf("scontrol show job of the dependent job:\n%s", out)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctldWaitJob(t, c, second, 60*time.Second, "COMPLETED")
	ctldWaitFile(t, c, filepath.Join(dir, "dep.txt"), "after\n", 10*time.Second)

	// srun across both nodes, and salloc with srun inside.
	out := goslurmRun(t, c, "srun", "-N2", "-l", "sh", "-c", "echo $SLURMD_NODENAME $(hostname)")
	lines := strings.SplitAfter(out, "\n")
	if len(lines) == 3 && lines[0] > lines[1] {
		lines[0], lines[1] = lines[1], lines[0]
	}
	if want := fmt.Sprintf("0: n1 %s\n1: n2 %s\n", host, host); strings.Join(lines, "") != want {
		t.Errorf("srun -N2 -l printed %q, want %q", out, want)
	}
	out, errOut, err := c.Run("salloc", "-N2", "sh", "-c", "echo nodes=$SLURM_JOB_NODELIST; srun hostname")
	if err != nil || out != fmt.Sprintf("nodes=n[1-2]\n%s\n%s\n", host, host) || !strings.Contains(errOut, "Granted job allocation") {
		t.Errorf("salloc: %v\n%s%s", err, out, errOut)
	}
	goslurmWaitIdle(t, c)

	// squeue and scontrol show a running job; scancel ends it.
	pidFile := filepath.Join(dir, "sleeper.pid")
	run := sbatch("-J", "sleeper", "-w", "n2", "-o", "/dev/null", "--wrap", "sleep 300 & echo $! > "+pidFile+"; wait")
	ctldWaitJob(t, c, run, 30*time.Second, "RUNNING")
	if out := goslurmRun(t, c, "squeue", "-h", "-o", "%i %j %T %D %N"); out != job(run)+" sleeper RUNNING 1 n2\n" {
		t.Errorf("squeue: %q", out)
	}
	sq := goslurmRun(t, c, "squeue")
	if want := regexp.MustCompile(`(?m)^ +` + job(run) + ` +debug +sleeper +root +R +0:\d\d +1 n2$`); !want.MatchString(sq) ||
		!strings.HasPrefix(sq, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n") {
		t.Errorf("squeue:\n%s", sq)
	}
	show := goslurmRun(t, c, "scontrol", "show", "job", job(run))
	for _, want := range []string{"JobId=" + job(run) + " JobName=sleeper", "JobState=RUNNING Reason=None", "NodeList=n2", "NumNodes=1 NumCPUs=1"} {
		if !strings.Contains(show, want) {
			t.Errorf("scontrol show job lacks %q:\n%s", want, show)
		}
	}
	waitFile(t, pidFile, 20*time.Second)
	goslurmRun(t, c, "scancel", job(run))
	ctldWaitJob(t, c, run, 30*time.Second, "CANCELLED")
	goslurmWaitGone(t, c, pidFile)
	goslurmWaitIdle(t, c)
	if out := goslurmRun(t, c, "squeue", "-h", "-t", "all", "-j", job(run), "-o", "%T"); out != "CANCELLED\n" {
		t.Errorf("squeue -t all of the cancelled job: %q", out)
	}
}
