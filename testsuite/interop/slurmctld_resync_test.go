package interop

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

// The re-sync of jobs from slurmd registrations (validate_jobs_on_node):
// each test runs against Debian's real slurmctld first, so what it expects
// is what Slurm 22.05 does, then against ours; the nodes are Debian's
// real slurmd both times.

// resyncControllers returns the real slurmctld and ours, by name.
func resyncControllers(t *testing.T) []struct{ name, bin string } {
	real := ctldharness.RealSbin(t, "slurmctld")
	return []struct{ name, bin string }{{"real", real}, {"ours", ctldBuildOurs(t)}}
}

// resyncStart brings a cluster up with controller bin on a clean state.
func resyncStart(t *testing.T, bin string, opts ctldharness.Options) *ctldharness.Cluster {
	t.Helper()
	c := ctldharness.New(t, opts)
	c.Start(bin, "-c", "-i")
	t.Cleanup(c.Stop)
	return c
}

// resyncPID waits until a job script wrote its shell's pid into file.
func resyncPID(t *testing.T, c *ctldharness.Cluster, file string) int {
	t.Helper()
	var pid int
	if err := c.Poll(60*time.Second, func() bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pid
}

// resyncAlive: the process exists and is not a zombie.
func resyncAlive(pid int) bool { return syscall.Kill(pid, 0) == nil && !resyncZombie(pid) }

func resyncZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// resyncLog waits until the controller's log has a line matching re.
func resyncLog(t *testing.T, c *ctldharness.Cluster, re *regexp.Regexp) {
	t.Helper()
	path := filepath.Join(c.Dir, "log", "slurmctld.log")
	if err := c.Poll(60*time.Second, func() bool {
		b, _ := os.ReadFile(path)
		return re.Match(b)
	}); err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("no %q in the controller log: %v\n%s", re, err, b)
	}
}

// resyncLines returns the controller log's lines (without their time
// stamps) that match re, in order.
func resyncLines(c *ctldharness.Cluster, re *regexp.Regexp) []string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "] "); strings.HasPrefix(l, "[") && i > 0 {
			l = l[i+2:]
		}
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// resyncSameLog reports where ours logged other lines than the real one.
func resyncSameLog(t *testing.T, logs map[string][]string) {
	t.Helper()
	if len(logs) == 2 && strings.Join(logs["real"], "\n") != strings.Join(logs["ours"], "\n") {
		t.Errorf("log lines differ:\n--- real slurmctld\n%s\n--- ours\n%s",
			strings.Join(logs["real"], "\n"), strings.Join(logs["ours"], "\n"))
	}
}

