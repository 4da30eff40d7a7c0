package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldRequeueStartTimeNow: a batch job requeued (running, or
// after it completed) and at once made eligible again with scontrol
// update StartTime=now runs its script a second time and completes, as
// under real slurmctld. Real slurmd refuses a launch whose credential
// was made in the second it revoked the job's credentials ("Job
// credential revoked"), so the controller must not relaunch in the kill's
// second; the rounds are repeated to give that race its chances.
func TestSlurmctldRequeueStartTimeNow(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2})
	const rounds = 3
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		for _, running := range []bool{true, false} {
			for r := range rounds {
				name := fmt.Sprintf("completed %d", r)
				script := `echo run ${SLURM_RESTART_COUNT:-0}`
				if running {
					name = fmt.Sprintf("running %d", r)
					script += `; [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] || sleep 60`
				}
				file := filepath.Join(c.Dir, fmt.Sprintf("rq-%d-%v.out", r, running))
				os.Remove(file)
				id := ctldSbatch(t, c, "-D", c.Dir, "-o", file, "--open-mode=append", "-J", "rq",
					"--requeue", "--wrap", script)
				if running {
					ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
					// RUNNING is shown from the launch's sending on: a
					// requeue whose kill reaches slurmd before the launch
					// makes slurmd refuse it ("Job 2 already killed", seen
					// in CI), and the first run never happens. The
					// script itself says it runs.
					if err := c.Poll(60*time.Second, func() bool {
						b, _ := os.ReadFile(file)
						return strings.Contains(string(b), "run 0")
					}); err != nil {
						t.Logf("job %d: its first run never wrote", id)
					}
				} else {
					ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
				}
				rq := ctldRun(c, "scontrol", "requeue", fmt.Sprint(id))
				// Once its node is clean (batch_requeue_fini pushed its
				// begin time past the credential lifetime), at once.
				ctldWaitJob(t, c, id, 60*time.Second, "PENDING")
				up := ctldRun(c, "scontrol", "update", fmt.Sprintf("JobId=%d", id), "StartTime=now")
				// The second run may end before a poll sees it RUNNING:
				// wait for a final state with the restart counted.
				var fields string
				// State and fields from one query: a second one could
				// see the job end after the fields showed it RUNNING.
				err := c.Poll(60*time.Second, func() bool {
					fields = ctldJobFields(c, id)
					for _, st := range []string{"COMPLETED", "FAILED", "CANCELLED"} {
						if strings.Contains(fields, "JobState="+st+" ") {
							return !strings.Contains(fields, "Restarts=0")
						}
					}
					return false
				})
				if err != nil {
					fields += "--- not ended again in 60s\n"
				}
				var b []byte
				c.Poll(60*time.Second, func() bool {
					b, _ = os.ReadFile(file)
					return len(b) >= len("run 0\nrun 1\n")
				})
				// Only the script's own lines: slurmstepd's requeue
				// message and the shell's "Terminated" interleave with
				// them in no fixed order.
				var runs []string
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "run ") {
						runs = append(runs, l)
					}
				}
				out[name] = "requeue: " + rq + "update: " + up + fields + strings.Join(runs, "\n") + "\n"
			}
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

var requeueExitRE = regexp.MustCompile(`(JobState|Restarts|ExitCode|DerivedExitCode)=\S+`)

