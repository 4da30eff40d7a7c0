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

// TestSlurmctldArrayCancelPendingTasks: scancel of a pending array's
// tasks by id. One task leaves the meta record's set (no record of its
// own, nothing logged); cancelling the last pending ones ends the meta
// record CANCELLED as a whole-array cancel does: squeue and scontrol show
// it so, jobcomp/filetxt writes its record and the END mail goes out.
func TestSlurmctldArrayCancelPendingTasks(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "jobcomp.txt")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2, ExtraConf: []string{
		"JobCompType=jobcomp/filetxt", "JobCompLoc=" + loc, "MailProg=" + hookScript(t, dir, "mail")}})
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		if err := os.Truncate(loc, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(dir, "mail", "*"))
		for _, f := range left {
			os.Remove(f)
		}
		out := map[string]string{}
		show := func(key string, id uint32) {
			out[key+" squeue"] = ctldRun(c, "squeue", "-h", "-t", "all", "-o", "%i %T %r", "-j", fmt.Sprint(id))
			out[key+" scontrol"] = ctldJobMasked(ctldRun(c, "scontrol", "show", "job", "-d", fmt.Sprint(id)))
		}
		arr := ctldSbatch(t, c, "-H", "-J", "arr", "--array=1-3", "--mail-type=END", "-D", c.Dir, "-o", "/dev/null",
			"--wrap", "true")
		out["one task"] = ctldRun(c, "scancel", fmt.Sprintf("%d_2", arr))
		show("one task", arr)
		out["rest"] = ctldRun(c, "scancel", fmt.Sprintf("%d_[1,3]", arr))
		ctldWaitJob(t, c, arr, 30*time.Second, "CANCELLED")
		show("rest", arr)
		var b []byte
		_ = c.Poll(30*time.Second, func() bool {
			b, _ = os.ReadFile(loc)
			return strings.Count(string(b), "\n") >= 1
		})
		out["jobcomp"] = ctldMasked(string(b))
		out["mail"] = hookRuns(t, c, dir, "mail", 1)
		out["again"] = ctldRun(c, "scancel", fmt.Sprintf("%d_2", arr))
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
