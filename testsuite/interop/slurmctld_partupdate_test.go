package interop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// partStep is one command of a partition/node update scenario: its
// output (and exit status) is recorded under its text; as, when set, runs
// it as that uid:gid.
type partStep struct {
	args []string
	as   *[2]uint32
	// settle waits until every node responds again (after undrain the
	// node must register, which the two controllers ask for at
	// different moments).
	settle bool
}

func ps(args ...string) partStep { return partStep{args: args} }

var nobodyIDs = [2]uint32{65534, 65534}

// partShow are the queries run after the steps that change something.
var partShow = [][]string{
	{"scontrol", "show", "partition"},
	{"sinfo"},
	{"sinfo", "-a", "-o", "%P %a %l %L %D %N %h %s %g"},
}

// partUpdateSteps change partitions with scontrol update/create/delete
// as 22.05's update_part handles them, errors included.
var partUpdateSteps = []partStep{
	ps("scontrol", "update", "partitionname=other", "state=down"),
	ps("scontrol", "update", "partitionname=other", "maxtime=30", "defaulttime=10", "maxnodes=1", "minnodes=1"),
	ps("scontrol", "update", "partitionname=other", "defaulttime=100"),
	ps("scontrol", "update", "partitionname=other", "nodes=n[1-2]"),
	ps("scontrol", "update", "partitionname=other", "nodes=n1,nosuch"),
	ps("scontrol", "update", "partitionname=other", "allowgroups=root", "allowaccounts=acct1,acct2"),
	ps("scontrol", "update", "partitionname=other", "default=yes"),
	ps("scontrol", "update", "partitionname=other", "hidden=yes", "prioritytier=5", "priorityjobfactor=3"),
	ps("scontrol", "update", "partitionname=other", "oversubscribe=force:2", "gracetime=10", "lln=yes"),
	ps("scontrol", "update", "partitionname=other", "oversubscribe=exclusive", "exclusiveuser=yes", "rootonly=yes"),
	ps("scontrol", "update", "partitionname=other", "oversubscribe=yes:4", "hidden=no", "lln=no", "rootonly=no"),
	ps("scontrol", "update", "partitionname=other", "state=inactive"),
	ps("scontrol", "update", "partitionname=other", "state=drain", "allowgroups=all", "allowaccounts=all"),
	ps("scontrol", "update", "partitionname=debug", "default=yes", "nodes="),
	ps("scontrol", "update", "partitionname=debug", "nodes=ALL", "state=up"),
	ps("scontrol", "update", "partitionname=nosuch", "state=up"),
	ps("scontrol", "update", "partitionname=other", "maxmempercpu=100", "defmempernode=50", "reqresv=yes", "disablerootjobs=yes"),
	ps("scontrol", "update", "partitionname=other", "maxmempernode=0", "defmempercpu=20", "reqresv=no", "disablerootjobs=no"),
	ps("scontrol", "update", "partitionname=other", "preemptmode=off", "maxcpuspernode=2", "tresbillingweights=CPU=2.0,Mem=0.25G"),
	ps("scontrol", "update", "partitionname=other", "tresbillingweights=bogus"),
	ps("scontrol", "update", "partitionname=other", "maxcpuspernode=UNLIMITED", "tresbillingweights=", "overtimelimit=5"),
	ps("scontrol", "update", "partitionname=other", "denyqos=normal", "allocnodes=n1", "alternate=debug", "denyaccounts=bad"),
	ps("scontrol", "update", "partitionname=other", "allowqos=normal", "allocnodes=ALL", "alternate=NONE", "denyaccounts="),
	ps("scontrol", "update", "partitionname=other", "jobdefaults=DefMemPerGPU=100"),
	ps("scontrol", "update", "partitionname=other", "jobdefaults=bogus=1"),
	ps("scontrol", "update", "partitionname=other", "cpubind=cores"),
	ps("scontrol", "update", "partitionname=other", "defaulttime=UNLIMITED", "maxnodes=UNLIMITED", "minnodes=0", "maxtime=UNLIMITED"),
	{args: []string{"scontrol", "update", "partitionname=other", "state=up"}, as: &nobodyIDs},
	ps("scontrol", "create", "partitionname=new", "nodes=n2", "maxtime=5"),
	ps("scontrol", "create", "partitionname=new", "nodes=n2"),
	ps("scontrol", "delete", "partitionname=new"),
	ps("scontrol", "delete", "partitionname=nosuch"),
	{args: []string{"scontrol", "delete", "partitionname=other"}, as: &nobodyIDs},
}

