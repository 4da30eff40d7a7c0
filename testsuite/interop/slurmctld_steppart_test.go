package interop

import (
	"regexp"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// stepWaitRE matches what srun prints when its step waits for the
// previous step's CPUs: srun returns once its tasks end, before the
// step's completion reaches the controller, so under load the next step
// can find the CPUs still held (under either controller).
var stepWaitRE = regexp.MustCompile(`(?m)^srun: (Job \S+ step creation (temporarily|still) disabled, retrying.*|Step created for job \S+)\n`)

// TestSlurmctldStepPartLimit compares, between Debian's slurmctld and
// ours, a step asking for more time than its partition's MaxTime under
// EnforcePartLimits=ALL: srun's refusal and exit code, and the id of the
// next step (the refused one used one up).
func TestSlurmctldStepPartLimit(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf:  []string{"EnforcePartLimits=ALL"},
		Partitions: []string{"PartitionName=debug Nodes=n1 Default=YES MaxTime=10 State=UP"}})
	const script = `srun -t 20 true; echo "rc $?"; srun -t 10 sh -c 'echo step $SLURM_STEP_ID'; echo "rc $?"; srun sh -c 'echo step $SLURM_STEP_ID'`
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		return stepWaitRE.ReplaceAllString(ctldMasked(ctldRun(c, "salloc", "-t", "5", "sh", "-c", script)), "")
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("real:\n%s\nours:\n%s", want, got)
	}
}
