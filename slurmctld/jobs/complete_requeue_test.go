package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// eslurmdExecveFailed is a slurmd-side launch failure: not one of the
// codes _slurm_rpc_complete_batch_script treats as benign, so a
// requeueable batch job is requeued (and the node drained).
const eslurmdExecveFailed = 4020

// failOnce runs job id to its node and fails it there: the batch
// completion carries a slurmd-side error, then the node cleans up.
func failOnce(t *testing.T, m *Manager, cl *Cluster, id uint32, now int64) {
	t.Helper()
	mustSchedule(t, m, cl, now)
	j := m.Job(id)
	if !j.Running() {
		t.Fatalf("job %d not started: state %#x reason %d", id, j.State, j.Reason)
	}
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, SlurmRC: eslurmdExecveFailed,
		NodeName: msg.Str(j.BatchHost)}, root, cl, now+1); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		if _, err := m.EpilogComplete(id, n, root, now+1); err != nil {
			t.Fatal(err)
		}
	}
}

// _job_complete counts the requeues of a batch job after a failure
// (batch_flag, shown as BatchFlag); the one that takes batch_flag past
// MAX_BATCH_REQUEUE (5) holds the job: REQUEUE_HOLD, JobHoldMaxRequeue,
// priority 0, BatchFlag back to 1. Restarts counts every requeue. Only an
// operator may release it; the REQUEUE_HOLD flag stays until it starts.
func TestFailureRequeueLimit(t *testing.T) {
	cl := testCluster()
	jr := &MemJournal{}
	m := newTestManager(jr)
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	now := t0
	for k := 1; k <= maxBatchRequeue; k++ {
		failOnce(t, m, cl, id, now)
		now += 1000 // past the requeued job's begin time
		j := m.Job(id)
		ji := m.Info(j, cl, len(cl.Nodes), 0, now)
		held := k == maxBatchRequeue
		wantFlag := uint16(1 + k)
		if held {
			wantFlag = 1
		}
		if !j.Pending() || j.IsCompleting() || ji.RestartCnt != uint16(k) || ji.BatchFlag != wantFlag ||
			(j.State&msg.JobRequeueHold != 0) != held || (j.Priority == 0) != held {
			t.Fatalf("after failure %d: state %#x restarts %d batchflag %d priority %d", k, j.State, ji.RestartCnt, ji.BatchFlag, j.Priority)
		}
	}
	// Held: the scheduler leaves it with its reason.
	mustSchedule(t, m, cl, now)
	j := m.Job(id)
	if !j.Pending() || j.Reason != ReasonMaxRequeue || j.Hold != HoldMaxRequeue {
		t.Fatalf("held job: state %#x reason %d hold %d", j.State, j.Reason, j.Hold)
	}
	// The counter and the hold are saved.
	if got := replay(t, jr.Records); tableJSON(t, got) != tableJSON(t, m) {
		t.Fatalf("replayed table differs:\n%s\n%s", tableJSON(t, got), tableJSON(t, m))
	}

	release := msg.NewJobDesc()
	release.JobID, release.Priority = id, Infinite
	if _, err := m.Update(release, alice, cl, now+1); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("user release: %v", err)
	}
	if _, err := m.Update(release, root, cl, now+2); err != nil {
		t.Fatalf("root release: %v", err)
	}
	if j := m.Job(id); j.Priority == 0 || j.State != msg.JobPending|msg.JobRequeueHold {
		t.Fatalf("released: state %#x priority %d", j.State, j.Priority)
	}
	mustSchedule(t, m, cl, now+3)
	if j := m.Job(id); j.State != msg.JobRunning {
		t.Fatalf("restarted: state %#x", j.State)
	}
}

// A node going DOWN requeues without counting: kill_running_job_by_node_name
// leaves batch_flag alone.
func TestNodeDownRequeueNotCounted(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	now := t0
	for k := 1; k <= maxBatchRequeue+1; k++ {
		mustSchedule(t, m, cl, now)
		j := m.Job(id)
		if !j.Running() {
			t.Fatalf("round %d: not started, state %#x", k, j.State)
		}
		if _, err := m.NodeDown(j.Nodes[0], cl, now+1); err != nil {
			t.Fatal(err)
		}
		now += 1000
	}
	j := m.Job(id)
	if ji := m.Info(j, cl, len(cl.Nodes), 0, now); ji.BatchFlag != 1 || ji.RestartCnt != maxBatchRequeue+1 || j.Hold != HoldNone {
		t.Fatalf("batchflag %d restarts %d hold %d", ji.BatchFlag, ji.RestartCnt, j.Hold)
	}
}
