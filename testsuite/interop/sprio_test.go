package interop

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// sprioCase is one configuration of the sprio differential test.
type sprioCase struct {
	name    string
	extra   []string
	parts   []string
	jobs    [][]string
	updates [][]string
	// wait are jobs sprio lists only once the scheduler has looked at
	// them: Slurm gives a job held at submission (then released) and a
	// job array their begin time in its next scheduling pass (a few
	// seconds), and sprio skips jobs without one. goslurm lists them at
	// once.
	wait []string
}

// sprioViews are the sprio invocations compared; {user} is replaced by
// the cluster's user. Job 999 does not exist; partition "nosuch" neither.
var sprioViews = [][]string{
	{},
	{"-l"},
	{"-n"},
	{"-n", "-l"},
	{"-w"},
	{"-w", "-n"},
	{"-j", "2,4,12"},
	{"-j", "999"},
	{"-p", "hi"},
	{"-p", "hi,debug"},
	{"-p", "nosuch"},
	{"-u", "{user}"},
	{"-u", "{user}", "-j", "3"},
	{"-h", "-o", "%.15i %9r %.8u %Y %S %A %B %F %J %P %Q %N %T %y %a %b %f %j %p %q %t"},
	{"-S", "-y", "-l"},
}

// collect submits the jobs, applies the updates and returns every view's
// output, each after the command line it came from.
func (sc sprioCase) collect(t *testing.T, c *ctldharness.Cluster) string {
	t.Helper()
	// Every node drained: the jobs stay pending but eligible (sprio
	// lists only jobs whose begin time has passed).
	if out, errOut, err := c.Run("scontrol", "update", "nodename=ALL", "state=drain", "reason=sprio"); err != nil {
		t.Fatalf("drain: %v\n%s%s", err, out, errOut)
	}
	for _, j := range sc.jobs {
		ctldSbatch(t, c, append([]string{"-o", "/dev/null", "--wrap", "true"}, j...)...)
	}
	for _, u := range sc.updates {
		if out, errOut, err := c.Run(u[0], u[1:]...); err != nil {
			t.Fatalf("%v: %v\n%s%s", u, err, out, errOut)
		}
	}
	if len(sc.wait) > 0 {
		var out string
		err := c.Poll(60*time.Second, func() bool {
			out = ctldRun(c, "sprio", "-h", "-o", "%i")
			for _, id := range sc.wait {
				if !slices.Contains(strings.Fields(out), id) {
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Fatalf("sprio does not list jobs %v: %v\n%s", sc.wait, err, out)
		}
	}
	var b strings.Builder
	for _, v := range sprioViews {
		args := make([]string, len(v))
		for i, a := range v {
			args[i] = strings.ReplaceAll(a, "{user}", c.User)
		}
		b.WriteString("$ sprio " + strings.Join(args, " ") + "\n")
		b.WriteString(ctldRun(c, append([]string{"sprio"}, args...)...))
	}
	return b.String()
}

// TestSprioDifferential: real sprio prints the same against real
// slurmctld and ours, for the weight setups of the priority tests
// (favoring large jobs with TRES weights, favoring small ones relative
// to time, partitions with TRESBillingWeights and a billing weight) and
// jobs in several partitions, with nice values, an operator-set
// priority (in one partition and in two), a held job (not listed), a
// released one and a job array. Without slurmdbd
// both controllers ignore the age and fair-share weights, so no value
// depends on time (sprio still shows their columns from slurm.conf).
func TestSprioDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	twoParts := []string{
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
		"PartitionName=hi Nodes=n[1-2] PriorityJobFactor=4 MaxTime=120 State=UP",
	}
	jobs := append(append([][]string{}, prioJobs...),
		[]string{"-p", "hi,debug", "-N2", "-n4", "--nice=50"},
		[]string{"-p", "debug,hi", "-n3", "--mem=1000"},
	)
	updates := append([][]string{}, prioUpdates...)
	updates = append(updates, []string{"scontrol", "update", "jobid=15", "priority=777"})
	multiJobs := [][]string{
		{"-p", "debug,hi", "-n1"},
		{"-p", "hi,debug,lo", "-N2", "-n4"},
		{"-p", "lo,hi", "--nice=100", "-n2"},
		{"-p", "hi,hi", "-n1"},
		{"-p", "debug,lo", "--mem=1000", "-n3"},
		{"-p", "lo,debug", "--mem-per-cpu=300", "-N2", "-n6", "-t", "20"},
		{"-p", "hi", "-n2"},
	}
	threeBilling := []string{
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP TRESBillingWeights=CPU=1.5,Mem=0.5G",
		"PartitionName=hi Nodes=n[1-2] PriorityJobFactor=4 MaxTime=120 State=UP TRESBillingWeights=CPU=2,Mem=1G,Node=3",
		"PartitionName=lo Nodes=n[3-4] PriorityJobFactor=2 PriorityTier=3 State=UP",
	}
	base := []string{
		"PriorityType=priority/multifactor",
		"PriorityWeightJobSize=100000",
		"PriorityWeightPartition=50000",
		"PriorityWeightAge=1000",
		"PriorityWeightFairshare=10000",
	}
	for _, sc := range []sprioCase{
		{name: "favorLarge", extra: []string{"PriorityWeightTRES=CPU=3000,Mem=2000,Node=500"},
			parts: twoParts, jobs: jobs, updates: updates, wait: []string{"11", "13"}},
		{name: "favorSmallRelative", extra: []string{"PriorityFavorSmall=YES", "PriorityFlags=SMALL_RELATIVE_TO_TIME"},
			parts: twoParts, jobs: jobs, updates: updates, wait: []string{"11", "13"}},
		{name: "billing", extra: []string{"PriorityWeightTRES=CPU=1000,Billing=7000"},
			parts: threeBilling, jobs: multiJobs},
		{name: "billingMaxTRESNoNormal", extra: []string{"PriorityWeightTRES=Mem=3,Billing=70",
			"PriorityFlags=MAX_TRES,NO_NORMAL_TRES,NO_NORMAL_PART", "PriorityWeightQOS=10"},
			parts: threeBilling, jobs: multiJobs},
	} {
		t.Run(sc.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 8, RealMemory: 4000,
				ExtraConf: append(append([]string{}, base...), sc.extra...), Partitions: sc.parts})
			want, got := ctldOnBoth(t, c, real, ours, sc.collect)

			t.Logf("real:\n%s", want)
			if want != got {
				t.Errorf("sprio:\n--- real slurmctld\n%s--- ours\n%s", want, got)
			}
		})
	}
}

// TestSprioBasic: with priority/basic sprio refuses to run, before it
// asks the controller anything; the same under both controllers.
func TestSprioBasic(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1})
	var outs [2]string
	for i, bin := range []string{real, ours} {
		if i == 0 {
			c.Start(bin, "-c", "-i")
		} else {
			c.Start(bin, "-c")
		}
		id := ctldSbatch(t, c, "--begin=now+1hour", "-o", "/dev/null", "--wrap", "true")
		outs[i] = ctldRun(c, "sprio", "-j", strconv.Itoa(int(id)))
		c.Stop()
	}
	if outs[0] != outs[1] {
		t.Errorf("sprio with priority/basic:\n--- real slurmctld\n%s--- ours\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[1], "Only 'priority/multifactor' is supported.") {
		t.Errorf("sprio with priority/basic: %s", outs[1])
	}
}
