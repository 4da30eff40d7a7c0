package jobs

import (
	"slices"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Step flags (SSF_*) that decide what a step takes of its job.
const (
	ssfNoKill       uint32 = 1 << 1 // --no-kill: not killed when one of its nodes fails
	ssfWhole        uint32 = 1 << 3 // --whole: every CPU of its nodes
	ssfOverlapForce uint32 = 1 << 6 // --overlap: counts against nothing
)

// pendingStepID is SLURM_PENDING_STEP: the step id an srun waiting for
// resources is woken with.
const pendingStepID uint32 = 0xfffffffd

// Pending sruns woken when a step ends: up to stepRetryCount of them,
// and every one that has waited stepRetryTime seconds or more
// (SchedulerParameters step_retry_count and step_retry_time defaults).
const (
	stepRetryCount = 8
	stepRetryTime  = 60
)

// StepAlloc is what a step holds of its job, per step node (the step's
// node order): the CPUs it counts on the node, the cores it runs on and
// its memory. A step started with --overlap records its share (its
// credential names it) but counts against nothing; memory counts only
// when asked for (srun --mem) and memory is consumable.
type StepAlloc struct {
	Ranks      []int      // job node ranks (indexes into Job.Nodes)
	CPUs       []uint32   // CPUs the step takes on each node
	Cores      [][]uint16 // its cores on each node (node core indexes)
	Mem        []uint64   // MB per node (memory_allocated; 0 unless consumable)
	Overlap    bool       `json:",omitempty"` // counts neither CPUs, cores nor memory
	MemCounted bool       `json:",omitempty"` // Mem counts against the job's memory
	// CoresCounted: the cores are marked used. A step taking all of its
	// job's CPUs runs on the job's cores without marking them
	// (_step_alloc_lps copies the job's core bitmap then).
	CoresCounted bool `json:",omitempty"`
}

// stepWaiter is an srun told ESLURM_NODES_BUSY, waiting on its
// listening port for the word to try again (_build_pending_step).
type stepWaiter struct {
	host  string
	port  uint16
	pid   uint32
	since int64
}

// jobUse is what the job's running steps take of each of its nodes.
type jobUse struct {
	cpus  []uint32
	mem   []uint64
	cores [][]bool // per job node, per core of the node
	busy  []bool   // some step runs on the node (counted or not)
}

// use sums the job's steps' allocations.
func (m *Manager) use(j *Job, cl *Cluster) jobUse {
	n := len(j.Nodes)
	u := jobUse{cpus: make([]uint32, n), mem: make([]uint64, n), cores: make([][]bool, n), busy: make([]bool, n)}
	for k := range n {
		u.cores[k] = make([]bool, nodeCores(j, cl, k))
	}
	for _, st := range j.Steps {
		if st.ID == msg.StepIDExtern {
			continue // PrologFlags=Contain's step holds nothing of the job
		}
		for _, k := range st.NodeIdxRanks(j) {
			if k >= 0 && k < n {
				u.busy[k] = true
			}
		}
		a := st.Alloc
		if a == nil {
			// A step recorded before steps had allocations (state of an
			// older goslurm, or re-synced from a node): what it holds is
			// unknown, so it holds its nodes.
			for _, k := range st.NodeIdxRanks(j) {
				if k >= 0 && k < n {
					if k < len(j.NodeCPUs) {
						u.cpus[k] = max(u.cpus[k], j.NodeCPUs[k])
					}
					for c := range u.cores[k] {
						u.cores[k][c] = true
					}
				}
			}
			continue
		}
		if a.Overlap {
			continue
		}
		for i, k := range a.Ranks {
			if k < 0 || k >= n {
				continue
			}
			if i < len(a.CPUs) {
				u.cpus[k] += a.CPUs[i]
			}
			if a.MemCounted && i < len(a.Mem) {
				u.mem[k] += a.Mem[i]
			}
			if a.CoresCounted && i < len(a.Cores) {
				for _, c := range a.Cores[i] {
					if int(c) < len(u.cores[k]) {
						u.cores[k][c] = true
					}
				}
			}
		}
	}
	return u
}

// NodeIdxRanks is the step's nodes as job node ranks.
func (st *Step) NodeIdxRanks(j *Job) []int {
	if st.Alloc != nil {
		return st.Alloc.Ranks
	}
	var out []int
	for _, n := range st.Nodes {
		if k := indexOf(j.Nodes, n); k >= 0 {
			out = append(out, k)
		}
	}
	return out
}

func nodeCores(j *Job, cl *Cluster, k int) int {
	if k < len(j.NodeIdx) && j.NodeIdx[k] >= 0 && j.NodeIdx[k] < len(cl.Nodes) {
		return cl.Nodes[j.NodeIdx[k]].Cores()
	}
	return 0
}

// stepSpec is the part of a step request the node pick reads.
type stepSpec struct {
	overlap, whole, memResv bool
	mem                     uint64 // MB per node or per CPU (memPerCPU set); 0 none
	cpus                    uint32 // CPUs asked for; 0 none (or overcommit)
	cpt                     uint32 // CPUs per task (_calc_cpus_per_task); 0 uneven
}

func (m *Manager) specOf(j *Job, cl *Cluster, req *msg.StepCreateRequest, tasks uint32) stepSpec {
	s := stepSpec{overlap: req.Flags&ssfOverlapForce != 0, whole: req.Flags&ssfWhole != 0,
		memResv: cl.Config.MemoryConsumable}
	if req.PnMinMemory != NoVal64 && req.PnMinMemory != memPerCPU {
		s.mem = req.PnMinMemory
	}
	if req.CPUCount != NoVal && req.Flags&ssfOvercommit == 0 {
		s.cpus = req.CPUCount
	}
	// Overcommit counts no CPUs: step_create zeroes the count first.
	s.cpt = calcCPUsPerTask(j, s.cpus, tasks)
	return s
}

// calcCPUsPerTask is the step's CPUs per task: its CPU count over its
// tasks, or 0 when that does not divide or the job's nodes cannot hold
// every task with that many.
func calcCPUsPerTask(j *Job, cpus, tasks uint32) uint32 {
	if cpus == 0 || cpus == NoVal || tasks == 0 || cpus%tasks != 0 {
		return 0
	}
	cpt := max(cpus/tasks, 1)
	left := int64(tasks)
	for _, c := range j.NodeCPUs {
		if cpt > c {
			return 0
		}
		left -= int64(c / cpt)
	}
	if left > 0 {
		return 0
	}
	return cpt
}

const sched32Infinite = 0xffffffff

func sameCPUs(c []uint32) bool {
	for _, v := range c {
		if v != c[0] || v == 0 {
			return false
		}
	}
	return len(c) > 0
}

// allocStep takes the step's CPUs, cores and memory on its nodes
// (_step_alloc_lps): tasks times CPUs per task on each node (every CPU
// of the node with --whole), whole cores when the step asks for fewer
// threads per core than the node has, free cores first.
func (m *Manager) allocStep(j *Job, cl *Cluster, req *msg.StepCreateRequest, s stepSpec, u jobUse, ranks []int, counts []uint32) *StepAlloc {
	a := &StepAlloc{Ranks: ranks, Overlap: s.overlap}
	allCores := req.Flags&ssfOvercommit == 0 && req.CPUCount != NoVal && req.CPUCount == j.TotalCPUs
	a.CoresCounted = !allCores && !s.overlap
	a.MemCounted = s.memResv && s.mem != 0 && !s.overlap
	for i, k := range ranks {
		tasks := counts[i]
		node := nodeOf(j, cl, k)
		tpc := uint32(1)
		if node != nil {
			tpc = uint32(max(node.ThreadsPerCore, 1))
		}
		var cpus uint32
		if s.whole {
			cpus = j.NodeCPUs[k]
		} else {
			cpus = tasks * s.cpt
			if rt := uint32(req.ThreadsPerCore); req.ThreadsPerCore != NoVal16 && rt != 0 && rt < tpc {
				cpus = (cpus + rt - 1) / rt * tpc
			}
		}
		a.CPUs = append(a.CPUs, cpus)
		// memory_allocated: set only where memory is consumable; the
		// job's memory on the node for a step that asks for none.
		var mem uint64
		if k < len(j.NodeMem) && s.memResv {
			mem = j.NodeMem[k]
		}
		if s.memResv && s.mem != 0 {
			if s.mem&memPerCPU != 0 {
				per := cpus
				if s.whole {
					per = j.NodeCPUs[k]
				}
				mem = (s.mem &^ memPerCPU) * uint64(per)
			} else {
				mem = s.mem
			}
		}
		a.Mem = append(a.Mem, mem)
		if allCores {
			a.Cores = append(a.Cores, jobNodeCores(j, cl, k))
			continue
		}
		a.Cores = append(a.Cores, pickCores(j, cl, k, req, s, u, tasks))
	}
	return a
}

func nodeOf(j *Job, cl *Cluster, k int) *sched.Node {
	if k < len(j.NodeIdx) && j.NodeIdx[k] >= 0 && j.NodeIdx[k] < len(cl.Nodes) {
		return &cl.Nodes[j.NodeIdx[k]]
	}
	return nil
}

// jobNodeCores is the job's cores on job node k (every core of the node
// for a whole-node allocation).
func jobNodeCores(j *Job, cl *Cluster, k int) []uint16 {
	if k < len(j.NodeCores) && len(j.NodeCores[k]) > 0 {
		return append([]uint16(nil), j.NodeCores[k]...)
	}
	var out []uint16
	for c := range nodeCores(j, cl, k) {
		out = append(out, uint16(c))
	}
	return out
}

// pickCores chooses the step's cores on job node k (_pick_step_cores):
// all the job's cores there for --whole or a task per core of the node,
// otherwise as many as its tasks need, cores other steps hold last.
func pickCores(j *Job, cl *Cluster, k int, req *msg.StepCreateRequest, s stepSpec, u jobUse, tasks uint32) []uint16 {
	jc := jobNodeCores(j, cl, k)
	node := nodeOf(j, cl, k)
	if node == nil {
		return nil
	}
	if s.whole || int(tasks) == node.Cores() {
		return jc
	}
	cpc := uint32(1)
	if int(node.CPUs) != node.Cores() && req.ThreadsPerCore != 1 {
		cpc = uint32(max(node.ThreadsPerCore, 1))
		if req.ThreadsPerCore != NoVal16 && req.ThreadsPerCore != 0 {
			cpc = uint32(req.ThreadsPerCore)
		}
	}
	need := tasks
	if s.cpt > 0 {
		if s.cpt > cpc {
			need = tasks * ((s.cpt + cpc - 1) / cpc)
		} else {
			need = (tasks*s.cpt + cpc - 1) / cpc
		}
	}
	need = max(need, 1)
	var out []uint16
	taken := map[uint16]bool{}
	// Free cores first; --overlap takes cores in order, used or not.
	for pass := range 2 {
		for _, c := range jc {
			if uint32(len(out)) == need {
				slices.Sort(out)
				return out
			}
			if taken[c] {
				continue
			}
			used := int(c) < len(u.cores[k]) && u.cores[k][c]
			if pass == 0 && used && !s.overlap {
				continue
			}
			out = append(out, c)
			taken[c] = true
		}
	}
	slices.Sort(out)
	return out
}

// stepCoreBitmap is the step's cores over the cores of all its job's
// nodes, node by node (step_core_bitmap).
func (m *Manager) stepCoreBitmap(j *Job, cl *Cluster, a *StepAlloc) *jobcred.Bitmap {
	total := 0
	offs := make([]int, len(j.Nodes))
	for k := range j.Nodes {
		offs[k] = total
		total += nodeCores(j, cl, k)
	}
	if total == 0 {
		return nil
	}
	bm := jobcred.NewBitmap(uint32(total))
	for i, k := range a.Ranks {
		if i >= len(a.Cores) || k < 0 || k >= len(offs) {
			continue
		}
		for _, c := range a.Cores[i] {
			if b := offs[k] + int(c); b < total && int(c) < nodeCores(j, cl, k) {
				bm.Set(b)
			}
		}
	}
	return bm
}

// addWaiter records an srun told to wait (one record per srun).
func (j *Job) addWaiter(req *msg.StepCreateRequest, now int64) {
	host := strOf(req.Host)
	if host == "" || req.Port == 0 {
		return
	}
	for i, w := range j.stepWaiters {
		if w.pid == req.SrunPID && w.host == host {
			j.stepWaiters[i].port = req.Port
			return
		}
	}
	j.stepWaiters = append(j.stepWaiters, stepWaiter{host: host, port: req.Port, pid: req.SrunPID, since: now})
}

// wakeWaiters tells waiting sruns that a step ended so that they ask
// again (_wake_pending_steps: SRUN_STEP_SIGNAL, signal 0, to the port
// srun listens on): the first stepRetryCount of them and any that has
// waited stepRetryTime seconds.
func (m *Manager) wakeWaiters(j *Job, now int64) []Action {
	if j.Base() != msg.JobRunning || len(j.stepWaiters) == 0 {
		return nil
	}
	var out []Action
	keep := j.stepWaiters[:0]
	woken := 0
	for _, w := range j.stepWaiters {
		if woken < stepRetryCount || w.since <= now-stepRetryTime {
			woken++
			out = append(out, SrunMessage{JobID: j.ID, Host: w.host, Port: w.port, UID: j.UserID,
				ProtocolVersion: protoOr(j.ProtocolVersion), MsgType: msgtype.SRUN_STEP_SIGNAL,
				Msg: &msg.JobStepKillRequest{StepID: msg.StepID{JobID: j.ID, StepID: pendingStepID, StepHetComp: NoVal}}})
			continue
		}
		keep = append(keep, w)
	}
	j.stepWaiters = keep
	if len(keep) == 0 {
		j.stepWaiters = nil
	}
	return out
}

// allocMem is the step's memory over its nodes (its TRES mem).
func (st *Step) allocMem() uint64 {
	var t uint64
	if st.Alloc != nil {
		for _, v := range st.Alloc.Mem {
			t += v
		}
	}
	return t
}
