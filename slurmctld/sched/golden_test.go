package sched

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plan golden file guards the scheduler's behaviour across internal
// rewrites (the backfill index in particular): many seeded random
// snapshots and the benchmark snapshots are scheduled, and each plan's
// digest must match the one recorded from the reference implementation.
//
//	go test -run TestGoldenPlans ./slurmctld/sched/ -update-plans   # rewrite
//	GOSLURM_PLAN_DUMP=/tmp/plans go test -run TestGoldenPlans ...  # full plans, to diff two versions
var updatePlans = flag.Bool("update-plans", false, "rewrite testdata/plans.golden")

const goldenPlansFile = "testdata/plans.golden"

type goldenCase struct {
	name string
	big  bool // skipped with -short
	run  func() []*Plan
}

func goldenCases() []goldenCase {
	var cases []goldenCase
	passes := []struct {
		name string
		f    func(*Snapshot) *Plan
	}{{"schedule", Schedule}, {"backfill", Backfill}, {"main", MainPass}}
	for seed := uint64(1); seed <= 300; seed++ {
		for _, ps := range passes {
			cases = append(cases, goldenCase{name: fmt.Sprintf("random/%d/%s", seed, ps.name), run: func() []*Plan {
				return []*Plan{ps.f(randomSnapshot(seed, 1))}
			}})
		}
	}
	for seed := uint64(1); seed <= 12; seed++ {
		cases = append(cases, goldenCase{name: fmt.Sprintf("large/%d", seed), run: func() []*Plan {
			return []*Plan{Backfill(randomSnapshot(1000+seed, 8))}
		}})
	}
	for seed := uint64(1); seed <= 40; seed++ {
		cases = append(cases, goldenCase{name: fmt.Sprintf("sim/%d", seed), run: func() []*Plan {
			return simulatePlans(2000 + seed)
		}})
	}
	for _, nn := range []int{1000, 10000} {
		for _, np := range []int{1000, 10000, 50000} {
			big := nn*np > 1000*10000
			size := fmt.Sprintf("%d/%d", nn, np)
			cases = append(cases,
				goldenCase{name: "bench/backfill/" + size, big: big, run: func() []*Plan {
					return []*Plan{Backfill(benchSnapshot(nn, np))}
				}},
				goldenCase{name: "bench/reserve100/" + size, big: big, run: func() []*Plan {
					s := benchSnapshot(nn, np)
					s.Config.BF.JobPartCountReserve = 100
					return []*Plan{Backfill(s)}
				}},
				goldenCase{name: "bench/wholenodes/" + size, big: big, run: func() []*Plan {
					return []*Plan{Backfill(wholeNodesSnapshot(nn, np))}
				}},
				goldenCase{name: "bench/main/" + size, big: big, run: func() []*Plan {
					return []*Plan{MainPass(benchSnapshot(nn, np))}
				}},
			)
		}
	}
	return cases
}

