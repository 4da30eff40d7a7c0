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

var gresUpdateRE = regexp.MustCompile(`\b(JobState|Reason|NumNodes|NumCPUs|NumTasks|CPUs/Task|NtasksPerN:B:S:C|TresPerJob|TresPerNode|TresPerTask|CpusPerTres)=\S*`)

// TestSlurmctldGresUpdateSiteGres: scontrol update of a pending job's GRES
// requests with a site GRES (gres/foo) is checked and completed as a new
// job's are, whatever the GRES (_test_gres_cnt): a task count from per
// job / per task, -c from cpus per GRES x per task, contradicting counts
// refused, a GRES not in GresTypes refused, a running job refused.
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
		show := func(id uint32) string {
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
		} {
			id := sb(append(strings.Fields(tc.args), "-J", "g", "--wrap", "true")...)
			out[tc.name] = ctldRun(c, append([]string{"scontrol", "update", fmt.Sprintf("jobid=%d", id)}, tc.update...)...) + show(id)
			if tc.name == "per task cleared" {
				out[tc.name] += ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", id), "TresPerTask=") + show(id)
			}
			ctldRun(c, "scancel", fmt.Sprint(id))
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
