package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// licCluster is testCluster with Licenses=foo:2,bar:1.
func licCluster() *Cluster {
	cl := testCluster()
	cl.Licenses = licConf
	return cl
}

func licSubmit(t *testing.T, m *Manager, cl *Cluster, lic string, now int64) uint32 {
	t.Helper()
	d := batchDesc(alice)
	d.Licenses = msg.Str(lic)
	return mustSubmit(t, m, cl, d, alice, now)
}

// TestScheduleLicenses: the scheduler starts a job only when its
// licenses are free; a job waiting for licenses (reason Licenses) does
// not hold up lower jobs that fit; licenses come back when a job's
// completion is over and the waiting job starts then.
func TestScheduleLicenses(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	a := licSubmit(t, m, cl, "foo:1", t0)
	mustSchedule(t, m, cl, t0+1)
	b := licSubmit(t, m, cl, "foo:2", t0+2)
	c := licSubmit(t, m, cl, "foo:1,bar:1", t0+3)
	mustSchedule(t, m, cl, t0+4)
	for id, want := range map[uint32]uint32{a: msg.JobRunning, b: msg.JobPending, c: msg.JobRunning} {
		if got := m.Job(id).Base(); got != want {
			t.Errorf("job %d: state %d, want %d", id, got, want)
		}
	}
	if r := m.Job(b).Reason; r != ReasonLicenses {
		t.Errorf("job %d: reason %d, want Licenses", b, r)
	}
	// Refused at submit: more than configured, unknown name.
	for _, lic := range []string{"foo:3", "nope:1", "foo:1,bar:2"} {
		d := batchDesc(alice)
		d.Licenses = msg.Str(lic)
		if _, _, err := m.Submit(d, alice, cl, t0+5); code(err) != slurmerr.ESLURM_INVALID_LICENSES {
			t.Errorf("submit -L %s: %v, want ESLURM_INVALID_LICENSES", lic, err)
		}
	}
	finishJob(t, m, cl, a, 0, t0+6)
	mustSchedule(t, m, cl, t0+7)
	if m.Job(b).Base() != msg.JobPending {
		t.Fatalf("job %d started with foo held by %d", b, c)
	}
	finishJob(t, m, cl, c, 0, t0+8)
	mustSchedule(t, m, cl, t0+9)
	if m.Job(b).Base() != msg.JobRunning {
		t.Fatalf("job %d: state %d after the others ended, reason %d", b, m.Job(b).Base(), m.Job(b).Reason)
	}
	want := []LicenseCount{{"bar", 1, 0}, {"foo", 2, 2}}
	if got := m.LicenseUsage(cl.Licenses).Counts(); got[0] != want[0] || got[1] != want[1] {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// TestScheduleLicensesOnePass: jobs started in one pass share the free
// licenses in priority order; a held-back job does not keep its nodes.
func TestScheduleLicensesOnePass(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	a := licSubmit(t, m, cl, "foo:2", t0)
	b := licSubmit(t, m, cl, "foo:1", t0+1)
	c := licSubmit(t, m, cl, "bar", t0+2)
	mustSchedule(t, m, cl, t0+3)
	if m.Job(a).Base() != msg.JobRunning || m.Job(b).Base() != msg.JobPending || m.Job(c).Base() != msg.JobRunning {
		t.Fatalf("states a %d b %d c %d", m.Job(a).Base(), m.Job(b).Base(), m.Job(c).Base())
	}
	if m.Job(b).Reason != ReasonLicenses {
		t.Errorf("job %d: reason %d, want Licenses", b, m.Job(b).Reason)
	}
}

// TestScheduleLicensesSuspend: a suspended job keeps its licenses.
func TestScheduleLicensesSuspend(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	a := licSubmit(t, m, cl, "foo:2", t0)
	mustSchedule(t, m, cl, t0+1)
	if _, _, err := m.Suspend(&msg.SuspendRequest{Op: msg.SuspendJob, JobID: a}, root, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	b := licSubmit(t, m, cl, "foo:1", t0+3)
	mustSchedule(t, m, cl, t0+4)
	if m.Job(b).Base() != msg.JobPending || m.Job(b).Reason != ReasonLicenses {
		t.Errorf("job %d: state %d reason %d beside a suspended job holding foo:2", b, m.Job(b).Base(), m.Job(b).Reason)
	}
}

// TestScheduleLicensesBehindBlockedJob: as schedule() tests a job's
// partition before its licenses, a job waiting for licenses behind a job
// that found no resources in its partition gets reason Priority (from
// None or Resources) and keeps any other reason; alone, it gets Licenses.
func TestScheduleLicensesBehindBlockedJob(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	whole := func(lic string, now int64) uint32 {
		d := batchDesc(alice)
		d.MinNodes, d.NumTasks = 4, 64
		d.Licenses = msg.Str(lic)
		return mustSubmit(t, m, cl, d, alice, now)
	}
	a := whole("foo:2", t0)
	mustSchedule(t, m, cl, t0+1)
	if !m.Job(a).Running() {
		t.Fatalf("job %d not running", a)
	}
	y := licSubmit(t, m, cl, "foo:1", t0+2)
	mustSchedule(t, m, cl, t0+3)
	if r := m.Job(y).Reason; r != ReasonLicenses {
		t.Errorf("alone: reason %d, want Licenses", r)
	}
	x := whole("", t0+4)
	z := licSubmit(t, m, cl, "foo:1", t0+5)
	mustSchedule(t, m, cl, t0+6)
	for id, want := range map[uint32]uint16{x: ReasonResources, y: ReasonLicenses, z: ReasonPriority} {
		if r := m.Job(id).Reason; r != want {
			t.Errorf("job %d: reason %d, want %d", id, r, want)
		}
	}
}
