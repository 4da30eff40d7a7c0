package sched

import (
	"slices"
	"testing"
)

// TestBestFitSingleNode: a job that needs one node at most goes to the
// node of its block that holds all its tasks with the least to spare
// (cons_tres's best fit of a single node), not from the block's start
// over a partly used node and the next, as real slurmctld 22.05 placed
// them in testsuite/interop's CR_CPU node test.
func TestBestFitSingleNode(t *testing.T) {
	noMax := modify(func(j *Job) {
		if j.MinNodes == 0 {
			j.MinNodes = 1
		}
		j.MaxNodes = Infinite32
	})
	for _, tc := range []struct {
		name  string
		crCPU bool
		busy  []Allocation
		job   Job
		want  []int
	}{
		{name: "CR_CPU -n 3 beside a one-core job", crCPU: true, busy: []Allocation{running(10, 5000, 1, 0)},
			job: mkJob(1, tasks(3), noMax), want: []int{1}},
		{name: "CR_Core -n 3 beside a one-core job", busy: []Allocation{running(10, 5000, 1, 0)},
			job: mkJob(1, tasks(3), noMax), want: []int{1}},
		{name: "the tightest node", crCPU: true, busy: []Allocation{running(10, 5000, 1, 0, 2)},
			job: mkJob(1, tasks(2), noMax), want: []int{0}},
		{name: "-N 2 still takes from the start", crCPU: true, busy: []Allocation{running(10, 5000, 1, 0)},
			job: mkJob(1, tasks(3), nodesN(2, 2)), want: []int{0, 1}},
		{name: "no node holds it alone", crCPU: true, busy: []Allocation{running(10, 5000, 1, 0)},
			job: mkJob(1, tasks(6), noMax), want: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := mkNodes(3, 2, 1000)
			for i := range ns {
				ns[i].ThreadsPerCore, ns[i].CPUs = 2, 4
			}
			s := snap(ns)
			s.Config.DefMemPerCPU = 0
			s.Config.MemoryConsumable = false
			s.Config.CPUsConsumable = tc.crCPU
			s.Running = tc.busy
			s.Pending = []Job{tc.job}
			st := startOf(Schedule(s), tc.job.JobID)
			if st == nil {
				t.Fatal("not started")
			}
			if got := nodesOf(st); !slices.Equal(got, tc.want) {
				t.Errorf("nodes %v, want %v", got, tc.want)
			}
		})
	}
}
