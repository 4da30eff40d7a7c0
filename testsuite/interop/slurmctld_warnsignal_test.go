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

// warnBatchScript waits for USR1 in one-second sleeps (so the trap runs at
// once) and says whether it came.
const warnBatchScript = `#!/bin/sh
trap 'echo "batch got USR1"; exit 0' USR1
i=0
while [ $i -lt 150 ]; do sleep 1 & wait $!; i=$((i+1)); done
echo "batch: no signal"
`

// warnStepScript runs a step that waits for USR1 the same way; the batch
// script traps USR1 too, which --signal without B: must not reach.
const warnStepScript = `#!/bin/sh
trap 'echo "batch got USR1"' USR1
srun -n1 sh -c 'trap "echo step got USR1; exit 0" USR1; i=0; while [ $i -lt 150 ]; do sleep 1 & wait $!; i=$((i+1)); done; echo "step: no signal"'
echo "srun exit $?"
`

// TestSlurmctldWarnSignal compares sbatch --signal between Debian's
// slurmctld and ours, with Debian's slurmd: B:USR1 reaches the batch
// script alone, USR1 the job's steps alone, well before the one-minute
// limit (real sends it at its first time-limit check, within 30 s, as
// the end is nearer than the warning time plus 30 s).
func TestSlurmctldWarnSignal(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	dir := t.TempDir()
	scripts := map[string]string{"batch": warnBatchScript, "step": warnStepScript}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name+".sh"), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		out := t.TempDir()
		ids := map[string]uint32{
			"batch": ctldSbatch(t, c, "-t", "1", "--signal=B:USR1@50", "-o", filepath.Join(out, "batch.out"), filepath.Join(dir, "batch.sh")),
			"step":  ctldSbatch(t, c, "-t", "1", "--signal=USR1@50", "-o", filepath.Join(out, "step.out"), filepath.Join(dir, "step.sh")),
		}
		var b strings.Builder
		for _, name := range []string{"batch", "step"} {
			st := ctldWaitJob(t, c, ids[name], 100*time.Second, "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED")
			text, _ := os.ReadFile(filepath.Join(out, name+".out"))
			fmt.Fprintf(&b, "== %s: %s\n%s", name, st, warnSignalNoise(string(text)))
		}
		return b.String()
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}

// warnSignalNoise drops what depends on timing in real slurmd, under
// either controller: the shell's report of a sleep killed by USR1 (the
// signal reaches every process of the step, and the line comes before or
// after the trap's), and slurmstepd's complaint when the batch shell had
// already left through its trap before the SIGCONT that follows the signal
// ("_handle_signal_container: failed signal 18 ... No such process").
func warnSignalNoise(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "User defined signal 1\n" || strings.Contains(line, "error: _handle_signal_container: failed signal") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
