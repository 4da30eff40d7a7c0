package cgroup

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/conf"
)

const mib = 1024 * 1024

// cfgWith returns cgroup.conf defaults (as conf.LoadCgroup sets them)
// changed by edit.
func cfgWith(t *testing.T, text string) *conf.CgroupConfig {
	t.Helper()
	c, err := conf.LoadCgroup(conf.MapFS{"/cgroup.conf": text}, "/cgroup.conf")
	if err != nil {
		t.Fatalf("LoadCgroup: %v", err)
	}
	return c
}

func u64(v uint64) *uint64 { return &v }

// The expected byte counts below were computed by hand from Slurm 22.05's
// task_cgroup_memory.c formulas (percent stored as a C float, product in
// double, truncated), not by calling this package.
func TestComputeMemory(t *testing.T) {
	tests := []struct {
		name      string
		conf      string
		realMB    uint64
		job, step uint64
		wantJob   MemoryLimits
		wantStep  MemoryLimits
	}{
		{
			name: "ram only, step unlimited gets node RAM", conf: "ConstrainRAMSpace=yes\n",
			realMB: 1000, job: 500, step: 0,
			wantJob:  MemoryLimits{Limit: 500 * mib, SoftLimit: 500 * mib},
			wantStep: MemoryLimits{Limit: 1000 * mib, SoftLimit: 1000 * mib},
		},
		{
			name: "AllowedRAMSpace 95.5", conf: "ConstrainRAMSpace=yes\nAllowedRAMSpace=95.5\n",
			realMB: 2000, job: 1000, step: 1000,
			// soft (100%) is above the hard limit, so it is lowered to it.
			wantJob:  MemoryLimits{Limit: 1001390080, SoftLimit: 1001390080},
			wantStep: MemoryLimits{Limit: 1001390080, SoftLimit: 1001390080},
		},
		{
			name: "AllowedRAMSpace 33.3 rounds as a C float", conf: "ConstrainRAMSpace=yes\nAllowedRAMSpace=33.3\n",
			realMB: 4000, job: 1000, step: 3000,
			wantJob:  MemoryLimits{Limit: 349175800, SoftLimit: 349175800},
			wantStep: MemoryLimits{Limit: 1047527400, SoftLimit: 1047527400},
		},
		{
			name: "AllowedRAMSpace above 100 keeps soft at the request", conf: "ConstrainRAMSpace=yes\nAllowedRAMSpace=150\n",
			realMB: 4000, job: 1000, step: 1000,
			wantJob:  MemoryLimits{Limit: 1500 * mib, SoftLimit: 1000 * mib},
			wantStep: MemoryLimits{Limit: 1500 * mib, SoftLimit: 1000 * mib},
		},
		{
			name: "MinRAMSpace floor", conf: "ConstrainRAMSpace=yes\n",
			realMB: 1000, job: 10, step: 40,
			wantJob:  MemoryLimits{Limit: 30 * mib, SoftLimit: 30 * mib},
			wantStep: MemoryLimits{Limit: 40 * mib, SoftLimit: 40 * mib},
		},
		{
			name: "MaxRAMPercent ceiling", conf: "ConstrainRAMSpace=yes\nMaxRAMPercent=50\n",
			realMB: 1000, job: 800, step: 0,
			wantJob:  MemoryLimits{Limit: 500 * mib, SoftLimit: 500 * mib},
			wantStep: MemoryLimits{Limit: 500 * mib, SoftLimit: 500 * mib},
		},
		{
			name:   "ram and swap with swappiness",
			conf:   "ConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=10\nMemorySwappiness=60\n",
			realMB: 1000, job: 500, step: 0,
			// memsw = 500 MB + 10% of 500 MB; swappiness only at job level.
			wantJob: MemoryLimits{Limit: 500 * mib, SoftLimit: 500 * mib, MemSwap: 550 * mib, Swappiness: u64(60)},
			// unlimited step: node RAM + 10% of node RAM.
			wantStep: MemoryLimits{Limit: 1000 * mib, SoftLimit: 1000 * mib, MemSwap: 1100 * mib},
		},
		{
			name:   "swap only: RAM limit is the mem+swap value",
			conf:   "ConstrainSwapSpace=yes\nAllowedSwapSpace=20\nAllowedRAMSpace=50\n",
			realMB: 1000, job: 500, step: 500,
			// AllowedRAMSpace is ignored without ConstrainRAMSpace.
			wantJob:  MemoryLimits{Limit: 600 * mib, SoftLimit: 500 * mib, MemSwap: 600 * mib},
			wantStep: MemoryLimits{Limit: 600 * mib, SoftLimit: 500 * mib, MemSwap: 600 * mib},
		},
		{
			name:   "MaxSwapPercent ceiling",
			conf:   "ConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=50\nMaxSwapPercent=5\n",
			realMB: 1000, job: 1000, step: 100,
			// 1000 MB + 500 MB is above 100% + 5% of 1000 MB.
			wantJob:  MemoryLimits{Limit: 1000 * mib, SoftLimit: 1000 * mib, MemSwap: 1050 * mib},
			wantStep: MemoryLimits{Limit: 100 * mib, SoftLimit: 100 * mib, MemSwap: 150 * mib},
		},
		{
			name:   "kmem defaults to the RAM limit",
			conf:   "ConstrainRAMSpace=yes\nConstrainKmemSpace=yes\nMaxKmemPercent=50\n",
			realMB: 1000, job: 400, step: 20,
			wantJob: MemoryLimits{Limit: 400 * mib, SoftLimit: 400 * mib, Kmem: 200 * mib},
			// 50% of the 30 MB floor is 15 MB; the kmem floor is 30 MB
			// but Slurm checks the ceiling first.
			wantStep: MemoryLimits{Limit: 30 * mib, SoftLimit: 30 * mib, Kmem: 15 * mib},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := cfgWith(t, tt.conf)
			got, err := Compute(cfg, Node{RealMemoryMB: tt.realMB, CPUs: 2}, StepID{JobID: 1, StepID: 0, HetComp: NoVal},
				Allocation{JobMemMB: tt.job, StepMemMB: tt.step})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Memory {
				t.Fatal("Memory constraint not enabled")
			}
			if d := cmp.Diff(tt.wantJob, got.JobMemory); d != "" {
				t.Errorf("job limits (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantStep, got.StepMemory); d != "" {
				t.Errorf("step limits (-want +got):\n%s", d)
			}
		})
	}
}

