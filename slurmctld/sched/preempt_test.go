package sched

import (
	"slices"
	"testing"
)

// preemptSnap: four 4-core nodes, partitions low (tier 1), low2 (tier 1),
// off (tier 1, PreemptMode=OFF), mid (tier 2) and high (tier 3), all over
// every node; partition_prio with mode.
func preemptSnap(mode PreemptMode) *Snapshot {
	s := snap(mkNodes(4, 4, 4000))
	s.Config.Preempt = PreemptConfig{Enabled: true, Mode: mode, ReorderCount: 1}
	part := func(name string, tier uint16, m PreemptMode) Partition {
		p := mkPart(name, allIdx(4))
		p.Default = false
		p.PriorityTier, p.PreemptMode = tier, m
		return p
	}
	s.Partitions = []Partition{part("low", 1, mode), part("low2", 1, mode), part("off", 1, PreemptOff),
		part("mid", 2, mode), part("high", 3, mode)}
	return s
}

// runIn is a running job of partition p holding whole nodes (4 cores each),
// started at start.
func runIn(id uint32, p string, start int64, nodes ...int) Allocation {
	a := running(id, 5000, 4, nodes...)
	a.Partition, a.Start, a.Running = p, start, true
	return a
}

func TestPreemptCandidates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    PreemptMode
		running []Allocation
		job     Job
		want    []uint32 // preemptees; nil: none, and the job waits
		setup   func(*Snapshot)
	}{
		{
			name:    "one node needed: the lowest tier, fewest nodes first",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0, 1), runIn(2, "mid", 100, 2), runIn(3, "low", 100, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{3},
		},
		{
			// Taking 3 then 1 away makes room on nodes 0 and 1; the
			// reordering puts 1 first, and it alone is enough.
			name:    "two nodes: reordered to one two-node job",
			mode:    PreemptRequeue,
			running: []Allocation{runIn(1, "low", 100, 0, 1), runIn(2, "mid", 100, 2), runIn(3, "low", 100, 3)},
			job:     mkJob(10, parts("high"), tasks(8), nodesN(2, 2)),
			want:    []uint32{1},
		},
		{
			name:    "same tier never preempts",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("low2"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "PreemptMode=OFF partition is left alone",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "off", 100, 0, 1), runIn(2, "off", 100, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "OFF partition skipped, the low job taken",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "off", 100, 0, 1, 2), runIn(2, "low", 100, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{2},
		},
		{
			name:    "not enough even with every candidate gone",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "off", 100, 0, 1, 2), runIn(2, "low", 100, 3)},
			job:     mkJob(10, parts("high"), tasks(8), nodesN(2, 2)),
		},
		{
			name:    "lower tier first though it is bigger",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "mid", 100, 0), runIn(2, "low", 100, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{2},
		},
		{
			name:    "PreemptExemptTime protects a young job",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 990, 0), runIn(2, "low", 100, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{2},
			setup:   func(s *Snapshot) { s.Config.Preempt.ExemptTime = 60 },
		},
		{
			name:    "preempt_youngest_first",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0), runIn(2, "low", 300, 1), runIn(3, "low", 200, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{2},
			setup:   func(s *Snapshot) { s.Config.Preempt.YoungestFirst = true },
		},
		{
			name:    "a completing job is no candidate",
			mode:    PreemptCancel,
			running: []Allocation{func() Allocation { a := runIn(1, "low", 100, 0, 1, 2, 3); a.Running = false; return a }()},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "SUSPEND mode candidates are never taken away",
			mode:    PreemptSuspend,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
		},
		{
			name:    "jobs preempted for it a moment ago: none more",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1), modify(func(j *Job) { j.PreemptWait = true })),
		},
		{
			name:    "a node in an advanced reservation is not preempted for",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0), runIn(2, "low", 100, 1), runIn(3, "off", 100, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			want:    []uint32{2},
			setup: func(s *Snapshot) {
				s.Reservations = []Reservation{{Name: "r", Nodes: []int{0}, Start: 0, End: 99999}}
			},
		},
		{
			name:    "preemption off",
			mode:    PreemptCancel,
			running: []Allocation{runIn(1, "low", 100, 0, 1, 2, 3)},
			job:     mkJob(10, parts("high"), tasks(4), nodesN(1, 1)),
			setup:   func(s *Snapshot) { s.Config.Preempt.Enabled = false },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := preemptSnap(tc.mode)
			if tc.setup != nil {
				tc.setup(s)
			}
			s.Running = tc.running
			s.Pending = []Job{tc.job}
			plan := MainPass(s)
			if startOf(plan, tc.job.JobID) != nil {
				t.Fatalf("job started: %+v", plan.Starts)
			}
			mustPend(t, plan, tc.job.JobID, ReasonResources)
			var got []uint32
			for _, p := range plan.Preemptions {
				if p.JobID == tc.job.JobID {
					got = p.Preemptees
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("preemptees %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPreemptOncePerPass: a job chosen for one preemptor is not chosen
// again in the pass by another one, though it would sort first.
func TestPreemptOncePerPass(t *testing.T) {
	s := snap(mkNodes(5, 4, 4000))
	s.Config.Preempt = PreemptConfig{Enabled: true, Mode: PreemptCancel, ReorderCount: 1}
	part := func(name string, tier uint16, m PreemptMode, nodes ...int) Partition {
		p := mkPart(name, nodes)
		p.Default = false
		p.PriorityTier, p.PreemptMode = tier, m
		return p
	}
	s.Partitions = []Partition{part("low", 1, PreemptCancel, allIdx(5)...), part("off", 1, PreemptOff, allIdx(5)...),
		part("high", 3, PreemptCancel, 0, 1), part("mid", 2, PreemptCancel, 2, 3, 4)}
	s.Running = []Allocation{runIn(1, "low", 100, 1, 2), runIn(2, "low", 100, 3, 4), runIn(3, "off", 100, 0)}
	s.Pending = []Job{mkJob(10, parts("high"), tasks(4), nodesN(1, 1)), mkJob(11, parts("mid"), tasks(4), nodesN(1, 1))}
	plan := MainPass(s)
	got := map[uint32][]uint32{}
	for _, p := range plan.Preemptions {
		got[p.JobID] = p.Preemptees
	}
	if !slices.Equal(got[10], []uint32{1}) || !slices.Equal(got[11], []uint32{2}) {
		t.Errorf("preemptions %v", got)
	}
}

// TestPreemptNotNeeded: a job that fits now starts without preempting.
func TestPreemptNotNeeded(t *testing.T) {
	s := preemptSnap(PreemptCancel)
	s.Running = []Allocation{runIn(1, "low", 100, 0)}
	s.Pending = []Job{mkJob(10, parts("high"), tasks(4), nodesN(1, 1))}
	plan := MainPass(s)
	mustStart(t, plan, 10)
	if len(plan.Preemptions) != 0 {
		t.Errorf("preemptions %v", plan.Preemptions)
	}
}

func TestReorder(t *testing.T) {
	mk := func(id uint32, nodes ...int) preemptCand {
		a := runIn(id, "low", 0, nodes...)
		return preemptCand{a: &a}
	}
	ids := func(l []preemptCand) []uint32 {
		var out []uint32
		for _, c := range l {
			out = append(out, c.a.JobID)
		}
		return out
	}
	rm := []preemptCand{mk(1, 0), mk(2, 1, 2), mk(3, 3), mk(4, 4)}
	// The job fitted with 1..3 gone, on nodes 1, 2 and 3: 3 first, then
	// 2 (two of its nodes), 1 (none), 4 as it was.
	if got := ids(reorder(rm, 3, []int{1, 2, 3}, false)); !slices.Equal(got, []uint32{3, 2, 1, 4}) {
		t.Errorf("reorder: %v", got)
	}
	if got := ids(reorder(rm, 3, []int{1, 2, 3}, true)); !slices.Equal(got, []uint32{3, 1, 2, 4}) {
		t.Errorf("strict reorder: %v", got)
	}
}

// BenchmarkPreemptSearch: 1024 16-core nodes full of one-node low jobs; a
// high job needing 64 nodes has them preempted (one main pass).
func BenchmarkPreemptSearch(b *testing.B) {
	s := snap(mkNodes(1024, 16, 64000))
	s.Config.Preempt = PreemptConfig{Enabled: true, Mode: PreemptCancel, ReorderCount: 1}
	low, high := mkPart("low", allIdx(1024)), mkPart("high", allIdx(1024))
	low.PriorityTier, low.PreemptMode = 1, PreemptCancel
	high.Name, high.Default, high.PriorityTier, high.PreemptMode = "high", false, 2, PreemptCancel
	s.Partitions = []Partition{low, high}
	for i := range 1024 {
		a := running(uint32(i+1), 5000, 16, i)
		a.Partition, a.Start, a.Running = "low", int64(100+i), true
		s.Running = append(s.Running, a)
	}
	s.Pending = []Job{mkJob(5000, parts("high"), tasks(64*16), nodesN(64, 64))}
	for b.Loop() {
		p := MainPass(s)
		if len(p.Preemptions) != 1 || len(p.Preemptions[0].Preemptees) != 64 {
			b.Fatalf("preemptions %+v", p.Preemptions)
		}
	}
}

// TestPreemptBackfill: the first high job cannot start even with every
// low job gone (the OFF job holds two nodes until 5000) and blocks its
// partition in the main pass; backfill has a low job preempted for the
// second high job, which ends before the first one's reservation. Without
// backfill the second waits for Priority.
func TestPreemptBackfill(t *testing.T) {
	for _, bf := range []bool{true, false} {
		s := preemptSnap(PreemptCancel)
		s.Config.Backfill = bf
		s.Running = []Allocation{runIn(1, "off", 100, 0, 1), runIn(2, "low", 100, 2), runIn(3, "low", 100, 3)}
		s.Pending = []Job{mkJob(10, parts("high"), tasks(16), nodesN(4, 4)), mkJob(11, parts("high"), tasks(4), nodesN(1, 1))}
		plan := Schedule(s)
		got := map[uint32][]uint32{}
		for _, p := range plan.Preemptions {
			got[p.JobID] = p.Preemptees
		}
		mustPend(t, plan, 10, ReasonResources)
		if bf {
			mustPend(t, plan, 11, ReasonResources)
			if len(got) != 1 || !slices.Equal(got[11], []uint32{2}) {
				t.Errorf("backfill: preemptions %v", got)
			}
		} else {
			mustPend(t, plan, 11, ReasonPriority)
			if len(got) != 0 {
				t.Errorf("main pass only: preemptions %v", got)
			}
		}
	}
}
