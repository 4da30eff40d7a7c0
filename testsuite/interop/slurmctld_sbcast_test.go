package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldSbcast compares Debian's sbcast between Debian's
// slurmctld and ours, with Debian's slurmd: the controller's sbcast
// credential (REQUEST_JOB_SBCAST_CRED) is one real slurmd accepts, so the
// file reaches the job's nodes; a pending job, an unknown job and a step
// that does not exist get real's errors.
func TestSlurmctldSbcast(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 1})
	src := filepath.Join(t.TempDir(), "payload.txt")
	if err := os.WriteFile(src, []byte("sbcast payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		dst := filepath.Join(t.TempDir(), "copy.txt")
		run := ctldSbatch(t, c, "-o", "/dev/null", "-N2", "--wrap", "sleep 120")
		ctldWaitJob(t, c, run, 60*time.Second, "RUNNING")
		pend := ctldSbatch(t, c, "-o", "/dev/null", "-N2", "--wrap", "true")
		var b strings.Builder
		fmt.Fprintf(&b, "== running job\n%s", ctldRun(c, "sbcast", "-f", "-j", fmt.Sprint(run), src, dst))
		got, err := os.ReadFile(dst)
		fmt.Fprintf(&b, "copy: %q %v\n", got, err)
		fmt.Fprintf(&b, "== no such step\n%s", ctldRun(c, "sbcast", "-f", "-j", fmt.Sprintf("%d.7", run), src, dst))
		fmt.Fprintf(&b, "== pending job\n%s", ctldRun(c, "sbcast", "-j", fmt.Sprint(pend), src, dst))
		fmt.Fprintf(&b, "== unknown job\n%s", ctldRun(c, "sbcast", "-j", "99999", src, dst))
		ctldRun(c, "scancel", fmt.Sprint(run), fmt.Sprint(pend))
		return b.String() // job ids are the same: both start clean (-c)
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}
