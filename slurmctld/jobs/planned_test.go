package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestNotePlanned: only a backfill pass replaces the planned nodes; one
// with nothing to schedule empties them.
func TestNotePlanned(t *testing.T) {
	m := &Manager{}
	steps := []struct {
		backfill bool
		plan     *sched.Plan
		want     []int
	}{
		{true, &sched.Plan{Planned: []int{2, 3}}, []int{2, 3}},
		{false, &sched.Plan{}, []int{2, 3}},
		{true, &sched.Plan{Planned: []int{3}}, []int{3}},
		{true, nil, nil},
	}
	for i, s := range steps {
		m.notePlanned(s.backfill, s.plan)
		if got := m.PlannedNodes(); !slices.Equal(got, s.want) {
			t.Errorf("step %d: planned %v, want %v", i, got, s.want)
		}
	}
}
