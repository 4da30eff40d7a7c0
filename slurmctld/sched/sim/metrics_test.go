package sim

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBoundedSlowdown(t *testing.T) {
	tests := []struct {
		wait, run int64
		want      float64
	}{
		{0, 100, 1},
		{100, 100, 2},
		{30, 0, 3},   // run below tau: divided by 10
		{5, 2, 1},    // (5+2)/10 < 1: bounded at 1
		{90, 10, 10}, // exactly tau
		{0, 0, 1},    // nothing at all
		{1080, 300, 4.6},
	}
	for _, tc := range tests {
		if got := BoundedSlowdown(tc.wait, tc.run); !near(got, tc.want) {
			t.Errorf("BoundedSlowdown(%d, %d) = %v, want %v", tc.wait, tc.run, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		values []int64
		p      float64
		want   int64
	}{
		{nil, 95, 0},
		{[]int64{7}, 95, 7},
		{[]int64{5, 1, 4, 2, 3}, 95, 5},
		{[]int64{5, 1, 4, 2, 3}, 50, 3},
		{[]int64{5, 1, 4, 2, 3}, 0, 1},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 95, 19},
	}
	for _, tc := range tests {
		if got := Percentile(tc.values, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %d, want %d", tc.values, tc.p, got, tc.want)
		}
	}
}

func TestFragMeter(t *testing.T) {
	type set struct {
		now, idle int64
		blocked   bool
	}
	tests := []struct {
		name        string
		total       int64
		sets        []set
		want        float64
		wantBlocked int64
	}{
		{name: "never blocked", total: 4, sets: []set{{0, 4, false}, {100, 0, false}}, want: 0},
		// 10 s blocked with 2 of 4 idle, then 30 s blocked with none idle:
		// 20 idle CPU-seconds over 4 x 40.
		{name: "two stretches", total: 4, sets: []set{{0, 2, true}, {10, 0, true}, {40, 4, false}, {90, 4, true}}, want: 20.0 / 160, wantBlocked: 40},
		// Several updates at one instant: only the last state counts.
		{name: "same instant", total: 2, sets: []set{{0, 0, false}, {5, 2, true}, {5, 1, true}, {15, 0, false}}, want: 10.0 / 20, wantBlocked: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewFragMeter(tc.total)
			for _, s := range tc.sets {
				m.Set(s.now, s.idle, s.blocked)
			}
			if !near(m.Value(), tc.want) || m.BlockedTime() != tc.wantBlocked {
				t.Errorf("Value %v BlockedTime %d, want %v %d", m.Value(), m.BlockedTime(), tc.want, tc.wantBlocked)
			}
		})
	}
}

func TestCompute(t *testing.T) {
	jobs := []Finished{
		{ID: 1, Submit: 10, Start: 10, End: 110, CPUs: 2},                  // wait 0, bsld 1
		{ID: 2, Submit: 20, Start: 120, End: 220, CPUs: 4, Backfill: true}, // wait 100, bsld 2
		{ID: 3, Submit: 30, Start: 60, End: 60, CPUs: 1, Killed: true},     // wait 30, run 0, bsld 3
	}
	m := Compute(jobs, 4, nil)
	if m.Jobs != 3 || m.Backfilled != 1 || m.Killed != 1 {
		t.Errorf("counts %d %d %d", m.Jobs, m.Backfilled, m.Killed)
	}
	if m.FirstSubmit != 10 || m.LastEnd != 220 || m.Makespan != 210 {
		t.Errorf("span %d..%d = %d", m.FirstSubmit, m.LastEnd, m.Makespan)
	}
	if want := (200.0 + 400) / (4 * 210); !near(m.Utilization, want) {
		t.Errorf("Utilization %v, want %v", m.Utilization, want)
	}
	if !near(m.MeanWait, 130.0/3) || m.P95Wait != 100 || !near(m.MeanBSLD, 2) {
		t.Errorf("MeanWait %v P95Wait %v MeanBSLD %v", m.MeanWait, m.P95Wait, m.MeanBSLD)
	}
	if z := Compute(nil, 4, nil); z.Jobs != 0 || z.Utilization != 0 {
		t.Errorf("empty: %+v", z)
	}
}
