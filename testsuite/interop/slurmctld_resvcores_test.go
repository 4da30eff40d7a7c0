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

// Core reservations (CoreCnt=) under select/cons_tres: which cores each
// reservation takes, what scontrol prints for them, the errors for
// impossible requests, and where jobs inside and outside them run.
// Two nodes of four cores each.

var resvCoreSetup = []resvStep{
	// n1 cores 0-1.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=c1", "StartTime=now", "Duration=60",
		"Nodes=n1", "CoreCnt=2", "Users=root"}},
	// The rest of n1 (its free cores come first).
	{args: []string{"scontrol", "create", "reservation", "ReservationName=c2", "StartTime=now", "Duration=60",
		"NodeCnt=1", "CoreCnt=2", "Users=root"}},
	// Nothing left on n1: three cores of n2.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=c3", "StartTime=now", "Duration=60",
		"CoreCnt=3", "Users=root"}},
	// More cores than n2 has free.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=big", "StartTime=now", "Duration=60",
		"Nodes=n2", "CoreCnt=5", "Users=root"}},
	// One core count for two nodes.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=inc", "StartTime=now", "Duration=60",
		"Nodes=n[1-2]", "CoreCnt=2", "Users=root"}},
	// Cores of a node in a whole-node reservation later on: no time
	// overlap, so it is allowed.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+2hours", "Duration=60",
		"Nodes=n2", "CoreCnt=1", "Users=root"}},
	// A whole-node reservation over the core reservations' nodes.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=whole", "StartTime=now", "Duration=60",
		"Nodes=n2", "Users=root"}},
	{args: []string{"scontrol", "delete", "ReservationName=whole"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=anynode", "StartTime=now", "Duration=60",
		"NodeCnt=1", "Users=root"}},
	{args: []string{"scontrol", "delete", "ReservationName=anynode"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=rep", "StartTime=now+3hours", "Duration=60",
		"CoreCnt=1", "Users=root", "Flags=REPLACE"}},
	// Core reservations cannot be resized.
	{args: []string{"scontrol", "update", "ReservationName=c1", "CoreCnt=3"}},
	{args: []string{"scontrol", "update", "ReservationName=c1", "Nodes=n2"}},
	{args: []string{"scontrol", "update", "ReservationName=c1", "Duration=90"}},
	{args: []string{"scontrol", "delete", "ReservationName=later"}},
}

var resvCoreQueries = [][]string{
	{"scontrol", "show", "reservation"},
	{"scontrol", "show", "-o", "reservation"},
	{"squeue", "-o", "%i %j %T %r %N %C"},
	{"sinfo", "-o", "%N %T %C"},
}

// resvCoreJobs: job name, sbatch options, the state to wait for.
var resvCoreJobs = []struct {
	name  string
	args  []string
	state string
}{
	{"in1", []string{"--reservation=c1", "-n2"}, "RUNNING"},
	{"out1", []string{"-n1"}, "RUNNING"},
	{"out2", []string{"-n1"}, "PENDING"},
	{"in3", []string{"--reservation=c3", "-n2"}, "RUNNING"},
	{"in1more", []string{"--reservation=c1", "-n1"}, "PENDING"},
	{"in2big", []string{"--reservation=c2", "-n3"}, "PENDING"},
}

// jobDetail keeps the lines of scontrol show job -d that say where a job
// runs and why it waits.
func jobDetail(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, "JobState=") || strings.HasPrefix(f, "Reason=") ||
				strings.HasPrefix(f, "NodeList=") || strings.HasPrefix(f, "NumCPUs=") {
				b.WriteString(f + " ")
			}
		}
		if strings.Contains(l, "CPU_IDs=") {
			b.WriteString("\n  " + l)
		}
	}
	return b.String() + "\n"
}

func resvCoreScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range resvCoreSetup {
		out[stepKey(i, s.args)] = ctldRun(c, s.args...)
	}
	for i, j := range resvCoreJobs {
		id := uint32(i + 1)
		args := append([]string{"-J", j.name, "-t", "10", "-o", "/dev/null"}, j.args...)
		out["sbatch "+j.name] = ctldRun(c, append(append([]string{"sbatch"}, args...), "--wrap", "sleep 120")...)
		// Not fatal: what each controller did is compared below.
		_ = c.Poll(40*time.Second, func() bool { return ctldJobState(c, id) == j.state })
	}
	// Every pending job has its reason.
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None") && !strings.Contains(o, "Priority")
	}); err != nil {
		t.Logf("pending reasons not set: %v", err)
	}
	time.Sleep(2500 * time.Millisecond) // a few backfill passes
	for _, q := range resvCoreQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	for i := range resvCoreJobs {
		id := fmt.Sprint(i + 1)
		out["job "+id] = jobDetail(ctldRun(c, "scontrol", "show", "job", "-d", id))
	}
	// A reservation with a running job cannot go; one without can.
	out["delete busy"] = ctldRun(c, "scontrol", "delete", "ReservationName=c1")
	out["delete c2"] = ctldRun(c, "scontrol", "delete", "ReservationName=c2")
	return out
}

