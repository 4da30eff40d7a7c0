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

// hookScript writes an executable script that records each run, one file
// per run in dir/name: its arguments, then its environment sorted (less
// what the shell adds itself). then is shell code run after the record.
func hookScript(t *testing.T, dir, name string, then ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".sh")
	script := fmt.Sprintf(`#!/bin/sh
f=$(mktemp %s/run.XXXXXX)
{
  for a in "$0" "$@"; do echo "arg: $a"; done
  env | grep -v -e '^PWD=' -e '^SHLVL=' -e '^_=' -e '^OLDPWD=' | sort
} > "$f.tmp"
mv "$f.tmp" "$f.done"
rm -f "$f"
%s
`, out, strings.Join(then, "\n"))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hookRuns waits until dir/name holds n finished runs and returns them,
// sorted, masked (times, durations), joined.
func hookRuns(t *testing.T, c *ctldharness.Cluster, dir, name string, n int) string {
	t.Helper()
	var files []string
	err := c.Poll(60*time.Second, func() bool {
		files, _ = filepath.Glob(filepath.Join(dir, name, "*.done"))
		return len(files) >= n
	})
	var runs []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		runs = append(runs, hookMasked(string(b)))
		os.Remove(f)
	}
	sort.Strings(runs)
	s := strings.Join(runs, "----\n")
	if err != nil {
		s += fmt.Sprintf("--- only %d runs of %s, want %d\n", len(files), name, n)
	}
	return s
}

var hookDurRE = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)

func hookMasked(s string) string {
	return hookDurRE.ReplaceAllString(ctldMasked(s), "<dur>")
}

// TestSlurmctldMailProg: MailProg runs as real slurmctld runs it (the
// "-s subject recipient" arguments and the environment) for BEGIN, END,
// FAIL, REQUEUE, a pending job cancelled, arrays summarised or per task,
// and MailDomain for the default recipient.
func TestSlurmctldMailProg(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf: []string{"MailProg=" + hookScript(t, dir, "mail"), "MailDomain=example.org"}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		wd := c.Dir
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", wd, "-o", "/dev/null"}, args...)...)
		}
		done := []string{"COMPLETED", "FAILED", "CANCELLED"}
		a := sb("-J", "ok", "--mail-type=ALL", "--mail-user=alice@site", "--wrap", "sleep 1")
		b := sb("-J", "bad", "--mail-type=BEGIN,END,FAIL", "--wrap", "exit 3")
		ctldWaitJob(t, c, a, 60*time.Second, done...)
		ctldWaitJob(t, c, b, 60*time.Second, done...)
		out["show job"] = hookMasked(ctldRun(c, "scontrol", "show", "job", fmt.Sprint(a))) // RunTime: timing
		out["single jobs"] = hookRuns(t, c, dir, "mail", 4)

		h := sb("-J", "held", "-H", "--mail-type=END", "--wrap", "true")
		ctldRun(c, "scancel", fmt.Sprint(h))
		ctldWaitJob(t, c, h, 60*time.Second, done...)
		out["pending cancelled"] = hookRuns(t, c, dir, "mail", 1)

		r := sb("-J", "rq", "--requeue", "--mail-type=REQUEUE,END", "--wrap", "sleep 60")
		ctldWaitJob(t, c, r, 60*time.Second, "RUNNING")
		ctldRun(c, "scontrol", "requeue", fmt.Sprint(r))
		out["requeued"] = hookRuns(t, c, dir, "mail", 1)
		ctldWaitJob(t, c, r, 60*time.Second, "PENDING") // its node clean
		ctldRun(c, "scancel", fmt.Sprint(r))
		ctldWaitJob(t, c, r, 60*time.Second, done...)
		out["requeued then cancelled"] = hookRuns(t, c, dir, "mail", 1)

		arr := sb("-J", "arr", "--array=1-3", "--mail-type=BEGIN,END", "--wrap", "exit $SLURM_ARRAY_TASK_ID")
		for _, id := range []string{"_1", "_2", "_3"} {
			ctldWaitJobStr(t, c, fmt.Sprint(arr)+id, done...)
		}
		out["array summary"] = hookRuns(t, c, dir, "mail", 2)
		tasks := sb("-J", "tasks", "--array=1-2", "--mail-type=BEGIN,END,ARRAY_TASKS", "--wrap", "true")
		for _, id := range []string{"_1", "_2"} {
			ctldWaitJobStr(t, c, fmt.Sprint(tasks)+id, done...)
		}
		out["array tasks"] = hookRuns(t, c, dir, "mail", 4)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// ctldWaitJobStr waits for a job named by its id string (array tasks).
