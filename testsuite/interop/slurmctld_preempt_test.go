package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Preemption by partition priority tier (PreemptType=preempt/partition_prio),
// real slurmctld against ours with the same real slurmd.

// preemptPartitions: low and same share tier 1 (same-tier jobs never
// preempt each other), off is tier 1 but PreemptMode=OFF (never
// preempted), high is tier 2. lowExtra is added to low's line.
func preemptPartitions(lowExtra string) []string {
	return []string{
		"PartitionName=off Nodes=ALL PriorityTier=1 PreemptMode=OFF MaxTime=INFINITE State=UP",
		"PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE State=UP" + lowExtra,
		"PartitionName=same Nodes=ALL PriorityTier=1 MaxTime=INFINITE State=UP",
		"PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP",
	}
}

// preemptQueries are compared between the two controllers once the job
// set has settled.
var preemptQueries = [][]string{
	{"squeue", "--sort=i", "-t", "all", "-o", "%i %P %j %t %r %D %N"},
	{"squeue", "--sort=i", "-t", "all"},
	{"scontrol", "show", "job", "1"},
	{"scontrol", "show", "job", "2"},
	{"scontrol", "show", "job", "3"},
	{"scontrol", "show", "job", "4"},
	{"scontrol", "show", "partition", "high"},
	{"scontrol", "show", "partition", "low"},
	{"sinfo", "-o", "%N %T %C"},
}

// preemptRunning submits a batch job (sbatch args, then a script that
// marks its start and sleeps) and waits until its script runs: a kill
// that reaches slurmd while the script is still being launched ends it by
// SIGKILL after KillWait rather than by SIGTERM (ExitCode 0:9, not 0:15).
func preemptRunning(t *testing.T, c *ctldharness.Cluster, args ...string) uint32 {
	t.Helper()
	mark := filepath.Join(c.Dir, "started.")
	id := ctldSbatch(t, c, append(args, "-o", "/dev/null", "--wrap", "touch "+mark+"$SLURM_JOB_ID; exec sleep 600")...)
	if err := c.Poll(60*time.Second, func() bool {
		_, err := os.Stat(mark + strconv.Itoa(int(id)))
		return err == nil
	}); err != nil {
		t.Fatalf("job %d never ran its script: %v", id, err)
	}
	return id
}

// preemptClearMarks removes the start marks of an earlier run on the
// cluster (the other controller's jobs had the same ids).
func preemptClearMarks(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	marks, _ := filepath.Glob(filepath.Join(c.Dir, "started.*"))
	for _, m := range marks {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
}

// preemptJobSet fills both nodes with tier-1 jobs (one in the OFF
// partition, one in low), queues a same-tier job, then submits a tier-2
// job needing one node: the low job is preempted (ending in state want:
// PREEMPTED when cancelled, PENDING when requeued), the OFF one and the
// same-tier one are left alone.
func preemptJobSet(want string) func(*testing.T, *ctldharness.Cluster) map[string]string {
	return func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		t.Helper()
		preemptClearMarks(t, c)
		preemptRunning(t, c, "-p", "off", "-N1", "-n2", "-t", "60", "-J", "offjob")
		b := preemptRunning(t, c, "-p", "low", "-N1", "-n2", "-t", "60", "-J", "lowjob")
		s := ctldSbatch(t, c, "-p", "same", "-N1", "-n2", "-t", "60", "-J", "samejob", "-o", "/dev/null", "--wrap", "sleep 600")
		if err := c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run("squeue", "-h", "-j", strconv.Itoa(int(s)), "-o", "%r")
			return err == nil && strings.TrimSpace(o) == "Resources"
		}); err != nil {
			t.Fatalf("same-tier job %d never waits for Resources: %v", s, err)
		}
		h := ctldSbatch(t, c, "-p", "high", "-N1", "-n2", "-t", "60", "-J", "highjob", "-o", "/dev/null", "--wrap", "sleep 600")
		// Real slurmctld ends a job in its grace time on its periodic
		// time limit check (every 30 s).
		ctldWaitJob(t, c, h, 90*time.Second, "RUNNING")
		ctldWaitJob(t, c, b, 60*time.Second, want)
		// The nodes are clean and the pending jobs have their reasons.
		if err := c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run("sinfo", "-h", "-o", "%T")
			return err == nil && !strings.Contains(o, "completing")
		}); err != nil {
			t.Fatalf("nodes still completing: %v", err)
		}
		time.Sleep(2 * time.Second)
		out := map[string]string{}
		for _, q := range preemptQueries {
			out[strings.Join(q, " ")] = ctldRun(c, q...)
		}
		return out
	}
}

