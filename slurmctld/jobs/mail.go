package jobs

import (
	"fmt"
	"strconv"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
)

// mailTypeString is _mail_type_str: the event word of the subject and of
// SLURM_JOB_MAIL_TYPE.
func mailTypeString(t uint16) string {
	switch t {
	case MailInvalidDepend:
		return "Invalid dependency"
	case MailBegin:
		return "Began"
	case MailEnd:
		return "Ended"
	case MailFail:
		return "Failed"
	case MailRequeue:
		return "Requeued"
	case MailStageOut:
		return "StageOut/Teardown"
	case MailTime100:
		return "Reached time limit"
	case MailTime90:
		return "Reached 90% of time limit"
	case MailTime80:
		return "Reached 80% of time limit"
	case MailTime50:
		return "Reached 50% of time limit"
	}
	return "unknown"
}

// mailJob is mail_job_info: MailProg runs with "-s subject recipient" and
// the job's environment. The mail is queued; the controller sends it
// outside the lock, so a slow MailProg delays nothing else. A task of an
// array without --mail-type=ARRAY_TASKS is reported on its meta record,
// as one summary for the array.
func (m *Manager) mailJob(j *Job, t uint16, now int64) {
	m.mailJobSkip(j, t, now, nil)
}

// mailJobSkip is mailJob for a task of an array being requeued (skip):
// its end is no end for the array's exit codes (_job_array_comp).
func (m *Manager) mailJobSkip(j *Job, t uint16, now int64, skip *Job) {
	if m.cfg.Hooks.MailProg == "" {
		return
	}
	perTask := j.MailType&MailArrayTasks != 0
	if !perTask && j.ArrayJobID != 0 && j.ID != j.ArrayJobID {
		if meta := m.jobs[j.ArrayJobID]; meta != nil {
			j = meta
		}
	}
	summary := !perTask && j.ArrayJobID != 0 && j.ID == j.ArrayJobID
	user := j.MailUser
	if user == "" {
		user = m.mailUser("", j.UserName, j.UserID)
	}
	env := m.commonEnv(j, t&(MailEnd|MailFail) != 0)
	env = append(env, "SLURM_JOB_STATE="+jobStateBaseName(j), "SLURM_JOB_MAIL_TYPE="+mailTypeString(t))
	when, timeEnv := mailTime(j, t, now)
	env = append(env, timeEnv...)
	var term string
	var termEnv []string
	if summary {
		if t == MailEnd || t == MailFail {
			lo, hi := m.arrayExitRange(j.ArrayJobID)
			term, termEnv = arrayTermInfo(j, lo, hi)
			if skip != nil || m.arrayRequeued(j.ArrayJobID) { // ARRAY_TASK_REQUEUED
				term += ", with requeued tasks"
			}
		}
	} else {
		term, termEnv = mailTermInfo(j, t)
	}
	env = append(env, termEnv...)
	var subject string
	switch {
	case summary:
		subject = fmt.Sprintf("Slurm Array Summary Job_id=%d_* (%d) Name=%s %s%s",
			j.ArrayJobID, j.ID, j.Name, mailTypeString(t), term)
	case j.ArrayJobID != 0 && j.ArrayTaskID != NoVal:
		subject = fmt.Sprintf("Slurm Array Task Job_id=%d_%d (%d) Name=%s %s%s%s",
			j.ArrayJobID, j.ArrayTaskID, j.ID, j.Name, mailTypeString(t), when, term)
	default:
		subject = fmt.Sprintf("Slurm Job_id=%d Name=%s %s%s%s", j.ID, j.Name, mailTypeString(t), when, term)
	}
	m.addScript(Script{Kind: ScriptMail, JobID: j.ID, Argv: []string{m.cfg.Hooks.MailProg, "-s", subject, user},
		Env: env, Timeout: mailProgTimeout})
}

// mailTime is _set_job_time: the queued or run time of the subject.
func mailTime(j *Job, t uint16, now int64) (string, []string) {
	switch {
	case t == MailBegin && j.StartTime != 0 && j.SubmitTime != 0:
		s := secsString(j.StartTime - j.SubmitTime)
		return ", Queued time " + s, []string{"SLURM_JOB_QUEUED_TIME=" + s}
	case (t == MailEnd || t == MailFail || t == MailRequeue) && j.StartTime != 0 && j.EndTime != 0:
		run := j.EndTime - j.StartTime
		if j.SuspendTime != 0 {
			run = j.EndTime - j.SuspendTime + j.PreSusTime
		}
		s := secsString(run)
		return ", Run time " + s, []string{"SLURM_JOB_RUN_TIME=" + s}
	case t&(MailTime100|MailTime90|MailTime80|MailTime50) != 0 && j.StartTime != 0:
		run := now - j.StartTime
		if j.SuspendTime != 0 {
			run = now - j.SuspendTime + j.PreSusTime
		}
		s := secsString(run)
		return ", Run time " + s, []string{"SLURM_JOB_RUN_TIME=" + s}
	}
	return "", nil
}

