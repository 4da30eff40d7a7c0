package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Preemption by suspension (PreemptType=preempt/partition_prio,
// PreemptMode=SUSPEND,GANG): a job of a higher PriorityTier partition runs
// on top of a lower tier job, which is suspended (its processes stopped)
// until the preemptor is gone, then resumed. Real slurmctld against ours,
// with the same real slurmd.

// suspendPreemptQueries are compared while the low job is suspended and
// once both jobs are done.
var suspendPreemptQueries = [][]string{
	{"squeue", "--sort=i", "-t", "all", "-o", "%i %P %j %t %r %D %C %N"},
	{"squeue", "--sort=i", "-t", "all"},
	{"scontrol", "show", "job", "1"},
	{"scontrol", "show", "job", "2"},
	{"sinfo", "-o", "%N %T %C"},
	{"scontrol", "show", "partition"},
}

// suspendPreemptMasked is ctldJobMasked with the run time before the
// suspension blanked too (how long the low job ran before the high one
// came).
func suspendPreemptMasked(s string) string {
	return secsPreSuspendRE.ReplaceAllString(ctldJobMasked(s), "SecsPreSuspend=<t>")
}

var secsPreSuspendRE = regexp.MustCompile(`SecsPreSuspend=\d+`)

// suspendPreemptState is the state letter of a process (/proc/pid/stat's
// third field; T when stopped), "" when it cannot be read.
func suspendPreemptState(pidFile string) string {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return ""
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(b)), "stat"))
	if err != nil {
		return ""
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// suspendPreemptJobSet: a low job fills the node; a high job needing the
// same CPUs starts on top of it and the low job is suspended (its script
// stopped); the high job ends (its release file appears), the low job is
// resumed (its script runs again) and ends when its own release file
// appears. The queries are taken while the low job is suspended ("during
// ") and at the end ("after ").
func suspendPreemptJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	d := c.Dir
	for _, g := range []string{"started.*", "pid.*", "release.*"} {
		old, _ := filepath.Glob(filepath.Join(d, g))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The script waits for its release file in a loop of its own (no
	// exec): stopped, it stays in state T.
	script := func(name string) string {
		return "echo $$ > " + filepath.Join(d, "pid.") + name + "; touch " + filepath.Join(d, "started.") + name +
			"; while [ ! -e " + filepath.Join(d, "release.") + name + " ]; do sleep 0.2; done"
	}
	lo := ctldSbatch(t, c, "-p", "low", "-n2", "-t", "60", "-J", "lowjob", "-o", "/dev/null", "--wrap", script("low"))
	if err := c.Poll(60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(d, "started.low"))
		return err == nil
	}); err != nil {
		t.Fatalf("low job %d never ran its script: %v", lo, err)
	}
	hi := ctldSbatch(t, c, "-p", "high", "-n2", "-t", "60", "-J", "highjob", "-o", "/dev/null", "--wrap", script("high"))
	ctldWaitJob(t, c, hi, 60*time.Second, "RUNNING")
	ctldWaitJob(t, c, lo, 60*time.Second, "SUSPENDED")
	if err := c.Poll(60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(d, "started.high"))
		return err == nil && suspendPreemptState(filepath.Join(d, "pid.low")) == "T"
	}); err != nil {
		t.Fatalf("low job %d not stopped (state %q) or high job %d not running: %v", lo,
			suspendPreemptState(filepath.Join(d, "pid.low")), hi, err)
	}
	out := map[string]string{}
	for _, q := range suspendPreemptQueries {
		out["during "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	if err := os.WriteFile(filepath.Join(d, "release.high"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctldWaitJob(t, c, hi, 60*time.Second, "COMPLETED")
	ctldWaitJob(t, c, lo, 60*time.Second, "RUNNING")
	if err := c.Poll(60*time.Second, func() bool {
		st := suspendPreemptState(filepath.Join(d, "pid.low"))
		return st != "" && st != "T"
	}); err != nil {
		t.Fatalf("low job %d never continued: %v", lo, err)
	}
	if err := os.WriteFile(filepath.Join(d, "release.low"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctldWaitJob(t, c, lo, 60*time.Second, "COMPLETED")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && strings.TrimSpace(o) == "idle"
	}); err != nil {
		t.Fatalf("node never idle: %v", err)
	}
	for _, q := range suspendPreemptQueries {
		out["after "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldPreemptSuspendGang: PreemptMode=SUSPEND,GANG cluster-wide
// and SUSPEND on the low partition only (cluster CANCEL,GANG); real squeue
// and scontrol print the same under real slurmctld and ours (times
// masked), while the low job is suspended and after both ended.
func TestSlurmctldPreemptSuspendGang(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	for _, tc := range []struct{ name, mode, lowExtra string }{
		{"cluster", "SUSPEND,GANG", ""},
		{"partition", "CANCEL,GANG", " PreemptMode=SUSPEND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
				ExtraConf: []string{"PreemptType=preempt/partition_prio", "PreemptMode=" + tc.mode,
					"SchedulerParameters=bf_interval=1"},
				Partitions: []string{
					"PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE State=UP" + tc.lowExtra,
					"PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP",
				}})
			want, got := ctldOnBoth(t, c, real, ours, suspendPreemptJobSet)
			for _, when := range []string{"during ", "after "} {
				for _, q := range suspendPreemptQueries {
					k := when + strings.Join(q, " ")
					w, g := suspendPreemptMasked(want[k]), suspendPreemptMasked(got[k])
					if w != g {
						t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
					}
				}
			}
		})
	}
}

// timesliceQueries are compared while the two jobs take turns (nothing in
// them changes with the turns) and, with the states, once both ended.
var timesliceQueries = [][]string{
	{"squeue", "--sort=i", "-o", "%i %P %j %D %C %N"},
	{"sinfo", "-o", "%N %T %C"},
}

var timesliceAfterQueries = [][]string{
	{"squeue", "--sort=i", "-t", "all", "-o", "%i %P %j %t %r %D %C %N"},
	{"scontrol", "show", "job", "1"},
	{"scontrol", "show", "job", "2"},
	{"sinfo", "-o", "%N %T %C"},
}

// timesliceJobSet: two jobs on the same two CPUs of an OverSubscribe=FORCE:2
// partition under PreemptMode=GANG take turns: the second is suspended
// when it starts, runs once the first has had a timeslice (its script
// going, the first one's stopped), then the first runs again. Both end
// once released, each in its turn.
func timesliceJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	d := c.Dir
	for _, g := range []string{"started.*", "pid.*", "release.*"} {
		old, _ := filepath.Glob(filepath.Join(d, g))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	script := func(name string) string {
		return "echo $$ > " + filepath.Join(d, "pid.") + name + "; touch " + filepath.Join(d, "started.") + name +
			"; while [ ! -e " + filepath.Join(d, "release.") + name + " ]; do sleep 0.2; done"
	}
	a := ctldSbatch(t, c, "-n2", "-t", "60", "-J", "first", "-o", "/dev/null", "--wrap", script("a"))
	if err := c.Poll(60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(d, "started.a"))
		return err == nil
	}); err != nil {
		t.Fatalf("job %d never ran its script: %v", a, err)
	}
	b := ctldSbatch(t, c, "-n2", "-t", "60", "-J", "second", "-o", "/dev/null", "--wrap", script("b"))
	turn := func(run, sus uint32, susName string) {
		t.Helper()
		if err := c.Poll(60*time.Second, func() bool {
			return ctldJobState(c, run) == "RUNNING" && ctldJobState(c, sus) == "SUSPENDED" &&
				suspendPreemptState(filepath.Join(d, "pid."+susName)) == "T"
		}); err != nil {
			t.Fatalf("job %d never ran with job %d suspended (stopped): %v", run, sus, err)
		}
	}
	turn(a, b, "b")
	turn(b, a, "a")
	out := map[string]string{}
	for _, q := range timesliceQueries {
		out["during "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	turn(a, b, "b")
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(d, "release."+n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctldWaitJob(t, c, a, 60*time.Second, "COMPLETED")
	ctldWaitJob(t, c, b, 60*time.Second, "COMPLETED")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && strings.TrimSpace(o) == "idle"
	}); err != nil {
		t.Fatalf("node never idle: %v", err)
	}
	for _, q := range timesliceAfterQueries {
		out["after "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldPreemptSuspendTimeslice: gang timeslicing
// (OverSubscribe=FORCE:2, PreemptMode=GANG, SchedulerTimeSlice=5) under
// real slurmctld and ours: the jobs take turns, and squeue, scontrol and
// sinfo agree (times masked).
func TestSlurmctldPreemptSuspendTimeslice(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"PreemptMode=GANG", "SchedulerTimeSlice=5", "SchedulerParameters=bf_interval=1"},
		Partitions: []string{
			"PartitionName=force Nodes=ALL Default=YES OverSubscribe=FORCE:2 MaxTime=INFINITE State=UP",
		}})
	want, got := ctldOnBoth(t, c, real, ours, timesliceJobSet)
	for k := range want {
		w, g := suspendPreemptMasked(want[k]), suspendPreemptMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}

// gangCancelJobSet: under CANCEL,GANG the high job starts at once on the
// low job's CPUs and gang preempts (cancels) the low job, rather than the
// high job waiting for the low one's node to be clean.
func gangCancelJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	d := c.Dir
	for _, g := range []string{"started.*", "pid.*", "release.*"} {
		old, _ := filepath.Glob(filepath.Join(d, g))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	lo := ctldSbatch(t, c, "-p", "low", "-n2", "-t", "60", "-J", "lowjob", "-o", "/dev/null", "--wrap",
		"touch "+filepath.Join(d, "started.low")+"; exec sleep 600")
	if err := c.Poll(60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(d, "started.low"))
		return err == nil
	}); err != nil {
		t.Fatalf("low job %d never ran its script: %v", lo, err)
	}
	hi := ctldSbatch(t, c, "-p", "high", "-n2", "-t", "60", "-J", "highjob", "-o", "/dev/null", "--wrap", "sleep 600")
	ctldWaitJob(t, c, hi, 60*time.Second, "RUNNING")
	ctldWaitJob(t, c, lo, 60*time.Second, "PREEMPTED")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && !strings.Contains(o, "completing")
	}); err != nil {
		t.Fatalf("node still completing: %v", err)
	}
	out := map[string]string{}
	for _, q := range suspendPreemptQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldPreemptSuspendGangCancel: a CANCEL partition under GANG, as
// real slurmctld does it.
func TestSlurmctldPreemptSuspendGangCancel(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	ctldharness.RealSbin(t, "slurmd")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"PreemptType=preempt/partition_prio", "PreemptMode=CANCEL,GANG",
			"SchedulerParameters=bf_interval=1"},
		Partitions: []string{
			"PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE State=UP",
			"PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP",
		}})
	want, got := ctldOnBoth(t, c, real, ours, gangCancelJobSet)
	for k := range want {
		w, g := suspendPreemptMasked(want[k]), suspendPreemptMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}
