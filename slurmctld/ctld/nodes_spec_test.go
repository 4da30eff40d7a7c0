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

func TestCPUListOf(t *testing.T) {
	for _, tc := range []struct {
		cores   []uint16
		threads int
		want    string
	}{
		{[]uint16{0}, 2, "0-1"},
		{[]uint16{0, 1}, 2, "0-3"},
		{[]uint16{0, 2}, 2, "0-1,4-5"},
		{[]uint16{1, 2}, 1, "1-2"},
		{[]uint16{3}, 1, "3"},
		{nil, 2, ""},
	} {
		if got := cpuListOf(tc.cores, tc.threads); got != tc.want {
			t.Errorf("cpuListOf(%v, %d) = %q, want %q", tc.cores, tc.threads, got, tc.want)
		}
	}
}
