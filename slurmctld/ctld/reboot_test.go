package ctld

import (
	"context"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rebootView is what scontrol shows of a node during a reboot.
type rebootView struct {
	state  uint32
	next   uint32
	reason string
}

func viewOf(n *Node) rebootView { return rebootView{n.State, n.NextState, n.Reason} }

// registerBooted registers node name as booted up secs seconds ago.
func registerBooted(t *testing.T, c *Controller, name string, up uint32) {
	t.Helper()
	r := reg(name, 4, 1000, 100)
	r.UpTime = up
	if _, err := c.ValidateRegistration(r, 0x2600); err != nil {
		t.Fatal(err)
	}
}

func queue(c *Controller) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queueReboots(c.now().Unix())
}

// TestRebootSequence follows an idle node through scontrol reboot's
// steps as 22.05's controller takes them: requested, issued (DOWN, the
// slurmd told), a registration from the old boot ignored, the
// registration from the new boot returning it as the next state says.
func TestRebootSequence(t *testing.T) {
	const (
		req    = msg.NodeStateRebootRequested
		issued = msg.NodeStateRebootIssued
		idle   = msg.NodeStateIdle
		down   = msg.NodeStateDown
		drain  = msg.NodeStateDrain
	)
	for _, tc := range []struct {
		name                    string
		req                     msg.RebootNodesRequest
		requested, sent, booted rebootView
	}{
		{
			name:      "plain",
			req:       msg.RebootNodesRequest{NextState: noVal},
			requested: rebootView{idle | req, noVal, "reboot requested"},
			sent:      rebootView{down | issued, noVal, "reboot requested : reboot issued"},
			booted:    rebootView{idle, noVal, ""},
		},
		{
			name:      "reason",
			req:       msg.RebootNodesRequest{NextState: noVal, Reason: msg.Str("new kernel")},
			requested: rebootView{idle | req, noVal, "new kernel"},
			sent:      rebootView{down | issued, noVal, "new kernel : reboot issued"},
			booted:    rebootView{idle, noVal, ""},
		},
		{
			name:      "nextstate=down",
			req:       msg.RebootNodesRequest{NextState: down},
			requested: rebootView{idle | req, down, "reboot requested"},
			sent:      rebootView{down | issued, down, "reboot requested : reboot issued"},
			booted:    rebootView{down, noVal, "reboot requested : reboot issued : reboot complete"},
		},
		{
			name:      "nextstate=resume",
			req:       msg.RebootNodesRequest{NextState: msg.NodeResume},
			requested: rebootView{idle | req, msg.NodeResume, "reboot requested"},
			sent:      rebootView{down | issued, msg.NodeResume, "reboot requested : reboot issued"},
			booted:    rebootView{idle, noVal, ""},
		},
		{
			name:      "ASAP",
			req:       msg.RebootNodesRequest{NextState: noVal, Flags: rebootFlagASAP},
			requested: rebootView{idle | drain | req, msg.NodeResume | msg.NodeStateUndrain, "Reboot ASAP"},
			sent:      rebootView{down | drain | issued, msg.NodeResume | msg.NodeStateUndrain, "Reboot ASAP : reboot issued"},
			booted:    rebootView{idle, noVal, ""},
		},
		{
			name:      "ASAP nextstate=down reason",
			req:       msg.RebootNodesRequest{NextState: down, Flags: rebootFlagASAP, Reason: msg.Str("fw")},
			requested: rebootView{idle | drain | req, down | msg.NodeStateUndrain, "fw"},
			sent:      rebootView{down | drain | issued, down | msg.NodeStateUndrain, "fw : reboot issued"},
			booted:    rebootView{down, noVal, "fw : reboot issued : reboot complete"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newTestController(t, "")
			registerBooted(t, c, "n1", 1000)
			clk.t = clk.t.Add(10 * time.Second)
			r := tc.req
			r.NodeList = msg.Str("n1")
			if rc := c.RebootNodes(&r, 0); rc != 0 {
				t.Fatalf("RebootNodes: %d", rc)
			}
			if got := viewOf(node(c, "n1")); got != tc.requested {
				t.Errorf("requested: %+v, want %+v", got, tc.requested)
			}
			// A second request changes nothing.
			again := msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: down, Reason: msg.Str("other")}
			if rc := c.RebootNodes(&again, 0); rc != 0 || viewOf(node(c, "n1")) != tc.requested {
				t.Errorf("second request: %d %+v", rc, viewOf(node(c, "n1")))
			}
			clk.t = clk.t.Add(time.Second)
			sent, pending := queue(c)
			if len(sent) != 1 || sent[0] != "n1" || pending {
				t.Fatalf("queued %v pending %v", sent, pending)
			}
			n := node(c, "n1")
			if got := viewOf(n); got != tc.sent || n.BootReqTime != clk.t.Unix() {
				t.Errorf("issued: %+v boot_req %d, want %+v", got, n.BootReqTime, tc.sent)
			}
			if sent, _ := queue(c); len(sent) != 0 {
				t.Errorf("issued twice: %v", sent)
			}
			// slurmd still up from the old boot: ignored.
			clk.t = clk.t.Add(2 * time.Second)
			registerBooted(t, c, "n1", 1013)
			if got := viewOf(node(c, "n1")); got != tc.sent {
				t.Errorf("registration from the old boot: %+v, want %+v", got, tc.sent)
			}
			// Booted a second ago: the reboot is done.
			registerBooted(t, c, "n1", 1)
			if got := viewOf(node(c, "n1")); got != tc.booted {
				t.Errorf("after the reboot: %+v, want %+v", got, tc.booted)
			}
			if n.BootReqTime != 0 {
				t.Errorf("boot_req_time left at %d", n.BootReqTime)
			}
		})
	}
}