// TestSlurmctldResyncOrphanJob: the controller restarts from a saved
// state that predates job B (A was running then, B started later): the
// node's registration reports both; B, which the controller does not
// know, is killed on the node ("Orphan StepId=B.batch"), and A, which it
// knows as running there, keeps running. Both controllers log the same.
func TestSlurmctldResyncOrphanJob(t *testing.T) {
	logs := map[string][]string{}
	defer resyncSameLog(t, logs)
	for _, ctl := range resyncControllers(t) {
		t.Run(ctl.name, func(t *testing.T) {
			c := resyncStart(t, ctl.bin, ctldharness.Options{Nodes: 1})
			script := func(tag string) string {
				return fmt.Sprintf("echo $$ > %s/%s.pid; exec sleep 300", c.Dir, tag)
			}
			a := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", script("a"))
			ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
			pidA := resyncPID(t, c, filepath.Join(c.Dir, "a.pid"))

			// A clean stop saves the state with A running; keep a copy.
			c.StopCtld()
			saved := filepath.Join(c.Dir, "state.saved")
			if out, err := exec.Command("cp", "-a", filepath.Join(c.Dir, "state"), saved).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			c.StartCtld(ctl.bin)
			ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
			b := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", script("b"))
			ctldWaitJob(t, c, b, 60*time.Second, "RUNNING")
			pidB := resyncPID(t, c, filepath.Join(c.Dir, "b.pid"))

			// Crash, and come back from the older state.
			c.KillCtld()
			if err := os.RemoveAll(filepath.Join(c.Dir, "state")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(saved, filepath.Join(c.Dir, "state")); err != nil {
				t.Fatal(err)
			}
			c.StartCtld(ctl.bin)
			resyncLog(t, c, regexp.MustCompile(fmt.Sprintf(`Orphan StepId=%d\.batch reported on node n1`, b)))
			if err := c.Poll(60*time.Second, func() bool { return !resyncAlive(pidB) }); err != nil {
				t.Errorf("job %d (unknown to the controller) still runs on n1: %v", b, err)
			}
			if st := ctldJobState(c, b); st != "" {
				t.Errorf("job %d: %q, want unknown", b, st)
			}
			// A survives the registration and stays RUNNING.
			if !resyncAlive(pidA) {
				t.Errorf("job %d was killed", a)
			}
			if st := ctldJobState(c, a); st != "RUNNING" {
				t.Errorf("job %d: %q, want RUNNING", a, st)
			}
			if out, errOut, err := c.Run("scancel", strconv.Itoa(int(a))); err != nil {
				t.Fatalf("scancel: %v %s%s", err, out, errOut)
			}
			ctldWaitJob(t, c, a, 60*time.Second, "CANCELLED")
			logs[ctl.name] = resyncLines(c, regexp.MustCompile(`Orphan|Registered|wrong node`))
		})
	}
}

// TestSlurmctldResyncMissingBatch: the batch script's slurmstepd dies
// without a word (SIGKILL), so the controller still has the job RUNNING;
// when the node registers again (slurmd restarted) without the job, after
// BatchStartTimeout + min(MessageTimeout, 10) seconds, the controller
// ends it NODE_FAIL with exit code 1 (raw: "0:1", --no-requeue), or requeues it
// (--requeue: pending again, Restarts=1). Both controllers log the same.
func TestSlurmctldResyncMissingBatch(t *testing.T) {
	const grace = 2 + 10 // BatchStartTimeout=2, MessageTimeout default 10
	logs := map[string][]string{}
	defer resyncSameLog(t, logs)
	for _, ctl := range resyncControllers(t) {
		t.Run(ctl.name, func(t *testing.T) {
			c := resyncStart(t, ctl.bin, ctldharness.Options{Nodes: 1, ExtraConf: []string{"BatchStartTimeout=2"}})
			// The script's parent is its slurmstepd; the second job only
			// does it on its first run.
			kill := fmt.Sprintf(`[ -z "$SLURM_RESTART_COUNT" ] && kill -9 $PPID; echo gone > %s/$SLURM_JOB_ID.gone`, c.Dir)
			noRQ := ctldSbatch(t, c, "--no-requeue", "-o", "/dev/null", "--wrap", kill)
			rq := ctldSbatch(t, c, "--requeue", "-o", "/dev/null", "--wrap", kill)
			var started time.Time
			for _, id := range []uint32{noRQ, rq} {
				ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
				ctldWaitFile(t, c, filepath.Join(c.Dir, fmt.Sprintf("%d.gone", id)), "gone\n", 60*time.Second)
				started = time.Now()
			}
			// Neither the node nor anything else told the controller.
			for _, id := range []uint32{noRQ, rq} {
				if st := ctldJobState(c, id); st != "RUNNING" {
					t.Fatalf("job %d: %s before the registration", id, st)
				}
			}
			// Past the grace (counted from the job's start, at most
			// `started`), the node registers again.
			if err := c.Poll(60*time.Second, func() bool { return time.Since(started) > (grace+2)*time.Second }); err != nil {
				t.Fatal(err)
			}
			c.StopNode("n1")
			c.StartNode("n1")
			resyncLog(t, c, regexp.MustCompile(fmt.Sprintf(
				`Batch JobId=%d missing from batch node n1 \(not found BatchStartTime after startup\)\n`, noRQ)))
			resyncLog(t, c, regexp.MustCompile(fmt.Sprintf(
				`Batch JobId=%d missing from batch node n1 \(not found BatchStartTime after startup\), Requeuing job`, rq)))
			ctldWaitJob(t, c, noRQ, 60*time.Second, "NODE_FAIL")
			// exit_code 1 is a raw wait status: "0:1".
			out, _, _ := c.Run("scontrol", "show", "job", strconv.Itoa(int(noRQ)))
			for _, want := range []string{"JobState=NODE_FAIL Reason=None", "Restarts=0", "ExitCode=0:1"} {
				if !strings.Contains(out, want) {
					t.Errorf("job %d: no %q in\n%s", noRQ, want, out)
				}
			}
			ctldWaitJob(t, c, rq, 60*time.Second, "PENDING")
			out, _, _ = c.Run("scontrol", "show", "job", strconv.Itoa(int(rq)))
			for _, want := range []string{"Requeue=1 Restarts=1", "ExitCode=0:1", "NodeList=\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("job %d: no %q in\n%s", rq, want, out)
				}
			}
			// The node is clean again.
			ctldWaitState(t, c, "n1", "idle", 60*time.Second)
			if o, e, err := c.Run("scancel", strconv.Itoa(int(rq))); err != nil {
				t.Fatalf("scancel: %v %s%s", err, o, e)
			}
			logs[ctl.name] = resyncLines(c, regexp.MustCompile(`Batch JobId|_job_complete|Orphan|Registered`))
		})
	}
}
