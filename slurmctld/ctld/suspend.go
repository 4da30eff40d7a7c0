package ctld

import (
	"context"
	"fmt"
	"strconv"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// rpcSuspend serves REQUEST_SUSPEND (scontrol suspend / resume). As
// slurmctld 22.05 it does not answer at all when no job has the id, and
// answers RESPONSE_JOB_ARRAY_ERRORS when the request named array tasks.
func (c *Controller) rpcSuspend(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SuspendRequest](r.Body)
	var rep jobs.SuspendReply
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		rep, o, err = m.Suspend(req, caller(r), cl, now)
		return o, err
	})
	op := "unknown"
	switch req.Op {
	case msg.SuspendJob:
		op = "suspend"
	case msg.ResumeJob:
		op = "resume"
	}
	id := req.JobIDStr.Value
	if !req.JobIDStr.Valid {
		id = strconv.FormatUint(uint64(req.JobID), 10)
	}
	if err != nil || rep.NoReply {
		code := slurmerr.ESLURM_INVALID_JOB_ID
		if err != nil {
			code = slurmerr.Code(err)
		}
		if code == slurmerr.ESLURM_ACCESS_DENIED {
			c.log.Error(fmt.Sprintf("SECURITY VIOLATION: Attempt to suspend job from user %d", r.Identity.UID))
		}
		c.log.Info(fmt.Sprintf("_slurm_rpc_suspend(%s) for %s %s", op, id, slurmerr.Message(code)))
	} else {
		c.log.Info(fmt.Sprintf("_slurm_rpc_suspend(%s) for %s", op, id))
		// A suspended job's cores are free; a resumed one rejoins
		// gang scheduling (the pass brings the others in line).
		c.kickScheduler()
	}
	if rep.NoReply && err == nil {
		return nil
	}
	return c.reply(out, err, func() *server.Response {
		if rep.Array != nil {
			return &server.Response{MsgType: msgtype.RESPONSE_JOB_ARRAY_ERRORS, Body: rep.Array}
		}
		return rcOK()
	})
}
