package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// prioJobs is the job set of the priority differential test: pending
// jobs (a begin time keeps them from starting) of various sizes, memory
// requests, partitions and nice values, a held one, and the updates that
// change priorities (nice, an operator-set priority, a release).
var prioJobs = [][]string{
	{"-N1", "-n1"},
	{"-N2", "-n16"},
	{"-p", "hi", "-N2", "-n4", "-t", "30"},
	{"-p", "hi", "-n3", "--nice=1000"},
	{"-N3", "-n5", "--nice=-77"},
	{"-H", "-n2"},
	{"--mem=2000", "-N2", "-n2"},
	{"--mem-per-cpu=500", "-n4", "-t", "5"},
	{"-n2"},       // 9: nice changed by scontrol update
	{"-n2"},       // 10: priority set by an operator
	{"-H", "-n6"}, // 11: released
	{"-p", "debug,hi", "-n1"},
	{"--array=1-3", "-n2", "-t", "90"},
}

var prioUpdates = [][]string{
	{"scontrol", "update", "jobid=9", "nice=500"},
	{"scontrol", "update", "jobid=10", "priority=12345"},
	{"scontrol", "release", "11"},
	{"scontrol", "update", "jobid=1", "timelimit=20"},
}

var prioFieldRE = regexp.MustCompile(`(JobId|Priority|Nice)=(\S+)`)

// prioCollect submits prioJobs, applies prioUpdates and returns what
// squeue and scontrol say of every job's priority.
func prioCollect(t *testing.T, c *ctldharness.Cluster) (squeue, scontrol string) {
	t.Helper()
	for _, j := range prioJobs {
		ctldSbatch(t, c, append([]string{"--begin=now+1hour", "-o", "/dev/null", "--wrap", "true"}, j...)...)
	}
	for _, u := range prioUpdates {
		if out, errOut, err := c.Run(u[0], u[1:]...); err != nil {
			t.Fatalf("%v: %v\n%s%s", u, err, out, errOut)
		}
	}
	squeue = ctldRun(c, "squeue", "-h", "-r", "-o", "%i %Q %y %P")
	lines := strings.Split(strings.TrimSpace(squeue), "\n")
	sort.Strings(lines)
	squeue = strings.Join(lines, "\n") + "\n"

	var b strings.Builder
	for id := 1; id <= len(prioJobs); id++ {
		out := ctldRun(c, "scontrol", "show", "job", strconv.Itoa(id))
		for _, m := range prioFieldRE.FindAllStringSubmatch(out, -1) {
			b.WriteString(m[0] + " ")
		}
		b.WriteString("\n")
	}
	return squeue, b.String()
}

// TestSlurmctldPriorityDifferential: with priority/multifactor, the same
// jobs get the same priorities under real slurmctld and under ours, as
// squeue %Q and scontrol show job print them. Without slurmdbd Slurm
// ignores the age and fair-share weights (set here to check that), so
// the values do not depend on time.
func TestSlurmctldPriorityDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"favorLarge", []string{"PriorityWeightTRES=CPU=3000,Mem=2000,Node=500"}},
		{"favorSmallRelative", []string{"PriorityFavorSmall=YES", "PriorityFlags=SMALL_RELATIVE_TO_TIME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := append([]string{
				"PriorityType=priority/multifactor",
				"PriorityWeightJobSize=100000",
				"PriorityWeightPartition=50000",
				"PriorityWeightAge=1000",
				"PriorityWeightFairshare=10000",
			}, tc.extra...)
			c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 8, RealMemory: 4000, ExtraConf: extra,
				Partitions: []string{
					"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
					"PartitionName=hi Nodes=n[1-2] PriorityJobFactor=4 MaxTime=120 State=UP",
				}})
			c.Start(real, "-c", "-i")
			wantQ, wantS := prioCollect(t, c)
			c.Stop()

			c.Start(ours, "-c")
			gotQ, gotS := prioCollect(t, c)
			c.Stop()

			t.Logf("real squeue:\n%s", wantQ)
			if wantQ != gotQ {
				t.Errorf("squeue -o '%%i %%Q %%y %%P':\n--- real slurmctld\n%s--- ours\n%s", wantQ, gotQ)
			}
			if wantS != gotS {
				t.Errorf("scontrol show job:\n--- real slurmctld\n%s--- ours\n%s", wantS, gotS)
			}
		})
	}
}

// prioSavedUsage is the root account's raw usage in our controller's
// priority state file (0 when there is none yet).
func prioSavedUsage(c *ctldharness.Cluster) float64 {
	data, err := os.ReadFile(filepath.Join(c.Dir, "state", "priority_usage.json"))
	if err != nil {
		return 0
	}
	var f struct {
		Usage struct {
			Assocs []struct {
				Account, User string
				Raw           float64
			}
		}
	}
	if json.Unmarshal(data, &f) != nil {
		return 0
	}
	for _, a := range f.Usage.Assocs {
		if a.Account == "root" && a.User == "" {
			return a.Raw
		}
	}
	return 0
}

// TestSlurmctldPriorityUsageRestart (ours only: real Slurm needs slurmdbd
// for fair-share): with AccountingStorageType=accounting_storage/slurmdbd
// our controller tracks usage itself. A job runs across a restart (the
// restart's decay pass charges it), is cancelled, the usage is saved, and
// after a crash (SIGKILL) the user who ran it still ranks below a user
// who ran nothing.
func TestSlurmctldPriorityUsageRestart(t *testing.T) {
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"AccountingStorageType=accounting_storage/slurmdbd",
		"PriorityType=priority/multifactor",
		"PriorityWeightFairshare=100000",
	}})
	c.Start(ours, "-c")
	defer c.Stop()
	run := ctldSbatch(t, c, "-N1", "-n2", "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, run, 60*time.Second, "RUNNING")
	// The start's pass set the clock; let some seconds pass, then the
	// restart's pass charges them.
	start := time.Now()
	if err := c.Poll(60*time.Second, func() bool { return time.Since(start) > 2*time.Second }); err != nil {
		t.Fatal(err)
	}
	c.StopCtld()
	c.StartCtld(ours)
	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(run))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	if err := c.Poll(60*time.Second, func() bool { return prioSavedUsage(c) > 0 }); err != nil {
		t.Fatalf("no usage saved: %v", err)
	}
	c.KillCtld()
	c.StartCtld(ours)

	mine := ctldSbatch(t, c, "--begin=now+1hour", "-o", "/dev/null", "--wrap", "true")
	theirs := ctldSbatch(t, c, "--uid", "nobody", "--begin=now+1hour", "-o", "/dev/null", "--wrap", "true")
	out := ctldRun(c, "squeue", "-h", "-o", "%i %Q")
	prio := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			prio[f[0]] = f[1]
		}
	}
	// Fair Tree: two users, the one with usage ranks 1 of 2.
	if a, b := prio[strconv.Itoa(int(mine))], prio[strconv.Itoa(int(theirs))]; a != "50000" || b != "100000" {
		t.Errorf("priorities: root's job %s, nobody's %s; want 50000 and 100000\n%s", a, b, out)
	}
}
