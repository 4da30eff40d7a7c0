package sched

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// simJob is a job of the property simulation: its request and how long it
// really runs.
type simJob struct {
	job     Job
	submit  int64
	runtime int64
}

type simCluster struct {
	nodes []Node
	cfg   Config
	jobs  []simJob
}

func genCluster(t *rapid.T) simCluster {
	n := rapid.IntRange(1, 10).Draw(t, "nodes")
	cores := rapid.IntRange(1, 8).Draw(t, "cores")
	gpus := rapid.IntRange(0, 2).Draw(t, "gpus")
	var opts []nodeOpt
	if gpus > 0 {
		opts = append(opts, withGPUs("", uint64(gpus)))
	}
	nodes := mkNodes(n, cores, 4000, opts...)
	for i := range nodes {
		nodes[i].Weight = uint32(rapid.IntRange(1, 2).Draw(t, "weight"))
	}
	cfg := DefaultConfig()
	cfg.Backfill = rapid.Bool().Draw(t, "backfill")
	cfg.MemoryConsumable = rapid.Bool().Draw(t, "memory")
	cfg.WholeNodes = rapid.IntRange(0, 4).Draw(t, "linear") == 0
	cfg.DefMemPerCPU = 500
	cfg.BF.MaxJobTest = 0
	cfg.BF.BusyNodes = rapid.Bool().Draw(t, "busy")
	njobs := rapid.IntRange(1, 20).Draw(t, "jobs")
	var jobs []simJob
	for i := 0; i < njobs; i++ {
		j := Job{
			JobID:       uint32(i + 1),
			Priority:    uint32(rapid.IntRange(1, 5).Draw(t, "prio")),
			UserID:      uint32(rapid.IntRange(1, 2).Draw(t, "uid")),
			TimeLimit:   uint32(rapid.IntRange(1, 300).Draw(t, "limit")),
			NumTasks:    uint32(rapid.IntRange(1, n*cores).Draw(t, "tasks")),
			CPUsPerTask: uint16(rapid.IntRange(1, 2).Draw(t, "cpt")),
		}
		if rapid.IntRange(0, 2).Draw(t, "hasN") == 0 {
			j.MinNodes = uint32(rapid.IntRange(1, n).Draw(t, "minN"))
			j.NumTasks = max(j.NumTasks, j.MinNodes)
		}
		if rapid.IntRange(0, 3).Draw(t, "exclusive") == 0 {
			j.Share = ShareExclusive
		}
		if rapid.IntRange(0, 3).Draw(t, "hasMem") == 0 {
			j.MemPerCPU = uint64(rapid.IntRange(100, 2000).Draw(t, "mem"))
		}
		if gpus > 0 && rapid.IntRange(0, 2).Draw(t, "hasGPU") == 0 {
			j.Gres = []GresReq{{Name: "gpu", Count: uint64(rapid.IntRange(1, gpus).Draw(t, "gpu"))}}
		}
		if rapid.IntRange(0, 5).Draw(t, "contig") == 0 {
			j.Contiguous = true
		}
		sj := simJob{job: j, submit: int64(rapid.IntRange(0, 180).Draw(t, "submit")) * 60}
		sj.runtime = int64(rapid.IntRange(1, int(j.TimeLimit)*60).Draw(t, "run"))
		jobs = append(jobs, sj)
	}
	return simCluster{nodes: nodes, cfg: cfg, jobs: jobs}
}

type runningJob struct {
	alloc Allocation
	end   int64
}

// usage is an independent account of what is allocated, to catch double
// allocation.
type usage struct {
	cores map[[2]int]uint32 // (node, core) -> job
	mem   []uint64
	gres  []uint64
	jobs  []int
	excl  []bool
}

func newUsage(n int) *usage {
	return &usage{cores: map[[2]int]uint32{}, mem: make([]uint64, n), gres: make([]uint64, n), jobs: make([]int, n), excl: make([]bool, n)}
}

func (u *usage) add(nodes []Node, cfg Config, a Allocation) error {
	for _, na := range a.Nodes {
		nd := &nodes[na.Node]
		if u.excl[na.Node] || (a.Exclusive && u.jobs[na.Node] > 0) {
			return fmt.Errorf("job %d: node %d shared with an exclusive job", a.JobID, na.Node)
		}
		for _, k := range na.Cores {
			if int(k) >= nd.Cores() {
				return fmt.Errorf("job %d: core %d beyond node %d", a.JobID, k, na.Node)
			}
			if other, ok := u.cores[[2]int{na.Node, int(k)}]; ok {
				return fmt.Errorf("job %d: core %d of node %d already held by job %d", a.JobID, k, na.Node, other)
			}
			u.cores[[2]int{na.Node, int(k)}] = a.JobID
		}
		if cfg.MemoryConsumable {
			u.mem[na.Node] += na.MemoryMB
			if u.mem[na.Node] > nd.RealMemory {
				return fmt.Errorf("job %d: memory of node %d over-allocated (%d > %d)", a.JobID, na.Node, u.mem[na.Node], nd.RealMemory)
			}
		}
		for _, g := range na.Gres {
			u.gres[na.Node] += g.Count
		}
		var total uint64
		for _, g := range nd.Gres {
			total += g.Count
		}
		if u.gres[na.Node] > total {
			return fmt.Errorf("job %d: GPUs of node %d over-allocated", a.JobID, na.Node)
		}
		u.jobs[na.Node]++
		if a.Exclusive {
			u.excl[na.Node] = true
		}
	}
	return nil
}

