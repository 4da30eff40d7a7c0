package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// mux maps the message types a 22.05 slurmd serves to their handlers.
// Anything else is answered EINVAL by server.Mux.
func (d *Daemon) mux() server.Mux {
	h := func(f func(context.Context, *server.Request) *server.Response) server.Handler {
		return server.HandlerFunc(f)
	}
	ctl := func(what string, f func(context.Context, *server.Request) *server.Response) server.Handler {
		return d.controllerOnly(what, f)
	}
	return server.Mux{
		msgtype.REQUEST_PING:                     ctl("ping", d.rpcPing),
		msgtype.REQUEST_NODE_REGISTRATION_STATUS: ctl("node registration", d.rpcPing),
		msgtype.REQUEST_HEALTH_CHECK:             ctl("health check", d.rpcHealthCheck),
		msgtype.REQUEST_ACCT_GATHER_UPDATE:       ctl("acct_gather_update", d.rpcAcctGatherUpdate),
		msgtype.REQUEST_RECONFIGURE:              h(d.rpcReconfigure),
		msgtype.REQUEST_RECONFIGURE_WITH_CONFIG:  h(d.rpcReconfigure),
		msgtype.REQUEST_SHUTDOWN:                 h(d.rpcShutdown),
		msgtype.REQUEST_REBOOT_NODES:             h(d.rpcReboot),
		msgtype.REQUEST_TERMINATE_JOB:            ctl("terminate job", d.rpcKillJob),
		msgtype.REQUEST_KILL_TIMELIMIT:           ctl("kill timelimit", d.rpcKillJob),
		msgtype.REQUEST_KILL_PREEMPTED:           ctl("kill preempted", d.rpcKillJob),
		msgtype.REQUEST_ABORT_JOB:                ctl("abort job", d.rpcKillJob),
		msgtype.REQUEST_BATCH_JOB_LAUNCH:         ctl("batch launch", d.rpcBatchLaunch),
		msgtype.REQUEST_LAUNCH_PROLOG:            h(d.rpcLaunchProlog),
		msgtype.REQUEST_LAUNCH_TASKS:             h(d.rpcLaunchTasks),
		msgtype.REQUEST_SIGNAL_TASKS:             h(d.rpcSignalTasks),
		msgtype.REQUEST_TERMINATE_TASKS:          h(d.rpcSignalTasks),
		msgtype.REQUEST_SUSPEND_INT:              h(d.rpcSuspendInt),
		msgtype.REQUEST_FILE_BCAST:               h(d.rpcFileBcast),
	}
}

// controllerOnly answers ESLURM_USER_ID_MISSING to anyone but root and
// SlurmUser, as slurmd's controller RPCs do.
func (d *Daemon) controllerOnly(what string, f func(context.Context, *server.Request) *server.Response) server.Handler {
	return server.HandlerFunc(func(ctx context.Context, r *server.Request) *server.Response {
		if !d.config().Authorized(r.Identity.UID) {
			d.log.Error(fmt.Sprintf("Security violation, %s RPC from uid %d", what, r.Identity.UID))
			return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
		}
		return f(ctx, r)
	})
}

// rpcPing answers REQUEST_PING and REQUEST_NODE_REGISTRATION_STATUS with
// RESPONSE_PING_SLURMD; for the latter a registration follows the reply.
func (d *Daemon) rpcPing(_ context.Context, r *server.Request) *server.Response {
	st := d.opts.Stats()
	resp := &server.Response{MsgType: msgtype.RESPONSE_PING_SLURMD,
		Body: msg.PingSlurmdResponse{CPULoad: st.CPULoad, FreeMem: st.FreeMem}}
	reg := r.Header.MsgType == msgtype.REQUEST_NODE_REGISTRATION_STATUS
	resp.After = func(err error) {
		// Stalled file transfers go on each ping, as in slurmd.
		d.bcast.Cleanup()
		// If the reply did not get through, slurmd registers in the
		// hope of not being marked down.
		if reg || err != nil {
			ctx, cancel := context.WithTimeout(d.ctx, 2*d.config().MessageTimeout)
			defer cancel()
			if err := d.Register(ctx); err != nil {
				d.log.Error(fmt.Sprintf("Unable to register: %v", err))
			}
		}
	}
	return resp
}

// rpcHealthCheck replies first, then runs HealthCheckProgram.
func (d *Daemon) rpcHealthCheck(context.Context, *server.Request) *server.Response {
	resp := server.RC(0)
	prog := d.config().Conf.HealthCheckProgram
	if prog != "" {
		resp.After = func(error) {
			env := []string{"SLURMD_NODENAME=" + d.config().NodeName}
			if err := runScript(d.ctx, prog, env, 60*time.Second); err != nil {
				d.log.Error(fmt.Sprintf("health_check: %s: %v", prog, err))
			}
		}
	}
	return resp
}

// rpcAcctGatherUpdate reports one (empty) energy sensor: this node has no
// acct_gather_energy plugin.
func (d *Daemon) rpcAcctGatherUpdate(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_ACCT_GATHER_UPDATE,
		Body: msg.AcctGatherNodeResponse{NodeName: msg.Str(d.config().NodeName), Energy: []msg.NodeEnergy{{}}}}
}

