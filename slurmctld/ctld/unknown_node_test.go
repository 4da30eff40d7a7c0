package ctld

import (
	"context"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// A job killed while its nodes are UNKNOWN (a restarted controller before
// they register) waits for their epilog: only DOWN nodes are skipped
// (deallocate_nodes' IS_NODE_DOWN).
func TestUnknownNodeEpilogAwaited(t *testing.T) {
	ctl, m := attachTestJobs(t)
	ctx := context.Background()
	ctl.Serve(ctx, submitReq(2))
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil {
		t.Fatal(err)
	}
	j := m.Job(1)
	if j == nil || !j.Running() {
		t.Fatalf("job 1 not running: %+v", j)
	}
	ctl.mu.Lock()
	for _, n := range j.Nodes {
		nd := ctl.nodeIndex[n]
		nd.State = msg.NodeStateUnknown | (nd.State &^ msg.NodeStateBase)
	}
	ctl.mu.Unlock()
	if _, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: 1, StepID: jobs.NoVal, StepHetComp: jobs.NoVal},
			Signal: 9}, jobs.Caller{}, cl, now)
	}); err != nil {
		t.Fatal(err)
	}
	if !j.IsCompleting() || len(j.Completing) != len(j.Nodes) {
		t.Errorf("after the kill: completing %v of %v (state %#x), want all", j.Completing, j.Nodes, j.State)
	}
}
