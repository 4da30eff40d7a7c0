package interop

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Reservations holding licenses (Licenses=): what scontrol create and
// update say, what scontrol show reservation and show licenses print,
// and which jobs the reserved licenses keep waiting, under real
// slurmctld and ours.

var resvLicOpts = ctldharness.Options{Nodes: 2, CPUs: 4,
	ExtraConf: []string{"Licenses=foo:4,bar:2", "SchedulerParameters=bf_interval=1"}}

// resvLicSetup: lic1 holds foo:2 now (no nodes: ANY_NODES), "later"
// foo:3 from two hours on, "onnode" n2 and bar; then updates, some of
// them refused; last a FLEX one, later still.
var resvLicSetup = []resvStep{
	{args: []string{"scontrol", "create", "reservation", "ReservationName=lic1", "StartTime=now", "Duration=60",
		"Users=root", "Licenses=foo:2", "Flags=ANY_NODES"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=nonodes", "StartTime=now", "Duration=60",
		"Users=root", "Licenses=foo:1"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=badname", "StartTime=now", "Duration=60",
		"Users=root", "Licenses=nope:1", "Flags=ANY_NODES"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=toomuch", "StartTime=now", "Duration=30",
		"Users=root", "Licenses=foo:3", "Flags=ANY_NODES"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+2hours", "Duration=60",
		"Users=root", "Licenses=foo:3", "Flags=ANY_NODES"}},
	{args: []string{"scontrol", "create", "reservation", "ReservationName=onnode", "StartTime=now", "Duration=60",
		"Nodes=n2", "Users=root", "Licenses=bar:1"}},
	{args: []string{"scontrol", "update", "ReservationName=onnode", "Licenses="}},
	{args: []string{"scontrol", "update", "ReservationName=lic1", "Licenses="}},
	{args: []string{"scontrol", "update", "ReservationName=later", "Licenses=foo:3", "StartTime=now+30minutes"}},
	{args: []string{"scontrol", "update", "ReservationName=later", "Licenses=foo:2", "StartTime=now+30minutes"}},
	{args: []string{"scontrol", "update", "ReservationName=onnode", "Licenses=bar:2"}},
	{args: []string{"scontrol", "update", "ReservationName=lic1", "Licenses=foo:1,foo:1"}},
	{args: []string{"scontrol", "update", "ReservationName=lic1", "Licenses=bar:1"}},
	{args: []string{"scontrol", "update", "ReservationName=lic1", "Licenses=foo:1,foo:1"}},
	// FLEX: counted as reserved by scontrol show licenses before it
	// starts; its window meets none of the jobs below.
	{args: []string{"scontrol", "create", "reservation", "ReservationName=flexlic", "StartTime=now+3hours", "Duration=10",
		"Users=root", "Licenses=foo:1", "Flags=ANY_NODES,FLEX"}},
}

var resvLicQueries = [][]string{
	{"scontrol", "show", "reservation"},
	{"scontrol", "show", "-o", "reservation"},
	{"scontrol", "show", "licenses"},
	{"scontrol", "-o", "show", "lic"},
}

// resvLicJobs: what each job asks (reservation, licenses, time limit) and
// the state it settles in with the setup above (foo: 4, lic1 holds 2 now,
// later 2 from 30 minutes on; bar: 2, all held by onnode).
var resvLicJobs = []struct {
	name, resv, lic, limit, want string
}{
	{"out-foo2", "", "foo:2", "10", "RUNNING"},          // 2 + 2 held by lic1 = 4
	{"out-foo1", "", "foo:1", "10", "Licenses"},         // 2 used + 1 + 2 held
	{"in-foo1", "lic1", "foo:1", "10", "RUNNING"},       // its own hold does not count
	{"in-foo1-long", "lic1", "foo:1", "45", "Licenses"}, // meets later's window
	{"out-bar1", "", "bar:1", "10", "Licenses"},         // onnode holds both
	{"in-bar1", "onnode", "bar:1", "10", "RUNNING"},
}

