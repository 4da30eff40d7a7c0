package ctld

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/trigger"
)

// setTrig sets a trigger as root through the table's RPC rules.
func setTrig(t *testing.T, c *Controller, res uint16, resID string, typ uint32, program string) {
	t.Helper()
	c.mu.RLock()
	rc := c.trig.Set(c.triggerSetRequest(c.cfg, 0, 0, []msg.Trigger{{ResType: res, ResID: msg.Str(resID), TrigType: typ,
		Offset: trigger.OffsetZero, UserID: noVal, Program: msg.Str(program)}}), c.trigCluster(), func(string) {})
	c.mu.RUnlock()
	if rc != 0 {
		t.Fatalf("set: rc %d", rc)
	}
}

// trigPass runs a pass and returns each program's arguments.
func trigPass(c *Controller) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, l := range c.trig.Process(c.now().Unix(), c.trigCluster()) {
		out = append(out, strings.Join(l.Argv[1:], " "))
	}
	return out
}

// TestTriggerNodeEvents: node updates note the events 22.05 notes.
func TestTriggerNodeEvents(t *testing.T) {
	c, _ := newTestController(t, "")
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	trigPass(c) // forget the registrations
	setTrig(t, c, trigger.ResNode, "*", trigger.TypeDown, "/bin/true down")
	setTrig(t, c, trigger.ResNode, "n[2-3]", trigger.TypeDrained, "/bin/true drained")
	setTrig(t, c, trigger.ResNode, "*", trigger.TypeUp, "/bin/true up")
	setTrig(t, c, trigger.ResNode, "*", trigger.TypeReconfig, "/bin/true reconfig")
	update := func(nodes string, state uint32) {
		r := &msg.UpdateNodeRequest{NodeNames: msg.Str(nodes), NodeState: state, Reason: msg.Str("t"), Weight: noVal}
		if rc, _ := c.UpdateNode(r, 0); rc != 0 {
			t.Fatalf("update %s: rc %d", nodes, rc)
		}
		c.trig.Reconfig() // as rpcUpdateNode
	}
	update("n1", msg.NodeStateDown)
	update("n2", msg.NodeStateDrain)
	want := []string{"down n1", "drained n2", "reconfig reconfig"}
	if got := trigPass(c); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("first pass %q, want %q", got, want)
	}
	update("n1", msg.NodeResume)
	if got := trigPass(c); strings.Join(got, "|") != "up n1" {
		t.Errorf("second pass %q, want [up n1]", got)
	}
}

// TestTriggerStateFile: the table is saved and read back by a new
// controller; with Recover off it is not.
func TestTriggerStateFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), TriggerStateName)
	c, _ := newTestController(t, "")
	if err := c.AttachTriggers(TriggerOptions{StateFile: file, Recover: true}); err != nil {
		t.Fatal(err)
	}
	setTrig(t, c, trigger.ResNode, "n1", trigger.TypeDown, "/bin/true")
	c.saveTriggers(t.Context())
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s trigger.State
	if err := json.Unmarshal(data, &s); err != nil || len(s.Triggers) != 1 {
		t.Fatalf("saved %s: %v", data, err)
	}
	c2, _ := newTestController(t, "")
	if err := c2.AttachTriggers(TriggerOptions{StateFile: file, Recover: true}); err != nil {
		t.Fatal(err)
	}
	if got := c2.trig.Get(); len(got) != 1 || got[0].ResID.Value != "n1" {
		t.Errorf("recovered %+v", got)
	}
	c3, _ := newTestController(t, "")
	if err := c3.AttachTriggers(TriggerOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	if got := c3.trig.Get(); len(got) != 0 {
		t.Errorf("recovered with -c: %+v", got)
	}
	// Damaged state is an error unless ignored.
	if err := os.WriteFile(file, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	c4, _ := newTestController(t, "")
	if err := c4.AttachTriggers(TriggerOptions{StateFile: file, Recover: true}); err == nil {
		t.Error("damaged file accepted")
	}
	if err := c4.AttachTriggers(TriggerOptions{StateFile: file, Recover: true, IgnoreState: true}); err != nil {
		t.Error(err)
	}
}
