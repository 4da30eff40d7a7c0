package daemon

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Slurm's pseudo-signals (slurm.h), delivered to steps before SIGTERM so
// they record why they end.
const (
	sigRequeued  = 993
	sigPreempted = 994
	sigTimeLimit = 996
	sigAbort     = 997
	sigNodeFail  = 998
	sigFailure   = 999
)

// rpcKillJob serves the kill_job_msg family (the sender is root or
// SlurmUser): REQUEST_TERMINATE_JOB, REQUEST_KILL_TIMELIMIT,
// REQUEST_KILL_PREEMPTED and REQUEST_ABORT_JOB, as slurmd 22.05's
// _rpc_terminate_job, _rpc_timelimit and _rpc_abort_job:
//
//   - every credential of the job created up to the message's time is
//     revoked (and saved), so no launch of it can start any more (not for
//     a single step's KILL_TIMELIMIT / KILL_PREEMPTED: the job goes on);
//   - TERMINATE_JOB for a job with no step here and no Epilog: reply
//     ESLURMD_KILL_JOB_ALREADY_COMPLETE, which slurmctld takes as the
//     epilog being complete (a real slurmd sends no EPILOG_COMPLETE then);
//   - otherwise reply 0 at once, end the steps (Steps.Terminate), run the
//     Epilog once, and report MESSAGE_EPILOG_COMPLETE (not for ABORT_JOB);
//   - KILL_TIMELIMIT / KILL_PREEMPTED for one step only signal that step.
func (d *Daemon) rpcKillJob(_ context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.KillJob)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	kind := r.Header.MsgType
	job := req.StepID.JobID
	stepKill := (kind == msgtype.REQUEST_KILL_TIMELIMIT || kind == msgtype.REQUEST_KILL_PREEMPTED) && req.StepID.StepID != NoVal
	if stepKill {
		// One step ends, the job goes on: its credentials stay valid
		// (a step launched in the same second must not be refused).
		sig := sigTimeLimit
		if kind == msgtype.REQUEST_KILL_PREEMPTED {
			sig = sigPreempted
		}
		resp := server.RC(0)
		resp.After = func(error) { d.killStep(job, req.StepID.StepID, sig) }
		return resp
	}
	if err := d.creds.revoke(job, time.Unix(req.Time, 0), time.Unix(req.StartTime, 0)); err != nil {
		if !errors.Is(err, jobcred.ErrAlreadyRevoked) {
			d.log.Error(fmt.Sprintf("revoking credentials of JobId=%d: %v", job, err))
		}
	} else {
		d.log.Debug(fmt.Sprintf("credential for job %d revoked", job))
	}

	d.mu.Lock()
	dup := d.terminating[job]
	if !dup {
		d.terminating[job] = true
	}
	d.mu.Unlock()
	if dup {
		// A termination of this job is under way: acknowledge only.
		return server.RC(0)
	}
	_, steps := d.jobSteps(job)
	epilog := d.config().Conf.Epilog
	if kind == msgtype.REQUEST_TERMINATE_JOB && len(steps) == 0 && epilog == "" {
		d.finishTermination(job)
		return server.RC(slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE)
	}
	resp := server.RC(0)
	resp.After = func(error) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.terminate(kind, &req)
		}()
	}
	return resp
}