func ctldWaitJobStr(t *testing.T, c *ctldharness.Cluster, id string, states ...string) {
	t.Helper()
	var last string
	err := c.Poll(60*time.Second, func() bool {
		o, _, _ := c.Run("squeue", "-h", "-t", "all", "-j", id, "-o", "%T")
		last = strings.TrimSpace(o)
		for _, s := range states {
			if last == s {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("job %s: state %q, want %v: %v", id, last, states, err)
	}
}

// TestSlurmctldMailTimeLimit: --mail-type=TIME_LIMIT_50 mails once half
// the time limit has run, as real slurmctld's time-limit check does.
func TestSlurmctldMailTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("waits half a minute per controller")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"MailProg=" + hookScript(t, dir, "mail")}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "tl", "--time=1",
			"--mail-type=TIME_LIMIT_50", "--wrap", "sleep 58")
		ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
		out["time limit 50%"] = hookRuns(t, c, dir, "mail", 1)
		// When the check runs is each controller's own: real's comes
		// later in the half minute, so the run times are masked.
		out["show job"] = hookMasked(ctldRun(c, "scontrol", "show", "job", fmt.Sprint(id)))
		ctldRun(c, "scancel", fmt.Sprint(id))
		ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldMailArrayStart: an array without ARRAY_TASKS is mailed
// BEGIN once, a summary from the meta record, for the first task to
// start while none has ended: an array of one task (the meta record runs
// it), a throttled array whose second task starts after the first ended,
// one with a task cancelled while pending (status 9: "Mixed, MaxSignal"),
// and one whose task is requeued by scontrol (no mail: the task did not
// end) and runs again (no second BEGIN; REQUEUE and "with requeued tasks"
// at its end), as real slurmctld's _first_array_task and
// job_completion_logger.
func TestSlurmctldMailArrayStart(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"MailProg=" + hookScript(t, dir, "mail")}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		sb := func(args ...string) string {
			return fmt.Sprint(ctldSbatch(t, c, append([]string{"-D", c.Dir, "-o", "/dev/null"}, args...)...))
		}
		done := []string{"COMPLETED", "FAILED", "CANCELLED"}
		one := sb("-J", "one", "--array=5", "--mail-type=BEGIN,END", "--wrap", "true")
		ctldWaitJobStr(t, c, one+"_5", done...)
		out["one task"] = hookRuns(t, c, dir, "mail", 2)

		thr := sb("-J", "thr", "--array=0-1%1", "--mail-type=BEGIN,END", "--wrap", "sleep 1")
		ctldWaitJobStr(t, c, thr+"_0", done...)
		ctldWaitJobStr(t, c, thr+"_1", done...)
		out["throttled"] = hookRuns(t, c, dir, "mail", 2)

		cp := sb("-J", "cp", "--array=0-1%1", "--mail-type=BEGIN,END", "--wrap", "sleep 3")
		ctldWaitJobStr(t, c, cp+"_0", "RUNNING")
		ctldRun(c, "scancel", cp+"_1")
		ctldWaitJobStr(t, c, cp+"_0", done...)
		out["cancelled pending"] = hookRuns(t, c, dir, "mail", 2)

		rq := sb("-J", "rq", "--array=3", "--requeue", "--mail-type=BEGIN,END,REQUEUE", "--wrap", "sleep 2")
		ctldWaitJobStr(t, c, rq+"_3", "RUNNING")
		out["begin"] = hookRuns(t, c, dir, "mail", 1)
		ctldRun(c, "scontrol", "requeue", rq+"_3")
		requeued := time.Now()
		ctldWaitJobStr(t, c, rq+"_3", "PENDING")
		// The task is requeued, not ended (JOB_REQUEUE is a flag): no
		// mail yet; one sent late would show in the next runs.
		out["requeued"] = hookRuns(t, c, dir, "mail", 0)
		// The new run's credential must be newer (in whole seconds) than
		// the revocation of the last one, or slurmd refuses the launch.
		if err := c.Poll(60*time.Second, func() bool { return time.Since(requeued) > 2*time.Second }); err != nil {
			t.Fatal(err)
		}
		ctldRun(c, "scontrol", "update", "JobId="+rq+"_3", "StartTime=now")
		ctldWaitJobStr(t, c, rq+"_3", done...)
		out["run again"] = hookRuns(t, c, dir, "mail", 2)

		// A requeue counted before any task ended leaves the summary's
		// lowest exit code at 0 (_job_array_comp): "Mixed, ExitCode [0-1]".
		mx := sb("-J", "mx", "--array=1-2", "--requeue", "--mail-type=END,FAIL", "--wrap", "sleep 4; exit 1")
		ctldWaitJobStr(t, c, mx+"_1", "RUNNING")
		ctldWaitJobStr(t, c, mx+"_2", "RUNNING")
		ctldRun(c, "scontrol", "requeue", mx+"_1")
		requeued = time.Now()
		ctldWaitJobStr(t, c, mx+"_1", "PENDING")
		if err := c.Poll(60*time.Second, func() bool { return time.Since(requeued) > 2*time.Second }); err != nil {
			t.Fatal(err)
		}
		ctldRun(c, "scontrol", "update", "JobId="+mx+"_1", "StartTime=now")
		ctldWaitJobStr(t, c, mx+"_2", done...)
		ctldWaitJobStr(t, c, mx+"_1", done...)
		out["requeued first"] = hookRuns(t, c, dir, "mail", 1)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
