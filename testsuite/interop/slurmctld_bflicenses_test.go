package interop

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// bflicSnapshot is what squeue, scontrol show job and sinfo say of the
// jobs and nodes (times masked).
func bflicSnapshot(c *ctldharness.Cluster, label string, ids ...uint32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s\n", label)
	q := ctldRun(c, "squeue", "-h", "-o", "%i %T %r %W %S")
	lines := strings.Split(strings.TrimSpace(q), "\n")
	sort.Strings(lines)
	b.WriteString("squeue: " + ctldMasked(strings.Join(lines, "\n        ")) + "\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "job %d: %s\n", id, schedJobFields(c, id))
	}
	for _, args := range [][]string{
		{"sinfo", "-N", "-o", "%N %T"},
		{"scontrol", "show", "licenses"},
	} {
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(args, " "), ctldMasked(ctldRun(c, args...)))
	}
	return b.String()
}

// schedJobFields picks what scontrol show job says of a job's state,
// licenses and planned start (times masked).
func schedJobFields(c *ctldharness.Cluster, id uint32) string {
	out, _, _ := c.Run("scontrol", "show", "job", "-o", strconv.Itoa(int(id)))
	var keep []string
	for _, f := range strings.Fields(out) {
		for _, k := range []string{"JobState=", "Reason=", "Licenses=", "StartTime=", "SchedNodeList=", "NodeList="} {
			if strings.HasPrefix(f, k) {
				keep = append(keep, f)
			}
		}
	}
	return ctldMasked(strings.Join(keep, " "))
}

// bflicWait polls until squeue gives the job that state and reason; it
// reports a timeout without failing, so the transcripts show the
// difference.
func bflicWait(t *testing.T, c *ctldharness.Cluster, id uint32, want string) {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		out, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(id)), "-o", "%T %r")
		last = strings.TrimSpace(out)
		return last == want
	}); err != nil {
		t.Logf("job %d: %q, want %q: %v", id, last, want, err)
	}
}

// bflicScenario: foo:2 configured; a runs with foo:1 on n1; b (higher
// priority than what follows) needs foo:2 and waits for a. With
// bf_licenses, backfill plans b's licenses from a's end: c (foo:1, long)
// may not take the free license, d (foo:1, ending before a) may. Without
// it, c takes it.
func bflicScenario(t *testing.T, c *ctldharness.Cluster, withBF bool) string {
	var b strings.Builder
	sb := func(args ...string) uint32 {
		return ctldSbatch(t, c, append(args, "-o", "/dev/null", "--wrap", "sleep 300")...)
	}
	a := sb("-w", "n1", "-n2", "-L", "foo:1", "-t", "10")
	ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
	bb := sb("-w", "n2", "-n1", "-L", "foo:2", "-t", "10")
	bflicWait(t, c, bb, "PENDING Licenses")
	cc := sb("-w", "n3", "-n1", "-L", "foo:1", "-t", "30")
	if withBF {
		plannedWait(t, c, "n2,n3")
	} else {
		bflicWait(t, c, cc, "RUNNING None")
	}
	b.WriteString(bflicSnapshot(c, "a running, b waiting for foo:2, c submitted", a, bb, cc))
	d := sb("-w", "n3", "-n1", "-L", "foo:1", "-t", "3")
	if withBF {
		bflicWait(t, c, d, "RUNNING None")
		plannedWait(t, c, "n2")
	} else {
		bflicWait(t, c, d, "PENDING Licenses")
	}
	b.WriteString(bflicSnapshot(c, "d submitted", a, bb, cc, d))
	plannedCancel(t, c, a, bb, cc, d)
	return b.String()
}

// TestSlurmctldBFLicenses: SchedulerParameters=bf_licenses makes the
// main scheduler stop at a job blocked on licenses and backfill plan the
// licenses, as real slurmctld 22.05 does.
func TestSlurmctldBFLicenses(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, withBF := range []bool{true, false} {
		params := "SchedulerParameters=bf_interval=1"
		if withBF {
			params += ",bf_licenses"
		}
		t.Run(strconv.FormatBool(withBF), func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 3, CPUs: 2,
				ExtraConf: []string{"Licenses=foo:2", params}})
			want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) string {
				return bflicScenario(t, c, withBF)
			})
			t.Logf("real slurmctld:\n%s", want)
			if want != got {
				t.Errorf("bf_licenses=%v differs:\n--- real slurmctld\n%s--- ours\n%s", withBF, want, got)
			}
		})
	}
}

