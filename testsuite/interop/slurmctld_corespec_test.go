package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Specialized resources: n1 keeps one core (CoreSpecCount) and 200 MB
// (MemSpecLimit) for the system, n2 CPUs 1 and 2 (CPUSpecList); n3, in
// a partition of its own, runs the sentinel jobs. Every node: 4 CPUs
// (4 sockets of one core), 1000 MB.
var corespecNodeConf = map[string]string{
	"n1": "CoreSpecCount=1 MemSpecLimit=200",
	"n2": "CPUSpecList=1,2",
}

var corespecPartitions = []string{
	"PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP",
	"PartitionName=sentinel Nodes=n3 State=UP",
}

// corespecCases are sbatch options (job name, output and script added).
var corespecCases = [][]string{
	{"-w", "n1", "-n", "1"},
	{"-w", "n1", "-n", "3"},
	{"-w", "n1", "-n", "4"},
	{"-w", "n1", "--exclusive"},
	{"-w", "n1", "--mem=800"},
	{"-w", "n1", "--mem=900"},
	{"-w", "n1", "--mem=1000"},
	{"-w", "n1", "--exclusive", "--mem-per-cpu=250"},
	{"-w", "n1", "--exclusive", "--mem-per-cpu=300"},
	{"-w", "n2", "-n", "1"},
	{"-w", "n2", "-n", "2"},
	{"-w", "n2", "-n", "3"},
	{"-w", "n2", "--exclusive"},
	{"-N", "2", "--ntasks-per-node=2"},
	{"-N", "2", "--ntasks-per-node=3"},
	{"-n", "6"},
	{"-n", "7"},
	{"-w", "n1", "--core-spec=1"},
	{"-w", "n1", "--core-spec=2"},
	{"-w", "n2", "--core-spec=0"},
	{"-w", "n1", "--thread-spec=1"},
}

// corespecJobLines are the lines of scontrol show job -d compared here.
var corespecJobLines = regexp.MustCompile(`(?m)^\s*(JobState|NumNodes|TRES|Nodes=|MinCPUsNode|CoreSpec|ThreadSpec|Socks/Node|NtasksPerN|OverSubscribe).*$`)

func corespecNode(c *ctldharness.Cluster, node string) string {
	return ctldRun(c, "scontrol", "show", "node", node)
}

// corespecCollect shows the nodes, then runs every case (a sentinel job
// tells the scheduling pass ran, as in submitChecksCollect), recording
// what sbatch printed, the queue, the job's allocation and its node.
func corespecCollect(t *testing.T, c *ctldharness.Cluster, cases [][]string) map[string]string {
	out := map[string]string{}
	out["node n1"] = corespecNode(c, "n1")
	out["node n2"] = corespecNode(c, "n2")
	out["partition"] = ctldRun(c, "scontrol", "show", "partition", "debug")
	out["sinfo"] = ctldRun(c, "sinfo", "-N", "-h", "-o", "%N %c %C %m %z %P")
	out["sinfo parts"] = ctldRun(c, "sinfo", "-h", "-o", "%P %c %C %D")
	for i, cs := range cases {
		name := fmt.Sprintf("s%02d", i)
		args := append([]string{"sbatch", "-J", name, "-o", "/dev/null"}, cs...)
		args = append(args, "--wrap", "sleep 300")
		key := fmt.Sprintf("%s %s", name, strings.Join(cs, " "))
		out[key] = unholdableJobID.ReplaceAllString(ctldRun(c, args...), "job <id>")
		queued := strings.Contains(out[key], "Submitted batch job")
		if !queued {
			continue
		}
		if o := ctldRun(c, "sbatch", "-J", "sentinel", "-p", "sentinel", "-n", "1", "-o", "/dev/null",
			"--wrap", "sleep 300"); !strings.Contains(o, "Submitted batch job") {
			t.Errorf("%s: sentinel job refused: %s", key, o)
		}
		var q string
		_ = c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run(unholdableQueue[0], unholdableQueue[1:]...)
			if err != nil {
				return false
			}
			passed, settled := false, false
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) == 0:
					continue
				case len(f) >= 2 && f[0] == "sentinel":
					passed = f[1] == "RUNNING"
					continue
				case len(f) >= 3 && f[0] == name && (f[1] != "PENDING" || f[2] != "None"):
					settled = true
				}
				lines = append(lines, l)
			}
			q = strings.Join(lines, "\n") + "\n"
			return passed && settled
		})
		out[key+" | queue"] = q
		job := ctldRun(c, "scontrol", "show", "job", "-d", name)
		if o, _, err := c.Run("squeue", "-h", "-n", name, "-o", "%i"); err == nil && strings.TrimSpace(o) != "" {
			job = ctldRun(c, "scontrol", "show", "job", "-d", strings.TrimSpace(o))
		}
		out[key+" | job"] = strings.Join(corespecJobLines.FindAllString(job, -1), "\n") + "\n"
		if strings.Contains(q, "RUNNING") {
			for _, n := range []string{"n1", "n2"} {
				out[key+" | node "+n] = corespecNode(c, n)
			}
			out[key+" | sinfo"] = ctldRun(c, "sinfo", "-N", "-h", "-o", "%N %C %T", "-p", "debug")
		}
		ctldRun(c, "scancel", "-n", name)
		ctldRun(c, "scancel", "-n", "sentinel")
		partSettled(t, c, partEmpty)
	}
	return out
}

