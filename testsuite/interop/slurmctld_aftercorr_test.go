package interop

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldAfterCorr compares --dependency=aftercorr and after:+time
// between Debian's slurmctld and ours, with Debian's slurmd: the tasks of
// an array wait each for the task of the same id of another array and
// run once it completed; the task whose counterpart failed, and the one
// without a counterpart (the other array as a whole failed), wait with
// DependencyNeverSatisfied. An after:+minutes term is shown with its
// minutes.
func TestSlurmctldAfterCorr(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		a := ctldSbatch(t, c, "-o", "/dev/null", "--array=1-4", "--wrap", "sleep 1; test $SLURM_ARRAY_TASK_ID -ne 3")
		b := ctldSbatch(t, c, "-o", "/dev/null", "--array=1-5", fmt.Sprintf("--dependency=aftercorr:%d", a), "--wrap", "true")
		timed := ctldSbatch(t, c, "-o", "/dev/null", "-H", fmt.Sprintf("--dependency=after:%d+5", a), "--wrap", "true")
		var b1 strings.Builder
		out, _, _ := c.Run("squeue", "-h", "-j", fmt.Sprint(timed), "-o", "%E")
		fmt.Fprintf(&b1, "after+5: %s", out)
		var last string
		settled := func() bool {
			o, _, _ := c.Run("squeue", "-h", "-r", "-t", "all", "-j", fmt.Sprint(b), "-o", "%K %T %r")
			lines := strings.Split(strings.TrimSpace(o), "\n")
			sort.Strings(lines)
			last = strings.Join(lines, "\n")
			done, never := 0, 0
			for _, l := range lines {
				switch {
				case strings.Contains(l, "COMPLETED"):
					done++
				case strings.Contains(l, "DependencyNeverSatisfied"):
					never++
				}
			}
			return done == 3 && never == 2
		}
		if err := c.Poll(90*time.Second, settled); err != nil {
			t.Logf("not settled: %v", err)
		}
		fmt.Fprintf(&b1, "tasks:\n%s\n", last)
		ctldRun(c, "scancel", fmt.Sprint(b), fmt.Sprint(timed))
		return b1.String()
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}