// mailTermInfo is _set_job_term_info for one job: its final state and
// exit code.
func mailTermInfo(j *Job, t uint16) (string, []string) {
	if t != MailEnd && t != MailFail {
		return "", nil
	}
	ws := syscall.WaitStatus(j.ExitCode)
	if ws.Exited() {
		return fmt.Sprintf(", %s, ExitCode %d", jobStateBaseName(j), ws.ExitStatus()),
			[]string{"SLURM_JOB_EXIT_CODE_MAX=" + strconv.Itoa(ws.ExitStatus())}
	}
	return ", " + jobStateBaseName(j), []string{"SLURM_JOB_EXIT_CODE_MAX=0"}
}

// firstArrayTask is _first_array_task: j is not an array task, or the
// only task of its array running while none has ended yet. Real counts
// the ends on the meta record (tot_comp_tasks), a requeue included: a
// task that was requeued (restart count) counts as one that ended, so
// its next start, like any start after a task ended, is not mailed.
func (m *Manager) firstArrayTask(j *Job) bool {
	if j.ArrayJobID == 0 || j.ArrayTaskID == NoVal {
		return true
	}
	for o := range m.arrayRecords(j.ArrayJobID) {
		if o.RestartCnt != 0 {
			return false
		}
		if o != j && o.ArrayTaskID != NoVal && !o.Pending() {
			return false
		}
	}
	return true
}

// mailOnStart is select_nodes' BEGIN mail.
func (m *Manager) mailOnStart(j *Job, now int64) {
	if j.MailType&MailBegin != 0 && (j.MailType&MailArrayTasks != 0 || m.firstArrayTask(j)) {
		m.mailJob(j, MailBegin, now)
	}
}

// arrayFinished is test_job_array_finished: no task of the array is
// pending or running any more.
func (m *Manager) arrayFinished(arrayID uint32) bool {
	for o := range m.arrayRecords(arrayID) {
		if !o.Finished() {
			return false
		}
	}
	return true
}

// mailOnEnd is job_completion_logger's mail: FAIL, REQUEUE, END.
// requeue says the job is being requeued.
func (m *Manager) mailOnEnd(j *Job, requeue bool, now int64) {
	if j.MailType == 0 {
		return
	}
	isTask := j.ArrayJobID != 0 && j.ArrayTaskID != NoVal
	if isTask && j.MailType&MailArrayTasks == 0 {
		m.mailArrayEnd(j, requeue, now)
		return
	}
	base := j.Base()
	if j.MailType&MailFail != 0 && base >= msg.JobFailed && (base != msg.JobPreempted || !requeue) {
		m.mailJob(j, MailFail, now)
	}
	if requeue && j.MailType&MailRequeue != 0 {
		m.mailJob(j, MailRequeue, now)
	}
	if j.MailType&MailEnd != 0 && (base == msg.JobComplete || base == msg.JobCancelled) {
		m.mailJob(j, MailEnd, now)
	}
}

// mailArrayEnd is job_completion_logger's mail for a task of an array
// without --mail-type=ARRAY_TASKS: once every task has finished, one
// summary for the whole array (REQUEUE when a task was requeued at some
// time, this one or an earlier one; FAIL when a task exited non-zero,
// else END), with the range of the tasks' exit codes.
func (m *Manager) mailArrayEnd(j *Job, requeue bool, now int64) {
	if !m.arrayFinished(j.ArrayJobID) {
		return
	}
	if (requeue || m.arrayRequeued(j.ArrayJobID)) && j.MailType&MailRequeue != 0 {
		m.mailJob(j, MailRequeue, now)
	}
	var skip *Job
	if requeue {
		skip = j
	}
	_, hi := m.arrayExitRange(j.ArrayJobID)
	hiWS := syscall.WaitStatus(hi)
	if hiWS.Exited() && hiWS.ExitStatus() != 0 && j.MailType&MailFail != 0 {
		m.mailJobSkip(j, MailFail, now, skip)
	} else if j.MailType&MailEnd != 0 {
		m.mailJobSkip(j, MailEnd, now, skip)
	}
}

// ArrayExit is an array's exit summary, kept on its meta record as
// real's array_recs keeps it: the lowest and highest status (arrayStatus)
// folded so far and how many task ends and requeues were counted.
type ArrayExit struct {
	Min, Max uint32 `json:",omitempty"`
	Comp     uint32 `json:",omitempty"`
}

// arrayComp is _job_array_comp for a task or meta record that ends
// (requeue: it is being requeued). A requeue counts without folding its
// status, so a requeue counted first leaves the initial 0 as minimum.
func (m *Manager) arrayComp(j *Job, requeue bool, now int64) {
	if j.ArrayJobID == 0 {
		return
	}
	meta := m.jobs[j.ArrayJobID]
	if meta == nil {
		return
	}
	if meta.ArrayExit == nil {
		meta.ArrayExit = &ArrayExit{}
	}
	a := meta.ArrayExit
	status := arrayStatus(j)
	switch {
	case requeue:
	case a.Comp == 0:
		a.Min, a.Max = status, status
	default:
		a.Min, a.Max = min(a.Min, status), max(a.Max, status)
	}
	a.Comp++
	m.touch(meta, now)
}

