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

// stepFeaturesScript runs steps with srun -C in a 3-node job (n1 fa, n2
// fb, n3 fa and fb): one feature, a feature no node of the job has, an
// AND of two, -C with -w, and the job's nodes all asked for when some
// lack the feature. Then it drains n2 (SlurmUser runs the job): a
// drained node still takes steps. Steps run with -I, so one the
// controller tells to wait (ESLURM_NODES_BUSY) says so and ends.
const stepFeaturesScript = `#!/bin/sh
unset SLURM_MEM_PER_NODE
out=$(mktemp)
settle() {
	i=0
	while squeue -h -s -j "$SLURM_JOB_ID" -o %j | grep -qx sh; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "steps never ended"; exit 3; }
		sleep 0.25
	done
}
run() {
	echo "== srun $*"
	srun -I "$@" sh -c 'echo $SLURMD_NODENAME $SLURM_STEP_NODELIST' >"$out" 2>&1
	echo "rc $?"
	sort "$out"
	settle
}
run -C fa -N1
run -C fb -N1
run -C fa -N2
run -C fb -N2
run -C fa
run -C fa -N3
run -C fc -N1
run -C 'fa&fb' -N1
run -C 'fa|fb' -N1
run -C fa -N1-3 -n4
run -C fa -N1 -n3
run -C fa -w n2
run -C fb -w n3
run -C fa -w 'n[1,3]'
run -C fa -x n1 -N1
scontrol update nodename=n2 state=drain reason=stepfeat
sinfo -h -n n2 -o %T
run -N3
run -w n2
run -C fb -N1
scontrol update nodename=n2 state=resume
echo done
`

// TestSlurmctldStepFeatures compares how the controller picks a step's
// nodes by srun -C (step_spec->features in _pick_step_nodes: the job's
// nodes with that one active feature) between Debian's slurmctld and
// ours, with Debian's slurmd, sbatch and srun, and that a drained node
// of the job still takes steps. About 20 s a controller.
func TestSlurmctldStepFeatures(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2, NodeConf: map[string]string{
		"n1": "Features=fa", "n2": "Features=fb", "n3": "Features=fa,fb", "n4": "Features=fa",
	}})
	want, got := ctldOnBoth(t, c, real, ours, stepFeaturesCollect)
	if testing.Verbose() {
		t.Logf("real slurmctld:\n%s", want["output"])
	}
	ctldCompare(t, want, got)
}

// stepFeaturesCollect runs stepFeaturesScript in a 3-node job of c
// (started) and returns what it printed, job ids masked.
func stepFeaturesCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "stepfeatures.sh")
	if err := os.WriteFile(script, []byte(stepFeaturesScript), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "job.out")
	id := ctldSbatch(t, c, "-o", out, "-N", "3", "-w", "n[1-3]", "--exclusive", script)
	ctldWaitJob(t, c, id, 300*time.Second, "COMPLETED", "FAILED")
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(fmt.Sprintf("job %d", id), "job <id>", fmt.Sprintf("StepId=%d.", id), "StepId=<id>.",
		fmt.Sprintf("Job %d ", id), "Job <id> ").Replace(ctldMasked(string(text)))
	return map[string]string{"output": s}
}
