package interop

// Heterogeneous steps with our srun against real 22.05 srun, on the same
// private real cluster (real slurmctld, two real slurmd with 2 CPUs each):
// a local het step (srun with ":" inside a plain allocation) and steps of
// a het job's components (--het-group). The allocations are made by real
// salloc (/usr/bin/salloc) in both runs so only srun differs.

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// hetEnv is what each task prints: its SLURM_ environment, one variable a
// line, prefixed with its rank so the sorted output stays readable.
const hetEnv = `#!/bin/sh
env | grep -E '^SLURM' | grep -vE '^SLURM_(CONF|TASK_PID|SRUN_COMM_PORT|STEP_LAUNCHER_PORT|STEP_RESV_PORTS|JOB_START_TIME|JOB_END_TIME)' | sed "s/^/$SLURM_PROCID /"
`

// hetIDMask masks job ids in the het variables crMasks does not know.
var hetIDMask = regexp.MustCompile(`((?:SLURM_HET_JOB_ID|SLURM_JOB_ID_(?:HET|PACK)_GROUP_[0-9]+|SLURM_JOBID_(?:HET|PACK)_GROUP_[0-9]+|SLURM_PACK_JOB_ID|SLURM_JOB_START_TIME_HET_GROUP_[0-9]+|SLURM_JOB_END_TIME_HET_GROUP_[0-9]+|SLURM_HET_JOB_ID_SET)=)[0-9]+`)

func hetCases(t *testing.T, work string) []srCase {
	env := crWrite(t, work, "het-env.sh", hetEnv)
	salloc := func(opts ...string) []string {
		return append([]string{"/usr/bin/salloc", "-Q"}, opts...)
	}
	sh := func(pre []string, script string) []string { return append(pre, "sh", "-c", script) }
	return []srCase{
		// Local het steps: a plain two-node allocation.
		{name: "local env", args: sh(salloc("-N2", "-n4"), "srun -N1 -n1 sh "+env+" : -N1 -n2 sh "+env+"")},
		{name: "local label", args: salloc("-N2", "-n4", "srun", "-l", "-N1", "-n2", "echo", "a", ":", "-N1", "-n1", "echo", "b")},
		{name: "local procid", args: sh(salloc("-N2", "-n4"), "srun -N1 -n2 sh -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_NUM_TASKS $SLURMD_NODENAME' : -N1 -n1 sh -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_NUM_TASKS $SLURMD_NODENAME'")},
		{name: "local exit code", args: sh(salloc("-N2"), "srun -N1 true : -N1 sh -c 'exit 3'; echo rc=$?")},
		{name: "local first fails", args: sh(salloc("-N2"), "srun -N1 sh -c 'exit 2' : -N1 true; echo rc=$?")},
		{name: "local three components", args: sh(salloc("-N2"), "srun -N1 true : -N1 true : -N1 true; echo rc=$?")},
		{name: "local output file", args: sh(salloc("-N2"), "echo old > het-out.txt; srun -N1 -o het-out.txt echo a : -N1 -o het-out.txt echo b; echo rc=$?; sort het-out.txt; rm -f het-out.txt")},
		{name: "local step id", args: sh(salloc("-N2"), "srun -N1 sh -c 'echo $SLURM_STEP_ID' : -N1 sh -c 'echo $SLURM_STEP_ID'; srun -N1 sh -c 'echo next $SLURM_STEP_ID'")},
	}
}

// hetGroupCases are --het-group steps of a het job made by real salloc.
func hetGroupCases(t *testing.T, work string) []srCase {
	env := crWrite(t, work, "het-env.sh", hetEnv)
	salloc := func(opts ...string) []string {
		return append([]string{"/usr/bin/salloc", "-Q"}, opts...)
	}
	sh := func(pre []string, script string) []string { return append(pre, "sh", "-c", script) }
	return []srCase{
		{name: "het-group env", args: sh(salloc("-N1", ":", "-N1"), "srun --het-group=0,1 sh "+env+"")},
		{name: "het-group 1", args: sh(salloc("-N1", ":", "-N1"), "srun --het-group=1 sh "+env+"")},
		{name: "het-group range", args: sh(salloc("-N1", "-n2", ":", "-N1"), "srun -l --het-group=0-1 sh -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURMD_NODENAME $SLURM_HET_SIZE'")},
		{name: "het-group default", args: sh(salloc("-N1", ":", "-N1"), "srun sh -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURMD_NODENAME'")},
		{name: "het-group too high", args: sh(salloc("-N1", ":", "-N1"), "srun --het-group=2 true; echo rc=$?")},
		{name: "het-group components", args: sh(salloc("-N1", ":", "-N1"), "srun -n1 sh -c 'echo a $SLURM_PROCID $SLURMD_NODENAME' : -n1 sh -c 'echo b $SLURM_PROCID $SLURMD_NODENAME'; echo rc=$?")},
	}
}

func hetMask(r srResult) srResult {
	r.stdout = hetIDMask.ReplaceAllString(r.stdout, "${1}N")
	r.stderr = hetIDMask.ReplaceAllString(r.stderr, "${1}N")
	return r
}

// TestSrunHetSteps runs hetCases with real srun and with ours.
func TestSrunHetSteps(t *testing.T) { srunHetCompare(t, hetCases) }

// TestSrunHetGroupSteps runs hetGroupCases with real srun and with ours.
func TestSrunHetGroupSteps(t *testing.T) { srunHetCompare(t, hetGroupCases) }

func srunHetCompare(t *testing.T, list func(*testing.T, string) []srCase) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	// Only the backfill scheduler starts a het job: a one-second cycle
	// (instead of 30) keeps each het job from pending half a minute.
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	ours := srBuild(t)
	work := t.TempDir()
	var cases []srCase
	for _, cs := range list(t, work) {
		if f := os.Getenv("GOSLURM_HET_CASE"); f == "" || strings.Contains(cs.name, f) {
			cs.mask = hetMask
			cases = append(cases, cs)
		}
	}
	if os.Getenv("GOSLURM_HET_SHOW") != "" {
		for _, cs := range cases {
			for _, dir := range []string{t.TempDir(), ours} {
				crSettle(t, c)
				r := crMask(crRun(t, c, dir, work, cs))
				t.Logf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", cs.name, dir, r.code, r.stdout, r.stderr)
			}
		}
		return
	}
	failed := crCompare(t, c, ours, work, cases)
	t.Logf("het steps: %d/%d invocations identical to real Slurm 22.05", len(cases)-failed, len(cases))
}
