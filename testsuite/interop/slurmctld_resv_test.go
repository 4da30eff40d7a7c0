package interop

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Advanced reservations: the same scontrol create/update/delete
// reservation commands, the same jobs, and what the real commands print,
// under real slurmctld and under ours.

// resvStep is one command of the scenario; jobs are submitted with
// ctldSbatch and waited for separately.
type resvStep struct {
	args []string
	uid  uint32 // run as this user (0: the test's user)
}

var resvSetup = []resvStep{
	{args: []string{"scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now", "Duration=60",
		"Nodes=n2", "Users=root", "Flags=MAINT,IGNORE_JOBS"}},
	{args: []string{"scontrol", "create", "reservation", "StartTime=now+1hour", "Duration=30", "NodeCnt=1", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=daily", "StartTime=now+2hours", "Duration=10",
		"Nodes=n1", "Accounts=physics", "Flags=DAILY"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=clash", "StartTime=now+2hours", "Duration=10",
		"Nodes=n1", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=bad", "StartTime=now", "Duration=10",
		"Nodes=n9", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=dup", "StartTime=now", "Duration=10",
		"Nodes=n2", "Users=root", "Flags=OVERLAP"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=dup", "StartTime=now", "Duration=10",
		"Nodes=n2", "Users=root", "Flags=OVERLAP"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=nobody", "StartTime=now", "Duration=10",
		"Nodes=n1", "Users=root"}, uid: 65534},
	{args: []string{"scontrol", "update", "ReservationName=maint", "Duration=120"}},
	{args: []string{"scontrol", "update", "ReservationName=daily", "Users=root"}},
	{args: []string{"scontrol", "update", "ReservationName=nope", "Duration=5"}},
	{args: []string{"scontrol", "delete", "ReservationName=dup"}},
	{args: []string{"scontrol", "delete", "ReservationName=nope"}},
	{args: []string{"scontrol", "delete", "ReservationName=clash"}, uid: 65534},
}

var resvQueries = [][]string{
	{"scontrol", "show", "reservation"},
	{"scontrol", "show", "reservation", "maint"},
	{"scontrol", "show", "-o", "reservation"},
	{"sinfo", "-T"},
	{"sinfo"},
	{"sinfo", "-o", "%N %T %t"},
	{"scontrol", "show", "node", "n2"},
	{"squeue"},
	{"squeue", "-o", "%i %j %T %r %N"},
}

