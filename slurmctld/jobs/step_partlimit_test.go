package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestStepTimeAbovePartition: under EnforcePartLimits a step asking for
// more time than its job's partition allows is refused
// (ESLURM_INVALID_TIME_LIMIT) after it got its id, so the next step's id
// skips one, as step_create does; without it the step runs with its limit.
func TestStepTimeAbovePartition(t *testing.T) {
	for _, tc := range []struct {
		enforce EnforcePartLimits
		limit   uint32
		code    int
		nextID  uint32
	}{
		{EnforceAll, 20, slurmerr.ESLURM_INVALID_TIME_LIMIT, 1},
		{EnforceAny, 20, slurmerr.ESLURM_INVALID_TIME_LIMIT, 1},
		{EnforceNo, 20, 0, 1},
		{EnforceAll, 10, 0, 1},
		{EnforceAll, Infinite, 0, 1},
		{EnforceAll, NoVal, 0, 1},
	} {
		cl := testCluster()
		m := newTestManager(nil)
		m.cfg.EnforcePartLimits = tc.enforce
		d := batchDesc(alice)
		d.Partition = msg.Str("short")
		d.TimeLimit = 5
		id := mustSubmit(t, m, cl, d, alice, t0)
		mustSchedule(t, m, cl, t0)
		_, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, TimeLimit: tc.limit}, alice, cl, t0+1)
		if code(err) != tc.code {
			t.Errorf("%v limit %d: code %d, want %d", tc.enforce, tc.limit, code(err), tc.code)
		}
		if j := m.Job(id); j.NextStepID != tc.nextID {
			t.Errorf("%v limit %d: next step id %d, want %d", tc.enforce, tc.limit, j.NextStepID, tc.nextID)
		}
	}
}
