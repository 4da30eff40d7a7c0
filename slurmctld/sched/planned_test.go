package sched

import (
	"slices"
	"testing"
)

// TestBackfillPlannedNodes checks Plan.Planned: the nodes of every
// pending job's expected start, and nothing after a main pass or for jobs
// without a reservation.
func TestBackfillPlannedNodes(t *testing.T) {
	const now = 1000
	tests := []struct {
		name     string
		backfill bool
		mod      func(*Snapshot)
		jobs     []Job
		want     []int
	}{
		{"job waiting for all four nodes", true, nil,
			[]Job{mkJob(1, nodesN(4, 4), exclusive(), limit(60))}, []int{0, 1, 2, 3}},
		{"job waiting for two nodes", true, nil,
			// Node 0 frees at +10 min, node 1 at +20: the job's start.
			[]Job{mkJob(1, nodesN(2, 2), exclusive(), limit(60))}, []int{0, 1}},
		{"two reservations add up", true, nil,
			[]Job{mkJob(1, nodesN(2, 2), exclusive(), limit(60)), mkJob(2, nodesN(1, 1), exclusive(), limit(600))},
			[]int{0, 1, 2}},
		{"main pass plans nothing", false, nil,
			[]Job{mkJob(1, nodesN(4, 4), exclusive(), limit(60))}, nil},
		{"no reservation beyond the window", true, func(s *Snapshot) { s.Config.BF.Window = 1800 },
			[]Job{mkJob(1, nodesN(4, 4), exclusive())}, nil},
		{"job started now plans nothing", true, func(s *Snapshot) { s.Running = s.Running[1:] },
			[]Job{mkJob(1, nodesN(1, 1), exclusive(), limit(60))}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(4, 8, 8000))
			s.Config.Backfill = tc.backfill
			s.Config.BF.Resolution = 60
			s.Running = []Allocation{
				running(90, now+600, 8, 0),
				running(91, now+1200, 8, 1),
				running(92, now+1800, 8, 2),
				running(93, now+3600, 8, 3),
			}
			if tc.mod != nil {
				tc.mod(s)
			}
			s.Pending = tc.jobs
			p := Schedule(s)
			if !slices.Equal(p.Planned, tc.want) {
				t.Errorf("Planned = %v, want %v", p.Planned, tc.want)
			}
		})
	}
}
