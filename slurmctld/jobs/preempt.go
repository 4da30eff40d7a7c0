package jobs

import (
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Preemption (sched/preempt.go plans it): the jobs a pass names for a
// pending job are cancelled (PREEMPTED) or requeued, as their partition's
// PreemptMode says, with REQUEST_KILL_PREEMPTED to their nodes; the
// pending job starts in a later pass, once the nodes are clean.

// preemptable reports a job the scheduler may preempt: running or
// suspended, not on its way out (job_overlap_and_running).
func (j *Job) preemptable() bool {
	b := j.Base()
	return b == msg.JobRunning || b == msg.JobSuspended
}

// preempt carries out a plan's preemptions. A pending job that had jobs
// preempted for it less than KillWait + MessageTimeout ago has none
// preempted again (select_nodes' kill_pending: the first ones may still
// be on their way out).
func (m *Manager) preempt(cl *Cluster, plan *sched.Plan, ids map[uint32]entry, now int64) []Action {
	var actions []Action
	for _, p := range plan.Preemptions {
		e, ok := ids[p.JobID]
		if !ok || !e.job.Pending() {
			continue
		}
		j := e.job
		if m.preemptWait(j, now) {
			continue
		}
		n := 0
		for _, id := range p.Preemptees {
			v := m.jobs[id]
			if v == nil || !v.preemptable() {
				continue
			}
			actions = append(actions, m.preemptJob(v, cl, now)...)
			n++
		}
		if n > 0 {
			j.PreemptStart = now
			m.touch(j, now)
		}
	}
	return actions
}

// preemptWait reports a pending job that had jobs preempted for it less
// than KillWait + MessageTimeout ago.
func (m *Manager) preemptWait(j *Job, now int64) bool {
	return j.PreemptStart != 0 && j.PreemptStart > now-m.cfg.KillWait-m.cfg.MsgTimeout
}

// preemptMode is the mode a job is preempted with: its partition's.
func preemptMode(j *Job, cl *Cluster) sched.PreemptMode {
	if p := cl.partition(j.Partition); p != nil {
		return p.PreemptMode
	}
	return cl.Config.Preempt.Mode
}

// preemptJob is slurm_job_preempt for one job. The first time, the job's
// end moves to now plus its partition's GraceTime; with a grace time it
// is sent SIGCONT and SIGTERM and left to run until then (Tick comes
// back to it). Then REQUEUE requeues a batch job that may be requeued
// (as scontrol requeue, the kill message excepted); CANCEL, and REQUEUE
// of any other job, ends it PREEMPTED.
func (m *Manager) preemptJob(j *Job, cl *Cluster, now int64) []Action {
	if j.PreemptTime == 0 {
		j.PreemptTime = now
		var grace int64
		if p := cl.partition(j.Partition); p != nil {
			grace = int64(p.GraceTime)
		}
		if j.EndTime == 0 || now+grace < j.EndTime {
			j.EndTime = now + grace
		}
		m.touch(j, now)
		if grace > 0 {
			return []Action{m.signalAll(j, uint16(syscall.SIGCONT)), m.signalAll(j, uint16(syscall.SIGTERM))}
		}
	} else if now < j.EndTime {
		return nil
	}
	return m.preemptNow(j, cl, now)
}

// preemptNow requeues or ends a job preempted now (no grace time left).
func (m *Manager) preemptNow(j *Job, cl *Cluster, now int64) []Action {
	j.PreemptTime = now
	if preemptMode(j, cl) == sched.PreemptRequeue && j.Batch && j.Requeue {
		j.Completing = append([]string(nil), j.Nodes...)
		j.State = msg.JobRequeue | msg.JobCompleting
		a := NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
			MsgType: msgtype.REQUEST_KILL_PREEMPTED, Msg: m.killJob(j, cl, now)}
		m.requeue(j, 0, now)
		// batch_requeue_fini clears it for the next run.
		j.PreemptTime = 0
		return []Action{a}
	}
	m.endJob(j, msg.JobPreempted, 0, now)
	return m.terminate(j, cl, msgtype.REQUEST_KILL_PREEMPTED, now)
}

// signalAll is job_signal of a running job with a signal other than
// SIGKILL: REQUEST_SIGNAL_TASKS for all its steps on all its nodes.
func (m *Manager) signalAll(j *Job, sig uint16) Action {
	return NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...), MsgType: msgtype.REQUEST_SIGNAL_TASKS,
		Msg: &msg.SignalTasks{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal}, Signal: sig}}
}

// preemptableTime is the job's PreemptEligibleTime for job info: for a job
// that has started and may be preempted, its start time plus
// PreemptExemptTime; 0 otherwise.
func (m *Manager) preemptableTime(j *Job, cl *Cluster) int64 {
	if cl == nil || j.Base() == msg.JobPending {
		return 0
	}
	if preemptMode(j, cl) == sched.PreemptOff {
		return 0
	}
	return j.StartTime + cl.Config.Preempt.ExemptTime
}
