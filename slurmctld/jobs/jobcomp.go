package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// jobComp is job_completion_logger's jobcomp_g_write: for
// JobCompType=jobcomp/filetxt one line per finished job in JobCompLoc.
// The TRES and the partition time limit need the cluster view, so the
// line is completed when the controller takes the hooks (TakeScripts).
func (m *Manager) jobComp(j *Job) {
	if m.cfg.Hooks.JobCompType != "jobcomp/filetxt" || m.cfg.Hooks.JobCompLoc == "" {
		return
	}
	rec := m.jobCompRecord(j)
	jc := *j // the fields the line still needs, as they are now
	m.addScript(Script{Kind: ScriptJobCompFile, JobID: j.ID, Path: m.cfg.Hooks.JobCompLoc,
		line: func(cl *Cluster) string {
			lim := "UNLIMITED"
			if l := m.timeLimit(&jc, cl); l != Infinite && l != NoVal {
				lim = strconv.FormatUint(uint64(l), 10)
			}
			rec := strings.Replace(rec, "\x00LIMIT\x00", lim, 1)
			return strings.Replace(rec, "\x00TRES\x00", m.tresReq(&jc, cl), 1)
		}})
}

// compTime is _make_time_str: local time, ISO 8601, or Unknown.
func compTime(t int64) string {
	if t == 0 {
		return "Unknown"
	}
	return time.Unix(t, 0).Format("2006-01-02T15:04:05")
}

// exitPair is the "exit:signal" of a raw wait status.
func exitPair(st uint32) string {
	if st == NoVal {
		return "0:0"
	}
	ws := syscall.WaitStatus(st)
	switch {
	case ws.Signaled():
		return fmt.Sprintf("0:%d", int(ws.Signal()))
	case ws.Exited():
		return fmt.Sprintf("%d:0", ws.ExitStatus())
	}
	return "0:0"
}

// jobCompRecord builds jobcomp_filetxt's record with placeholders for the
// time limit and the TRES.
func (m *Manager) jobCompRecord(j *Job) string {
	var start string
	switch {
	case j.ResizeTime != 0:
		start = compTime(j.ResizeTime)
	case j.StartTime > j.EndTime:
		start = "Unknown" // cancelled while pending, expected start ahead
	default:
		start = compTime(j.StartTime)
	}
	part := j.Partition
	if part == "" {
		part = joinPartitions(j.Partitions)
	}
	workDir := j.WorkDir
	if workDir == "" {
		workDir = "unknown"
	}
	submit, eligible := "unknown", "unknown"
	if j.SubmitTime != 0 {
		submit = compTime(j.SubmitTime)
	}
	if b := max(j.BeginTime, j.EligibleTime); b != 0 {
		eligible = compTime(b)
	}
	array := ""
	if j.ArrayJobID != 0 && j.ArrayTaskID != NoVal {
		array = fmt.Sprintf(" ArrayJobId=%d ArrayTaskId=%d", j.ArrayJobID, j.ArrayTaskID)
	}
	head := fmt.Sprintf("JobId=%d UserId=%s(%d) GroupId=%s(%d) Name=%s JobState=%s Partition=%s TimeLimit=",
		j.ID, m.userName(j), j.UserID, m.groupName(j.GroupID), j.GroupID, orNull(j.Name), jobStateBaseName(j),
		orNull(part))
	mid := fmt.Sprintf(" StartTime=%s EndTime=%s NodeList=%s NodeCnt=%d ProcCnt=%d WorkDir=%s ReservationName=%s Tres=\x00TRES\x00",
		start, compTime(j.EndTime), orNull(j.nodeList()), len(j.Nodes), j.TotalCPUs, workDir, j.Reservation)
	tail := fmt.Sprintf(" Account=%s QOS=%s WcKey=%s Cluster=%s SubmitTime=%s EligibleTime=%s%s DerivedExitCode=%s ExitCode=%s \n",
		j.Account, j.QOS, "", "unknown", submit, eligible, array, exitPair(j.DerivedEC), exitPair(j.ExitCode))
	return head + "\x00LIMIT\x00" + mid + tail
}
