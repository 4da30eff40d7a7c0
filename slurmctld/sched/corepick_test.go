package sched

import (
	"slices"
	"testing"
)

// _block_sync_core_bitmap's best fit over sockets: the smallest socket
// that holds what is left, else the largest, lowest free cores first.
func TestBlockCoresBestFit(t *testing.T) {
	mk := func(busy ...int) []bool {
		a := make([]bool, 8)
		for k := range a {
			a[k] = !slices.Contains(busy, k)
		}
		return a
	}
	for _, tc := range []struct {
		avail []bool
		want  int
		out   []uint16
	}{
		{mk(0), 4, []uint16{4, 5, 6, 7}},
		{mk(0), 3, []uint16{1, 2, 3}},
		{mk(), 2, []uint16{0, 1}},
		{mk(4, 5), 2, []uint16{6, 7}},
		{mk(0), 6, []uint16{1, 2, 4, 5, 6, 7}},
		{mk(0, 4, 5), 5, []uint16{1, 2, 3, 6, 7}},
		{mk(0, 1, 2, 3, 4), 4, []uint16{5, 6, 7}},
	} {
		if got := blockCores(tc.avail, 2, 4, tc.want); !slices.Equal(got, tc.out) {
			t.Errorf("avail %v want %d: %v, want %v", tc.avail, tc.want, got, tc.out)
		}
	}
}
