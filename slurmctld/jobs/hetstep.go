package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// newStepID gives a new step its id as step_create does: the id srun
// asks for (srun --het-group asks every component after the first for
// the id the first one got; a live step with that id answers
// ESLURM_DUPLICATE_STEP_ID), else for a het job's component other than
// the leader the leader's next id (so one srun's steps share an id over
// the components), else the job's own next id.
func (m *Manager) newStepID(j *Job, req *msg.StepCreateRequest, now int64) (uint32, error) {
	if id := req.StepID.StepID; id != NoVal {
		if _, st := j.step(id); st != nil {
			return 0, serr(slurmerr.ESLURM_DUPLICATE_STEP_ID)
		}
		if req.StepID.StepHetComp == NoVal {
			j.NextStepID = max(j.NextStepID, id) + 1
		}
		return id, nil
	}
	if j.HetJobID != 0 && j.HetJobID != j.ID {
		if l := m.jobs[j.HetJobID]; l != nil {
			id := l.NextStepID
			l.NextStepID++
			m.touch(l, now)
			j.NextStepID = max(j.NextStepID, id)
			return id, nil
		}
	}
	id := j.NextStepID
	j.NextStepID++
	return id, nil
}
