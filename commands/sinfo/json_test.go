package main

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/dataout"
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestNodeStateDump(t *testing.T) {
	tests := []struct {
		st    uint32
		state string
		flags string
	}{
		{sc.NodeStateIdle, "idle", ""},
		{sc.NodeStateIdle | sc.NodeStateDrain, "idle", "DRAIN"},
		// node_state_flags[] order, not bit order.
		{sc.NodeStateDown | sc.NodeStateNoRespond | sc.NodeStateDrain | sc.NodeStateCloud, "down", "CLOUD,DRAIN,NOT_RESPONDING"},
		{sc.NodeStateUnknown | sc.NodeStateNoRespond, "unknown", "NOT_RESPONDING"},
		// Bits without a name come last, as "?", lowest first.
		{sc.NodeStateMixed | sc.NodeStateUndrain | sc.NodeStatePowerDrain | sc.NodeStateMaint, "mixed", "MAINTENANCE,?,?"},
		// NO_VAL (next state after reboot unset): no valid base, no flags.
		{noVal, "invalid", ""},
	}
	for _, tc := range tests {
		var flags []string
		l := nodeStateFlags(tc.st)
		for _, line := range strings.Split(string(dataout.JSON(l)), "\n") {
			line = strings.Trim(strings.TrimSpace(line), `",`)
			if line != "[" && line != "]" {
				flags = append(flags, line)
			}
		}
		if got := longNodeState(tc.st); got != tc.state {
			t.Errorf("%#x: state %q, want %q", tc.st, got, tc.state)
		}
		if got := strings.Join(flags, ","); got != tc.flags {
			t.Errorf("%#x: flags %q, want %q", tc.st, got, tc.flags)
		}
	}
}

func TestNodePartitions(t *testing.T) {
	nodes := make([]msg.Node, 3)
	parts := []msg.Partition{
		{Name: msg.Str("long"), NodeInx: msg.HexBitmap{NBits: 3, Hex: msg.Str("0x6")}},
		{Name: msg.Str("debug"), NodeInx: msg.HexBitmap{NBits: 3, Hex: msg.Str("0x7")}},
		{Name: msg.Str("empty"), NodeInx: msg.HexBitmap{Null: true}},
	}
	got := nodePartitions(nodes, parts)
	want := [][]string{{"debug"}, {"long", "debug"}, {"long", "debug"}}
	for i := range want {
		if strings.Join(got[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("node %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestSetNodeMixed(t *testing.T) {
	nodes := []msg.Node{
		{NodeState: sc.NodeStateAllocated, CPUsEfctv: 4, SelectNodeInfo: msg.SelectNodeInfo{AllocCPUs: 2}},
		{NodeState: sc.NodeStateAllocated, CPUsEfctv: 4, SelectNodeInfo: msg.SelectNodeInfo{AllocCPUs: 4}},
		// Unlike sinfo's text output, SHOW_MIXED also turns a draining
		// node mixed.
		{NodeState: sc.NodeStateAllocated | sc.NodeStateDrain, CPUsEfctv: 4, SelectNodeInfo: msg.SelectNodeInfo{AllocCPUs: 1}},
		{NodeState: sc.NodeStateIdle, CPUsEfctv: 4},
	}
	setNodeMixed(nodes)
	want := []uint32{sc.NodeStateMixed, sc.NodeStateAllocated, sc.NodeStateMixed | sc.NodeStateDrain, sc.NodeStateIdle}
	for i, w := range want {
		if nodes[i].NodeState != w {
			t.Errorf("node %d: state %#x, want %#x", i, nodes[i].NodeState, w)
		}
	}
}
