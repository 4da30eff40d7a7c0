package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// resvCluster is testCluster with reservations: "alice" (uid 1000) on n2,
// "acct" for account physics on n3, "notbob" for everyone but bob on n4,
// "later" on n1 an hour from t0, "float" a floating one.
func resvCluster() *Cluster {
	cl := testCluster()
	cl.Reservations = []Reservation{
		{Name: "alice", Start: t0 - 10, End: t0 + 86400, Nodes: []int{1}, Users: []uint32{1000}},
		{Name: "acct", Start: t0 - 10, End: t0 + 86400, Nodes: []int{2}, Accounts: []string{"physics"}},
		{Name: "notbob", Start: t0 - 10, End: t0 + 86400, Nodes: []int{3}, Users: []uint32{1001}, UsersNot: true},
		{Name: "later", Start: t0 + 3600, End: t0 + 7200, Nodes: []int{0}, Users: []uint32{1000}},
		{Name: "float", Start: t0, End: t0 + 60, Nodes: []int{0}, Users: []uint32{1000}, TimeFloat: true},
		{Name: "inshort", Start: t0 - 10, End: t0 + 86400, Nodes: []int{0}, Users: []uint32{1000}, Partition: "short"},
	}
	return cl
}

// TestResvPartition: a job naming no partition runs in its reservation's.
func TestResvPartition(t *testing.T) {
	m := newTestManager(nil)
	cl := resvCluster()
	d := batchDesc(alice)
	d.Reservation = msg.Str("inshort")
	id := mustSubmit(t, m, cl, d, alice, t0)
	if got := m.Job(id).Partitions; len(got) != 1 || got[0] != "short" {
		t.Fatalf("partitions %q, want [short]", got)
	}
	d = batchDesc(alice)
	d.Reservation = msg.Str("alice")
	id = mustSubmit(t, m, cl, d, alice, t0)
	if got := m.Job(id).Partitions; len(got) != 1 || got[0] != "debug" {
		t.Fatalf("partitions %q, want [debug]", got)
	}
}

func TestResvSubmitCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caller  Caller
		resv    string
		account string
		want    int
	}{
		{"none", alice, "", "", 0},
		{"listed user", alice, "alice", "", 0},
		{"unlisted user", bob, "alice", "", slurmerr.ESLURM_RESERVATION_ACCESS},
		{"root is not special", root, "alice", "", slurmerr.ESLURM_RESERVATION_ACCESS},
		{"no such reservation", alice, "nope", "", slurmerr.ESLURM_RESERVATION_INVALID},
		{"two names", alice, "alice,acct", "", slurmerr.ESLURM_RESERVATION_INVALID},
		{"account listed", bob, "acct", "physics", 0},
		{"account not listed", bob, "acct", "chem", slurmerr.ESLURM_RESERVATION_ACCESS},
		{"no account", bob, "acct", "", slurmerr.ESLURM_RESERVATION_ACCESS},
		{"excluded user", bob, "notbob", "", slurmerr.ESLURM_RESERVATION_ACCESS},
		{"not excluded user", alice, "notbob", "", 0},
		{"future reservation accepts", alice, "later", "", 0},
		{"floating reservation", alice, "float", "", slurmerr.ESLURM_RESERVATION_ACCESS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(nil)
			d := batchDesc(tc.caller)
			if tc.resv != "" {
				d.Reservation = msg.Str(tc.resv)
			}
			if tc.account != "" {
				d.Account = msg.Str(tc.account)
			}
			_, _, err := m.Submit(d, tc.caller, resvCluster(), t0)
			if got := code(err); got != tc.want {
				t.Fatalf("submit: rc %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

// TestResvSchedule: a job in a reservation runs on its node; one without
// keeps off every reserved node; one in a future reservation waits with
// reason Reservation, not yet eligible.
func TestResvSchedule(t *testing.T) {
	cl := resvCluster()
	m := newTestManager(nil)
	in := batchDesc(alice)
	in.Reservation = msg.Str("alice")
	inID := mustSubmit(t, m, cl, in, alice, t0)
	out := batchDesc(alice)
	out.MinNodes, out.MaxNodes = 2, 2
	outID := mustSubmit(t, m, cl, out, alice, t0)
	later := batchDesc(alice)
	later.Reservation = msg.Str("later")
	laterID := mustSubmit(t, m, cl, later, alice, t0)
	one := batchDesc(bob)
	oneID := mustSubmit(t, m, cl, one, bob, t0)

	mustSchedule(t, m, cl, t0)
	if j := m.Job(inID); !j.Running() || j.nodeList() != "n2" {
		t.Errorf("job in reservation: state %v on %q, want running on n2", j.State, j.nodeList())
	}
	// n1 is free until "later" starts in an hour: a one-year job cannot
	// use it, n3 and n4 are reserved.
	if j := m.Job(outID); j.Running() {
		t.Errorf("two-node job without reservation started on %s", j.nodeList())
	}
	// Not eligible before its reservation starts (job_independent).
	if j := m.Job(laterID); j.Running() || j.Reason != uint16(sched.ReasonReservation) || j.EligibleTime != 0 {
		t.Errorf("job in future reservation: running %v reason %d eligible %d", j.Running(), j.Reason, j.EligibleTime)
	}
	if j := m.Job(oneID); j.Running() {
		t.Errorf("job without reservation started on %s (every free node is reserved)", j.nodeList())
	}
}

func TestResvMaintDesc(t *testing.T) {
	cl := testCluster()
	cl.Reservations = []Reservation{{Name: "m", Start: t0 - 10, End: t0 + 86400, Nodes: []int{0, 1, 2, 3}, Maint: true, Users: []uint32{0}}}
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if j.Running() || j.Reason != uint16(sched.ReasonReqNodeNotAvail) || j.StateDesc != sched.DescReservedMaint {
		t.Fatalf("job: running %v reason %d desc %q", j.Running(), j.Reason, j.StateDesc)
	}
	cl.Reservations = nil
	mustSchedule(t, m, cl, t0+1)
	if j := m.Job(id); !j.Running() || j.StateDesc != "" {
		t.Fatalf("after the reservation: running %v desc %q", j.Running(), j.StateDesc)
	}
}

// TestResvMagneticFlex: a job naming no reservation runs in a MAGNETIC
// one open to it and takes its name; a FLEX reservation's job starts
// before the window and may use nodes outside it.
func TestResvMagneticFlex(t *testing.T) {
	cl := testCluster()
	cl.Reservations = []Reservation{
		{Name: "mag", Start: t0 - 10, End: t0 + 86400, Nodes: []int{1}, Users: []uint32{1000}, Magnetic: true},
		{Name: "flex", Start: t0 + 3600, End: t0 + 7200, Nodes: []int{2}, Users: []uint32{1001}, Flex: true},
	}
	m := newTestManager(nil)
	magID := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	bobID := mustSubmit(t, m, cl, batchDesc(bob), bob, t0)
	fd := batchDesc(bob)
	fd.Reservation = msg.Str("flex")
	fd.MinNodes, fd.MaxNodes = 2, 2
	flexID := mustSubmit(t, m, cl, fd, bob, t0)
	if j := m.Job(flexID); j.Reason == ReasonWaitResv {
		t.Errorf("job of a FLEX reservation waits for its start")
	}
	mustSchedule(t, m, cl, t0)
	j := m.Job(magID)
	m.TakeMagnetic(j, cl, t0) // what start does (a no-op once done)
	if !j.Running() || j.nodeList() != "n2" || j.Reservation != "mag" {
		t.Errorf("magnetic job: running %v on %q in %q, want n2 in mag", j.Running(), j.nodeList(), j.Reservation)
	}
	if j := m.Job(bobID); !j.Running() || j.nodeList() == "n2" || j.Reservation != "" {
		t.Errorf("job of another user: running %v on %q in %q", j.Running(), j.nodeList(), j.Reservation)
	}
	if j := m.Job(flexID); !j.Running() || j.Reservation != "flex" {
		t.Errorf("FLEX job before its window: running %v on %q reason %d", j.Running(), j.nodeList(), j.Reason)
	}
}
