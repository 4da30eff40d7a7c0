package jobs

import (
	"log/slog"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// sigOOM is SIG_OOM, what slurmstepd puts in the low byte of the status of
// a job the OOM killer hit.
const sigOOM = 253

// benignSlurmRC are slurmd-side codes of REQUEST_COMPLETE_BATCH_SCRIPT that
// do not drain the node.
var benignSlurmRC = map[uint32]bool{0: true, 4027: true, 2021: true, 4008: true, 1002: true, 2010: true,
	4005: true, 4006: true, 4003: true}

// finalState is _job_complete's choice from a raw wait status.
func finalState(rc uint32, timedOut bool) (base uint32, reason uint16) {
	ws := syscall.WaitStatus(rc)
	switch {
	case rc&0xff == sigOOM:
		return msg.JobOOM, ReasonOOM
	case ws.Exited() && ws.ExitStatus() != 0:
		return msg.JobFailed, ReasonExitCode
	case ws.Signaled():
		return msg.JobFailed, ReasonLaunchFailed
	case timedOut:
		return msg.JobTimeout, ReasonTimeLimit
	}
	return msg.JobComplete, ReasonNone
}

// CompleteBatch handles REQUEST_COMPLETE_BATCH_SCRIPT (from slurmstepd, so
// root or SlurmUser only). JobRC is the raw wait status. A message from a
// node that is not the job's batch host is stale and ignored.
func (m *Manager) CompleteBatch(req *msg.CompleteBatchScript, c Caller, cl *Cluster, now int64) (Outcome, error) {
	if !m.privileged(c.UID) {
		return Outcome{}, serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	j := m.jobs[req.JobID]
	if j == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if req.NodeName.Valid && j.BatchHost != "" && req.NodeName.Value != j.BatchHost {
		return Outcome{}, nil
	}
	var actions []Action
	if !benignSlurmRC[req.SlurmRC] && j.BatchHost != "" {
		actions = append(actions, DrainNode{Node: j.BatchHost, Reason: "batch job complete failure"})
	}
	var err error
	if comps := m.hetComponents(j); comps != nil {
		// job_complete ends every component of a het job with the
		// leader's script; the answer is the last error.
		for _, c := range comps {
			if _, e := m.completeBatchRecord(c, req, cl, now, &actions); e != nil {
				err = e
			}
		}
	} else {
		var drop bool
		if drop, err = m.completeBatchRecord(j, req, cl, now, &actions); drop {
			return Outcome{}, err
		}
	}
	out, ferr := m.finish(actions)
	if ferr != nil {
		return out, ferr
	}
	return out, err
}

// completeBatchRecord is _job_complete of one record at the batch
// script's end. drop: nothing to act on (the caller sends nothing).
func (m *Manager) completeBatchRecord(j *Job, req *msg.CompleteBatchScript, cl *Cluster, now int64, actions *[]Action) (drop bool, err error) {
	if j.Finished() {
		// Cancelled or timed out first: only the exit code is new, and
		// the reply says so (as _job_complete).
		if j.ExitCode == 0 && req.JobRC != 0 {
			j.ExitCode = req.JobRC
			m.touch(j, now)
		}
		return false, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	if j.IsCompleting() {
		return false, nil // requeued and still completing: a replay
	}
	if !j.Running() {
		return true, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	if !benignSlurmRC[req.SlurmRC] && j.Requeue {
		j.Completing = append([]string(nil), j.Nodes...)
		j.State = msg.JobPending | msg.JobCompleting
		*actions = append(*actions, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
			MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)})
		m.failureRequeue(j, now)
		return false, nil
	}
	base, reason := finalState(req.JobRC, false)
	j.ExitCode = req.JobRC
	m.endJob(j, base, reason, now)
	*actions = append(*actions, m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
	return false, nil
}

// maxBatchRequeue is MAX_BATCH_REQUEUE: the failure requeues a batch job
// gets before it is held.
const maxBatchRequeue = 5

// failureRequeue is _job_complete's requeue of a batch job after a failure
// on its node (a slurmd-side error in the batch completion, the script
// missing after a node reboot): the requeue is counted, and the job that
// reaches MAX_BATCH_REQUEUE of them is held (REQUEUE_HOLD, reason
// JobHoldMaxRequeue, priority 0) with its count started again. A node
// going DOWN requeues without counting (kill_running_job_by_node_name), as
// do scontrol requeue and preemption.
func (m *Manager) failureRequeue(j *Job, now int64) {
	m.hooks.requeueCause = requeueJobComplete
	m.requeue(j, 0, now)
	j.FailRequeues++
	if 1+int(j.FailRequeues) > maxBatchRequeue { // batch_flag > MAX_BATCH_REQUEUE
		j.State |= msg.JobRequeueHold
		j.Hold, j.Reason, j.Priority = HoldMaxRequeue, ReasonMaxRequeue, 0
		j.FailRequeues = 0
	}
}

// CompleteAllocation handles REQUEST_COMPLETE_JOB_ALLOCATION (salloc or
// srun exiting): JobRC is the shell's wait status.
func (m *Manager) CompleteAllocation(req *msg.CompleteJobAllocationRequest, c Caller, cl *Cluster, now int64) (Outcome, error) {
	j := m.jobs[req.JobID]
	if j == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(c.UID, j) {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	if comps := m.hetComponents(j); comps != nil {
		return m.completeHetAllocation(comps, req.JobRC, cl, now)
	}
	if j.Finished() {
		return Outcome{}, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	var actions []Action
	if j.Pending() {
		m.cancelPending(j, now, "", nil)
		return m.finish(nil)
	}
	base, reason := finalState(req.JobRC, false)
	j.ExitCode = req.JobRC
	m.endJob(j, base, reason, now)
	actions = append(actions, m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
	return m.finish(actions)
}

// EpilogComplete handles MESSAGE_EPILOG_COMPLETE (and a node's 4002 reply
// to a kill): node is clean of the job. When the last node is, the job
// leaves COMPLETING (a requeued job pends again).
func (m *Manager) EpilogComplete(jobID uint32, node string, c Caller, now int64) (Outcome, error) {
	if !m.privileged(c.UID) {
		return Outcome{}, serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	j := m.jobs[jobID]
	if j == nil {
		return Outcome{}, nil
	}
	k := indexOf(j.Completing, node)
	if k < 0 {
		return Outcome{}, nil
	}
	j.Completing = append(j.Completing[:k], j.Completing[k+1:]...)
	if len(j.Completing) == 0 {
		j.Completing = nil
		if !m.epilogRunning(j) { // else EpilogDone ends COMPLETING
			m.completingDone(j, now)
		}
	}
	m.touch(j, now)
	return m.finish(nil)
}

// completingDone: the job's nodes are clean (and EpilogSlurmctld done); a
// requeued job pends again without nodes.
func (m *Manager) completingDone(j *Job, now int64) {
	j.State &^= msg.JobCompleting
	j.deleteSteps()
	if j.Pending() {
		j.Nodes, j.NodeIdx, j.NodeCPUs, j.NodeMem, j.NodeCores, j.BatchHost = nil, nil, nil, nil, nil, ""
		j.NodeGres = nil
		j.TotalCPUs = 0
		requeueFini(j, now)
	}
}

// LaunchFailed: the batch host refused REQUEST_BATCH_JOB_LAUNCH with rc.
// The job is killed as non-startable (requeued held when it may be).
func (m *Manager) LaunchFailed(jobID uint32, rc int, cl *Cluster, now int64) (Outcome, error) {
	j := m.jobs[jobID]
	if j == nil || !j.Running() {
		return Outcome{}, nil
	}
	recs := []*Job{j}
	if comps := m.hetComponents(j); comps != nil {
		recs = comps // job_complete ends every component of a het job
	}
	var actions []Action
	for _, r := range recs {
		if !r.Running() {
			continue
		}
		r.StateDesc = slurmerr.Message(rc)
		r.ExitCode = 1
		m.endJob(r, msg.JobFailed, ReasonLaunchFailed, now)
		actions = append(actions, m.terminate(r, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
	}
	return m.finish(actions)
}

// Tick is the periodic work of the controller's background loop: jobs past
// their end time are killed (TIMEOUT, REQUEST_KILL_TIMELIMIT after
// OverTimeLimit; slurmd applies KillWait between SIGTERM and SIGKILL),
// steps of the other running jobs past their own limit are killed
// (stepTimeLimits), and finished jobs older than MinJobAge are purged.
// Kills to COMPLETING nodes that never answer are not re-sent yet (the
// controller's node manager sees the node DOWN and calls NodeDown).
func (m *Manager) Tick(cl *Cluster, now int64) (Outcome, error) {
	var actions []Action
	over := int64(m.cfg.OverTimeLimit) * 60
	arrays := &arrayTally{m: m}
	for _, j := range m.Jobs() {
		if j.Base() == msg.JobRunning && j.MailType != 0 {
			m.mailTimeLimits(j, m.timeLimit(j, cl), now)
		}
		switch {
		case j.Base() == msg.JobRunning && j.PreemptTime != 0:
			// Preempted with a GraceTime: ended when it is over.
			if now >= j.EndTime {
				actions = append(actions, m.preemptJob(j, cl, now)...)
			}
		case j.Base() == msg.JobRunning && j.EndTime != 0 && now >= j.EndTime+over && m.timeLimit(j, cl) != Infinite &&
			j.State&msg.JobPowerUpNode == 0: // waiting for nodes to power up: its time starts after (powerup.go)
			m.logf(slog.LevelInfo, "Time limit exhausted for JobId=%d", j.ID)
			m.endJob(j, msg.JobTimeout, ReasonTimeLimit, now)
			j.EndTime = now
			if !j.Batch && j.OtherPort != 0 {
				actions = append(actions, SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.OtherPort, UID: j.UserID,
					ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_TIMEOUT,
					Msg: &msg.SrunTimeoutMsg{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal}, Timeout: now}})
			}
			actions = append(actions, m.terminate(j, cl, msgtype.REQUEST_KILL_TIMELIMIT, now)...)
		case j.Base() == msg.JobRunning:
			// Suspended jobs are skipped: their steps' clocks stand still.
			actions = append(actions, m.warnSignal(j, cl, now)...)
			actions = append(actions, m.stepTimeLimits(j, now)...)
		case m.old(j, now) && !arrays.busy(j) && m.hetOld(j, now):
			m.remove(j.ID)
			arrays.removed(j)
			m.lastUpdate = now
			m.pending = append(m.pending, record{kind: recPurge, id: j.ID})
		}
	}
	actions = append(actions, m.gangTick(cl, now)...)
	return m.finish(actions)
}

// old: a finished job past MinJobAge (_list_find_job_old).
func (m *Manager) old(j *Job, now int64) bool {
	return j.Finished() && !j.IsCompleting() && now-j.EndTime >= m.cfg.MinJobAge && m.cfg.MinJobAge > 0
}

// NodeDown handles a node going DOWN (no response, admin): every job on it
// ends NODE_FAIL, or is requeued when it asked for it (--requeue, batch),
// and its other nodes are told to terminate it; a job of more than one
// node that asked not to be killed (--no-kill) goes on without the node
// instead. The sruns of its steps on the node and of the allocation are
// told (SRUN_NODE_FAIL). Jobs on their way out lose the node from their
// completing list.
func (m *Manager) NodeDown(node string, cl *Cluster, now int64) (Outcome, error) {
	var actions []Action
	for _, j := range m.Jobs() {
		if k := indexOf(j.Completing, node); k >= 0 {
			j.Completing = append(j.Completing[:k], j.Completing[k+1:]...)
			if len(j.Completing) == 0 {
				j.Completing = nil
				if !m.epilogRunning(j) { // else EpilogDone ends COMPLETING
					j.State &^= msg.JobCompleting
					j.deleteSteps()
				}
			}
			m.touch(j, now)
		}
		if !j.Running() || !m.hetOnNode(j, node) {
			continue
		}
		actions = append(actions, m.srunNodeFail(j, node)...)
		if !j.KillOnNodeFail && len(j.Nodes) > 1 && !prologRunning(j) {
			// --no-kill: the job goes on without the node.
			m.logf(slog.LevelError, "Removing failed node %s from %s", node, jobIDString(j))
			m.preResize(j, now)
			actions = append(actions, m.killStepsOnNode(j, node, true)...)
			if j.Batch && j.BatchHost == node {
				// The batch step is one of the steps on the node.
				actions = append(actions, NodeMessage{JobID: j.ID, Nodes: []string{node}, MsgType: msgtype.REQUEST_TERMINATE_TASKS,
					Msg: &msg.SignalTasks{StepID: msg.StepID{JobID: j.ID, StepID: msg.StepIDBatch, StepHetComp: NoVal}, Signal: sigKill}})
			}
			var drop []int
			if k := indexOf(j.Nodes, node); k >= 0 {
				drop = []int{k}
			}
			j.resized(drop, now)
			m.touch(j, now)
			continue
		}
		if j.Batch && j.Requeue {
			j.Completing = nil
			for _, n := range j.Nodes {
				if n != node {
					j.Completing = append(j.Completing, n)
				}
			}
			j.State = msg.JobPending | msg.JobCompleting
			actions = append(actions, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
				MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)})
			if len(j.Completing) == 0 {
				j.State = msg.JobPending
			}
			// requeued runs EpilogSlurmctld, which keeps the job COMPLETING
			// until EpilogDone (_set_requeued_job_pending_completing).
			m.hooks.requeueCause = requeueNodeFail
			m.requeue(j, 0, now)
			continue
		}
		j.StateDesc = ""
		m.endJob(j, msg.JobNodeFail, ReasonNodeDown, now)
		j.Completing = nil
		for _, n := range j.Nodes {
			if n != node {
				j.Completing = append(j.Completing, n)
			}
		}
		actions = append(actions, m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
		// deallocate_nodes' cleanup_completing once no node is left to
		// complete: it waits for EpilogSlurmctld (EpilogDone ends it).
		if len(j.Completing) == 0 && !m.epilogRunning(j) {
			j.State &^= msg.JobCompleting
			j.deleteSteps()
		}
	}
	return m.finish(actions)
}

// srunNodeFail is srun_node_fail for a running job: SRUN_NODE_FAIL to the
// srun of each of its steps on node, then to the srun or salloc that
// holds the allocation.
func (m *Manager) srunNodeFail(j *Job, node string) []Action {
	if j.Base() != msg.JobRunning {
		return nil
	}
	var actions []Action
	for _, st := range j.Steps {
		if st.ID == msg.StepIDBatch || indexOf(st.Nodes, node) < 0 || st.Host == "" || st.Port == 0 {
			continue
		}
		actions = append(actions, SrunMessage{JobID: j.ID, Host: st.Host, Port: st.Port, UID: j.UserID,
			ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_NODE_FAIL,
			Msg: &msg.SrunNodeFailMsg{StepID: st.sid(j.ID), NodeList: msg.Str(node)}})
	}
	if !j.Batch && j.OtherPort != 0 {
		actions = append(actions, SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.OtherPort, UID: j.UserID,
			ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_NODE_FAIL,
			Msg: &msg.SrunNodeFailMsg{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
				NodeList: msg.Str(node)}})
	}
	return actions
}
