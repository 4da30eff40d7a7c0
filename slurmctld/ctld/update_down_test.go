package ctld

import (
	"context"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// scontrol update state=down kills the node's jobs before the update
// releases the lock (update_node): a resume of the node coming in right
// after cannot leave them running.
func TestUpdateDownKillsUnderLock(t *testing.T) {
	ctl, m := attachTestJobs(t)
	ctx := context.Background()
	ctl.Serve(ctx, submitReq(1))
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil {
		t.Fatal(err)
	}
	j := m.Job(1)
	if j == nil || !j.Running() || len(j.Nodes) != 1 {
		t.Fatalf("job 1 not running on one node: %+v", j)
	}
	node := j.Nodes[0]
	upd := func(st uint32) *msg.UpdateNodeRequest {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str(node)
		r.Reason = msg.Str("dead")
		r.NodeState = st
		return &r
	}
	rc, _, settle := ctl.updateNode(upd(msg.NodeStateDown), 0)
	if rc != 0 {
		t.Fatalf("down: rc %d", rc)
	}
	// The resume an admin sends at once, before the first update's
	// reply.
	if rc, _ := ctl.UpdateNode(upd(msg.NodeResume), 0); rc != 0 {
		t.Fatalf("resume: rc %d", rc)
	}
	if settle != nil {
		settle(ctx)
	}
	// Ended or requeued (a batch job NodeFail requeues), not running.
	if j.Running() {
		t.Errorf("job state %#x after its node went DOWN, want not running", j.State)
	}
}
