package interop

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Node CPU accounting with CPUs consumable: a job on 1 socket x 2 cores
// x 2 threads nodes gets the CPUs (threads) its tasks use, and what the
// nodes show as allocated (sinfo %C/%A, scontrol show node CPUAlloc,
// AllocMem, AllocTRES) must follow, as must squeue's %C of each job.

// crcpuJobs are sbatch options, submitted in this order onto an empty
// cluster of three such nodes, each after the previous one settled.
var crcpuJobs = [][]string{
	{"-n", "1"}, {"-n", "3"}, {"-c", "2"}, {"--exclusive"},
}

// crcpuNodeFields are the fields of scontrol show node compared.
var crcpuNodeFields = []string{"NodeName", "CPUAlloc", "CPUEfctv", "CPUTot", "State", "AllocMem", "CfgTRES", "AllocTRES"}

// crcpuNodes is the compared part of scontrol show node, a line a node.
func crcpuNodes(c *ctldharness.Cluster) string {
	out, errOut, err := c.Run("scontrol", "-o", "show", "node")
	if err != nil {
		return "scontrol: " + strings.TrimSpace(errOut) + "\n"
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		got := map[string]string{}
		for _, m := range geometryField.FindAllStringSubmatch(line, -1) {
			if _, ok := got[m[1]]; !ok {
				got[m[1]] = m[2]
			}
		}
		for _, k := range crcpuNodeFields {
			fmt.Fprintf(&b, "%s=%s ", k, got[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// crcpuLook records what the commands show of the nodes and jobs now.
func crcpuLook(c *ctldharness.Cluster, key string, out map[string]string) {
	out[key+" | sinfo -N"] = ctldRun(c, "sinfo", "-h", "-N", "-o", "%N %T %C %A %c %m")
	out[key+" | sinfo"] = ctldRun(c, "sinfo", "-h", "-o", "%P %a %D %T %C %A %c")
	out[key+" | scontrol show node"] = crcpuNodes(c)
	out[key+" | squeue"] = ctldRun(c, "squeue", "-h", "-S", "j", "-o", "%j %T %r %D %C %N")
}

// crcpuSettled waits until every job of the queue runs or waits with a
// reason, and two looks a second apart agree (backfill may still move).
func crcpuSettled(t *testing.T, c *ctldharness.Cluster, n int) {
	t.Helper()
	var last string
	stable := 0
	err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-o", "%j %T %r %N")
		if err != nil {
			stable = 0
			return false
		}
		settled := 0
		for _, l := range strings.Split(o, "\n") {
			f := strings.Fields(l)
			if len(f) >= 3 && (f[1] == "RUNNING" || (f[1] == "PENDING" && f[2] != "None")) {
				settled++
			}
		}
		if settled == n && o == last {
			stable++
		} else {
			stable = 0
		}
		last = o
		if stable < 2 {
			time.Sleep(time.Second)
		}
		return stable >= 2
	})
	if err != nil {
		t.Errorf("the jobs did not settle: %v (last %q)", err, last)
	}
}

func crcpuCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	crcpuLook(c, "0 empty", out)
	ids := map[string]string{}
	for k, opts := range crcpuJobs {
		name := fmt.Sprintf("j%d", k)
		args := append([]string{"sbatch", "-J", name, "-o", "/dev/null"}, opts...)
		args = append(args, "--wrap", "sleep 300")
		o := ctldRun(c, args...)
		m := geometryJobID.FindStringSubmatch(o)
		if m == nil {
			t.Errorf("%s: sbatch %s: %s", name, strings.Join(opts, " "), o)
			continue
		}
		ids[name] = m[1]
		crcpuSettled(t, c, len(ids))
		crcpuLook(c, fmt.Sprintf("%d after %s (%s)", k+1, name, strings.Join(opts, " ")), out)
	}
	// Ending a job gives its CPUs back.
	if id, ok := ids["j1"]; ok {
		ctldRun(c, "scancel", id)
		crcpuSettled(t, c, len(ids)-1)
		crcpuLook(c, fmt.Sprintf("%d after scancel j1", len(crcpuJobs)+1), out)
	}
	ctldRun(c, "scancel", "-u", c.User)
	partSettled(t, c, partEmpty)
	return out
}

// crcpuGaps are the differences from real slurmctld not fixed yet, keyed
// "<SelectTypeParameters> <record key>", with the reason: logged, not
// failed; an entry that no longer differs fails.
var crcpuGaps = map[string]string{}

// crcpuGapWhy explains the gaps.
var crcpuGapWhy = map[string]string{}

// TestSlurmctldCRCPUNodes compares the nodes' and jobs' CPU counts
// between real slurmctld and ours with CPUs, CPUs and memory, and cores
// and memory consumable (an --exclusive job then holds DefMemPerCPU x the
// node's CPUs, not the node's memory).
func TestSlurmctldCRCPUNodes(t *testing.T) {
	for _, params := range []string{"CR_CPU", "CR_CPU_Memory", "CR_Core_Memory"} {
		t.Run(params, func(t *testing.T) {
			real := ctldharness.RealSbin(t, "slurmctld")
			ours := ctldBuildOurs(t)
			c := ctldharness.New(t, ctldharness.Options{Nodes: 3, CPUs: 4, RealMemory: 1000,
				ExtraConf: []string{
					"SelectTypeParameters=" + params,
					// Memory per CPU, so that jobs share a node under
					// CR_CPU_Memory too.
					"DefMemPerCPU=100",
					"SchedulerParameters=bf_interval=1",
					"NodeName=DEFAULT Sockets=1 CoresPerSocket=2 ThreadsPerCore=2",
				}})
			want, got := ctldOnBoth(t, c, real, ours, crcpuCollect)
			same, open := 0, 0
			for _, k := range slices.Sorted(maps.Keys(want)) {
				w, g := ctldMasked(want[k]), ctldMasked(got[k])
				gap, known := crcpuGaps[params+" "+k]
				switch {
				case w == g && known:
					t.Errorf("%s: ours now agrees with real slurmctld: drop it from crcpuGaps", k)
				case w == g:
					same++
				case known:
					open++
					t.Logf("known gap (%s) %s:\n--- real slurmctld\n%s--- ours\n%s", crcpuGapWhy[gap], k, w, g)
				default:
					t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
				}
			}
			t.Logf("%s: %d records equal, %d known gaps, of %d", params, same, open, len(want))
		})
	}
}