func (u *usage) remove(cfg Config, a Allocation) {
	for _, na := range a.Nodes {
		for _, k := range na.Cores {
			delete(u.cores, [2]int{na.Node, int(k)})
		}
		if cfg.MemoryConsumable {
			u.mem[na.Node] -= na.MemoryMB
		}
		for _, g := range na.Gres {
			u.gres[na.Node] -= g.Count
		}
		u.jobs[na.Node]--
		if a.Exclusive {
			u.excl[na.Node] = false
		}
	}
}

// simulate runs the scheduler every bf_resolution over simulated time and
// checks every plan against an independent account of the allocations. It
// returns the start time of every job that started.
func simulate(t *rapid.T, sc simCluster, exactRuntimes bool) (map[uint32]int64, map[uint32]int64) {
	part := mkPart("batch", allIdx(len(sc.nodes)))
	step := sc.cfg.BF.Resolution
	u := newUsage(len(sc.nodes))
	var run []runningJob
	started := map[uint32]int64{}
	promised := map[uint32]int64{} // earliest expected start given while top of the queue
	jobs := make(map[uint32]simJob, len(sc.jobs))
	var horizon int64
	for _, j := range sc.jobs {
		jobs[j.job.JobID] = j
		horizon += int64(j.job.TimeLimit) * 60
		horizon = max(horizon, j.submit)
	}
	horizon += 200*60 + 2*step
	for now := int64(0); now <= horizon; now += step {
		kept := run[:0]
		for _, r := range run {
			if r.end <= now {
				u.remove(sc.cfg, r.alloc)
				continue
			}
			kept = append(kept, r)
		}
		run = kept
		s := &Snapshot{Now: now, Config: sc.cfg, Nodes: sc.nodes, Partitions: []Partition{part}}
		for _, r := range run {
			s.Running = append(s.Running, r.alloc)
		}
		for _, j := range sc.jobs {
			if _, ok := started[j.job.JobID]; !ok && j.submit <= now {
				jj := j.job
				jj.SubmitTime = j.submit
				s.Pending = append(s.Pending, jj)
			}
		}
		if len(s.Pending) == 0 && len(run) == 0 && len(started) == len(sc.jobs) {
			break
		}
		p := Schedule(s)
		for _, st := range p.Starts {
			if err := u.add(sc.nodes, sc.cfg, st.Alloc); err != nil {
				t.Fatalf("t=%d: %v", now, err)
			}
			if st.Alloc.Start != now {
				t.Fatalf("job %d start %d at %d", st.JobID, st.Alloc.Start, now)
			}
			j := jobs[st.JobID]
			rt := j.runtime
			if exactRuntimes {
				rt = int64(j.job.TimeLimit) * 60
			}
			run = append(run, runningJob{alloc: st.Alloc, end: now + rt})
			started[st.JobID] = now
		}
		// The highest priority job still waiting with an expected start:
		// remember the first promise made to it.
		var top *Job
		for i := range s.Pending {
			j := &s.Pending[i]
			if _, ok := started[j.JobID]; ok {
				continue
			}
			if top == nil || j.Priority > top.Priority || (j.Priority == top.Priority && (j.SubmitTime < top.SubmitTime || (j.SubmitTime == top.SubmitTime && j.JobID < top.JobID))) {
				top = j
			}
		}
		if top != nil {
			if pd := pendingOf(p, top.JobID); pd != nil && pd.StartTime > 0 {
				if _, ok := promised[top.JobID]; !ok {
					promised[top.JobID] = pd.StartTime
				}
			}
		}
	}
	return started, promised
}

// fitsAlone reports whether a job starts on the empty cluster.
func fitsAlone(sc simCluster, j Job) bool {
	s := &Snapshot{Now: 0, Config: sc.cfg, Nodes: sc.nodes, Partitions: []Partition{mkPart("batch", allIdx(len(sc.nodes)))}}
	s.Pending = []Job{j}
	return startOf(Schedule(s), j.JobID) != nil
}

// TestPropertyNoDoubleAllocationAndEveryJobStarts: over simulated time no
// core, memory unit or GPU is held twice at any instant, and every job that
// fits the empty cluster eventually starts.
func TestPropertyNoDoubleAllocationAndEveryJobStarts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genCluster(t)
		started, _ := simulate(t, sc, false)
		for _, j := range sc.jobs {
			if _, ok := started[j.job.JobID]; !ok && fitsAlone(sc, j.job) {
				t.Fatalf("job %+v fits the cluster but never started", j.job)
			}
		}
	})
}

// TestPropertyBackfillKeepsReservations: with backfill on, all jobs known
// from the start and every job running exactly its time limit, the highest
// priority waiting job starts no later than the first start it was
// promised: backfilled jobs never delay it.
func TestPropertyBackfillKeepsReservations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genCluster(t)
		sc.cfg.Backfill = true
		for i := range sc.jobs {
			sc.jobs[i].submit = 0
		}
		started, promised := simulate(t, sc, true)
		ids := make([]uint32, 0, len(promised))
		for id := range promised {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		for _, id := range ids {
			st, ok := started[id]
			if !ok {
				t.Fatalf("job %d was promised %d but never started", id, promised[id])
			}
			if st > promised[id] {
				t.Fatalf("job %d promised %d, started %d", id, promised[id], st)
			}
		}
	})
}
