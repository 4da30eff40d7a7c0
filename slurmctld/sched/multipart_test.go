package sched

import "testing"

// TestBackfillSeveralPartitions checks a job queued in two partitions:
// backfill tests it in each, reserves it in each where it cannot start
// (one reservation only with bf_one_resv_per_job), and its expected start
// is the earliest, in that partition.
func TestBackfillSeveralPartitions(t *testing.T) {
	const now = 1000
	setup := func(oneResv bool) *Snapshot {
		s := snap(mkNodes(2, 8, 8000))
		s.Config.Backfill = true
		s.Config.BF.OneResvPerJob = oneResv
		a, b := mkPart("a", []int{0}), mkPart("b", []int{1})
		b.Default = false
		s.Partitions = []Partition{a, b}
		s.Running = []Allocation{running(90, now+7200, 8, 0), running(91, now+1800, 8, 1)}
		s.Pending = []Job{
			mkJob(1, tasks(8), limit(60), parts("a", "b")),
			// Only in b, lower priority: it can use node 1 from +30 min
			// unless job 1 holds it then.
			mkJob(2, tasks(8), limit(60), parts("b")),
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		oneResv bool
		job2At  int64
	}{
		{"reserved in every partition", false, now + 1800 + 3600},
		{"bf_one_resv_per_job", true, now + 1800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Backfill(setup(tc.oneResv))
			pd := mustWait(t, p, 1)
			if pd.StartTime != now+1800 || pd.Partition != "b" {
				t.Fatalf("job 1 expected at %d in %q, want %d in b", pd.StartTime, pd.Partition, now+1800)
			}
			if pd := mustWait(t, p, 2); pd.StartTime != tc.job2At {
				t.Fatalf("job 2 expected at %d, want %d", pd.StartTime, tc.job2At)
			}
		})
	}
	t.Run("starts now in a later partition", func(t *testing.T) {
		s := setup(false)
		s.Running = s.Running[:1] // node 1 idle
		s.Pending = s.Pending[:1]
		if st := mustStart(t, Backfill(s), 1); st.Partition != "b" {
			t.Fatalf("started in %q, want b", st.Partition)
		}
	})
	t.Run("a partition named twice is queued once", func(t *testing.T) {
		s := setup(false)
		s.Config.BF.MaxJobPart = 1
		s.Pending = []Job{
			mkJob(1, tasks(8), limit(60), parts("b", "b")),
			mkJob(2, tasks(8), limit(10), parts("b")),
		}
		s.Running = s.Running[1:]
		// Job 1 uses the one bf_max_job_part slot of b once; job 2 is not
		// tested at all.
		p := Backfill(s)
		if pd := mustWait(t, p, 1); pd.StartTime != now+1800 {
			t.Fatalf("job 1 expected at %d, want %d", pd.StartTime, now+1800)
		}
		if pd := mustWait(t, p, 2); pd.StartTime != 0 {
			t.Fatalf("job 2 has a start time %d, want none", pd.StartTime)
		}
	})
}
