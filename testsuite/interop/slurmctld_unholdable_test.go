package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// unholdablePartitions: debug holds n1 and n2 (4 CPUs, 1000 MB each);
// sentinel holds n3 alone so its job can always run.
var unholdablePartitions = []string{
	"PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP",
	"PartitionName=sentinel Nodes=n3 State=UP",
}

// unholdableCases are jobs no node of debug could ever hold (and a few
// that only just fit), as sbatch options or srun command lines.
var unholdableCases = [][]string{
	{"sbatch", "--exclusive", "--mem-per-cpu=300"},
	{"sbatch", "--exclusive", "--mem-per-cpu=250"},
	{"sbatch", "-c", "4", "--mem-per-cpu=300"},
	{"sbatch", "-n", "2", "--mem-per-cpu=600", "-N", "1"},
	{"sbatch", "-n", "2", "--mem-per-cpu=600"},
	{"sbatch", "--mem-per-cpu=1200"},
	{"sbatch", "--mem=2000"},
	{"sbatch", "--mem=1000"},
	{"sbatch", "--exclusive", "--mem=1001"},
	{"sbatch", "-c", "8"},
	{"sbatch", "-c", "5", "-n", "1"},
	{"sbatch", "--ntasks-per-node=2", "-c", "3"},
	{"sbatch", "-N", "1", "--ntasks-per-node=5"},
	{"sbatch", "-N", "2", "--ntasks-per-node=2", "-c", "3"},
	{"sbatch", "-N", "3"},
	{"sbatch", "-N", "2-3"},
	{"sbatch", "-n", "9"},
	{"sbatch", "-n", "3", "-N", "1", "-c", "2"},
	{"sbatch", "--mincpus=5"},
	{"sbatch", "-w", "n1", "--mem=1500"},
	{"srun", "-I10", "--mem=2000", "true"},
	{"srun", "-I10", "-c", "8", "true"},
	{"srun", "-I10", "--exclusive", "--mem-per-cpu=300", "true"},
	{"srun", "-I10", "-N", "3", "true"},
}

// unholdableJobID masks job ids: a refused job may use up an id or not,
// which the cases after it would all show.
var unholdableJobID = regexp.MustCompile(`job \d+`)

var unholdableQueue = []string{"squeue", "-h", "-o", "%j %T %r %D %C %m"}

// unholdableCollect runs every case; a queued batch job is followed by a
// sentinel job (see submitChecksCollect) so that the queue is shown as a
// scheduling pass left it, then both are cancelled.
func unholdableCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	for i, cs := range unholdableCases {
		name := fmt.Sprintf("u%02d", i)
		args := cs
		if cs[0] == "sbatch" {
			args = append([]string{"sbatch", "-J", name, "-o", "/dev/null"}, cs[1:]...)
			args = append(args, "--wrap", "sleep 300")
		}
		key := fmt.Sprintf("%s %s", name, strings.Join(cs, " "))
		out[key] = unholdableJobID.ReplaceAllString(ctldRun(c, args...), "job <id>")
		queued := strings.Contains(out[key], "Submitted batch job")
		if queued {
			if o := ctldRun(c, "sbatch", "-J", "sentinel", "-p", "sentinel", "-n", "1", "-o", "/dev/null",
				"--wrap", "sleep 300"); !strings.Contains(o, "Submitted batch job") {
				t.Errorf("%s: sentinel job refused: %s", key, o)
			}
		}
		var q string
		_ = c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run(unholdableQueue[0], unholdableQueue[1:]...)
			if err != nil {
				return false
			}
			var lines []string
			passed, settled := !queued, !queued
			for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) == 0:
					continue
				case len(f) >= 2 && f[1] == "COMPLETING":
					// An srun case that ran ends on its own; wait.
					return false
				case len(f) >= 2 && f[0] == "sentinel":
					passed = f[1] == "RUNNING"
					continue
				case len(f) >= 3 && f[0] == name && (f[1] != "PENDING" || f[2] != "None"):
					settled = true
				}
				lines = append(lines, l)
			}
			q = strings.Join(lines, "\n")
			if q != "" {
				q += "\n"
			}
			return passed && settled
		})
		out[key+" | queue"] = q
		if queued || strings.TrimSpace(q) != "" {
			ctldRun(c, "scancel", "-n", name)
			ctldRun(c, "scancel", "-n", "sentinel")
			partSettled(t, c, partEmpty)
		}
	}
	return out
}

// TestSlurmctldUnholdableDiff submits jobs that no node of the partition
// could ever hold to real slurmctld and ours under each select/cons_tres
// consumable-resource setting and compares what sbatch/srun print and
// what the queue shows after a scheduling pass.
func TestSlurmctldUnholdableDiff(t *testing.T) {
	for _, cr := range []string{"CR_Core_Memory", "CR_CPU_Memory", "CR_Core"} {
		for _, enforce := range []string{"NO", "ALL"} {
			t.Run(cr+"/EnforcePartLimits="+enforce, func(t *testing.T) {
				real := ctldharness.RealSbin(t, "slurmctld")
				ours := ctldBuildOurs(t)
				c := ctldharness.New(t, ctldharness.Options{
					Nodes: 3, CPUs: 4, RealMemory: 1000, Partitions: unholdablePartitions,
					ExtraConf: []string{"SelectTypeParameters=" + cr, "EnforcePartLimits=" + enforce},
				})
				want, got := ctldOnBoth(t, c, real, ours, unholdableCollect)
				submitChecksCompare(t, want, got)
			})
		}
	}
}
