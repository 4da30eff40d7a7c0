package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// ctldQueries are the read-only commands compared between real slurmctld
// and ours on the same cluster.
var ctldQueries = [][]string{
	{"sinfo"},
	{"sinfo", "-N", "-l"},
	{"sinfo", "-R"},
	{"sinfo", "-a", "-o", "%P %a %l %D %t %N %c %m %f %G"},
	{"scontrol", "show", "node"},
	{"scontrol", "show", "node", "n2"},
	{"scontrol", "show", "partition"},
	{"scontrol", "ping"},
	{"squeue"},
	{"scontrol", "show", "job"},
	{"scontrol", "show", "job", "5"},
	{"squeue", "-j", "5"},
	{"squeue", "-u", "root"},
	{"squeue", "-s"},
	{"sinfo", "-n", "n1"},
	{"scontrol", "show", "node", "nosuch"},
	{"scontrol", "show", "partition", "nosuch"},
	{"scontrol", "show", "config"},
}

// ctldCollect runs the queries, then the drain/resume sequence, recording
// every output.
func ctldCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	for _, q := range ctldQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	out["update drain"] = ctldRun(c, "scontrol", "update", "nodename=n2", "state=drain", "reason=maintenance x")
	for _, q := range [][]string{{"sinfo"}, {"sinfo", "-R", "-o", "%N %T %E"}, {"scontrol", "show", "node", "n2"}} {
		out["after drain: "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	out["update resume"] = ctldRun(c, "scontrol", "update", "nodename=n2", "state=resume")
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-n", "n2", "-o", "%T")
		return strings.TrimSpace(o) == "idle"
	}); err != nil {
		t.Errorf("n2 not idle after resume: %v", err)
	}
	for _, q := range [][]string{{"sinfo"}, {"scontrol", "show", "node", "n2"}} {
		out["after resume: "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	out["update reason only"] = ctldRun(c, "scontrol", "update", "nodename=n2", "reason=just a note")
	out["after reason only: show node n2"] = ctldRun(c, "scontrol", "show", "node", "n2")
	out["update undrain"] = ctldRun(c, "scontrol", "update", "nodename=n2", "state=undrain")
	ctldWaitResponding(t, c)
	out["update drain n[1-2]"] = ctldRun(c, "scontrol", "update", "nodename=n[1-2]", "state=drain", "reason=both")
	out["after drain both: sinfo -R"] = ctldRun(c, "sinfo", "-R", "-o", "%N %T %E")
	out["update idle"] = ctldRun(c, "scontrol", "update", "nodename=n1", "state=idle")
	out["after idle: sinfo -N"] = ctldRun(c, "sinfo", "-N")
	out["update bad node"] = ctldRun(c, "scontrol", "update", "nodename=nosuch", "state=drain", "reason=x")
	out["update bad state"] = ctldRun(c, "scontrol", "update", "nodename=n1", "state=allocated")
	out["update down"] = ctldRun(c, "scontrol", "update", "nodename=n1", "state=down", "reason=gone")
	out["after down: sinfo -N"] = ctldRun(c, "sinfo", "-N")
	return out
}

// ctldWaitResponding waits until no node is marked not responding (a
// resumed or undrained node must register again first; how soon it does
// differs between controllers and is not compared).
func ctldWaitResponding(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	if err := c.Poll(30*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-N", "-o", "%T")
		return err == nil && !strings.Contains(o, "*")
	}); err != nil {
		t.Errorf("nodes still not responding: %v", err)
	}
}

// TestSlurmctldDifferential brings the same two-node cluster up with
// Debian's real slurmctld and with ours (the same real slurmd, the same
// slurm.conf) and compares what real sinfo, scontrol and squeue print,
// times and sampled load masked.
func TestSlurmctldDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2})

	want, got := ctldOnBoth(t, c, real, ours, ctldCollect)

	for k, w := range want {
		w, g := ctldMasked(w), ctldMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}

// TestSlurmctldRegistrationValidation configures nodes with more memory
// and CPUs than this machine has (no config_overrides): the real slurmd's
// registrations must drain them with the reason real slurmctld gives.
func TestSlurmctldRegistrationValidation(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{
		Nodes: 3, NoConfigOverrides: true, RealMemory: 100,
		NodeRealMemory: map[string]int{"n2": 100 << 20},
		NodeCPUs:       map[string]int{"n3": 4096},
	})
	queries := [][]string{
		{"sinfo", "-R"},
		{"sinfo", "-R", "-o", "%N %T %E"},
		{"sinfo", "-N", "-l"},
		{"scontrol", "show", "node", "n2"},
		{"scontrol", "show", "node", "n3"},
		{"scontrol", "update", "nodename=n2", "state=resume"},
		{"sinfo", "-N"},
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		for _, q := range queries {
			out[strings.Join(q, " ")] = ctldRun(c, q...)
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	for k, w := range want {
		w, g := ctldMasked(w), ctldMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
	if !strings.Contains(got["sinfo -R"], "Low RealMemory") {
		t.Errorf("sinfo -R shows no Low RealMemory reason:\n%s", got["sinfo -R"])
	}
}