// terminate runs after the reply: end the steps, run the Epilog, report.
func (d *Daemon) terminate(kind msgtype.Type, req *msg.KillJob) {
	job := req.StepID.JobID
	defer func() {
		d.mu.Lock()
		delete(d.terminating, job)
		d.mu.Unlock()
	}()
	ctx := d.ctx
	if sig := pseudoSignal(kind, req.JobState); sig != 0 {
		_ = d.steps.Signal(ctx, job, NoVal, sig, 0, 0)
	}
	if err := d.steps.Terminate(ctx, job); err != nil {
		d.log.Error(fmt.Sprintf("terminating JobId=%d: %v", job, err))
	}
	// A Prolog still running for the job finishes before the Epilog.
	_ = d.waitProlog(ctx, job)
	rc := uint32(0)
	// The purge timer starts once; if it already ran, the epilog has
	// been run for this job before.
	expErr := d.creds.beginExpiration(job)
	if expErr == nil {
		d.bcast.JobEnded(job)
	}
	if err := expErr; err != nil {
		d.log.Debug(fmt.Sprintf("Not running epilog for jobid %d: %v", job, err))
	} else if err := d.runEpilog(req); err != nil {
		d.log.Error(fmt.Sprintf("epilog failed for JobId=%d: %v", job, err))
		rc = uint32(slurmerr.ESLURMD_EPILOG_FAILED)
	}
	if kind == msgtype.REQUEST_ABORT_JOB {
		return
	}
	done := msg.EpilogComplete{JobID: job, ReturnCode: rc, NodeName: msg.Str(d.config().NodeName)}
	if err := d.sendOnly(ctx, msgtype.MESSAGE_EPILOG_COMPLETE, done); err != nil {
		// slurmctld re-sends TERMINATE_JOB; nothing more to do here.
		d.log.Error(fmt.Sprintf("Unable to send epilog complete message: %v", err))
	} else {
		d.log.Debug(fmt.Sprintf("JobId=%d: sent epilog complete msg: rc = %d", job, rc))
	}
}

func (d *Daemon) finishTermination(job uint32) {
	if err := d.creds.beginExpiration(job); err != nil {
		d.log.Debug(fmt.Sprintf("JobId=%d: %v", job, err))
	} else {
		d.bcast.JobEnded(job)
	}
	d.mu.Lock()
	delete(d.terminating, job)
	d.mu.Unlock()
}

// killStep is a step's time limit or preemption: the pseudo-signal,
// SIGCONT, SIGTERM, KillWait, SIGKILL.
func (d *Daemon) killStep(job, step uint32, sig int) {
	ctx := d.ctx
	for _, s := range []int{sig, 18, 15} {
		_ = d.steps.Signal(ctx, job, step, s, 0, 0)
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(d.config().KillWait):
	}
	_ = d.steps.Signal(ctx, job, step, 9, 0, 0)
}

func pseudoSignal(kind msgtype.Type, state uint32) int {
	switch kind {
	case msgtype.REQUEST_KILL_TIMELIMIT:
		return sigTimeLimit
	case msgtype.REQUEST_KILL_PREEMPTED:
		return sigPreempted
	case msgtype.REQUEST_ABORT_JOB:
		return sigAbort
	}
	switch state & msg.JobStateBase {
	case msg.JobNodeFail:
		return sigNodeFail
	case msg.JobPending:
		return sigRequeued
	case msg.JobFailed:
		return sigFailure
	}
	return 0
}

// runEpilog runs Epilog as root with only Slurm's epilog variables: the
// user's environment (and the job's SPANK environment) never reaches it.
func (d *Daemon) runEpilog(req *msg.KillJob) error {
	cfg := d.config()
	if cfg.Conf.Epilog == "" {
		return nil
	}
	env := d.scriptEnv("epilog_slurmd", req.StepID.JobID, req.JobUID, req.JobGID, req.Nodes.Value, req.WorkDir.Value)
	env = append(env,
		"SLURM_JOB_EXIT_CODE="+strconv.FormatUint(uint64(req.ExitCode), 10),
		"SLURM_JOB_DERIVED_EC="+strconv.FormatUint(uint64(req.DerivedEC), 10))
	return runScripts(d.ctx, cfg.Conf.Epilog, env, prologTimeout(cfg))
}

func prologTimeout(cfg *Config) time.Duration {
	t := time.Duration(cfg.Conf.PrologEpilogTimeout) * time.Second
	if t <= 0 || cfg.Conf.PrologEpilogTimeout >= 0xfffe {
		return 0
	}
	return t
}