// TestRebootTimeout: a node that does not come back within ResumeTimeout
// goes DOWN with "reboot timed out", not before.
func TestRebootTimeout(t *testing.T) {
	c, clk := newTestController(t, "ResumeTimeout=20\n")
	registerBooted(t, c, "n1", 1000)
	if rc := c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: msg.NodeResume}, 0); rc != 0 {
		t.Fatal(rc)
	}
	queue(c)
	check := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.checkRebootNodes(c.now().Unix())
	}
	clk.t = clk.t.Add(20 * time.Second)
	if !check() || !node(c, "n1").Has(msg.NodeStateRebootIssued) {
		t.Fatalf("timed out early: %+v", viewOf(node(c, "n1")))
	}
	clk.t = clk.t.Add(time.Second)
	if check() {
		t.Errorf("still waiting after the time-out")
	}
	want := rebootView{msg.NodeStateDown, msg.NodeResume, "reboot requested : reboot issued : reboot timed out"}
	n := node(c, "n1")
	if got := viewOf(n); got != want || n.BootReqTime != 0 {
		t.Errorf("timed out: %+v boot_req %d, want %+v", got, n.BootReqTime, want)
	}
	// The node boots late: ReturnToService=1 leaves it DOWN, its
	// reason kept.
	registerBooted(t, c, "n1", 1)
	if got := viewOf(node(c, "n1")); got.state != msg.NodeStateDown || got.reason != want.reason {
		t.Errorf("late boot: %+v", got)
	}
}

// TestRebootWaits: only idle or down nodes are rebooted; others wait.
func TestRebootWaits(t *testing.T) {
	c, _ := newTestController(t, "")
	registerBooted(t, c, "n1", 1000)
	registerBooted(t, c, "n2", 1000)
	c.mu.Lock()
	c.nodeIndex["n1"].State = msg.NodeStateAllocated
	c.nodeIndex["n2"].State = msg.NodeStateIdle | msg.NodeStateCompleting
	c.setNodeDown(c.nodeIndex["n3"], "gone", c.now().Unix())
	c.mu.Unlock()
	if rc := c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n[1-3]"), NextState: noVal}, 0); rc != 0 {
		t.Fatal(rc)
	}
	sent, pending := queue(c)
	if len(sent) != 1 || sent[0] != "n3" || !pending {
		t.Errorf("sent %v pending %v", sent, pending)
	}
	if got := viewOf(node(c, "n3")); got.reason != "gone : reboot issued" {
		t.Errorf("n3: %+v", got)
	}
	c.mu.Lock()
	c.nodeIndex["n1"].State = msg.NodeStateIdle | msg.NodeStateRebootRequested
	c.mu.Unlock()
	if sent, _ := queue(c); len(sent) != 1 || sent[0] != "n1" {
		t.Errorf("n1 idle again: sent %v", sent)
	}
}

