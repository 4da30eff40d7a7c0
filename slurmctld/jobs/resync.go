package jobs

import (
	"fmt"
	"log/slog"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Job ids slurmd may run without an allocation (srun --no-allocate):
// MIN_NOALLOC_JOBID .. MAX_NOALLOC_JOBID.
const (
	minNoAllocJobID uint32 = 0xffff0000
	maxNoAllocJobID uint32 = 0xfffffffd
)

// defaultMsgTimeout is DEFAULT_MSG_TIMEOUT: the most of MessageTimeout a
// batch job's start-up grace adds.
const defaultMsgTimeout = 10

// Log levels of Slurm's debug and debug3 (as slurmd/slurmlog numbers them).
const (
	levelDebug  = slog.LevelDebug
	levelDebug3 = slog.Level(-6)
)

// Activity is what slurmctld keeps as time_last_active for jobs and steps:
// when a registration last found them on their node. It is not journaled:
// after a restart every recovered job counts as active at the load time,
// as _load_job_state sets it. Call it under the same lock as the Manager.
type Activity struct {
	since int64
	jobs  map[uint32]int64
	steps map[msg.StepID]int64
}

// NewActivity starts tracking; since is when the job table was loaded.
func NewActivity(since int64) *Activity {
	return &Activity{since: since, jobs: map[uint32]int64{}, steps: map[msg.StepID]int64{}}
}

// job is the job's time_last_active: set when it starts, when the table is
// loaded and when its first node reports it.
func (a *Activity) job(j *Job) int64 {
	return max(a.since, j.StartTime, a.jobs[j.ID])
}

func (a *Activity) step(jobID uint32, s *Step) int64 {
	return max(a.since, s.StartTime, a.steps[s.sid(jobID)])
}

// prune forgets what belongs to jobs that no longer run.
func (a *Activity) prune(m *Manager) {
	for id := range a.jobs {
		if j := m.jobs[id]; j == nil || !j.Running() {
			delete(a.jobs, id)
		}
	}
	for k := range a.steps {
		j := m.jobs[k.JobID]
		if j == nil || !j.Running() {
			delete(a.steps, k)
			continue
		}
		if _, st := j.stepOf(k); st == nil {
			delete(a.steps, k)
		}
	}
}

// NodeReport is what validate_jobs_on_node reads of a node registration.
type NodeReport struct {
	Node  string
	Steps []msg.StepID // the job steps slurmd runs
	// BootTime is the node's boot time as the registration gives it
	// (now - up_time).
	BootTime int64
}

// ResyncConfig holds the slurm.conf timers the checks use (seconds).
type ResyncConfig struct {
	BatchStartTimeout int64
	MsgTimeout        int64
}

// LogLine is a message for the controller's log, at Slurm's level.
type LogLine struct {
	Level slog.Level
	Msg   string
}

// ValidateJobsOnNode is validate_jobs_on_node's job part: every job step a
// registering node reports is checked against the job table (unknown,
// pending, or on the wrong node: REQUEST_ABORT_JOB to that node; completing
// or finished: REQUEST_TERMINATE_JOB again), and the jobs the table has on
// the node are checked against the report (_purge_missing_jobs): a batch
// job whose script is missing from its batch host after the start-up grace
// ends NODE_FAIL, or is requeued when it may be; a step missing from the
// node is reported to its srun (SRUN_STEP_MISSING). Nothing is sent to the
// node for a job it rightly runs.
func (m *Manager) ValidateJobsOnNode(r NodeReport, act *Activity, rc ResyncConfig, cl *Cluster, now int64) (Outcome, []LogLine, error) {
	var logs []LogLine
	logf := func(l slog.Level, format string, args ...any) {
		logs = append(logs, LogLine{Level: l, Msg: fmt.Sprintf(format, args...)})
	}
	var actions []Action
	act.prune(m)
	for _, sid := range r.Steps {
		if sid.JobID >= minNoAllocJobID && sid.JobID <= maxNoAllocJobID {
			logf(slog.LevelInfo, "NoAllocate %s reported on node %s", stepIDString(sid), r.Node)
			continue
		}
		j := m.jobs[sid.JobID]
		switch {
		case j == nil:
			logf(slog.LevelError, "Orphan %s reported on node %s", stepIDString(sid), r.Node)
			logf(levelDebug, "Aborting JobId=%d on node %s", sid.JobID, r.Node)
			actions = append(actions, m.abortOnNode(sid.JobID, nil, r.Node, cl, now))
		case j.Running():
			if indexOf(j.Nodes, r.Node) < 0 {
				// A requeued job started elsewhere; a node of its old
				// allocation answers only now.
				logf(slog.LevelError, "Registered %s %s on wrong node %s", jobIDString(j), stepIDString(sid), r.Node)
				logf(slog.LevelInfo, "validate_jobs_on_node: job nodes %s count %d inx %d",
					j.nodeList(), len(j.Nodes), cl.nodeIndex(r.Node))
				logf(levelDebug, "Aborting %s on node %s", jobIDString(j), r.Node)
				actions = append(actions, m.abortOnNode(j.ID, j, r.Node, cl, now))
				continue
			}
			if j.Batch && j.Nodes[0] == r.Node {
				act.jobs[j.ID] = now
			}
			if sid.StepID != NoVal {
				if _, st := j.stepOf(sid); st != nil {
					act.steps[st.sid(j.ID)] = now
				}
			}
			logf(levelDebug3, "Registered %s %s on node %s", jobIDString(j), stepIDString(sid), r.Node)
		case j.IsCompleting():
			// The kill may have been lost: send it again.
			logf(levelDebug, "Killing %s on node %s", jobIDString(j), r.Node)
			actions = append(actions, m.killOnNode(j, r.Node, cl, now))
		case j.Pending():
			// Typically a requeued job whose hung node answers again.
			logf(slog.LevelError, "Registered PENDING %s %s on node %s", jobIDString(j), stepIDString(sid), r.Node)
			logf(levelDebug, "Aborting %s on node %s", jobIDString(j), r.Node)
			actions = append(actions, m.abortOnNode(j.ID, j, r.Node, cl, now))
		case now-j.EndTime < rc.MsgTimeout:
			// Its end and this registration crossed.
			logf(levelDebug, "Registered newly completed %s %s on %s", jobIDString(j), stepIDString(sid), r.Node)
		default:
			logf(slog.LevelError, "Registered %s %s in state %s on node %s", jobIDString(j), stepIDString(sid),
				jobStateString(j.State), r.Node)
			logf(levelDebug, "Killing %s on node %s", jobIDString(j), r.Node)
			actions = append(actions, m.killOnNode(j, r.Node, cl, now))
		}
	}
	if m.jobsOnNode(r.Node) > 0 {
		actions = append(actions, m.purgeMissing(r, act, rc, cl, now, logf)...)
	}
	out, err := m.finish(actions)
	return out, logs, err
}

// jobsOnNode is the node's run_job_cnt + comp_job_cnt (NodeUsage's rule).
func (m *Manager) jobsOnNode(node string) int {
	n := 0
	for _, j := range m.jobs {
		if !j.holdsResources() || indexOf(j.Nodes, node) < 0 {
			continue
		}
		if j.Running() || contains(j.Completing, node) {
			n++
		}
	}
	return n
}

// purgeMissing is _purge_missing_jobs: the running jobs the table has on
// the node that the report lacks.
func (m *Manager) purgeMissing(r NodeReport, act *Activity, rc ResyncConfig, cl *Cluster, now int64,
	logf func(slog.Level, string, ...any)) []Action {
	var nodeBoot int64
	if r.BootTime > rc.MsgTimeout+5 {
		// Allow for the message timeout and other delays.
		nodeBoot = r.BootTime - (rc.MsgTimeout + 5)
	}
	startup := now - rc.BatchStartTimeout - min(defaultMsgTimeout, rc.MsgTimeout)
	var actions []Action
	for _, j := range m.Jobs() {
		if !j.Running() || j.State&msg.JobConfiguring != 0 || indexOf(j.Nodes, r.Node) < 0 {
			continue
		}
		if j.Batch && act.job(j) < startup && j.StartTime < startup && j.BatchHost == r.Node {
			actions = append(actions, m.batchMissing(j, r.Node, cl, now, logf)...)
			continue
		}
		actions = append(actions, m.stepsMissing(j, r, act, nodeBoot, now, logf)...)
	}
	return actions
}

// batchMissing ends a batch job whose script is gone from its batch host
// as job_complete does for a node failure: requeued when it may be,
// NODE_FAIL otherwise, with exit code 1; its nodes are told to clean up.
func (m *Manager) batchMissing(j *Job, node string, cl *Cluster, now int64, logf func(slog.Level, string, ...any)) []Action {
	requeueMsg := ""
	if j.Requeue {
		requeueMsg = ", Requeuing job"
	}
	logf(slog.LevelInfo, "Batch %s missing from batch node %s (not found BatchStartTime after startup)%s",
		jobIDString(j), node, requeueMsg)
	// job_complete is called without a return code (NO_VAL), which its
	// wait status decoding logs as a signal.
	if ws := syscall.WaitStatus(NoVal); ws.Signaled() {
		logf(slog.LevelInfo, "_job_complete: %s WTERMSIG %d", jobIDString(j), int(ws.Signal()))
	}
	logf(slog.LevelInfo, "_job_complete: %s cancelled by node failure", jobIDString(j))
	j.ExitCode = 1
	var actions []Action
	if j.Requeue {
		logf(slog.LevelInfo, "_job_complete: requeue %s due to node failure", jobIDString(j))
		j.Completing = append([]string(nil), j.Nodes...)
		j.State = msg.JobPending | msg.JobCompleting
		actions = append(actions, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), j.Nodes...),
			MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: m.killJob(j, cl, now)})
		m.failureRequeue(j, now)
		j.ExitCode = 1 // _job_complete keeps it on a requeue
	} else {
		j.StateDesc = ""
		m.endJob(j, msg.JobNodeFail, 0, now)
		actions = m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)
	}
	logf(slog.LevelInfo, "_job_complete: %s done", jobIDString(j))
	return actions
}

