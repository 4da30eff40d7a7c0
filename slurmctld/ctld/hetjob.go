package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// rpcSubmitBatchHet answers REQUEST_SUBMIT_BATCH_HET_JOB (sbatch with
// "#SBATCH hetjob" or ":"): RESPONSE_SUBMIT_BATCH_JOB naming the leader.
func (c *Controller) rpcSubmitBatchHet(ctx context.Context, r *server.Request) *server.Response {
	l := bodyOf[msg.JobDescList](r.Body)
	var resp *msg.SubmitResponse
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		resp, o, err = m.SubmitHet(l.Jobs, submitter(r), cl, now)
		return o, err
	})
	if err != nil {
		c.log.Info(fmt.Sprintf("_slurm_rpc_submit_batch_het_job: %s", slurmerr.Message(slurmerr.Code(err))))
	} else {
		c.log.Info(fmt.Sprintf("_slurm_rpc_submit_batch_het_job: JobId=%d", resp.JobID))
	}
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_SUBMIT_BATCH_JOB, Body: resp}
	})
}

// rpcAllocateHet answers REQUEST_HET_JOB_ALLOCATION (salloc and srun with
// ":"): RESPONSE_HET_JOB_ALLOCATION with one record per component.
func (c *Controller) rpcAllocateHet(ctx context.Context, r *server.Request) *server.Response {
	l := bodyOf[msg.JobDescList](r.Body)
	var resp *msg.HetAllocation
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		resp, o, err = m.AllocateHet(l.Jobs, submitter(r), cl, now)
		return o, err
	})
	if err != nil {
		c.log.Info(fmt.Sprintf("_slurm_rpc_allocate_het_job: %s ", slurmerr.Message(slurmerr.Code(err))))
	}
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_HET_JOB_ALLOCATION, Body: resp}
	})
}

// rpcHetAllocationInfo answers REQUEST_HET_JOB_ALLOC_INFO.
func (c *Controller) rpcHetAllocationInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobAllocInfoRequest](r.Body)
	c.mu.Lock()
	a, err := c.jobs.m.HetAllocationInfo(req.JobID, caller(r))
	c.mu.Unlock()
	if err != nil {
		return server.RC(slurmerr.Code(err))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_HET_JOB_ALLOCATION, Body: a}
}
