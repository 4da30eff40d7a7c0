package interop

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// ctldCompare reports every entry whose masked outputs differ.
func ctldCompare(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		w, g := ctldMasked(w), ctldMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}

// ctldWaitState polls until sinfo shows node in state st.
func ctldWaitState(t *testing.T, c *ctldharness.Cluster, node, st string, limit time.Duration) {
	t.Helper()
	var last string
	if err := c.Poll(limit, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-N", "-n", node, "-o", "%T")
		last = strings.TrimSpace(o)
		return last == st
	}); err != nil {
		t.Fatalf("node %s not %s (last %q): %v", node, st, last, err)
	}
}

// TestSlurmctldNotResponding stops a slurmd: the controller's pings fail,
// the node is marked not responding and after SlurmdTimeout set DOWN "Not
// responding"; started again it registers and, with ReturnToService=2,
// is idle again. Real slurmctld and ours go through the same states.
func TestSlurmctldNotResponding(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SlurmdTimeout=6"}})
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		c.Start(bin, args...)
		c.StopNode("n2")
		ctldWaitState(t, c, "n2", "down*", 60*time.Second)
		out["down: sinfo -R"] = ctldRun(c, "sinfo", "-R", "-o", "%N %T %E %U")
		out["down: sinfo -N"] = ctldRun(c, "sinfo", "-N")
		out["down: show node n2"] = ctldRun(c, "scontrol", "show", "node", "n2")
		c.StartNode("n2")
		ctldWaitState(t, c, "n2", "idle", 60*time.Second)
		out["back: sinfo -R"] = ctldRun(c, "sinfo", "-R")
		out["back: show node n2"] = ctldRun(c, "scontrol", "show", "node", "n2")
		c.Stop()
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	ctldCompare(t, want, got)
}

// TestSlurmctldReconfigureShutdown: scontrol reconfigure makes the
// controller read slurm.conf again (a partition added to it shows up in
// sinfo); scontrol shutdown stops the controller and every slurmd.
func TestSlurmctldReconfigureShutdown(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2})
	orig, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		if err := os.WriteFile(c.Conf, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		c.Start(bin, args...)
		added := string(orig) + "PartitionName=extra Nodes=n1 MaxTime=30 State=UP\n"
		if err := os.WriteFile(c.Conf, []byte(added), 0o644); err != nil {
			t.Fatal(err)
		}
		out["reconfigure"] = ctldRun(c, "scontrol", "reconfigure")
		if err := c.Poll(30*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-o", "%R %T")
			n, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T")
			return strings.Contains(o, "extra idle") && !strings.Contains(n, "*")
		}); err != nil {
			t.Errorf("partition extra not idle after reconfigure: %v", err)
		}
		out["after: sinfo"] = ctldRun(c, "sinfo")
		out["after: show partition extra"] = ctldRun(c, "scontrol", "show", "partition", "extra")
		out["shutdown"] = ctldRun(c, "scontrol", "shutdown")
		for _, d := range []string{"slurmctld", "slurmd-n1", "slurmd-n2"} {
			if !c.WaitExit(d, 30*time.Second) {
				t.Errorf("%s still running 30 s after scontrol shutdown (%s)", d, bin)
			}
		}
		out["after shutdown: ping"] = ctldRun(c, "scontrol", "ping")
		c.Stop()
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	ctldCompare(t, want, got)
}

// TestSlurmctldAuthorization: an ordinary user may read everything but
// may not update nodes, reconfigure or shut the controller down; the
// errors are the ones real slurmctld gives.
func TestSlurmctldAuthorization(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1})
	const nobody = 65534
	asNobody := func(args ...string) string {
		o, e, err := c.RunAs(nobody, nobody, args[0], args[1:]...)
		s := o
		if e != "" {
			s += "--- stderr\n" + e
		}
		if err != nil {
			s += "--- exit: " + err.Error() + "\n"
		}
		return s
	}
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		c.Start(bin, args...)
		for _, q := range [][]string{
			{"sinfo"},
			{"scontrol", "show", "node"},
			{"scontrol", "ping"},
			{"scontrol", "update", "nodename=n1", "state=drain", "reason=x"},
			{"scontrol", "reconfigure"},
			{"scontrol", "shutdown"},
		} {
			out["nobody: "+strings.Join(q, " ")] = asNobody(q...)
		}
		out["root: sinfo"] = ctldRun(c, "sinfo")
		c.Stop()
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	ctldCompare(t, want, got)
}

// TestSlurmctldPingTree pings five real slurmd through forwarding trees
// two wide (TreeWidth=2, so every ping and registration request goes
// through interior slurmds); the node whose slurmd is stopped goes DOWN
// "Not responding" and no other node is affected, whether it was a head
// or a leaf of its span.
func TestSlurmctldPingTree(t *testing.T) {
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 5, ExtraConf: []string{"SlurmdTimeout=6", "TreeWidth=2"}})
	c.Start(ours, "-c")
	defer c.Stop()
	for _, victim := range []string{"n1", "n4"} {
		c.StopNode(victim)
		ctldWaitState(t, c, victim, "down*", 60*time.Second)
		out, _, err := c.Run("sinfo", "-h", "-N", "-o", "%N %T %E")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			switch {
			case f[0] == victim && strings.Join(f[1:], " ") != "down* Not responding":
				t.Errorf("%s: %q", victim, line)
			case f[0] != victim && (f[0] == "n1" || f[0] == "n4"):
				// the earlier victim, back in service below
			case f[0] != victim && f[1] != "idle":
				t.Errorf("%s stopped, yet %q", victim, line)
			}
		}
		c.StartNode(victim)
		ctldWaitState(t, c, victim, "idle", 60*time.Second)
	}
}
