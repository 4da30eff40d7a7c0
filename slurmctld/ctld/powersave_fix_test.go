package ctld

import (
	"context"
	"os"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// After ResumeTimeout a node is DOWN+POWERED_DOWN+NOT_RESPONDING. An
// admin's state=resume or state=idle puts it back in service: update_node
// make_node_avail()s a powered-down node even though it does not respond,
// so jobs land on it and wake it. state=idle leaves it not busy
// (last_busy 0) as it is powered down.
func TestUpdateNodeResumePoweredDown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		state    uint32
		lastBusy bool // LastBusy reset to 0
	}{
		{"resume", msg.NodeResume, true},
		{"idle", msg.NodeStateIdle, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := powerController(t, true)
			n := node(c, "n1")
			c.mu.Lock()
			n.State = msg.NodeStateDown | msg.NodeStatePoweredDown | msg.NodeStateNoRespond
			n.LastBusy = 12345
			c.mu.Unlock()
			r := msg.NewUpdateNodeRequest()
			r.NodeNames = msg.Str("n1")
			r.NodeState = tc.state
			if rc, err := c.UpdateNode(&r, 0); rc != 0 || err != nil {
				t.Fatalf("rc %d err %v", rc, err)
			}
			c.mu.RLock()
			defer c.mu.RUnlock()
			if n.Base() != msg.NodeStateIdle || !n.Has(msg.NodeStatePoweredDown) {
				t.Fatalf("state %s, want IDLE+POWERED_DOWN", StateString(n.State))
			}
			if st := schedNodeState(n); !st.Usable() {
				t.Errorf("%s: scheduler state %#x is not usable", StateString(n.State), st)
			}
			if tc.lastBusy && n.LastBusy != 0 {
				t.Errorf("LastBusy %d, want 0", n.LastBusy)
			}
		})
	}
}

// Waking a powered-down node, by the power saving pass or by the node
// registering, tells accounting the node is up, which clears its reason
// (POWER_DOWN_ASAP, "ResumeTimeout reached", ...).
func TestPowerWakeClearsReason(t *testing.T) {
	t.Run("pass", func(t *testing.T) {
		nodes, idx, parts := psNodes(1, 0, 10)
		nodes[0].State |= msg.NodeStatePoweredDown | msg.NodeStatePowerUp
		nodes[0].Reason, nodes[0].ReasonTime, nodes[0].ReasonUID = "POWER_DOWN_ASAP", 5, 0
		ps := &powerState{}
		if w := ps.pass(nodes, idx, parts, nil, make([]int, 1), 1000); w.resume != "n1" {
			t.Fatalf("resume %q, want n1", w.resume)
		}
		if n := nodes[0]; n.Reason != "" || n.ReasonTime != 0 || n.ReasonUID != noVal {
			t.Errorf("reason %q time %d uid %d kept after wake", n.Reason, n.ReasonTime, n.ReasonUID)
		}
	})
	t.Run("register", func(t *testing.T) {
		c, _ := powerController(t, true)
		n := node(c, "n1")
		c.mu.Lock()
		n.State = msg.NodeStateIdle | msg.NodeStatePoweredDown
		n.Reason, n.ReasonTime, n.ReasonUID = "power down", 5, 0
		c.mu.Unlock()
		if _, err := c.ValidateRegistration(reg("n1", 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		if n.Has(msg.NodeStatePoweredDown) {
			t.Fatalf("state %s after registration", StateString(n.State))
		}
		if n.Reason != "" || n.ReasonTime != 0 {
			t.Errorf("reason %q time %d kept after a powered-down node registered", n.Reason, n.ReasonTime)
		}
	})
}

// DRAIN or FAIL of an allocated node that is powered down or powering up
// kills (requeues) its jobs, which would otherwise wait for a node that
// is not coming; an allocated node that is up keeps its jobs.
func TestUpdateNodeDrainPoweringUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags uint32
		req   uint32
		kill  bool
	}{
		{"drain powering up", msg.NodeStatePoweringUp | msg.NodeStateNoRespond, msg.NodeStateDrain, true},
		{"fail powered down", msg.NodeStatePoweredDown, msg.NodeStateFail, true},
		{"drain up", 0, msg.NodeStateDrain, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := powerController(t, true)
			if err := c.AttachJobs(JobsOptions{Manager: jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})}); err != nil {
				t.Fatal(err)
			}
			n := node(c, "n1")
			c.mu.Lock()
			n.State = msg.NodeStateAllocated | tc.flags
			c.mu.Unlock()
			r := msg.NewUpdateNodeRequest()
			r.NodeNames = msg.Str("n1")
			r.NodeState = tc.req
			r.Reason = msg.Str("admin")
			// The update kills the jobs before it lets go of the
			// lock: it hands back the rest of that work.
			rc, _, settle := c.updateNode(&r, 0)
			if rc != 0 {
				t.Fatalf("rc %d", rc)
			}
			if got := settle != nil; got != tc.kill {
				t.Errorf("jobs killed %v, want %v", got, tc.kill)
			}
			if settle != nil {
				settle(context.Background())
			}
		})
	}
}

