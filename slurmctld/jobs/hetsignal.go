package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// hetKill is job_str_signal's part for het jobs: "123+1" names one
// component, "123+0" and the leader's id the whole het job; a pending
// component other than the leader cannot be signalled alone
// (ESLURM_NOT_WHOLE_HET_JOB). ok is false when sjob names no het job
// (the caller goes on as for any job).
func (m *Manager) hetKill(sjob string, req *msg.JobStepKillRequest, c Caller, cl *Cluster, now int64) (out Outcome, ok bool, err error) {
	var j *Job
	plus := false
	if i := strings.IndexByte(sjob, '+'); i >= 0 {
		id, err1 := strconv.ParseUint(sjob[:i], 10, 32)
		off, err2 := strconv.ParseUint(sjob[i+1:], 10, 32)
		if err1 != nil || err2 != nil || id == 0 {
			return Outcome{}, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		j = m.hetRecord(uint32(id), uint32(off))
		if j == nil {
			return Outcome{}, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		plus = true
	} else {
		id, err1 := strconv.ParseUint(sjob, 10, 32)
		if err1 != nil {
			return Outcome{}, false, nil
		}
		if j = m.jobs[uint32(id)]; j == nil || j.HetJobID == 0 {
			return Outcome{}, false, nil
		}
	}
	if !m.mayAct(c.UID, j) {
		return Outcome{}, true, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	if plus && j.HetJobID == 0 {
		return Outcome{}, true, serr(slurmerr.ESLURM_NOT_HET_JOB)
	}
	if j.HetJobOffset != 0 && m.cfg.WholeHetJob {
		// whole_hetjob: a component stands for the whole het job (itself
		// alone when its leader is gone).
		if l := m.hetLeader(j); l != nil {
			j = l
		}
	}
	var actions []Action
	var sigErr error
	switch {
	case j.HetJobOffset == 0 && (plus || len(j.HetComps) > 0):
		// het_job_signal: every component; the answer is the last
		// error.
		if len(j.HetComps) == 0 {
			return Outcome{}, true, serr(slurmerr.ESLURM_NOT_HET_JOB_LEADER)
		}
		for _, comp := range m.hetComponents(j) {
			if e := m.signalJob(target{comp, NoVal}, req.Signal, req.Flags, cl, now, &actions); e != nil {
				sigErr = e
			}
		}
	case j.Pending():
		return Outcome{}, true, serr(slurmerr.ESLURM_NOT_WHOLE_HET_JOB)
	default:
		sigErr = m.signalJob(target{j, NoVal}, req.Signal, req.Flags, cl, now, &actions)
	}
	out, err = m.finish(actions)
	if err != nil {
		return out, true, err
	}
	return out, true, sigErr
}

// hetRecord is find_het_job_record: the record with id if its offset is
// off, else the component at off of the het job id leads.
func (m *Manager) hetRecord(id, off uint32) *Job {
	l := m.jobs[id]
	if l == nil {
		return nil
	}
	if l.HetJobOffset == off {
		return l
	}
	for _, c := range m.hetComponents(l) {
		if c.HetJobOffset == off {
			return c
		}
	}
	return nil
}

// hetTargets is update_job_str's part for het jobs: a leader's id names
// every component, "123+1" the component at that offset. ok is false
// when sjob names no het job.
func (m *Manager) hetTargets(sjob string) (ts []target, ok bool, err error) {
	if i := strings.IndexByte(sjob, '+'); i >= 0 {
		id, err1 := strconv.ParseUint(sjob[:i], 10, 32)
		off, err2 := strconv.ParseUint(sjob[i+1:], 10, 32)
		if err1 != nil || err2 != nil || id == 0 {
			return nil, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		j := m.hetRecord(uint32(id), uint32(off))
		if j == nil {
			return nil, true, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		return []target{{j, NoVal}}, true, nil
	}
	id, err1 := strconv.ParseUint(sjob, 10, 32)
	if err1 != nil {
		return nil, false, nil
	}
	comps := m.hetComponents(m.jobs[uint32(id)])
	if comps == nil {
		return nil, false, nil
	}
	for _, c := range comps {
		ts = append(ts, target{c, NoVal})
	}
	return ts, true, nil
}

// hetRequeueTargets is _job_requeue's part for het jobs: a leader stands
// for every component; another component cannot be requeued alone
// (ESLURM_NOT_HET_JOB_LEADER).
func (m *Manager) hetRequeueTargets(ts []target) ([]target, error) {
	var out []target
	for _, t := range ts {
		if t.job.HetJobID == 0 {
			out = append(out, t)
			continue
		}
		comps := m.hetComponents(t.job)
		if comps == nil {
			return nil, serr(slurmerr.ESLURM_NOT_HET_JOB_LEADER)
		}
		for _, c := range comps {
			out = append(out, target{c, NoVal})
		}
	}
	return out, nil
}