// TestCancelReboot: scontrol cancel_reboot before the reboot is issued
// clears the request (ASAP's drain and reason too); after, or without a
// request, it is an invalid state change.
func TestCancelReboot(t *testing.T) {
	cancel := func(c *Controller, name string) int {
		rc, _ := c.UpdateNode(&msg.UpdateNodeRequest{NodeNames: msg.Str(name), NodeState: msg.NodeStateRebootCancel, Weight: noVal}, 0)
		return rc
	}
	for _, tc := range []struct {
		name    string
		req     msg.RebootNodesRequest
		drained bool
		want    rebootView
	}{
		{"plain", msg.RebootNodesRequest{NextState: noVal}, false, rebootView{msg.NodeStateAllocated, noVal, ""}},
		{"nextstate=down", msg.RebootNodesRequest{NextState: msg.NodeStateDown, Reason: msg.Str("k")}, false, rebootView{msg.NodeStateAllocated, noVal, ""}},
		{"ASAP", msg.RebootNodesRequest{NextState: noVal, Flags: rebootFlagASAP}, false, rebootView{msg.NodeStateAllocated, noVal, ""}},
		// Drained before: ASAP's undo leaves the drain and reason.
		{"ASAP on drained", msg.RebootNodesRequest{NextState: noVal, Flags: rebootFlagASAP}, true,
			rebootView{msg.NodeStateAllocated | msg.NodeStateDrain, noVal, "maint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, "")
			registerBooted(t, c, "n1", 1000)
			c.mu.Lock()
			n := c.nodeIndex["n1"]
			n.State = msg.NodeStateAllocated
			if tc.drained {
				c.drainNode(n, "maint", 0, c.now().Unix())
			}
			c.mu.Unlock()
			r := tc.req
			r.NodeList = msg.Str("n1")
			if rc := c.RebootNodes(&r, 0); rc != 0 {
				t.Fatal(rc)
			}
			if sent, _ := queue(c); len(sent) != 0 {
				t.Fatalf("allocated node rebooted: %v", sent)
			}
			if rc := cancel(c, "n1"); rc != 0 {
				t.Fatalf("cancel: %d", rc)
			}
			if got := viewOf(n); got != tc.want {
				t.Errorf("cancelled: %+v, want %+v", got, tc.want)
			}
			if rc := cancel(c, "n1"); rc != slurmerr.ESLURM_INVALID_NODE_STATE {
				t.Errorf("cancel again: %d", rc)
			}
		})
	}
	c, _ := newTestController(t, "")
	registerBooted(t, c, "n1", 1000)
	c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: noVal}, 0)
	queue(c)
	if rc := cancel(c, "n1"); rc != slurmerr.ESLURM_INVALID_NODE_STATE {
		t.Errorf("cancel of an issued reboot: %d", rc)
	}
}

// TestRebootRequestChecks: who may ask, bad node lists, ALL.
func TestRebootRequestChecks(t *testing.T) {
	c, _ := newTestController(t, "")
	ctx := context.Background()
	serve := func(uid uint32, nodes string) int {
		t.Helper()
		resp := c.Serve(ctx, &server.Request{
			Header: codec.Header{MsgType: msgtype.REQUEST_REBOOT_NODES, Version: codec.Current},
			Body:   msg.RebootNodesRequest{NodeList: msg.Str(nodes), NextState: noVal}, Identity: auth.Identity{UID: uid, GID: uid},
		})
		if resp == nil || resp.MsgType != msgtype.RESPONSE_SLURM_RC {
			t.Fatalf("response %+v", resp)
		}
		return int(int32(resp.Body.(codec.ReturnCode).RC))
	}
	if rc := serve(1000, "n1"); rc != eacces {
		t.Errorf("ordinary user: %d", rc)
	}
	for _, bad := range []string{"nosuch", "n[1-4]", "n[1"} {
		if rc := serve(0, bad); rc != slurmerr.ESLURM_INVALID_NODE_NAME {
			t.Errorf("%s: %d", bad, rc)
		}
	}
	if n := node(c, "n1"); n.Has(msg.NodeStateRebootRequested) {
		t.Errorf("refused request marked n1")
	}
	// FUTURE nodes are left out of ALL.
	c.mu.Lock()
	c.nodeIndex["h1"].State = msg.NodeStateFuture
	c.mu.Unlock()
	if rc := c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("all"), NextState: noVal}, 0); rc != 0 {
		t.Fatal(rc)
	}
	for _, name := range []string{"n1", "n2", "n3", "h1"} {
		if got, want := node(c, name).Has(msg.NodeStateRebootRequested), name != "h1"; got != want {
			t.Errorf("%s requested %v, want %v", name, got, want)
		}
	}
}

// TestRebootStep: the loop's pass issues reboots at once and checks the
// time-outs only when a PERIODIC_TIMEOUT boundary (from the controller's
// start) has passed, as 22.05's background loop; it stops when nothing
// is left to do.
func TestRebootStep(t *testing.T) {
	c, clk := newTestController(t, "ResumeTimeout=5\n")
	registerBooted(t, c, "n1", 1000)
	clk.t = clk.t.Add(2 * time.Second)
	c.RebootNodes(&msg.RebootNodesRequest{NodeList: msg.Str("n1"), NextState: noVal}, 0)
	send, more := c.rebootStep()
	if len(send) != 1 || !more {
		t.Fatalf("first pass: %v %v", send, more)
	}
	// Past ResumeTimeout, before the boundary at 30 s: not checked yet.
	clk.t = clk.t.Add(20 * time.Second)
	if send, more := c.rebootStep(); len(send) != 0 || !more || !node(c, "n1").Has(msg.NodeStateRebootIssued) {
		t.Fatalf("before the boundary: %v %v %+v", send, more, viewOf(node(c, "n1")))
	}
	clk.t = clk.t.Add(10 * time.Second)
	if _, more := c.rebootStep(); more || node(c, "n1").Reason != "reboot requested : reboot issued : reboot timed out" {
		t.Fatalf("after the boundary: %v %+v", more, viewOf(node(c, "n1")))
	}
}