// stepsMissing is _notify_srun_missing_step: each running step of j on the
// node that the registration did not report is signalled to its srun,
// which checks its I/O connections; a step without an srun that started
// before the node booted is killed there.
func (m *Manager) stepsMissing(j *Job, r NodeReport, act *Activity, nodeBoot, now int64,
	logf func(slog.Level, string, ...any)) []Action {
	var actions []Action
	for _, st := range j.Steps {
		if st.ID == msg.StepIDExtern || st.ID == msg.StepIDBatch || indexOf(st.Nodes, r.Node) < 0 {
			continue
		}
		k := st.sid(j.ID)
		switch {
		case act.step(j.ID, st) >= now:
			// Found by this registration: back the timer up so that it
			// does not vouch for the step in another node's registration
			// within the same second.
			act.steps[k] = now - 1
		case st.Host != "" && st.Port != 0:
			actions = append(actions, SrunMessage{JobID: j.ID, Host: st.Host, Port: st.Port, UID: j.UserID,
				ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_STEP_MISSING,
				Msg: &msg.SrunNodeFailMsg{StepID: k, NodeList: msg.Str(r.Node)}})
		case st.StartTime < nodeBoot:
			logf(slog.LevelInfo, "Node %s rebooted, killing missing step %d.%d", r.Node, j.ID, st.ID)
			actions = append(actions, NodeMessage{JobID: j.ID, Nodes: []string{r.Node},
				MsgType: msgtype.REQUEST_TERMINATE_TASKS, Msg: &msg.SignalTasks{StepID: k, Signal: sigKill}})
		}
	}
	return actions
}