// TestSlurmctldResvCoresDifferential: core reservations under real
// slurmctld and ours, with CR_Core and CR_Core_Memory.
func TestSlurmctldResvCoresDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, params := range []string{"CR_Core", "CR_Core_Memory"} {
		t.Run(params, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4,
				ExtraConf: []string{"SchedulerParameters=bf_interval=1", "SelectTypeParameters=" + params}})
			want, got := ctldOnBoth(t, c, real, ours, resvCoreScenario)
			resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
		})
	}
}

// TestSlurmctldResvCoresRecovery: our controller keeps a core
// reservation, its cores included, across a restart, and its job stays
// on them.
func TestSlurmctldResvCoresRecovery(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 2, CPUs: 4})
	for _, a := range [][]string{
		{"scontrol", "create", "reservation", "ReservationName=c1", "StartTime=now", "Duration=60", "Nodes=n1", "CoreCnt=2", "Users=root"},
		{"scontrol", "create", "reservation", "ReservationName=c2", "StartTime=now", "Duration=60", "NodeCnt=1", "CoreCnt=1", "Users=root"},
	} {
		if o := ctldRun(c, a...); !strings.Contains(o, "Reservation created") {
			t.Fatalf("%q: %s", a, o)
		}
	}
	before := resvMasked(ctldRun(c, "scontrol", "show", "reservation"))
	if !strings.Contains(before, "NodeName=n1 CoreIDs=0-1") || !strings.Contains(before, "NodeName=n1 CoreIDs=2") {
		t.Fatalf("cores not shown:\n%s", before)
	}
	c.KillCtld()
	c.StartCtld(ours)
	if after := resvMasked(ctldRun(c, "scontrol", "show", "reservation")); after != before {
		t.Errorf("after restart:\n%s\nbefore:\n%s", after, before)
	}
	// The nodes register again before the next reservation picks cores
	// (a node in state UNKNOWN is not available to it).
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%T")
		return err == nil && o != "" && !strings.Contains(o, "unknown")
	}); err != nil {
		t.Fatalf("nodes not back: %v", err)
	}
	ctldSbatch(t, c, "--reservation=c2", "-n1", "-o", "/dev/null", "--wrap", "sleep 60")
	ctldWaitJob(t, c, 1, 40*time.Second, "RUNNING")
	if d := jobDetail(ctldRun(c, "scontrol", "show", "job", "-d", "1")); !strings.Contains(d, "Nodes=n1 CPU_IDs=2 ") {
		t.Errorf("job in c2 after restart: %s", d)
	}
	// A new core reservation does not take the recovered ones' cores.
	if o := ctldRun(c, "scontrol", "create", "reservation", "ReservationName=c3", "StartTime=now", "Duration=60",
		"Nodes=n1", "CoreCnt=1", "Users=root"); !strings.Contains(o, "Reservation created") {
		t.Fatalf("c3: %s", o)
	}
	if o := ctldRun(c, "scontrol", "show", "reservation", "c3"); !strings.Contains(o, "NodeName=n1 CoreIDs=3") {
		t.Errorf("c3 after restart:\n%s", o)
	}
}

// resvCoreMore: core counts split over nodes, per-node counts,
// FIRST_CORES, MAINT over other reservations' cores, a reservation
// starting later, and whole-node jobs beside core reservations.
var resvCoreMore = []resvStep{
	{args: []string{"scontrol", "create", "reservation", "ReservationName=split", "StartTime=now", "Duration=60",
		"NodeCnt=2", "CoreCnt=5", "Users=root"}},
	{args: []string{"scontrol", "delete", "ReservationName=split"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=per", "StartTime=now", "Duration=60",
		"Nodes=n[1-2]", "CoreCnt=1,2", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=first", "StartTime=now", "Duration=60",
		"NodeCnt=1", "CoreCnt=2", "Flags=FIRST_CORES", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=mnt", "StartTime=now", "Duration=60",
		"Nodes=n1", "CoreCnt=4", "Flags=MAINT", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=ovr", "StartTime=now", "Duration=60",
		"Nodes=n2", "CoreCnt=3", "Flags=OVERLAP", "Users=root"}},
	{args: []string{"scontrol", "delete", "ReservationName=mnt"}},
	{args: []string{"scontrol", "delete", "ReservationName=ovr"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=soon", "StartTime=now+1hour", "Duration=60",
		"Nodes=n2", "CoreCnt=2", "Users=root"}},
}

var resvCoreMoreJobs = []struct {
	name  string
	args  []string
	state string
}{
	{"insoon", []string{"--reservation=soon", "-n1"}, "PENDING"},
	{"excl", []string{"--exclusive"}, "PENDING"},
	{"short", []string{"-n3", "-t", "5"}, "RUNNING"},
	{"inper", []string{"--reservation=per", "-n3", "-N2"}, "RUNNING"},
}

func resvCoreMoreScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range resvCoreMore {
		out[stepKey(i, s.args)] = ctldRun(c, s.args...)
		if i == 0 {
			// How many cores NodeCnt=2 CoreCnt=5 took (CoreIDs= lines
			// come only once real slurmctld saved its state).
			var b strings.Builder
			for _, f := range strings.Fields(ctldRun(c, "scontrol", "show", "reservation", "split")) {
				if strings.HasPrefix(f, "CoreCnt=") || strings.HasPrefix(f, "TRES=") || strings.HasPrefix(f, "Nodes=") {
					b.WriteString(f + " ")
				}
			}
			out["split"] = b.String()
		}
	}
	// Real slurmctld sends a core reservation's cores (CoreIDs=) only
	// once it has saved its state; ours always does.
	_ = c.Poll(30*time.Second, func() bool {
		o, _, err := c.Run("scontrol", "show", "reservation")
		return err == nil && strings.Count(o, "CoreIDs=") == 3
	})
	out["show res before jobs"] = ctldRun(c, "scontrol", "show", "reservation")
	for i, j := range resvCoreMoreJobs {
		id := uint32(i + 1)
		args := append([]string{"-J", j.name, "-t", "10", "-o", "/dev/null"}, j.args...)
		out["sbatch "+j.name] = ctldRun(c, append(append([]string{"sbatch"}, args...), "--wrap", "sleep 120")...)
		_ = c.Poll(40*time.Second, func() bool { return ctldJobState(c, id) == j.state })
	}
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None") && !strings.Contains(o, "Priority")
	}); err != nil {
		t.Logf("pending reasons not set: %v", err)
	}
	time.Sleep(2500 * time.Millisecond)
	out["squeue"] = ctldRun(c, "squeue", "-o", "%i %j %T %r %N %C")
	for i := range resvCoreMoreJobs {
		id := fmt.Sprint(i + 1)
		out["job "+id] = jobDetail(ctldRun(c, "scontrol", "show", "job", "-d", id))
	}
	// Real slurmctld sets the reserved flag of nodes every 5 s.
	_ = c.Poll(15*time.Second, func() bool {
		o, _, err := c.Run("scontrol", "show", "node", "n1")
		return err == nil && strings.Contains(o, "RESERVED")
	})
	out["show node n1"] = nodeState(ctldRun(c, "scontrol", "show", "node", "n1"))
	return out
}

// nodeState keeps the State= and CPUAlloc= of scontrol show node.
func nodeState(s string) string {
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, "State=") || strings.HasPrefix(f, "CPUAlloc=") {
			b.WriteString(f + " ")
		}
	}
	return b.String() + "\n"
}

// TestSlurmctldResvCoresMore: more core reservation requests and jobs,
// under real slurmctld and ours.
func TestSlurmctldResvCoresMore(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	want, got := ctldOnBoth(t, c, real, ours, resvCoreMoreScenario)
	t.Logf("real split: %s", want["split"])
	resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
}

// resvCoreLaterScenario: a core reservation starting in an hour; a job
// that would run into it keeps off its cores, a short one may use them.
func resvCoreLaterScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	out["create"] = ctldRun(c, "scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+1hour",
		"Duration=60", "Nodes=n1", "CoreCnt=2", "Users=root")
	for i, j := range []struct {
		args  []string
		state string
	}{
		{[]string{"-n4", "-t", "200"}, "RUNNING"},
		{[]string{"-n4", "-t", "10"}, "RUNNING"},
		{[]string{"-n1", "-t", "100"}, "PENDING"},
	} {
		id := uint32(i + 1)
		args := append([]string{"sbatch", "-o", "/dev/null"}, j.args...)
		out[fmt.Sprint("sbatch ", id)] = ctldRun(c, append(args, "--wrap", "sleep 120")...)
		_ = c.Poll(40*time.Second, func() bool { return ctldJobState(c, id) == j.state })
	}
	_ = c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None") && !strings.Contains(o, "Priority")
	})
	time.Sleep(2500 * time.Millisecond)
	out["squeue"] = ctldRun(c, "squeue", "-o", "%i %T %r %N %C")
	for id := 1; id <= 3; id++ {
		out[fmt.Sprint("job ", id)] = jobDetail(ctldRun(c, "scontrol", "show", "job", "-d", fmt.Sprint(id)))
	}
	return out
}

// TestSlurmctldResvCoresLater: jobs around a core reservation that
// starts later, under real slurmctld and ours.
func TestSlurmctldResvCoresLater(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	want, got := ctldOnBoth(t, c, real, ours, resvCoreLaterScenario)
	t.Logf("real:\n%s%s%s%s", want["squeue"], want["job 1"], want["job 2"], want["job 3"])
	resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
}
