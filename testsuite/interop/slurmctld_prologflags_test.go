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

var prologStepFieldRE = regexp.MustCompile(`^(StepId|State|Partition|NodeList|Nodes|CPUs|Tasks|Name|TRES)=`)

// TestSlurmctldPrologFlagsContain compares PrologFlags=Contain between
// Debian's slurmctld and ours, with Debian's slurmd: at allocation every
// node of the job gets REQUEST_LAUNCH_PROLOG and runs the Prolog once
// (SLURM_SCRIPT_CONTEXT=prolog_slurmd), the job has an extern step as
// real shows it, the batch script and srun run after the prolog, and the
// job completes.
func TestSlurmctldPrologFlagsContain(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prolog := filepath.Join(dir, "prolog.sh")
	logFile := filepath.Join(dir, "prolog.log")
	script := fmt.Sprintf("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURMD_NODENAME $SLURM_SCRIPT_CONTEXT\" >> %s\nexit 0\n", logFile)
	if err := os.WriteFile(prolog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf: []string{"PrologFlags=Contain", "Prolog=" + prolog}})
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		_ = os.Remove(logFile)
		out := filepath.Join(t.TempDir(), "job.out")
		id := ctldSbatch(t, c, "-N2", "-o", out, "--wrap", "srun -l sleep 8; echo done")
		ctldWaitJob(t, c, id, 60*time.Second, "RUNNING", "COMPLETED")
		var steps, extern string
		_ = c.Poll(30*time.Second, func() bool {
			o, _, _ := c.Run("squeue", "-h", "-s", "-j", fmt.Sprint(id), "-o", "%i %j %N")
			lines := strings.Split(strings.TrimSpace(o), "\n")
			sort.Strings(lines)
			steps = strings.Join(lines, "\n")
			return strings.Contains(steps, ".extern") && strings.Contains(steps, ".0 ")
		})
		// scontrol takes "1.extern" for step 0: the extern record is
		// picked out of the full list.
		o, _, _ := c.Run("scontrol", "show", "step")
		for _, rec := range strings.Split(o, "\n\n") {
			if !strings.Contains(rec, fmt.Sprintf("StepId=%d.extern", id)) {
				continue
			}
			var keep []string
			for _, f := range strings.Fields(rec) {
				if prologStepFieldRE.MatchString(f) {
					keep = append(keep, f)
				}
			}
			extern = strings.Join(keep, " ")
		}
		st := ctldWaitJob(t, c, id, 90*time.Second, "COMPLETED", "FAILED")
		text, _ := os.ReadFile(out)
		pl, _ := os.ReadFile(logFile)
		plLines := strings.Split(strings.TrimSpace(string(pl)), "\n")
		sort.Strings(plLines)
		return fmt.Sprintf("job %s, output %q\nsteps:\n%s\nextern: %s\nprolog runs:\n%s\n",
			st, text, steps, extern, strings.Join(plLines, "\n"))
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}
