package sched

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/conf"
)

func lic(name string, n uint32) jobOpt {
	return func(j *Job) { j.Licenses = append(j.Licenses, License{Name: name, Count: n}) }
}

func licBlocked() jobOpt { return func(j *Job) { j.LicBlocked = true } }

// TestBFLicenses: with bf_licenses, backfill plans licenses over time. A
// running job holds foo:1 of foo:2 until +10 min (node 0); the other
// nodes are free.
func TestBFLicenses(t *testing.T) {
	const now = 1000
	tests := []struct {
		name   string
		bfLic  bool
		pass   func(*Snapshot) *Plan
		jobs   []Job
		starts []uint32
		// expected start offsets from now of jobs left pending
		want map[uint32]int64
	}{
		{"blocked job reserved, long job waits, short job starts", true, Schedule,
			[]Job{
				mkJob(1, lic("foo", 2), licBlocked(), limit(10)),
				mkJob(2, lic("foo", 1), limit(30)),
				mkJob(3, lic("foo", 1), limit(5)),
			},
			[]uint32{3}, map[uint32]int64{1: 600, 2: 1200}},
		{"without bf_licenses licenses are the caller's business", false, Schedule,
			[]Job{mkJob(2, lic("foo", 1), limit(30))},
			[]uint32{2}, nil},
		{"main pass stops at a job blocked on licenses", true, MainPass,
			[]Job{mkJob(1, lic("foo", 2), licBlocked(), limit(10)), mkJob(2, limit(10))},
			nil, map[uint32]int64{1: 0, 2: 0}},
		{"backfill starts the job behind", true, Schedule,
			[]Job{mkJob(1, lic("foo", 2), licBlocked(), limit(10)), mkJob(2, limit(10))},
			[]uint32{2}, map[uint32]int64{1: 600}},
		{"unknown license never fits", true, Schedule,
			[]Job{mkJob(1, lic("bar", 1), licBlocked(), limit(10))},
			nil, map[uint32]int64{1: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(4, 8, 8000))
			s.Config.Backfill = true
			s.Config.BF.Resolution = 60
			s.Config.BF.Licenses = tc.bfLic
			s.Licenses = []License{{"foo", 2}}
			held := running(90, now+600, 8, 0)
			held.Licenses = []License{{"foo", 1}}
			s.Running = []Allocation{held}
			s.Pending = tc.jobs
			p := tc.pass(s)
			var got []uint32
			for _, st := range p.Starts {
				got = append(got, st.JobID)
			}
			if !slices.Equal(got, tc.starts) {
				t.Errorf("started %v, want %v", got, tc.starts)
			}
			for id, off := range tc.want {
				pd := pendingOf(p, id)
				if pd == nil {
					t.Fatalf("job %d not pending", id)
				}
				want := int64(0)
				if off > 0 {
					want = now + off
				}
				if pd.StartTime != want {
					t.Errorf("job %d expected start %d, want %d", id, pd.StartTime, want)
				}
				if (len(pd.SchedNodes) > 0) != (off > 0) {
					t.Errorf("job %d SchedNodes %v with start offset %d", id, pd.SchedNodes, off)
				}
			}
		})
	}
}

// TestBFLicensesReason: backfill leaves the reason of a job it could not
// start for its licenses alone (Priority, from the main pass that stopped
// before it), and a job blocked on licenses keeps no reason of its own
// here (the caller gives it Licenses).
func TestBFLicensesReason(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.Licenses = true
	s.Licenses = []License{{"foo", 1}}
	held := running(90, 1000+600, 8, 0)
	held.Licenses = []License{{"foo", 1}}
	s.Running = []Allocation{held}
	s.Pending = []Job{mkJob(1, lic("foo", 1), licBlocked()), mkJob(2, lic("foo", 1))}
	p := Schedule(s)
	if pd := pendingOf(p, 2); pd == nil || pd.Reason != ReasonPriority {
		t.Errorf("job 2: %+v, want reason Priority", pd)
	}
}

func TestParseBFLicenses(t *testing.T) {
	for _, tc := range []struct {
		opt      string
		lic, rjr bool
	}{
		{"bf_licenses", true, true},
		{"bf_running_job_reserve", false, true},
		{"bf_continue", false, false},
		{"allow_zero_lic", false, false},
	} {
		c := DefaultConfig()
		if err := ParseSchedulerParameters(&c, conf.ParseOptions(tc.opt)); err != nil {
			t.Fatal(err)
		}
		if c.AllowZeroLic != (tc.opt == "allow_zero_lic") {
			t.Errorf("%s: AllowZeroLic=%v", tc.opt, c.AllowZeroLic)
		}
		if c.BF.Licenses != tc.lic || c.BF.RunningJobReserve != tc.rjr {
			t.Errorf("%s: Licenses=%v RunningJobReserve=%v", tc.opt, c.BF.Licenses, c.BF.RunningJobReserve)
		}
	}
}

// TestBFLicensesReservation: a reservation's licenses are out of the
// general pool during its window (an hour from now here).
func TestBFLicensesReservation(t *testing.T) {
	const now = 1000
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.Licenses = true
	s.Licenses = []License{{"foo", 2}}
	s.Reservations = []Reservation{{Name: "r", Start: now - 100, End: now + 3600, AnyNodes: true,
		Licenses: []License{{"foo", 1}}}}
	s.Pending = []Job{
		mkJob(1, lic("foo", 2), licBlocked(), limit(10)),
		mkJob(2, lic("foo", 1), limit(10)),
	}
	p := Schedule(s)
	if startOf(p, 2) == nil {
		t.Errorf("job 2 did not start: %+v", p)
	}
	pd := pendingOf(p, 1)
	if pd == nil {
		t.Fatalf("job 1 started")
	}
	// The window ends at 4600, rounded down to the resolution 4560; the
	// pass's start times are now plus whole resolutions: 4600.
	if want := int64(4600); pd.StartTime != want {
		t.Errorf("job 1 expected start %d, want %d", pd.StartTime, want)
	}
}

// TestBFLicensesSkipped: the jobs behind the one the main pass stopped at
// are Skipped, and backfill gives them no reason.
func TestBFLicensesSkipped(t *testing.T) {
	s := snap(mkNodes(1, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.Licenses = true
	s.Licenses = []License{{"foo", 1}}
	held := running(90, 1000+600, 8, 0)
	held.Licenses = []License{{"foo", 1}}
	s.Running = []Allocation{held}
	s.Pending = []Job{mkJob(1, lic("foo", 1), licBlocked()), mkJob(2, lic("foo", 1), licBlocked()), mkJob(3, tasks(8))}
	p := Schedule(s)
	for id, want := range map[uint32]bool{1: false, 2: true, 3: true} {
		pd := pendingOf(p, id)
		if pd == nil {
			t.Fatalf("job %d started", id)
		}
		if pd.Skipped != want {
			t.Errorf("job %d: Skipped=%v, want %v", id, pd.Skipped, want)
		}
		if pd.Skipped && pd.Reason != ReasonPriority {
			t.Errorf("job %d: reason %v, want Priority", id, pd.Reason)
		}
	}
}
