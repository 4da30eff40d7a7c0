package interop

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// reconfigSteps change nodes and partitions with scontrol, then
// reconfigure: what survives is slurm.conf's or scontrol's as
// _restore_node_state, _set_features and _restore_part_state decide.
var reconfigSteps = [][]string{
	{"scontrol", "update", "nodename=n1", "comment=hello", "extra=world", "weight=5"},
	{"scontrol", "update", "nodename=n1", "features=fa,fb", "activefeatures=fa"},
	{"scontrol", "update", "nodename=n2", "state=drain", "reason=maint"},
	{"scontrol", "update", "partitionname=debug", "state=down", "maxtime=30", "nodes=n1", "hidden=yes"},
	{"scontrol", "update", "partitionname=other", "state=drain", "default=yes"},
	{"scontrol", "create", "partitionname=extra", "nodes=n2", "maxtime=5"},
}

func reconfigCollect(t *testing.T, c *ctldharness.Cluster, sighup bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range reconfigSteps {
		out["step "+string(rune('a'+i))+" "+strings.Join(s[1:3], " ")] = ctldRun(c, s...)
	}
	if sighup {
		reconfigSignal(t, c)
	} else {
		out["reconfigure"] = ctldRun(c, "scontrol", "reconfigure")
	}
	// The nodes register again after REQUEST_RECONFIGURE: their slurmd
	// version is unknown until then.
	partWaitRegistered(t, c)
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("scontrol", "-o", "show", "node")
		return err == nil && strings.Count(o, " Version=22.") == len(c.Nodes)
	}); err != nil {
		t.Errorf("nodes did not register again after reconfigure: %v", err)
	}
	out["show node"] = ctldRun(c, "scontrol", "show", "node")
	out["show partition"] = ctldRun(c, "scontrol", "show", "partition", "-a")
	out["sinfo"] = partSortLines(ctldRun(c, "sinfo", "-a", "-N", "-o", "%N %P %T %f %w"))
	out["sinfo -R"] = ctldRun(c, "sinfo", "-R")
	return out
}

// reconfigSignal sends the controller SIGHUP and waits until it has read
// slurm.conf again: the time `scontrol show config` says its
// configuration is from changes.
func reconfigSignal(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	asOf := func() string {
		o, _, _ := c.Run("scontrol", "show", "config")
		first, _, _ := strings.Cut(o, "\n")
		return first
	}
	before := asOf()
	if !strings.HasPrefix(before, "Configuration data as of ") {
		t.Fatalf("scontrol show config: %q", before)
	}
	// The time has a one-second resolution: let it pass first.
	stamp := strings.TrimPrefix(before, "Configuration data as of ")
	if err := c.Poll(60*time.Second, func() bool { return time.Now().Format("2006-01-02T15:04:05") > stamp }); err != nil {
		t.Fatal(err)
	}
	if err := c.Ctld().Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := c.Poll(60*time.Second, func() bool { a := asOf(); return a != before && a != "" }); err != nil {
		t.Fatalf("the controller did not read slurm.conf again after SIGHUP: %v", err)
	}
}

// TestSlurmctldReconfigure compares, for real slurmctld and ours, what
// `scontrol reconfigure` keeps of scontrol's changes: nodes keep their
// state, reason, comment, extra and weight while their features return
// to slurm.conf's; partitions return to slurm.conf unless ReconfigFlags
// keeps their state (KeepPartState) or everything scontrol changed,
// partitions it created included (KeepPartInfo).
//
// SIGHUP reads slurm.conf as read_slurm_conf(2): nodes keep their features
// too, and partitions what scontrol changed unless ReconfigFlags is
// KeepPartState alone.
func TestSlurmctldReconfigure(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, tc := range []struct {
		flags  string
		sighup bool
	}{
		{"", false}, {"KeepPartState", false}, {"KeepPartInfo", false}, {"KeepPartInfo,KeepPartState", false},
		{"", true}, {"KeepPartState", true}, {"KeepPartInfo", true},
	} {
		flags, name := tc.flags, tc.flags
		if name == "" {
			name = "none"
		}
		if tc.sighup {
			name = "SIGHUP " + name
		}
		t.Run(strings.NewReplacer(",", "+", " ", "_").Replace(name), func(t *testing.T) {
			opts := ctldharness.Options{Nodes: 2, Partitions: []string{
				"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
				"PartitionName=other Nodes=n2 MaxTime=60 State=UP",
			}}
			if flags != "" {
				opts.ExtraConf = []string{"ReconfigFlags=" + flags}
			}
			c := ctldharness.New(t, opts)
			collect := func(bin string, args ...string) map[string]string {
				c.Start(bin, args...)
				defer c.Stop()
				return reconfigCollect(t, c, tc.sighup)
			}
			want := collect(real, "-c", "-i")
			got := collect(ours, "-c")
			ctldCompare(t, want, got)
		})
	}
}

