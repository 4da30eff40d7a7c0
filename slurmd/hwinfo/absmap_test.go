package hwinfo

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/slurmd/hwinfo/hwtest"
)

func TestCoresToOSCPUs(t *testing.T) {
	top := ReadTopology(hwtest.Regular(2, 4, 2, 1).MapFS()) // OS CPU = thread*8 + socket*4 + core
	tests := []struct {
		cores []int
		want  string
	}{
		{[]int{0}, "[0 8]"},
		{[]int{1}, "[1 9]"},
		{[]int{4}, "[4 12]"}, // socket 1, core 0
		{[]int{0, 7}, "[0 7 8 15]"},
		{nil, "[]"},
	}
	for _, tc := range tests {
		got, err := top.CoresToOSCPUs(tc.cores, top.Layout)
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("CoresToOSCPUs(%v) = %v, %v; want %s", tc.cores, got, err, tc.want)
		}
		back, err := top.OSCPUsToCores(got, top.Layout)
		if err != nil || fmt.Sprint(back) != fmt.Sprint(append([]int{}, tc.cores...)) {
			t.Errorf("OSCPUsToCores(%v) = %v, %v; want %v", got, back, err, tc.cores)
		}
	}
	// One thread of a core names the whole core.
	if got, err := top.OSCPUsToCores([]int{9}, top.Layout); err != nil || fmt.Sprint(got) != "[1]" {
		t.Errorf("OSCPUsToCores([9]) = %v, %v", got, err)
	}
	if _, err := top.CoresToOSCPUs([]int{8}, top.Layout); err == nil {
		t.Error("core 8 of 8: want an error")
	}
	if _, err := top.OSCPUsToCores([]int{16}, top.Layout); err == nil {
		t.Error("CPU 16 of 16: want an error")
	}
	// A slurm.conf layout of 1 thread per core on this hardware: slurmd
	// maps abstract core c to abstract CPU c, through the hardware map.
	one := Layout{CPUs: 8, Boards: 1, Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 1}
	if got, err := top.CoresToOSCPUs([]int{1, 2}, one); err != nil || fmt.Sprint(got) != "[1 8]" {
		t.Errorf("1-thread layout: %v, %v", got, err)
	}
}
