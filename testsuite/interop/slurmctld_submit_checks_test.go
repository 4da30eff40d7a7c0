package interop

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// submitCheckPartitions exercise the submit-time checks of 22.05's
// _job_create/_valid_job_part/select_nodes: node and time limits, access
// lists, unavailable partitions with and without an Alternate.
var submitCheckPartitions = []string{
	"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
	"PartitionName=other Nodes=n1 MaxTime=60 MaxNodes=1 State=UP",
	"PartitionName=acct Nodes=n2 AllowAccounts=acct1 State=UP",
	"PartitionName=deny Nodes=n2 DenyAccounts=bad State=UP",
	"PartitionName=big Nodes=ALL MinNodes=2 State=UP",
	"PartitionName=small Nodes=n2 MaxCPUsPerNode=1 State=UP",
	"PartitionName=drained Nodes=n1 State=DRAIN Alternate=debug",
	"PartitionName=inactive Nodes=n1 State=INACTIVE",
	"PartitionName=loop Nodes=n1 State=DRAIN Alternate=inactive",
	"PartitionName=anode Nodes=n1 AllocNodes=n1 State=UP",
}

// submitCheckCases are sbatch option sets (the job name and script are
// added) and srun command lines; every one either is refused at submit
// or queues.
var submitCheckCases = [][]string{
	{"sbatch", "-p", "other", "-t", "120"},
	{"sbatch", "-p", "other", "-N", "2"},
	{"sbatch", "-N", "3"},
	{"sbatch", "-N", "1-3"},
	{"sbatch", "--mem=2000"},
	{"sbatch", "-p", "other", "-w", "n2"},
	{"sbatch", "-w", "n9"},
	{"sbatch", "-w", "n1", "-x", "n1"},
	{"sbatch", "-C", "nosuch"},
	{"sbatch", "-C", "fa,fb"},
	{"sbatch", "-C", "fa|nosuch"},
	{"sbatch", "-C", "[fa*1&fb]"},
	{"sbatch", "-C", "(fa"},
	{"sbatch", "-c", "4"},
	{"sbatch", "-n", "5"},
	{"sbatch", "-p", "other", "--time-min=120"},
	{"sbatch", "-p", "other", "-t", "30", "--time-min=40"},
	{"sbatch", "-p", "acct", "-A", "other"},
	{"sbatch", "-p", "acct", "-A", "acct1"},
	{"sbatch", "-p", "deny", "-A", "bad"},
	{"sbatch", "-p", "big", "-N", "1"},
	{"sbatch", "-p", "big", "-N", "1-2"},
	{"sbatch", "-p", "small", "-c", "2"},
	{"sbatch", "-p", "small", "-n", "3"},
	{"sbatch", "-p", "drained"},
	{"sbatch", "-p", "inactive"},
	{"sbatch", "-p", "loop"},
	{"sbatch", "-p", "inactive,other"},
	{"sbatch", "-p", "inactive,drained"},
	{"sbatch", "-p", "other,debug", "-N", "2"},
	{"sbatch", "-p", "other,debug", "-t", "120"},
	{"srun", "-I10", "-N", "3", "true"},
	{"srun", "-I10", "--mem=2000", "true"},
	{"srun", "-I10", "-p", "inactive", "true"},
	{"srun", "-I10", "-C", "nosuch", "true"},
	{"srun", "-I10", "-p", "other", "-w", "n2", "true"},
	{"sbatch", "-p", "anode"},
	{"sbatch", "-p", "anode,debug"},
	{"sbatch", "-p", "acct,debug"},
	{"sbatch", "-w", "n1", "--mem=2000"},
}

var submitCheckQueue = []string{"squeue", "-h", "-o", "%j %T %r %P %D %l"}

