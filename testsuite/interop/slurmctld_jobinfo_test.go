package interop

// Job records after a controller restart, real slurmctld against ours
// with the real commands. The harness (scriptOnBothCtlds) plays one
// script on a cluster under each controller and compares the logs step
// by step; slurmctld_messages_test.go uses it too.

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// ctldScript plays a script on one cluster with the real commands and
// returns each step's masked log; restart restarts the controller on its
// saved state.
type ctldScript func(t *testing.T, m *mutCluster, restart func()) []string

// scriptOnBothCtlds runs script on a cluster (mutClusterOptions) under
// the real slurmctld and one under ours, in parallel, and reports every
// step whose log differs.
func scriptOnBothCtlds(t *testing.T, cmds []string, script ctldScript) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts two Slurm clusters")
	}
	for _, name := range cmds {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	realCtld := ctldharness.RealSbin(t, "slurmctld")
	ourCtld := ctldBuildOurs(t)
	logs := map[string][]string{}
	var mu sync.Mutex
	t.Run("clusters", func(t *testing.T) {
		for _, side := range []struct {
			label, ctld  string
			first, again []string
		}{
			{"real slurmctld", realCtld, []string{"-c", "-i"}, []string{"-i"}},
			{"our slurmctld", ourCtld, []string{"-c"}, nil},
		} {
			t.Run(strings.ReplaceAll(side.label, " ", "_"), func(t *testing.T) {
				t.Parallel()
				c := ctldharness.New(t, mutClusterOptions())
				c.Start(side.ctld, side.first...)
				t.Cleanup(c.Stop)
				out := filepath.Join(c.Dir, "out")
				if err := os.Mkdir(out, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(out, 0o1777); err != nil {
					t.Fatal(err)
				}
				m := &mutCluster{label: side.label, c: c, out: out, cmds: map[string]string{}}
				for _, name := range cmds {
					m.cmds[name] = oracle.Binary(t, name)
				}
				l := script(t, m, func() {
					c.StopCtld()
					c.StartCtld(side.ctld, side.again...)
				})
				mu.Lock()
				logs[side.label] = l
				mu.Unlock()
			})
		}
	})
	real, ours := logs["real slurmctld"], logs["our slurmctld"]
	if len(real) == 0 || len(real) != len(ours) {
		t.Fatalf("the clusters did not both run the whole script (%d | %d steps)", len(real), len(ours))
	}
	t.Logf("on the real slurmctld:\n%s", strings.Join(real, "\n"))
	for i := range real {
		if real[i] != ours[i] {
			t.Errorf("real slurmctld | our slurmctld:\n%s\n---\n%s", real[i], ours[i])
		}
	}
}

// sbatchID submits with real sbatch and returns the job id.
func (m *mutCluster) sbatchID(t *testing.T, args ...string) string {
	t.Helper()
	out := m.mustRun(t, "sbatch", append([]string{"--parsable", "-o", m.out + "/%j.out"}, args...)...)
	return strings.TrimSpace(strings.Split(out, ";")[0])
}

// TestJobInfoAfterRestart: the records of jobs cancelled while pending,
// with and without a task count, and of a running array task whose meta
// record has a throttle, before and after the controller restarts on its
// saved state. Real slurmctld rebuilds an ended job's allocated TRES
// counts at start-up: a job that never had nodes then shows NumTasks=0
// where it showed none before.
func TestJobInfoAfterRestart(t *testing.T) {
	scriptOnBothCtlds(t, []string{"scontrol", "scancel", "sbatch", "squeue"}, func(t *testing.T, m *mutCluster, restart func()) []string {
		name := "ji"
		plain := m.sbatchID(t, "--hold", "-p", "down", "-J", name, "-t", "30", "--wrap", "true")
		tasks := m.sbatchID(t, "--hold", "-p", "down", "-J", name, "-n", "3", "-t", "30", "--wrap", "true")
		cpus := m.sbatchID(t, "-p", "down", "-J", name, "-c", "2", "-t", "30", "--wrap", "true")
		// An array of four tasks running one at a time on n2, until the
		// throttle is raised.
		arr := m.sbatchID(t, "-p", "debug", "-w", "n2", "-J", name, "-a", "1-4%1", "-t", "30",
			"--wrap", "echo up; exec sleep 600")
		ids := []string{plain, tasks, cpus, arr}
		defer m.exec(t, m.cmds["scancel"], "scancel", ids, "", false)
		m.waitArrayTask(t, arr)
		mask := newMasker(m.out, "<out>", plain, "<J0>", tasks, "<J1>", cpus, "<J2>", arr, "<J3>")
		var log []string
		state := func(what string, ids ...string) {
			log = append(log, what+":\n"+m.settledState(t, ids, mask))
		}
		m.mustRun(t, "scancel", plain, tasks, cpus)
		state("cancelled while pending", plain, tasks, cpus)
		// Every task runs: the meta record's pending reason right after
		// a task starts up to the throttle is the scheduler's timing.
		m.mustRun(t, "scontrol", "update", "JobId="+arr, "ArrayTaskThrottle=4")
		state("throttle raised", ids...)
		restart()
		state("after a restart of the controller", ids...)
		return log
	})
}

// waitArrayTask waits (up to 60 s) until a task of array id runs and has
// written "up".
func (m *mutCluster) waitArrayTask(t *testing.T, id string) {
	t.Helper()
	err := m.c.Poll(60e9, func() bool {
		out := strings.Fields(m.mustRun(t, "squeue", "-h", "-r", "-t", "R", "-j", id, "-o", "%A"))
		if len(out) == 0 {
			return false
		}
		b, _ := os.ReadFile(filepath.Join(m.out, out[0]+".out"))
		return strings.HasPrefix(string(b), "up\n")
	})
	if err != nil {
		t.Fatalf("no task of array %s runs: %v", id, err)
	}
}
