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

// stepNodesScript runs steps on chosen nodes of a 3-node job (n1..n3 of
// n1..n4, 2 CPUs each): srun -w, -x, -r and their mixes with -N and -n,
// first with no other step running, then beside steps holding nodes.
// Every task prints its node and the step's node list; srun's own
// messages and exit code follow. Steps run with -I, so one the
// controller tells to wait (ESLURM_NODES_BUSY) says so and ends (srun
// says it waits only once it is woken or times out, which cannot be
// waited for; TestSlurmctldStepAlloc covers the wake-up).
const stepNodesScript = `#!/bin/sh
unset SLURM_MEM_PER_NODE
out=$(mktemp)
flag=$(mktemp -u)
# settle waits until the job runs no step named sh (every step of run
# and run is): srun may exit before the controller hears that its
# step ended.
settle() {
	i=0
	while squeue -h -s -j "$SLURM_JOB_ID" -o %j | grep -qx sh; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "steps never ended"; exit 3; }
		sleep 0.25
	done
}
# run runs a step with -I: one that would wait fails at once instead,
# "Requested nodes are busy".
run() {
	echo "== srun $*"
	srun -I "$@" sh -c 'echo $SLURMD_NODENAME $SLURM_STEP_NODELIST' >"$out" 2>&1
	echo "rc $?"
	sort "$out"
	settle
}
# hold starts a step (named $1) that runs until release, once the step
# shows in squeue.
hold() {
	name=$1
	shift
	rm -f "$flag"
	srun -J "$name" "$@" sh -c "until [ -e $flag ]; do sleep 0.2; done" &
	i=0
	until squeue -h -s -j "$SLURM_JOB_ID" -o %j | grep -qx "$name"; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "step $name never started"; exit 3; }
		sleep 0.25
	done
}
# release ends the held step and waits until the job runs no step.
release() {
	touch "$flag"
	wait
	i=0
	while squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -q "^$SLURM_JOB_ID\.[0-9]"; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "steps never ended"; exit 3; }
		sleep 0.25
	done
}
echo "== -w"
run -w n2
run -w 'n[2-3]'
run -w n3,n1
run -w n4
run -w n9
run -w 'n[3-4]'
run -N1 -w n2
run -N1 -w 'n[2-3]'
run -N2 -w n3
run -N3 -w n3
run -n3 -w n2
run -n4 -w n2
run -n5 -w n2
run -n2 -w 'n[1-2]'
run -n3 -w 'n[1-2]' --exact
echo "== -x"
run -x n1
run -x 'n[1-3]'
run -x 'n[1-2]'
run -N2 -x n2
run -N1 -x n1
run -N3 -x n1
run -x n4
run -x n9
run -n1 -x n1
run -n3 -x n1
run -n5 -x n1
run -w n1 -x n1
run -w n2 -x n1
run -w n2 -x n1 -N2
echo "== -r"
run -r 0 -N1
run -r 1 -N1
run -r 2 -N1
run -r 3 -N1
run -r 1 -N2
run -r 2 -N2
run -r 1
run -r 1 -n1
run -r 1 -n3
run -r 2 -n2
run -r 7 -N1
run -r 1 -w n2
run -r 1 -x n3
echo "== -N and -n"
run -N2 -n1
run -N2
run -N4
run -N1-2 -n3
run -N2-3 -n2
run -N1-3 -n4
run -N1-2 -n5
run -n6
run -n7
run -N1 -n2
run -N1 -n3
run -N1 -n3 -O
run -N3 -n2
run -N2 -n5 -c1
run -N2 -n3 -c2
echo "== n1 held whole"
hold hold1 -w n1 -n1
run -N1
run -N2
run -n2 --exact
run -n5 --exact
run -r 0 -N1
run -r 0 -N2
run -r 1 -N2
run -w n2 -N2
run -x n2 -N2
run -N3
run -N3 --overlap
run -w n1 -n1 --overlap
release
echo "== one CPU of n1 held"
hold hold2 -w n1 -n1 --exact
run -w n1 -n1 --exact
run -N1 -n1 --exact
run -w n1 -n2 --exact
run -N1 -n2 --exact
run -n6 --exact
run -n5 --exact
run -r 0 -N1 -n2 --exact
run -w n1
release
echo "== one CPU of n1 held, whole nodes"
hold hold3 -w n1 -n1 --exact
run -N2
run -N3
release
echo "== n1 and n2 held"
hold hold4 -w 'n[1-2]' -n2
run -N1 -n2 --exact
run -r 1 -N1 --exact
run -N2
run -n3 --exact
run -x n3 -N1
release
echo done
`

// TestSlurmctldStepNodes compares how the controller picks a step's nodes
// inside its job (step_mgr's _pick_step_nodes) between Debian's
// slurmctld and ours, with Debian's slurmd, sbatch and srun: srun -w
// (nodes of the job, of another job, or unknown), -x, -r, -N/-n
// mixes, and steps beside steps that hold some of the job's nodes
// (which wait, and which go to other nodes). About 30 s a
// controller.
func TestSlurmctldStepNodes(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2})
	want, got := ctldOnBoth(t, c, real, ours, stepNodesCollect)
	if testing.Verbose() {
		t.Logf("real slurmctld:\n%s", want["output"])
	}
	ctldCompare(t, want, got)
}

// stepNodesCollect runs stepNodesScript in a 3-node job of c (started)
// and returns what it printed, job ids masked.
func stepNodesCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "stepnodes.sh")
	if err := os.WriteFile(script, []byte(stepNodesScript), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "job.out")
	id := ctldSbatch(t, c, "-o", out, "-N", "3", "--exclusive", script)
	ctldWaitJob(t, c, id, 300*time.Second, "COMPLETED", "FAILED")
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(fmt.Sprintf("job %d", id), "job <id>", fmt.Sprintf("StepId=%d.", id), "StepId=<id>.",
		fmt.Sprintf("Job %d ", id), "Job <id> ").Replace(ctldMasked(string(text)))
	return map[string]string{"output": s}
}

// TestGoslurmStepNodes runs stepNodesScript with goslurm's sbatch, srun
// and squeue under goslurm's slurmctld (Debian's slurmd) and compares it
// with Debian's commands under Debian's slurmctld: srun's own checks of
// -w, -x, -r and -N (a -w list cut to the maximum node count, -r beyond
// the job's nodes, -r with -w or -x), --overlap, and the nodes the
// controller picks. About a minute.
func TestGoslurmStepNodes(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	cmds := goslurmBuildCommands(t, false)
	rc := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2})
	rc.Start(real, "-c", "-i")
	want := stepNodesCollect(t, rc)
	rc.Stop()
	oc := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2, Commands: cmds})
	oc.Start(ours, "-c")
	got := stepNodesCollect(t, oc)
	oc.Stop()
	ctldCompare(t, want, got)
}