// corespecThreadConf: two cores of two threads a node; n1 keeps one
// core and 300 MB, n2 the core of CPU 1.
var corespecThreadConf = map[string]string{
	"n1": "Sockets=1 CoresPerSocket=2 ThreadsPerCore=2 CoreSpecCount=1 MemSpecLimit=300",
	"n2": "Sockets=1 CoresPerSocket=2 ThreadsPerCore=2 CPUSpecList=1",
}

var corespecThreadCases = [][]string{
	{"-w", "n1", "-n", "1"},
	{"-w", "n1", "-n", "2"},
	{"-w", "n1", "-n", "3"},
	{"-w", "n1", "--exclusive"},
	{"-w", "n1", "--mem=700"},
	{"-w", "n1", "--mem=800"},
	{"-w", "n2", "-n", "2"},
	{"-w", "n2", "--exclusive"},
	{"-n", "4"},
	{"-n", "5"},
}

var corespecASRUCases = [][]string{
	{"-w", "n1", "--core-spec=1"},
	{"-w", "n1", "--core-spec=0"},
	{"-w", "n1", "--exclusive"},
	{"-w", "n2", "--thread-spec=1"},
	{"-w", "n1", "--core-spec=2"},
	{"-w", "n1", "--core-spec=4"},
	{"-w", "n2", "--core-spec=1"},
	// More specialized cores than the node keeps: the job has fewer
	// cores, the node shows all its CPUs allocated.
	{"-w", "n2", "--core-spec=3"},
	{"-w", "n1", "--core-spec=3", "--mem=300"},
}

// TestSlurmctldCoreSpecDiff compares how real slurmctld and ours show and
// schedule around nodes' specialized cores and memory (CoreSpecCount,
// CPUSpecList, MemSpecLimit), with real slurmd on every node.
func TestSlurmctldCoreSpecDiff(t *testing.T) {
	for _, v := range []struct {
		name     string
		cr       string
		nodeConf map[string]string
		extra    []string
		cases    [][]string
	}{
		{"CR_Core_Memory", "CR_Core_Memory", corespecNodeConf, nil, corespecCases},
		{"CR_Core", "CR_Core", corespecNodeConf, nil, corespecCases},
		{"CR_CPU_Memory", "CR_CPU_Memory", corespecNodeConf, nil, corespecCases},
		{"threads/CR_Core_Memory", "CR_Core_Memory", corespecThreadConf, nil, corespecThreadCases},
		{"threads/CR_CPU_Memory", "CR_CPU_Memory", corespecThreadConf, nil, corespecThreadCases},
		{"AllowSpecResourcesUsage", "CR_Core_Memory", corespecNodeConf, []string{"AllowSpecResourcesUsage=YES"}, corespecASRUCases},
	} {
		t.Run(v.name, func(t *testing.T) {
			real := ctldharness.RealSbin(t, "slurmctld")
			ours := ctldBuildOurs(t)
			c := ctldharness.New(t, ctldharness.Options{
				Nodes: 3, CPUs: 4, RealMemory: 1000, Partitions: corespecPartitions,
				NodeConf: v.nodeConf, ExtraConf: append([]string{"SelectTypeParameters=" + v.cr}, v.extra...),
			})
			want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) map[string]string {
				return corespecCollect(t, c, v.cases)
			})
			submitChecksCompare(t, want, got)
		})
	}
}
