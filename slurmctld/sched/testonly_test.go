package sched

import "testing"

// TestFitsEmpty: the test-only pass on a partition of two 4-CPU 1000 MB
// nodes (expectations from real 22.05,
// testsuite/interop/slurmctld_unholdable_test.go).
func TestFitsEmpty(t *testing.T) {
	for _, tc := range []struct {
		name       string
		consumable bool
		job        Job
		want       bool
	}{
		{"exclusive memory per cpu over", true, mkJob(1, memCPU(300), exclusive()), false},
		{"exclusive memory per cpu fits", true, mkJob(1, memCPU(250), exclusive()), true},
		{"cpus per task memory over", true, mkJob(1, memCPU(300), cpt(4)), false},
		{"cpus per task memory not consumable", false, mkJob(1, memCPU(300), cpt(4)), true},
		{"two tasks one node over", true, mkJob(1, memCPU(600), tasks(2), nodesN(1, 1)), false},
		{"two tasks spread", true, mkJob(1, memCPU(600), tasks(2)), true},
		{"memory per cpu over a node, not consumable", false, mkJob(1, memCPU(1200)), false},
		{"cpus over a node", true, mkJob(1, cpt(8)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(2, 4, 1000))
			s.Config.MemoryConsumable = tc.consumable
			if got := FitsEmpty(s, &tc.job, "batch"); got != tc.want {
				t.Errorf("FitsEmpty = %v, want %v", got, tc.want)
			}
		})
	}
	// An unknown partition is the caller's business.
	j := mkJob(1, cpt(8))
	if !FitsEmpty(snap(mkNodes(2, 4, 1000)), &j, "nosuch") {
		t.Error("FitsEmpty on an unknown partition = false, want true")
	}
}
