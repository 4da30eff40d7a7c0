package jobs

import (
	"log/slog"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// stepTimeLimits is 22.05's check_job_step_time_limit over the steps of a
// running job: a step whose run time, in whole minutes and without the
// time its job was suspended, has reached its own TimeLimit is timed out.
// OverTimeLimit plays no part (it stretches the job's limit only), and a
// step without a limit of its own (none asked, 0, UNLIMITED) is bounded
// by the job's limit alone.
//
// Timing out sends REQUEST_KILL_TIMELIMIT for that step to the step's
// nodes (no credential: slurmd signals the step, it does not end the
// job). slurmd logs "*** STEP J.S ON node CANCELLED AT time DUE TO TIME
// LIMIT ***" into the step's output, sends SIGCONT and SIGTERM, and
// SIGKILL after max(KillWait, 5) seconds. The step's srun is not told by
// the controller (Slurm's SRUN_TIMEOUT is the job's imminent end); it
// learns it from its tasks' exits. The job keeps running. The step is
// marked TimedOut, shown TIMEOUT and not killed again, until its nodes
// report it complete.
//
// Slurm runs this every PERIODIC_TIMEOUT (30 s), so a step outlives its
// limit by up to 30 s there; goslurm checks on every Tick (as it does the
// job's own limit), so the kill comes within a Tick of the limit.
func (m *Manager) stepTimeLimits(j *Job, now int64) []Action {
	var out []Action
	for _, st := range j.Steps {
		if st.TimedOut || !stepLimited(st.TimeLimit) {
			continue
		}
		runMins := (now - st.StartTime - st.SusTime) / 60
		if runMins < int64(st.TimeLimit) {
			continue
		}
		m.logf(slog.LevelInfo, "check_job_step_time_limit: %s has timed out (%d)",
			stepIDString(st.sid(j.ID)), st.TimeLimit)
		st.TimedOut = true
		m.touch(j, now)
		out = append(out, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), st.Nodes...),
			MsgType: msgtype.REQUEST_KILL_TIMELIMIT, Msg: m.killStepMsg(j, st, now)})
	}
	return out
}

// stepLimited reports a step time limit that is enforced: NO_VAL, 0 and
// INFINITE all mean the step has none of its own.
func stepLimited(limit uint32) bool {
	return limit != NoVal && limit != 0 && limit != Infinite
}

// killStepMsg is the kill_job_msg_t of a step's time-out, as
// _signal_step_timelimit fills it: the step's id, the job's state, owner,
// node list, start time and state description, the kill time; no
// credential (the job goes on, so nothing is revoked).
func (m *Manager) killStepMsg(j *Job, st *Step, now int64) *msg.KillJob {
	return &msg.KillJob{
		StepID:   st.sid(j.ID),
		JobState: j.State, JobUID: j.UserID, JobGID: j.GroupID, Nodes: ns(j.nodeList()),
		Details: ns(j.StateDesc), SelectJobinfo: m.cfg.Select, StartTime: j.StartTime, Time: now,
	}
}

// resumeSteps charges a suspension that ends now to the job's steps that
// are still running (_resume_job_step): from the later of the suspension
// and the step's start.
func resumeSteps(j *Job, now int64) {
	for _, st := range j.Steps {
		if st.TimedOut {
			continue
		}
		from := max(j.SuspendTime, st.StartTime)
		if now > from {
			st.SusTime += now - from
		}
	}
}