// nodeConfCase changes n1's node line in slurm.conf, then reconfigures.
type nodeConfCase struct {
	name string
	// from and to replace part of n1's node line.
	from, to string
	// restartNode restarts n1's slurmd after the reconfigure (it then
	// registers with the controller again).
	restartNode bool
	// job, if set, is submitted after the reconfigure and waited for
	// until it runs; then the controller is reconfigured again with the
	// same slurm.conf.
	job []string
}

// The harness's node line for n1 is "... CPUs=2 RealMemory=1000 ...";
// this machine's slurmd reports its real hardware (no config_overrides),
// below the raised values.
var nodeConfCases = []nodeConfCase{
	{name: "memory raised", from: "RealMemory=1000", to: "RealMemory=100000000"},
	{name: "memory lowered", from: "RealMemory=1000", to: "RealMemory=500"},
	{name: "cpus lowered", from: "CPUs=2", to: "CPUs=1", job: []string{"-w", "n1", "-n2", "-o", "/dev/null", "--wrap", "sleep 30"}},
	{name: "cpus raised", from: "CPUs=2", to: "CPUs=4096", restartNode: true},
}

// nodeConfCollect edits n1's line of slurm.conf (orig), reconfigures and
// records what the commands show; slurm.conf is orig again on return.
func nodeConfCollect(t *testing.T, c *ctldharness.Cluster, orig string, nc nodeConfCase) map[string]string {
	t.Helper()
	out := map[string]string{}
	i := strings.Index(orig, "NodeName=n1 ")
	j := strings.Index(orig[i:], "\n") + i
	line := strings.Replace(orig[i:j], nc.from, nc.to, 1)
	if err := os.WriteFile(c.Conf, []byte(orig[:i]+line+orig[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile(c.Conf, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
	}()
	out["1 reconfigure"] = ctldRun(c, "scontrol", "reconfigure")
	// Settled: the nodes told to reconfigure (all after a reconfigure that
	// succeeded, none after one that failed) or restarted registered again
	// (their slurmd version, forgotten by the reconfigure, is known again).
	var again []string
	if out["1 reconfigure"] == "" {
		again = []string{"n1", "n2"}
	}
	if nc.restartNode {
		c.StopNode("n1")
		c.StartNode("n1")
		again = append(again, "n1")
	}
	for _, n := range again {
		if err := c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run("scontrol", "-o", "show", "node", n)
			return err == nil && strings.Contains(o, " Version=22.")
		}); err != nil {
			t.Errorf("%s did not register again: %v", n, err)
		}
	}
	out["2 show node"] = ctldRun(c, "scontrol", "show", "node")
	out["3 sinfo"] = ctldRun(c, "sinfo", "-N", "-o", "%N %T %c %m %d %w %E")
	out["4 sinfo -R"] = ctldRun(c, "sinfo", "-R")
	if nc.job == nil {
		return out
	}
	id := ctldSbatch(t, c, nc.job...)
	out["5 job state"] = ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
	out["6 squeue"] = ctldRun(c, "squeue", "-o", "%T %C %N")
	out["7 show node n1"] = ctldRun(c, "scontrol", "show", "node", "n1")
	// The same slurm.conf again: no CPU count changes, the nodes are told
	// to reconfigure and register; n1 still runs on what it had.
	out["8 reconfigure again"] = ctldRun(c, "scontrol", "reconfigure")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("scontrol", "-o", "show", "node")
		return err == nil && strings.Count(o, " Version=22.") == 2
	}); err != nil {
		t.Errorf("the nodes did not register again: %v", err)
	}
	out["9 show node n1"] = ctldRun(c, "scontrol", "show", "node", "n1")
	if _, _, err := c.Run("scancel", strconv.Itoa(int(id))); err != nil {
		t.Errorf("scancel: %v", err)
	}
	return out
}

// TestSlurmctldReconfigureNodeConfig compares, for real slurmctld and
// ours, a reconfigure after slurm.conf changed a registered node's CPUs or
// RealMemory: what the reconfigure answers, what scontrol and sinfo show,
// whether the node is drained when its registration no longer fits, and
// how jobs are placed on it afterwards.
func TestSlurmctldReconfigureNodeConfig(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, nc := range nodeConfCases {
		t.Run(strings.ReplaceAll(nc.name, " ", "_"), func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 2, NoConfigOverrides: true})
			orig, err := os.ReadFile(c.Conf)
			if err != nil {
				t.Fatal(err)
			}
			collect := func(bin string, args ...string) map[string]string {
				c.Start(bin, args...)
				defer c.Stop()
				return nodeConfCollect(t, c, string(orig), nc)
			}
			want := collect(real, "-c", "-i")
			got := collect(ours, "-c")
			ctldCompare(t, want, got)
		})
	}
}
