package sched

import (
	"slices"
	"testing"
)

func TestMainPassStopsPartitionAtFirstBlockedJob(t *testing.T) {
	s := snap(mkNodes(4, 8, 8000))
	s.Running = []Allocation{running(99, 1000+3600, 8, 0, 1)}
	s.Pending = []Job{
		mkJob(1, nodesN(3, 3), exclusive()), // blocked: only 2 nodes free
		mkJob(2),                            // would fit, but FIFO
	}
	p := MainPass(s)
	mustPend(t, p, 1, ReasonResources)
	mustPend(t, p, 2, ReasonPriority)
}

func TestBackfillStartsShortJobsOnly(t *testing.T) {
	s := snap(mkNodes(4, 8, 8000))
	s.Config.Backfill = true
	// Nodes 0,1 busy for an hour; the top job needs 3 whole nodes.
	s.Running = []Allocation{running(99, 1000+3600, 8, 0, 1)}
	s.Pending = []Job{
		mkJob(1, nodesN(3, 3), exclusive(), limit(60)),
		mkJob(2, limit(30)),                    // ends before the reservation: starts
		mkJob(3, limit(120), nodesN(2, 2)),     // would delay job 1: waits
		mkJob(4, limit(120), tasks(1), cpt(1)), // node 3 is outside job 1's nodes? see below
	}
	p := Schedule(s)
	pd := mustPend(t, p, 1, ReasonResources)
	if pd.StartTime != 1000+3600 {
		t.Fatalf("job 1 expected start %d, want %d", pd.StartTime, 1000+3600)
	}
	st := mustStart(t, p, 2)
	if !st.Backfill {
		t.Fatalf("job 2 not marked as backfilled")
	}
	if pendingOf(p, 3) == nil {
		t.Fatalf("job 3 started and would delay job 1")
	}
	// Job 1 reserves nodes 0,1,2 (best fit from the block start); node 3
	// stays free for a long job.
	st4 := mustStart(t, p, 4)
	if got := nodesOf(st4); !slices.Equal(got, []int{3}) {
		t.Fatalf("job 4 on %v, want [3]", got)
	}
}

func TestReasons(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Snapshot)
		job  Job
		want Reason
	}{
		{"held", nil, mkJob(1, prio(0)), ReasonHeld},
		{"held by user", nil, mkJob(1, modify(func(j *Job) { j.Hold = HoldUser })), ReasonHeldUser},
		{"dependency", nil, mkJob(1, modify(func(j *Job) { j.DependencyWait = true })), ReasonDependency},
		{"begin time", nil, mkJob(1, modify(func(j *Job) { j.BeginTime = 5000 })), ReasonBeginTime},
		{"partition down", func(s *Snapshot) { s.Partitions[0].State = PartDown }, mkJob(1), ReasonPartDown},
		{"partition inactive", func(s *Snapshot) { s.Partitions[0].State = PartInactive }, mkJob(1), ReasonPartInactive},
		{"time limit", func(s *Snapshot) { s.Partitions[0].MaxTime = 30 }, mkJob(1, limit(60)), ReasonPartTimeLimit},
		{"node limit", func(s *Snapshot) { s.Partitions[0].MaxNodes = 1 }, mkJob(1, nodesN(2, 2)), ReasonPartNodeLimit},
		{"more nodes than the partition", nil, mkJob(1, nodesN(9, 9)), ReasonPartNodeLimit},
		{"bad feature", nil, mkJob(1, feat("nosuch")), ReasonBadConstraints},
		{"bad constraint syntax", nil, mkJob(1, feat("(a|b)&c")), ReasonBadConstraints},
		{"too much memory", nil, mkJob(1, memNode(1e6)), ReasonBadConstraints},
		{"required node down", func(s *Snapshot) { s.Nodes[1].State = NodeDown }, mkJob(1, reqNodes(1)), ReasonReqNodeNotAvail},
		{"root only", func(s *Snapshot) { s.Partitions[0].RootOnly = true }, mkJob(1), ReasonPartConfig},
		{"allow groups", func(s *Snapshot) { s.Partitions[0].AllowGIDs = []uint32{5} }, mkJob(1), ReasonPartConfig},
		{"allow groups by supplementary group", func(s *Snapshot) { s.Partitions[0].AllowGIDs = []uint32{5} },
			mkJob(1, modify(func(j *Job) { j.Groups = []uint32{5} })), ReasonNone},
		{"allow accounts", func(s *Snapshot) { s.Partitions[0].AllowAccounts = []string{"phys"} }, mkJob(1), ReasonAccount},
		{"deny accounts", func(s *Snapshot) { s.Partitions[0].DenyAccounts = []string{"chem"} },
			mkJob(1, modify(func(j *Job) { j.Account = "chem" })), ReasonAccount},
		{"unknown partition", nil, mkJob(1, parts("nosuch")), ReasonPartConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(4, 8, 8000))
			if tc.mod != nil {
				tc.mod(s)
			}
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			if tc.want == ReasonNone {
				mustStart(t, p, 1)
				return
			}
			mustPend(t, p, 1, tc.want)
		})
	}
}

