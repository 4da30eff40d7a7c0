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

var gresSchedRE = regexp.MustCompile(`\b(JobState|Reason|NodeList|NumNodes|NumTasks|TresPerJob|TresPerTask|GRES)=\S*`)

var gresSchedReasonRE = regexp.MustCompile(`\bReason=(\S+)`)

// TestSlurmctldGresSchedSiteGres: a site GRES (gres/foo, 4 a node)
// counted over the job or per task (scontrol update's TresPerJob and
// TresPerTask of a held job: the 22.05 commands have no other way to ask
// for them) is scheduled as GPUs are: a job whose tasks need more than a
// node has pends when held to one node, spreads over nodes otherwise, and
// holds what it got against later jobs.
func TestSlurmctldGresSchedSiteGres(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4,
		ExtraConf: []string{"GresTypes=foo"}, NodeConf: map[string]string{"*": "Gres=foo:4"}})
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("Name=foo Count=4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		show := func(id uint32) string {
			o, _, _ := c.Run("scontrol", "show", "job", "-d", "-o", fmt.Sprint(id))
			return strings.Join(gresSchedRE.FindAllString(o, -1), " ") + "\n"
		}
		// settled: running, or pending with a reason the scheduler gave.
		settle := func(id uint32) {
			if err := c.Poll(60*time.Second, func() bool {
				o, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
				if strings.Contains(o, "JobState=RUNNING") {
					return true
				}
				m := gresSchedReasonRE.FindStringSubmatch(o)
				return m != nil && m[1] != "None" && m[1] != "JobHeldUser"
			}); err != nil {
				t.Fatalf("job %d not settled: %v", id, err)
			}
		}
		sub := func(args string, update ...string) (uint32, string) {
			id := ctldSbatch(t, c, append([]string{"-D", c.Dir, "-o", "/dev/null", "-H", "-J", "g"}, append(strings.Fields(args), "--wrap", "sleep 300")...)...)
			o := ctldRun(c, append([]string{"scontrol", "update", fmt.Sprintf("jobid=%d", id)}, update...)...)
			o += ctldRun(c, "scontrol", "release", fmt.Sprint(id))
			settle(id)
			return id, o + show(id)
		}
		for _, tc := range []struct {
			name, args string
			update     []string
		}{
			{"per task, one node too small", "-N1 -n4", []string{"TresPerTask=gres:foo:2"}},
			{"per task, fits one node", "-n2", []string{"TresPerTask=gres:foo:2"}},
			{"per task, spreads", "-n3", []string{"TresPerTask=gres:foo:2"}},
			{"per job, spreads", "-n1", []string{"TresPerJob=gres:foo:6"}},
			{"per job, one node", "-n1", []string{"TresPerJob=gres:foo:3"}},
		} {
			id, o := sub(tc.args, tc.update...)
			out[tc.name] = o
			ctldRun(c, "scancel", fmt.Sprint(id))
			ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
		}
		// CPUs and memory per foo the node holds for the job: 2 CPUs
		// and 100 MB each of its 2 foo (cons_tres' gres_min_cpus and
		// mem_per_gres, whatever the GRES).
		for _, tc := range []struct{ name, update string }{
			{"cpus per foo", "CpusPerTres=gres:foo:2"},
			{"mem per foo", "MemPerTres=gres:foo:100"},
		} {
			id, o := sub("-n1 --gres=foo:2", tc.update)
			j, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
			out[tc.name] = o + fmt.Sprintln(regexp.MustCompile(`\b(NumCPUs|MinMemoryNode|TRES)=\S*`).FindAllString(j, -1))
			ctldRun(c, "scancel", fmt.Sprint(id))
			ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
		}
		// What a running job holds is not free for the next one.
		a, o := sub("-w n1 -n1", "TresPerJob=gres:foo:3")
		out["holder"] = o
		b, o := sub("-w n1 -n1", "TresPerJob=gres:foo:2")
		out["blocked"] = o
		node, _, _ := c.Run("scontrol", "show", "node", "-o", "n1")
		out["node"] = fmt.Sprintln(regexp.MustCompile(`\bGresUsed=\S*`).FindString(node))
		ctldRun(c, "scancel", fmt.Sprint(a), fmt.Sprint(b))
		ctldWaitJob(t, c, a, 60*time.Second, "CANCELLED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
