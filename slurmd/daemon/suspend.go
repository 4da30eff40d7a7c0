package daemon

import (
	"context"
	"fmt"
	"sync"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// JobSuspender is implemented by a Steps that can stop and continue the
// processes of a job (stepd.Manager does: SIGTSTP, SIGSTOP or the cgroup
// freezer, SIGCONT). A Steps without it leaves suspend requests logged and
// not carried out.
type JobSuspender interface {
	// SuspendJob suspends (resume false) or resumes every step of job on
	// this node and returns once each step answered. coreSpec is the
	// job's specialized core count from the request.
	SuspendJob(ctx context.Context, job uint32, resume bool, coreSpec uint16) error
}

// rpcSuspendInt serves REQUEST_SUSPEND_INT as slurmd 22.05's
// _rpc_suspend_job: the reply goes out first, carrying only the checks of
// the request (an unknown op is ESLURM_NOT_SUPPORTED, a sender other than
// root or SlurmUser ESLURM_USER_ID_MISSING); the steps are stopped or
// continued afterwards, one operation per job at a time.
func (d *Daemon) rpcSuspendInt(_ context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.SuspendInt)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	rc := 0
	if req.Op != msg.SuspendJob && req.Op != msg.ResumeJob {
		d.log.Error(fmt.Sprintf("REQUEST_SUSPEND_INT: bad op code %d", req.Op))
		rc = slurmerr.ESLURM_NOT_SUPPORTED
	}
	if !d.config().Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation: suspend_job(%d) from uid %d", req.JobID, r.Identity.UID))
		rc = slurmerr.ESLURM_USER_ID_MISSING
	}
	resp := server.RC(rc)
	if rc != 0 {
		return resp
	}
	resp.After = func(error) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.suspendJob(req)
		}()
	}
	return resp
}

// suspendJob carries out one suspend or resume after the reply.
func (d *Daemon) suspendJob(req msg.SuspendInt) {
	resume := req.Op == msg.ResumeJob
	action := "suspend"
	if resume {
		action = "resume"
	}
	unlock := suspendLocks.lock(d, req.JobID)
	defer unlock()
	if !resume {
		// A job whose Prolog still runs is stopped once its steps exist.
		_ = d.waitProlog(d.ctx, req.JobID)
	}
	s, ok := d.steps.(JobSuspender)
	if !ok {
		d.log.Error(fmt.Sprintf("%s of JobId=%d: this node's step supervisor cannot suspend steps", action, req.JobID))
		return
	}
	d.log.Debug(fmt.Sprintf("_rpc_suspend_job jobid=%d action=%s", req.JobID, action))
	if err := s.SuspendJob(d.ctx, req.JobID, resume, req.JobCoreSpec); err != nil {
		d.log.Debug(fmt.Sprintf("%s of job %d failed: %v", action, req.JobID, err))
	}
}

// suspendLocks serializes the operations on one job (slurmd's
// _get_suspend_job_lock), so a resume that follows a suspend closely
// waits for the suspend to finish.
var suspendLocks = &jobLocks{m: map[jobLockKey]*jobLock{}}

type jobLockKey struct {
	d   *Daemon
	job uint32
}

type jobLock struct {
	mu   sync.Mutex
	refs int
}

type jobLocks struct {
	mu sync.Mutex
	m  map[jobLockKey]*jobLock
}

// lock takes job's lock and returns its release; entries go when unused.
func (l *jobLocks) lock(d *Daemon, job uint32) func() {
	k := jobLockKey{d, job}
	l.mu.Lock()
	e := l.m[k]
	if e == nil {
		e = &jobLock{}
		l.m[k] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}
