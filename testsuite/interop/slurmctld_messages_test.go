package interop

// What real sbatch and srun print for refusals the controller words:
// the text slurmctld sends with a refused submission (RESPONSE_SLURM_RC_MSG)
// and the codes of an --immediate allocation that cannot start, real
// slurmctld against ours (harness in slurmctld_jobinfo_test.go).

import (
	"sort"
	"strings"
	"testing"
)

// TestCtldRefusalMessages runs sbatch and srun refusals on both
// controllers and compares what the commands print and the jobs' states.
func TestCtldRefusalMessages(t *testing.T) {
	scriptOnBothCtlds(t, []string{"scontrol", "scancel", "sbatch", "squeue", "srun"}, func(t *testing.T, m *mutCluster, _ func()) []string {
		name := "msg"
		var ids []string
		defer func() {
			if len(ids) > 0 {
				m.exec(t, m.cmds["scancel"], "scancel", ids, "", false)
			}
			m.exec(t, m.cmds["scancel"], "scancel", []string{"-n", name}, "", false)
		}()
		pairs := []string{m.out, "<out>"}
		var log []string
		step := func(what, cmd string, args ...string) {
			mask := newMasker(pairs...)
			r := m.exec(t, m.cmds[cmd], cmd, args, "", false).masked(mask)
			log = append(log, what+": "+cmd+" "+mask.apply(strings.Join(args, " "))+"\n"+r.String())
		}
		// The jobs of the script, one line each, sorted, once none is
		// completing (up to 60 s).
		jobs := func(what string) {
			var out string
			err := m.c.Poll(60e9, func() bool {
				out = m.mustRun(t, "squeue", "-h", "-t", "all", "-n", name, "-o", "%j %T %r %P")
				return !strings.Contains(out, "COMPLETING")
			})
			if err != nil {
				t.Logf("jobs still completing: %v", err)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			sort.Strings(lines)
			log = append(log, what+":\n"+strings.Join(lines, "\n"))
		}
		sb := func(args ...string) []string {
			return append([]string{"-o", m.out + "/%j.out", "-J", name, "-t", "30"}, args...)
		}
		sr := func(args ...string) []string {
			return append([]string{"-J", name, "-t", "30"}, args...)
		}
		step("unknown partition", "sbatch", sb("-p", "nosuch", "--wrap", "true")...)
		step("one of two partitions unknown", "sbatch", sb("-p", "debug,nosuch", "--wrap", "true")...)
		step("unknown partition", "srun", sr("-p", "nosuch", "true")...)

		// n2 busy with a whole-node job.
		run := m.sbatchID(t, sb("-J", name+"-run", "-p", "debug", "-w", "n2", "--exclusive", "--wrap", "echo up; exec sleep 600")...)
		ids = append(ids, run)
		pairs = append(pairs, run, "<R>")
		m.waitRunning(t, run)
		step("immediate on a busy node", "srun", sr("-I1", "-p", "debug", "-w", "n2", "true")...)
		step("immediate with a dependency", "srun", sr("-I1", "-p", "debug", "-w", "n3", "-d", "afterok:"+run, "true")...)
		// A job waiting for n2 comes first in debug: an immediate job
		// there or in a partition of the same tier sharing nodes is not
		// at the top; one in long (a higher tier) is.
		wait := m.sbatchID(t, sb("-J", name+"-wait", "-p", "debug", "-w", "n2", "--wrap", "true")...)
		ids = append(ids, wait)
		pairs = append(pairs, wait, "<W>")
		if err := m.c.Poll(60e9, func() bool {
			out := m.mustRun(t, "squeue", "-h", "-j", wait, "-o", "%r")
			return strings.TrimSpace(out) == "Resources"
		}); err != nil {
			t.Fatalf("job %s is not waiting for resources: %v", wait, err)
		}
		step("immediate behind a waiting job", "srun", sr("-I1", "-p", "debug", "-w", "n3", "true")...)
		step("immediate in a higher tier", "srun", sr("-I1", "-p", "long", "-w", "n3", "true")...)
		m.mustRun(t, "scancel", wait)
		step("immediate once the waiting job is gone", "srun", sr("-I1", "-p", "debug", "-w", "n3", "true")...)
		m.mustRun(t, "scancel", run)
		jobs("jobs")
		return log
	})
}
