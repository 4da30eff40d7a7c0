package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// The job queries until a job manager replaces these handlers
// (Controller.Handle): there are no jobs, and these answers say exactly
// that, as real slurmctld says it with an empty queue.

// rpcJobInfoEmpty answers REQUEST_JOB_INFO and REQUEST_JOB_USER_INFO with
// an empty list.
func (c *Controller) rpcJobInfoEmpty(_ context.Context, r *server.Request) *server.Response {
	if r.Header.MsgType == msgtype.REQUEST_JOB_INFO {
		req := bodyOf[msg.JobInfoRequest](r.Body)
		c.mu.RLock()
		boot := c.boot
		c.mu.RUnlock()
		if noChange(req.LastUpdate, boot) {
			return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
		}
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_INFO, Body: &msg.JobInfoMsg{LastUpdate: c.now().Unix()}}
}

// rpcJobInfoSingleNone: no job has this id.
func (c *Controller) rpcJobInfoSingleNone(context.Context, *server.Request) *server.Response {
	return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
}

// rpcStepInfoEmpty: no steps at all, and no job to ask about.
func (c *Controller) rpcStepInfoEmpty(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobStepInfoRequest](r.Body)
	if req.StepID.JobID != noVal {
		return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_STEP_INFO, Body: &msg.StepInfoMsg{LastUpdate: c.now().Unix()}}
}

// notYet are the RPCs of the job, step, node-creation and reservation
// families this controller does not serve yet. They are answered
// ESLURM_NOT_SUPPORTED ("Requested operation not supported on this
// system"), which the real commands print, rather than EINVAL, which
// would suggest a malformed request. A job manager installs its own
// handlers over these with Controller.Handle.
var notYet = []msgtype.Type{
	msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_RESOURCE_ALLOCATION, msgtype.REQUEST_JOB_WILL_RUN,
	msgtype.REQUEST_UPDATE_JOB, msgtype.REQUEST_KILL_JOB, msgtype.REQUEST_CANCEL_JOB_STEP,
	msgtype.REQUEST_JOB_STEP_CREATE, msgtype.REQUEST_SUSPEND, msgtype.REQUEST_JOB_REQUEUE,
	msgtype.REQUEST_JOB_ALLOCATION_INFO, msgtype.REQUEST_HET_JOB_ALLOC_INFO, msgtype.REQUEST_JOB_READY,
	msgtype.REQUEST_COMPLETE_JOB_ALLOCATION, msgtype.REQUEST_STEP_COMPLETE, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT,
	msgtype.MESSAGE_EPILOG_COMPLETE, msgtype.REQUEST_TOP_JOB, msgtype.REQUEST_JOB_NOTIFY,
	msgtype.REQUEST_UPDATE_JOB_STEP, msgtype.REQUEST_CREATE_NODE, msgtype.REQUEST_DELETE_NODE,
	msgtype.REQUEST_BATCH_SCRIPT, msgtype.REQUEST_JOB_SBCAST_CRED, msgtype.REQUEST_COMPLETE_PROLOG,
}

func (c *Controller) rpcNotYet(_ context.Context, r *server.Request) *server.Response {
	c.log.Error(fmt.Sprintf("%s: not supported by goslurm's slurmctld yet", r.Header.MsgType))
	return server.RC(slurmerr.ESLURM_NOT_SUPPORTED)
}
