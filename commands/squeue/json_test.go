package main

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/dataout"
	"github.com/goslurm/goslurm/protocol/msg"
)

// jobJSON dumps one job and returns the JSON lines of the keys asked for.
func jobJSON(t *testing.T, j *msg.JobInfo, crType uint16, keys ...string) map[string]string {
	t.Helper()
	q := &squeue{bitstrLen: -1}
	d := q.dumpJob(j, crType)
	out := map[string]string{}
	for _, line := range strings.Split(string(dataout.JSON(d)), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, ","))
		for _, k := range keys {
			if strings.HasPrefix(line, `"`+k+`": `) {
				out[k] = strings.TrimPrefix(line, `"`+k+`": `)
			}
		}
	}
	return out
}

func baseJob() msg.JobInfo {
	return msg.JobInfo{
		JobID: 7, ArrayTaskID: noVal, GroupID: 0, CoreSpec: noVal16, Contiguous: 0,
		CPUFreqMin: noVal, CPUFreqMax: noVal, CPUFreqGov: noVal, DelayBoot: noVal,
		Nice: niceOffset, NumTasks: 1, NumCPUs: 1, TimeLimit: infinite, TimeMin: 0,
		Priority: 100, MaxCPUs: 0, MaxNodes: 0, Shared: noVal16,
		BillableTres: msg.PackDouble(float64(noVal)),
	}
}

// TestDumpJobQuirks pins dump_job_info's value rules, including the ones
// that look like bugs but are what 22.05 prints.
func TestDumpJobQuirks(t *testing.T) {
	tests := []struct {
		name string
		set  func(j *msg.JobInfo)
		want map[string]string
	}{
		{"defaults", func(*msg.JobInfo) {}, map[string]string{
			"core_spec": "null", "thread_spec": "null", "cpus_per_task": "null", "nice": "null",
			"time_limit": "null", "billable_tres": "null", "shared": "null", "profile": "null",
			"memory_per_node": "null", "memory_per_cpu": "null", "account": `""`, "array_task_id": "null",
		}},
		// A thread count (CORE_SPEC_THREAD) lands in core_spec, flag and
		// all; a core count lands in thread_spec.
		{"thread spec", func(j *msg.JobInfo) { j.CoreSpec = coreSpecThread | 2 }, map[string]string{
			"core_spec": "32770", "thread_spec": "null"}},
		{"core spec", func(j *msg.JobInfo) { j.CoreSpec = 3 }, map[string]string{
			"core_spec": "null", "thread_spec": "3"}},
		// cpus_per_task follows cpu_freq_min, under a misspelt key.
		{"cpu freq", func(j *msg.JobInfo) { j.CPUFreqMin = 1000; j.CPUsPerTask = 4 }, map[string]string{
			"cpus_per_task": "4", "cpu_frequency_minumum": "1000"}},
		{"nice", func(j *msg.JobInfo) { j.Nice = niceOffset + 10 }, map[string]string{"nice": "10"}},
		{"negative nice", func(j *msg.JobInfo) { j.Nice = niceOffset - 5 }, map[string]string{"nice": "4294967291"}},
		{"mem per cpu", func(j *msg.JobInfo) { j.PnMinMemory = memPerCPU | 200 }, map[string]string{
			"memory_per_node": "null", "memory_per_cpu": "200"}},
		{"mem per node", func(j *msg.JobInfo) { j.PnMinMemory = 100 }, map[string]string{
			"memory_per_node": "100", "memory_per_cpu": "null"}},
		{"billable", func(j *msg.JobInfo) { j.BillableTres = msg.PackDouble(2) }, map[string]string{
			"billable_tres": "2.0"}},
		{"shared user", func(j *msg.JobInfo) { j.Shared = 2 }, map[string]string{"shared": `"user"`}},
		{"no tasks", func(j *msg.JobInfo) { j.NumTasks = noVal }, map[string]string{"cpus": "null", "tasks": "null"}},
		{"strings", func(j *msg.JobInfo) {
			j.Account = msg.Str("a/b")
			j.StdIn = msg.Str("/dev/null")
		}, map[string]string{"account": `"a\/b"`, "standard_input": `"\/dev\/null"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := baseJob()
			tc.set(&j)
			var keys []string
			for k := range tc.want {
				keys = append(keys, k)
			}
			got := jobJSON(t, &j, crCore, keys...)
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s = %q, want %q", k, got[k], w)
				}
			}
		})
	}
}

// TestDumpJobKeyOrder: keys set twice keep their first position, and the
// spec keys come in the order the branch sets them.
func TestDumpJobKeyOrder(t *testing.T) {
	j := baseJob()
	j.CoreSpec = 1
	s := string(dataout.JSON(new(squeue).dumpJob(&j, 0)))
	if strings.Count(s, `"container"`) != 1 {
		t.Errorf("container appears %d times", strings.Count(s, `"container"`))
	}
	if a, b := strings.Index(s, `"container"`), strings.Index(s, `"contiguous"`); a > b {
		t.Errorf("container after contiguous")
	}
	if a, b := strings.Index(s, `"thread_spec"`), strings.Index(s, `"core_spec"`); a > b {
		t.Errorf("thread_spec after core_spec")
	}
}

func TestDumpNodesRes(t *testing.T) {
	r := &msg.JobResources{
		NCPUs: 3, Nodes: msg.Str("n[1-2]"), CPUs: []uint16{2, 1}, CPUsUsed: []uint16{0, 0},
		MemoryAllocated: []uint64{10, 20}, MemoryUsed: []uint64{0, 0},
		SocketsPerNode: []uint16{2}, CoresPerSocket: []uint16{2}, SockCoreRepCount: []uint32{2},
		// Bits 0 and 3 on n1 (socket 0 core 0, socket 1 core 1), bit 6
		// on n2 (socket 1 core 0); bit 3 is also in use.
		CoreBitmap:     msg.HexBitmap{NBits: 8, Hex: msg.Str("0x49")},
		CoreBitmapUsed: msg.HexBitmap{NBits: 8, Hex: msg.Str("0x08")},
	}
	l := dataout.NewList()
	dumpNodesRes(l, r)
	want := `[
  {
    "sockets": {
      "0": {
        "cores": {
          "0": "allocated"
        }
      },
      "1": {
        "cores": {
          "1": "allocated_and_in_use"
        }
      }
    },
    "nodename": "n1",
    "cpus_used": 0,
    "memory_used": 0,
    "memory_allocated": 10
  },
  {
    "sockets": {
      "1": {
        "cores": {
          "0": "allocated"
        }
      }
    },
    "nodename": "n2",
    "cpus_used": 0,
    "memory_used": 0,
    "memory_allocated": 20
  }
]`
	if got := string(dataout.JSON(l)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
