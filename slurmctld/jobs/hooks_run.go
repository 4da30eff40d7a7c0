package jobs

import (
	"log/slog"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// started is select_nodes' work after a job got its nodes: the BEGIN mail
// and PrologSlurmctld. It reports whether the batch launch must wait for
// the prolog (the job is CONFIGURING until PrologDone).
func (m *Manager) started(j *Job, now int64) (hold bool) {
	m.mailOnStart(j, now)
	if m.cfg.Hooks.PrologSlurmctld == "" {
		return false
	}
	j.State |= msg.JobConfiguring
	env := append(m.commonEnv(j, false), "SLURM_SCRIPT_CONTEXT=prolog_slurmctld")
	m.addScript(Script{Kind: ScriptPrologCtld, JobID: j.ID, Argv: []string{m.cfg.Hooks.PrologSlurmctld},
		Env: env, Timeout: m.cfg.Hooks.PrologEpilogTimeout})
	return j.Batch
}

// ended is job_completion_logger and deallocate_nodes' EpilogSlurmctld
// for a job that reached a final state (requeue: it is being requeued;
// ran: it had nodes).
func (m *Manager) ended(j *Job, requeue, ran bool, now int64) {
	m.arrayComp(j, requeue, now)
	m.mailOnEnd(j, requeue, now)
	m.jobComp(j)
	if ran {
		m.epilogCtld(j)
	}
}

// epilogCtld is deallocate_nodes' EpilogSlurmctld: the job stays
// COMPLETING until it ends (EpilogDone).
func (m *Manager) epilogCtld(j *Job) {
	if m.cfg.Hooks.EpilogSlurmctld != "" {
		if m.hooks.epilog == nil {
			m.hooks.epilog = map[uint32]bool{}
		}
		m.hooks.epilog[j.ID] = true
		j.State |= msg.JobCompleting
		env := append(m.commonEnv(j, true), "SLURM_SCRIPT_CONTEXT=epilog_slurmctld")
		m.addScript(Script{Kind: ScriptEpilogCtld, JobID: j.ID, Argv: []string{m.cfg.Hooks.EpilogSlurmctld},
			Env: env, Timeout: m.cfg.Hooks.PrologEpilogTimeout})
	}
}

// requeueCause says which of Slurm's requeue paths a requeue takes: they
// log the job in different states and count the restart before or after
// the epilog.
type requeueCause uint8

const (
	requeueOp          requeueCause = iota // _job_requeue_op: REQUEUE, restart counted first
	requeueJobComplete                     // _job_complete's failure requeue: NODE_FAIL, counted first
	requeueNodeFail                        // kill_running_job_by_node_name: NODE_FAIL, counted after
)

// requeued is the hooks of a requeue: job_completion_logger sees the job
// ended now (unless it had ended already) in state REQUEUE or NODE_FAIL,
// then deallocate_nodes runs EpilogSlurmctld for a job that had nodes.
func (m *Manager) requeued(j *Job, now int64) {
	cause := m.hooks.requeueCause
	m.hooks.requeueCause = requeueOp
	ran := len(j.Nodes) > 0 && (j.Running() || j.IsCompleting() || cause != requeueOp) && !m.hooks.epilog[j.ID]
	if j.EndTime == 0 || j.EndTime > now {
		j.EndTime = now
	}
	state := j.State
	j.State = msg.JobRequeue | j.State&msg.JobCompleting
	if cause != requeueOp {
		j.State = msg.JobNodeFail | j.State&msg.JobCompleting
	}
	m.ended(j, true, false, now)
	if ran {
		if cause != requeueNodeFail {
			j.RestartCnt++
		}
		m.epilogCtld(j)
		if cause != requeueNodeFail {
			j.RestartCnt--
		}
	}
	j.State = state | j.State&msg.JobCompleting
}

func waitStatus(s int) syscall.WaitStatus { return syscall.WaitStatus(s) }

// prologRunning reports a job whose PrologSlurmctld has not ended or
// whose nodes power up: it is CONFIGURING.
func prologRunning(j *Job) bool { return j.State&msg.JobConfiguring != 0 }

// prologCtldRunning is details->prolog_running: the job's PrologSlurmctld
// runs now (not merely CONFIGURING while its nodes power up). Such a job
// is not prolog-ready and gets no step.
func (m *Manager) prologCtldRunning(j *Job) bool { return m.hooks.prolog[j.ID] }

// epilogRunning reports a job whose EpilogSlurmctld has not ended: it
// stays COMPLETING.
func (m *Manager) epilogRunning(j *Job) bool { return m.hooks.epilog[j.ID] }

// PrologDone is prep_prolog_slurmctld_callback: PrologSlurmctld of jobID
// ended with the wait status status. On success the job leaves
// CONFIGURING and a batch job is launched; a failed (or timed out) prolog
// requeues the job, or kills it when it cannot be requeued.
func (m *Manager) PrologDone(jobID uint32, status int, timedOut bool, cl *Cluster, now int64) (Outcome, error) {
	j := m.jobs[jobID]
	if j == nil {
		m.logf(slog.LevelError, "prep_prolog_slurmctld_callback: missing JobId=%d", jobID)
		return Outcome{}, nil
	}
	delete(m.hooks.prolog, jobID)
	if j.State&msg.JobConfiguring == 0 {
		return Outcome{}, nil // cancelled or requeued meanwhile
	}
	ws := waitStatus(status)
	failed := false
	switch {
	case timedOut:
		m.logf(slog.LevelError, "prolog_slurmctld JobId=%d failed due to timing out", jobID)
		failed = true
	case ws.Exited() && ws.ExitStatus() != 0:
		m.logf(slog.LevelError, "prolog_slurmctld JobId=%d prolog exit status %d:%d", jobID, ws.ExitStatus(), 0)
		failed = true
	}
	j.State &^= msg.JobConfiguring
	m.touch(j, now)
	if failed {
		return m.prologFailed(j, cl, now)
	}
	if !j.Running() {
		return m.finish(nil)
	}
	if j.State&msg.JobPowerUpNode != 0 && !nodesReady(j, cl) {
		// Still waiting for nodes to power up (PowerUpReady ends it).
		j.State |= msg.JobConfiguring
		return m.finish(nil)
	}
	m.logf(slog.LevelInfo, "prolog_running_decr: Configuration for JobId=%d is complete", j.ID)
	if j.State&msg.JobPowerUpNode != 0 {
		m.powerUpFini(j, cl, now) // powerup.go
	}
	return m.finish(m.configFini(j, cl, now))
}

// configFini is job_config_fini and what follows it for a job whose
// configuration ended: the time spent configuring does not come out of
// its limit (_job_time_limit_incr), the PrologFlags=Alloc prolog comes
// only now, and a batch job is launched.
func (m *Manager) configFini(j *Job, cl *Cluster, now int64) []Action {
	if delta := now - j.StartTime; delta != 0 && m.timeLimit(j, cl) != Infinite {
		m.logf(slog.Level(-2), "Extending JobId=%d time limit by %d secs for configuration", j.ID, delta)
		j.EndTime = now + m.limitSeconds(j, cl)
	}
	actions := m.launchProlog(j, cl, now)
	if j.HetJobID != 0 {
		actions = append(actions, m.hetStarted(j, cl, now)...)
	} else if j.Batch {
		actions = append(actions, LaunchBatch{JobID: j.ID, Node: j.BatchHost, Msg: m.batchLaunch(j, cl, now)})
	}
	return actions
}

// prologFailed requeues the job (job_requeue as root), or, when that is
// refused, kills it (job_signal SIGKILL: CANCELLED).
func (m *Manager) prologFailed(j *Job, cl *Cluster, now int64) (Outcome, error) {
	if !j.Running() {
		return m.finish(nil)
	}
	if j.Batch && j.Requeue {
		j.Completing = append([]string(nil), j.Nodes...)
		j.State = msg.JobRequeue | msg.JobCompleting
		actions := []Action{NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
			MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)}}
		m.requeue(j, 0, now)
		return m.finish(actions)
	}
	m.logf(slog.LevelInfo, "unable to requeue JobId=%d: %s", j.ID, requeueRefusal(j))
	m.endJob(j, msg.JobCancelled, 0, now)
	return m.finish(m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now))
}

