package sched

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestOverSubscribe checks core sharing under OverSubscribe=YES:N and
// FORCE:N on one node of 4 cores, 8000 MB.
func TestOverSubscribe(t *testing.T) {
	over := func() jobOpt { return modify(func(j *Job) { j.Share = ShareOversubscribe }) }
	part := func(os OverSubscribe, n uint16) func(*Snapshot) {
		return func(s *Snapshot) { s.Partitions[0].OverSubscribe, s.Partitions[0].MaxShare = os, n }
	}
	tests := []struct {
		name    string
		mod     func(*Snapshot)
		jobs    []Job
		started []uint32
	}{
		{"FORCE:2 puts two jobs on each core", part(OverSubscribeForce, 2),
			[]Job{mkJob(1, tasks(4)), mkJob(2, tasks(4)), mkJob(3, tasks(4))}, []uint32{1, 2}},
		{"FORCE:3", part(OverSubscribeForce, 3),
			[]Job{mkJob(1, tasks(4)), mkJob(2, tasks(4)), mkJob(3, tasks(4))}, []uint32{1, 2, 3}},
		{"YES:2 shares only with --oversubscribe", part(OverSubscribeYes, 2),
			[]Job{mkJob(1, tasks(4), over()), mkJob(2, tasks(4))}, []uint32{1}},
		{"YES:2 with --oversubscribe", part(OverSubscribeYes, 2),
			[]Job{mkJob(1, tasks(4), over()), mkJob(2, tasks(4), over())}, []uint32{1, 2}},
		{"a job that does not share keeps sharing jobs off its node", part(OverSubscribeYes, 2),
			[]Job{mkJob(1, tasks(2)), mkJob(2, tasks(4), over())}, []uint32{1}},
		{"--oversubscribe without YES/FORCE", nil,
			[]Job{mkJob(1, tasks(4), over()), mkJob(2, tasks(4), over())}, []uint32{1}},
		{"--exclusive under FORCE", part(OverSubscribeForce, 2),
			[]Job{mkJob(1, tasks(1), exclusive()), mkJob(2, tasks(1))}, []uint32{1}},
		{"memory stays consumable", part(OverSubscribeForce, 4),
			[]Job{mkJob(1, tasks(4), memNode(5000)), mkJob(2, tasks(4), memNode(3000)), mkJob(3, tasks(4), memNode(1000))},
			[]uint32{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(1, 4, 8000))
			if tc.mod != nil {
				tc.mod(s)
			}
			s.Pending = tc.jobs
			p := Schedule(s)
			var got []uint32
			for _, st := range p.Starts {
				got = append(got, st.JobID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.started) {
				t.Fatalf("started %v, want %v", got, tc.started)
			}
		})
	}

	t.Run("idle cores first", func(t *testing.T) {
		s := snap(mkNodes(1, 4, 8000))
		part(OverSubscribeForce, 2)(s)
		s.Pending = []Job{mkJob(1, tasks(2)), mkJob(2, tasks(2)), mkJob(3, tasks(3))}
		p := Schedule(s)
		if c := mustStart(t, p, 2).Alloc.Nodes[0].Cores; !slices.Equal(c, []uint16{2, 3}) {
			t.Fatalf("job 2 got cores %v, want the idle 2 and 3", c)
		}
		if !mustStart(t, p, 3).Alloc.Shared {
			t.Fatal("job 3 not marked Shared")
		}
	})
	t.Run("another sharing partition's jobs keep others off the node", func(t *testing.T) {
		s := snap(mkNodes(2, 4, 8000))
		shared := mkPart("shared", []int{0, 1})
		shared.Default, shared.OverSubscribe, shared.MaxShare = false, OverSubscribeForce, 2
		s.Partitions = append(s.Partitions, shared)
		s.Running = []Allocation{running(90, 5000, 1, 0)}
		s.Running[0].Partition, s.Running[0].Shared = "shared", true
		s.Pending = []Job{mkJob(1, tasks(1))} // batch, does not share
		if got := nodesOf(mustStart(t, Schedule(s), 1)); !slices.Equal(got, []int{1}) {
			t.Fatalf("job 1 on %v, want node 1", got)
		}
	})
	t.Run("backfill shares too", func(t *testing.T) {
		s := snap(mkNodes(1, 4, 8000))
		part(OverSubscribeForce, 2)(s)
		s.Running = []Allocation{running(90, 5000, 4, 0)}
		s.Running[0].Shared = true
		s.Pending = []Job{mkJob(1, tasks(4))}
		st := mustStart(t, Backfill(s), 1)
		if !st.Backfill || len(st.Alloc.Nodes[0].Cores) != 4 {
			t.Fatalf("start %+v", st)
		}
	})
}