func TestMultiplePartitions(t *testing.T) {
	s := snap(mkNodes(4, 8, 8000))
	s.Partitions = []Partition{mkPart("a", []int{0, 1}), mkPart("b", []int{2, 3})}
	s.Partitions[1].Default = false
	s.Running = []Allocation{running(99, 5000, 8, 0, 1)}
	s.Pending = []Job{mkJob(1, parts("a", "b"))}
	p := Schedule(s)
	st := mustStart(t, p, 1)
	if st.Partition != "b" || st.Alloc.Nodes[0].Node != 2 {
		t.Fatalf("started in %s on %v", st.Partition, nodesOf(st))
	}
}

func TestPriorityTierFirst(t *testing.T) {
	s := snap(mkNodes(1, 8, 8000))
	s.Partitions = []Partition{mkPart("low", []int{0}), mkPart("high", []int{0})}
	s.Partitions[1].PriorityTier = 10
	s.Pending = []Job{
		mkJob(1, parts("low"), tasks(8), prio(1000)),
		mkJob(2, parts("high"), tasks(8), prio(1)),
	}
	p := Schedule(s)
	mustStart(t, p, 2)
	mustPend(t, p, 1, ReasonResources)
}

func TestExclusiveUser(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Partitions[0].ExclusiveUser = true
	s.Running = []Allocation{running(99, 5000, 1, 0)} // user 2000 on node 0
	s.Pending = []Job{mkJob(1, user(1000)), mkJob(2, user(2000))}
	p := Schedule(s)
	if got := nodesOf(mustStart(t, p, 1)); !slices.Equal(got, []int{1}) {
		t.Fatalf("job 1 on %v, want [1]", got)
	}
	if got := nodesOf(mustStart(t, p, 2)); !slices.Equal(got, []int{0}) {
		t.Fatalf("job 2 on %v, want [0]", got)
	}
}

func TestBackfillLimits(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Config.BF.MaxJobTest = 2
	s.Running = []Allocation{running(99, 5000, 8, 0)}
	s.Pending = []Job{
		mkJob(1, nodesN(2, 2), exclusive()),
		mkJob(2, limit(10)),
		mkJob(3, limit(10)),
	}
	p := Backfill(s)
	mustPend(t, p, 1, ReasonResources)
	mustStart(t, p, 2)
	if pendingOf(p, 3) == nil {
		t.Fatalf("job 3 was tested beyond bf_max_job_test")
	}
}

func TestEdgeCases(t *testing.T) {
	// No nodes at all.
	s := &Snapshot{Now: 10, Config: DefaultConfig(), Partitions: []Partition{mkPart("p", nil)}}
	s.Pending = []Job{mkJob(1)}
	if p := Schedule(s); len(p.Starts) != 0 || pendingOf(p, 1) == nil {
		t.Fatalf("plan %+v", p)
	}
	// No partitions.
	s = &Snapshot{Now: 10, Config: DefaultConfig(), Nodes: mkNodes(2, 4, 1000)}
	s.Pending = []Job{mkJob(1)}
	mustPend(t, Schedule(s), 1, ReasonPartConfig)
	// Nothing pending.
	s = snap(mkNodes(2, 4, 1000))
	if p := Schedule(s); len(p.Starts)+len(p.Pending) != 0 {
		t.Fatalf("plan %+v", p)
	}
	// A running job past its end still holds its node.
	s = snap(mkNodes(1, 4, 1000))
	s.Running = []Allocation{running(9, 500, 4, 0)}
	s.Pending = []Job{mkJob(1)}
	mustPend(t, MainPass(s), 1, ReasonResources)
	// Unlimited time limit.
	s = snap(mkNodes(1, 4, 1000))
	s.Pending = []Job{mkJob(1, limit(Infinite32))}
	if st := mustStart(t, Schedule(s), 1); st.Alloc.End != s.Now+InfiniteRun {
		t.Fatalf("end %d", st.Alloc.End)
	}
}