// requeueRefusal is slurm_strerror of job_requeue's refusal.
func requeueRefusal(j *Job) string {
	if !j.Batch {
		return "Only batch jobs are accepted or processed"
	}
	return "Requested operation is presently disabled"
}

// EpilogDone is prep_epilog_slurmctld_callback: EpilogSlurmctld of jobID
// ended; the job leaves COMPLETING once its nodes are clean too.
func (m *Manager) EpilogDone(jobID uint32, timedOut bool, now int64) (Outcome, error) {
	if timedOut {
		m.logf(slog.LevelError, "epilog_slurmctld JobId=%d timed out", jobID)
	}
	delete(m.hooks.epilog, jobID)
	j := m.jobs[jobID]
	if j == nil {
		return Outcome{}, nil
	}
	if len(j.Completing) == 0 && j.IsCompleting() {
		m.completingDone(j, now)
		m.touch(j, now)
	}
	return m.finish(nil)
}

// restartStep is what a controller restart does for one recovered job,
// as read_slurm_conf does when it loads the job state (the scripts that
// ran are gone with the crash, and real slurmctld does not save whether
// EpilogSlurmctld had ended):
//   - _sync_nodes_to_jobs: a job still CONFIGURING for its
//     PrologSlurmctld runs it again; with no PrologSlurmctld configured any
//     more it stays CONFIGURING until job_time_limit ends the
//     configuration (configFini: here at once). A job that ended while
//     its prolog ran is not CONFIGURING there: the flag goes.
//   - _sync_nodes_to_comp_job: every job COMPLETING on nodes goes through
//     deallocate_nodes again, whether or not its nodes are still
//     completing: EpilogSlurmctld runs again, the nodes still completing
//     get REQUEST_TERMINATE_JOB again, and with neither the job leaves
//     COMPLETING (cleanup_completing).
type restartStep struct {
	prolog, configFini, dropConfiguring bool
	epilog, kill, done                  bool
}

