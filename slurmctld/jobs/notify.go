package jobs

import (
	"sort"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Notify handles REQUEST_JOB_NOTIFY (scontrol notify): the owner, root or
// SlurmUser sends a text to the job's srun/salloc (SRUN_USER_MSG) or, for
// a running batch job, to the slurmd of its first node, which writes it
// to the job's stderr (srun_user_message).
func (m *Manager) Notify(req *msg.JobNotifyRequest, c Caller) (Outcome, error) {
	j := m.jobs[req.StepID.JobID]
	switch {
	case j == nil:
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	case j.UserID != c.UID && !m.privileged(c.UID):
		return Outcome{}, serr(slurmerr.ESLURM_USER_ID_MISSING)
	case !j.Pending() && !j.Running():
		return Outcome{}, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	text := strOf(req.Message)
	if j.OtherPort != 0 && j.RespHost != "" {
		return Outcome{Actions: []Action{SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.OtherPort, UID: j.UserID,
			ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.SRUN_USER_MSG,
			Msg: &msg.SrunUserMsg{JobID: j.ID, Msg: msg.Str(text)}}}}, nil
	}
	if j.Batch && j.Running() && len(j.Nodes) > 0 {
		return Outcome{Actions: []Action{NodeMessage{JobID: j.ID, Nodes: []string{j.Nodes[0]},
			MsgType: msgtype.REQUEST_JOB_NOTIFY,
			Msg: &msg.JobNotifyRequest{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
				Message: msg.Str(text)}}}}, nil
	}
	return Outcome{}, serr(slurmerr.ESLURM_DISABLED)
}

// Top handles REQUEST_TOP_JOB (scontrol top): the named pending jobs move
// ahead of the other pending jobs of the same user, account, QOS and
// partition by trading priority with them, the nice values recording the
// trade (job_set_top and _set_top). Users may top their own jobs only
// with SchedulerParameters=enable_user_top (TopJobs).
func (m *Manager) Top(req *msg.SuspendRequest, c Caller, now int64) (Outcome, error) {
	return m.TopJobs(req, c, m.cfg.EnableUserTop, now)
}

// UserTopEnabled reports SchedulerParameters=enable_user_top. Slurm looks
// for the words anywhere in the parameter string, case-insensitively
// (xstrcasestr), so a value such as "Enable_User_Top=1" counts too.
func UserTopEnabled(p conf.Options) bool {
	return strings.Contains(strings.ToLower(p.String()), "enable_user_top")
}

// TopJobs is Top with SchedulerParameters=enable_user_top given: root,
// SlurmUser (operators) may top anyone's jobs; with userTop a user may top
// his own jobs, and naming another user's job fails the whole request with
// ESLURM_ACCESS_DENIED; without it every user is refused with
// ESLURM_ACCESS_DENIED before the job ids are looked at.
func (m *Manager) TopJobs(req *msg.SuspendRequest, c Caller, userTop bool, now int64) (Outcome, error) {
	operator := m.privileged(c.UID)
	if !operator && !userTop {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	var top []*Job
	for _, tok := range strings.Split(strOf(req.JobIDStr), ",") {
		if tok == "" {
			continue // strtok_r skips empty tokens
		}
		j := m.topTarget(tok)
		if j == nil {
			return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		top = append(top, j)
	}
	if len(top) == 0 {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	var soft error
	chosen := map[uint32]bool{}
	var list []*Job
	var prios []uint32
	for _, j := range top {
		switch {
		case !operator && j.UserID != c.UID:
			// _set_top checks each job in turn: a refusal ends the
			// request, after earlier jobs were merely looked at.
			return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
		case !j.Pending():
			soft = serr(slurmerr.ESLURM_JOB_NOT_PENDING)
			continue
		case len(j.Partitions) > 1:
			return Outcome{}, serr(slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE)
		case j.Priority == 0:
			soft = serr(slurmerr.ESLURM_JOB_HELD)
			continue
		case chosen[j.ID]:
			continue
		}
		chosen[j.ID] = true
		list = append(list, j)
		prios = append(prios, j.Priority)
	}
	if len(list) == 0 {
		return Outcome{}, soft
	}
	first := list[0]
	var others []*Job
	for _, id := range m.sortedIDs() {
		o := m.jobs[id]
		if chosen[o.ID] || !o.Pending() || len(o.Partitions) > 1 || o.Priority <= 1 ||
			o.UserID != first.UserID || o.Account != first.Account || o.QOS != first.QOS ||
			m.partitionOf(o) != m.partitionOf(first) {
			continue
		}
		chosen[o.ID] = true
		others = append(others, o)
		prios = append(prios, o.Priority)
	}
	// The named jobs take the highest priorities of the group, in order.
	sort.Slice(prios, func(a, b int) bool { return prios[a] > prios[b] })
	last := NoVal
	var total int64
	for i, j := range list {
		next := prios[i]
		if last != NoVal && next == last && last > 2 {
			next = last - 1
		}
		last = next
		delta := int64(next) - int64(j.Priority)
		dn := min(int64(j.Nice), delta)
		total += dn
		j.Priority = next
		j.Nice = uint32(int64(j.Nice) - dn)
		m.touch(j, now)
	}
	for k, o := range others {
		left := int64(len(others) - k)
		delta := total / left
		next := uint32(int64(o.Priority) - delta)
		if next >= last {
			next = last - 1
			delta = int64(o.Priority) - int64(next)
		}
		o.Priority = next
		o.Nice = uint32(int64(o.Nice) + delta)
		total -= delta
		m.touch(o, now)
	}
	out, err := m.finish(nil)
	if err != nil {
		return out, err
	}
	return out, nil
}

// topTarget is the record a token of scontrol top names: "id", "id_*"
// (the job or the array's meta record) or "id_task".
func (m *Manager) topTarget(tok string) *Job {
	idStr, task, hasTask := strings.Cut(tok, "_")
	id, err := strconv.ParseUint(idStr, 10, 32)
	if err != nil || id == 0 {
		return nil
	}
	if !hasTask || task == "*" {
		return m.jobs[uint32(id)]
	}
	t, err := strconv.ParseUint(task, 10, 32)
	if err != nil {
		return nil
	}
	for _, j := range m.jobs {
		if j.ArrayJobID != uint32(id) {
			continue
		}
		if j.ArrayTaskID == uint32(t) || j.IsArrayMeta() && containsTask(j.Array.Pending, uint32(t)) {
			return j
		}
	}
	return nil
}

// sortedIDs are the job ids in ascending order.
func (m *Manager) sortedIDs() []uint32 {
	ids := make([]uint32, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids
}