func TestComputeNoMemoryConstraint(t *testing.T) {
	got, err := Compute(cfgWith(t, ""), Node{}, StepID{JobID: 1, HetComp: NoVal}, Allocation{JobMemMB: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory || got.Cores || got.Devices {
		t.Fatalf("defaults constrain nothing, got %+v", got)
	}
	if _, err := Compute(cfgWith(t, "ConstrainRAMSpace=yes\n"), Node{}, StepID{JobID: 1, HetComp: NoVal}, Allocation{}); err == nil {
		t.Fatal("RealMemory 0 with ConstrainRAMSpace: want error")
	}
}

func TestComputeCores(t *testing.T) {
	tests := []struct {
		name                 string
		node                 Node
		jobCores, stepCores  []int
		wantJob, wantStepCPU string
	}{
		{"identity", Node{CPUs: 2}, []int{0, 1}, []int{0}, "0-1", "0"},
		{"two threads per core", Node{CPUs: 8, CPUMap: CPUMap{Threads: 2}}, []int{0, 2}, []int{2}, "0-1,4-5", "4-5"},
		// Machine numbering puts sibling threads far apart (0,4 / 1,5...).
		{"block map", Node{CPUs: 8, CPUMap: CPUMap{Threads: 2, BlockMap: []int{0, 4, 1, 5, 2, 6, 3, 7}}},
			[]int{0, 1}, []int{1}, "0-1,4-5", "1,5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compute(cfgWith(t, "ConstrainCores=yes\n"), tt.node, StepID{JobID: 3, HetComp: NoVal},
				Allocation{JobCores: tt.jobCores, StepCores: tt.stepCores})
			if err != nil {
				t.Fatal(err)
			}
			if got.JobCPUs != tt.wantJob || got.StepCPUs != tt.wantStepCPU {
				t.Fatalf("cpus = %q/%q, want %q/%q", got.JobCPUs, got.StepCPUs, tt.wantJob, tt.wantStepCPU)
			}
		})
	}
	if _, err := Compute(cfgWith(t, "ConstrainCores=yes\n"), Node{CPUs: 2}, StepID{JobID: 3, HetComp: NoVal}, Allocation{}); err == nil {
		t.Fatal("no cores allocated: want error")
	}
}

func TestComputeDevices(t *testing.T) {
	gpus := []Device{{Type: 'c', Major: 195, Minor: 0, Allowed: true}, {Type: 'c', Major: 195, Minor: 1}}
	a := Allocation{JobDevices: gpus, StepDevices: gpus[:1]}
	for _, tt := range []struct {
		step     uint32
		wantStep int
	}{{0, 1}, {StepBatch, 0}, {StepExtern, 0}, {StepInteractive, 0}} {
		got, err := Compute(cfgWith(t, "ConstrainDevices=yes\n"), Node{}, StepID{JobID: 1, StepID: tt.step, HetComp: NoVal}, a)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Devices || len(got.JobDevices) != 2 || len(got.StepDevices) != tt.wantStep {
			t.Errorf("step %#x: got %+v", tt.step, got)
		}
	}
	if s := gpus[1].String(); s != "c 195:1 rwm" {
		t.Errorf("String = %q", s)
	}
	if s := (Device{Type: 'b', Major: 8, Minor: -1}).String(); s != "b 8:* rwm" {
		t.Errorf("String = %q", s)
	}
}

func TestDeviceFromPath(t *testing.T) {
	d, err := DeviceFromPath("/dev/null", true)
	if err != nil {
		t.Skipf("no /dev/null device node to stat here (a container without devices?): %v", err)
	}
	if d != (Device{Type: 'c', Major: 1, Minor: 3, Allowed: true}) {
		t.Fatalf("/dev/null = %+v", d)
	}
	if _, err := DeviceFromPath(t.TempDir(), false); err == nil {
		t.Fatal("directory: want error")
	}
}

func TestCPUList(t *testing.T) {
	for _, tt := range []struct {
		s   string
		ids []int
	}{{"", nil}, {"0", []int{0}}, {"0-3", []int{0, 1, 2, 3}}, {"0,2-3,7", []int{0, 2, 3, 7}}} {
		ids, err := ParseCPUList(tt.s)
		if err != nil || !cmp.Equal(ids, tt.ids) {
			t.Errorf("ParseCPUList(%q) = %v, %v", tt.s, ids, err)
		}
		if got := FormatCPUList(tt.ids); got != tt.s {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tt.ids, got, tt.s)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q): want error", bad)
		}
	}
}
