package ctld

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
)

// saveAndRead writes c's node state file and reads it back, as a
// controller stopping and starting again does.
func saveAndRead(t *testing.T, c *Controller) *SavedState {
	t.Helper()
	c.mu.RLock()
	st := c.savedState()
	c.mu.RUnlock()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "node_state")
	if err := writeStateFile(path, data); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSavedState(path)
	if err != nil || got == nil {
		t.Fatalf("read: %v %v", got, err)
	}
	return got
}

// restarted is a new controller (slurm.conf's nodes UNKNOWN) that took the
// saved state back: RestoreNodes alone for the default start, then
// RecoverFull for -R, as slurmctld's start-up calls them.
func restarted(t *testing.T, st *SavedState, full bool, at time.Time) (*Controller, *fakeClock) {
	t.Helper()
	c, clk := newTestController(t, "ResumeTimeout=60\n")
	clk.t = at
	c.RestoreNodes(st.Nodes)
	if full {
		c.RecoverFull(st)
	}
	return c, clk
}

// TestRebootSurvivesRestart: a reboot requested (on a busy node) or issued
// before the controller restarts goes on after it, with the default start
// and with -R, as 22.05's node_state keeps the reboot flags, next state,
// reason, boot request time and last response: the requested reboot is
// issued once the node is idle, a registration from before the issued
// reboot is still ignored, the one after it returns the node as the next
// state says, and the time-out counts from the request made before the
// restart.
func TestRebootSurvivesRestart(t *testing.T) {
	const (
		req    = msg.NodeStateRebootRequested
		issued = msg.NodeStateRebootIssued
	)
	for _, full := range []bool{false, true} {
		name := "default start"
		if full {
			name = "-R"
		}
		t.Run(name, func(t *testing.T) {
			c, clk := newTestController(t, "ResumeTimeout=60\n")
			for _, n := range []string{"n1", "n2", "n3"} {
				registerBooted(t, c, n, 1000)
			}
			c.mu.Lock()
			c.nodeIndex["n1"].State = msg.NodeStateAllocated
			c.mu.Unlock()
			clk.t = clk.t.Add(10 * time.Second)
			for _, r := range []msg.RebootNodesRequest{
				{NodeList: msg.Str("n1"), NextState: msg.NodeStateDown, Reason: msg.Str("fw")},
				{NodeList: msg.Str("n2"), NextState: msg.NodeResume},
			} {
				if rc := c.RebootNodes(&r, 0); rc != 0 {
					t.Fatal(rc)
				}
			}
			issuedAt := clk.t.Unix()
			if sent, _ := queue(c); len(sent) != 1 || sent[0] != "n2" {
				t.Fatalf("issued %v", sent)
			}
			lastN1 := node(c, "n1").LastResponse
			st := saveAndRead(t, c)

			// The controller was down 5 s.
			r, rclk := restarted(t, st, full, clk.t.Add(5*time.Second))
			n1, n2, n3 := node(r, "n1"), node(r, "n2"), node(r, "n3")
			wantN1 := rebootView{msg.NodeStateUnknown | req, msg.NodeStateDown, "fw"}
			if full {
				wantN1.state = msg.NodeStateAllocated | req
			}
			if got := viewOf(n1); got != wantN1 || n1.LastResponse != lastN1 {
				t.Errorf("n1 restored: %+v last_response %d, want %+v %d", got, n1.LastResponse, wantN1, lastN1)
			}
			wantN2 := rebootView{msg.NodeStateDown | issued, msg.NodeResume, "reboot requested : reboot issued"}
			if got := viewOf(n2); got != wantN2 || n2.BootReqTime != issuedAt {
				t.Errorf("n2 restored: %+v boot_req %d, want %+v %d", got, n2.BootReqTime, wantN2, issuedAt)
			}
			if got := viewOf(n3); got.next != noVal || n3.Has(req|issued) || n3.BootReqTime != 0 {
				t.Errorf("n3 restored: %+v", got)
			}

			// n1 registers with its job: still waiting for it.
			r.mu.Lock()
			n1.RunJobs = 1
			r.mu.Unlock()
			registerBooted(t, r, "n1", 1020)
			if got := viewOf(n1); got.state != msg.NodeStateAllocated|req {
				t.Errorf("n1 registered: %+v", got)
			}
			// n2's slurmd from before the reboot answers: ignored.
			registerBooted(t, r, "n2", 1020)
			if got := viewOf(n2); got != wantN2 {
				t.Errorf("n2 old boot: %+v", got)
			}
			// The job ends: n1's reboot is issued.
			r.mu.Lock()
			n1.RunJobs = 0
			n1.State = msg.NodeStateIdle | req
			r.mu.Unlock()
			if sent, _ := queue(r); len(sent) != 1 || sent[0] != "n1" {
				t.Errorf("after the restart issued %v", sent)
			}
			// n1 back from its reboot: DOWN, as its next state says.
			rclk.t = rclk.t.Add(10 * time.Second)
			registerBooted(t, r, "n1", 2)
			if got := viewOf(n1); got != (rebootView{msg.NodeStateDown, noVal, "fw : reboot issued : reboot complete"}) {
				t.Errorf("n1 rebooted: %+v", got)
			}
			// n2 never comes back: timed out 60 s after the request
			// made before the restart.
			check := func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.checkRebootNodes(r.now().Unix())
			}
			rclk.t = time.Unix(issuedAt+60, 0)
			check()
			if !n2.Has(issued) {
				t.Errorf("n2 timed out early: %+v", viewOf(n2))
			}
			rclk.t = rclk.t.Add(time.Second)
			check()
			if got := viewOf(n2); got.state != msg.NodeStateDown || got.reason != "reboot requested : reboot issued : reboot timed out" {
				t.Errorf("n2 after the time-out: %+v", got)
			}
		})
	}
}