// nodeShow are the queries run after the node update steps.
var nodeShow = [][]string{
	{"scontrol", "show", "node", "n1"},
	{"sinfo", "-N", "-o", "%N %f %b %w %E"},
}

// nodeUpdateSteps change node features, weight, comment and extra.
var nodeUpdateSteps = []partStep{
	ps("scontrol", "update", "nodename=n1", "features=fa,fb"),
	ps("scontrol", "update", "nodename=n1", "activefeatures=fa"),
	ps("scontrol", "update", "nodename=n1", "activefeatures=fc"),
	ps("scontrol", "update", "nodename=n[1-2]", "weight=7", "comment=hello there", "extra=x=1"),
	ps("scontrol", "update", "nodename=n2", "features=fc", "activefeatures=fc", "weight=3"),
	ps("scontrol", "update", "nodename=n1", "features=fa", "activefeatures=fa,fb"),
	ps("scontrol", "update", "nodename=n1,nosuch", "comment=partial"),
	ps("scontrol", "update", "nodename=n1,nosuch", "state=drain", "reason=x"),
	{args: []string{"scontrol", "update", "nodename=n1", "state=undrain"}, settle: true},
	ps("scontrol", "update", "nodename=n2", "comment=", "extra="),
	ps("scontrol", "update", "nodename=n2", "features="),
	ps("scontrol", "update", "nodename=n1", "activefeatures="),
	{args: []string{"scontrol", "update", "nodename=n1", "weight=1"}, as: &nobodyIDs},
}

func partRun(c *ctldharness.Cluster, s partStep) string {
	if s.as == nil {
		return ctldRun(c, s.args...)
	}
	out, errOut, err := c.RunAs(s.as[0], s.as[1], s.args[0], s.args[1:]...)
	var b strings.Builder
	b.WriteString(out)
	if errOut != "" {
		b.WriteString("--- stderr\n" + errOut)
	}
	if err != nil {
		b.WriteString("--- exit: " + err.Error() + "\n")
	}
	return b.String()
}

func partStepName(i int, s partStep) string {
	name := fmt.Sprintf("%02d %s", i, strings.Join(s.args, " "))
	if s.as != nil {
		name += " (as nobody)"
	}
	return name
}

// partCollect runs the steps, each followed by the queries.
func partCollect(t *testing.T, c *ctldharness.Cluster, steps []partStep, show [][]string) map[string]string {
	out := map[string]string{}
	for i, s := range steps {
		name := partStepName(i, s)
		out[name] = partRun(c, s)
		if s.settle {
			partWaitRegistered(t, c)
		}
		for _, q := range show {
			out[name+" | "+strings.Join(q, " ")] = ctldRun(c, q...)
		}
	}
	return out
}

func partCompare(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		w, g := ctldMasked(w), ctldMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}

var partTestOptions = ctldharness.Options{Nodes: 2, Partitions: []string{
	"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
	"PartitionName=other Nodes=n1 MaxTime=60 State=UP",
}}

// TestSlurmctldPartitionUpdateDiff runs the same scontrol update/create/
// delete of partitions and update of nodes against real slurmctld and
// ours (the same real slurmd, real commands) and compares every output.
func TestSlurmctldPartitionUpdateDiff(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, partTestOptions)
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := partCollect(t, c, partUpdateSteps, partShow)
		for k, v := range partCollect(t, c, nodeUpdateSteps, nodeShow) {
			out["node "+k] = v
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	partCompare(t, want, got)
}

// partJobsQueue is squeue with what matters here: state, reason, nodes.
var partJobsQueue = []string{"squeue", "-h", "-o", "%j %T %r %N"}

// partSettled waits until the queue satisfies want and returns it.
func partSettled(t *testing.T, c *ctldharness.Cluster, want func(string) bool) string {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run(partJobsQueue[0], partJobsQueue[1:]...)
		last = o
		return err == nil && want(o)
	}); err != nil {
		t.Errorf("queue did not settle: %v (last %q)", err, last)
	}
	return last
}

