package sched

import (
	"slices"
	"testing"
)

// gpuCountNodes are 4-core nodes holding the given GPU counts (0: none).
func gpuCountNodes(counts ...uint64) []Node {
	nodes := mkNodes(len(counts), 4, 8000)
	for i, c := range counts {
		if c > 0 {
			nodes[i].Gres = []Gres{{Name: "gpu", Count: c}}
		}
	}
	return nodes
}

func perTaskGPUsOpt(n uint32) jobOpt { return func(j *Job) { j.GPUsPerTask = n } }

// TestGPUsPerTask: a --gpus-per-task job gets on each node its tasks
// there times the count (_set_task_bits), and a node whose free GPUs
// serve no task is not in its node map: real slurmctld 22.05 gives
// -N2 -n2 --gpus-per-task=2 on two 4-GPU nodes 2+2 GPUs, never runs
// -w n0 -n1 --gpus-per-task=2 with one GPU free on n0, and takes n3+n4
// for -N2 -n2 --gpus-per-task=2 on nodes with 4, 1, down, 2, 2 GPUs.
func TestGPUsPerTask(t *testing.T) {
	tests := []struct {
		name   string
		counts []uint64
		down   []int
		job    Job
		nodes  []int // nil: must pend
		gpus   []uint64
	}{
		{"-N2 -n2 pt2 on 4+4", []uint64{4, 4}, nil,
			mkJob(1, nodesN(2, 2), tasks(2), gpus(4), perTaskGPUsOpt(2)), []int{0, 1}, []uint64{2, 2}},
		{"--ntasks-per-node=2 -N2 pt1 on 4+4", []uint64{4, 4}, nil,
			mkJob(1, nodesN(2, 2), tpn(2), tasks(4), gpus(4), perTaskGPUsOpt(1)), []int{0, 1}, []uint64{2, 2}},
		{"-n3 pt2 on 4+4", []uint64{4, 4}, nil,
			mkJob(1, nodesN(1, Infinite32), tasks(3), gpus(6), perTaskGPUsOpt(2)), []int{0, 1}, []uint64{4, 2}},
		{"-w n0 pt2, one GPU on n0", []uint64{1, 2}, nil,
			mkJob(1, nodesN(1, Infinite32), tasks(1), gpus(2), reqNodes(0), perTaskGPUsOpt(2)), nil, nil},
		{"a node serving no task ends the block", []uint64{4, 1, 2, 2, 2}, []int{2},
			mkJob(1, nodesN(2, 2), tasks(2), gpus(4), perTaskGPUsOpt(2)), []int{3, 4}, []uint64{2, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(gpuCountNodes(tc.counts...))
			for _, d := range tc.down {
				s.Nodes[d].State = NodeDown
			}
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			st := startOf(p, tc.job.JobID)
			if tc.nodes == nil {
				if st != nil {
					t.Fatalf("started on %v, want pending", nodesOf(st))
				}
				return
			}
			if st == nil {
				t.Fatalf("not started: %+v", p.Pending)
			}
			var got []uint64
			for _, na := range st.Alloc.Nodes {
				var n uint64
				for _, g := range na.Gres {
					n += g.Count
				}
				got = append(got, n)
			}
			if nodes := nodesOf(st); !slices.Equal(nodes, tc.nodes) || !slices.Equal(got, tc.gpus) {
				t.Fatalf("nodes %v GPUs %v, want %v %v", nodes, got, tc.nodes, tc.gpus)
			}
		})
	}
}

func TestPerTaskGPUs(t *testing.T) {
	tests := []struct {
		name      string
		want, per uint64
		tasks     []int
		avail     []uint64
		pos       []int
		out       []uint64
	}{
		{"tasks times per", 4, 2, []int{1, 1}, []uint64{4, 4}, []int{0, 1}, []uint64{2, 2}},
		{"chosen positions", 3, 1, []int{2, 1}, []uint64{0, 4, 4}, []int{1, 2}, []uint64{2, 1}},
		{"node short of its tasks' GPUs", 4, 2, []int{2, 0}, []uint64{3, 4}, []int{0, 1}, nil},
		{"total not the job's", 6, 2, []int{1, 1}, []uint64{4, 4}, []int{0, 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := perTaskGPUs(tc.want, tc.per, tc.tasks, tc.avail, tc.pos); !slices.Equal(got, tc.out) {
				t.Fatalf("perTaskGPUs = %v, want %v", got, tc.out)
			}
		})
	}
}

// TestBackfillGPUsPerTaskShape: a --gpus-per-task job that cannot run
// does not make backfill give up on a job of the same size without it:
// -n2 --gpus-per-task=2 needs two GPUs on each node and fails on nodes
// with 3 and 1; -n2 --gpus=4 runs there (3+1).
func TestBackfillGPUsPerTaskShape(t *testing.T) {
	s := snap(gpuCountNodes(3, 1))
	s.Config.Backfill = true
	noN := nodesN(1, Infinite32)
	s.Pending = []Job{
		mkJob(1, noN, tasks(2), gpus(4), perTaskGPUsOpt(2)),
		mkJob(2, noN, tasks(2), gpus(4)),
	}
	p := Backfill(s)
	if st := startOf(p, 1); st != nil {
		t.Fatalf("job 1 started on %v, want pending", nodesOf(st))
	}
	st := startOf(p, 2)
	if st == nil {
		t.Fatalf("job 2 not started: %+v", p.Pending)
	}
	if nodes := nodesOf(st); !slices.Equal(nodes, []int{0, 1}) {
		t.Fatalf("job 2 on %v, want [0 1]", nodes)
	}
}
