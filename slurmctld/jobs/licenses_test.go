package jobs

import (
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// licConf is Licenses=foo:2,bar:1.
var licConf = []conf.License{{Name: "foo", Count: 2}, {Name: "bar", Count: 1}}

// licTable puts records straight into a manager's table.
func licTable(jobs ...*Job) *Manager {
	m := newTestManager(nil)
	for _, j := range jobs {
		m.jobs[j.ID] = j
		m.sorted = false
	}
	return m
}

// TestLicenseUsageStates: a job holds its licenses from its start until
// its completion is over, suspended or requeued or not.
func TestLicenseUsageStates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state uint32
		used  []uint32 // bar, foo
	}{
		{"pending", msg.JobPending, []uint32{0, 0}},
		{"running", msg.JobRunning, []uint32{1, 1}},
		{"suspended", msg.JobSuspended, []uint32{1, 1}},
		{"completing", msg.JobCancelled | msg.JobCompleting, []uint32{1, 1}},
		{"cancelled", msg.JobCancelled, []uint32{0, 0}},
		{"requeued, completing", msg.JobPending | msg.JobCompleting, []uint32{1, 1}},
		{"completed", msg.JobComplete, []uint32{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := licTable(&Job{ID: 1, State: tc.state, Licenses: "foo:1,bar:1"},
				&Job{ID: 2, State: msg.JobRunning}) // no licenses
			got := m.LicenseUsage(licConf).Counts()
			want := []LicenseCount{{"bar", 1, tc.used[0]}, {"foo", 2, tc.used[1]}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("counts %+v, want %+v", got, want)
			}
		})
	}
}

// TestLicenseUsageSums: counts add up over jobs, repeated names in one
// request add up, unconfigured names are not counted.
func TestLicenseUsageSums(t *testing.T) {
	m := licTable(
		&Job{ID: 1, State: msg.JobRunning, Licenses: "foo"},
		&Job{ID: 2, State: msg.JobRunning, Licenses: "foo:1;foo:1,gone:4"},
		&Job{ID: 3, State: msg.JobSuspended, Licenses: "bar:1"},
	)
	got := m.LicenseUsage(licConf).Counts()
	want := []LicenseCount{{"bar", 1, 1}, {"foo", 2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if got := ConfiguredLicenses(licConf); !reflect.DeepEqual(got, []LicenseCount{{"bar", 1, 0}, {"foo", 2, 0}}) {
		t.Errorf("ConfiguredLicenses: %+v", got)
	}
	if got := m.LicenseUsage(nil).Counts(); len(got) != 0 {
		t.Errorf("no licenses configured: %+v", got)
	}
}

// TestLicenseTest is license_job_test: free, busy (EAGAIN), never.
func TestLicenseTest(t *testing.T) {
	m := licTable(&Job{ID: 1, State: msg.JobRunning, Licenses: "foo:1"})
	u := m.LicenseUsage(licConf)
	for _, tc := range []struct {
		lic  string
		want LicenseTest
	}{
		{"", LicensesFree},
		{"foo:1", LicensesFree},
		{"foo:1,bar:1", LicensesFree},
		{"foo:2", LicensesBusy},
		{"bar:1,foo:2", LicensesBusy},
		{"foo:3", LicensesNeverRun},
		{"nope", LicensesNeverRun},
		{"foo:x", LicensesNeverRun},
	} {
		if got := u.Test(&Job{ID: 9, Licenses: tc.lic}); got != tc.want {
			t.Errorf("Test(%q) = %d, want %d", tc.lic, got, tc.want)
		}
	}
}

// TestTakeLicenses: jobs starting in one pass see what the ones before
// them took; the one that finds them gone waits with reason Licenses.
func TestTakeLicenses(t *testing.T) {
	a := &Job{ID: 1, State: msg.JobPending, Licenses: "foo:1"}
	b := &Job{ID: 2, State: msg.JobPending, Licenses: "foo:2"}
	c := &Job{ID: 3, State: msg.JobPending, Licenses: "foo:1,bar:1"}
	m := licTable(a, b, c)
	u := m.LicenseUsage(licConf)
	for _, tc := range []struct {
		j  *Job
		ok bool
	}{{a, true}, {b, false}, {c, true}} {
		if got := m.takeLicenses(tc.j, u, t0); got != tc.ok {
			t.Errorf("job %d: take %v, want %v", tc.j.ID, got, tc.ok)
		}
	}
	if b.Reason != ReasonLicenses || a.Reason != ReasonNone {
		t.Errorf("reasons: a %d, b %d", a.Reason, b.Reason)
	}
	if got := u.Counts(); !reflect.DeepEqual(got, []LicenseCount{{"bar", 1, 1}, {"foo", 2, 2}}) {
		t.Errorf("counts after the pass: %+v", got)
	}
}

// TestValidLicenses is license_validate at submit.
func TestValidLicenses(t *testing.T) {
	for _, tc := range []struct {
		lic string
		ok  bool
	}{
		{"", true},
		{"foo", true},
		{"foo:2,bar:1", true},
		{"foo:1;bar", true},
		{"foo:3", false},
		{"foo:1,foo:2", false}, // repeated names add up
		{"nope:1", false},
		{"foo:-1", false},
		{"foo:1x", false},
		{"foo 1", false},
	} {
		err := ValidLicenses(tc.lic, licConf)
		if (err == nil) != tc.ok || (err != nil && code(err) != slurmerr.ESLURM_INVALID_LICENSES) {
			t.Errorf("ValidLicenses(%q) = %v, want ok %v", tc.lic, err, tc.ok)
		}
	}
	if err := ValidLicenses("foo", nil); err == nil {
		t.Error("no licenses configured: foo accepted")
	}
}

// TestRestoreLicenses: what reading the configuration does to the jobs'
// Licenses strings.
func TestRestoreLicenses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"foo:1,bar:1", "bar:1,foo:1"},
		{"bar:1,foo:1", "foo:1,bar:1"},
		{"foo", "foo:1"},
		{"foo:1,foo:1", "foo:2"},
		{"foo:1,gone:3", "foo:1"},
		{"gone:3", ""},
		{"foo:bad", "foo:bad"}, // refused by the parser: left alone
		{"", ""},
	} {
		j := &Job{ID: 1, State: msg.JobRunning, Licenses: tc.in}
		m := licTable(j)
		m.RestoreLicenses(licConf, t0)
		if j.Licenses != tc.want {
			t.Errorf("%q: restored %q, want %q", tc.in, j.Licenses, tc.want)
		}
		if changed := tc.in != tc.want; changed != (len(m.pending) == 1) {
			t.Errorf("%q: %d records to journal", tc.in, len(m.pending))
		}
	}
}
