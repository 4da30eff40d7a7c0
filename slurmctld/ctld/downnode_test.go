package ctld

import (
	"context"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// scontrol update state=down of the node a COMPLETING job waits on lets
// the job go before the reply, as kill_running_job_by_node_name does in
// update_node.
func TestUpdateDownReleasesCompleting(t *testing.T) {
	ctl, m := attachTestJobs(t)
	ctx := context.Background()
	if resp := ctl.Serve(ctx, submitReq(2)); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %+v", resp.Body)
	}
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: 1, StepID: jobs.NoVal, StepHetComp: jobs.NoVal},
			Signal: 9}, jobs.Caller{}, cl, now)
	}); err != nil {
		t.Fatal(err)
	}
	j := m.Job(1)
	if !j.IsCompleting() || len(j.Completing) != 2 {
		t.Fatalf("state %#x completing %v, want both nodes", j.State, j.Completing)
	}
	for i, name := range []string{"n2", "n1"} {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str(name)
		r.NodeState = msg.NodeStateDown
		r.Reason = msg.Str("test")
		if resp := ctl.Serve(ctx, updateNodeReq(&r)); resp.MsgType != msgtype.RESPONSE_SLURM_RC {
			t.Fatalf("update: %v", resp.MsgType)
		}
		ctl.mu.RLock()
		completing, state := append([]string(nil), j.Completing...), j.State
		ctl.mu.RUnlock()
		if i == 0 && (len(completing) != 1 || completing[0] != "n1" || state&msg.JobCompleting == 0) {
			t.Fatalf("after n2 down: completing %v state %#x", completing, state)
		}
		if i == 1 && (len(completing) != 0 || state&msg.JobCompleting != 0) {
			t.Fatalf("after n1 down: completing %v state %#x", completing, state)
		}
	}
}

func updateNodeReq(r *msg.UpdateNodeRequest) *server.Request {
	req := &server.Request{Body: r, Identity: auth.Identity{UID: 0}}
	req.Header.MsgType = msgtype.REQUEST_UPDATE_NODE
	return req
}
