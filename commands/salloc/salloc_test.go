package main

import (
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestTasksPerNode(t *testing.T) {
	for _, c := range []struct {
		name   string
		cpus   []uint16
		reps   []uint32
		ntasks int
		cpt    int
		want   string
	}{
		{"one per cpu", []uint16{2}, []uint32{2}, 0, 0, "2(x2)"},
		{"cpus per task", []uint16{4}, []uint32{1}, 0, 2, "2"},
		{"block over nodes", []uint16{2}, []uint32{2}, 3, 0, "2,1"},
		{"one each", []uint16{2}, []uint32{3}, 3, 0, "1(x3)"},
		{"overcommitted", []uint16{1}, []uint32{2}, 3, 0, "2,1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := jobopt.NewOpts(jobopt.Salloc, &jobopt.Log{Prog: "salloc"})
			if c.ntasks > 0 {
				o.Ntasks, o.NtasksSet = c.ntasks, true
			}
			if c.cpt > 0 {
				o.CPUsPerTask, o.CPUsSet = c.cpt, true
			}
			a := &launch.Allocation{Allocation: msg.Allocation{CPUsPerNode: c.cpus, CPUCountReps: c.reps}}
			if got := tasksPerNode(a, o); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
