package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var derivedKeepRE = regexp.MustCompile(`(JobState|Reason|ExitCode|DerivedExitCode)=\S+`)

// derivedLostKeepRE leaves out the exit code of the job whose node went
// DOWN: it depends on whether the batch script's end, sent when the node's
// slurmd kills it, arrived before the query.
var derivedLostKeepRE = regexp.MustCompile(`\b(JobState|Reason|DerivedExitCode)=\S+`)

// TestSlurmctldDerivedExitCodeLostStep: a job's derived exit code is the
// highest of its srun steps'; a step still running when its node goes
// DOWN never reports its end, and real slurmctld's cleanup counts it as
// NO_VAL (DerivedExitCode=0:126 in scontrol show job -d), over the exit
// 3 of an earlier step. A job whose steps all reported keeps theirs.
func TestSlurmctldDerivedExitCodeLostStep(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		fieldsOf := func(re *regexp.Regexp, id uint32) string {
			o, _, _ := c.Run("scontrol", "show", "job", "-d", "-o", fmt.Sprint(id))
			return fmt.Sprintln(re.FindAllString(o, -1))
		}
		fields := func(id uint32) string { return fieldsOf(derivedKeepRE, id) }
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", c.Dir, "-o", "/dev/null"}, args...)...)
		}
		ok := sb("-J", "ok", "-w", "n2", "--wrap", "srun sh -c 'exit 3'; srun true")
		lost := sb("-J", "lost", "-w", "n1", "--no-requeue", "--wrap", "srun sh -c 'exit 3'; srun sleep 300")
		ctldWaitJob(t, c, ok, 60*time.Second, "COMPLETED")
		out["steps reported"] = fields(ok)
		// The first step's end has reached the controller, the second
		// runs.
		var steps string
		if err := c.Poll(60*time.Second, func() bool {
			steps, _, _ = c.Run("squeue", "-h", "-s", "-j", fmt.Sprint(lost), "-o", "%i")
			return strings.Contains(steps, fmt.Sprintf("%d.1\n", lost)) && !strings.Contains(steps, fmt.Sprintf("%d.0\n", lost))
		}); err != nil {
			t.Fatalf("steps of job %d: %q: %v", lost, steps, err)
		}
		out["before"] = fields(lost)
		out["down"] = ctldRun(c, "scontrol", "update", "nodename=n1", "state=down", "reason=derived_ec")
		ctldWaitJob(t, c, lost, 60*time.Second, "NODE_FAIL")
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("squeue", "-h", "-t", "all", "-j", fmt.Sprint(lost), "-o", "%T")
			return strings.TrimSpace(o) == "NODE_FAIL"
		}); err != nil {
			t.Fatalf("job %d still completing: %v", lost, err)
		}
		out["after"] = fieldsOf(derivedLostKeepRE, lost)
		out["steps after"] = ctldRun(c, "squeue", "-h", "-s", "-j", fmt.Sprint(lost), "-o", "%i")
		ctldRun(c, "scontrol", "update", "nodename=n1", "state=resume")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