// resvMask adds to ctldJobMask what depends on the clock: the hour of a
// daily reservation's start rolls with the test's start time.
var resvMask = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\d\d:\d\d:\d\d`), "<hms>"},
}

func resvMasked(s string) string {
	s = ctldJobMasked(s)
	for _, m := range resvMask {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

// resvScenario runs the commands and jobs and returns what every step and
// query printed.
func resvScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range resvSetup {
		var o string
		if s.uid != 0 {
			so, se, err := c.RunAs(s.uid, s.uid, s.args[0], s.args[1:]...)
			o = so + se
			if err != nil {
				o += "--- failed\n"
			}
		} else {
			o = ctldRun(c, s.args...)
		}
		out[stepKey(i, s.args)] = o
	}
	// A job in the maintenance reservation runs on n2, one without it on
	// n1 (whole node); the next one without waits, n2 being reserved.
	ctldSbatch(t, c, "--reservation=maint", "-J", "inresv", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 1, 30*time.Second, "RUNNING")
	ctldSbatch(t, c, "-J", "outside", "--exclusive", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 2, 30*time.Second, "RUNNING")
	ctldSbatch(t, c, "-J", "waits", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	for _, a := range [][]string{
		{"sbatch", "--reservation=nope", "-o", "/dev/null", "--wrap", "true"},
		{"sbatch", "--reservation=daily", "--account=chem", "-o", "/dev/null", "--wrap", "true"},
	} {
		out[strings.Join(a, " ")] = ctldRun(c, a...)
	}
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-j", "3", "-o", "%r")
		return err == nil && strings.TrimSpace(o) != "None" && strings.TrimSpace(o) != ""
	}); err != nil {
		t.Fatalf("job 3 got no reason: %v", err)
	}
	// Slurm sets the reserved nodes' flags in its background loop (every
	// 5 s); ours at once.
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-n", "n2", "-o", "%t")
		return err == nil && strings.HasSuffix(strings.TrimSpace(o), "$")
	}); err != nil {
		o, _, _ := c.Run("sinfo")
		t.Fatalf("n2 not shown in maintenance: %v\n%s", err, o)
	}
	time.Sleep(2500 * time.Millisecond) // a few backfill passes
	for _, q := range resvQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	// Busy: a running job uses the reservation.
	out["delete busy"] = ctldRun(c, "scontrol", "delete", "ReservationName=maint")
	return out
}

func stepKey(i int, args []string) string {
	return fmt.Sprintf("%02d %s", i, strings.Join(args, " "))
}

// TestSlurmctldResvDifferential: the reservation scenario under real
// slurmctld and ours; the real commands print the same (times masked).
func TestSlurmctldResvDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, resvScenario)

	keys := make([]string, 0, len(want))
	for i, s := range resvSetup {
		keys = append(keys, stepKey(i, s.args))
	}
	keys = append(keys, "sbatch --reservation=nope -o /dev/null --wrap true",
		"sbatch --reservation=daily --account=chem -o /dev/null --wrap true")
	for _, q := range resvQueries {
		keys = append(keys, strings.Join(q, " "))
	}
	keys = append(keys, "delete busy")
	resvCompare(t, keys, want, got)
}

// TestSlurmctldResvRecovery: our controller keeps its reservations
// across a restart (SIGKILL, then a start without -c).
func TestSlurmctldResvRecovery(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	if o := ctldRun(c, "scontrol", "create", "reservation", "StartTime=now", "Duration=60", "Nodes=n1", "Users=root", "Flags=MAINT"); !strings.Contains(o, "Reservation created: root_1") {
		t.Fatalf("create: %s", o)
	}
	before := resvMasked(ctldRun(c, "scontrol", "show", "reservation"))
	c.KillCtld()
	c.StartCtld(ours)
	if after := resvMasked(ctldRun(c, "scontrol", "show", "reservation")); after != before {
		t.Errorf("after restart:\n%s\nbefore:\n%s", after, before)
	}
	if o := ctldRun(c, "sinfo", "-h", "-n", "n1", "-o", "%t"); strings.TrimSpace(o) != "maint" {
		t.Errorf("n1 after restart: %q, want maint", o)
	}
}

// resvReasonScenario: every node in a maintenance reservation, one idle
// node reserved for later; a job without a reservation, one in the
// future reservation, one in the maintenance one.
func resvReasonScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	for _, a := range [][]string{
		{"scontrol", "create", "reservation", "ReservationName=m", "StartTime=now", "Duration=60", "Nodes=ALL", "Users=root", "Flags=MAINT"},
		{"scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+1hour", "Duration=60", "Nodes=n1", "Users=root", "Flags=OVERLAP"},
	} {
		if o := ctldRun(c, a...); !strings.Contains(o, "Reservation created") {
			t.Fatalf("%q: %s", a, o)
		}
	}
	ctldSbatch(t, c, "-J", "plain", "-t", "10", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-J", "later", "--reservation=later", "-t", "10", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-J", "inm", "--reservation=m", "-N2", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 3, 30*time.Second, "RUNNING")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None") && strings.Count(o, "\n") == 2
	}); err != nil {
		o, _, _ := c.Run("squeue")
		t.Fatalf("pending reasons not set: %v\n%s", err, o)
	}
	out := map[string]string{}
	for _, q := range [][]string{
		{"squeue", "-o", "%i %j %T %r %N"},
		{"scontrol", "show", "job", "1"},
		{"scontrol", "show", "job", "2"},
		{"sinfo", "-T"},
	} {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldResvReasons: the pending reasons real slurmctld gives jobs
// kept out by a maintenance reservation and jobs whose reservation has
// not started, and ours.
func TestSlurmctldResvReasons(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, resvReasonScenario)

	resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
}

// resvBackfillScenario: n1 is reserved from 30 minutes on. A two-node
// hour-long job cannot start; a 20-minute job and an hour-long one
// (which must keep off n1) start by backfill.
func resvBackfillScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	if o := ctldRun(c, "scontrol", "create", "reservation", "ReservationName=soon", "StartTime=now+30minutes", "Duration=60", "Nodes=n1", "Users=root"); !strings.Contains(o, "Reservation created") {
		t.Fatalf("create: %s", o)
	}
	ctldSbatch(t, c, "-J", "wide", "-N2", "-t", "60", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldSbatch(t, c, "-J", "short", "-N1", "--exclusive", "-t", "20", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldSbatch(t, c, "-J", "long", "-N1", "--exclusive", "-t", "60", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 2, 40*time.Second, "RUNNING")
	ctldWaitJob(t, c, 3, 40*time.Second, "RUNNING")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-j", "1", "-o", "%r")
		return err == nil && strings.TrimSpace(o) != "None" && strings.TrimSpace(o) != "Priority"
	}); err != nil {
		t.Fatalf("job 1 got no reason: %v", err)
	}
	out := map[string]string{}
	for _, q := range [][]string{
		{"squeue", "-o", "%i %j %T %r %N"},
		{"sinfo", "-o", "%N %T"},
	} {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldResvBackfill: jobs without the reservation keep their
// run clear of its window, under real slurmctld and ours.
func TestSlurmctldResvBackfill(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, resvBackfillScenario)

	resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
}

// resvExtraSetup: Features= (n2 made "fast"), Groups= (nogroup: nobody),
// a MAGNETIC reservation on n1; what each command prints.
var resvExtraSetup = []resvStep{
	{args: []string{"scontrol", "update", "NodeName=n2", "AvailableFeatures=fast"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=feat", "StartTime=now", "Duration=60",
		"NodeCnt=1", "Features=fast", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=nofeat", "StartTime=now", "Duration=60",
		"NodeCnt=1", "Features=nope", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=toomany", "StartTime=now+2hours", "Duration=60",
		"NodeCnt=2", "Features=fast", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=xor", "StartTime=now+2hours", "Duration=60",
		"NodeCnt=1", "Features=[fast|slow]", "Users=root"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=comma", "StartTime=now+2hours", "Duration=60",
		"NodeCnt=1", "Features=fast,fast", "Users=root", "Flags=OVERLAP"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=grp", "StartTime=now", "Duration=60",
		"Nodes=n3", "Groups=nogroup"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=both", "StartTime=now", "Duration=60",
		"Nodes=n3", "Groups=nogroup", "Users=root", "Flags=OVERLAP"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=nogrp", "StartTime=now", "Duration=60",
		"Nodes=n3", "Groups=no-such-group-xyz", "Flags=OVERLAP"}},
	{args: []string{"scontrol", "update", "ReservationName=grp", "Users=root"}},
	{args: []string{"scontrol", "update", "ReservationName=feat", "Features=slow"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=mag", "StartTime=now", "Duration=60",
		"Nodes=n1", "Users=root", "Flags=MAGNETIC"}},
}

// resvExtraScenario runs resvExtraSetup, then jobs: root's job without a
// reservation lands in the magnetic one, nobody's job in the group's,
// nobody's job without one waits, root may not use the group's.
func resvExtraScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range resvExtraSetup {
		out[stepKey(i, s.args)] = ctldRun(c, s.args...)
	}
	ctldSbatch(t, c, "-J", "magnet", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 1, 30*time.Second, "RUNNING")
	nobody := func(args ...string) string {
		so, se, err := c.RunAs(65534, 65534, "sbatch", append([]string{"--chdir=/tmp", "-o", "/dev/null", "-t", "10"}, args...)...)
		if err != nil {
			se += "--- failed\n"
		}
		return submittedRE.ReplaceAllString(so, "Submitted batch job <id>") + se
	}
	out["nobody in grp"] = nobody("-J", "ingrp", "--reservation=grp", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 2, 30*time.Second, "RUNNING")
	out["nobody plain"] = nobody("-J", "plain", "--wrap", "sleep 120")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-j", "3", "-o", "%r")
		return err == nil && strings.TrimSpace(o) != "None" && strings.TrimSpace(o) != ""
	}); err != nil {
		t.Fatalf("job 3 got no reason: %v", err)
	}
	time.Sleep(2500 * time.Millisecond) // a few backfill passes
	for _, q := range resvExtraQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	// Last: real slurmctld spends a job id on a refused submission.
	out["root in grp"] = ctldRun(c, "sbatch", "--reservation=grp", "-o", "/dev/null", "--wrap", "true")
	return out
}

var resvExtraQueries = [][]string{
	{"scontrol", "show", "reservation"},
	{"squeue", "-o", "%i %j %u %T %r %N %v"},
	{"scontrol", "show", "job", "1"},
	{"sinfo", "-T"},
}

// TestSlurmctldResvExtras: Features=, Groups= and MAGNETIC under real
// slurmctld and ours.
func TestSlurmctldResvExtras(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 3, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, resvExtraScenario)

	var keys []string
	for i, s := range resvExtraSetup {
		keys = append(keys, stepKey(i, s.args))
	}
	keys = append(keys, "nobody in grp", "root in grp", "nobody plain")
	for _, q := range resvExtraQueries {
		keys = append(keys, strings.Join(q, " "))
	}
	resvCompare(t, keys, want, got)
}

// resvFlexScenario: n1 is reserved FLEX from an hour on; a two-node job
// of the reservation starts now.
func resvFlexScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	if o := ctldRun(c, "scontrol", "create", "reservation", "ReservationName=flx", "StartTime=now+1hour", "Duration=60",
		"Nodes=n1", "Users=root", "Flags=FLEX"); !strings.Contains(o, "Reservation created") {
		t.Fatalf("create: %s", o)
	}
	ctldSbatch(t, c, "-J", "wide", "--reservation=flx", "-N2", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 1, 40*time.Second, "RUNNING")
	out := map[string]string{}
	for _, q := range [][]string{
		{"squeue", "-o", "%i %j %T %r %N %v"},
		{"scontrol", "show", "reservation"},
	} {
		out["before "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	// In its window: n2 reserved FLEX from now, a two-node job of it
	// takes n1 too (it ends before flx starts); a second one waits.
	ctldRun(c, "scancel", "1")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("sinfo", "-h", "-o", "%t")
		return err == nil && strings.TrimSpace(o) == "idle"
	}); err != nil {
		t.Fatalf("nodes not idle after scancel: %v", err)
	}
	out["create flx2"] = ctldRun(c, "scontrol", "create", "reservation", "ReservationName=flx2", "StartTime=now", "Duration=60",
		"Nodes=n2", "Users=root", "Flags=FLEX")
	ctldSbatch(t, c, "-J", "wide2", "--reservation=flx2", "-N2", "--exclusive", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 2, 40*time.Second, "RUNNING")
	ctldSbatch(t, c, "-J", "waits", "--reservation=flx2", "-N1", "--exclusive", "-t", "120", "-o", "/dev/null", "--wrap", "sleep 120")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-j", "3", "-o", "%r")
		return err == nil && strings.TrimSpace(o) != "None" && strings.TrimSpace(o) != ""
	}); err != nil {
		t.Fatalf("job 3 got no reason: %v", err)
	}
	time.Sleep(2500 * time.Millisecond) // a few backfill passes
	out["in window squeue"] = ctldRun(c, "squeue", "-o", "%i %j %T %r %N %v")
	return out
}

// TestSlurmctldResvFlex: a FLEX reservation's job starts before the
// window and uses nodes outside it, under real slurmctld and ours.
func TestSlurmctldResvFlex(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, resvFlexScenario)

	resvCompare(t, slices.Sorted(maps.Keys(want)), want, got)
}

// resvCompare reports each of keys whose outputs differ between the real
// slurmctld (want) and ours (got), times masked.
func resvCompare(t *testing.T, keys []string, want, got map[string]string) {
	t.Helper()
	for _, k := range keys {
		if w, g := resvMasked(want[k]), resvMasked(got[k]); w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}
