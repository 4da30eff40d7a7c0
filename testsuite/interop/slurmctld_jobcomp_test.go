package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldJobCompFiletxt: JobCompType=jobcomp/filetxt writes one
// record per finished job to JobCompLoc, field for field as real
// slurmctld: completed, failed, cancelled while pending and while
// running, requeued, array tasks, a time limit, a job shrunk.
func TestSlurmctldJobCompFiletxt(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "jobcomp.txt")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"JobCompType=jobcomp/filetxt", "JobCompLoc=" + loc}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		// Real slurmctld keeps JobCompLoc open (O_APPEND): empty it, do
		// not remove it.
		if err := os.Truncate(loc, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out := map[string]string{}
		wd := c.Dir
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", wd, "-o", "/dev/null"}, args...)...)
		}
		done := []string{"COMPLETED", "FAILED", "CANCELLED"}
		lines := func(n int) string {
			var b []byte
			err := c.Poll(60*time.Second, func() bool {
				b, _ = os.ReadFile(loc)
				return strings.Count(string(b), "\n") >= n
			})
			// Array tasks end together: their order is not the test's.
			recs := strings.SplitAfter(string(b), "\n")
			sort.Strings(recs)
			s := ctldMasked(strings.Join(recs, ""))
			if err != nil {
				s += fmt.Sprintf("--- %d records, want %d\n", strings.Count(string(b), "\n"), n)
			}
			return s
		}
		a := sb("-J", "ok", "--time=5", "--wrap", "true")
		ctldWaitJob(t, c, a, 60*time.Second, done...)
		b := sb("-J", "bad", "-N", "2", "--wrap", "exit 3")
		ctldWaitJob(t, c, b, 60*time.Second, done...)
		h := sb("-J", "held", "-H", "--wrap", "true")
		ctldRun(c, "scancel", fmt.Sprint(h))
		ctldWaitJob(t, c, h, 60*time.Second, done...)
		r := sb("-J", "run", "--requeue", "--wrap", "sleep 60")
		ctldWaitJob(t, c, r, 60*time.Second, "RUNNING")
		ctldRun(c, "scontrol", "requeue", fmt.Sprint(r))
		ctldWaitJob(t, c, r, 60*time.Second, "PENDING")
		ctldRun(c, "scancel", fmt.Sprint(r))
		ctldWaitJob(t, c, r, 60*time.Second, done...)
		k := sb("-J", "kill", "--wrap", "sleep 60")
		ctldWaitJob(t, c, k, 60*time.Second, "RUNNING")
		ctldRun(c, "scancel", fmt.Sprint(k))
		ctldWaitJob(t, c, k, 60*time.Second, done...)
		out["singles"] = lines(6)
		arr := sb("-J", "arr", "--array=1-2", "--wrap", "exit $SLURM_ARRAY_TASK_ID")
		for _, id := range []string{"_1", "_2"} {
			ctldWaitJobStr(t, c, fmt.Sprint(arr)+id, done...)
		}
		out["with array"] = lines(8)
		// A shrink (job_pre_resize_acctg) logs the job up to it as
		// RESIZING; its end record then starts at the resize.
		s := sb("-J", "shrink", "-N", "2", "--wrap", "sleep 60")
		ctldWaitJob(t, c, s, 60*time.Second, "RUNNING")
		out["shrink"] = ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", s), "NumNodes=1")
		ctldRun(c, "scancel", fmt.Sprint(s))
		ctldWaitJob(t, c, s, 60*time.Second, done...)
		out["with resize"] = lines(10)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

var epochRE = regexp.MustCompile(`=1\d{9}\n`)

// TestSlurmctldJobCompScript: JobCompType=jobcomp/script runs JobCompLoc
// once per finished job with real slurmctld's environment.
func TestSlurmctldJobCompScript(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"JobCompType=jobcomp/script", "JobCompLoc=" + hookScript(t, dir, "jobcomp")}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		wd := c.Dir
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", wd, "-o", "/dev/null"}, args...)...)
		}
		done := []string{"COMPLETED", "FAILED", "CANCELLED"}
		runs := func(n int) string { return epochRE.ReplaceAllString(hookRuns(t, c, dir, "jobcomp", n), "=<epoch>\n") }
		a := sb("-J", "ok", "--time=5", "--wrap", "true")
		ctldWaitJob(t, c, a, 60*time.Second, done...)
		out["ok"] = runs(1)
		b := sb("-J", "bad", "-N", "2", "--wrap", "exit 3")
		ctldWaitJob(t, c, b, 60*time.Second, done...)
		out["bad"] = runs(1)
		h := sb("-J", "held", "-H", "--wrap", "true")
		ctldRun(c, "scancel", fmt.Sprint(h))
		ctldWaitJob(t, c, h, 60*time.Second, done...)
		out["held"] = runs(1)
		arr := sb("-J", "arr", "--array=1-2", "--wrap", "true")
		for _, id := range []string{"_1", "_2"} {
			ctldWaitJobStr(t, c, fmt.Sprint(arr)+id, done...)
		}
		out["array"] = runs(2)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldHooksNodeFail: a batch job requeued because its node went
