package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// rpcUpdateStep is _slurm_rpc_step_update (scontrol update StepId=J[.S]
// TimeLimit=): the job's owner or an operator.
func (c *Controller) rpcUpdateStep(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.UpdateJobStepRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.UpdateStep(req, caller(r), now)
	})
	switch slurmerr.Code(err) {
	case 0:
		c.log.Info(fmt.Sprintf("update_step: JobId=%d StepId=%s time limit set to %d", req.JobID, stepIDText(req.StepID), req.TimeLimit))
	case slurmerr.ESLURM_USER_ID_MISSING:
		c.log.Error(fmt.Sprintf("Security violation, STEP_UPDATE RPC from uid %d", r.Identity.UID))
	case slurmerr.ESLURM_INVALID_JOB_ID:
		c.log.Error(fmt.Sprintf("update_step: invalid JobId=%d", req.JobID))
	}
	return c.reply(out, err, func() *server.Response { return server.RC(0) })
}

func stepIDText(id uint32) string {
	if id == noVal {
		return "ALL"
	}
	return fmt.Sprint(id)
}