// TestPropertyOverSubscribe runs random clusters with a sharing partition
// (YES:N or FORCE:N) and a partition that does not share over the same
// nodes through simulated time, and checks every plan: a core never holds
// more than N jobs, only jobs marked Shared share a core, memory and GPUs
// are never over-committed, and a start with a reduced time limit ends at
// that limit.
func TestPropertyOverSubscribe(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "nodes")
		cores := rapid.IntRange(1, 8).Draw(t, "cores")
		nodes := mkNodes(n, cores, 4000, withGPUs("", 2))
		maxShare := rapid.IntRange(2, 4).Draw(t, "maxshare")
		sh := mkPart("shared", allIdx(n))
		sh.MaxShare = uint16(maxShare)
		sh.OverSubscribe = OverSubscribeYes
		if rapid.Bool().Draw(t, "force") {
			sh.OverSubscribe = OverSubscribeForce
		}
		plain := mkPart("plain", allIdx(n)[:rapid.IntRange(1, n).Draw(t, "plainNodes")])
		plain.Default = false
		cfg := DefaultConfig()
		cfg.Backfill = rapid.Bool().Draw(t, "backfill")
		cfg.MemoryConsumable = rapid.Bool().Draw(t, "memory")
		cfg.DefMemPerCPU = 300
		cfg.BF.MaxJobTest = 0
		s := &Snapshot{Now: 0, Config: cfg, Nodes: nodes, Partitions: []Partition{sh, plain}}

		var queue []Job
		runFor := map[uint32]int64{}
		for i := 0; i < rapid.IntRange(1, 25).Draw(t, "jobs"); i++ {
			j := Job{JobID: uint32(i + 1), Priority: uint32(rapid.IntRange(1, 5).Draw(t, "prio")),
				UserID: 1, TimeLimit: uint32(rapid.IntRange(1, 120).Draw(t, "limit")),
				NumTasks: uint32(rapid.IntRange(1, n*cores).Draw(t, "tasks"))}
			if rapid.IntRange(0, 3).Draw(t, "inPlain") == 0 {
				j.Partitions = []string{"plain"}
			}
			if rapid.Bool().Draw(t, "over") {
				j.Share = ShareOversubscribe
			}
			if rapid.IntRange(0, 3).Draw(t, "hasMem") == 0 {
				j.MemPerCPU = uint64(rapid.IntRange(100, 1500).Draw(t, "mem"))
			}
			if rapid.IntRange(0, 3).Draw(t, "hasGPU") == 0 {
				j.Gres = []GresReq{{Name: "gpu", Count: uint64(rapid.IntRange(1, 2).Draw(t, "gpu"))}}
			}
			if rapid.IntRange(0, 3).Draw(t, "hasTimeMin") == 0 {
				j.TimeMin = uint32(rapid.IntRange(1, int(j.TimeLimit)).Draw(t, "timemin"))
			}
			runFor[j.JobID] = int64(rapid.IntRange(1, int(j.TimeLimit)*60).Draw(t, "run"))
			queue = append(queue, j)
		}
		ends := map[uint32]int64{}
		for step := 0; step < 60 && (len(queue) > 0 || len(s.Running) > 0); step++ {
			s.Pending = queue
			p := Schedule(s)
			started := map[uint32]bool{}
			for _, st := range p.Starts {
				started[st.JobID] = true
				if st.TimeLimit != 0 && st.Alloc.End != st.Alloc.Start+int64(st.TimeLimit)*60 {
					t.Fatalf("job %d: TimeLimit %d but runs %d-%d", st.JobID, st.TimeLimit, st.Alloc.Start, st.Alloc.End)
				}
				ends[st.JobID] = min(st.Alloc.Start+runFor[st.JobID], st.Alloc.End)
				s.Running = append(s.Running, st.Alloc)
			}
			if err := checkSharing(s, maxShare); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			var left []Job
			for _, j := range queue {
				if !started[j.JobID] {
					left = append(left, j)
				}
			}
			queue = left
			s.Now += 60
			kept := s.Running[:0:0]
			for _, a := range s.Running {
				if ends[a.JobID] > s.Now {
					kept = append(kept, a)
				}
			}
			s.Running = kept
		}
	})
}

// checkSharing verifies the running allocations of s independently of
// the scheduler.
func checkSharing(s *Snapshot, maxShare int) error {
	type core struct{ node, core int }
	holders := map[core][]*Allocation{}
	mem := make([]uint64, len(s.Nodes))
	gpu := make([]uint64, len(s.Nodes))
	for i := range s.Running {
		a := &s.Running[i]
		for _, na := range a.Nodes {
			for _, k := range na.Cores {
				holders[core{na.Node, int(k)}] = append(holders[core{na.Node, int(k)}], a)
			}
			mem[na.Node] += na.MemoryMB
			for _, g := range na.Gres {
				gpu[na.Node] += g.Count
			}
		}
	}
	for c, hs := range holders {
		if len(hs) > maxShare {
			return fmt.Errorf("core %d of node %d held by %d jobs (max %d)", c.core, c.node, len(hs), maxShare)
		}
		if len(hs) > 1 {
			for _, a := range hs {
				if !a.Shared {
					return fmt.Errorf("core %d of node %d shared, but job %d does not share", c.core, c.node, a.JobID)
				}
			}
		}
	}
	for ni := range s.Nodes {
		if s.Config.MemoryConsumable && mem[ni] > s.Nodes[ni].RealMemory {
			return fmt.Errorf("node %d: memory over-committed (%d > %d)", ni, mem[ni], s.Nodes[ni].RealMemory)
		}
		var total uint64
		for _, g := range s.Nodes[ni].Gres {
			total += g.Count
		}
		if gpu[ni] > total {
			return fmt.Errorf("node %d: %d GPUs allocated of %d", ni, gpu[ni], total)
		}
	}
	return nil
}