// abortOnNode is abort_job_on_node: REQUEST_ABORT_JOB to one node. For a
// job the table does not have, the message carries only the job id and
// the time.
func (m *Manager) abortOnNode(jobID uint32, j *Job, node string, cl *Cluster, now int64) Action {
	var k *msg.KillJob
	if j != nil {
		k = m.killJob(j, cl, now)
	} else {
		k = &msg.KillJob{StepID: msg.StepID{JobID: jobID, StepID: NoVal, StepHetComp: NoVal},
			SelectJobinfo: m.cfg.Select, Time: now}
	}
	k.Nodes = msg.Str(node)
	return NodeMessage{JobID: jobID, Nodes: []string{node}, MsgType: msgtype.REQUEST_ABORT_JOB, Msg: k}
}

// killOnNode is kill_job_on_node: REQUEST_TERMINATE_JOB to one node.
func (m *Manager) killOnNode(j *Job, node string, cl *Cluster, now int64) Action {
	k := m.killJob(j, cl, now)
	k.Nodes = msg.Str(node)
	return NodeMessage{JobID: j.ID, Nodes: []string{node}, MsgType: msgtype.REQUEST_TERMINATE_JOB, Msg: k}
}

// jobIDString is Slurm's %pJ.
func jobIDString(j *Job) string {
	switch {
	case j.ArrayJobID != 0 && j.ArrayTaskID == NoVal:
		return fmt.Sprintf("JobId=%d_*", j.ArrayJobID)
	case j.ArrayJobID != 0:
		return fmt.Sprintf("JobId=%d_%d(%d)", j.ArrayJobID, j.ArrayTaskID, j.ID)
	}
	return fmt.Sprintf("JobId=%d", j.ID)
}

