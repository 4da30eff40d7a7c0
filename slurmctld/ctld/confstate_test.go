package ctld

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// State= of a NodeName line as state_str2int reads it.
func TestConfigState(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
	}{
		{"", msg.NodeStateUnknown},
		{"unknown", msg.NodeStateUnknown},
		{"DOWN", msg.NodeStateDown},
		{"Idle", msg.NodeStateIdle},
		{"ALLOCATED", msg.NodeStateAllocated},
		{"MIXED", msg.NodeStateMixed},
		{"FUTURE", msg.NodeStateFuture},
		{"FAIL", msg.NodeStateIdle | msg.NodeStateFail},
		{"failing", msg.NodeStateIdle | msg.NodeStateFail},
		{"DRAIN", msg.NodeStateUnknown | msg.NodeStateDrain},
		{"DRAINED", msg.NodeStateUnknown | msg.NodeStateDrain},
		{"CLOUD", msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweredDown},
	}
	for _, tc := range tests {
		got, err := configState(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("configState(%q) = %#x, %v; want %#x", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"RESUME", "POWER_DOWN", "ALLOC", "IDLE+DRAIN", "UNDRAIN"} {
		if _, err := configState(bad); err == nil {
			t.Errorf("configState(%q) accepted", bad)
		}
	}
}
