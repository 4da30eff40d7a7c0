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

var derivedKeepRE = regexp.MustCompile(`(JobState|Reason|ExitCode|DerivedExitCode)=\S+`)

// TestSlurmctldDerivedExitCodeLostStep: a job's derived exit code is the
// highest of its srun steps'; a step still running when its node goes
// DOWN never reports its end, and real slurmctld's cleanup counts it as
// NO_VAL (DerivedExitCode=0:126 in scontrol show job -d), over the exit
// 3 of an earlier step. A job whose steps all reported keeps theirs. The
// DOWN node's job keeps ExitCode=0:0: its srun is told of the node
// failure and exits 0, so does the batch script, whose late completion
// is refused as already done.
func TestSlurmctldDerivedExitCodeLostStep(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		fields := func(id uint32) string {
			o, _, _ := c.Run("scontrol", "show", "job", "-d", "-o", fmt.Sprint(id))
			return fmt.Sprintln(derivedKeepRE.FindAllString(o, -1))
		}
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
		// The batch script's end from n1 has been answered (slurmstepd
		// logs this once the controller replied), so the exit code below
		// is final.
		done := fmt.Sprintf("[%d.batch] done with job", lost)
		if err := c.Poll(60*time.Second, func() bool {
			b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmd-n1.log"))
			return strings.Contains(string(b), done)
		}); err != nil {
			t.Fatalf("no %q in n1's log: %v", done, err)
		}
		out["after"] = fields(lost)
		out["steps after"] = ctldRun(c, "squeue", "-h", "-s", "-j", fmt.Sprint(lost), "-o", "%i")
		ctldRun(c, "scontrol", "update", "nodename=n1", "state=resume")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