func restartDecision(j *Job, h HookConfig) restartStep {
	var s restartStep
	if prologRunning(j) {
		switch {
		case !j.Running():
			s.dropConfiguring = true
		case h.PrologSlurmctld != "":
			s.prolog = true
		case j.State&msg.JobPowerUpNode != 0:
			// Waiting for its nodes to power up (PowerUpReady).
		default:
			s.configFini = true
		}
	}
	if j.IsCompleting() && len(j.Nodes) > 0 {
		s.epilog = h.EpilogSlurmctld != ""
		s.kill = len(j.Completing) > 0
		s.done = !s.epilog && !s.kill
	}
	return s
}

// recoverHooks applies restartDecision to the recovered table: the
// scripts are queued now; what needs the cluster view (the kills, the
// end of a configuration) waits for RestartActions.
func (m *Manager) recoverHooks(now int64) {
	m.hooks.restart = nil
	completing := 0
	for _, j := range m.Jobs() {
		s := restartDecision(j, m.cfg.Hooks)
		if s.epilog || s.kill || s.done {
			completing++
			m.logf(slog.LevelInfo, "_sync_nodes_to_comp_job: %s in completing state", jobIDString(j))
		}
		if s.dropConfiguring {
			j.State &^= msg.JobConfiguring
			m.touch(j, now)
		}
		if s.prolog {
			env := append(m.commonEnv(j, false), "SLURM_SCRIPT_CONTEXT=prolog_slurmctld")
			m.addScript(Script{Kind: ScriptPrologCtld, JobID: j.ID, Argv: []string{m.cfg.Hooks.PrologSlurmctld},
				Env: env, Timeout: m.cfg.Hooks.PrologEpilogTimeout})
		}
		if s.epilog {
			m.epilogCtld(j)
		}
		if s.done {
			m.completingDone(j, now)
			m.touch(j, now) // journaled by RestartActions
		}
		if s.kill || s.configFini {
			m.hooks.restart = append(m.hooks.restart, j.ID)
		}
	}
	if completing > 0 {
		m.logf(slog.LevelInfo, "_sync_nodes_to_comp_job: completing %d jobs", completing)
	}
}

// RestartActions is the rest of a restart's work on the recovered jobs
// (recoverHooks), once the controller has its cluster view: the nodes
// still completing a job are told again to end it (REQUEST_TERMINATE_JOB;
// a node that has ended it answers so, or sends its epilog complete), and
// a job left CONFIGURING with no PrologSlurmctld configured ends its
// configuration (its batch script is launched). Only the first call after
// Recovered does anything.
func (m *Manager) RestartActions(cl *Cluster, now int64) (Outcome, error) {
	ids := m.hooks.restart
	m.hooks.restart = nil
	var actions []Action
	for _, id := range ids {
		j := m.jobs[id]
		if j == nil {
			continue
		}
		if j.IsCompleting() && len(j.Completing) > 0 {
			actions = append(actions, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Completing...),
				MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)})
		}
		if prologRunning(j) && j.Running() && m.cfg.Hooks.PrologSlurmctld == "" {
			j.State &^= msg.JobConfiguring
			m.touch(j, now)
			m.logf(slog.LevelInfo, "job_time_limit: Configuration for %s complete", jobIDString(j))
			actions = append(actions, m.configFini(j, cl, now)...)
		}
	}
	return m.finish(actions)
}
