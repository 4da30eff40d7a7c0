package ctld

import (
	"slices"
	"testing"
)

func TestSpecCoresOf(t *testing.T) {
	for _, tc := range []struct {
		list           string
		threads, cores int
		want           []uint16
	}{
		{"1,2", 1, 4, []uint16{1, 2}},
		{"3", 1, 4, []uint16{3}},
		{"0-3", 2, 4, []uint16{0, 1}}, // two threads a core: CPUs 0-3 are cores 0 and 1
		{"1,6", 2, 4, []uint16{0, 3}},
		{"2,0", 1, 4, []uint16{0, 2}},
		{"3-9", 1, 4, []uint16{3}}, // beyond the node's cores: skipped
		{"x,1", 1, 4, []uint16{1}},
	} {
		if got := specCoresOf(tc.list, tc.threads, tc.cores); !slices.Equal(got, tc.want) {
			t.Errorf("specCoresOf(%q, %d, %d) = %v, want %v", tc.list, tc.threads, tc.cores, got, tc.want)
		}
	}
}
