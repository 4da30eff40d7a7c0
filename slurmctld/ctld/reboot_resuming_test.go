package ctld

import (
	"context"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestResumingMembership: which reboot requests put a node in 22.05's
// rs_node_bitmap (exactly nextstate=resume, ASAP's UNDRAIN added after),
// what takes it out, and how a restart builds it again (the RESUME bit of
// the next state, which NO_VAL has too).
func TestResumingMembership(t *testing.T) {
	asap := rebootFlagASAP
	for _, tc := range []struct {
		name            string
		next            uint32
		flags           uint16
		want, restarted bool
	}{
		{"plain", noVal, 0, false, true},
		{"nextstate=resume", msg.NodeResume, 0, true, true},
		{"nextstate=down", msg.NodeStateDown, 0, false, false},
		{"ASAP", noVal, asap, false, true},
		{"ASAP nextstate=resume", msg.NodeResume, asap, true, true},
		{"ASAP nextstate=down", msg.NodeStateDown, asap, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newTestController(t, "ResumeTimeout=20\n")
			registerBooted(t, c, "n1", 1000)
			if rc := c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: tc.next, Flags: tc.flags}, 0); rc != 0 {
				t.Fatal(rc)
			}
			n := node(c, "n1")
			if n.resuming != tc.want || (schedNodeState(n)&sched.NodeResuming != 0) != tc.want {
				t.Errorf("requested: resuming %v, want %v", n.resuming, tc.want)
			}
			queue(c)
			if n.resuming != tc.want {
				t.Errorf("issued: resuming %v, want %v", n.resuming, tc.want)
			}
			r, _ := restarted(t, saveAndRead(t, c), false, clk.t)
			if got := node(r, "n1").resuming; got != tc.restarted {
				t.Errorf("after a restart: resuming %v, want %v", got, tc.restarted)
			}
			full, _ := restarted(t, saveAndRead(t, c), true, clk.t)
			if got := node(full, "n1").resuming; got != tc.restarted {
				t.Errorf("after -R: resuming %v, want %v", got, tc.restarted)
			}
		})
	}

	// What takes a node out: back from the reboot, the time-out, and a
	// state change by scontrol update (cancel_reboot too).
	resume := func(c *Controller) {
		c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: msg.NodeResume}, 0)
	}
	for _, tc := range []struct {
		name  string
		issue bool
		event func(*Controller, *fakeClock)
	}{
		{"back", true, func(c *Controller, _ *fakeClock) { registerBooted(t, c, "n1", 1) }},
		{"timed out", true, func(c *Controller, clk *fakeClock) {
			clk.t = clk.t.Add(21 * time.Second)
			c.mu.Lock()
			c.checkRebootNodes(c.now().Unix())
			c.mu.Unlock()
		}},
		{"cancelled", false, func(c *Controller, _ *fakeClock) {
			c.UpdateNode(&msg.UpdateNodeRequest{NodeNames: msg.Str("n1"), NodeState: msg.NodeStateRebootCancel, Weight: noVal}, 0)
		}},
		{"drained", true, func(c *Controller, _ *fakeClock) {
			c.UpdateNode(&msg.UpdateNodeRequest{NodeNames: msg.Str("n1"), NodeState: msg.NodeStateDrain, Reason: msg.Str("x"), Weight: noVal}, 0)
		}},
	} {
		t.Run("out: "+tc.name, func(t *testing.T) {
			c, clk := newTestController(t, "ResumeTimeout=20\n")
			registerBooted(t, c, "n1", 1000)
			c.mu.Lock()
			c.nodeIndex["n1"].State = msg.NodeStateAllocated
			c.mu.Unlock()
			clk.t = clk.t.Add(5 * time.Second)
			resume(c)
			if tc.issue {
				c.mu.Lock()
				c.nodeIndex["n1"].State = msg.NodeStateIdle | msg.NodeStateRebootRequested
				c.mu.Unlock()
				queue(c)
			}
			clk.t = clk.t.Add(time.Second)
			tc.event(c, clk)
			if n := node(c, "n1"); n.resuming {
				t.Errorf("still resuming: %+v", viewOf(n))
			}
		})
	}
}

// TestResumingJobWaits: a job that needs a node rebooting with
// nextstate=resume waits for Resources (with nextstate=down too, for
// more nodes than the partition has up: slurmctld takes a node out of
// its available nodes when it issues the reboot, and its scheduler's
// node count test says so), and starts on the node once it is back.
func TestResumingJobWaits(t *testing.T) {
	for _, tc := range []struct {
		next uint32
		want uint16
	}{
		{msg.NodeResume, uint16(sched.ReasonResources)},
		{msg.NodeStateDown, uint16(sched.ReasonResources)},
	} {
		ctl, m := attachTestJobs(t)
		ctx := context.Background()
		if rc := ctl.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n3"), NextState: tc.next}, 0); rc != 0 {
			t.Fatal(rc)
		}
		queue(ctl)
		ctl.Serve(ctx, submitReq(3))
		schedule := func() jobs.Outcome {
			out, err := ctl.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
				return m.Schedule(cl, now, false)
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if out := schedule(); len(out.Actions) != 0 {
			t.Fatalf("next %#x: started on a rebooting node: %+v", tc.next, out.Actions)
		}
		if j := m.Job(1); j == nil || j.Running() || j.Reason != tc.want {
			t.Fatalf("next %#x: job %+v, want reason %d", tc.next, j, tc.want)
		}
		if tc.next != msg.NodeResume {
			continue
		}
		// Booted this second (the test clock stands still).
		registerBooted(t, ctl, "n3", 0)
		if out := schedule(); len(out.Actions) != 1 || !m.Job(1).Running() {
			t.Fatalf("node back: %+v %+v", out.Actions, m.Job(1))
		}
	}
}