// TestSlurmctldAllowZeroLic: SchedulerParameters=allow_zero_lic lets a
// submission ask for more of a license than configured (not an unknown
// one); the job waits with reason Licenses. scontrol update still checks
// the count.
func TestSlurmctldAllowZeroLic(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2,
		ExtraConf: []string{"Licenses=foo:2", "SchedulerParameters=allow_zero_lic,bf_interval=1"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		for _, lic := range []string{"foo:3", "nope:1", "foo:2,foo:1"} {
			fmt.Fprintf(&b, "$ sbatch -L %s\n%s", lic,
				submittedRE.ReplaceAllString(ctldRun(c, "sbatch", "-L", lic, "-o", "/dev/null", "--wrap", "true"), "Submitted batch job <id>"))
		}
		id := ctldSbatch(t, c, "-L", "foo:5", "-o", "/dev/null", "--wrap", "sleep 300")
		bflicWait(t, c, id, "PENDING Licenses")
		b.WriteString(bflicSnapshot(c, "foo:5 submitted", id))
		js := strconv.Itoa(int(id))
		for _, lic := range []string{"foo:4", "foo:1"} {
			fmt.Fprintf(&b, "$ scontrol update jobid=<id> licenses=%s\n%s", lic,
				ctldRun(c, "scontrol", "update", "jobid="+js, "licenses="+lic))
		}
		bflicWait(t, c, id, "RUNNING None")
		b.WriteString(bflicSnapshot(c, "updated to foo:1", id))
		out, _, _ := c.Run("squeue", "-h", "-o", "%i")
		plannedCancel(t, c, idsOf(out)...)
		return b.String()
	})
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("allow_zero_lic differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// startsIn is how long from now squeue expects the job to start, in
// whole quarter hours (the reservation's end is 80 minutes away).
func startsIn(c *ctldharness.Cluster, id uint32) string {
	out, _, err := c.Run("squeue", "-h", "-j", strconv.Itoa(int(id)), "-o", "%S")
	if err != nil {
		return "error: " + err.Error()
	}
	at, err := time.ParseInLocation("2006-01-02T15:04:05", strings.TrimSpace(out), time.Local)
	if err != nil {
		return fmt.Sprintf("%q", strings.TrimSpace(out))
	}
	return (time.Until(at) + 7*time.Minute).Truncate(15 * time.Minute).String()
}

// idsOf reads job ids, one a line.
func idsOf(s string) []uint32 {
	var ids []uint32
	for _, f := range strings.Fields(s) {
		if v, err := strconv.ParseUint(f, 10, 32); err == nil {
			ids = append(ids, uint32(v))
		}
	}
	return ids
}

// TestSlurmctldBFLicensesResv: with bf_licenses, a reservation holding
// licenses from twenty minutes on keeps them out of backfill's plan
// during its window: a job whose run meets it is planned after it, a
// short one before it starts now.
func TestSlurmctldBFLicensesResv(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf: []string{"Licenses=foo:2", "SchedulerParameters=bf_interval=1,bf_licenses"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		b.WriteString(ctldRun(c, "scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+20minutes",
			"Duration=60", "Users=root", "Licenses=foo:2", "Flags=ANY_NODES"))
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append(args, "-o", "/dev/null", "--wrap", "sleep 300")...)
		}
		x := sb("-n1", "-L", "foo:1", "-t", "10")
		ctldWaitJob(t, c, x, 60*time.Second, "RUNNING")
		y := sb("-n1", "-L", "foo:1", "-t", "30")
		bflicWait(t, c, y, "PENDING Licenses")
		z := sb("-n1", "-L", "foo:1", "-t", "5")
		bflicWait(t, c, z, "RUNNING None")
		// Real's backfill clears every pending job's plan when a cycle
		// starts (_clear_job_estimates) and, on a loaded machine, may
		// yield its locks or give up the cycle before y's plan is set
		// again: the whole picture is read until it shows y planned.
		var snap, starts string
		if err := c.Poll(60*time.Second, func() bool {
			snap = bflicSnapshot(c, "x and z running, y planned after the reservation", x, y, z)
			starts = startsIn(c, y)
			return strings.Contains(snap, "SchedNodeList=") && !strings.Contains(snap, "N/A") && !strings.Contains(starts, `"`)
		}); err != nil {
			t.Logf("job %d not planned: %v", y, err)
		}
		b.WriteString(snap)
		fmt.Fprintf(&b, "y expected to start in about %s\n", starts)
		plannedCancel(t, c, x, y, z)
		return b.String()
	})
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("bf_licenses with a reservation differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// TestSlurmctldBFLicensesStop: with bf_licenses the main scheduler stops
// at the first job blocked on licenses; the jobs behind it keep the
// reason they had: Priority from their submission, none for a second job
// blocked on licenses (its submission skips the priority test). Every job
// asks for n2, so the nodes planned do not depend on how a tie between
// free nodes is broken.
func TestSlurmctldBFLicensesStop(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf: []string{"Licenses=foo:2", "SchedulerParameters=bf_interval=1,bf_licenses"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append(args, "-o", "/dev/null", "--wrap", "sleep 300")...)
		}
		a := sb("-w", "n1", "-n2", "-L", "foo:1", "-t", "10")
		ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
		b1 := sb("-w", "n2", "-n1", "-L", "foo:2", "-t", "10")
		bflicWait(t, c, b1, "PENDING Licenses")
		b2 := sb("-w", "n2", "-n1", "-L", "foo:2", "-t", "10")
		free := sb("-w", "n2", "-n1", "-t", "60")
		held := sb("-w", "n2", "-n1", "-t", "60", "-L", "foo:1")
		if err := c.Poll(60*time.Second, func() bool {
			return strings.Contains(schedJobFields(c, b2), "SchedNodeList=")
		}); err != nil {
			t.Logf("job %d has no SchedNodeList: %v", b2, err)
		}
		b.WriteString(bflicSnapshot(c, "two jobs blocked on licenses", a, b1, b2, free, held))
		plannedCancel(t, c, a, b1, b2, free, held)
		return b.String()
	})
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("bf_licenses stop differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}
