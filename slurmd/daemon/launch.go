package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rpcLaunchTasks is REQUEST_LAUNCH_TASKS, checked in slurmd 22.05's order
// (_rpc_launch_tasks) before anything reaches Steps, and always answered
// with RESPONSE_SLURM_RC_MSG:
//
//  1. this node is in complete_nodelist, else ESLURM_INVALID_NODE_NAME;
//  2. the authenticated sender is the request's uid, or root or SlurmUser,
//     else ESLURM_USER_ID_MISSING;
//  3. LAUNCH_NO_ALLOC (no credential check) only for root or SlurmUser,
//     else ESLURM_ACCESS_DENIED;
//  4. the credential: signature, expiry, step id, uid and gid equal to the
//     request's, this node in its step and job host lists, not revoked, not
//     replayed (ESLURMD_INVALID_JOB_CREDENTIAL, _CREDENTIAL_EXPIRED,
//     _REVOKED, _REPLAYED), recorded on disk before the reply.
func (d *Daemon) rpcLaunchTasks(ctx context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.LaunchTasksRequest)
	if !ok {
		return server.RCMsg(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, "")
	}
	job := req.StepID.JobID
	var code int
	check := func() error {
		var err error
		code, err = d.checkLaunchTasks(ctx, r, &req)
		return err
	}
	first := false
	var err error
	if req.Flags&msg.LaunchNoAlloc != 0 {
		// No allocation, no job on this node: no Prolog.
		err = check()
	} else {
		first, err = d.claimProlog(job, check)
	}
	if err != nil {
		d.log.Error(fmt.Sprintf("launch task %v request from UID:%d: %v", stepName(req.StepID), r.Identity.UID, err))
		return server.RCMsg(code, "")
	}
	if first {
		err = d.jobProlog(job, req.UID, req.GID, req.CompleteNodelist.Value, req.Cwd.Value)
	} else {
		err = d.waitProlog(ctx, job)
	}
	if err != nil {
		d.log.Error(fmt.Sprintf("launch task %v: %v", stepName(req.StepID), err))
		return server.RCMsg(slurmerr.ESLURMD_PROLOG_FAILED, "")
	}
	// The job may have been killed while the Prolog ran.
	if req.Cred != nil && d.creds.revoked(req.Cred) {
		d.log.Info(fmt.Sprintf("Job %d already killed, do not launch %v", job, stepName(req.StepID)))
		return server.RCMsg(0, "")
	}
	d.libdirFixup(&req)
	if err := d.steps.LaunchTasks(ctx, &req, r.Identity, r.Origin); err != nil {
		d.log.Error(fmt.Sprintf("launch task %v: %v", stepName(req.StepID), err))
		return server.RCMsg(errCode(err), "")
	}
	return server.RCMsg(0, "")
}

// checkLaunchTasks returns the Slurm code refusing req, or 0.
func (d *Daemon) checkLaunchTasks(ctx context.Context, r *server.Request, req *msg.LaunchTasksRequest) (int, error) {
	cfg := d.config()
	if !req.CompleteNodelist.Valid || !inHostlist(req.CompleteNodelist.Value, cfg.NodeName) {
		return slurmerr.ESLURM_INVALID_NODE_NAME,
			fmt.Errorf("node %s not in complete_nodelist %q", cfg.NodeName, req.CompleteNodelist.Value)
	}
	sender := r.Identity.UID
	privileged := cfg.Authorized(sender)
	if sender != req.UID && !privileged {
		return slurmerr.ESLURM_USER_ID_MISSING,
			fmt.Errorf("sender uid %d is not the step's uid %d", sender, req.UID)
	}
	if req.Flags&msg.LaunchNoAlloc != 0 {
		if !privileged {
			return slurmerr.ESLURM_ACCESS_DENIED, errors.New("launch without allocation from an unprivileged user")
		}
		return 0, nil
	}
	if req.Cred == nil {
		return slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL, errors.New("no credential")
	}
	_, err := d.creds.verifyLaunch(ctx, req.Cred, jobcred.LaunchRequest{
		StepID:   jobcred.StepID{JobID: req.StepID.JobID, StepID: req.StepID.StepID, StepHetComp: req.StepID.StepHetComp},
		UID:      req.UID,
		GID:      req.GID,
		NodeName: cfg.NodeName,
	})
	if err != nil {
		return errCode(err), err
	}
	return 0, nil
}

