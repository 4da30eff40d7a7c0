package sched

import (
	"slices"
	"testing"
)

// gangSnap is preemptSnap with GANG on.
func gangSnap(mode PreemptMode) *Snapshot {
	s := preemptSnap(mode)
	s.Config.Preempt.Gang = true
	return s
}

// partCores is a running job of partition p holding the given cores of
// one node.
func partCores(id uint32, p string, node int, cores ...uint16) Allocation {
	return Allocation{JobID: id, UserID: 2000, Partition: p, Start: 100, End: 5000, Running: true,
		Nodes: []NodeAlloc{{Node: node, Cores: cores, CPUs: uint32(len(cores)), MemoryMB: 100 * uint64(len(cores))}}}
}

func TestGangStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    PreemptMode
		running []Allocation
		job     Job
		// want is the job's nodes and cores (node*100 + core) when it
		// starts; nil: it does not start.
		want  []int
		setup func(*Snapshot)
	}{
		{
			name:    "on top of a lower tier SUSPEND job",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []int{0, 1, 2, 3},
		},
		{
			name:    "CANCEL partitions too: gang preempts them after",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []int{0, 1, 2, 3},
		},
		{
			name:    "idle cores first",
			mode:    PreemptSuspend,
			running: []Allocation{partCores(1, "low", 0, 0, 1), runIn(2, "off", 100, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(2), nodesN(1, 1)),
			want:    []int{2, 3},
		},
		{
			name:    "idle cores and a low job's cores",
			mode:    PreemptSuspend,
			running: []Allocation{partCores(1, "low", 0, 0, 1), runIn(2, "off", 100, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(3), nodesN(1, 1)),
			want:    []int{0, 1, 2},
		},
		{
			name:    "the mid tier's cores before the low tier's are avoided",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "mid", 100, 0, 1), runIn(2, "low", 100, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []int{200, 201, 202, 203},
		},
		{
			name:    "same tier: no",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("low2"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "PreemptMode=OFF partition: no",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "off", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "a whole-node job keeps its node",
			mode:    PreemptSuspend,
			running: []Allocation{func() Allocation { a := runIn(1, "low", 100, 0, 1, 2, 3); a.Exclusive = true; return a }()},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "the low job's memory stays taken",
			mode:    PreemptSuspend,
			running: []Allocation{func() Allocation { a := runIn(1, "low", 100, 0, 1, 2, 3); a.Nodes[0].MemoryMB = 4000; return a }()},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []int{100, 101, 102, 103},
			setup:   func(s *Snapshot) { s.Config.MemoryConsumable = true },
		},
		{
			name:    "without GANG the job waits",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			setup:   func(s *Snapshot) { s.Config.Preempt.Gang = false },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := gangSnap(tc.mode)
			if tc.setup != nil {
				tc.setup(s)
			}
			s.Running = tc.running
			s.Pending = []Job{tc.job}
			plan := MainPass(s)
			st := startOf(plan, tc.job.JobID)
			if tc.want == nil {
				if st != nil {
					t.Fatalf("job started: %+v", st.Alloc)
				}
				mustPend(t, plan, tc.job.JobID, ReasonResources)
				return
			}
			if st == nil {
				t.Fatalf("job did not start: %+v", plan.Pending)
			}
			var got []int
			for _, na := range st.Alloc.Nodes {
				for _, k := range na.Cores {
					got = append(got, na.Node*100+int(k))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("cores %v, want %v", got, tc.want)
			}
			if len(plan.Preemptions) != 0 {
				t.Errorf("preemptions %v", plan.Preemptions)
			}
		})
	}
}

// TestGangStartTwice: two high jobs in one pass do not share the cores of
// the low job they both run over.
func TestGangStartTwice(t *testing.T) {
	s := gangSnap(PreemptSuspend)
	s.Running = []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)}
	s.Pending = []Job{mkJob(10, parts("high"), tasks(4), nodesN(1, 1)), mkJob(11, parts("high"), tasks(4), nodesN(1, 1))}
	plan := MainPass(s)
	a, b := startOf(plan, 10), startOf(plan, 11)
	if a == nil || b == nil {
		t.Fatalf("starts %+v", plan.Starts)
	}
	if a.Alloc.Nodes[0].Node == b.Alloc.Nodes[0].Node {
		t.Errorf("both on node %d", a.Alloc.Nodes[0].Node)
	}
}

// TestGangBackfill: the first high job cannot start (the OFF job holds a
// node for good) and holds its partition in the main pass; the backfill
// pass starts the second one on the low job's cores.
func TestGangBackfill(t *testing.T) {
	for _, bf := range []bool{true, false} {
		s := gangSnap(PreemptSuspend)
		s.Config.Backfill = bf
		s.Running = []Allocation{runIn(1, "off", 100, 0), runIn(2, "low", 100, 1, 2, 3)}
		s.Pending = []Job{mkJob(10, parts("high"), tasks(16), nodesN(4, 4)), mkJob(11, parts("high"), tasks(4), nodesN(1, 1))}
		plan := Schedule(s)
		mustPend(t, plan, 10, ReasonResources)
		st := startOf(plan, 11)
		switch {
		case bf && (st == nil || !st.Backfill || st.Alloc.Nodes[0].Node != 1):
			t.Errorf("backfill: start %+v", st)
		case !bf && st != nil:
			t.Errorf("main pass only: started %+v", st)
		}
	}
}

// BenchmarkGangStart: 1024 16-core nodes full of one-node low jobs; a high
// job needing 64 nodes starts on top of 64 of them (one main pass).
func BenchmarkGangStart(b *testing.B) {
	s := snap(mkNodes(1024, 16, 64000))
	s.Config.Preempt = PreemptConfig{Enabled: true, Gang: true, Mode: PreemptSuspend, ReorderCount: 1}
	low, high := mkPart("low", allIdx(1024)), mkPart("high", allIdx(1024))
	low.PriorityTier, low.PreemptMode = 1, PreemptSuspend
	high.Name, high.Default, high.PriorityTier, high.PreemptMode = "high", false, 2, PreemptSuspend
	s.Partitions = []Partition{low, high}
	for i := range 1024 {
		a := running(uint32(i+1), 5000, 16, i)
		a.Partition, a.Start, a.Running = "low", int64(100+i), true
		s.Running = append(s.Running, a)
	}
	s.Pending = []Job{mkJob(5000, parts("high"), tasks(64*16), nodesN(64, 64))}
	for b.Loop() {
		p := MainPass(s)
		if len(p.Starts) != 1 || len(p.Starts[0].Alloc.Nodes) != 64 {
			b.Fatalf("starts %+v", p.Starts)
		}
	}
}
