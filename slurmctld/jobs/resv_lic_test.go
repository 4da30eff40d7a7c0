package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// resvLicCluster has foo:4; reservation "now" holds foo:2 for the hour
// from t0, "later" foo:1 from t0+30min for an hour, "gone" (over) foo:4.
// The view is made at t0+1.
func resvLicCluster() *Cluster {
	cl := testCluster()
	cl.Licenses = []conf.License{{Name: "foo", Count: 4}}
	cl.Reservations = []Reservation{
		{Name: "now", Start: t0, End: t0 + 3600, AnyNodes: true, Licenses: []conf.License{{Name: "foo", Count: 2}}, Now: t0 + 1},
		{Name: "later", Start: t0 + 1800, End: t0 + 5400, AnyNodes: true, Licenses: []conf.License{{Name: "foo", Count: 1}}, Now: t0 + 1},
		{Name: "gone", Start: t0 - 3600, End: t0, AnyNodes: true, Licenses: []conf.License{{Name: "foo", Count: 4}}, Now: t0 + 1},
	}
	return cl
}

// TestLicenseTestReservations: license_job_test with reservations: what
// the reservations other than the job's own hold during the job's run
// (now to now plus its time limit, else its partition's) is not free.
func TestLicenseTestReservations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		job   Job
		parts func(*Cluster)
		want  LicenseTest
	}{
		{"outside, fits beside now's 2", Job{Licenses: "foo:2", TimeLimit: 10}, nil, LicensesFree},
		{"outside, one too many", Job{Licenses: "foo:3", TimeLimit: 10}, nil, LicensesBusy},
		{"in now: its own hold is free", Job{Licenses: "foo:3", TimeLimit: 10, Reservation: "now"}, nil, LicensesFree},
		{"in now, run meets later", Job{Licenses: "foo:4", TimeLimit: 45, Reservation: "now"}, nil, LicensesBusy},
		{"in now, run ends as later starts", Job{Licenses: "foo:4", TimeLimit: 29, Reservation: "now"}, nil, LicensesFree},
		{"outside, run meets later", Job{Licenses: "foo:2", TimeLimit: 45}, nil, LicensesBusy},
		{"no limit: partition MaxTime UNLIMITED", Job{Licenses: "foo:2", TimeLimit: NoVal, Partition: "debug"}, nil, LicensesBusy},
		{"no limit: partition MaxTime 10", Job{Licenses: "foo:2", TimeLimit: NoVal, Partitions: []string{"short"}}, nil, LicensesFree},
		{"UNLIMITED", Job{Licenses: "foo:2", TimeLimit: Infinite}, nil, LicensesBusy},
		{"more than configured", Job{Licenses: "foo:5", TimeLimit: 10}, nil, LicensesNeverRun},
		{"without reservations", Job{Licenses: "foo:4", TimeLimit: 10}, func(cl *Cluster) { cl.Reservations = nil }, LicensesFree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := resvLicCluster()
			if tc.parts != nil {
				tc.parts(cl)
			}
			m := newTestManager(nil)
			if got := m.clusterLicenses(cl, false).Test(&tc.job); got != tc.want {
				t.Errorf("Test = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestScheduleLicenseReservation: through the scheduling passes, the
// job in the reservation runs on any node (the reservation has none),
// first, as the queue puts reservation jobs first; what it holds counts
// as used beside the reservation's hold. Of two jobs outside, each of
// which would fit beside the hold alone, the second of the pass waits
// with reason Licenses.
func TestScheduleLicenseReservation(t *testing.T) {
	m, cl := newTestManager(nil), resvLicCluster()
	cl.Reservations = cl.Reservations[:1]
	sub := func(lic, resv string, now int64) uint32 {
		d := batchDesc(alice)
		d.Licenses = msg.Str(lic)
		d.TimeLimit = 10
		if resv != "" {
			d.Reservation = msg.Str(resv)
		}
		return mustSubmit(t, m, cl, d, alice, now)
	}
	a := sub("foo:1", "", t0)
	b := sub("foo:1", "", t0)
	in := sub("foo:1", "now", t0)
	mustSchedule(t, m, cl, t0+1)
	for id, want := range map[uint32]uint32{a: msg.JobRunning, b: msg.JobPending, in: msg.JobRunning} {
		if got := m.Job(id).Base(); got != want {
			t.Errorf("job %d: state %d, want %d (reason %d)", id, got, want, m.Job(id).Reason)
		}
	}
	if r := m.Job(b).Reason; r != ReasonLicenses {
		t.Errorf("job %d: reason %d, want Licenses", b, r)
	}
}

// BenchmarkLicenseTestReservations: one license test of a pending job
// with ten reservations holding licenses.
func BenchmarkLicenseTestReservations(b *testing.B) {
	cl := resvLicCluster()
	for i := range 7 {
		cl.Reservations = append(cl.Reservations, Reservation{Name: "r" + string(rune('a'+i)), Start: t0 + int64(i)*600,
			End: t0 + int64(i+1)*600, Licenses: []conf.License{{Name: "foo", Count: 0}}, Now: t0 + 1})
	}
	m := newTestManager(nil)
	j := &Job{Licenses: "foo:1", TimeLimit: 60}
	u := m.clusterLicenses(cl, true)
	b.ReportAllocs()
	for b.Loop() {
		if u.Test(j) != LicensesFree {
			b.Fatal("not free")
		}
	}
}
