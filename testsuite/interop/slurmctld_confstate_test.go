package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var confStateNodeRE = regexp.MustCompile(`(NodeName|State|Reason)=\S+`)

// TestSlurmctldConfNodeState compares the nodes whose NodeName line has a
// State= (state_str2int: a base state name, or a CLOUD, DRAIN or FAIL
// prefix) as the controller starts without saved state, and once their
// slurmds have registered.
func TestSlurmctldConfNodeState(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	states := []string{"FAIL", "failing", "DRAIN", "DOWN", "UNKNOWN", "IDLE", "FUTURE"}
	conf := map[string]string{}
	var names []string
	for i, s := range states {
		n := fmt.Sprintf("n%d", i+1)
		conf[n] = "State=" + s
		names = append(names, n)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: len(states), CPUs: 1, NodeConf: conf, NotStarted: names})
	look := func(out map[string]string, tag string) {
		out[tag+": sinfo"] = ctldRun(c, "sinfo", "-h", "-N", "-o", "%N %T %E")
		show, _, _ := c.Run("scontrol", "show", "node", "-o")
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(show), "\n") {
			lines = append(lines, strings.Join(confStateNodeRE.FindAllString(l, -1), " "))
		}
		out[tag+": show"] = strings.Join(lines, "\n")
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		look(out, "1 start")
		for _, n := range names {
			c.StartNode(n)
		}
		// Registered: no node is UNKNOWN any more, and the FUTURE one
		// is shown.
		registered := func() bool {
			o, _, _ := c.Run("scontrol", "show", "node", "-o")
			return !strings.Contains(o, "State=UNKNOWN") && strings.Contains(o, "NodeName=n7 ")
		}
		if err := c.Poll(60*time.Second, registered); err != nil {
			o, _, _ := c.Run("scontrol", "show", "node", "-o")
			t.Logf("nodes not all registered: %s", o)
		}
		look(out, "2 registered")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	if testing.Verbose() {
		for _, k := range []string{"1 start: sinfo", "1 start: show", "2 registered: sinfo", "2 registered: show"} {
			t.Logf("%s (real):\n%s\n(ours):\n%s", k, want[k], got[k])
		}
	}
	ctldCompare(t, want, got)
}
