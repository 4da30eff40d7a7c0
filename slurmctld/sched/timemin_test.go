package sched

import "testing"

// TestBackfillTimeMin checks --time-min as 22.05's backfill applies it: a
// job is tested with its time-min as limit, so it may start before a
// reservation it would delay with its full limit, and keeps the time-min
// as its limit (Start.TimeLimit).
func TestBackfillTimeMin(t *testing.T) {
	const now = 1000
	setup := func(jobs ...Job) *Snapshot {
		s := snap(mkNodes(2, 8, 8000))
		s.Config.Backfill = true
		s.Config.BF.Resolution = 60
		// Node 1 is busy for an hour; job 1 needs both nodes, so it
		// reserves them from +60 min.
		s.Running = []Allocation{running(90, now+3600, 8, 1)}
		s.Pending = append([]Job{mkJob(1, nodesN(2, 2), exclusive(), limit(60))}, jobs...)
		return s
	}
	timeMin := func(m uint32) jobOpt { return modify(func(j *Job) { j.TimeMin = m }) }

	t.Run("reduced to fit before a reservation", func(t *testing.T) {
		p := Schedule(setup(mkJob(2, tasks(8), limit(120), timeMin(30))))
		st := mustStart(t, p, 2)
		if !st.Backfill || st.TimeLimit != 30 || st.Alloc.End != now+30*60 {
			t.Fatalf("start %+v, want backfill with limit 30 ending at %d", st, now+30*60)
		}
		mustPend(t, p, 1, ReasonResources)
	})
	t.Run("time-min too long for the gap", func(t *testing.T) {
		p := Schedule(setup(mkJob(2, tasks(8), limit(120), timeMin(61))))
		mustWait(t, p, 2)
	})
	t.Run("without time-min it waits", func(t *testing.T) {
		p := Schedule(setup(mkJob(2, tasks(8), limit(120))))
		mustWait(t, p, 2)
	})
	t.Run("main pass keeps the full limit", func(t *testing.T) {
		s := setup(mkJob(2, tasks(8), limit(120), timeMin(30)))
		s.Pending = s.Pending[1:] // no reservation in the way
		st := mustStart(t, Schedule(s), 2)
		if st.Backfill || st.TimeLimit != 0 || st.Alloc.End != now+120*60 {
			t.Fatalf("start %+v, want a main-pass start with the full limit", st)
		}
	})
	t.Run("backfill start always takes the time-min", func(t *testing.T) {
		// backfill.c tests and starts with the time-min whenever it is
		// below the limit (20.02.5 on), even with no reservation in the
		// way.
		s := setup(mkJob(2, tasks(8), limit(120), timeMin(30)))
		s.Pending = s.Pending[1:]
		st := mustStart(t, Backfill(s), 2)
		if st.TimeLimit != 30 || st.Alloc.End != now+30*60 {
			t.Fatalf("start %+v, want limit 30", st)
		}
	})
	t.Run("time-min not below the limit", func(t *testing.T) {
		s := setup(mkJob(2, tasks(8), limit(30), timeMin(30)))
		st := mustStart(t, Schedule(s), 2)
		if st.TimeLimit != 0 {
			t.Fatalf("TimeLimit %d, want 0 (unchanged)", st.TimeLimit)
		}
	})
	t.Run("reservation uses the time-min", func(t *testing.T) {
		// Both nodes busy: job 2 (limit 120, time-min 30) reserves node 0
		// at +10 min for 30 minutes only, so job 3 (20 min) fits after it
		// on node 0 before job 1's reservation at +60.
		s := setup(mkJob(2, tasks(8), limit(120), timeMin(30)), mkJob(3, tasks(8), limit(20)))
		s.Running = append(s.Running, running(91, now+600, 8, 0))
		p := Schedule(s)
		if pd := mustWait(t, p, 2); pd.StartTime != now+600 {
			t.Fatalf("job 2 expected at %d, want %d", pd.StartTime, now+600)
		}
		if pd := mustWait(t, p, 3); pd.StartTime != now+600+1800 {
			t.Fatalf("job 3 expected at %d, want %d", pd.StartTime, now+600+1800)
		}
	})
}

// mustWait checks that a job did not start and returns its pending entry.
func mustWait(t *testing.T, p *Plan, id uint32) *Pending {
	t.Helper()
	pd := pendingOf(p, id)
	if pd == nil {
		t.Fatalf("job %d started on %v, want it pending", id, nodesOf(startOf(p, id)))
	}
	return pd
}
