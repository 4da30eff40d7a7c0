package interop

// Job arrays whose throttle is reached and arrays split down to one
// pending task, real slurmctld against ours, seen with the real squeue
// (text and --json) and scontrol show job.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// arrayReasonFields are the fields of `scontrol show job -o` the tests
// compare: the ones an array record's identity and pending reason show in.
var arrayReasonFields = regexp.MustCompile(`\b(ArrayJobId|ArrayTaskId|ArrayTaskThrottle|JobState|Reason|EligibleTime)=\S+`)

// arrayRecords is what the real commands show of every record of arrays:
// squeue with and without -r, the array fields of scontrol show job, and
// of squeue --json. Lines are sorted: the record order is not the point.
func arrayRecords(t *testing.T, c *ctldharness.Cluster, ids ...uint32) map[string]string {
	t.Helper()
	out := map[string]string{}
	var list []string
	for _, id := range ids {
		list = append(list, fmt.Sprint(id))
	}
	jobs := strings.Join(list, ",")
	sorted := sortedLines
	out["squeue"] = sorted(ctldRun(c, "squeue", "-h", "-j", jobs, "-o", "%i|%F|%K|%T|%r"))
	out["squeue -r"] = sorted(ctldRun(c, "squeue", "-h", "-r", "-j", jobs, "-o", "%i|%F|%K|%T|%r"))
	var show []string
	for _, id := range ids {
		o, _, err := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
		if err != nil {
			t.Fatalf("scontrol show job %d: %v", id, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(o), "\n") {
			show = append(show, strings.Join(arrayReasonFields.FindAllString(line, -1), " "))
		}
	}
	out["scontrol show job"] = sorted(strings.Join(show, "\n"))
	js, _, err := c.Run("squeue", "--json")
	if err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	var doc struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("squeue --json: %v\n%s", err, js)
	}
	keys := []string{"array_job_id", "array_task_id", "array_task_string", "array_max_tasks", "job_state", "state_reason"}
	var recs []string
	for _, j := range doc.Jobs {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%v ", k, j[k])
		}
		recs = append(recs, b.String())
	}
	out["squeue --json"] = sorted(strings.Join(recs, "\n"))
	return out
}

// sortedLines sorts the lines of s.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// waitRunningTasks waits (60 s at most) until n tasks of array id run.
func waitRunningTasks(t *testing.T, c *ctldharness.Cluster, id uint32, n int) {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-r", "-t", "R", "-j", fmt.Sprint(id), "-o", "%i")
		last = o
		return err == nil && len(strings.Fields(o)) == n
	}); err != nil {
		o, _, _ := c.Run("squeue", "-r")
		t.Fatalf("array %d: running %q, want %d tasks: %v\n%s", id, last, n, err, o)
	}
}

// TestSlurmctldArrayThrottleReason: once tasks start up to the array's
// % throttle, the pending rest shows JobArrayTaskLimit at once (the pass
// that started them sets it, job_array_start_test), not from the next
// pass on; an array left with one pending task after the start shows that
// task's id (1-3%2: "<id>_3") rather than a task range.
func TestSlurmctldArrayThrottleReason(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster twice")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	// Two nodes of two CPUs: four one-CPU tasks fit, so only the
	// throttles keep tasks pending.
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2,
		ExtraConf: []string{"SchedulerParameters=batch_sched_delay=0"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		three := ctldSbatch(t, c, "-a", "1-3%2", "-J", "three", "-t", "30", "-o", "/dev/null", "--wrap", "sleep 600")
		waitRunningTasks(t, c, three, 2)
		out := map[string]string{}
		for k, v := range arrayRecords(t, c, three) {
			out["1-3%2 "+k] = v
		}
		five := ctldSbatch(t, c, "-a", "1-5%1", "-J", "five", "-t", "30", "-o", "/dev/null", "--wrap", "sleep 600")
		waitRunningTasks(t, c, five, 1)
		for k, v := range arrayRecords(t, c, three, five) {
			out["1-5%1 "+k] = v
		}
		ctldRun(c, "scancel", fmt.Sprint(three), fmt.Sprint(five))
		return out
	})
	ctldCompare(t, want, got)
}

// TestSlurmctldArraySplitLastTask: scontrol update of some pending tasks
// splits them off the array; when that leaves one task pending in the
// array's own record, the record becomes that task (job_array_split),
// shown as "<id>_<task>" by squeue, scontrol and squeue --json.
func TestSlurmctldArraySplitLastTask(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster twice")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2,
		ExtraConf: []string{"SchedulerParameters=batch_sched_delay=0"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		one := ctldSbatch(t, c, "-H", "-a", "1-3", "-J", "one", "-o", "/dev/null", "--wrap", "true")
		two := ctldSbatch(t, c, "-H", "-a", "1-3%2", "-J", "two", "-o", "/dev/null", "--wrap", "true")
		three := ctldSbatch(t, c, "-H", "-a", "1-4", "-J", "three", "-o", "/dev/null", "--wrap", "true")
		// One task at a time: the first split leaves two pending, the
		// second one.
		for _, s := range []string{fmt.Sprintf("%d_1", one), fmt.Sprintf("%d_2", one),
			// Two named at once; the task left is one not named.
			fmt.Sprintf("%d_[2-3]", two),
			// Named tasks that are not all pending tasks, then the rest.
			fmt.Sprintf("%d_[1-2]", three), fmt.Sprintf("%d_[3-4]", three)} {
			out["update "+s] = ctldRun(c, "scontrol", "update", "JobId="+s, "Comment=split")
		}
		for k, v := range arrayRecords(t, c, one, two, three) {
			out["split "+k] = v
		}
		// The record left answers for its task: released, it runs.
		out["release"] = ctldRun(c, "scontrol", "release", fmt.Sprintf("%d_3", one))
		task := fmt.Sprintf("%d_3", one)
		if err := c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run("squeue", "-h", "-j", task, "-t", "all", "-o", "%T")
			return err == nil && strings.TrimSpace(o) == "COMPLETED"
		}); err != nil {
			t.Fatalf("%s did not complete: %v\n%s", task, err, ctldRun(c, "squeue", "-t", "all"))
		}
		out["released: squeue"] = sortedLines(ctldRun(c, "squeue", "-h", "-j", fmt.Sprint(one), "-t", "all", "-o", "%i|%T|%r"))
		ctldRun(c, "scancel", fmt.Sprint(two), fmt.Sprint(three))
		return out
	})
	ctldCompare(t, want, got)
}
