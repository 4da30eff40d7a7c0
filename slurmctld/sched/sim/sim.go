// Package sim replays a workload trace through the scheduling core
// (package sched) with a simulated clock, and measures the schedule.
//
// The event loop follows slurmctld: the main pass (sched.MainPass) runs when
// something happens (a job is submitted or ends), once per distinct instant
// however many events share it; with the backfill policy the backfill pass
// (sched.Backfill) also runs on its own interval (bf_interval), skipped when
// nothing was submitted or ended since its previous run, because its result
// would be the same. Jobs end at start + their recorded run time, which the
// trace loader has already cut to the time limit.
//
// The package is pure: no I/O, no wall clock, no goroutines.
package sim

import (
	"container/heap"
	"fmt"

	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Policy selects the scheduler configuration.
type Policy int

const (
	FIFO     Policy = iota // sched/builtin: main pass only
	Backfill               // sched/backfill: main pass plus the backfill pass
)

func (p Policy) String() string {
	if p == Backfill {
		return "backfill"
	}
	return "fifo"
}

// Options tunes a run.
type Options struct {
	Policy Policy
	// BF is the backfill configuration; nil means
	// sched.DefaultBackfillConfig with MaxJobTest 0 (the whole queue).
	BF *sched.BackfillConfig
	// BaseTime is the Unix time of the trace start (Snapshot.Now =
	// BaseTime + simulated seconds).
	BaseTime int64
	// MainChunk is how many queued jobs one main pass is shown (more passes
	// follow at the same instant while jobs keep starting); 0 = 256. With
	// one partition in submit order the main pass stops at the first job
	// that cannot start, so showing a prefix gives the same starts as
	// showing the whole queue, far cheaper when the queue is long.
	MainChunk int
	// Exhaustive disables the shortcuts that skip a pass which cannot
	// start anything (see skipMain and skipBackfill); for tests that the
	// shortcuts change no schedule.
	Exhaustive bool
	// Progress, when set, is called about every ProgressEvery simulated
	// seconds (default one day) with the simulated time and the number of
	// jobs finished so far.
	Progress      func(now int64, finished int)
	ProgressEvery int64
}

// Result is the outcome of a run.
type Result struct {
	Policy    Policy
	Finished  []Finished // in completion order
	Unstarted int        // jobs still pending when no event was left
	Metrics   Metrics

	MainPasses     int
	BackfillPasses int
	// Passes the shortcuts proved would start nothing, so they were not
	// run.
	MainSkipped     int
	BackfillSkipped int
}

// PartitionName is the simulated cluster's only partition.
const PartitionName = "batch"

// NodeMemoryPerCPU is the RealMemory (MB) given to each CPU of a node. Memory
// is not consumable in the simulation (traces rarely record it), so it only
// has to be non-zero.
const NodeMemoryPerCPU = 1000

// BuildSnapshot returns the static part of the simulated cluster: nodes
// n0..n<N-1> of c.CPUsPerNode cores on one socket, one partition holding them
// all with MaxTime = DefaultTime = c.MaxTimeMin, select/cons_tres without
// memory accounting.
func BuildSnapshot(c Cluster, bf sched.BackfillConfig) *sched.Snapshot {
	s := &sched.Snapshot{Config: sched.DefaultConfig()}
	// The main pass is slurmctld's schedule(), which stops at the first
	// job of a partition that cannot start with sched/backfill too
	// (fail_by_part in job_scheduler.c); Backfill is set only around the
	// backfill pass.
	s.Config.Backfill = false
	s.Config.WholeNodes = false
	s.Config.MemoryConsumable = false
	s.Config.DefaultQueueDepth = 0
	s.Config.BF = bf
	s.Nodes = make([]sched.Node, c.Nodes)
	part := sched.Partition{
		Name:           PartitionName,
		Default:        true,
		State:          sched.PartUp,
		MaxTime:        uint32(c.MaxTimeMin),
		DefaultTime:    uint32(c.MaxTimeMin),
		MinNodes:       0,
		MaxNodes:       sched.Infinite32,
		MaxCPUsPerNode: sched.Infinite32,
		Nodes:          make([]int, c.Nodes),
	}
	for i := range s.Nodes {
		s.Nodes[i] = sched.Node{
			Name:           fmt.Sprintf("n%d", i),
			Sockets:        1,
			CoresPerSocket: uint16(c.CPUsPerNode),
			ThreadsPerCore: 1,
			CPUs:           uint16(c.CPUsPerNode),
			RealMemory:     uint64(c.CPUsPerNode) * NodeMemoryPerCPU,
			Weight:         1,
			State:          sched.NodeUp,
		}
		part.Nodes[i] = i
	}
	s.Partitions = []sched.Partition{part}
	return s
}

// SchedJob is the sched.Job for trace job number seq (its position in submit
// order): one task of one CPU per processor, priority decreasing with submit
// order as priority/basic gives.
func SchedJob(j Job, seq int, base int64) sched.Job {
	sj := sched.Job{
		JobID:       uint32(seq + 1),
		Priority:    uint32(1<<31 - seq),
		SubmitTime:  base + j.Submit,
		UserID:      j.User,
		GroupID:     j.User,
		Partitions:  []string{PartitionName},
		NumTasks:    uint32(j.CPUs),
		CPUsPerTask: 1,
		TimeLimit:   uint32(j.LimitMin),
	}
	if j.LimitMin == 0 {
		sj.TimeLimit = sched.NoValue32
	}
	return sj
}

// The shortcuts rest on the simulated cluster's shape: identical nodes, all
// up, one partition, jobs of one-CPU tasks without memory, GRES, features or
// node-sharing constraints. There a job can start now exactly when the idle
// CPUs are at least its task count (cons_tres spreads tasks over any free
// cores), so a pass whose candidates all ask for more than the idle CPUs
// starts nothing and is not run.

// Run simulates the trace's jobs on its cluster.
func Run(t *Trace, opt Options) (*Result, error) {
	bf := sched.DefaultBackfillConfig()
	bf.MaxJobTest = 0
	if opt.BF != nil {
		bf = *opt.BF
	}
	if bf.Interval <= 0 {
		bf.Interval = 30
	}
	chunk := opt.MainChunk
	if chunk <= 0 {
		chunk = 256
	}
	st := &state{
		trace:   t,
		opt:     opt,
		chunk:   chunk,
		snap:    BuildSnapshot(t.Cluster, bf),
		total:   t.Cluster.TotalCPUs(),
		running: map[uint32]runInfo{},
		runIdx:  map[uint32]int{},
		frag:    NewFragMeter(t.Cluster.TotalCPUs()),
		res:     &Result{Policy: opt.Policy},
		bfEvery: bf.Interval,
	}
	st.progressEvery = opt.ProgressEvery
	if st.progressEvery <= 0 {
		st.progressEvery = 86400
	}
	if err := st.loop(); err != nil {
		return nil, err
	}
	st.res.Unstarted = len(st.pending)
	st.res.Metrics = Compute(st.res.Finished, st.total, st.frag)
	return st.res, nil
}

type runInfo struct {
	seq      int
	start    int64
	cpus     int64
	backfill bool
}

type state struct {
	trace *Trace
	opt   Options
	chunk int
	snap  *sched.Snapshot
	total int64
	used  int64

	next    int         // next trace job to submit
	pending []sched.Job // queued, in submit (= priority) order
	running map[uint32]runInfo
	runIdx  map[uint32]int // JobID -> index in snap.Running
	ends    endHeap

	bfEvery int64
	bfDirty bool  // something changed since the last backfill pass
	bfNext  int64 // time of the next backfill pass when dirty

	frag *FragMeter
	res  *Result

	nextProgress  int64
	progressEvery int64
}

// loop advances the clock from event to event until nothing is left.
func (st *state) loop() error {
	jobs := st.trace.Jobs
	for {
		now, ok := st.nextTime()
		if !ok {
			return nil
		}
		st.snap.Now = st.opt.BaseTime + now
		event := false
		for len(st.ends) > 0 && st.ends[0].end == now {
			e := heap.Pop(&st.ends).(endEvent)
			st.finish(e.id, now)
			event = true
		}
		for st.next < len(jobs) && jobs[st.next].Submit == now {
			st.pending = append(st.pending, SchedJob(jobs[st.next], st.next, st.opt.BaseTime))
			st.next++
			event = true
		}
		if event {
			if err := st.mainPass(now); err != nil {
				return err
			}
			if st.opt.Policy == Backfill && (!st.bfDirty || st.bfNext < now) {
				st.bfDirty = true
				st.bfNext = ceilTo(now, st.bfEvery)
			}
		}
		if st.opt.Policy == Backfill && st.bfDirty && now == st.bfNext {
			st.bfDirty = false
			if err := st.backfillPass(now); err != nil {
				return err
			}
		}
		st.frag.Set(now, st.total-st.used, len(st.pending) > 0)
		if st.opt.Progress != nil && now >= st.nextProgress {
			st.opt.Progress(now, len(st.res.Finished))
			st.nextProgress = now + st.progressEvery
		}
	}
}

// nextTime is the earliest of the next submission, completion and (when
// due) backfill pass.
func (st *state) nextTime() (int64, bool) {
	var t int64
	ok := false
	take := func(v int64) {
		if !ok || v < t {
			t, ok = v, true
		}
	}
	if st.next < len(st.trace.Jobs) {
		take(st.trace.Jobs[st.next].Submit)
	}
	if len(st.ends) > 0 {
		take(st.ends[0].end)
	}
	if st.bfDirty && len(st.pending) > 0 {
		take(st.bfNext)
	}
	return t, ok
}

func ceilTo(t, step int64) int64 {
	if r := t % step; r != 0 {
		return t + step - r
	}
	return t
}

// mainPass runs the main pass over growing prefixes of the queue until it
// blocks or the queue is empty.
func (st *state) mainPass(now int64) error {
	for len(st.pending) > 0 {
		if !st.opt.Exhaustive && int64(st.pending[0].NumTasks) > st.total-st.used {
			// The queue head cannot start; in a FIFO pass nothing
			// behind it can.
			st.res.MainSkipped++
			return nil
		}
		n := min(len(st.pending), st.chunk)
		st.snap.Pending = st.pending[:n]
		plan := sched.MainPass(st.snap)
		st.res.MainPasses++
		started, err := st.apply(plan, now, false)
		if err != nil {
			return err
		}
		if n == len(st.pending)+started || blocked(plan) || started == 0 {
			// The whole queue was shown, or the pass stopped at a job
			// that cannot start: later jobs would not start either.
			return nil
		}
	}
	return nil
}

// blocked reports whether the pass left a job waiting for resources, after
// which a FIFO pass starts nothing more in the partition.
func blocked(p *sched.Plan) bool {
	for _, pd := range p.Pending {
		if pd.Reason == sched.ReasonResources || pd.Reason == sched.ReasonPriority {
			return true
		}
	}
	return false
}

func (st *state) backfillPass(now int64) error {
	if len(st.pending) == 0 {
		return nil
	}
	if !st.opt.Exhaustive {
		smallest := st.pending[0].NumTasks
		for _, pj := range st.pending[1:] {
			smallest = min(smallest, pj.NumTasks)
		}
		if int64(smallest) > st.total-st.used {
			// No queued job fits the idle CPUs: the pass could only
			// make reservations, which the next pass redoes anyway.
			st.res.BackfillSkipped++
			return nil
		}
	}
	st.snap.Pending = st.pending
	st.snap.Config.Backfill = true
	plan := sched.Backfill(st.snap)
	st.snap.Config.Backfill = false
	st.res.BackfillPasses++
	_, err := st.apply(plan, now, true)
	return err
}

// apply starts the plan's jobs: they leave the queue, join Running and get
// an end event at start + run.
func (st *state) apply(p *sched.Plan, now int64, bfPass bool) (int, error) {
	st.snap.Pending = nil
	if len(p.Starts) == 0 {
		return 0, nil
	}
	startedIDs := make(map[uint32]bool, len(p.Starts))
	for _, s := range p.Starts {
		seq := int(s.JobID) - 1
		if seq < 0 || seq >= st.next {
			return 0, fmt.Errorf("sim: plan starts unknown job %d", s.JobID)
		}
		if _, dup := st.running[s.JobID]; dup || startedIDs[s.JobID] {
			return 0, fmt.Errorf("sim: plan starts job %d twice", s.JobID)
		}
		startedIDs[s.JobID] = true
		var cpus int64
		for _, na := range s.Alloc.Nodes {
			cpus += int64(na.CPUs)
		}
		j := st.trace.Jobs[seq]
		if cpus < j.CPUs {
			return 0, fmt.Errorf("sim: job %d got %d CPUs, asked %d", s.JobID, cpus, j.CPUs)
		}
		st.used += cpus
		if st.used > st.total {
			return 0, fmt.Errorf("sim: %d CPUs allocated on a machine of %d", st.used, st.total)
		}
		st.running[s.JobID] = runInfo{seq: seq, start: now, cpus: cpus, backfill: bfPass || s.Backfill}
		st.runIdx[s.JobID] = len(st.snap.Running)
		st.snap.Running = append(st.snap.Running, s.Alloc)
		heap.Push(&st.ends, endEvent{end: now + j.Run, id: s.JobID})
	}
	kept := st.pending[:0]
	for _, pj := range st.pending {
		if !startedIDs[pj.JobID] {
			kept = append(kept, pj)
		}
	}
	removed := len(st.pending) - len(kept)
	clear(st.pending[len(kept):])
	st.pending = kept
	if removed != len(p.Starts) {
		return 0, fmt.Errorf("sim: plan starts a job that is not queued")
	}
	return len(p.Starts), nil
}

// finish ends a running job and records it.
func (st *state) finish(id uint32, now int64) {
	ri := st.running[id]
	delete(st.running, id)
	i := st.runIdx[id]
	delete(st.runIdx, id)
	last := len(st.snap.Running) - 1
	if i != last {
		moved := st.snap.Running[last]
		st.snap.Running[i] = moved
		st.runIdx[moved.JobID] = i
	}
	st.snap.Running[last] = sched.Allocation{}
	st.snap.Running = st.snap.Running[:last]
	st.used -= ri.cpus
	j := st.trace.Jobs[ri.seq]
	st.res.Finished = append(st.res.Finished, Finished{
		ID:       j.ID,
		Submit:   j.Submit,
		Start:    ri.start,
		End:      now,
		CPUs:     ri.cpus,
		Backfill: ri.backfill,
		Killed:   j.Killed,
	})
}

type endEvent struct {
	end int64
	id  uint32
}

// endHeap orders completions by time, then job id, so runs are deterministic.
type endHeap []endEvent

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].id < h[j].id
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(endEvent)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
