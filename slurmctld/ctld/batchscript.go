package ctld

import (
	"context"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rpcBatchScript answers REQUEST_BATCH_SCRIPT with the job's script, or a
// return code as _slurm_rpc_dump_batch_script does (unknown job, not the
// owner, no script).
func (c *Controller) rpcBatchScript(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobIDShowRequest](r.Body)
	c.mu.Lock()
	script, err := c.jobs.m.BatchScript(req.JobID, r.Identity.UID)
	c.mu.Unlock()
	if err != nil {
		return server.RC(slurmerr.Code(err))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_BATCH_SCRIPT, Body: &msg.BatchScriptResponse{Script: msg.Str(script)}}
}
