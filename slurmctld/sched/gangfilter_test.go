package sched

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// genGangSnap is a small random cluster under PreemptMode=SUSPEND,GANG:
// partitions of three tiers (one lower partition possibly PreemptMode=OFF),
// running jobs of every partition holding cores, memory and GPUs, and
// pending jobs of every shape gangMayFit looks at.
func genGangSnap(t *rapid.T) *Snapshot {
	n := rapid.IntRange(1, 6).Draw(t, "nodes")
	cores := rapid.IntRange(1, 6).Draw(t, "cores")
	gpus := rapid.IntRange(0, 2).Draw(t, "gpus")
	var opts []nodeOpt
	if gpus > 0 {
		opts = append(opts, withGPUs("", uint64(gpus)))
	}
	s := snap(mkNodes(n, cores, 4000, opts...))
	s.Config.Preempt = PreemptConfig{Enabled: true, Gang: true, Mode: PreemptSuspend, ReorderCount: 1}
	s.Config.Backfill = rapid.Bool().Draw(t, "backfill")
	s.Config.MemoryConsumable = rapid.IntRange(0, 3).Draw(t, "memory") != 0
	part := func(name string, tier uint16, m PreemptMode) Partition {
		p := mkPart(name, allIdx(n))
		if rapid.IntRange(0, 3).Draw(t, "subset") == 0 {
			p.Nodes = allIdx(rapid.IntRange(1, n).Draw(t, "partNodes"))
		}
		p.Default = false
		p.PriorityTier, p.PreemptMode = tier, m
		if rapid.IntRange(0, 4).Draw(t, "force") == 0 {
			p.MaxShare = uint16(rapid.IntRange(2, 3).Draw(t, "maxShare"))
			p.OverSubscribe = OverSubscribeYes
			if rapid.Bool().Draw(t, "forceShare") {
				p.OverSubscribe = OverSubscribeForce
			}
		}
		return p
	}
	lowMode := PreemptSuspend
	if rapid.IntRange(0, 3).Draw(t, "lowOff") == 0 {
		lowMode = PreemptOff
	}
	s.Partitions = []Partition{part("low", 1, lowMode), part("low2", 1, PreemptSuspend),
		part("mid", 2, PreemptSuspend), part("high", 3, PreemptSuspend)}
	names := []string{"low", "low2", "mid", "high"}
	// Running jobs: each takes free cores of one node.
	used := make([][]bool, n)
	for i := range used {
		used[i] = make([]bool, cores)
	}
	memUsed := make([]uint64, n)
	gpuUsed := make([]uint64, n)
	nRun := rapid.IntRange(0, 3*n).Draw(t, "running")
	for k := range nRun {
		ni := rapid.IntRange(0, n-1).Draw(t, "runNode")
		want := rapid.IntRange(1, cores).Draw(t, "runCores")
		var cs []uint16
		for c := 0; c < cores && len(cs) < want; c++ {
			if !used[ni][c] {
				used[ni][c] = true
				cs = append(cs, uint16(c))
			}
		}
		if len(cs) == 0 {
			continue
		}
		a := partCores(uint32(k+1), names[rapid.IntRange(0, 3).Draw(t, "runPart")], ni, cs...)
		a.UserID = uint32(rapid.IntRange(1, 2).Draw(t, "runUser"))
		a.End = 1000 + int64(rapid.IntRange(1, 600).Draw(t, "runEnd"))*60
		a.Nodes[0].MemoryMB = min(uint64(rapid.IntRange(0, 4000).Draw(t, "runMem")), 4000-memUsed[ni])
		memUsed[ni] += a.Nodes[0].MemoryMB
		if gpus > 0 && gpuUsed[ni] < uint64(gpus) && rapid.Bool().Draw(t, "runGPU") {
			a.Nodes[0].Gres = []Gres{{Name: "gpu", Count: 1}}
			gpuUsed[ni]++
		}
		a.Exclusive = rapid.IntRange(0, 5).Draw(t, "runExcl") == 0 && len(cs) == cores
		s.Running = append(s.Running, a)
	}
	nPend := rapid.IntRange(1, 8).Draw(t, "pending")
	for k := range nPend {
		j := mkJob(uint32(1000+k), parts(names[rapid.IntRange(0, 3).Draw(t, "pendPart")]),
			tasks(uint32(rapid.IntRange(1, n*cores).Draw(t, "tasks"))), prio(uint32(rapid.IntRange(1, 9).Draw(t, "prio"))),
			user(uint32(rapid.IntRange(1, 2).Draw(t, "user"))), limit(uint32(rapid.IntRange(1, 600).Draw(t, "limit"))))
		if rapid.Bool().Draw(t, "hasN") {
			j.MinNodes = uint32(rapid.IntRange(1, n).Draw(t, "minN"))
			j.NumTasks = max(j.NumTasks, j.MinNodes)
			if rapid.Bool().Draw(t, "hasMaxN") {
				j.MaxNodes = uint32(rapid.IntRange(int(j.MinNodes), n).Draw(t, "maxN"))
			}
		}
		switch rapid.IntRange(0, 4).Draw(t, "mem") {
		case 0:
			j.MemPerNode = uint64(rapid.IntRange(1, 4000).Draw(t, "memNode"))
		case 1:
			j.MemPerCPU = uint64(rapid.IntRange(100, 2000).Draw(t, "memCPU"))
		}
		if gpus > 0 && rapid.IntRange(0, 2).Draw(t, "hasGPU") == 0 {
			j.Gres = []GresReq{{Name: "gpu", Count: uint64(rapid.IntRange(1, gpus).Draw(t, "gpu"))}}
		}
		switch rapid.IntRange(0, 5).Draw(t, "share") {
		case 0:
			j.Share = ShareExclusive
		case 1:
			j.Share = ShareOversubscribe
		}
		if rapid.IntRange(0, 4).Draw(t, "tpn") == 0 {
			j.NTasksPerNode = uint16(rapid.IntRange(1, cores).Draw(t, "ntpn"))
		}
		if rapid.IntRange(0, 4).Draw(t, "cpt") == 0 {
			j.CPUsPerTask = uint16(rapid.IntRange(2, 3).Draw(t, "cpus"))
		}
		if n > 1 && rapid.IntRange(0, 4).Draw(t, "exc") == 0 {
			j.ExcNodes = []int{rapid.IntRange(0, n-1).Draw(t, "excNode")}
		}
		s.Pending = append(s.Pending, j)
	}
	return s
}

