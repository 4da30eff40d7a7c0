package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestUpdateStep: scontrol update StepId=J[.S] TimeLimit= as 22.05's
// update_step answers and applies it.
func TestUpdateStep(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	owner, other := alice, bob
	const t0 = 1_700_000_000
	id := mustSubmit(t, m, cl, batchDesc(owner), owner, t0)
	mustSchedule(t, m, cl, t0)
	for range 2 {
		if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: owner.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, TimeLimit: NoVal}, owner, cl, t0+1); err != nil {
			t.Fatal(err)
		}
	}
	pending := mustSubmit(t, m, cl, func() *msg.JobDesc { d := batchDesc(owner); d.Priority = 0; return d }(), owner, t0)
	limits := func() [2]uint32 { s := m.Job(id).Steps; return [2]uint32{s[0].TimeLimit, s[1].TimeLimit} }
	for _, tc := range []struct {
		name   string
		c      Caller
		req    msg.UpdateJobStepRequest
		code   int
		limits [2]uint32
	}{
		{"one step", owner, msg.UpdateJobStepRequest{JobID: id, StepID: 1, TimeLimit: 10}, 0, [2]uint32{NoVal, 10}},
		{"zero changes nothing", owner, msg.UpdateJobStepRequest{JobID: id, StepID: 1, TimeLimit: 0}, 0, [2]uint32{NoVal, 10}},
		{"every step", root, msg.UpdateJobStepRequest{JobID: id, StepID: NoVal, TimeLimit: 60}, 0, [2]uint32{60, 60}},
		{"another user", other, msg.UpdateJobStepRequest{JobID: id, StepID: 0, TimeLimit: 5}, slurmerr.ESLURM_USER_ID_MISSING, [2]uint32{60, 60}},
		{"unknown step", owner, msg.UpdateJobStepRequest{JobID: id, StepID: 7, TimeLimit: 5}, slurmerr.ESLURM_INVALID_JOB_ID, [2]uint32{60, 60}},
		{"unknown job", owner, msg.UpdateJobStepRequest{JobID: 999, StepID: 0, TimeLimit: 5}, slurmerr.ESLURM_INVALID_JOB_ID, [2]uint32{60, 60}},
		{"pending job, one step", owner, msg.UpdateJobStepRequest{JobID: pending, StepID: 0, TimeLimit: 5}, slurmerr.ESLURM_INVALID_JOB_ID, [2]uint32{60, 60}},
		{"pending job, every step", owner, msg.UpdateJobStepRequest{JobID: pending, StepID: NoVal, TimeLimit: 5}, 0, [2]uint32{60, 60}},
	} {
		_, err := m.UpdateStep(&tc.req, tc.c, t0+2)
		if code(err) != tc.code || limits() != tc.limits {
			t.Errorf("%s: code %d limits %v, want %d %v", tc.name, code(err), limits(), tc.code, tc.limits)
		}
	}
}