// TestRebootRestoreRules: what the default start takes back depends on
// slurm.conf's state for the node (the flags only for an UNKNOWN node),
// while the next state, boot request time and last response come back
// for every node; files written before those were saved load as nodes
// with no reboot under way.
func TestRebootRestoreRules(t *testing.T) {
	next := msg.NodeResume
	saved := []SavedNode{
		{Name: "n1", Down: true, State: msg.NodeStateDown | msg.NodeStateRebootIssued | msg.NodeStateMaint,
			Reason: "r", NextState: &next, BootReqTime: 1_799_999_990, LastResponse: 1_799_999_980},
		// h1 is IDLE (set below), not UNKNOWN: no flags come back.
		{Name: "h1", State: msg.NodeStateIdle | msg.NodeStateRebootRequested, NextState: &next, BootReqTime: 5, LastResponse: 6},
		// A version 2 file from before the reboot fields.
		{Name: "n2", Down: true, State: msg.NodeStateDown | msg.NodeStateRebootIssued},
		{Name: "gone", State: msg.NodeStateDown},
	}
	c, _ := newTestController(t, "")
	c.mu.Lock()
	c.nodeIndex["h1"].State = msg.NodeStateIdle
	c.nodeIndex["n2"].NextState, c.nodeIndex["n2"].BootReqTime = msg.NodeStateDown, 7
	c.mu.Unlock()
	c.RestoreNodes(saved)
	for _, tc := range []struct {
		name         string
		state, next  uint32
		bootReq, ans int64
	}{
		{"n1", msg.NodeStateDown | msg.NodeStateRebootIssued | msg.NodeStateMaint, msg.NodeResume, 1_799_999_990, 1_799_999_980},
		{"h1", msg.NodeStateIdle, msg.NodeResume, 5, 6},
		{"n2", msg.NodeStateDown | msg.NodeStateRebootIssued, noVal, 0, 0},
		{"n3", msg.NodeStateUnknown, noVal, 0, 0},
	} {
		n := node(c, tc.name)
		if n.State != tc.state || n.NextState != tc.next || n.BootReqTime != tc.bootReq || n.LastResponse != tc.ans {
			t.Errorf("%s: state %s next %#x boot_req %d last_response %d, want %s %#x %d %d", tc.name,
				StateString(n.State), n.NextState, n.BootReqTime, n.LastResponse, StateString(tc.state), tc.next, tc.bootReq, tc.ans)
		}
	}
}

// TestReadNodeStateV2Reboot reads the fixture of the current format (a
// node whose reboot was issued, with its next state) under both starts.
func TestReadNodeStateV2Reboot(t *testing.T) {
	st, err := ReadSavedState(filepath.Join("testdata", "node_state_v2_reboot.json"))
	if err != nil || st == nil || st.Version != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	for _, full := range []bool{false, true} {
		c, _ := restarted(t, st, full, time.Unix(1_800_000_100, 0))
		n := node(c, "n2")
		want := rebootView{msg.NodeStateDown | msg.NodeStateRebootIssued, msg.NodeResume, "maint : reboot issued"}
		if got := viewOf(n); got != want || n.BootReqTime != 1_800_000_050 || n.LastResponse != 1_800_000_040 {
			t.Errorf("-R %v: %+v boot_req %d last_response %d", full, got, n.BootReqTime, n.LastResponse)
		}
		if n := node(c, "n1"); n.NextState != noVal || n.Has(msg.NodeStateRebootRequested|msg.NodeStateRebootIssued) {
			t.Errorf("-R %v: n1 %+v", full, viewOf(n))
		}
	}
}
