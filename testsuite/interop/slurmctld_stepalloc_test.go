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

// stepAllocScript runs steps that compete for the job's 2 CPUs and 300 MB.
// Each step that should wait is started only once the steps it waits
// for show in squeue, so the order of srun's messages is fixed. srun
// would take SLURM_MEM_PER_NODE (sbatch --mem) as every step's --mem;
// unset, a step takes all of the job's memory without counting it.
const stepAllocScript = `#!/bin/sh
unset SLURM_MEM_PER_NODE
waitstep() {
	i=0
	until squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -qx "$SLURM_JOB_ID.$1"; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "step $1 never started"; exit 3; }
		sleep 0.25
	done
}
# nosteps waits until the controller lists no step but the batch step: an
# srun ends before its step's completion reaches the controller, and a
# step asked for in between would wait for the ended one.
nosteps() {
	i=0
	while squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -qv batch; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "steps never ended"; exit 3; }
		sleep 0.25
	done
}
echo "== a step waits for the CPUs of another"
srun -n2 sleep 4 &
waitstep 0
srun -n1 echo second
echo "srun exit $?"
wait
nosteps
echo "== --overlap shares them"
srun -n2 sleep 3 &
waitstep 2
srun -n1 --overlap echo overlap
echo "srun exit $?"
wait
nosteps
echo "== two -n1 --exact steps fill the job"
srun -n1 --exact sleep 4 &
srun -n1 --exact sleep 4 &
waitstep 4
waitstep 5
scontrol show step "$SLURM_JOB_ID.4" | grep -o 'TRES=[^ ]*'
srun -n1 --exact echo third
echo "srun exit $?"
wait
nosteps
echo "== without --exact a step takes its whole node"
srun -n1 sleep 3 &
waitstep 7
scontrol show step "$SLURM_JOB_ID.7" | grep -o 'TRES=[^ ]*'
srun -n1 --exact echo beside-whole
echo "srun exit $?"
wait
nosteps
echo "== memory"
srun -n1 --exact --mem=200 sleep 4 &
waitstep 9
scontrol show step "$SLURM_JOB_ID.9" | grep -o 'TRES=[^ ]*'
srun -n1 --exact --mem=100 echo mem-fits
echo "srun exit $?"
srun -n1 --exact --mem=200 echo mem-waits
echo "srun exit $?"
wait
nosteps
srun -n1 --mem=400 echo mem-too-much
echo "srun exit $?"
`

var stillDisabledRE = regexp.MustCompile(`(?m)^srun: Job \S+ step creation still disabled, retrying.*\n`)

// TestSlurmctldStepAlloc compares how the steps of one job share its CPUs
// and memory (step_mgr's _pick_step_nodes and _step_alloc_lps) between
// Debian's slurmctld and ours, with Debian's slurmd, sbatch, srun and
// squeue: a step asking for CPUs (or memory) that the job's running
// steps hold waits, srun saying "step creation temporarily disabled",
// and is created when the controller wakes srun as a step ends; a step
// without --exact (srun sends SSF_WHOLE) takes every CPU of its node;
// --overlap takes nothing; memory beyond the job's is refused. About
// 30 s a controller.
func TestSlurmctldStepAlloc(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2, RealMemory: 1000,
		ExtraConf: []string{"SelectTypeParameters=CR_Core_Memory"}})
	script := filepath.Join(t.TempDir(), "stepalloc.sh")
	if err := os.WriteFile(script, []byte(stepAllocScript), 0o755); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := filepath.Join(t.TempDir(), "job.out")
		began := time.Now()
		id := ctldSbatch(t, c, "-o", out, "-n", "2", "--mem=300", script)
		st := ctldWaitJob(t, c, id, 180*time.Second, "COMPLETED", "FAILED")
		t.Logf("job %d %s after %v", id, st, time.Since(began).Round(time.Second))
		job, _, _ := c.Run("scontrol", "show", "job", fmt.Sprint(id))
		text, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer(fmt.Sprintf("job %d", id), "job <id>", fmt.Sprintf("Job %d ", id), "Job <id> ").
			Replace(ctldMasked(string(text)))
		// srun repeats "still disabled" while a step waits longer than
		// its first retry: how many depends on the machine's load.
		s = stillDisabledRE.ReplaceAllString(s, "")
		return map[string]string{
			"job":    st + " " + strings.Join(exitCodeRE.FindAllString(job, -1), " ") + "\n",
			"output": s,
		}
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	if testing.Verbose() {
		t.Logf("real slurmctld:\njob: %soutput:\n%s", want["job"], want["output"])
	}
	ctldCompare(t, want, got)
}
