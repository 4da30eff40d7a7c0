package interop

import (
	"strings"
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

func reconfigCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range reconfigSteps {
		out["step "+string(rune('a'+i))+" "+strings.Join(s[1:3], " ")] = ctldRun(c, s...)
	}
	out["reconfigure"] = ctldRun(c, "scontrol", "reconfigure")
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

// TestSlurmctldReconfigure compares, for real slurmctld and ours, what
// `scontrol reconfigure` keeps of scontrol's changes: nodes keep their
// state, reason, comment, extra and weight while their features return
// to slurm.conf's; partitions return to slurm.conf unless ReconfigFlags
// keeps their state (KeepPartState) or everything scontrol changed,
// partitions it created included (KeepPartInfo).
func TestSlurmctldReconfigure(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, flags := range []string{"", "KeepPartState", "KeepPartInfo", "KeepPartInfo,KeepPartState"} {
		name := flags
		if name == "" {
			name = "none"
		}
		t.Run(strings.ReplaceAll(name, ",", "+"), func(t *testing.T) {
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
				return reconfigCollect(t, c)
			}
			want := collect(real, "-c", "-i")
			got := collect(ours, "-c")
			ctldCompare(t, want, got)
		})
	}
}