// stepIDString is Slurm's %ps.
func stepIDString(s msg.StepID) string {
	if s.JobID == 0 {
		return "StepId=Invalid"
	}
	if s.StepID == NoVal {
		return fmt.Sprintf("JobId=%d", s.JobID)
	}
	var step string
	switch s.StepID {
	case msg.StepIDBatch:
		step = "batch"
	case msg.StepIDExtern:
		step = "extern"
	case msg.StepIDInteractive:
		step = "interactive"
	case msg.StepIDPending:
		step = "TDB"
	default:
		step = fmt.Sprint(s.StepID)
	}
	if s.StepHetComp != NoVal {
		return fmt.Sprintf("StepId=%d.%s+%d", s.JobID, step, s.StepHetComp)
	}
	return fmt.Sprintf("StepId=%d.%s", s.JobID, step)
}

var jobBaseNames = []string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
	"FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// jobStateString is job_state_string: a flag state names the job before
// its base state.
func jobStateString(st uint32) string {
	for _, f := range []struct {
		flag uint32
		name string
	}{
		{msg.JobCompleting, "COMPLETING"}, {msg.JobStageOut, "STAGE_OUT"}, {msg.JobConfiguring, "CONFIGURING"},
		{msg.JobResizing, "RESIZING"}, {msg.JobRequeue, "REQUEUED"}, {msg.JobRequeueFed, "REQUEUE_FED"},
		{msg.JobRequeueHold, "REQUEUE_HOLD"}, {msg.JobSpecialExit, "SPECIAL_EXIT"}, {msg.JobStopped, "STOPPED"},
		{msg.JobRevoked, "REVOKED"}, {msg.JobResvDelHold, "RESV_DEL_HOLD"}, {msg.JobSignaling, "SIGNALING"},
	} {
		if st&f.flag != 0 {
			return f.name
		}
	}
	if b := st & msg.JobStateBase; int(b) < len(jobBaseNames) {
		return jobBaseNames[b]
	}
	return "?"
}
