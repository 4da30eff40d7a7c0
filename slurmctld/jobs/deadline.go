package jobs

import (
	"log/slog"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
)

// ReasonDeadline is FAIL_DEADLINE ("DeadLine").
const ReasonDeadline uint16 = 167

func hasDeadline(j *Job) bool { return j.Deadline != 0 && j.Deadline != int64(NoVal) }

// deadlineMissed is deadline_ok, run on a pending job the scheduler is
// about to consider: a job that can no longer run its --time-min (or,
// without one, its time limit) before its --deadline ends DEADLINE with
// exit code 1 and reason DeadLine, its start and end now; an srun or
// salloc waiting for it is told.
func (m *Manager) deadlineMissed(j *Job, now int64, actions *[]Action) bool {
	if !hasDeadline(j) {
		return false
	}
	var need uint32
	var what string
	switch {
	case j.TimeMin != 0 && j.TimeMin != NoVal:
		need, what = j.TimeMin, "time_min"
	case j.TimeLimit != NoVal && j.TimeLimit != Infinite:
		need, what = j.TimeLimit, "time_limit"
	default:
		return false
	}
	if j.Deadline >= now+int64(need)*60 {
		return false
	}
	m.logf(slog.LevelInfo, "sched: JobId=%d with %s %d exceeded deadline %s and cancelled",
		j.ID, what, need, time.Unix(j.Deadline, 0).Format("2006-01-02T15:04:05"))
	j.setBase(msg.JobDeadline)
	j.ExitCode = 1
	j.Reason = ReasonDeadline
	j.StateDesc = ""
	j.StartTime, j.EndTime = now, now
	m.touch(j, now)
	m.ended(j, false, false, now) // job_completion_logger: mail, jobcomp
	if !j.Batch && j.OtherPort != 0 {
		*actions = append(*actions, srunJobComplete(j))
	}
	return true
}

// deadlineLimit is the time limit a job with a --deadline starts with,
// as schedule() sets it: its limit (or its partition's) cut to the whole
// minutes left before the deadline.
func (m *Manager) deadlineLimit(j *Job, cl *Cluster, now int64) {
	if !hasDeadline(j) {
		return
	}
	left := (j.Deadline - now) / 60
	if left <= 0 {
		return
	}
	if l := m.timeLimit(j, cl); l == Infinite || l == NoVal || int64(l) > left {
		j.TimeLimit = uint32(left)
	}
}

// deadlineTimeMin is what _job_create does for a --deadline without a
// time limit (none given, no partition default) or --time-min: a
// one-minute minimum.
func deadlineTimeMin(j *Job) {
	if hasDeadline(j) && j.TimeLimit == NoVal && j.TimeMin == NoVal {
		j.TimeMin = 1
	}
}
