package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Tests of goslurm's slurmctld running jobs on Debian's real slurmd 22.05,
// driven only by Debian's real commands (sbatch, srun, salloc, scancel,
// scontrol, squeue).

// ctldJobsStart brings a cluster up under our controller.
func ctldJobsStart(t *testing.T, opts ctldharness.Options) (*ctldharness.Cluster, string) {
	t.Helper()
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, opts)
	c.Start(ours, "-c")
	t.Cleanup(c.Stop)
	return c, ours
}

var submittedRE = regexp.MustCompile(`Submitted batch job (\d+)`)

// ctldSbatch submits with the real sbatch and returns the job id.
func ctldSbatch(t *testing.T, c *ctldharness.Cluster, args ...string) uint32 {
	t.Helper()
	out, errOut, err := c.Run("sbatch", args...)
	m := submittedRE.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("sbatch %q: %v\n%s%s", args, err, out, errOut)
	}
	id, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(id)
}

var jobStateRE = regexp.MustCompile(`JobState=(\S+)`)

// ctldJobState is the job's state as `scontrol show job` prints it ("" when
// the job is unknown).
func ctldJobState(c *ctldharness.Cluster, id uint32) string {
	out, _, err := c.Run("scontrol", "show", "job", "-o", strconv.Itoa(int(id)))
	if err != nil {
		return ""
	}
	m := jobStateRE.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// ctldWaitJob waits until the job is in one of the states.
func ctldWaitJob(t *testing.T, c *ctldharness.Cluster, id uint32, limit time.Duration, states ...string) string {
	t.Helper()
	var last string
	err := c.Poll(limit, func() bool {
		last = ctldJobState(c, id)
		for _, s := range states {
			if last == s {
				return true
			}
		}
		return false
	})
	if err != nil {
		out, _, _ := c.Run("scontrol", "show", "job", strconv.Itoa(int(id)))
		t.Fatalf("job %d: state %q, want %v: %v\n%s", id, last, states, err, out)
	}
	return last
}

// ctldWaitFile waits until a file has the wanted content.
func ctldWaitFile(t *testing.T, c *ctldharness.Cluster, path, want string, limit time.Duration) {
	t.Helper()
	var got []byte
	if err := c.Poll(limit, func() bool {
		got, _ = os.ReadFile(path)
		return string(got) == want
	}); err != nil {
		t.Fatalf("%s: %q, want %q: %v", path, got, want, err)
	}
}

// TestSlurmctldJobsBatch: sbatch runs on a real slurmd and writes its
// output; the job ends COMPLETED and the node goes back to idle.
func TestSlurmctldJobsBatch(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	out := filepath.Join(c.Dir, "out-%j.txt")
	id := ctldSbatch(t, c, "-o", out, "--wrap", "echo hello from $SLURM_JOB_ID on $SLURMD_NODENAME")
	ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
	ctldWaitFile(t, c, filepath.Join(c.Dir, fmt.Sprintf("out-%d.txt", id)), fmt.Sprintf("hello from %d on n1\n", id), 10*time.Second)
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(o) == "idle"
	}); err != nil {
		o, _, _ := c.Run("sinfo")
		t.Fatalf("nodes not idle after the job: %v\n%s", err, o)
	}
	// A failing script ends FAILED with its exit code.
	id = ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "exit 3")
	ctldWaitJob(t, c, id, 60*time.Second, "FAILED")
	o, _, _ := c.Run("scontrol", "show", "job", strconv.Itoa(int(id)))
	if !strings.Contains(o, "ExitCode=3:0") {
		t.Errorf("exit code of a failed job:\n%s", o)
	}
}

