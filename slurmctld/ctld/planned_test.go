package ctld

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// TestMarkPlanned: after a backfill pass only the idle (or otherwise not
// allocated) planned nodes carry NODE_STATE_PLANNED; the previous pass's
// flags are gone; other flags stay.
func TestMarkPlanned(t *testing.T) {
	const (
		idle    = msg.NodeStateIdle
		alloc   = msg.NodeStateAllocated
		planned = msg.NodeStatePlanned
		drain   = msg.NodeStateDrain
	)
	for _, tc := range []struct {
		name        string
		states      []uint32
		planned     []int
		want        []uint32
		wantChanged bool
	}{
		{"idle nodes planned", []uint32{alloc, alloc, idle, idle}, []int{0, 1, 2, 3},
			[]uint32{alloc, alloc, idle | planned, idle | planned}, true},
		{"flag moves", []uint32{idle | planned, idle, idle}, []int{1},
			[]uint32{idle, idle | planned, idle}, true},
		{"allocated since loses it", []uint32{alloc | planned, idle | planned}, []int{0, 1},
			[]uint32{alloc, idle | planned}, true},
		{"nothing planned clears", []uint32{idle | planned | drain, idle}, nil,
			[]uint32{idle | drain, idle}, true},
		{"unchanged", []uint32{idle | planned, alloc}, []int{0, 1},
			[]uint32{idle | planned, alloc}, false},
		{"out of range ignored", []uint32{idle}, []int{-1, 5}, []uint32{idle}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := make([]*Node, len(tc.states))
			for i, s := range tc.states {
				nodes[i] = &Node{Index: i, State: s}
			}
			if got := markPlanned(nodes, tc.planned); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			for i, n := range nodes {
				if n.State != tc.want[i] {
					t.Errorf("node %d: state %#x, want %#x", i, n.State, tc.want[i])
				}
			}
		})
	}
}