// TestSlurmctldPreemptPartitionPrio: PreemptMode=CANCEL and REQUEUE
// cluster-wide, REQUEUE on the partition only, and CANCEL with a
// GraceTime, with a PreemptMode=OFF partition and a same-tier partition
// beside the preempted one; real squeue and scontrol print the same under
// real slurmctld and ours (times masked).
func TestSlurmctldPreemptPartitionPrio(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	for _, tc := range []struct {
		name, mode, lowExtra, want string
	}{
		{"CANCEL", "CANCEL", "", "PREEMPTED"},
		{"REQUEUE", "REQUEUE", "", "PENDING"},
		{"partition_REQUEUE", "CANCEL", " PreemptMode=REQUEUE", "PENDING"},
		{"CANCEL_GraceTime", "CANCEL", " GraceTime=3", "PREEMPTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
				ExtraConf: []string{"PreemptType=preempt/partition_prio", "PreemptMode=" + tc.mode,
					"SchedulerParameters=bf_interval=1"},
				Partitions: preemptPartitions(tc.lowExtra)})
			want, got := ctldOnBoth(t, c, real, ours, preemptJobSet(tc.want))
			for _, q := range preemptQueries {
				k := strings.Join(q, " ")
				w, g := ctldJobMasked(want[k]), ctldJobMasked(got[k])
				if w != g {
					t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
				}
			}
		})
	}
}

// preemptFewQueries are compared for the few-jobs set.
var preemptFewQueries = [][]string{
	{"squeue", "--sort=i", "-t", "all", "-o", "%i %P %j %t %r %D %C %N"},
	{"sinfo", "-o", "%N %T %C"},
}

// preemptFewJobSet: four one-CPU low jobs fill the two 2-CPU nodes; a high
// job needing two CPUs on one node has only the two jobs of one node
// preempted (which two is the candidate order's and the reordering's
// choice).
func preemptFewJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	preemptClearMarks(t, c)
	for i := range 4 {
		preemptRunning(t, c, "-p", "low", "-n1", "-t", "60", "-J", "low"+strconv.Itoa(i))
	}
	h := ctldSbatch(t, c, "-p", "high", "-N1", "-n2", "-t", "60", "-J", "highjob", "-o", "/dev/null", "--wrap", "sleep 600")
	ctldWaitJob(t, c, h, 60*time.Second, "RUNNING")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && !strings.Contains(o, "completing")
	}); err != nil {
		t.Fatalf("nodes still completing: %v", err)
	}
	out := map[string]string{}
	for _, q := range preemptFewQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldPreemptFewest: only as many jobs as the preemptor needs are
// preempted, the same ones under real slurmctld and ours.
func TestSlurmctldPreemptFewest(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf:  []string{"PreemptType=preempt/partition_prio", "PreemptMode=CANCEL", "SchedulerParameters=bf_interval=1"},
		Partitions: preemptPartitions("")})
	want, got := ctldOnBoth(t, c, real, ours, preemptFewJobSet)
	for _, q := range preemptFewQueries {
		k := strings.Join(q, " ")
		w, g := ctldJobMasked(want[k]), ctldJobMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}

// preemptBackfillJobSet: an OFF job holds n1 for an hour and a low job n2;
// a high job needing both nodes waits (nothing it may preempt makes room)
// and holds its partition in the main pass; a second, short high job
// behind it has the low job preempted by the backfill pass.
func preemptBackfillJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	preemptClearMarks(t, c)
	preemptRunning(t, c, "-p", "off", "-N1", "-n2", "-t", "60", "-J", "offjob")
	b := preemptRunning(t, c, "-p", "low", "-N1", "-n2", "-t", "60", "-J", "lowjob")
	ctldSbatch(t, c, "-p", "high", "-N2", "-n4", "-t", "60", "-J", "bigjob", "-o", "/dev/null", "--wrap", "sleep 600")
	h := ctldSbatch(t, c, "-p", "high", "-N1", "-n2", "-t", "10", "-J", "shortjob", "-o", "/dev/null", "--wrap", "sleep 600")
	ctldWaitJob(t, c, h, 90*time.Second, "RUNNING")
	ctldWaitJob(t, c, b, 60*time.Second, "PREEMPTED")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && !strings.Contains(o, "completing")
	}); err != nil {
		t.Fatalf("nodes still completing: %v", err)
	}
	time.Sleep(2 * time.Second)
	out := map[string]string{}
	for _, q := range preemptFewQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldPreemptBackfill: the backfill pass preempts for a job the
// main pass does not reach, under real slurmctld and ours.
func TestSlurmctldPreemptBackfill(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf:  []string{"PreemptType=preempt/partition_prio", "PreemptMode=CANCEL", "SchedulerParameters=bf_interval=1"},
		Partitions: preemptPartitions("")})
	want, got := ctldOnBoth(t, c, real, ours, preemptBackfillJobSet)
	for _, q := range preemptFewQueries {
		k := strings.Join(q, " ")
		w, g := ctldJobMasked(want[k]), ctldJobMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}
