package interop

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// hookWait is shell code that makes a hook wait (at most a minute) for
// the file dir/go-<job name> when the job is named wait, and fail when it
// is named fail*.
func hookWait(dir, wait string) string {
	return fmt.Sprintf(`if [ "$SLURM_JOB_NAME" = %s ]; then
  i=0; while [ ! -e %s/go-$SLURM_JOB_NAME ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
fi
case "$SLURM_JOB_NAME" in fail*) exit 1;; esac
exit 0`, wait, dir)
}

var showJobKeepRE = regexp.MustCompile(`(JobState|Restarts|ExitCode|BatchFlag|Requeue)=\S+`)

// ctldJobFields is the part of scontrol show job the hooks change.
func ctldJobFields(c *ctldharness.Cluster, id uint32) string {
	out, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
	return fmt.Sprintln(showJobKeepRE.FindAllString(out, -1))
}

// TestSlurmctldPrologEpilogSlurmctld: PrologSlurmctld and EpilogSlurmctld
// run as real slurmctld runs them (arguments, environment), the job is
// CONFIGURING until the prolog ends and launched only then, a failing
// prolog requeues a batch job or cancels one that may not be requeued, and
// the job is COMPLETING until the epilog ends.
func TestSlurmctldPrologEpilogSlurmctld(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"PrologSlurmctld=" + hookScript(t, dir, "prolog", hookWait(dir, "waitpro")),
		"EpilogSlurmctld=" + hookScript(t, dir, "epilog", hookWait(dir, "waitepi")),
	}})
	release := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, "go-"+name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		for _, g := range []string{"go-waitpro", "go-waitepi", "prolog/*", "epilog/*"} {
			left, _ := filepath.Glob(filepath.Join(dir, g))
			for _, f := range left {
				os.Remove(f)
			}
		}
		out := map[string]string{}
		wd := c.Dir
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", wd, "-o", "/dev/null"}, args...)...)
		}
		done := []string{"COMPLETED", "FAILED", "CANCELLED"}
		a := sb("-J", "ok", "--wrap", "exit 2")
		ctldWaitJob(t, c, a, 60*time.Second, done...)
		out["ok: prolog"] = hookRuns(t, c, dir, "prolog", 1)
		out["ok: epilog"] = hookRuns(t, c, dir, "epilog", 1)
		out["ok: job"] = ctldJobFields(c, a)

		w := sb("-J", "waitpro", "--wrap", "true")
		ctldWaitJob(t, c, w, 60*time.Second, "CONFIGURING")
		out["waitpro: configuring"] = ctldJobFields(c, w)
		out["waitpro: squeue"] = ctldRun(c, "squeue", "-h", "-j", fmt.Sprint(w), "-o", "%T %r %t")
		release("waitpro")
		ctldWaitJob(t, c, w, 60*time.Second, done...)
		out["waitpro: done"] = ctldJobFields(c, w)
		hookRuns(t, c, dir, "prolog", 1)
		hookRuns(t, c, dir, "epilog", 1)

		e := sb("-J", "waitepi", "--wrap", "true")
		ctldWaitJob(t, c, e, 60*time.Second, "COMPLETING")
		hookRuns(t, c, dir, "epilog", 1)
		out["waitepi: completing"] = ctldJobFields(c, e)
		release("waitepi")
		ctldWaitJob(t, c, e, 60*time.Second, done...)
		out["waitepi: done"] = ctldJobFields(c, e)
		hookRuns(t, c, dir, "prolog", 1)

		f := sb("-J", "failrq", "--requeue", "--wrap", "true")
		out["failrq: prolog"] = hookRuns(t, c, dir, "prolog", 1)
		ctldWaitJob(t, c, f, 60*time.Second, "PENDING")
		out["failrq: epilog"] = hookRuns(t, c, dir, "epilog", 1)
		out["failrq: job"] = ctldJobFields(c, f)
		ctldRun(c, "scancel", fmt.Sprint(f))

		n := sb("-J", "failnorq", "--no-requeue", "--wrap", "true")
		out["failnorq: prolog"] = hookRuns(t, c, dir, "prolog", 1)
		ctldWaitJob(t, c, n, 60*time.Second, done...)
		// No "failnorq: epilog": real slurmctld ran EpilogSlurmctld for
		// this job in one run and not in another (ours runs it).
		out["failnorq: job"] = ctldJobFields(c, n)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldPrologSlurmctldSrun: an srun allocation whose