// DOWN is mailed FAIL and REQUEUE, recorded NODE_FAIL by jobcomp/filetxt,
// and gets EpilogSlurmctld (restart count not yet bumped), as real
// slurmctld's kill_running_job_by_node_name does.
func TestSlurmctldHooksNodeFail(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for SlurmdTimeout per controller")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "jobcomp.txt")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"SlurmdTimeout=6", "MailProg=" + hookScript(t, dir, "mail"),
		"EpilogSlurmctld=" + hookScript(t, dir, "epilog"),
		"JobCompType=jobcomp/filetxt", "JobCompLoc=" + loc}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		if err := os.Truncate(loc, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out := map[string]string{}
		id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "nf", "-w", "n2", "--requeue",
			"--mail-type=FAIL,REQUEUE,END", "--wrap", "sleep 120")
		ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
		c.StopNode("n2")
		ctldWaitState(t, c, "n2", "down*", 60*time.Second)
		out["mail"] = hookRuns(t, c, dir, "mail", 2)
		out["epilog"] = hookRuns(t, c, dir, "epilog", 1)
		b, _ := os.ReadFile(loc)
		out["jobcomp"] = ctldMasked(string(b))
		ctldWaitJob(t, c, id, 60*time.Second, "PENDING")
		out["job"] = ctldJobFields(c, id)
		ctldRun(c, "scancel", fmt.Sprint(id))
		ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
		out["mail after scancel"] = hookRuns(t, c, dir, "mail", 1)
		c.StartNode("n2")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldJobCompFiletxtHostileNames: jobcomp/filetxt prints user
// text as it is, field by field: a job name holding field names, '=',
// spaces or a newline changes no other field, and a record longer than
// the plugin's buffer is cut as real slurmctld cuts it.
func TestSlurmctldJobCompFiletxtHostileNames(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "jobcomp.txt")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2, ExtraConf: []string{
		"JobCompType=jobcomp/filetxt", "JobCompLoc=" + loc}})
	names := []string{
		"x TimeLimit=1 Tres=cpu=99 JobState=COMPLETED",
		"sp  ace=eq = ",
		"two\nJobId=9 lines",
		strings.Repeat("long", 240),
	}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		if err := os.Truncate(loc, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out := map[string]string{}
		var size int64
		for i, name := range names {
			id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", name, "--time=3", "--wrap", "true")
			ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED", "FAILED", "CANCELLED")
			var b []byte
			err := c.Poll(60*time.Second, func() bool {
				b, _ = os.ReadFile(loc)
				return int64(len(b)) > size
			})
			rec := ctldMasked(string(b[size:]))
			if err != nil {
				rec += "--- no record\n"
			}
			out[fmt.Sprintf("record %d", i)] = fmt.Sprintf("%d bytes: %q", len(b)-int(size), rec)
			size = int64(len(b))
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	for i := range names {
		t.Logf("record %d (real slurmctld): %s", i, want[fmt.Sprintf("record %d", i)])
	}
	ctldCompare(t, want, got)
}

// TestSlurmctldHooksNodeFailEpilogWait: a job that may not be requeued
// whose only node goes DOWN ends NODE_FAIL but stays COMPLETING while
// EpilogSlurmctld runs, as real slurmctld's deallocate_nodes and
// cleanup_completing wait for the epilog; a requeued one pends
// COMPLETING until then.
func TestSlurmctldHooksNodeFailEpilogWait(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for SlurmdTimeout per controller")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"SlurmdTimeout=6", "EpilogSlurmctld=" + hookScript(t, dir, "epilog", hookWait(dir, "wait"))}})
	gate := filepath.Join(dir, "go-wait")
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		os.Remove(gate)
		out := map[string]string{}
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", c.Dir, "-o", "/dev/null", "-J", "wait", "-w", "n2",
				"--wrap", "sleep 120"}, args...)...)
		}
		kill, rq := sb("--no-requeue"), sb("--requeue")
		ctldWaitJob(t, c, kill, 60*time.Second, "RUNNING")
		ctldWaitJob(t, c, rq, 60*time.Second, "RUNNING")
		c.StopNode("n2")
		ctldWaitState(t, c, "n2", "down*", 60*time.Second)
		hookRuns(t, c, dir, "epilog", 2) // both epilogs run, waiting for the gate
		out["no requeue: epilog running"] = ctldJobFields(c, kill) +
			ctldRun(c, "squeue", "-h", "-j", fmt.Sprint(kill), "-o", "%T")
		out["requeue: epilog running"] = ctldJobFields(c, rq) +
			ctldRun(c, "squeue", "-h", "-j", fmt.Sprint(rq), "-o", "%T")
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ctldWaitJob(t, c, kill, 60*time.Second, "NODE_FAIL")
		ctldWaitJob(t, c, rq, 60*time.Second, "PENDING")
		out["no requeue: done"] = ctldJobFields(c, kill)
		out["requeue: done"] = ctldJobFields(c, rq)
		ctldRun(c, "scancel", fmt.Sprint(rq))
		ctldWaitJob(t, c, rq, 60*time.Second, "CANCELLED")
		c.StartNode("n2")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
