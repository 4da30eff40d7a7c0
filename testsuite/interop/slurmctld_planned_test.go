package interop

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// plannedConf keeps backfill passes a second apart, so the tests wait
// for a settled state rather than for bf_interval's default 30 s.
var plannedConf = []string{"SchedulerParameters=bf_interval=1"}

// plannedNodes is what `sinfo -t planned` lists ("" for none).
func plannedNodes(c *ctldharness.Cluster) string {
	out, _, err := c.Run("sinfo", "-h", "-N", "-t", "planned", "-o", "%N")
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(strings.Fields(out), ",")
}

// plannedWait polls until `sinfo -t planned` lists want; it reports a
// timeout without failing, so the transcripts show what differs.
func plannedWait(t *testing.T, c *ctldharness.Cluster, want string) {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		last = plannedNodes(c)
		return last == want
	}); err != nil {
		t.Logf("sinfo -t planned: %q, want %q: %v", last, want, err)
	}
}

// plannedSnapshot is what sinfo and scontrol say of the nodes.
func plannedSnapshot(c *ctldharness.Cluster, label string, ids ...uint32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s\n", label)
	for _, id := range ids {
		fmt.Fprintf(&b, "job %d: %s\n", id, schedJobFields(c, id))
	}
	for _, args := range [][]string{
		{"sinfo"},
		{"sinfo", "-N", "-o", "%N %T %t %C"},
		{"sinfo", "-t", "planned"},
		{"sinfo", "-t", "PLND", "-N", "-h"},
		{"sinfo", "-t", "idle", "-N", "-h"},
		{"sinfo", "-R"},
		{"scontrol", "show", "node"},
		{"scontrol", "-o", "show", "node", "n4"},
	} {
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(args, " "), ctldMasked(ctldRun(c, args...)))
	}
	return b.String()
}

func plannedCancel(t *testing.T, c *ctldharness.Cluster, ids ...uint32) {
	t.Helper()
	args := make([]string, len(ids))
	for i, id := range ids {
		args[i] = strconv.Itoa(int(id))
	}
	if out, errOut, err := c.Run("scancel", args...); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	for _, id := range ids {
		ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
	}
}

// plannedScenario: a job holds two of four nodes, a higher priority job
// pending for all four gets a backfill reservation, and the idle nodes
// planned for it show PLANNED; a short job backfilled onto one of them
// takes it out of the set; cancelling the pending job clears the flag at
// the next backfill pass.
func plannedScenario(t *testing.T, c *ctldharness.Cluster) string {
	var b strings.Builder
	sb := func(args ...string) uint32 {
		return ctldSbatch(t, c, append(args, "-o", "/dev/null", "--wrap", "sleep 300")...)
	}
	b.WriteString(plannedSnapshot(c, "idle cluster"))

	a := sb("-N2", "--exclusive", "-t", "10")
	ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
	big := sb("-N4", "-t", "10")
	plannedWait(t, c, "n3,n4")
	b.WriteString(plannedSnapshot(c, "a running on n[1-2], big pending for n[1-4]", a, big))

	short := sb("-N1", "-t", "2")
	ctldWaitJob(t, c, short, 60*time.Second, "RUNNING")
	plannedWait(t, c, "n4")
	b.WriteString(plannedSnapshot(c, "short backfilled onto a planned node", a, big, short))

	plannedCancel(t, c, big)
	plannedWait(t, c, "")
	b.WriteString(plannedSnapshot(c, "big cancelled", a, big, short))

	plannedCancel(t, c, a, short)
	b.WriteString(plannedSnapshot(c, "all cancelled"))
	return b.String()
}

// TestSlurmctldPlanned: backfill flags the idle nodes it planned for a
// pending job NODE_STATE_PLANNED, as real slurmctld 22.05 does, and
// sinfo, sinfo -t planned and scontrol show node print the same.
func TestSlurmctldPlanned(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2, ExtraConf: plannedConf})
	want, got := ctldOnBoth(t, c, real, ours, plannedScenario)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("planned nodes differ:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}