// TestSlurmctldJobsSrunSalloc: srun -N2 runs a step on both real slurmd
// (credential signed by our controller through munge); salloc runs a
// command in an allocation, and srun inside it uses that allocation.
func TestSlurmctldJobsSrunSalloc(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	out, errOut, err := c.Run("srun", "-N2", "hostname")
	if err != nil {
		t.Fatalf("srun -N2 hostname: %v\n%s%s", err, out, errOut)
	}
	host, _ := os.Hostname()
	if got := strings.Fields(out); len(got) != 2 || got[0] != host || got[1] != host {
		t.Errorf("srun -N2 hostname printed %q, want %s twice", out, host)
	}
	out, errOut, err = c.Run("srun", "-N2", "-l", "printenv", "SLURM_NODEID")
	if err != nil || !strings.Contains(out, "0: 0") || !strings.Contains(out, "1: 1") {
		t.Errorf("srun -N2 -l printenv: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = c.Run("salloc", "-N1", "sh", "-c", `echo alloc=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST; srun hostname`)
	if err != nil || !strings.Contains(out, "nodes=n1") || !strings.Contains(out, host) {
		t.Fatalf("salloc: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "Granted job allocation") {
		t.Errorf("salloc stderr: %s", errOut)
	}
	m := regexp.MustCompile(`alloc=(\d+)`).FindStringSubmatch(out)
	id, _ := strconv.Atoi(m[1])
	ctldWaitJob(t, c, uint32(id), 30*time.Second, "COMPLETED")
	// Every allocation was released: the nodes are idle again.
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(o) == "idle"
	}); err != nil {
		o, _, _ := c.Run("squeue")
		t.Fatalf("nodes not idle: %v\n%s", err, o)
	}
}

// TestSlurmctldJobsCancelHold: scancel of a running and of a pending job;
// scontrol hold, release, update TimeLimit and requeue.
func TestSlurmctldJobsCancelHold(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 1, CPUs: 1})
	running := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, running, 30*time.Second, "RUNNING")
	pending := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, pending, 10*time.Second, "PENDING")

	// hold / release / TimeLimit on the pending job.
	if out, errOut, err := c.Run("scontrol", "hold", strconv.Itoa(int(pending))); err != nil {
		t.Fatalf("scontrol hold: %v %s%s", err, out, errOut)
	}
	o, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(pending)), "-o", "%T %r %Q")
	if strings.TrimSpace(o) != "PENDING JobHeldUser 0" && strings.TrimSpace(o) != "PENDING JobHeldAdmin 0" {
		t.Errorf("after hold: %q", o)
	}
	if out, errOut, err := c.Run("scontrol", "release", strconv.Itoa(int(pending))); err != nil {
		t.Fatalf("scontrol release: %v %s%s", err, out, errOut)
	}
	o, _, _ = c.Run("squeue", "-h", "-j", strconv.Itoa(int(pending)), "-o", "%T %r")
	if f := strings.Fields(o); len(f) != 2 || f[0] != "PENDING" || strings.HasPrefix(f[1], "JobHeld") {
		t.Errorf("after release: %q", o)
	}
	if out, errOut, err := c.Run("scontrol", "update", "JobId="+strconv.Itoa(int(pending)), "TimeLimit=7"); err != nil {
		t.Fatalf("scontrol update TimeLimit: %v %s%s", err, out, errOut)
	}
	o, _, _ = c.Run("squeue", "-h", "-j", strconv.Itoa(int(pending)), "-o", "%l")
	if strings.TrimSpace(o) != "7:00" {
		t.Errorf("time limit after update: %q", o)
	}

	// requeue of the running job: it pends again, eligible only after
	// the credential lifetime, as Slurm delays a requeued job
	// (Reason=BeginTime); the released job takes the node meanwhile.
	if out, errOut, err := c.Run("scontrol", "requeue", strconv.Itoa(int(running))); err != nil {
		t.Fatalf("scontrol requeue: %v %s%s", err, out, errOut)
	}
	ctldWaitJob(t, c, running, 30*time.Second, "PENDING")
	o, _, _ = c.Run("squeue", "-h", "-j", strconv.Itoa(int(running)), "-o", "%T %r")
	if strings.TrimSpace(o) != "PENDING BeginTime" {
		t.Errorf("requeued job: %q", o)
	}
	o, _, _ = c.Run("scontrol", "show", "job", strconv.Itoa(int(running)))
	if !strings.Contains(o, "Restarts=1") {
		t.Errorf("requeued job:\n%s", o)
	}
	ctldWaitJob(t, c, pending, 30*time.Second, "RUNNING")

	// scancel of the now pending job, and of the running one.
	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(running))); err != nil {
		t.Fatalf("scancel pending: %v %s%s", err, out, errOut)
	}
	ctldWaitJob(t, c, running, 10*time.Second, "CANCELLED")
	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(pending))); err != nil {
		t.Fatalf("scancel running: %v %s%s", err, out, errOut)
	}
	ctldWaitJob(t, c, pending, 30*time.Second, "CANCELLED")
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(o) == "idle"
	}); err != nil {
		o, _, _ := c.Run("sinfo")
		t.Fatalf("node not idle after scancel: %v\n%s", err, o)
	}
}