// TestSlurmctldRequeueKeepsExitCodes: a job requeued after it failed
// shows its last run's ExitCode and DerivedExitCode while it pends again
// (real clears the exit code only when the job starts, and the derived
// one never), and an array whose failed task is requeued and then
// succeeds still reports the failure in its summary mail (the array's
// exit range counts every run that ended).
func TestSlurmctldRequeueKeepsExitCodes(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"MailProg=" + hookScript(t, dir, "mail")}})
	fields := func(c *ctldharness.Cluster, id string) string {
		out, _, _ := c.Run("scontrol", "-d", "show", "job", "-o", id) // -d: DerivedExitCode
		return fmt.Sprintln(requeueExitRE.FindAllString(out, -1))
	}
	// The first run leaves a failed srun step and then fails (task 1 of
	// an array by a signal, other jobs with exit 3); later runs succeed.
	const script = `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ] && [ "${SLURM_ARRAY_TASK_ID:-1}" = 1 ]; then
srun -n1 sh -c "exit 4"
[ -n "$SLURM_ARRAY_TASK_ID" ] && kill -USR1 $$
exit 3
fi
exit 0`
	done := []string{"COMPLETED", "FAILED", "CANCELLED"}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "one", "--requeue", "--wrap", script)
		ctldWaitJob(t, c, id, 60*time.Second, done...)
		out["job ended"] = fields(c, fmt.Sprint(id))
		out["job requeue"] = ctldRun(c, "scontrol", "requeue", fmt.Sprint(id))
		ctldWaitJob(t, c, id, 60*time.Second, "PENDING")
		// Not the reason: real shows the failed run's (NonZeroExitCode)
		// until a scheduling pass looks at the job, which its requeue
		// does not ask for; ours may already show BeginTime.
		out["job pending again"] = fields(c, fmt.Sprint(id)) +
			ctldRun(c, "squeue", "-h", "-j", fmt.Sprint(id), "-o", "%T")
		ctldRun(c, "scontrol", "update", fmt.Sprintf("JobId=%d", id), "StartTime=now")
		c.Poll(60*time.Second, func() bool {
			return ctldJobState(c, id) == "COMPLETED"
		})
		out["job second run"] = fields(c, fmt.Sprint(id))

		arr := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "arr", "--requeue", "--array=1-2",
			"--mail-type=END,FAIL", "--wrap", script)
		task := fmt.Sprint(arr) + "_1"
		for _, id := range []string{"_1", "_2"} {
			ctldWaitJobStr(t, c, fmt.Sprint(arr)+id, done...)
		}
		out["array ended"] = fields(c, task) + hookRuns(t, c, dir, "mail", 1)
		out["task requeue"] = ctldRun(c, "scontrol", "requeue", task)
		ctldWaitJobStr(t, c, task, "PENDING")
		out["task pending again"] = fields(c, task)
		ctldRun(c, "scontrol", "update", "JobId="+task, "StartTime=now")
		ctldWaitJobStr(t, c, task, "COMPLETED")
		out["array ended again"] = fields(c, task) + hookRuns(t, c, dir, "mail", 1)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}

// TestSlurmctldImmediateFailHooks: an srun --immediate whose allocation
// cannot start at once (its node busy, or its own --begin ahead) fails
// as under real slurmctld: srun's message, the job FAILED with reason
// BadConstraints, its FAIL mail and its jobcomp/filetxt record.
func TestSlurmctldImmediateFailHooks(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "jobcomp.txt")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2, ExtraConf: []string{
		"MailProg=" + hookScript(t, dir, "mail"),
		"JobCompType=jobcomp/filetxt", "JobCompLoc=" + loc}})
	fieldsRE := regexp.MustCompile(`(JobState|Reason|ExitCode|Restarts)=\S+`)
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		if err := os.Truncate(loc, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out := map[string]string{}
		busy := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-J", "busy", "--exclusive", "--wrap", "sleep 300")
		ctldWaitJob(t, c, busy, 60*time.Second, "RUNNING")
		for i, tc := range []struct{ name, arg string }{
			{"node busy", "-w"},
			{"own begin", "--begin=now+3600"},
		} {
			args := []string{"-I", "-J", "imm", "--mail-type=ALL", "-D", c.Dir}
			if tc.arg == "-w" {
				args = append(args, "-w", "n1")
			} else {
				args = append(args, tc.arg)
			}
			srun := ctldRun(c, append(append([]string{"srun"}, args...), "true")...)
			id := busy + uint32(i) + 1
			ctldWaitJob(t, c, id, 60*time.Second, "FAILED")
			show, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
			var b []byte
			c.Poll(60*time.Second, func() bool {
				b, _ = os.ReadFile(loc)
				return strings.Count(string(b), "\n") >= i+1
			})
			recs := strings.SplitAfter(string(b), "\n")
			rec := ""
			if i < len(recs) {
				rec = recs[i]
			}
			out[tc.name] = srun + fmt.Sprintln(fieldsRE.FindAllString(show, -1)) +
				"jobcomp: " + ctldMasked(rec) + "mail:\n" + hookRuns(t, c, dir, "mail", 1)
		}
		ctldRun(c, "scancel", fmt.Sprint(busy))
		ctldWaitJob(t, c, busy, 60*time.Second, "CANCELLED", "COMPLETED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