// TestPropertyGangPrefilterSameDecisions: the plans of the main pass and
// of backfill are the same with gangMayFit as without it.
func TestPropertyGangPrefilterSameDecisions(t *testing.T) {
	defer func() { gangPrefilter = true }()
	rapid.Check(t, func(t *rapid.T) {
		s := genGangSnap(t)
		for _, pass := range []func(*Snapshot) *Plan{Schedule, Backfill} {
			gangPrefilter = false
			want := pass(s)
			gangPrefilter = true
			got := pass(s)
			want.Stats, got.Stats = PassStats{}, PassStats{}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("plan with the gang prefilter differs (-without +with):\n%s", d)
			}
		}
	})
}

// gangBenchSnap is a reviewer's case: 1,024 nodes of 16 cores, 10 cores
// of each held by jobs of a lower tier partition, and pending jobs of the
// higher tier, each excluding a different node so that the pass's failure
// cache does not cover them, that fit nowhere, not even on the lower
// tier's cores. With cores false they want a whole node's memory; with
// cores true all 16 cores, 6 of each node being held by jobs of their own
// tier.
func gangBenchSnap(nPend int, cores bool) *Snapshot {
	s := snap(mkNodes(1024, 16, 64000))
	s.Config.Preempt = PreemptConfig{Enabled: true, Gang: true, Mode: PreemptSuspend, ReorderCount: 1}
	s.Config.Backfill = true
	low, high := mkPart("low", allIdx(1024)), mkPart("high", allIdx(1024))
	low.PriorityTier, low.PreemptMode = 1, PreemptSuspend
	high.Name, high.Default, high.PriorityTier, high.PreemptMode = "high", false, 2, PreemptSuspend
	s.Partitions = []Partition{low, high}
	id := uint32(1)
	for n := range 1024 {
		for c := range 10 {
			s.Running = append(s.Running, partCores(id, "low", n, uint16(c)))
			id++
		}
		if cores {
			s.Running = append(s.Running, partCores(id, "high", n, 10, 11, 12, 13, 14, 15))
			id++
		}
	}
	for k := range nPend {
		j := mkJob(uint32(100000+k), parts("high"), tasks(1), nodesN(1, 1), memNode(64000))
		if cores {
			j = mkJob(uint32(100000+k), parts("high"), tasks(16), nodesN(1, 1))
		}
		j.ExcNodes = []int{k % 1024}
		s.Pending = append(s.Pending, j)
	}
	return s
}

// BenchmarkGangBackfill: go test ./slurmctld/sched -run '^$' -bench GangBackfill
// (gang=off is the same pass without GANG, nofilter is GANG without
// gangMayFit, as before it, for comparison).
func BenchmarkGangBackfill(b *testing.B) {
	defer func() { gangPrefilter = true }()
	for _, what := range []string{"mem", "cores"} {
		for _, bc := range []struct {
			name         string
			gang, filter bool
		}{{"gang=off", false, true}, {"gang=on,nofilter", true, false}, {"gang=on", true, true}} {
			b.Run(what+"/"+bc.name, func(b *testing.B) {
				s := gangBenchSnap(500, what == "cores")
				s.Config.Preempt.Gang = bc.gang
				gangPrefilter = bc.filter
				for b.Loop() {
					if p := Backfill(s); len(p.Starts) != 0 {
						b.Fatalf("%d starts, want none", len(p.Starts))
					}
				}
			})
		}
	}
}