// TestSlurmctldJobsArrayThrottle: a 100-task array with %10 never has more
// than 10 tasks running, and every task runs once and completes.
func TestSlurmctldJobsArrayThrottle(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 2, CPUs: 8})
	dir := filepath.Join(c.Dir, "array")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := ctldSbatch(t, c, "--array=1-100%10", "-o", filepath.Join(dir, "%A_%a.out"),
		"--wrap", "echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID; sleep 0.3")
	maxRunning, polls := 0, 0
	if err := c.Poll(110*time.Second, func() bool {
		out, _, err := c.Run("squeue", "-h", "-r", "-o", "%i %T")
		if err != nil {
			return false
		}
		polls++
		running, left := 0, 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				left++
				if f[1] == "RUNNING" {
					running++
				}
			}
		}
		maxRunning = max(maxRunning, running)
		return left == 0
	}); err != nil {
		out, _, _ := c.Run("squeue", "-r")
		t.Fatalf("array not done: %v\n%s", err, out)
	}
	if maxRunning > 10 {
		t.Errorf("%d tasks ran at once, throttle is 10", maxRunning)
	}
	t.Logf("at most %d tasks running over %d polls", maxRunning, polls)
	for task := 1; task <= 100; task++ {
		p := filepath.Join(dir, fmt.Sprintf("%d_%d.out", id, task))
		b, err := os.ReadFile(p)
		if want := fmt.Sprintf("%d %d\n", id, task); err != nil || string(b) != want {
			t.Errorf("task %d: %q %v, want %q", task, b, err, want)
		}
	}
	out, _, _ := c.Run("scontrol", "show", "job", "-o", strconv.Itoa(int(id)))
	if n := strings.Count(out, "JobState=COMPLETED"); n != 100 {
		t.Errorf("%d of 100 tasks COMPLETED:\n%s", n, out)
	}
}

// TestSlurmctldJobsDependencyChain: afterok chains run in order; a job
// after a failed one never runs (DependencyNeverSatisfied).
func TestSlurmctldJobsDependencyChain(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 2, CPUs: 4})
	log := filepath.Join(c.Dir, "chain.log")
	prev := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 1; echo a >> "+log)
	var ids []uint32
	ids = append(ids, prev)
	for _, name := range []string{"b", "c", "d"} {
		prev = ctldSbatch(t, c, "-o", "/dev/null", "-d", fmt.Sprintf("afterok:%d", prev), "--wrap", "echo "+name+" >> "+log)
		ids = append(ids, prev)
	}
	o, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(ids[3])), "-o", "%T %r %E")
	if strings.TrimSpace(o) != fmt.Sprintf("PENDING Dependency afterok:%d(unfulfilled)", ids[2]) {
		t.Errorf("last of the chain: %q", o)
	}
	bad := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "exit 1")
	never := ctldSbatch(t, c, "-o", "/dev/null", "-d", fmt.Sprintf("afterok:%d", bad), "--wrap", "echo never >> "+log)
	after := ctldSbatch(t, c, "-o", "/dev/null", "-d", fmt.Sprintf("afternotok:%d", bad), "--wrap", "true")
	for _, id := range ids {
		ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
	}
	ctldWaitJob(t, c, after, 30*time.Second, "COMPLETED")
	ctldWaitFile(t, c, log, "a\nb\nc\nd\n", 5*time.Second)
	if err := c.Poll(20*time.Second, func() bool {
		o, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(never)), "-o", "%T %r")
		return strings.TrimSpace(o) == "PENDING DependencyNeverSatisfied"
	}); err != nil {
		o, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(never)), "-o", "%T %r")
		t.Errorf("job after a failed one: %q", o)
	}
}

