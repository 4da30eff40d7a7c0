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

// prioArrayRE is the line the multifactor plugin logs with
// DebugFlags=Priority for a job in several partitions.
var prioArrayRE = regexp.MustCompile(`(JobId=\S+) multi-partition priorities: (.*)`)

// prioArrays is the last priority_array logged for each job, sorted by
// job.
func prioArrays(c *ctldharness.Cluster) string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.stdout"))
	last := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if m := prioArrayRE.FindStringSubmatch(l); m != nil {
			last[m[1]] = strings.TrimSpace(m[2])
		}
	}
	var out []string
	for id, a := range last {
		out = append(out, id+" "+a)
	}
	sort.Strings(out)
	return strings.Join(out, "\n") + "\n"
}

var prioTRESRE = regexp.MustCompile(`(JobId|Priority|Partition|TRES)=(\S+)`)

// prioCase is one configuration of the multi-partition and billing
// differential test: jobs submitted with --begin in an hour unless run
// is set, then what squeue, scontrol and the priority log say.
type prioCase struct {
	name  string
	extra []string
	parts []string
	jobs  [][]string
	run   [][]string // jobs that start at once (ids after jobs)
}

func (pc prioCase) collect(t *testing.T, c *ctldharness.Cluster) (squeue, scontrol, arrays string) {
	t.Helper()
	for _, j := range pc.jobs {
		ctldSbatch(t, c, append([]string{"--begin=now+1hour", "-o", "/dev/null", "--wrap", "true"}, j...)...)
	}
	for _, j := range pc.run {
		id := ctldSbatch(t, c, append([]string{"-o", "/dev/null", "--wrap", "sleep 300"}, j...)...)
		ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
	}
	squeue = ctldRun(c, "squeue", "-h", "-o", "%i %Q %P %T")
	lines := strings.Split(strings.TrimSpace(squeue), "\n")
	sort.Strings(lines)
	squeue = strings.Join(lines, "\n") + "\n"
	var b strings.Builder
	for id := 1; id <= len(pc.jobs)+len(pc.run); id++ {
		out := ctldRun(c, "scontrol", "show", "job", strconv.Itoa(id))
		for _, m := range prioTRESRE.FindAllStringSubmatch(out, -1) {
			b.WriteString(m[0] + " ")
		}
		b.WriteString("\n")
	}
	return squeue, b.String(), prioArrays(c)
}

// TestSlurmctldPriorityPartitions: a job submitted to several partitions
// gets a priority in each (priority_array: the partition factor and the
// TRES factor are each partition's, in PriorityTier order), as real
// slurmctld logs them with DebugFlags=Priority; its own priority (squeue
// %Q) is the first partition's. Partitions' TRESBillingWeights set the
// billing TRES of pending and running jobs (scontrol show job TRES=),
// with PriorityFlags=MAX_TRES too, and PriorityWeightTRES=billing weighs
// it over the partition's billing total.
func TestSlurmctldPriorityPartitions(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	base := []string{
		"PriorityType=priority/multifactor",
		"PriorityWeightJobSize=100000",
		"PriorityWeightPartition=50000",
		"SlurmctldDebug=verbose",
		"DebugFlags=Priority",
	}
	multiJobs := [][]string{
		{"-p", "debug,hi", "-n1"},
		{"-p", "hi,debug,lo", "-N2", "-n4"},
		{"-p", "lo,hi", "--nice=100", "-n2"},
		{"-p", "hi,hi", "-n1"},
		{"-p", "debug,lo", "--mem=1000", "-n3"},
		{"-p", "lo,debug", "--mem-per-cpu=300", "-N2", "-n6", "-t", "20"},
		{"-p", "hi", "-n2"},
	}
	billingParts := []string{
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP TRESBillingWeights=CPU=1.5,Mem=0.5G",
		"PartitionName=hi Nodes=n[1-2] PriorityJobFactor=4 MaxTime=120 State=UP TRESBillingWeights=CPU=2,Mem=1G,Node=3",
		"PartitionName=lo Nodes=n[3-4] PriorityJobFactor=2 PriorityTier=3 State=UP",
	}
	for _, pc := range []prioCase{
		{name: "multiPartition",
			extra: []string{"PriorityWeightTRES=CPU=3000,Mem=2000,Node=500"},
			parts: []string{
				"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
				"PartitionName=hi Nodes=n[1-2] PriorityJobFactor=4 MaxTime=120 State=UP",
				"PartitionName=lo Nodes=n[3-4] PriorityJobFactor=2 PriorityTier=3 State=UP",
			},
			jobs: multiJobs},
		{name: "billing",
			extra: []string{"PriorityWeightTRES=CPU=1000,Billing=7000"},
			parts: billingParts, jobs: multiJobs,
			run: [][]string{{"-p", "hi", "-N1", "-n2", "--mem=1500"}, {"-p", "lo", "-n3"}, {"-n1", "--mem=100"}}},
		{name: "billingMaxTRES",
			extra: []string{"PriorityWeightTRES=Mem=3000,Billing=7000", "PriorityFlags=MAX_TRES"},
			parts: billingParts, jobs: multiJobs,
			run: [][]string{{"-p", "hi", "-N1", "-n2", "--mem=1500"}, {"-n1", "--mem=100"}}},
	} {
		t.Run(pc.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 8, RealMemory: 4000,
				ExtraConf: append(append([]string{}, base...), pc.extra...), Partitions: pc.parts})
			c.Start(real, "-c", "-i")
			wantQ, wantS, wantA := pc.collect(t, c)
			c.Stop()

			c.Start(ours, "-c")
			gotQ, gotS, gotA := pc.collect(t, c)
			c.Stop()

			t.Logf("real squeue:\n%s\nreal arrays:\n%s", wantQ, wantA)
			if wantQ != gotQ {
				t.Errorf("squeue -o '%%i %%Q %%P %%T':\n--- real slurmctld\n%s--- ours\n%s", wantQ, gotQ)
			}
			if wantS != gotS {
				t.Errorf("scontrol show job:\n--- real slurmctld\n%s--- ours\n%s", wantS, gotS)
			}
			if wantA != gotA {
				t.Errorf("multi-partition priorities:\n--- real slurmctld\n%s--- ours\n%s", wantA, gotA)
			}
		})
	}
}

