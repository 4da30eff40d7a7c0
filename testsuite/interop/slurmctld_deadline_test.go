package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var deadlineLimitRE = regexp.MustCompile(`TimeLimit=(00:59:00|01:00:00)`)

// TestSlurmctldDeadline compares sbatch --deadline between Debian's
// slurmctld and ours, with Debian's slurmd: a job without a time limit
// gets a one-minute TimeMin and starts with its limit cut to the minutes
// left before the deadline (59 or 60 by the second it starts), one with
// -t keeps the smaller limit, and a job that cannot run its limit before
// the deadline while the node is busy ends DEADLINE (reason DeadLine,
// exit code 1) at the next pass that considers it.
func TestSlurmctldDeadline(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 1,
		ExtraConf: []string{"SchedulerParameters=bf_interval=5"}})
	show := func(c *ctldharness.Cluster, id uint32) string {
		out, _, _ := c.Run("scontrol", "show", "job", fmt.Sprint(id))
		var keep []string
		for _, f := range strings.Fields(out) {
			for _, k := range []string{"JobState=", "Reason=", "ExitCode=", "TimeLimit=", "TimeMin="} {
				if strings.HasPrefix(f, k) {
					keep = append(keep, deadlineLimitRE.ReplaceAllString(f, "TimeLimit=<~1h>"))
				}
			}
		}
		return strings.Join(keep, " ")
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		free := ctldSbatch(t, c, "-o", "/dev/null", "--deadline=now+1hour", "--wrap", "sleep 30")
		ctldWaitJob(t, c, free, 60*time.Second, "RUNNING")
		fmt.Fprintf(&b, "no -t: %s\n", show(c, free))
		ctldRun(c, "scancel", fmt.Sprint(free))
		ctldWaitJob(t, c, free, 60*time.Second, "CANCELLED")
		limited := ctldSbatch(t, c, "-o", "/dev/null", "-t", "30", "--deadline=now+1hour", "--wrap", "sleep 30")
		ctldWaitJob(t, c, limited, 60*time.Second, "RUNNING")
		fmt.Fprintf(&b, "-t 30: %s\n", show(c, limited))
		late := ctldSbatch(t, c, "-o", "/dev/null", "-t", "1", "--deadline=now+70", "--wrap", "true")
		st := ctldWaitJob(t, c, late, 100*time.Second, "DEADLINE", "COMPLETED")
		fmt.Fprintf(&b, "late: %s: %s\n", st, show(c, late))
		ctldRun(c, "scancel", fmt.Sprint(limited))
		return b.String()
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}
