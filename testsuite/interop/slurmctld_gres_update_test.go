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

var gresUpdateRE = regexp.MustCompile(`\b(JobState|Reason|NumNodes|NumCPUs|NumTasks|CPUs/Task|NtasksPerN:B:S:C|TresPerJob|TresPerNode|TresPerSocket|TresPerTask|CpusPerTres)=\S*`)

// TestSlurmctldGresUpdateSiteGres: scontrol update of a pending job's GRES
// requests with a site GRES (gres/foo) is checked and completed as a new
// job's are, whatever the GRES (_test_gres_cnt): a task count from per
// job / per task, -c from cpus per GRES x per task, contradicting counts
// refused, a GRES not in GresTypes refused, a running job refused. The
// counts checked are the job record's (0 tasks and max nodes when never
// given), sockets per node the request's; tasks per node implied or asked
// for (TasksPerNode=) are an operator's only: a normal user gets
// "Access/permission denied" with the GRES strings stored.
func TestSlurmctldGresUpdateSiteGres(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 4,
		ExtraConf: []string{"GresTypes=foo"}, NodeConf: map[string]string{"*": "Gres=foo:8"}})
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("Name=foo Count=8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		show := func(id any) string {
			o, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
			return strings.Join(gresUpdateRE.FindAllString(o, -1), " ") + "\n"
		}
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-D", c.Dir, "-o", "/dev/null"}, args...)...)
		}
		for _, tc := range []struct {
			name, args string
			update     []string
		}{
			{"per task, -n", "-H -n4", []string{"TresPerTask=gres:foo:2"}},
			{"per job and per task, -n agrees", "-H -n3", []string{"TresPerJob=gres:foo:6", "TresPerTask=gres:foo:2"}},
			{"per job and per task, -n disagrees", "-H -n3", []string{"TresPerJob=gres:foo:4", "TresPerTask=gres:foo:2"}},
			{"per job not a multiple", "-H -n2", []string{"TresPerJob=gres:foo:5", "TresPerTask=gres:foo:2"}},
			{"per node and per task", "-H -n2", []string{"TresPerNode=gres:foo:4", "TresPerTask=gres:foo:2"}},
			{"cpus per gres", "-H -n2", []string{"CpusPerTres=gres:foo:2", "TresPerTask=gres:foo:1"}},
			{"per task cleared", "-H -n2", []string{"TresPerTask=gres:foo:1"} /* then cleared below */},
			{"GRES not in GresTypes", "-H -n2", []string{"TresPerTask=gres:bar:1"}},
			{"no -n, per task alone", "-H", []string{"TresPerTask=gres:foo:2"}},
			{"no -n, per job and per task", "-H", []string{"TresPerJob=gres:foo:6", "TresPerTask=gres:foo:2"}},
			{"no -N, per node then per job", "-H --gres=foo:2", []string{"TresPerJob=gres:foo:4"}},
			{"ReqSockets and per socket", "-H -n2", []string{"ReqSockets=2", "TresPerSocket=gres:foo:1"}},
			{"TasksPerNode alone", "-H -n2", []string{"TasksPerNode=2"}},
		} {
			id := sb(append(strings.Fields(tc.args), "-J", "g", "--wrap", "true")...)
			out[tc.name] = ctldRun(c, append([]string{"scontrol", "update", fmt.Sprintf("jobid=%d", id)}, tc.update...)...) + show(id)
			if tc.name == "per task cleared" {
				out[tc.name] += ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", id), "TresPerTask=") + show(id)
			}
			ctldRun(c, "scancel", fmt.Sprint(id))
		}
		// A normal user (nobody) on a job of their own.
		as := func(args ...string) string {
			o, e, err := c.RunAs(65534, 65534, args[0], args[1:]...)
			if e != "" {
				o += "--- stderr\n" + e
			}
			if err != nil {
				o += "--- exit: " + err.Error() + "\n"
			}
			return o
		}
		for _, tc := range []struct {
			name   string
			update []string
		}{
			{"user, implied tasks per node", []string{"TresPerNode=gres:foo:4", "TresPerTask=gres:foo:2"}},
			{"user, TasksPerNode and GRES", []string{"TasksPerNode=2", "TresPerNode=gres:foo:1"}},
			{"user, GRES implying nothing", []string{"TresPerNode=gres:foo:1"}},
		} {
			o := as("sbatch", "-D", "/tmp", "-o", "/dev/null", "-H", "-n2", "-J", "u", "--wrap", "true")
			m := submittedRE.FindStringSubmatch(o)
			if m == nil {
				t.Fatalf("sbatch as nobody: %s", o)
			}
			out[tc.name] = as(append([]string{"scontrol", "update", "jobid=" + m[1]}, tc.update...)...) + show(m[1])
			ctldRun(c, "scancel", m[1])
		}
		r := sb("-J", "run", "--wrap", "sleep 60")
		ctldWaitJob(t, c, r, 60*time.Second, "RUNNING")
		out["running"] = ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", r), "TresPerTask=gres:foo:1") + show(r)
		ctldRun(c, "scancel", fmt.Sprint(r))
		ctldWaitJob(t, c, r, 60*time.Second, "CANCELLED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