// rpcReconfigure never replies; the configless payload of
// REQUEST_RECONFIGURE_WITH_CONFIG is not used (this slurmd reads its own
// slurm.conf).
func (d *Daemon) rpcReconfigure(_ context.Context, r *server.Request) *server.Response {
	if !d.config().Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation, reconfig RPC from uid %d", r.Identity.UID))
		return nil
	}
	d.log.Info("Reconfigure request received")
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.Reconfigure()
	}()
	return nil
}

// rpcShutdown never replies.
func (d *Daemon) rpcShutdown(_ context.Context, r *server.Request) *server.Response {
	if !d.config().Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation, shutdown RPC from uid %d", r.Identity.UID))
		return nil
	}
	d.log.Info("Shutdown request received")
	if d.opts.Shutdown != nil {
		go d.opts.Shutdown()
	}
	return nil
}

// rpcLaunchProlog (PrologFlags=Alloc): an unauthorized sender gets no
// reply at all; otherwise RC 0 at once, then the Prolog, then
// REQUEST_COMPLETE_PROLOG to the controller.
func (d *Daemon) rpcLaunchProlog(_ context.Context, r *server.Request) *server.Response {
	if !d.config().Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation, prolog RPC from uid %d", r.Identity.UID))
		return nil
	}
	req, ok := r.Body.(msg.PrologLaunch)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	first, claimErr := d.claimProlog(req.JobID, func() error { return d.creds.insertJob(req.JobID) })
	if claimErr != nil {
		d.log.Error(fmt.Sprintf("prolog of JobId=%d: cannot save credential state: %v", req.JobID, claimErr))
	}
	resp := server.RC(0)
	resp.After = func(error) {
		rc := uint32(0)
		err := claimErr
		switch {
		case err != nil:
		case first:
			err = d.jobProlog(req.JobID, req.UID, req.GID, req.Nodes.Value, req.WorkDir.Value)
		default:
			// Already run (or running) for this job: never twice.
			err = d.waitProlog(d.ctx, req.JobID)
		}
		if err != nil {
			rc = uint32(slurmerr.ESLURMD_PROLOG_FAILED)
		}
		done := msg.CompleteProlog{JobID: req.JobID, NodeName: msg.Str(d.config().NodeName), PrologRC: rc}
		body, err := d.encode(msgtype.REQUEST_COMPLETE_PROLOG, done)
		if err != nil {
			d.log.Error(err.Error())
			return
		}
		// Retried until delivered, as slurmd does.
		for delay := time.Second; d.ctx.Err() == nil; delay = min(2*delay, 30*time.Second) {
			if err := d.controller().CallRC(d.ctx, msgtype.REQUEST_COMPLETE_PROLOG, body); err == nil {
				return
			} else {
				d.log.Error(fmt.Sprintf("REQUEST_COMPLETE_PROLOG for JobId=%d: %v", req.JobID, err))
			}
			select {
			case <-d.ctx.Done():
			case <-time.After(delay):
			}
		}
	}
	return resp
}

// rpcSignalTasks is REQUEST_SIGNAL_TASKS and REQUEST_TERMINATE_TASKS: the
// sender must own the job (uid taken from its running steps) or be root or
// SlurmUser.
func (d *Daemon) rpcSignalTasks(ctx context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.SignalTasks)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	job := req.StepID.JobID
	owner, steps := d.jobSteps(job)
	if len(steps) == 0 {
		return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if r.Identity.UID != owner && !d.config().Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation: signal_tasks request from uid %d for JobId=%d owned by uid %d", r.Identity.UID, job, owner))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	sig := int(req.Signal)
	if r.Header.MsgType == msgtype.REQUEST_TERMINATE_TASKS {
		sig = 9
	}
	var targets []uint32
	switch {
	case req.Flags&(msg.KillFullJob|msg.KillJobBatch) != 0:
		targets = []uint32{NoVal}
	case req.Flags&msg.KillStepsOnly != 0:
		for _, s := range steps {
			if s.StepID != msg.StepIDBatch {
				targets = append(targets, s.StepID)
			}
		}
	default:
		targets = []uint32{req.StepID.StepID}
	}
	for _, step := range targets {
		if err := d.steps.Signal(ctx, job, step, sig, req.Flags, r.Identity.UID); err != nil {
			return server.RC(errCode(err))
		}
	}
	return server.RC(0)
}

// jobSteps returns the owner and live steps of job.
func (d *Daemon) jobSteps(job uint32) (uint32, []msg.StepID) {
	var owner uint32
	var ids []msg.StepID
	for _, s := range d.steps.Running() {
		if s.ID.JobID == job {
			owner = s.Owner
			ids = append(ids, s.ID)
		}
	}
	return owner, ids
}

var errNoJob = slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}

// errCode is the Slurm code a failed operation is answered with.
func errCode(err error) int {
	if err == nil {
		return 0
	}
	if c := slurmerr.Code(err); c != 0 {
		return c
	}
	return slurmerr.SLURM_ERROR
}
