package ctld

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// powerController is a test controller with power saving configured
// (programs that exist and are executable) and registered nodes n1..n3.
func powerController(t *testing.T, on bool) (*Controller, *fakeClock) {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	extra := ""
	if on {
		extra = "SuspendTime=60\nSuspendProgram=" + prog + "\nResumeProgram=" + prog + "\n"
	}
	c, clk := newTestController(t, extra)
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	c.powerReconfig()
	c.mu.Unlock()
	return c, clk
}

func TestUpdateNodePower(t *testing.T) {
	upd := func(st uint32) *msg.UpdateNodeRequest {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str("n1")
		r.NodeState = st
		return &r
	}
	const (
		down  = msg.NodeStatePowerDown
		up    = msg.NodeStatePowerUp
		asap  = msg.NodeStatePowerDown | msg.NodeStatePowerDrain
		force = msg.NodeStatePowerDown | msg.NodeStatePoweredDown
	)
	for _, tc := range []struct {
		name  string
		on    bool
		prep  uint32 // flags set on n1 first
		req   uint32
		rc    int
		state string
	}{
		{name: "off: refused", req: down, rc: slurmerr.ESLURM_INVALID_NODE_STATE, state: "IDLE"},
		{name: "off: power_up refused", req: up, rc: slurmerr.ESLURM_INVALID_NODE_STATE, state: "IDLE"},
		{name: "power_down", on: true, req: down, state: "IDLE+POWER_DOWN"},
		{name: "power_down_asap", on: true, req: asap, state: "IDLE+DRAIN+POWER_DOWN"},
		{name: "power_down_force", on: true, req: force, state: "IDLE+POWER_DOWN"},
		{name: "power_down while powering down", on: true, prep: msg.NodeStatePoweringDown, req: down, state: "IDLE+POWERING_DOWN"},
		{name: "power_down repeated", on: true, prep: msg.NodeStatePoweredDown, req: down, state: "IDLE+POWER_DOWN"},
		{name: "power_down cancels a reboot", on: true, prep: msg.NodeStateRebootRequested, req: down, state: "IDLE+POWER_DOWN"},
		{name: "power_up of a powered-down node", on: true, prep: msg.NodeStatePoweredDown, req: up, state: "IDLE+POWERED_DOWN+POWER_UP"},
		{name: "power_up repeated", on: true, prep: msg.NodeStatePoweringUp, req: up, state: "IDLE+POWERED_DOWN+POWERING_UP+POWER_UP"},
		{name: "power_up of an up node", on: true, req: up, state: "IDLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := powerController(t, tc.on)
			n := node(c, "n1")
			c.mu.Lock()
			n.State |= tc.prep
			c.mu.Unlock()
			rc, _ := c.UpdateNode(upd(tc.req), 0)
			if rc != tc.rc {
				t.Errorf("rc %d, want %d", rc, tc.rc)
			}
			c.mu.RLock()
			defer c.mu.RUnlock()
			if got := psStates([]*Node{n}); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
		})
	}
}

// TestPowerRestore: a node saved powered down comes back so with power
// saving configured, IDLE without.
func TestPowerRestore(t *testing.T) {
	for _, on := range []bool{true, false} {
		c, _ := powerController(t, on)
		c2, _ := newTestController(t, "")
		if on {
			c2.cfg = c.cfg
		}
		n2, n3 := node(c, "n2"), node(c, "n3")
		c.mu.Lock()
		n2.State |= msg.NodeStatePoweredDown
		n3.State |= msg.NodeStatePoweringUp
		saved := c.savedState()
		c.mu.Unlock()
		c2.RestoreNodes(saved.Nodes)
		want := "IDLE+POWERED_DOWN"
		wantUp := "+POWERING_UP"
		if !on {
			want, wantUp = "", ""
		}
		if got := psStates([]*Node{node(c2, "n2")}); got != want {
			t.Errorf("power saving %v: n2 %s, want %s", on, got, want)
		}
		if got := psStates([]*Node{node(c2, "n3")}); got != wantUp {
			t.Errorf("power saving %v: n3 %s, want %s", on, got, wantUp)
		}
		if on && !node(c2, "n3").psBooting {
			t.Error("n3 powering up is not awaited after the restart")
		}
	}
}