func partEmpty(o string) bool { return strings.TrimSpace(o) == "" }

// partJobsCollect submits jobs against partition states and node
// features, waiting for the scheduler between the steps.
func partJobsCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	run := func(name string, args ...string) { out[name] = ctldRun(c, args...) }
	run("down", "scontrol", "update", "partitionname=other", "state=down")
	run("sbatch to down", "sbatch", "-J", "indown", "-p", "other", "-o", "/dev/null", "--wrap", "sleep 30")
	out["queue with down"] = partSettled(t, c, func(o string) bool { return strings.Contains(o, "indown PENDING PartitionDown") })
	run("inactive", "scontrol", "update", "partitionname=other", "state=inactive")
	out["queue with inactive"] = partSettled(t, c, func(o string) bool { return strings.Contains(o, "indown PENDING PartitionInactive") })
	run("drain", "scontrol", "update", "partitionname=other", "state=drain")
	out["queue with drain"] = partSettled(t, c, func(o string) bool { return strings.Contains(o, "indown RUNNING") })
	run("cancel", "scancel", "-n", "indown")
	partSettled(t, c, partEmpty)
	run("features", "scontrol", "update", "nodename=n2", "features=big", "weight=1")
	run("sbatch -C big", "sbatch", "-J", "wantsbig", "-C", "big", "-o", "/dev/null", "--wrap", "sleep 30")
	out["queue with feature"] = partSettled(t, c, func(o string) bool { return strings.Contains(o, "wantsbig RUNNING") })
	run("scancel wantsbig", "scancel", "-n", "wantsbig")
	partSettled(t, c, partEmpty)
	run("up", "scontrol", "update", "partitionname=other", "state=up")
	run("held in other", "sbatch", "-J", "held", "-H", "-p", "other", "-o", "/dev/null", "--wrap", "true")
	run("delete in use", "scontrol", "delete", "partitionname=other")
	run("scancel held", "scancel", "-n", "held")
	partSettled(t, c, partEmpty)
	run("delete unused", "scontrol", "delete", "partitionname=other")
	run("show after delete", "scontrol", "show", "partition")
	return out
}

// TestSlurmctldPartitionStateScheduling: partition states as the
// scheduler sees them (DOWN: queued, not started, PartitionDown;
// INACTIVE: not started, PartitionInactive; DRAIN: queued jobs start),
// node features set by scontrol update steering later jobs, and a
// partition in use refused for deletion.
func TestSlurmctldPartitionStateScheduling(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, partTestOptions)
	want, got := ctldOnBoth(t, c, real, ours, partJobsCollect)
	partCompare(t, want, got)
}

// partRefusedCollect submits what 22.05 refuses at submission: jobs to a
// DRAIN or INACTIVE partition, a constraint no node has.
func partRefusedCollect(c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	run := func(name string, args ...string) { out[name] = ctldRun(c, args...) }
	run("inactive", "scontrol", "update", "partitionname=other", "state=inactive")
	run("sbatch to inactive", "sbatch", "-J", "x", "-H", "-p", "other", "-o", "/dev/null", "--wrap", "true")
	run("drain", "scontrol", "update", "partitionname=other", "state=drain")
	run("sbatch to drain", "sbatch", "-J", "x", "-H", "-p", "other", "-o", "/dev/null", "--wrap", "true")
	run("sbatch to drain and up", "sbatch", "-J", "x", "-H", "-p", "other,debug", "-o", "/dev/null", "--wrap", "true")
	run("features", "scontrol", "update", "nodename=n2", "features=big")
	run("sbatch -C nosuch", "sbatch", "-J", "x", "-H", "-C", "nosuch", "-o", "/dev/null", "--wrap", "true")
	run("sbatch -C big", "sbatch", "-J", "x", "-H", "-C", "big", "-o", "/dev/null", "--wrap", "true")
	run("queue", "squeue", "-h", "-o", "%j %T %r %P")
	return out
}

