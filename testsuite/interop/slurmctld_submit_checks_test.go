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
	// sentinel holds the job that tells a scheduling pass ran.
	"PartitionName=sentinel Nodes=n2 State=UP",
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

// submitChecksCollect runs every case; a queued batch job is shown as a
// scheduling pass leaves it, then cancelled so the next case starts from
// an empty queue.
//
// slurmctld gives a job a reason at submission (PartitionConfig for one
// that cannot run in its partition as configured, say) and its
// scheduling pass, up to batch_sched_delay later, gives another
// (PartitionNodeLimit, or starts it). What the queue shows right after
// sbatch depends on when that pass runs, so every queued case is followed
// by a one-core sentinel job in its own partition: a batch job starts
// only in a pass, which tests the case's job first (it is older), so once
// the sentinel runs the case's job has been through a pass.
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
		queued := strings.Contains(out[key], "Submitted batch job")
		if queued {
			if o := ctldRun(c, "sbatch", "-J", "sentinel", "-p", "sentinel", "-n", "1", "-o", "/dev/null",
				"--wrap", "sleep 300"); !strings.Contains(o, "Submitted batch job") {
				t.Errorf("%s: sentinel job refused: %s", key, o)
			}
		}
		var q string
		// A queued job settles when a pass has run (the sentinel runs)
		// and the job has a reason or started; a refused one never
		// appears.
		_ = c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run(submitCheckQueue[0], submitCheckQueue[1:]...)
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

// submitCheckGaps are the differences left that the submission checks do
// not decide, with where the fix belongs. They are logged, not failed,
// unless GOSLURM_SUBMIT_CHECKS_STRICT=1.
var submitCheckGaps = map[string]string{}

func submitChecksCompare(t *testing.T, want, got map[string]string) {
	t.Helper()
	strict := os.Getenv("GOSLURM_SUBMIT_CHECKS_STRICT") == "1"
	// Real 22.05's backfill gives a job without a time limit, in a
	// partition without MaxTime, a year (YEAR_MINUTES) once it has
	// evaluated it; whether it has yet is timing, not behaviour.
	year := strings.NewReplacer(" 365-00:00:00\n", " UNLIMITED\n")
	for k, w := range want {
		w, g := year.Replace(ctldMasked(w)), year.Replace(ctldMasked(got[k]))
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
	want, got := ctldOnBoth(t, c, real, ours, submitChecksCollect)
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
