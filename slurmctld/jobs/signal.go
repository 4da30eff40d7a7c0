package jobs

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

const sigKill = uint16(syscall.SIGKILL)

// target is one job a request names: a record, or a pending task of a
// pending array meta record (task != NoVal, job.IsArrayMeta() and
// job.Pending(): a cancelled meta record keeps its task ids but names
// them as one ended record, task NoVal).
type target struct {
	job  *Job
	task uint32
}

// resolve parses "123", "123_4", "123_*", "123_[1-3,5]" (or a bare id) into
// the records it names. A whole array id names every task.
func (m *Manager) resolve(sjob string, id uint32) ([]target, error) {
	task := NoVal
	all := false
	var tasks []uint32
	if sjob != "" {
		js := sjob
		if i := strings.IndexByte(sjob, '_'); i >= 0 {
			js = sjob[:i]
			ts := sjob[i+1:]
			switch {
			case ts == "*":
				all = true
			case strings.HasPrefix(ts, "["):
				l, _, ok := parseArray(strings.Trim(ts, "[]"), ^uint32(0))
				if !ok {
					return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
				}
				tasks = l
			default:
				v, err := strconv.ParseUint(ts, 10, 32)
				if err != nil {
					return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
				}
				task = uint32(v)
			}
		}
		v, err := strconv.ParseUint(js, 10, 32)
		if err != nil {
			return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		id = uint32(v)
	}
	j := m.jobs[id]
	if tasks == nil && task == NoVal && !all {
		if j == nil {
			return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		if j.ArrayJobID != j.ID {
			return []target{{j, NoVal}}, nil
		}
		all = true // the array job id names the whole array
	}
	arrayID := id
	if j != nil && j.ArrayJobID != 0 {
		arrayID = j.ArrayJobID
	}
	if task != NoVal {
		tasks = []uint32{task}
	}
	var out []target
	for _, r := range m.Jobs() {
		if r.ArrayJobID != arrayID {
			continue
		}
		switch {
		case r.IsArrayMeta() && r.Pending():
			for _, t := range r.Array.Pending {
				if all || containsTask(tasks, t) {
					out = append(out, target{r, t})
				}
			}
		case r.IsArrayMeta() && (all || anyTask(r.Array.Pending, tasks)):
			// A meta record cancelled with its tasks still answers for
			// them, as find_job_array_rec finds it by its task bitmap.
			out = append(out, target{r, NoVal})
		}
		if r.ArrayTaskID != NoVal && (all || containsTask(tasks, r.ArrayTaskID)) {
			out = append(out, target{r, NoVal})
		}
	}
	if len(out) == 0 {
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return out, nil
}

func (m *Manager) mayAct(uid uint32, j *Job) bool { return uid == j.UserID || m.privileged(uid) }

// Kill handles REQUEST_KILL_JOB and REQUEST_CANCEL_JOB_STEP: owner, root or
// SlurmUser only. A pending job (or array task) with SIGKILL is cancelled;
// a running one is signalled, or with SIGKILL terminated on its nodes.
// A whole job names its record by an id string (REQUEST_KILL_JOB, "123",
// "123_*", "123_[1-3]": job_str_signal) or by its id alone
// (REQUEST_CANCEL_JOB_STEP for step NO_VAL: job_signal_id, that one
// record only).
func (m *Manager) Kill(req *msg.JobStepKillRequest, c Caller, cl *Cluster, now int64) (Outcome, error) {
	if req.StepID.StepID == NoVal {
		sjob := strOf(req.SJobID)
		if out, ok, err := m.hetKill(sjob, req, c, cl, now); ok {
			return out, err
		}
		if id, tasks, ok, err := arrayTaskSpec(sjob); ok {
			if err != nil {
				return Outcome{}, err
			}
			return m.killArrayTasks(id, tasks, req, c, cl, now)
		}
		if sjob == "" {
			return m.killRecord(req.StepID.JobID, req, c, cl, now)
		}
		id, err := wholeJobSpec(sjob)
		if err != nil {
			return Outcome{}, err
		}
		return m.killWhole(id, req, c, cl, now)
	}
	return m.killStep(req, c)
}

// killStep is job_step_signal, for any step id but NO_VAL, the batch
// script's included (SLURM_BATCH_SCRIPT names the batch step here, never
// the whole job): the job's owner, root or SlurmUser only (no operator),
// refused as "Invalid user id"; a job that is not running answers
// ESLURM_TRANSITION_STATE_NO_UPDATE (a pending job is left alone), an
// ended one ESLURM_ALREADY_DONE.
//
// REQUEST_CANCEL_JOB_STEP names the one record with the job id
// (find_job_record: an array's meta record is not its tasks); an id
// string, which scancel never sends with a step, still names what
// resolve finds.
func (m *Manager) killStep(req *msg.JobStepKillRequest, c Caller) (Outcome, error) {
	var ts []target
	if sjob := strOf(req.SJobID); sjob != "" {
		var err error
		if ts, err = m.resolve(sjob, req.StepID.JobID); err != nil {
			return Outcome{}, err
		}
	} else if j := m.jobs[req.StepID.JobID]; j != nil {
		ts = []target{{j, NoVal}}
	} else {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	var actions []Action
	var firstErr error
	done := 0
	for _, t := range ts {
		if c.UID != t.job.UserID && !m.privileged(c.UID) {
			firstErr = keepFirst(firstErr, serr(slurmerr.ESLURM_USER_ID_MISSING))
			continue
		}
		var a []Action
		var err error
		if req.StepID.StepID == msg.StepIDBatch {
			a, err = m.signalBatchStep(t.job, req.Signal)
		} else {
			a, err = m.signalStep(t.job, req.StepID, req.Signal, req.Flags)
		}
		if err != nil {
			firstErr = keepFirst(firstErr, err)
			continue
		}
		actions = append(actions, a...)
		done++
	}
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	if done == 0 && firstErr != nil {
		return out, firstErr
	}
	return out, nil
}

// signalBatchStep signals the batch step alone (_step_signal on the
// batch step record): REQUEST_SIGNAL_TASKS for step SLURM_BATCH_SCRIPT
// to the batch host. The job ends only when the script does.
func (m *Manager) signalBatchStep(j *Job, sig uint16) ([]Action, error) {
	switch {
	case j.Finished():
		return nil, serr(slurmerr.ESLURM_ALREADY_DONE)
	case j.Base() != msg.JobRunning:
		return nil, serr(slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE)
	case !j.Batch || j.BatchHost == "":
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	id := msg.StepID{JobID: j.ID, StepID: msg.StepIDBatch, StepHetComp: NoVal}
	return []Action{NodeMessage{JobID: j.ID, Nodes: []string{j.BatchHost}, MsgType: msgtype.REQUEST_SIGNAL_TASKS,
		Msg: &msg.SignalTasks{StepID: id, Signal: sig}}}, nil
}

func keepFirst(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// signalJob is job_signal for one record. Only SIGKILL acts on a job that
// is not running: a pending job is cancelled, a suspended one ended;
// any other signal to them answers ESLURM_TRANSITION_STATE_NO_UPDATE
// ("Job can not be altered now, try again later"), never
// ESLURM_JOB_PENDING.
func (m *Manager) signalJob(t target, sig, flags uint16, cl *Cluster, now int64, actions *[]Action) error {
	j := t.job
	if t.task != NoVal && j.IsArrayMeta() && j.Pending() {
		if sig != sigKill {
			return serr(slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE)
		}
		m.dropPendingTasks(j, []uint32{t.task}, now)
		return nil
	}
	switch {
	case j.Finished():
		return serr(slurmerr.ESLURM_ALREADY_DONE)
	case j.Pending():
		if sig != sigKill {
			return serr(slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE)
		}
		m.cancelPending(j, now, "", actions)
		return nil
	case j.Base() == msg.JobSuspended && sig != sigKill:
		return serr(slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE)
	}
	// A suspended job ends with SIGKILL whatever the flags; a running one
	// unless only its steps or its batch script are asked for.
	suspended := j.Base() == msg.JobSuspended
	if !suspended && flags&msg.KillJobBatch != 0 && !j.Batch {
		return serr(slurmerr.ESLURM_JOB_SCRIPT_MISSING)
	}
	if suspended || sig == sigKill && flags&(msg.KillStepsOnly|msg.KillJobBatch) == 0 {
		m.endJob(j, msg.JobCancelled, 0, now)
		*actions = append(*actions, m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
		return nil
	}
	nodes := j.Nodes
	if flags&msg.KillJobBatch != 0 && j.BatchHost != "" {
		nodes = []string{j.BatchHost}
	}
	// Without KILL_FULL_JOB (scancel -f) slurmd signals the job's steps
	// only, as job_signal passes the caller's flags through unchanged.
	*actions = append(*actions, NodeMessage{JobID: j.ID, Nodes: nodes, MsgType: msgtype.REQUEST_SIGNAL_TASKS,
		Msg: &msg.SignalTasks{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
			Flags: flags, Signal: sig}})
	return nil
}

// cancelPending cancels a pending job with no nodes to clean. An array's
// meta record keeps its pending task ids: the cancelled record stands for
// those tasks (ArrayTaskId=1-4, JobState=CANCELLED), as job_signal leaves
// the task bitmap alone.
func (m *Manager) cancelPending(j *Job, now int64, desc string, actions *[]Action) {
	j.setBase(msg.JobCancelled)
	j.StateDesc = desc
	j.EndTime = now
	j.StartTime = now
	// The priority stays: real slurmctld shows the cancelled job's last one.
	m.touch(j, now)
	m.ended(j, false, false, now)
	if !j.Batch && j.OtherPort != 0 && actions != nil {
		*actions = append(*actions, srunJobComplete(j))
	}
}

// endJob moves a running job to a final state; its nodes are completing
// until each sends MESSAGE_EPILOG_COMPLETE. A suspended job ends at the
// time it was suspended (as job_signal, _job_complete, _job_fail and
// kill_running_job_by_node_name set it), so its run time leaves out the
// time it spent stopped.
func (m *Manager) endJob(j *Job, base uint32, reason uint16, now int64) {
	suspended := j.Base() == msg.JobSuspended
	j.setBase(base)
	j.State |= msg.JobCompleting
	if reason != 0 {
		j.Reason = reason
	}
	j.EndTime = now
	if suspended && j.SuspendTime != 0 {
		j.EndTime = j.SuspendTime
	}
	j.Completing = append([]string(nil), j.Nodes...)
	m.touch(j, now)
	m.ended(j, false, len(j.Nodes) > 0, now)
}

// terminate returns the kill messages for a job that just ended: the
// TERMINATE_JOB (or KILL_TIMELIMIT) to its nodes and SRUN_JOB_COMPLETE to
// an interactive job's srun/salloc.
func (m *Manager) terminate(j *Job, cl *Cluster, t msgtype.Type, now int64) []Action {
	var out []Action
	if len(j.Nodes) > 0 {
		out = append(out, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...), MsgType: t,
			Msg: m.killJob(j, cl, now)})
		if skipUnreachable(j, cl) && len(j.Completing) == 0 && !m.epilogRunning(j) {
			j.State &^= msg.JobCompleting
			j.deleteSteps()
		}
	} else {
		j.State &^= msg.JobCompleting
		j.deleteSteps()
	}
	if !j.Batch && j.OtherPort != 0 {
		out = append(out, srunJobComplete(j))
	}
	return out
}

// srunJobComplete tells an interactive job's srun or salloc that the job
// is over (srun_job_complete / srun_allocate_abort).
func srunJobComplete(j *Job) SrunMessage {
	return SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.OtherPort, UID: j.UserID,
		ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_JOB_COMPLETE,
		Msg: &msg.SrunJobCompleteMsg{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal}}}
}

// Requeue handles REQUEST_JOB_REQUEUE (scontrol requeue / requeuehold, and
// slurmd after a launch failure): batch jobs only; a running job is
// killed first and pends again once its nodes are clean.
func (m *Manager) Requeue(req *msg.JobRequeueRequest, c Caller, cl *Cluster, now int64) (Outcome, error) {
	ts, err := m.resolve(strOf(req.JobIDStr), req.JobID)
	if err == nil {
		ts, err = m.hetRequeueTargets(ts)
	}
	if err != nil {
		return Outcome{}, err
	}
	// A het job's components are requeued one by one, each refusal kept
	// (the last one answered) as _job_requeue; other targets stop at the
	// first refusal. Either way what was already requeued is finished:
	// journaled, and its nodes told to kill it.
	het := len(ts) > 1 && ts[0].job.HetJobID != 0
	var actions []Action
	var refused error
	for _, t := range ts {
		if err := m.requeueOne(t.job, req.Flags, c, cl, now, &actions); err != nil {
			refused = err
			if !het {
				break
			}
		}
	}
	out, err := m.finish(actions)
	if err == nil {
		err = refused
	}
	return out, err
}

// requeueOne is _job_requeue_op for one record.
func (m *Manager) requeueOne(j *Job, flags uint32, c Caller, cl *Cluster, now int64, actions *[]Action) error {
	if !m.mayAct(c.UID, j) {
		return serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	// _job_requeue_op refuses a --no-requeue job before anything else,
	// slurmd's launch-failure requeue included: that caller then ends
	// the job instead (launchFailed).
	if !j.Requeue {
		return serr(slurmerr.ESLURM_DISABLED)
	}
	if !j.Batch {
		return serr(slurmerr.ESLURM_BATCH_ONLY)
	}
	if j.Pending() {
		return serr(slurmerr.ESLURM_JOB_PENDING)
	}
	if j.Running() {
		j.Completing = append([]string(nil), j.Nodes...)
		j.State = msg.JobRequeue | msg.JobCompleting
		*actions = append(*actions, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
			MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)})
	}
	m.requeue(j, flags, now)
	if skipUnreachable(j, cl) && len(j.Completing) == 0 && !m.epilogRunning(j) {
		m.completingDone(j, now)
	}
	return nil
}

// credLifetime is how long a requeued job waits so the credentials of its
// last run expire first (cred_expire + 1).
const credLifetime = 121

func (m *Manager) requeue(j *Job, flags uint32, now int64) {
	m.requeued(j, now)
	completing := j.State & msg.JobCompleting
	j.State = msg.JobPending | completing
	j.RestartCnt++
	j.WarnFlags &^= warnSent // --signal warns again in the next run
	j.PreemptTime = 0        // batch_requeue_fini: a new run, not preempted
	if len(j.Nodes) > 0 {
		j.RanNodes = uint32(len(j.Nodes))
	}
	// The exit codes stay until the next start (select_nodes clears
	// exit_code; derived_ec is never cleared): squeue and scontrol show
	// the last run's while the job pends. The start and end times stay
	// until requeueFini.
	// The steps stay until the nodes are clean (requeueFini): a killed
	// srun step's completion still counts in the derived exit code
	// (step_partial_comp takes a PENDING|COMPLETING job).
	j.EligibleTime = 0
	// _job_requeue_op leaves the reason and the priority alone, except
	// that a special exit flags the state and a held requeue is a user
	// hold (priority 0) explained by the state description; scontrol's
	// State=SpecialExit asks for both.
	if flags&msg.JobSpecialExit != 0 {
		j.State |= msg.JobSpecialExit
		j.Hold, j.Priority, j.Reason = HoldUser, 0, ReasonHeldUser
		j.StateDesc = "job requeued in special exit state"
	}
	if flags&(msg.JobRequeueHold|msg.JobLaunchFailed) != 0 {
		j.Hold, j.Priority, j.Reason = HoldUser, 0, ReasonHeldUser
		j.StateDesc = "job requeued in held state"
		if flags&msg.JobLaunchFailed != 0 {
			j.StateDesc = "launch failed requeued held"
		}
	}
	if completing == 0 {
		j.Nodes, j.NodeIdx, j.NodeCPUs, j.NodeMem, j.NodeCores, j.BatchHost = nil, nil, nil, nil, nil, ""
		j.NodeGres = nil
		j.TotalCPUs = 0
		requeueFini(j, now)
	}
	m.touch(j, now)
}

// requeueFini is batch_requeue_fini's timing, done once the requeued
// job's nodes are clean (at once when it had none to clean): the job
// counts as submitted anew (a second later when it was submitted this
// very second) and has no start or end time or steps any more, and a begin time not in the future is pushed past the
// credential lifetime, so that no launch carries a credential slurmd
// revoked. A StartTime=now set while the job was still completing is
// pushed too, as in real slurmctld.
func requeueFini(j *Job, now int64) {
	j.StartTime, j.EndTime = 0, 0
	// cleanup_completing drops the steps that never reported their end,
	// and the next run numbers its steps from 0 again.
	j.deleteSteps()
	j.NextStepID = 0
	if j.BeginTime <= now {
		j.BeginTime = now + credLifetime
	}
	if j.SubmitTime == now {
		j.SubmitTime = now + 1
	} else {
		j.SubmitTime = now
	}
}