// submitChecksCollect runs every case; a queued batch job is shown once
// its reason settles, then cancelled so the next case starts from an
// empty queue.
func submitChecksCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	out["features"] = ctldRun(c, "scontrol", "update", "nodename=n2", "features=fa,fb")
	for i, cs := range submitCheckCases {
		name := fmt.Sprintf("c%02d", i)
		args := cs
		if cs[0] == "sbatch" {
			args = append([]string{"sbatch", "-J", name, "-o", "/dev/null"}, cs[1:]...)
			args = append(args, "--wrap", "sleep 300")
		}
		key := fmt.Sprintf("%s %s", name, strings.Join(cs, " "))
		out[key] = ctldRun(c, args...)
		var q string
		// A queued job settles when the scheduler gave it a reason or
		// started it; a refused one never appears.
		_ = c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run(submitCheckQueue[0], submitCheckQueue[1:]...)
			q = o
			if err != nil {
				return false
			}
			for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
				f := strings.Fields(l)
				if len(f) >= 3 && f[0] == name && (f[1] != "PENDING" || f[2] != "None") {
					return true
				}
			}
			return !strings.Contains(out[key], "Submitted batch job")
		})
		out[key+" | queue"] = q
		if strings.TrimSpace(q) != "" {
			ctldRun(c, "scancel", "-n", name)
			partSettled(t, c, partEmpty)
		}
	}
	return out
}

// submitCheckGaps are the differences left that the submission checks do
// not decide, with where the fix belongs. They are logged, not failed,
// unless GOSLURM_SUBMIT_CHECKS_STRICT=1.
var submitCheckGaps = map[string]string{
	// 22.05 keeps the PartitionConfig reason _select_nodes_parts gives at
	// submission; our scheduler (jobs/schedule.go, sched) replaces it.
	"c00 sbatch -p other -t 120 | queue":     "scheduler reason",
	"c01 sbatch -p other -N 2 | queue":       "scheduler reason",
	"c02 sbatch -N 3 | queue":                "scheduler reason",
	"c14 sbatch -n 5 | queue":                "scheduler reason and node count",
	"c20 sbatch -p big -N 1 | queue":         "scheduler reason",
	"c22 sbatch -p small -c 2 | queue":       "scheduler reason",
	"c23 sbatch -p small -n 3 | queue":       "scheduler reason and node count",
	"c29 sbatch -p other,debug -N 2 | queue": "scheduler: PartitionNodeLimit in the first partition keeps the job waiting",
	"c37 sbatch -p anode,debug | queue":      "scheduler reason",
	"c03 sbatch -N 1-3 | queue":              "scheduler: 22.05 gives a -N min-max job as many nodes as are free",
	// Without an accounting database a job's account is not known:
	// AllowAccounts keeps every job out, DenyAccounts none (sched/request.go).
	"c18 sbatch -p acct -A acct1 | queue": "scheduler account lists",
	"c38 sbatch -p acct,debug | queue":    "scheduler account lists",
	"c19 sbatch -p deny -A bad | queue":   "scheduler account lists",
	// srun prints the allocation reply's error code of a queued job
	// (jobs/ops.go Allocate).
	"c31 srun -I10 -N 3 true": "allocation reply error code",
}

func submitChecksCompare(t *testing.T, want, got map[string]string) {
	t.Helper()
	strict := os.Getenv("GOSLURM_SUBMIT_CHECKS_STRICT") == "1"
	for k, w := range want {
		w, g := ctldMasked(w), ctldMasked(got[k])
		if w == g {
			continue
		}
		if why, ok := submitCheckGaps[k]; ok && !strict {
			t.Logf("known gap (%s) %s:\n--- real slurmctld\n%s--- ours\n%s", why, k, w, g)
			continue
		}
		t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
	}
}

func submitChecksDiff(t *testing.T, extra []string) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: extra, Partitions: submitCheckPartitions})
	c.Start(real, "-c", "-i")
	want := submitChecksCollect(t, c)
	c.Stop()
	c.Start(ours, "-c")
	got := submitChecksCollect(t, c)
	c.Stop()
	submitChecksCompare(t, want, got)
}

// TestSlurmctldSubmitChecksDiff sends the same sbatch/srun command lines
// to real slurmctld and ours with each EnforcePartLimits setting and
// compares what the commands print, their exit status and the queue.
func TestSlurmctldSubmitChecksDiff(t *testing.T) {
	for _, enforce := range []string{"NO", "ALL", "ANY"} {
		t.Run("EnforcePartLimits="+enforce, func(t *testing.T) {
			submitChecksDiff(t, []string{"EnforcePartLimits=" + enforce})
		})
	}
}
