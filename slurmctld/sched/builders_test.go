package sched

import (
	"fmt"
	"testing"
)

// Builders for test snapshots.

type nodeOpt func(*Node)

func withGPUs(typ string, n uint64) nodeOpt {
	return func(nd *Node) { nd.Gres = append(nd.Gres, Gres{Name: "gpu", Type: typ, Count: n}) }
}

// mkNodes makes count nodes n1..n<count> with cores cores (one socket, one
// thread per core) and mem MB.
func mkNodes(count, cores int, mem uint64, opts ...nodeOpt) []Node {
	out := make([]Node, count)
	for i := range out {
		out[i] = Node{
			Name:           fmt.Sprintf("n%d", i+1),
			Sockets:        1,
			CoresPerSocket: uint16(cores),
			ThreadsPerCore: 1,
			CPUs:           uint16(cores),
			RealMemory:     mem,
			Weight:         1,
		}
		for _, o := range opts {
			o(&out[i])
		}
	}
	return out
}

func allIdx(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func mkPart(name string, nodes []int) Partition {
	return Partition{
		Name: name, Nodes: nodes, Default: true, State: PartUp,
		MaxTime: Infinite32, DefaultTime: NoValue32, MaxNodes: Infinite32,
		MaxCPUsPerNode: Infinite32, MaxShare: 1,
	}
}

// snap is a one-partition snapshot at time 1000 with memory consumable and
// FIFO (no backfill) unless changed.
func snap(nodes []Node) *Snapshot {
	cfg := DefaultConfig()
	cfg.Backfill = false
	cfg.DefMemPerCPU = 100
	return &Snapshot{
		Now:        1000,
		Config:     cfg,
		Nodes:      nodes,
		Partitions: []Partition{mkPart("batch", allIdx(len(nodes)))},
	}
}

type jobOpt func(*Job)

func tasks(n uint32) jobOpt       { return func(j *Job) { j.NumTasks = n } }
func nodesN(lo, hi uint32) jobOpt { return func(j *Job) { j.MinNodes, j.MaxNodes = lo, hi } }
func cpt(n uint16) jobOpt         { return func(j *Job) { j.CPUsPerTask = n } }
func tpn(n uint16) jobOpt         { return func(j *Job) { j.NTasksPerNode = n } }
func limit(min uint32) jobOpt     { return func(j *Job) { j.TimeLimit = min } }
func prio(p uint32) jobOpt        { return func(j *Job) { j.Priority = p } }
func feat(f string) jobOpt        { return func(j *Job) { j.Features = f } }
func memNode(mb uint64) jobOpt    { return func(j *Job) { j.MemPerNode = mb } }
func memCPU(mb uint64) jobOpt     { return func(j *Job) { j.MemPerCPU = mb } }
func exclusive() jobOpt           { return func(j *Job) { j.Share = ShareExclusive } }
func contiguous() jobOpt          { return func(j *Job) { j.Contiguous = true } }
func gres(name, typ string, n uint64) jobOpt {
	return func(j *Job) { j.Gres = append(j.Gres, GresReq{Name: name, Type: typ, Count: n}) }
}
func gpus(n uint32) jobOpt       { return func(j *Job) { j.GPUs = n } }
func reqNodes(n ...int) jobOpt   { return func(j *Job) { j.ReqNodes = n } }
func excNodes(n ...int) jobOpt   { return func(j *Job) { j.ExcNodes = n } }
func user(uid uint32) jobOpt     { return func(j *Job) { j.UserID = uid } }
func parts(p ...string) jobOpt   { return func(j *Job) { j.Partitions = p } }
func modify(f func(*Job)) jobOpt { return f }

// mkJob makes a job with id, one task, 60 minutes, priority 1000-id so that
// lower ids go first.
func mkJob(id uint32, opts ...jobOpt) Job {
	j := Job{JobID: id, Priority: 100000 - id, SubmitTime: 500, UserID: 1000, GroupID: 1000, TimeLimit: 60}
	for _, o := range opts {
		o(&j)
	}
	return j
}

// running makes a running allocation of whole cores on nodes.
func running(id uint32, end int64, cores int, nodes ...int) Allocation {
	a := Allocation{JobID: id, UserID: 2000, Partition: "batch", Start: 0, End: end}
	for _, ni := range nodes {
		na := NodeAlloc{Node: ni, CPUs: uint32(cores), MemoryMB: uint64(cores) * 100}
		for k := 0; k < cores; k++ {
			na.Cores = append(na.Cores, uint16(k))
		}
		a.Nodes = append(a.Nodes, na)
	}
	return a
}

func startOf(p *Plan, id uint32) *Start {
	for i := range p.Starts {
		if p.Starts[i].JobID == id {
			return &p.Starts[i]
		}
	}
	return nil
}

func pendingOf(p *Plan, id uint32) *Pending {
	for i := range p.Pending {
		if p.Pending[i].JobID == id {
			return &p.Pending[i]
		}
	}
	return nil
}

func nodesOf(s *Start) []int {
	var out []int
	for _, na := range s.Alloc.Nodes {
		out = append(out, na.Node)
	}
	return out
}

func mustStart(t *testing.T, p *Plan, id uint32) *Start {
	t.Helper()
	s := startOf(p, id)
	if s == nil {
		t.Fatalf("job %d did not start; pending: %+v", id, pendingOf(p, id))
	}
	return s
}

func mustPend(t *testing.T, p *Plan, id uint32, r Reason) *Pending {
	t.Helper()
	pd := pendingOf(p, id)
	if pd == nil {
		t.Fatalf("job %d started (%v), want pending %v", id, nodesOf(startOf(p, id)), r)
	}
	if pd.Reason != r {
		t.Fatalf("job %d reason %v, want %v", id, pd.Reason, r)
	}
	return pd
}