// TestSlurmctldJobsSteps: a batch job's srun step is listed by squeue -s
// and scontrol show step, and scancel of the step ends it alone.
func TestSlurmctldJobsSteps(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 1})
	id := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "srun sleep 300; sleep 300")
	step := fmt.Sprintf("%d.0", id)
	var last string
	if err := c.Poll(30*time.Second, func() bool {
		last, _, _ = c.Run("squeue", "-h", "-s", "-o", "%i %j")
		return strings.Contains(last, step+" sleep")
	}); err != nil {
		t.Fatalf("squeue -s: %q", last)
	}
	if !strings.Contains(last, fmt.Sprintf("%d.batch batch", id)) {
		t.Errorf("batch step missing from squeue -s: %q", last)
	}
	for _, args := range [][]string{{"show", "step"}, {"show", "step", step}} {
		out, errOut, err := c.Run("scontrol", args...)
		if err != nil || !strings.Contains(out, "StepId="+step) || !strings.Contains(out, "NodeList=n1") {
			t.Errorf("scontrol %v: %v\n%s%s", args, err, out, errOut)
		}
	}
	if out, errOut, err := c.Run("scancel", step); err != nil {
		t.Fatalf("scancel %s: %v %s%s", step, err, out, errOut)
	}
	if err := c.Poll(30*time.Second, func() bool {
		last, _, _ = c.Run("squeue", "-h", "-s", "-o", "%i")
		return strings.TrimSpace(last) == fmt.Sprintf("%d.batch", id)
	}); err != nil {
		t.Errorf("after scancel of the step: %q", last)
	}
	if st := ctldJobState(c, id); st != "RUNNING" {
		t.Errorf("job after its step was cancelled: %s", st)
	}
}

// TestSlurmctldJobsTimeLimit: a job past its time limit is killed by the
// real slurmd on our controller's REQUEST_KILL_TIMELIMIT and ends TIMEOUT.
func TestSlurmctldJobsTimeLimit(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"KillWait=5"}})
	id := ctldSbatch(t, c, "-t", "1", "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
	ctldWaitJob(t, c, id, 100*time.Second, "TIMEOUT")
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(o) == "idle"
	}); err != nil {
		o, _, _ := c.Run("sinfo")
		t.Fatalf("node not idle after the timeout: %v\n%s", err, o)
	}
}

// TestSlurmctldJobsSallocPending: salloc waits while the only CPU is busy
// and gets its allocation pushed by our controller when the batch job
// ends; srun does the same.
func TestSlurmctldJobsSallocPending(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 1, CPUs: 1})
	id := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 2")
	ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
	out, errOut, err := c.Run("salloc", "-N1", "sh", "-c", "echo granted $SLURM_JOB_ID")
	if err != nil || !strings.Contains(out, "granted") ||
		!strings.Contains(errOut, "queued and waiting for resources") || !strings.Contains(errOut, "has been allocated resources") {
		t.Fatalf("salloc: %v\n%s%s", err, out, errOut)
	}
	id = ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 2")
	ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
	out, errOut, err = c.Run("srun", "-N1", "echo", "stepped")
	if err != nil || out != "stepped\n" || !strings.Contains(errOut, "queued and waiting for resources") {
		t.Fatalf("srun: %v\n%s%s", err, out, errOut)
	}
}
