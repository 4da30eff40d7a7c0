package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// UpdateStep handles REQUEST_UPDATE_JOB_STEP (scontrol update StepId=
// TimeLimit=), as 22.05's update_step: the job's owner or an operator
// sets the time limit (minutes) of one step, or of every running step
// when the step id is NO_VAL. A time limit of 0 for one step changes
// nothing. The step limit is not checked against the job's (the job's
// limit ends its steps anyway).
func (m *Manager) UpdateStep(req *msg.UpdateJobStepRequest, c Caller, now int64) (Outcome, error) {
	j := m.jobs[req.JobID]
	if j == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(c.UID, j) {
		return Outcome{}, serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	changed := false
	if req.StepID == NoVal {
		for _, st := range j.Steps {
			st.TimeLimit = req.TimeLimit
			changed = true
		}
	} else {
		_, st := j.step(req.StepID)
		if st == nil {
			return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		if req.TimeLimit != 0 {
			st.TimeLimit = req.TimeLimit
			changed = true
		}
	}
	if changed {
		m.touch(j, now)
	}
	return m.finish(nil)
}