// arrayExitRange is the array's min_exit_code and max_exit_code
// (arrayComp); 0 and 0 when nothing was counted.
func (m *Manager) arrayExitRange(arrayID uint32) (lo, hi uint32) {
	if meta := m.jobs[arrayID]; meta != nil && meta.ArrayExit != nil {
		return meta.ArrayExit.Min, meta.ArrayExit.Max
	}
	return 0, 0
}

// convertArrayExits turns old state's exit records (EarlierExits, and
// the statuses of the ended tasks) into the meta records' ArrayExit.
func (m *Manager) convertArrayExits(now int64) {
	for _, meta := range m.Jobs() {
		if meta.ID != meta.ArrayJobID || meta.ArrayExit != nil {
			continue
		}
		a := ArrayExit{}
		fold := func(status uint32) {
			if a.Comp == 0 || status < a.Min {
				a.Min = status
			}
			if a.Comp == 0 || status > a.Max {
				a.Max = status
			}
			a.Comp++
		}
		for o := range m.arrayRecords(meta.ID) {
			for _, s := range o.EarlierExits {
				fold(s)
			}
			if o.Finished() {
				fold(arrayStatus(o))
			}
		}
		if a.Comp != 0 {
			meta.ArrayExit = &a
			m.touch(meta, now)
		}
	}
	for _, j := range m.jobs {
		if j.EarlierExits != nil {
			j.EarlierExits = nil
			m.touch(j, now)
		}
	}
}

// arrayStatus is a task's status as _job_array_comp counts it: its raw
// exit status, or 9 for a task that ended with status 0 without
// completing (cancelled, NODE_FAIL), so that a zero maximum means every
// task completed.
func arrayStatus(j *Job) uint32 {
	if j.ExitCode == 0 && j.Base() != msg.JobComplete {
		return 9
	}
	return j.ExitCode
}

// arrayRequeued is the meta record's ARRAY_TASK_REQUEUED: a task of the
// array was requeued at some time (its restart count says so).
func (m *Manager) arrayRequeued(arrayID uint32) bool {
	for o := range m.arrayRecords(arrayID) {
		if o.RestartCnt != 0 {
			return true
		}
	}
	return false
}

// arrayTermInfo is _set_job_term_info's summary of an array's tasks.
func arrayTermInfo(meta *Job, lo, hi uint32) (string, []string) {
	loWS, hiWS := syscall.WaitStatus(lo), syscall.WaitStatus(hi)
	switch {
	case loWS.Exited() && hiWS.Exited():
		state := jobStateBaseName(meta)
		if loWS.ExitStatus() == 0 && hiWS.ExitStatus() > 0 {
			state = "Mixed"
		}
		return fmt.Sprintf(", %s, ExitCode [%d-%d]", state, loWS.ExitStatus(), hiWS.ExitStatus()),
			[]string{"SLURM_JOB_EXIT_CODE_MIN=" + strconv.Itoa(loWS.ExitStatus()),
				"SLURM_JOB_EXIT_CODE_MAX=" + strconv.Itoa(hiWS.ExitStatus())}
	case hiWS.Signaled():
		return fmt.Sprintf(", Mixed, MaxSignal [%d]", int(hiWS.Signal())),
			[]string{"SLURM_JOB_TERM_SIGNAL_MAX=" + strconv.Itoa(int(hiWS.Signal()))}
	case hiWS.Exited():
		return fmt.Sprintf(", Mixed, MaxExitCode [%d]", hiWS.ExitStatus()),
			[]string{"SLURM_JOB_EXIT_CODE_MAX=" + strconv.Itoa(hiWS.ExitStatus())}
	}
	return ", " + jobStateBaseName(meta), []string{"SLURM_JOB_EXIT_CODE_MAX=0"}
}

// mailTimeLimits is the time-limit mails of _job_time_limit: each of
// TIME_LIMIT_50/80/90/100 once, when that share of the limit has run out
// (the bit is cleared once sent).
func (m *Manager) mailTimeLimits(j *Job, limitMin uint32, now int64) {
	if j.MailType&(MailTime100|MailTime90|MailTime80|MailTime50) == 0 || limitMin == Infinite {
		return
	}
	lim := float64(limitMin) * 60
	for _, s := range []struct {
		bit  uint16
		left float64
	}{{MailTime100, 0}, {MailTime90, 0.1}, {MailTime80, 0.2}, {MailTime50, 0.5}} {
		if j.MailType&s.bit != 0 && float64(now)+lim*s.left >= float64(j.EndTime) {
			j.MailType &^= s.bit
			m.mailJob(j, s.bit, now)
			m.touch(j, now)
		}
	}
}