// TestSlurmctldPartitionSubmitRefused: submissions 22.05 refuses because
// of partition state (ESLURM_PARTITION_NOT_AVAIL) or an unknown feature
// (ESLURM_INVALID_FEATURE), with features changed by scontrol update.
func TestSlurmctldPartitionSubmitRefused(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, partTestOptions)
	want, got := ctldOnBoth(t, c, real, ours, func(_ *testing.T, c *ctldharness.Cluster) map[string]string { return partRefusedCollect(c) })
	partCompare(t, want, got)
}

// partWaitRegistered waits until every node registered with the
// controller (no UNKNOWN state, none not responding).
func partWaitRegistered(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("scontrol", "-o", "show", "node")
		last = o
		if err != nil || strings.TrimSpace(o) == "" {
			return false
		}
		for _, line := range strings.Split(strings.TrimSpace(o), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "State=") && (strings.Contains(f, "UNKNOWN") || strings.Contains(f, "*") || strings.Contains(f, "NOT_RESPONDING")) {
					return false
				}
			}
		}
		return true
	}); err != nil {
		t.Errorf("nodes did not register: %v (last %q)", err, last)
	}
}

// partSortLines sorts the lines after the header: sinfo -N sorts by node
// name only, with an unstable sort, so a node's partitions come in any
// order.
func partSortLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 2 {
		body := lines[1:]
		slices.Sort(body)
	}
	return strings.Join(lines, "\n") + "\n"
}

// partRestartShow is what is compared after each restart.
var partRestartShow = [][]string{
	{"scontrol", "show", "partition"},
	{"scontrol", "show", "node"},
	{"sinfo", "-N", "-o", "%N %P %f %b %w %E %T"},
}

// partRestartCollect changes partitions and nodes, then restarts the
// controller without options, with -R and with -c, recording what each
// start kept.
func partRestartCollect(t *testing.T, c *ctldharness.Cluster, bin string) map[string]string {
	out := map[string]string{}
	for i, s := range []partStep{
		ps("scontrol", "update", "partitionname=other", "state=down", "maxtime=30", "nodes=n[1-2]", "prioritytier=4"),
		ps("scontrol", "create", "partitionname=made", "nodes=n2", "maxtime=7"),
		ps("scontrol", "update", "nodename=n1", "features=fa,fb", "activefeatures=fa", "weight=9", "comment=note", "extra=e1"),
		ps("scontrol", "update", "nodename=n2", "state=drain", "reason=disk swap"),
	} {
		out[partStepName(i, s)] = partRun(c, s)
	}
	show := func(label string) {
		partWaitRegistered(t, c)
		for _, q := range partRestartShow {
			o := ctldRun(c, q...)
			if q[0] == "sinfo" {
				o = partSortLines(o)
			}
			out[label+" | "+strings.Join(q, " ")] = o
		}
	}
	show("before restart")
	for _, start := range [][]string{{}, {"-R"}, {"-c"}} {
		c.StopCtld()
		c.StartCtld(bin, start...)
		show("after restart " + strings.Join(start, " "))
		if len(start) == 0 {
			// The default start kept only the node states: set the rest
			// again for -R to find.
			for i, s := range []partStep{
				ps("scontrol", "update", "partitionname=other", "state=down", "maxtime=30", "nodes=n[1-2]", "prioritytier=4"),
				ps("scontrol", "create", "partitionname=made", "nodes=n2", "maxtime=7"),
				ps("scontrol", "update", "nodename=n1", "features=fa,fb", "activefeatures=fa", "weight=9"),
			} {
				out["again "+partStepName(i, s)] = partRun(c, s)
			}
			// Real slurmctld saves its state periodically and on exit;
			// both controllers stop with SIGTERM, which saves.
		}
	}
	return out
}

// TestSlurmctldPartitionRecover: slurmctld without options keeps DOWN/
// DRAIN nodes with their reasons (and comments) but takes partitions and
// features from slurm.conf; -R recovers the saved partitions (also one
// created by scontrol) and node records; -c starts from slurm.conf.
func TestSlurmctldPartitionRecover(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, partTestOptions)
	c.Start(real, "-c", "-i")
	want := partRestartCollect(t, c, real)
	c.Stop()
	c.Start(ours, "-c")
	got := partRestartCollect(t, c, ours)
	c.Stop()
	partCompare(t, want, got)
}
