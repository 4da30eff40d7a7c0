package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hetStepVars is what each task of a local het step prints: the
// environment srun gives it from the controller's replies.
const hetStepVars = `echo $(env | grep -E '^SLURM_(HET_SIZE|STEP_ID|STEPID|PROCID|NTASKS|NPROCS|NNODES|NODEID|LOCALID|JOB_ID|JOBID|STEP_NODELIST|STEP_NUM_NODES|STEP_NUM_TASKS|STEP_TASKS_PER_NODE|TASKS_PER_NODE|NODELIST|JOB_NODELIST|HET_JOB_ID|PACK_JOB)|^SLURMD_NODENAME' | sort)`

// stepCancelNoise: whether slurmstepd's notice of a cancelled step
// reaches srun before srun ends its I/O, and in which order srun reports
// the end of each component, is timing.
var stepCancelNoise = regexp.MustCompile(`(?m)^(slurmstepd\S*: error: \*\*\* STEP .* CANCELLED AT .*|srun: Job step aborted: .*|srun: error: n\d: task \d+: Killed)\n`)

var srunPid = regexp.MustCompile(`(SrunHost:Pid=[^:\s]*:)\d+`)

// TestSlurmctldHetJobLocalSteps: het steps (srun with ":") inside a
// plain two-node batch job: one step id over the components, each
// component a step record of its own (squeue -s and scontrol show step
// name them N.S+K), the tasks' environment and exit codes, components
// on the same node (refused by srun), a restart of
// the controller while one runs, scancel of the step by N.S and the next
// step's id.
func TestSlurmctldHetJobLocalSteps(t *testing.T) {
	hetScriptOnBoth(t, func(t *testing.T, m *mutCluster, restart func()) []string {
		var log []string
		add := func(what, s string) { log = append(log, what+":\n"+s) }
		up := filepath.Join(m.out, "l.up")
		vars := m.hetScript(t, "v.sh", nil, hetStepVars+"\n")
		// Every component names its nodes: where a step without -w goes
		// depends on whether the last step's completion has reached the
		// controller yet.
		tmp := filepath.Join(m.out, "l.tmp")
		s := m.hetScript(t, "l.sh", []string{"-J hL -N3 -n12 -w n[1-3] -t 30 -o " + m.out + "/%j.out"},
			"srun -n1 -w n1 "+vars+" : -n2 -w n2 "+vars+" > "+tmp+"\n"+
				"echo rc=$?; sort "+tmp+"\n"+
				"srun -n3 -w n1 "+vars+" : -n1 -w n2 sh -c 'exit 3' : -n1 -w n3 "+vars+" > "+tmp+"\n"+
				"echo rc=$?; sort "+tmp+"\n"+
				"srun -n1 -w n1 true : -n1 -w n1 true\n"+
				"echo rc=$?\n"+
				"srun -n1 -w n1 sh -c 'echo $SLURM_STEP_ID; exec sleep 600' : -n1 -w n2 sleep 600 &\n"+
				"sleep 1; echo up > "+up+"\n"+
				"wait\n"+
				"echo rc=$?\n"+
				"srun -n1 sh -c 'echo next $SLURM_STEP_ID'\n")
		out := m.try(t, "sbatch", s)
		id, mk := hetIDs(out, 1, m)
		add("sbatch", mk.apply(out))
		if id == "" {
			return log
		}
		steps := func() string {
			return sortLines(mk.apply(m.try(t, "squeue", "-h", "-s", "-j", id, "-o", "%i|%j|%P|%u|%N")))
		}
		var sq string
		_ = m.c.Poll(60*time.Second, func() bool {
			_, err := os.Stat(up)
			sq = steps()
			return err == nil && strings.Contains(sq, "<N+0>.2+0|") && strings.Contains(sq, "<N+0>.2+1|")
		})
		add("squeue -s while a het step runs", sq)
		show := func(arg string) string {
			s := maskState(mk.apply(m.try(t, "scontrol", "-o", "show", "step", arg)), true)
			return srunPid.ReplaceAllString(s, "$1<pid>")
		}
		add("scontrol show step <N>.2", show(id+".2"))
		add("scontrol show step <N>.2+1", show(id+".2+1"))
		restart()
		_ = m.c.Poll(60*time.Second, func() bool {
			sq = steps()
			return strings.Contains(sq, "<N+0>.2+0|") && strings.Contains(sq, "<N+0>.2+1|")
		})
		add("squeue -s after a restart", sq)
		add("scancel <N>.2", mk.apply(m.try(t, "scancel", id+".2")))
		add("ended", m.settledState(t, []string{id}, mk))
		b, _ := os.ReadFile(filepath.Join(m.out, id+".out"))
		o := stepRetry.ReplaceAllString(mk.apply(string(b)), "")
		add("output", stepCancelNoise.ReplaceAllString(o, ""))
		return log
	})
}
