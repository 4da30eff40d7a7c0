package ctld

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
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