// PrologSlurmctld is still running is CONFIGURING; srun's step waits for
// the prolog, then runs.
func TestSlurmctldPrologSlurmctldSrun(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"PrologSlurmctld=" + hookScript(t, dir, "prolog", hookWait(dir, "waitpro")),
	}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		os.Remove(filepath.Join(dir, "go-waitpro"))
		out := map[string]string{}
		res := make(chan string, 1)
		go func() { res <- ctldRun(c, "srun", "-J", "waitpro", "-D", c.Dir, "echo", "ran") }()
		var id string
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("squeue", "-h", "-n", "waitpro", "-t", "all", "-o", "%i %T")
			var st string
			fmt.Sscan(o, &id, &st)
			return st == "CONFIGURING"
		}); err != nil {
			t.Fatalf("srun job not CONFIGURING: %v", err)
		}
		out["configuring: squeue"] = ctldRun(c, "squeue", "-h", "-j", id, "-o", "%T %r %t")
		out["configuring: prolog"] = hookRuns(t, c, dir, "prolog", 1)
		if err := os.WriteFile(filepath.Join(dir, "go-waitpro"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case o := <-res:
			out["srun"] = o
		case <-time.After(90 * time.Second):
			t.Fatal("srun did not end after the prolog")
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldPrologSlurmctldTimeout: a PrologSlurmctld still running
// after PrologEpilogTimeout is killed and counts as failed: the batch job
// is requeued.
func TestSlurmctldPrologSlurmctldTimeout(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2, ExtraConf: []string{
		"PrologSlurmctld=" + hookScript(t, dir, "prolog", hookWait(dir, "waitpro")),
		"PrologEpilogTimeout=2",
	}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "waitpro", "--requeue", "--wrap", "true")
		out["prolog"] = hookRuns(t, c, dir, "prolog", 1)
		ctldWaitJob(t, c, id, 60*time.Second, "PENDING")
		out["job"] = ctldJobFields(c, id)
		ctldRun(c, "scancel", fmt.Sprint(id))
		ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldEpilogSlurmctldRestart: the controller crashes while
// EpilogSlurmctld runs for a job one of whose nodes is still completing
// (its slurmd epilog waits). On restart the controller runs
// EpilogSlurmctld again and tells the node again to end the job; the job
// stays COMPLETING until both the node and the new epilog are done (real
// slurmctld does not save whether the epilog had ended:
// _sync_nodes_to_comp_job calls deallocate_nodes again). The node's
// epilog ends either after the restart ("live") or while the controller
// is down ("lost": slurmd gives up sending its epilog complete, and only
// the new REQUEST_TERMINATE_JOB gets the node out of COMPLETING).
func TestSlurmctldEpilogSlurmctldRestart(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The node epilog waits (at most a minute) for dir/go-<node> while
	// dir/hold-<node> exists, then leaves dir/done-<job>-<node>.
	nodeEpilog := filepath.Join(dir, "node-epilog.sh")
	if err := os.WriteFile(nodeEpilog, fmt.Appendf(nil, `#!/bin/sh
if [ -e %[1]s/hold-$SLURMD_NODENAME ]; then
  i=0; while [ ! -e %[1]s/go-$SLURMD_NODENAME ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  touch %[1]s/done-$SLURM_JOB_ID-$SLURMD_NODENAME
fi
exit 0
`, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"EpilogSlurmctld=" + hookScript(t, dir, "epilog", hookWait(dir, "waitepi")),
		"Epilog=" + nodeEpilog,
	}})
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clean := func() {
		for _, g := range []string{"go-*", "hold-*", "done-*", "epilog/*"} {
			left, _ := filepath.Glob(filepath.Join(dir, g))
			for _, f := range left {
				os.Remove(f)
			}
		}
	}
	sendFailures := func() int {
		b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmd-n2.log"))
		return strings.Count(string(b), "Unable to send epilog complete message")
	}
	// crash runs a job whose EpilogSlurmctld and n2 epilog wait, and
	// kills the controller once the job is COMPLETING on n2 and saved so.
	crash := func(t *testing.T, c *ctldharness.Cluster, out map[string]string, tag string, dummy uint32) uint32 {
		clean()
		touch("hold-n2")
		e := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "waitepi", "-N", "2", "--wrap", "true")
		ctldWaitJob(t, c, e, 60*time.Second, "COMPLETING")
		out[tag+" before: epilog"] = hookRuns(t, c, dir, "epilog", 1)
		if err := c.Poll(60*time.Second, func() bool { return ctldNodeStates(c) == "n1=idle n2=completing" }); err != nil {
			t.Fatalf("nodes %q, want n1 idle and n2 completing", ctldNodeStates(c))
		}
		// The state on disk must have all this before the crash: a
		// change made after it, found in a state file. A file's mtime
		// is not enough: real slurmctld packs its job_state, then
		// writes and fsyncs it, then does the same for node_state, so
		// under load a node_state written after this point can come
		// with a job_state packed before the job started or was even
		// submitted (seen: the restarted real slurmctld had the job
		// PENDING, or did not know it).
		mark := fmt.Sprintf("%s-save-%d", tag, time.Now().UnixNano())
		ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", dummy), "comment="+mark)
		if err := c.Poll(60*time.Second, func() bool { return stateHolds(filepath.Join(c.Dir, "state"), mark) }); err != nil {
			t.Fatalf("comment %s not saved: %v", mark, err)
		}
		c.KillCtld()
		return e
	}
	// finish checks the job after the restart and lets it end.
	finish := func(t *testing.T, c *ctldharness.Cluster, out map[string]string, tag string, e uint32) {
		out[tag+" restart: epilog"] = hookRuns(t, c, dir, "epilog", 1)
		if err := c.Poll(60*time.Second, func() bool { return strings.HasPrefix(ctldNodeStates(c), "n1=idle n2=idle") }); err != nil {
			t.Errorf("%s: nodes %q after the node epilog, want idle", tag, ctldNodeStates(c))
		}
		out[tag+" node done: job"] = ctldJobFields(c, e)
		touch("go-waitepi")
		ctldWaitJob(t, c, e, 60*time.Second, "COMPLETED")
		out[tag+" done: job"] = ctldJobFields(c, e)
	}
	run := func(t *testing.T, c *ctldharness.Cluster, bin string) map[string]string {
		out := map[string]string{}
		dummy := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "dummy", "-H", "--wrap", "true")

		e := crash(t, c, out, "live", dummy)
		c.StartCtld(bin)
		out["live restart: job"] = ctldJobFields(c, e)
		touch("go-n2")
		finish(t, c, out, "live", e)

		failed := sendFailures()
		e = crash(t, c, out, "lost", dummy)
		touch("go-n2")
		if err := c.Poll(60*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("done-%d-n2", e)))
			return err == nil && sendFailures() > failed
		}); err != nil {
			t.Fatalf("slurmd on n2 did not give up its epilog complete: %v", err)
		}
		c.StartCtld(bin)
		out["lost restart: job"] = ctldJobFields(c, e)
		finish(t, c, out, "lost", e)
		ctldRun(c, "scancel", fmt.Sprint(dummy))
		return out
	}
	c.Start(real, "-c", "-i")
	want := run(t, c, real)
	c.Stop()
	c.Start(ours, "-c")
	got := run(t, c, ours)
	c.Stop()
	for _, k := range []string{"live restart: epilog", "lost restart: job", "lost node done: job"} {
		t.Logf("%s (real slurmctld):\n%s", k, want[k])
	}
	ctldCompare(t, want, got)
}

// stateHolds reports whether a state file in dir (not one being written:
// *.new, *.tmp) holds s.
func stateHolds(dir, s string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if strings.HasSuffix(f, ".new") || strings.HasSuffix(f, ".tmp") {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
