package sched

import (
	"slices"
	"testing"
)

// TestBackfillExpectedStarts checks the expected start times backfill
// gives waiting jobs on a 4-node cluster whose nodes free up at known
// times.
func TestBackfillExpectedStarts(t *testing.T) {
	const now = 1000
	setup := func() *Snapshot {
		s := snap(mkNodes(4, 8, 8000))
		s.Config.Backfill = true
		s.Config.BF.Resolution = 60
		s.Running = []Allocation{
			running(90, now+600, 8, 0),  // node 0 free at +10 min
			running(91, now+1200, 8, 1), // node 1 at +20 min
			running(92, now+1800, 8, 2), // node 2 at +30 min
			running(93, now+3600, 8, 3), // node 3 at +60 min
		}
		return s
	}
	tests := []struct {
		name string
		mod  func(*Snapshot)
		jobs []Job
		want map[uint32]int64 // expected start offsets from now; -1 = started now
	}{
		{"one node", nil, []Job{mkJob(1, tasks(8))}, map[uint32]int64{1: 600}},
		{"two nodes wait for the second", nil, []Job{mkJob(1, nodesN(2, 2), exclusive())}, map[uint32]int64{1: 1200}},
		{"second job queues behind the first's reservation", nil,
			[]Job{mkJob(1, nodesN(3, 3), exclusive(), limit(60)), mkJob(2, nodesN(2, 2), exclusive(), limit(60))},
			// Job 1 reserves nodes 0-2 from +30 min to +90 min; job 2 needs
			// node 3 (free at +60) and one of them after +90.
			map[uint32]int64{1: 1800, 2: 1800 + 3600}},
		{"short job fits before the reservation", nil,
			[]Job{mkJob(1, nodesN(4, 4), exclusive(), limit(60)), mkJob(2, nodesN(1, 1), exclusive(), limit(10))},
			// Job 1 waits for node 3 (+60 min). Job 2 (10 min) fits on node 0
			// from +10 min, ending before +60.
			map[uint32]int64{1: 3600, 2: 600}},
		{"window limits reservations", func(s *Snapshot) { s.Config.BF.Window = 1800 },
			[]Job{mkJob(1, nodesN(4, 4), exclusive())}, map[uint32]int64{1: 0}},
		{"resolution rounds up", func(s *Snapshot) { s.Config.BF.Resolution = 900 },
			[]Job{mkJob(1, tasks(8))}, map[uint32]int64{1: 900}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := setup()
			if tc.mod != nil {
				tc.mod(s)
			}
			s.Pending = tc.jobs
			p := Schedule(s)
			for id, off := range tc.want {
				pd := pendingOf(p, id)
				if pd == nil {
					t.Fatalf("job %d started", id)
				}
				want := int64(0)
				if off > 0 {
					want = now + off
				}
				if pd.StartTime != want {
					t.Errorf("job %d expected start %d, want %d", id, pd.StartTime, want)
				}
			}
		})
	}
}

func TestBackfillMinAgeReserve(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.MinAgeReserve = 3600
	s.Running = []Allocation{running(90, 1000+600, 8, 0)}
	// Job 1 is too young to reserve: job 2 (long) may take node 1.
	s.Pending = []Job{mkJob(1, nodesN(2, 2), exclusive()), mkJob(2, limit(600))}
	s.Pending[0].SubmitTime = 900
	p := Schedule(s)
	mustStart(t, p, 2)
	s.Pending[0].SubmitTime = -5000 // old enough: node 1 stays for job 1
	p = Schedule(s)
	if startOf(p, 2) != nil {
		t.Fatal("job 2 started over job 1's reservation")
	}
}

func TestBackfillMaxJobUser(t *testing.T) {
	s := snap(mkNodes(4, 1, 8000))
	s.Config.Backfill = true
	s.Config.BF.MaxJobUser = 2
	s.Running = []Allocation{running(90, 5000, 1, 0)}
	s.Pending = []Job{mkJob(1, nodesN(4, 4)), mkJob(2, user(7)), mkJob(3, user(7)), mkJob(4, user(7))}
	p := Backfill(s)
	// Job 1 reserves all four nodes from t=5000; user 7's one-hour jobs
	// end before that and start, but only two of them are tested.
	var started []uint32
	for _, st := range p.Starts {
		started = append(started, st.JobID)
	}
	if !slices.Equal(started, []uint32{2, 3}) {
		t.Fatalf("started %v, want [2 3]", started)
	}
}

func TestBackfillBusyNodes(t *testing.T) {
	for _, busy := range []bool{false, true} {
		s := snap(mkNodes(4, 8, 8000))
		s.Config.Backfill = true
		s.Config.BF.BusyNodes = busy
		// Node 0 idle, nodes 1-3 busy until +600 s. Job 1 needs two nodes:
		// it reserves nodes 0,1 by best fit, or with bf_busy_nodes the
		// busy nodes 1,2, which leaves node 0 to the long job 2.
		s.Running = []Allocation{running(90, 1600, 8, 1, 2, 3)}
		s.Pending = []Job{mkJob(1, nodesN(2, 2), exclusive(), limit(60)), mkJob(2, exclusive(), limit(600))}
		p := Schedule(s)
		if pd := mustPend(t, p, 1, ReasonResources); pd.StartTime != 1600 {
			t.Fatalf("busy=%v: job 1 start %d", busy, pd.StartTime)
		}
		if got := startOf(p, 2) != nil; got != busy {
			t.Fatalf("busy=%v: job 2 started=%v", busy, got)
		}
	}
}

func TestBackfillJobPartCountReserve(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.JobPartCountReserve = 1
	s.Running = []Allocation{running(90, 1600, 8, 0, 1)}
	s.Pending = []Job{mkJob(1, nodesN(2, 2)), mkJob(2, nodesN(2, 2)), mkJob(3, limit(5))}
	p := Backfill(s)
	if pd := mustPend(t, p, 1, ReasonResources); pd.StartTime != 1600 {
		t.Fatalf("job 1 start %d", pd.StartTime)
	}
	// Job 2 is beyond the count: no reservation, no expected start.
	if pd := mustPend(t, p, 2, ReasonResources); pd.StartTime != 0 {
		t.Fatalf("job 2 start %d", pd.StartTime)
	}
}
