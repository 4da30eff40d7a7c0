package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Het steps in a plain allocation: srun with ":" inside salloc or a batch
// job asks for one step per component, each with step_het_comp set to
// its offset; the first asks for any step id, the others for the id the
// first got. Every component is a step record of its own (N.S+K), with
// its own nodes, layout and credential; scancel N.S reaches them all.

// hetComp is the step's step_het_comp: NO_VAL unless it is a component
// of a het step.
func (s *Step) hetComp() uint32 {
	if s.HetStep {
		return s.HetComp
	}
	return NoVal
}

// sid is the step's id on the wire.
func (s *Step) sid(jobID uint32) msg.StepID {
	return msg.StepID{JobID: jobID, StepID: s.ID, StepHetComp: s.hetComp()}
}

// matches is verify_step_id for a step of the key's job: a NO_VAL step
// id matches any step, a NO_VAL component every component of the step.
func (s *Step) matches(key msg.StepID) bool {
	if key.StepID == NoVal {
		return true
	}
	return key.StepID == s.ID && (key.StepHetComp == NoVal || key.StepHetComp == s.hetComp())
}

// stepOf is find_step_record: the first step the key matches.
func (j *Job) stepOf(key msg.StepID) (int, *Step) {
	for i, s := range j.Steps {
		if s.matches(key) {
			return i, s
		}
	}
	return -1, nil
}

// removeStep takes st out of the job's steps.
func (j *Job) removeStep(st *Step) {
	for i, s := range j.Steps {
		if s == st {
			j.Steps = append(j.Steps[:i], j.Steps[i+1:]...)
			return
		}
	}
}

// duplicateStep is step_create's first check of a step id srun asks for
// (srun --het-group, and a het step's components after the first, ask
// for the id the first one got): a live step with that id is a duplicate
// unless it is another component of the same het step.
func duplicateStep(j *Job, req *msg.StepCreateRequest) error {
	id, comp := req.StepID.StepID, req.StepID.StepHetComp
	if id == NoVal {
		return nil
	}
	// The batch step has no record in j.Steps; real's is a step (no het
	// component) from the launch on.
	if id == msg.StepIDBatch && j.Batch && j.BatchHost != "" {
		return serr(slurmerr.ESLURM_DUPLICATE_STEP_ID)
	}
	for _, st := range j.Steps {
		if st.ID == id && (st.hetComp() == comp || st.hetComp() == NoVal) {
			return serr(slurmerr.ESLURM_DUPLICATE_STEP_ID)
		}
	}
	return nil
}

// newStepID gives a new step its id as step_create does: the id srun
// asks for (checked by duplicateStep), else for a het job's component
// other than the leader the leader's next id (so one srun's steps share
// an id over the components), else the job's own next id. Only a step
// that is no het step component moves the job's next id past the id it
// asked for.
func (m *Manager) newStepID(j *Job, req *msg.StepCreateRequest, now int64) uint32 {
	if id := req.StepID.StepID; id != NoVal {
		if req.StepID.StepHetComp == NoVal {
			j.NextStepID = max(j.NextStepID, id) + 1
		}
		return id
	}
	if j.HetJobID != 0 && j.HetJobID != j.ID {
		if l := m.jobs[j.HetJobID]; l != nil {
			id := l.NextStepID
			l.NextStepID++
			m.touch(l, now)
			j.NextStepID = max(j.NextStepID, id)
			return id
		}
	}
	id := j.NextStepID
	j.NextStepID++
	return id
}