func TestGoldenPlans(t *testing.T) {
	want := map[string]string{}
	if !*updatePlans {
		f, err := os.Open(goldenPlansFile)
		if err != nil {
			t.Fatalf("%v (run with -update-plans to create it)", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			name, sum, ok := strings.Cut(sc.Text(), " ")
			if ok {
				want[name] = sum
			}
		}
		f.Close()
	}
	dump := os.Getenv("GOSLURM_PLAN_DUMP")
	var out strings.Builder
	for _, gc := range goldenCases() {
		if gc.big && testing.Short() && !*updatePlans {
			continue
		}
		var text strings.Builder
		for i, p := range gc.run() {
			fmt.Fprintf(&text, "plan %d\n", i)
			writePlan(&text, p)
		}
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(text.String())))
		fmt.Fprintf(&out, "%s %s\n", gc.name, sum)
		if dump != "" {
			path := filepath.Join(dump, strings.ReplaceAll(gc.name, "/", "_")+".txt")
			if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if !*updatePlans && want[gc.name] != sum {
			t.Errorf("%s: plan differs from the golden one (digest %s, want %s)", gc.name, sum, want[gc.name])
		}
	}
	if *updatePlans {
		if err := os.MkdirAll(filepath.Dir(goldenPlansFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPlansFile, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writePlan prints every field of a plan, one line per start or pending
// job.
func writePlan(b *strings.Builder, p *Plan) {
	for _, st := range p.Starts {
		fmt.Fprintf(b, "start %d %s bf=%t %d-%d excl=%t user=%t uid=%d\n", st.JobID, st.Partition, st.Backfill,
			st.Alloc.Start, st.Alloc.End, st.Alloc.Exclusive, st.Alloc.ExclusiveUser, st.Alloc.UserID)
		for _, na := range st.Alloc.Nodes {
			fmt.Fprintf(b, "  node %d cores %v cpus %d mem %d gres %v\n", na.Node, na.Cores, na.CPUs, na.MemoryMB, na.Gres)
		}
	}
	for _, pd := range p.Pending {
		fmt.Fprintf(b, "pending %d %v %d %s\n", pd.JobID, pd.Reason, pd.StartTime, pd.Partition)
	}
}

// wholeNodesSnapshot is BenchmarkBackfillWholeNodes's snapshot.
func wholeNodesSnapshot(nn, np int) *Snapshot {
	s := benchSnapshot(nn, np)
	s.Config.WholeNodes = true
	rng := rand.New(rand.NewPCG(3, uint64(nn)))
	s.Running = s.Running[:0]
	for ni := 0; ni < nn; ni++ {
		na := NodeAlloc{Node: ni, CPUs: 32, MemoryMB: 128000}
		for k := 0; k < 32; k++ {
			na.Cores = append(na.Cores, uint16(k))
		}
		s.Running = append(s.Running, Allocation{JobID: uint32(ni + 1), UserID: 1, Exclusive: true,
			Start: s.Now - 100, End: s.Now + int64(60+rng.IntN(24*3600)), Nodes: []NodeAlloc{na}})
	}
	return s
}

// randomSnapshot is a seeded random cluster, running work and queue using
// most of what the model can express. scale multiplies node and job
// counts.
func randomSnapshot(seed uint64, scale int) *Snapshot {
	rng := rand.New(rand.NewPCG(seed, 77))
	pick := func(n int) int { return rng.IntN(n) }
	chance := func(pct int) bool { return rng.IntN(100) < pct }

	// Node configurations, laid out in runs so that contiguity matters.
	type ncfg struct {
		cores, tpc int
		mem        uint64
		gpus       uint64
		gtype      string
		feats      []string
		weight     uint32
	}
	featSets := [][]string{nil, {"a"}, {"b"}, {"a", "b"}, {"ib"}, {"a", "ib"}, {"c"}}
	var cfgs []ncfg
	for k := 1 + pick(3); k > 0; k-- {
		c := ncfg{cores: []int{2, 4, 8, 16}[pick(4)], tpc: 1 + pick(2), mem: uint64(2000 * (1 + pick(8))),
			feats: featSets[pick(len(featSets))], weight: uint32(1 + pick(3))}
		if chance(40) {
			c.gpus = uint64(1 + pick(4))
			c.gtype = []string{"", "a100", "v100"}[pick(3)]
		}
		cfgs = append(cfgs, c)
	}
	nn := (2 + pick(40)) * scale
	var nodes []Node
	for len(nodes) < nn {
		c := cfgs[pick(len(cfgs))]
		for k := 1 + pick(6); k > 0 && len(nodes) < nn; k-- {
			nd := Node{Name: fmt.Sprintf("n%d", len(nodes)+1), Sockets: 1, CoresPerSocket: uint16(c.cores),
				ThreadsPerCore: uint16(c.tpc), CPUs: uint16(c.cores * c.tpc), RealMemory: c.mem,
				Features: c.feats, Weight: c.weight}
			if c.gpus > 0 {
				nd.Gres = []Gres{{Name: "gpu", Type: c.gtype, Count: c.gpus}}
			}
			if chance(5) {
				nd.State = []NodeState{NodeDown, NodeDrain, NodeNoRespond, NodePoweredDown}[pick(4)]
			}
			nodes = append(nodes, nd)
		}
	}

	cfg := DefaultConfig()
	cfg.Backfill = chance(70)
	cfg.WholeNodes = chance(15)
	cfg.MemoryConsumable = chance(75)
	if chance(80) {
		cfg.DefMemPerCPU = uint64(100 * (1 + pick(10)))
	}
	cfg.BF.Resolution = []int64{60, 60, 300, 17}[pick(4)]
	cfg.BF.Window = []int64{3600, 86400, 7200, 600}[pick(4)]
	cfg.BF.MaxJobTest = []int{0, 0, 0, 5, 50}[pick(5)]
	if chance(15) {
		cfg.BF.MaxJobUser = 1 + pick(5)
	}
	if chance(10) {
		cfg.BF.MaxJobPart = 1 + pick(20)
	}
	if chance(10) {
		cfg.BF.MaxJobStart = 1 + pick(5)
	}
	if chance(15) {
		cfg.BF.JobPartCountReserve = 1 + pick(5)
	}
	cfg.BF.BusyNodes = chance(30)
	if chance(10) {
		cfg.BF.MinAgeReserve = 600
	}
	if chance(10) {
		cfg.BF.MinPrioReserve = 50
	}

	s := &Snapshot{Now: 100_000, Config: cfg, Nodes: nodes}
	np := 1 + pick(3)
	for pi := 0; pi < np; pi++ {
		var idx []int
		switch {
		case pi == 0 || chance(30):
			idx = allIdx(nn)
		case chance(50):
			lo := pick(nn)
			hi := lo + 1 + pick(nn-lo)
			for i := lo; i < hi; i++ {
				idx = append(idx, i)
			}
		default:
			for i := 0; i < nn; i++ {
				if chance(60) {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				idx = []int{pick(nn)}
			}
		}
		p := mkPart(fmt.Sprintf("p%d", pi), idx)
		p.Default = pi == 0
		p.PriorityTier = uint16(pick(2))
		if chance(20) {
			p.MaxTime = uint32(60 * (1 + pick(24)))
		}
		if chance(20) {
			p.DefaultTime = uint32(30 * (1 + pick(4)))
		}
		if chance(15) {
			p.MaxNodes = uint32(1 + pick(8))
		}
		if chance(10) {
			p.MinNodes = uint32(1 + pick(2))
		}
		if chance(10) {
			p.MaxCPUsPerNode = uint32(2 + pick(8))
		}
		if chance(15) {
			p.DefMemPerCPU = uint64(200 * (1 + pick(5)))
		}
		if chance(10) {
			p.ExclusiveUser = true
		}
		if chance(10) {
			p.OverSubscribe = OverSubscribeExclusive
		}
		if chance(5) {
			p.State = []PartState{PartDown, PartDrain, PartInactive}[pick(3)]
		}
		if chance(5) {
			p.AllowAccounts = []string{"acct1"}
		}
		s.Partitions = append(s.Partitions, p)
	}

	// Running work: per node a few core allocations, some exclusive, some
	// spanning the next nodes.
	id := uint32(1)
	freeCores := make([][]uint16, nn)
	freeMem := make([]uint64, nn)
	freeGPU := make([]uint64, nn)
	for i := range nodes {
		for k := 0; k < nodes[i].Cores(); k++ {
			freeCores[i] = append(freeCores[i], uint16(k))
		}
		freeMem[i] = nodes[i].RealMemory
		if len(nodes[i].Gres) > 0 {
			freeGPU[i] = nodes[i].Gres[0].Count
		}
	}
	for i := 0; i < nn; i++ {
		for k := pick(4); k > 0; k-- {
			a := Allocation{JobID: 900000 + id, UserID: uint32(1 + pick(4)), Partition: "p0",
				Start: s.Now - 1000, End: s.Now - 50 + int64(pick(30000))}
			id++
			if chance(8) {
				a.End = s.Now - int64(pick(500))
			}
			whole := chance(10) && len(freeCores[i]) == nodes[i].Cores()
			a.Exclusive = whole
			a.ExclusiveUser = chance(5)
			span := 1
			if chance(15) {
				span = 1 + pick(3)
			}
			for ni := i; ni < min(i+span, nn); ni++ {
				if len(freeCores[ni]) == 0 {
					continue
				}
				if whole && len(freeCores[ni]) != nodes[ni].Cores() {
					continue
				}
				take := 1 + pick(len(freeCores[ni]))
				if whole {
					take = len(freeCores[ni])
				}
				na := NodeAlloc{Node: ni, Cores: append([]uint16(nil), freeCores[ni][:take]...)}
				freeCores[ni] = freeCores[ni][take:]
				na.CPUs = uint32(take * int(nodes[ni].ThreadsPerCore))
				na.MemoryMB = min(freeMem[ni], uint64(take)*uint64(100*(1+pick(6))))
				freeMem[ni] -= na.MemoryMB
				if freeGPU[ni] > 0 && chance(50) {
					g := 1 + uint64(pick(int(freeGPU[ni])))
					freeGPU[ni] -= g
					na.Gres = []Gres{{Name: "gpu", Type: nodes[ni].Gres[0].Type, Count: g}}
				}
				a.Nodes = append(a.Nodes, na)
			}
			if len(a.Nodes) > 0 {
				s.Running = append(s.Running, a)
			}
		}
	}

	// The queue.
	nj := (1 + pick(120)) * scale
	for i := 0; i < nj; i++ {
		j := Job{JobID: id, Priority: uint32(1 + pick(100)), SubmitTime: s.Now - int64(pick(5000)),
			UserID: uint32(1 + pick(6)), GroupID: 100, TimeLimit: uint32(1 + pick(600))}
		id++
		switch x := pick(100); {
		case x < 50:
			j.NumTasks = uint32(1 + pick(16))
		case x < 70:
			j.MinNodes = uint32(1 + pick(4))
			if chance(30) {
				j.MaxNodes = j.MinNodes + uint32(pick(3))
			}
			j.NumTasks = j.MinNodes * uint32(1+pick(8))
		case x < 80:
			j.NTasksPerNode = uint16(1 + pick(4))
			if chance(50) {
				j.MinNodes = uint32(1 + pick(3))
			} else {
				j.NumTasks = uint32(1 + pick(10))
			}
		default:
			j.MinNodes = uint32(1 + pick(max(nn/2, 1)))
			j.NumTasks = j.MinNodes
		}
		if chance(20) {
			j.CPUsPerTask = uint16(1 + pick(4))
		}
		if chance(5) {
			j.MinCPUs = uint32(1 + pick(8))
		}
		switch pick(10) {
		case 0:
			j.MemPerNode = uint64(500 * (1 + pick(8)))
		case 1:
			j.MemPerCPU = uint64(100 * (1 + pick(10)))
		case 2:
			j.MemAll = chance(50)
		}
		if chance(15) {
			j.Gres = []GresReq{{Name: "gpu", Type: []string{"", "a100", "v100"}[pick(3)], Count: uint64(1 + pick(2))}}
		} else if chance(5) {
			j.GPUs = uint32(1 + pick(4))
		}
		if chance(20) {
			j.Features = []string{"a", "b", "a&b", "a|b", "[a|b]", "ib", "a*1", "[a*1&b*1]", "nosuch", "a&(b)"}[pick(10)]
		}
		j.Contiguous = chance(8)
		switch pick(12) {
		case 0:
			j.Share = ShareExclusive
		case 1:
			j.Share = ShareUser
		}
		if chance(4) {
			j.ReqNodes = []int{pick(nn)}
		}
		if chance(4) {
			j.ExcNodes = []int{pick(nn), pick(nn)}
		}
		switch pick(20) {
		case 0:
			j.TimeLimit = NoValue32
		case 1:
			j.TimeLimit = Infinite32
		}
		if chance(20) {
			j.Partitions = []string{fmt.Sprintf("p%d", pick(np))}
			if chance(40) {
				j.Partitions = append(j.Partitions, fmt.Sprintf("p%d", pick(np+1)))
			}
		}
		switch pick(40) {
		case 0:
			j.Hold = HoldUser
		case 1:
			j.DependencyWait = true
		case 2:
			j.BeginTime = s.Now + 100
		}
		if chance(5) {
			j.Account = "acct1"
		}
		s.Pending = append(s.Pending, j)
	}
	return s
}

// simulatePlans runs a small random cluster for a few dozen passes, jobs
// running a random part of their limit, and returns every plan.
func simulatePlans(seed uint64) []*Plan {
	s := randomSnapshot(seed, 1)
	rng := rand.New(rand.NewPCG(seed, 99))
	queue := s.Pending
	var plans []*Plan
	step := max(s.Config.BF.Resolution, 30)
	// The scheduler sees the time limit as the end; jobs really end
	// earlier.
	ends := map[uint32]int64{}
	for _, a := range s.Running {
		ends[a.JobID] = a.End
	}
	for k := 0; k < 25; k++ {
		s.Pending = queue
		p := Schedule(s)
		plans = append(plans, p)
		started := map[uint32]bool{}
		for _, st := range p.Starts {
			started[st.JobID] = true
			ends[st.JobID] = st.Alloc.Start + 1 + rng.Int64N(st.Alloc.End-st.Alloc.Start)
			s.Running = append(s.Running, st.Alloc)
		}
		var left []Job
		for _, j := range queue {
			if !started[j.JobID] {
				left = append(left, j)
			}
		}
		queue = left
		s.Now += step
		kept := s.Running[:0:0]
		for _, a := range s.Running {
			if ends[a.JobID] > s.Now {
				kept = append(kept, a)
			}
		}
		s.Running = kept
	}
	return plans
}
