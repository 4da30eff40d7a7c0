package sched

import "testing"

// TestPassStats: a pass reports its queue lengths and depths, and the
// backfill pass the size of its timeline (one record, plus the boundaries
// its reservations add).
func TestPassStats(t *testing.T) {
	for _, tc := range []struct {
		name     string
		backfill bool
		pending  []Job
		want     PassStats
	}{
		{name: "main, nothing pending", want: PassStats{}},
		{name: "main, both wait", pending: []Job{mkJob(1, tasks(4)), mkJob(2)},
			want: PassStats{MainQueue: 2, MainDepth: 2, BFTable: 1}},
		{name: "backfill reserves", backfill: true, pending: []Job{mkJob(1, tasks(4)), mkJob(2)},
			want: PassStats{MainQueue: 2, MainDepth: 2, BFQueue: 2, BFDepth: 2, BFDepthTry: 2, BFTable: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(1, 4, 1000))
			s.Config.Backfill = tc.backfill
			s.Running = []Allocation{running(100, 1000+3600, 4, 0)}
			s.Pending = tc.pending
			p := Schedule(s)
			if len(p.Starts) != 0 {
				t.Fatalf("starts %+v", p.Starts)
			}
			if tc.pending == nil {
				tc.want.BFTable = 1
			}
			if p.Stats != tc.want {
				t.Errorf("stats %+v, want %+v", p.Stats, tc.want)
			}
		})
	}
}
