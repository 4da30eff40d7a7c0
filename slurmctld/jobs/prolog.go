package jobs

import (
	"context"
	"log/slog"
	"slices"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// ReasonProlog is WAIT_PROLOG ("Prolog"): a running job whose nodes have
// not all reported their PrologFlags=Alloc prolog complete.
const ReasonProlog uint16 = 36

// PrologFlags are the PrologFlags the controller acts on.
type PrologFlags struct {
	Alloc   bool // the prolog runs at allocation (Contain implies it)
	Contain bool // ... in an extern step the job's processes join
	NoHold  bool // the job does not wait (Reason=Prolog) for it
}

// launchProlog is launch_prolog: with PrologFlags=Alloc every node of a
// job that starts gets REQUEST_LAUNCH_PROLOG, whose credential names the
// extern step (22.05 slurmd trusts it unsigned); the job shows
// Reason=Prolog until all have answered REQUEST_COMPLETE_PROLOG (not with
// NoHold). With Contain the job gets its extern step record. Without the
// message a real slurmd configured so waits MessageTimeout*2 for it
// before it launches a batch job.
func (m *Manager) launchProlog(j *Job, cl *Cluster, now int64) []Action {
	if !m.cfg.Prolog.Alloc || len(j.Nodes) == 0 {
		return nil
	}
	if !m.cfg.Prolog.NoHold {
		j.Reason = ReasonProlog
		j.PrologNodes = slices.Clone(j.Nodes)
	}
	pl := &msg.PrologLaunch{JobID: j.ID, UID: j.UserID, GID: j.GroupID, Nodes: ns(j.nodeList()), AliasList: ns(j.AliasList),
		StdErr: ns(j.StdErr), StdOut: ns(j.StdOut), WorkDir: ns(j.WorkDir), JobGres: m.jobGresInfo(j, cl)}
	if u, ok := m.user(j.UserID); ok {
		pl.UserName = ns(u.Name)
	}
	if p, err := m.payload(j); err == nil && p != nil {
		pl.SpankJobEnv = nsList(p.SpankJobEnv)
	}
	body := m.credBody(j, cl, now)
	body.StepID = jobcred.StepID{JobID: j.ID, StepID: jobcred.StepExtern, StepHetComp: NoVal}
	body.StepHostlist = cns(j.nodeList())
	body.StepCoreBitmap = m.coreBitmap(j, cl, 0, len(j.Nodes))
	body.JobMem = memGroups(j.NodeMem)
	cred, err := jobcred.Create(context.Background(), body, jobcred.Version2205, nil, unix(now))
	if err != nil {
		m.logf(slog.LevelError, "launch_prolog: slurm_cred_create failure for JobId=%d: %v", j.ID, err)
		return nil
	}
	pl.Cred = cred
	if m.cfg.Prolog.Contain {
		n := len(j.Nodes)
		j.Steps = append(j.Steps, &Step{ID: msg.StepIDExtern, Name: "extern", Nodes: slices.Clone(j.Nodes),
			NodeIdx: slices.Clone(j.NodeIdx), Tasks: uint32(n), StartTime: now,
			TimeLimit: NoVal, Done: make([]bool, n)})
	}
	return []Action{NodeMessage{JobID: j.ID, Nodes: slices.Clone(j.Nodes), MsgType: msgtype.REQUEST_LAUNCH_PROLOG, Msg: pl}}
}

// PrologComplete handles REQUEST_COMPLETE_PROLOG (prolog_complete): the
// node's prolog ended; once every node's has, the job's reason clears. A
// failed prolog is logged; the node itself drains and asks for the
// requeue.
func (m *Manager) PrologComplete(req *msg.CompleteProlog, now int64) (Outcome, error) {
	j := m.jobs[req.JobID]
	if j == nil {
		m.logf(slog.LevelInfo, "prolog_complete: invalid JobId=%d", req.JobID)
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if j.IsCompleting() {
		return Outcome{}, nil
	}
	if req.PrologRC != 0 {
		m.logf(slog.LevelError, "Prolog launch failure, JobId=%d", j.ID)
	}
	if node := strOf(req.NodeName); node != "" {
		j.PrologNodes = slices.DeleteFunc(j.PrologNodes, func(n string) bool { return n == node })
	} else {
		j.PrologNodes = nil // a 21.08 slurmd names no node
	}
	if len(j.PrologNodes) == 0 {
		j.PrologNodes = nil
		j.Reason = ReasonNone
	}
	m.touch(j, now)
	return m.finish(nil)
}
