package daemon

import (
	"context"
	"fmt"
	"sync"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// prologs serialises the "first launch of a job on this node" decision, as
// slurmd's prolog_mutex does, and lets later launches of the job wait for
// a Prolog still running (_wait_for_job_running_prolog).
//
// Whether a job was seen is the credential state's record of it (saved in
// the spool dir), so a restarted slurmd does not run the Prolog of a job
// it already ran it for; the Epilog runs once because its purge timer
// (beginExpiration) starts only once.
type prologs struct {
	mu      sync.Mutex
	running map[uint32]*prologRun
}

type prologRun struct {
	done chan struct{}
	err  error
}

// claim decides, for a launch of job, whether this launch runs the Prolog.
// check runs under the lock between the "seen?" test and the record (the
// task launch's credential check, which records the job): when it fails
// nothing is claimed. first is true when the job had no record before;
// then the caller must call finish with the Prolog's result.
func (d *Daemon) claimProlog(job uint32, check func() error) (first bool, err error) {
	p := &d.prologs
	p.mu.Lock()
	defer p.mu.Unlock()
	first = !d.creds.v.JobSeen(job)
	if check != nil {
		if err := check(); err != nil {
			return false, err
		}
	}
	if !first {
		return false, nil
	}
	if p.running == nil {
		p.running = map[uint32]*prologRun{}
	}
	p.running[job] = &prologRun{done: make(chan struct{})}
	return true, nil
}

// finishProlog records the result of job's Prolog and wakes its waiters.
func (d *Daemon) finishProlog(job uint32, err error) {
	p := &d.prologs
	p.mu.Lock()
	r := p.running[job]
	delete(p.running, job)
	p.mu.Unlock()
	if r != nil {
		r.err = err
		close(r.done)
	}
}

// waitProlog waits for a Prolog of job still running and returns its
// error.
func (d *Daemon) waitProlog(ctx context.Context, job uint32) error {
	p := &d.prologs
	p.mu.Lock()
	r := p.running[job]
	p.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prologPending reports whether a Prolog of job is running.
func (d *Daemon) prologPending(job uint32) bool {
	d.prologs.mu.Lock()
	defer d.prologs.mu.Unlock()
	return d.prologs.running[job] != nil
}

// jobProlog runs the Prolog for the first launch of a job (the caller
// claimed it) and publishes the result. A failure is
// ESLURMD_PROLOG_FAILED.
func (d *Daemon) jobProlog(job, uid, gid uint32, nodes, workDir string) error {
	cfg := d.config()
	var err error
	if cfg.Conf.Prolog != "" {
		env := d.scriptEnv("prolog_slurmd", job, uid, gid, nodes, workDir)
		if err = runScripts(d.ctx, cfg.Conf.Prolog, env, prologTimeout(cfg)); err != nil {
			d.log.Error(fmt.Sprintf("[job %d] prolog failed: %v", job, err))
			err = fmt.Errorf("%v: %w", err, slurmerr.Error{Code: slurmerr.ESLURMD_PROLOG_FAILED})
		}
	}
	d.finishProlog(job, err)
	return err
}

// launchFailed is _launch_job_fail for a batch job whose launch failed
// after slurmctld had its reply: ask for a requeue (held), and if the
// controller refuses, report the script complete with the error.
func (d *Daemon) launchFailed(req *msg.BatchJobLaunch, rc int) {
	ctx, cancel := context.WithTimeout(d.ctx, 2*d.config().MessageTimeout)
	defer cancel()
	rq := msg.JobRequeueRequest{JobID: req.JobID, Flags: msg.JobRequeueHold | msg.JobLaunchFailed}
	body, err := d.encode(msgtype.REQUEST_JOB_REQUEUE, rq)
	if err == nil {
		if err = d.controller().CallRC(ctx, msgtype.REQUEST_JOB_REQUEUE, body); err == nil {
			return
		}
	}
	d.log.Error(fmt.Sprintf("JobId=%d: requeue after failed launch: %v", req.JobID, err))
	done := msg.CompleteBatchScript{JobID: req.JobID, JobRC: 1 << 8, SlurmRC: uint32(rc), UserID: req.UID,
		NodeName: msg.Str(d.config().NodeName)}
	if body, err = d.encode(msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, done); err == nil {
		err = d.controller().CallRC(ctx, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, body)
	}
	if err != nil {
		d.log.Error(fmt.Sprintf("JobId=%d: REQUEST_COMPLETE_BATCH_SCRIPT: %v", req.JobID, err))
	}
}