// Changing a partition's nodes sets the nodes' power saving times again
// (update_part calls power_save_set_timeouts): a node that joins a
// SuspendTime=INFINITE partition is no longer powered down when idle.
func TestPartNodesPowerTimeouts(t *testing.T) {
	dir := t.TempDir()
	prog := dir + "/prog"
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := newTestController(t, "SuspendTime=60\nSuspendProgram="+prog+"\nResumeProgram="+prog+
		"\nPartitionName=nosusp Nodes=h1 SuspendTime=INFINITE\n")
	c.mu.Lock()
	c.powerReconfig()
	c.mu.Unlock()
	if n := node(c, "n1"); n.psSuspendTime != 60 {
		t.Fatalf("n1 SuspendTime %d before, want 60", n.psSuspendTime)
	}
	r := partReq("nosusp")
	r.Nodes = msg.Str("n1,h1")
	if rc := c.UpdatePartition(r, false); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := node(c, "n1"); n.psSuspendTime != psInfinite {
		t.Errorf("n1 SuspendTime %d after joining a SuspendTime=INFINITE partition, want INFINITE", n.psSuspendTime)
	}
}

// A pending power down takes a node out of scheduling only once it is
// idle (make_node_idle clears it from avail_node_bitmap then); a busy one
// keeps taking jobs. Unavailable is not DOWN: resuming a suspended job on
// such a node is allowed (only DOWN nodes refuse it).
func TestSchedPowerDownState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  uint32
		usable bool
	}{
		{"idle power_down", msg.NodeStateIdle | msg.NodeStatePowerDown, false},
		{"allocated power_down", msg.NodeStateAllocated | msg.NodeStatePowerDown, true},
		{"mixed power_down", msg.NodeStateMixed | msg.NodeStatePowerDown, true},
		{"powering down", msg.NodeStateIdle | msg.NodeStatePoweringDown, false},
		{"powered down", msg.NodeStateIdle | msg.NodeStatePoweredDown, true},
		{"powering up", msg.NodeStateIdle | msg.NodeStatePoweringUp | msg.NodeStateNoRespond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := schedNodeState(&Node{State: tc.state})
			if st.Usable() != tc.usable {
				t.Errorf("%s: sched state %#x usable %v, want %v", StateString(tc.state), st, st.Usable(), tc.usable)
			}
			if st&sched.NodeDown != 0 {
				t.Errorf("%s: sched state %#x is DOWN", StateString(tc.state), st)
			}
		})
	}
}

// state=resume of a node powering down makes it powered down at once,
// without waiting for SuspendTimeout.
func TestUpdateNodeResumePoweringDown(t *testing.T) {
	c, _ := powerController(t, true)
	n := node(c, "n1")
	c.mu.Lock()
	n.State = msg.NodeStateIdle | msg.NodeStatePoweringDown
	n.PowerSaveReqTime = 1000
	c.mu.Unlock()
	r := msg.NewUpdateNodeRequest()
	r.NodeNames = msg.Str("n1")
	r.NodeState = msg.NodeResume
	if rc, err := c.UpdateNode(&r, 0); rc != 0 || err != nil {
		t.Fatalf("rc %d err %v", rc, err)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n.Has(msg.NodeStatePoweringDown) || !n.Has(msg.NodeStatePoweredDown) || n.PowerSaveReqTime != 0 {
		t.Errorf("flags %#x req time %d, want POWERED_DOWN at once", n.State&^msg.NodeStateBase, n.PowerSaveReqTime)
	}
}