// resvLicScenario runs the setup, the jobs, the queries; then ends the
// jobs of lic1, deletes it and sees the waiting job start.
func resvLicScenario(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range resvLicSetup {
		out[stepKey(i, s.args)] = ctldRun(c, s.args...)
	}
	for _, q := range resvLicQueries {
		out["setup "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	ids := make([]uint32, len(resvLicJobs))
	for i, j := range resvLicJobs {
		args := []string{"-J", j.name, "-n1", "-L", j.lic, "-t", j.limit, "-o", "/dev/null"}
		if j.resv != "" {
			args = append(args, "--reservation="+j.resv)
		}
		ids[i] = ctldSbatch(t, c, append(args, "--wrap", "sleep 300")...)
		// One at a time: each job's fate depends on those before it.
		if j.want == "RUNNING" {
			ctldWaitJob(t, c, ids[i], 60*time.Second, "RUNNING")
		} else {
			licWaitReason(t, c, ids[i], j.want)
		}
	}
	time.Sleep(2500 * time.Millisecond) // a few backfill passes
	for i, j := range resvLicJobs {
		if r := licReason(c, ids[i]); j.want != "RUNNING" && r != j.want {
			t.Errorf("job %s: reason %q after backfill, want %q", j.name, r, j.want)
		}
	}
	for _, q := range append([][]string{{"squeue", "-o", "%i %j %T %r %v"}}, resvLicQueries...) {
		out["jobs "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	for _, id := range ids {
		out["job "+strconv.Itoa(int(id))] = licJobFields(c, id)
	}
	out["delete busy"] = ctldRun(c, "scontrol", "delete", "ReservationName=lic1")

	// lic1's jobs cancelled, lic1 deleted: out-foo1 starts (2 + 1 used,
	// later does not meet its run).
	if o, e, err := c.Run("scancel", strconv.Itoa(int(ids[2])), strconv.Itoa(int(ids[3]))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, o, e)
	}
	ctldWaitJob(t, c, ids[2], 60*time.Second, "CANCELLED", "COMPLETED")
	ctldWaitJob(t, c, ids[3], 60*time.Second, "CANCELLED")
	if err := c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "CG", "-o", "%i")
		return err == nil && strings.TrimSpace(o) == ""
	}); err != nil {
		t.Fatalf("jobs still completing: %v", err)
	}
	out["delete"] = ctldRun(c, "scontrol", "delete", "ReservationName=lic1")
	ctldWaitJob(t, c, ids[1], 60*time.Second, "RUNNING")
	for _, q := range [][]string{{"squeue", "-o", "%i %j %T %r %v"}, {"scontrol", "show", "licenses"}, {"scontrol", "show", "reservation"}} {
		out["after delete "+strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldResvLicenses: reservations holding licenses under real
// slurmctld and ours: create and update checks (unknown names, counts
// above the total, overlapping reservations summed, clearing), scontrol
// show reservation and show licenses (Reserved=), jobs outside the
// reservation kept waiting with reason Licenses, jobs inside it running,
// a reservation starting later holding its licenses from jobs whose time
// limit reaches into it, and a busy reservation's delete.
func TestSlurmctldResvLicenses(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, resvLicOpts)

	want, got := ctldOnBoth(t, c, real, ours, resvLicScenario)

	var keys []string
	for i, s := range resvLicSetup {
		keys = append(keys, stepKey(i, s.args))
	}
	for _, q := range resvLicQueries {
		keys = append(keys, "setup "+strings.Join(q, " "))
	}
	for _, q := range append([][]string{{"squeue", "-o", "%i %j %T %r %v"}}, resvLicQueries...) {
		keys = append(keys, "jobs "+strings.Join(q, " "))
	}
	for i := range resvLicJobs {
		keys = append(keys, "job "+strconv.Itoa(i+1))
	}
	keys = append(keys, "delete busy", "delete")
	for _, q := range [][]string{{"squeue", "-o", "%i %j %T %r %v"}, {"scontrol", "show", "licenses"}, {"scontrol", "show", "reservation"}} {
		keys = append(keys, "after delete "+strings.Join(q, " "))
	}
	resvCompare(t, keys, want, got)
}

// TestSlurmctldResvLicensesRecovery: our controller keeps a license
// reservation, and what it holds, across a restart (SIGKILL, then a
// start on the saved state).
func TestSlurmctldResvLicensesRecovery(t *testing.T) {
	c, ours := ctldJobsStart(t, resvLicOpts)
	if o := ctldRun(c, "scontrol", "create", "reservation", "ReservationName=keep", "StartTime=now", "Duration=60",
		"Users=root", "Licenses=foo:3", "Flags=ANY_NODES"); !strings.Contains(o, "Reservation created: keep") {
		t.Fatalf("create: %s", o)
	}
	show := func() string {
		return resvMasked(ctldRun(c, "scontrol", "show", "reservation") + ctldRun(c, "scontrol", "show", "licenses"))
	}
	before := show()
	if !strings.Contains(before, "Licenses=foo:3") || !strings.Contains(before, "Reserved=3") {
		t.Fatalf("before restart:\n%s", before)
	}
	c.KillCtld()
	c.StartCtld(ours)
	if after := show(); after != before {
		t.Errorf("after restart:\n%s\nbefore:\n%s", after, before)
	}
	id := ctldSbatch(t, c, "-n1", "-L", "foo:2", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 300")
	licWaitReason(t, c, id, "Licenses")
}
