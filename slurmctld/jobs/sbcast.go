package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// SbcastGrant is what REQUEST_JOB_SBCAST_CRED gets before its credential
// is signed: the controller signs it outside its lock, as step
// credentials (a munge signer talks to munged).
type SbcastGrant struct {
	Resp msg.JobSbcastCredResponse
}

// SbcastCred handles REQUEST_JOB_SBCAST_CRED (sbcast), as
// _slurm_rpc_job_sbcast_cred: the running job's owner (or an operator)
// gets a credential for the job's nodes, or a step's when the step runs
// on fewer, that expires with the job. Its step id is the step asked
// for, or the job's next step id.
func (m *Manager) SbcastCred(req *msg.SelectedStep, c Caller, now int64) (*SbcastGrant, error) {
	j := m.jobs[req.StepID.JobID]
	if req.HetJobOffset != NoVal {
		// One component of a het job ("123+1").
		j = m.hetRecord(req.StepID.JobID, req.HetJobOffset)
	}
	// Another user's job answers USER_ID_MISSING whatever its state: the
	// owner check overrides job_alloc_info's answer.
	switch {
	case j == nil:
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	case j.UserID != c.UID && !m.privileged(c.UID):
		return nil, serr(slurmerr.ESLURM_USER_ID_MISSING)
	case j.Pending():
		return nil, serr(slurmerr.ESLURM_JOB_PENDING)
	case !j.Running():
		return nil, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	nodes := j.nodeList()
	stepID := j.NextStepID
	if comps := m.hetComponents(j); comps != nil && req.HetJobOffset == NoVal {
		// A het job's leader: the nodes of every component, whatever
		// step was asked for.
		var err error
		if nodes, err = m.hetNodes(comps, c); err != nil {
			return nil, err
		}
	} else if req.StepID.StepID != NoVal {
		_, st := j.stepOf(req.StepID)
		if st == nil {
			return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
		}
		stepID = st.ID
		if len(st.Nodes) != len(j.Nodes) {
			nodes = hostlistOf(st.Nodes)
		}
	}
	cred := msg.SbcastCred{Ctime: now, Expiration: j.EndTime, JobID: j.ID, StepID: stepID,
		UID: j.UserID, GID: j.GroupID, Nodes: ns(nodes)}
	// LaunchParameters send_gids (22.05's default): the user's name and
	// groups travel in the credential.
	if u, ok := m.user(j.UserID); ok {
		cred.UserName = ns(u.Name)
		cred.GIDs = u.Groups
	}
	m.logf(slog.LevelInfo, "_slurm_rpc_job_sbcast_cred: %s NodeList=%s", selectedStepString(req), nodes)
	return &SbcastGrant{Resp: msg.JobSbcastCredResponse{JobID: j.ID, NodeList: ns(nodes), Cred: cred}}, nil
}

// Sign signs the credential with the controller's credential signer.
func (g *SbcastGrant) Sign(ctx context.Context, s jobcred.Signer, v codec.Version) (*msg.JobSbcastCredResponse, error) {
	if s == nil {
		return nil, fmt.Errorf("jobs: no credential signer")
	}
	body, err := g.Resp.Cred.SignedBytes(v)
	if err != nil {
		return nil, err
	}
	sig, err := s.Sign(ctx, body)
	if err != nil {
		return nil, err
	}
	resp := g.Resp
	resp.Cred.Signature = sig
	return &resp, nil
}

// selectedStepString is slurm_get_selected_step_id: "5", "5_3", "5.2".
func selectedStepString(s *msg.SelectedStep) string {
	out := fmt.Sprint(s.StepID.JobID)
	if s.ArrayTaskID != NoVal {
		out += fmt.Sprintf("_%d", s.ArrayTaskID)
	}
	if s.HetJobOffset != NoVal {
		out += fmt.Sprintf("+%d", s.HetJobOffset)
	}
	if s.StepID.StepID != NoVal {
		out += fmt.Sprintf(".%d", s.StepID.StepID)
	}
	return out
}
