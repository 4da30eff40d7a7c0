package ctld

import (
	"context"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// TestRPCSuspend: REQUEST_SUSPEND's answers as real slurmctld gives them:
// none for an unknown job, ESLURM_ACCESS_DENIED for an ordinary user,
// RESPONSE_JOB_ARRAY_ERRORS for array tasks, RC 0 with the nodes' orders
// to carry out after the reply.
func TestRPCSuspend(t *testing.T) {
	ctl, m := attachTestJobs(t)
	ctx := context.Background()
	if resp := ctl.Serve(ctx, submitReq(1)); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %v", resp.MsgType)
	}
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil || !m.Job(1).Running() {
		t.Fatalf("schedule: %v", err)
	}
	req := func(uid uint32, op uint16, id string) *server.Request {
		return &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_SUSPEND, Version: codec.Current},
			Body: msg.SuspendRequest{Op: op, JobID: 0xfffffffe, JobIDStr: msg.Str(id)}, Identity: auth.Identity{UID: uid, GID: uid}}
	}
	rc := func(resp *server.Response) int {
		t.Helper()
		if resp == nil || resp.MsgType != msgtype.RESPONSE_SLURM_RC {
			t.Fatalf("response %+v", resp)
		}
		return int(int32(resp.Body.(codec.ReturnCode).RC))
	}
	if resp := ctl.Serve(ctx, req(0, msg.SuspendJob, "99")); resp != nil {
		t.Errorf("unknown job answered: %+v", resp)
	}
	if got := rc(ctl.Serve(ctx, req(1000, msg.SuspendJob, "1"))); got != slurmerr.ESLURM_ACCESS_DENIED {
		t.Errorf("ordinary user: %d", got)
	}
	resp := ctl.Serve(ctx, req(0, msg.SuspendJob, "1_3"))
	want := &msg.JobArrayErrorsResponse{Errors: []msg.JobArrayError{{ErrorCode: slurmerr.ESLURM_INVALID_JOB_ID, JobArrayID: msg.Str("1_3")}}}
	if resp == nil || resp.MsgType != msgtype.RESPONSE_JOB_ARRAY_ERRORS || !reflect.DeepEqual(resp.Body, want) {
		t.Errorf("task of a plain job: %+v", resp)
	}
	resp = ctl.Serve(ctx, req(0, msg.SuspendJob, "1"))
	if got := rc(resp); got != 0 || resp.After == nil {
		t.Fatalf("suspend: %d, after %v", got, resp.After != nil)
	}
	if j := m.Job(1); j.Base() != msg.JobSuspended {
		t.Errorf("state %#x", j.State)
	}
	// As cons_tres: the suspended job's cores go back (the node is idle
	// again for the scheduler and node info); its memory stays.
	if n := node(ctl, "n1"); n.Base() != msg.NodeStateIdle || n.RunJobs != 0 || n.AllocCPUs != 0 {
		t.Errorf("n1 with the job suspended: state %#x run %d cpus %d", n.State, n.RunJobs, n.AllocCPUs)
	}
	if got := rc(ctl.Serve(ctx, req(0, msg.ResumeJob, "1"))); got != 0 || m.Job(1).Base() != msg.JobRunning {
		t.Errorf("resume: %d %#x", got, m.Job(1).State)
	}
	if n := node(ctl, "n1"); n.Base() != msg.NodeStateAllocated || n.RunJobs != 1 || n.AllocCPUs == 0 {
		t.Errorf("n1 with the job resumed: state %#x run %d cpus %d", n.State, n.RunJobs, n.AllocCPUs)
	}
	if got := rc(ctl.Serve(ctx, req(0, msg.ResumeJob, "1"))); got != slurmerr.ESLURM_JOB_NOT_SUSPENDED {
		t.Errorf("resume again: %d", got)
	}
}