// prioSchedOrder runs the partition-order scenario: a job in two
// partitions whose priority is higher in the second, and a job in the
// first only whose priority falls between the two, wait for a node a
// third job holds; when it ends, the scheduler considers each job in
// each partition at its priority there. It returns the two jobs'
// states and partitions once one runs.
func prioSchedOrder(t *testing.T, c *ctldharness.Cluster) string {
	t.Helper()
	blocker := ctldSbatch(t, c, "-p", "a", "-n8", "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, blocker, 60*time.Second, "RUNNING")
	multi := ctldSbatch(t, c, "-p", "a,b", "-n8", "-o", "/dev/null", "--wrap", "sleep 300")
	single := ctldSbatch(t, c, "-p", "a", "-n8", "--nice=-50000", "-o", "/dev/null", "--wrap", "sleep 300")
	before := ctldRun(c, "squeue", "-h", "-o", "%i %Q %P %T")
	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(blocker))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	var out string
	err := c.Poll(60*time.Second, func() bool {
		out = ctldRun(c, "squeue", "-h", "-j", strconv.Itoa(int(multi))+","+strconv.Itoa(int(single)), "-o", "%i %P %T")
		return strings.Contains(out, "RUNNING")
	})
	if err != nil {
		t.Fatalf("neither job started: %v\nbefore:\n%s\nnow:\n%s", err, before, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestSlurmctldPrioritySchedulesByPartition: the scheduler orders a job
// submitted to several partitions by its priority in each (Slurm's
// priority_array): job 2 (partitions a,b; 10000 in a, 100000 in b)
// starts in b before job 3 (a only, 60000), under real slurmctld and
// ours.
func TestSlurmctldPrioritySchedulesByPartition(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 8, RealMemory: 4000,
		ExtraConf: []string{
			"PriorityType=priority/multifactor",
			"PriorityWeightPartition=100000",
		},
		Partitions: []string{
			"PartitionName=a Nodes=ALL Default=YES PriorityJobFactor=1 State=UP",
			"PartitionName=b Nodes=ALL PriorityJobFactor=10 State=UP",
		}})
	want, got := ctldOnBoth(t, c, real, ours, prioSchedOrder)

	t.Logf("real:\n%s", want)
	if want != got {
		t.Errorf("which job started:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// TestSlurmctldPriorityBasicBilling: with priority/basic the partitions'
// TRESBillingWeights still set the billing TRES of pending and running
// jobs (scontrol show job TRES=), with PriorityFlags=MAX_TRES too, as
// real slurmctld computes them.
func TestSlurmctldPriorityBasicBilling(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	parts := []string{
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP TRESBillingWeights=CPU=1.5,Mem=0.5G",
		"PartitionName=hi Nodes=n[1-2] MaxTime=120 State=UP TRESBillingWeights=CPU=2,Mem=1G,Node=3",
		"PartitionName=lo Nodes=n[3-4] State=UP",
	}
	jobs := [][]string{
		{"-p", "debug", "-n3", "--mem=1000"},
		{"-p", "hi", "-N2", "-n4", "--mem-per-cpu=300"},
		{"-p", "lo", "-n2"},
		{"-p", "hi,debug", "-n1"},
	}
	run := [][]string{{"-p", "hi", "-N1", "-n2", "--mem=1500"}, {"-p", "lo", "-n3"}, {"-n1", "--mem=100"}}
	for _, pc := range []prioCase{
		{name: "sum", parts: parts, jobs: jobs, run: run},
		{name: "maxTRES", extra: []string{"PriorityFlags=MAX_TRES"}, parts: parts, jobs: jobs, run: run},
	} {
		t.Run(pc.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 8, RealMemory: 4000,
				ExtraConf: pc.extra, Partitions: pc.parts})
			c.Start(real, "-c", "-i")
			wantQ, wantS, _ := pc.collect(t, c)
			c.Stop()

			c.Start(ours, "-c")
			gotQ, gotS, _ := pc.collect(t, c)
			c.Stop()

			t.Logf("real scontrol:\n%s", wantS)
			if wantQ != gotQ {
				t.Errorf("squeue -o '%%i %%Q %%P %%T':\n--- real slurmctld\n%s--- ours\n%s", wantQ, gotQ)
			}
			if wantS != gotS {
				t.Errorf("scontrol show job:\n--- real slurmctld\n%s--- ours\n%s", wantS, gotS)
			}
		})
	}
}
