package ctld

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

func TestSchedNodeState(t *testing.T) {
	for _, tc := range []struct {
		state uint32
		want  sched.NodeState
	}{
		{msg.NodeStateIdle, sched.NodeUp},
		{msg.NodeStateAllocated, sched.NodeUp},
		{msg.NodeStateUnknown, sched.NodeDown},
		{msg.NodeStateDown, sched.NodeDown | sched.NodeDownBase},
		{msg.NodeStateIdle | msg.NodeStateDrain, sched.NodeDrain},
		{msg.NodeStateIdle | msg.NodeStateNoRespond, sched.NodeNoRespond},
		{msg.NodeStateIdle | msg.NodeStateFail, sched.NodeFail},
		{msg.NodeStateFuture, sched.NodeFuture},
		{msg.NodeStateIdle | msg.NodeStateInvalidReg, sched.NodeDown},
	} {
		if got := schedNodeState(&Node{State: tc.state}); got != tc.want {
			t.Errorf("state %#x: %v, want %v", tc.state, got, tc.want)
		}
	}
}

// attachTestJobs gives a test controller a job manager and registers
// n1..n3.
func attachTestJobs(t *testing.T) (*Controller, *jobs.Manager) {
	t.Helper()
	ctl, _ := newTestController(t, "")
	cfg := jobs.DefaultConfig()
	m := jobs.New(cfg, &jobs.MemJournal{})
	if err := ctl.AttachJobs(JobsOptions{Manager: m}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := ctl.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	return ctl, m
}

func submitReq(minNodes uint32) *server.Request {
	d := msg.NewJobDesc()
	d.Script = msg.Str("#!/bin/sh\ntrue\n")
	d.Environment = []msg.NullString{msg.Str("PATH=/bin")}
	d.WorkDir = msg.Str("/tmp")
	d.MinNodes = minNodes
	return &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_SUBMIT_BATCH_JOB, Version: codec.Current},
		Body: d, Identity: auth.Identity{UID: 0, GID: 0}}
}

// TestJobsWiring: a submitted job is scheduled onto a node (the node
// table shows the allocation), listed by REQUEST_JOB_INFO, and handed to
// jobs.NodeDown when its node goes DOWN.
func TestJobsWiring(t *testing.T) {
	ctl, m := attachTestJobs(t)
	ctx := context.Background()
	resp := ctl.Serve(ctx, submitReq(2))
	sub, ok := resp.Body.(*msg.SubmitResponse)
	if resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB || !ok || sub.JobID != 1 {
		t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
	}
	out, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	})
	if err != nil || len(out.Actions) != 1 {
		t.Fatalf("schedule: %v %+v", err, out.Actions)
	}
	if l, ok := out.Actions[0].(jobs.LaunchBatch); !ok || l.Node != "n1" || l.JobID != 1 {
		t.Fatalf("action %+v", out.Actions[0])
	}
	for _, name := range []string{"n1", "n2"} {
		if n := node(ctl, name); n.Base() != msg.NodeStateAllocated || n.AllocCPUs != 1 || n.RunJobs != 1 {
			t.Errorf("%s: state %#x alloc %d run %d", name, n.State, n.AllocCPUs, n.RunJobs)
		}
	}
	if n := node(ctl, "n3"); n.Base() != msg.NodeStateIdle || n.AllocCPUs != 0 {
		t.Errorf("n3: state %#x alloc %d", n.State, n.AllocCPUs)
	}
	info := ctl.Serve(ctx, &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_JOB_INFO}, Body: &msg.JobInfoRequest{}})
	if ji, ok := info.Body.(*msg.JobInfoMsg); !ok || len(ji.Jobs) != 1 || ji.Jobs[0].JobState != msg.JobRunning {
		t.Fatalf("job info: %+v", info.Body)
	}

	// n2 goes DOWN: the job is requeued (batch, requeue allowed) and its
	// other node told to terminate it.
	ctl.mu.Lock()
	ctl.setNodeDown(ctl.nodeIndex["n2"], "Not responding", 1_800_000_010)
	down := ctl.downNodesWithJobs()
	ctl.mu.Unlock()
	if len(down) != 1 || down[0] != "n2" {
		t.Fatalf("down nodes with jobs: %v", down)
	}
	out, err = ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.NodeDown("n2", cl, now)
	})
	if err != nil || len(out.Actions) == 0 {
		t.Fatalf("node down: %v %+v", err, out.Actions)
	}
	if j := m.Job(1); j.Running() {
		t.Errorf("job still running after its node went down: %#x", j.State)
	}
	ctl.mu.Lock()
	down = ctl.downNodesWithJobs()
	ctl.mu.Unlock()
	if len(down) != 0 {
		t.Errorf("still down with jobs: %v", down)
	}
}

func TestNodeStateSaveRestore(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	ctl.mu.Lock()
	ctl.drainNode(ctl.nodeIndex["n2"], "disk swap", 0, 1_800_000_001)
	ctl.setNodeDown(ctl.nodeIndex["n3"], "gone", 1_800_000_002)
	saved := ctl.savedNodes()
	ctl.mu.Unlock()
	path := filepath.Join(t.TempDir(), "node_state.json")
	if err := writeNodeState(path, saved); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNodeState(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("read: %v %+v", err, got)
	}
	fresh, _ := newTestController(t, "")
	fresh.RestoreNodes(got)
	if n := node(fresh, "n2"); !n.IsDrain() || n.Reason != "disk swap" {
		t.Errorf("n2: %#x %q", n.State, n.Reason)
	}
	if n := node(fresh, "n3"); !n.IsDown() || n.Reason != "gone" {
		t.Errorf("n3: %#x %q", n.State, n.Reason)
	}
	if n := node(fresh, "n1"); n.IsDrain() || n.IsDown() {
		t.Errorf("n1: %#x", n.State)
	}
	if none, err := ReadNodeState(filepath.Join(t.TempDir(), "missing")); err != nil || none != nil {
		t.Errorf("missing file: %v %v", none, err)
	}
}