// rpcBatchLaunch is REQUEST_BATCH_JOB_LAUNCH (the sender is root or
// SlurmUser, checked by controllerOnly). Its credential is unsigned since
// 22.05: trusted because of the sender, but still checked for revocation
// (ESLURMD_CREDENTIAL_REVOKED), for agreeing with the request and naming
// this node (ESLURMD_INVALID_JOB_CREDENTIAL), and a job already running
// here is ESLURM_DUPLICATE_JOB_ID.
func (d *Daemon) rpcBatchLaunch(ctx context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.BatchJobLaunch)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	code, err := d.checkBatchLaunch(&req)
	if err != nil {
		d.log.Error(fmt.Sprintf("batch launch of JobId=%d: %v", req.JobID, err))
		return server.RC(code)
	}
	job := req.JobID
	first, err := d.claimProlog(job, func() error { return d.creds.insertJob(job) })
	if err != nil {
		d.log.Error(fmt.Sprintf("batch launch of JobId=%d: cannot save credential state: %v", job, err))
		return server.RC(slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL)
	}
	noProlog := d.config().Conf.Prolog == ""
	if first && noProlog || !first && !d.prologPending(job) {
		if first {
			d.finishProlog(job, nil)
		}
		if err := d.steps.LaunchBatch(ctx, &req, r.Identity); err != nil {
			d.log.Error(fmt.Sprintf("batch launch of JobId=%d: %v", job, err))
			return server.RC(errCode(err))
		}
		return server.RC(0)
	}
	// A Prolog to run or wait for: reply now, as slurmd does, and report
	// a failure after it separately.
	from := r.Identity
	resp := server.RC(0)
	resp.After = func(error) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			var err error
			if first {
				err = d.jobProlog(job, req.UID, req.GID, req.Nodes.Value, req.WorkDir.Value)
			} else {
				err = d.waitProlog(d.ctx, job)
			}
			if err != nil {
				d.launchFailed(&req, slurmerr.ESLURMD_PROLOG_FAILED)
				return
			}
			if d.creds.revoked(req.Cred) {
				d.log.Info(fmt.Sprintf("Job %d already killed, do not launch batch job", job))
				return
			}
			if err := d.steps.LaunchBatch(d.ctx, &req, from); err != nil {
				d.log.Error(fmt.Sprintf("batch launch of JobId=%d: %v", job, err))
				d.launchFailed(&req, errCode(err))
			}
		}()
	}
	return resp
}

func (d *Daemon) checkBatchLaunch(req *msg.BatchJobLaunch) (int, error) {
	if _, steps := d.jobSteps(req.JobID); len(steps) > 0 {
		return slurmerr.ESLURM_DUPLICATE_JOB_ID, fmt.Errorf("job already running here")
	}
	c := req.Cred
	if c == nil {
		return slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL, errors.New("no credential")
	}
	if d.creds.revoked(c) {
		return slurmerr.ESLURMD_CREDENTIAL_REVOKED, fmt.Errorf("credential revoked")
	}
	b := &c.Body
	if b.StepID.JobID != req.JobID || b.UID != req.UID || b.GID != req.GID {
		return slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL,
			fmt.Errorf("credential for job %d uid %d gid %d, request job %d uid %d gid %d",
				b.StepID.JobID, b.UID, b.GID, req.JobID, req.UID, req.GID)
	}
	node := d.config().NodeName
	if !b.StepHostlist.Valid || !inHostlist(b.StepHostlist.S, node) {
		return slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL, fmt.Errorf("%s not in the credential's host list %q", node, b.StepHostlist.S)
	}
	return 0, nil
}

func inHostlist(expr, node string) bool {
	hl, err := hostlist.Parse(expr)
	return err == nil && hl.Find(node) >= 0
}

func stepName(s msg.StepID) string {
	switch s.StepID {
	case msg.StepIDBatch:
		return fmt.Sprintf("JobId=%d StepId=batch", s.JobID)
	case msg.StepIDExtern:
		return fmt.Sprintf("JobId=%d StepId=extern", s.JobID)
	}
	return fmt.Sprintf("StepId=%d.%d", s.JobID, s.StepID)
}
