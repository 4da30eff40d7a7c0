package sched

import (
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// request is a job's needs normalised for one partition.
type request struct {
	job  *Job
	pi   int
	part *Partition

	minN, maxN int
	wantN      int // nodes to take when free (a -N min-max job: max), >= minN
	tasks      int
	cpt        int // CPUs per task
	ntpn       int // exact tasks per node, 0 = free distribution
	maxTasksPN int // MaxCPUsPerNode / cpt, 0 = no limit
	tpcore     int // tasks per core at most, 0 = no limit
	thr        int // threads of a core the tasks use, 0 = all
	minCPUs    int // CPUs per node at least (--mincpus, pn_min_cpus)

	// unit, when not 0, is the CPUs of one task, and tasks, cpt, the
	// capacities and placement count CPUs instead of tasks (cpuUnits);
	// ntasks is then the job's task count.
	unit   int
	ntasks int
	nodes  []Node // the snapshot's

	memPerNode uint64 // MB per node (when memPerCPU == 0)
	memPerCPU  uint64
	memAll     bool // all of a node's memory

	gres  []GresReq // per node
	whole bool      // whole nodes (exclusive, OverSubscribe=EXCLUSIVE, select/linear)
	user  bool      // nodes shared only with the same user
	// gpuJob is the count over the job of GRES gpuName (--gpus, or the
	// job's JobGres), of type gpuType; gres[gpuSlot] is its per-node
	// minimum of one (gpusjob.go).
	gpuJob  uint64
	gpuName string
	gpuType string
	gpuSlot int
	// share: the job may share cores (OverSubscribe=FORCE, or YES with
	// --oversubscribe), with up to maxShare jobs a core; over is set while
	// a placement counts shared cores as available (see oversubscribe.go).
	share    bool
	over     bool
	maxShare int

	duration  int64 // seconds
	timeLimit uint32

	cons      *constraint
	alts      []*bitset.BitSet // feature alternatives (nil = no constraint)
	counts    []*bitset.BitSet
	countN    []int
	req, exc  *bitset.BitSet
	reqList   []int
	memSensed bool // memory is consumable
}

// jobDuration is the run time the scheduler assumes: the time limit, or
// the partition default.
func jobTimeLimit(j *Job, p *Partition) uint32 {
	tl := j.TimeLimit
	if tl == 0 || tl == NoValue32 {
		tl = p.DefaultTime
		if tl == NoValue32 || tl == 0 {
			tl = p.MaxTime
		}
	}
	return tl
}

func minutesToSeconds(m uint32) int64 {
	if m == Infinite32 || m == NoValue32 {
		return InfiniteRun
	}
	return int64(m) * 60
}

// eligible checks what does not depend on resources: holds, dependencies,
// begin time. ReasonNone means the job may be considered.
func eligible(j *Job, now int64) Reason {
	switch {
	case j.Hold == HoldUser:
		return ReasonHeldUser
	case j.Hold == HoldAdmin || j.Priority == 0:
		return ReasonHeld
	case j.DependencyWait:
		return ReasonDependency
	case j.BeginTime > now:
		return ReasonBeginTime
	}
	return ReasonNone
}

// newRequest checks a job against a partition's limits and policies and
// normalises what it asks for. The reason is ReasonNone when the job may
// run in the partition. The checks come in job_limits_check's order
// (access, partition state, then, in a partition that schedules, CPUs,
// node counts and time), then select_nodes' account lists.
func (c *cluster) newRequest(j *Job, pi int) (*request, Reason) {
	p := &c.snap.Partitions[pi]
	if p.RootOnly && j.UserID != 0 {
		return nil, ReasonPartConfig
	}
	if p.AllowGIDs != nil && j.UserID != 0 {
		ok := slices.Contains(p.AllowGIDs, j.GroupID) || slices.Contains(p.AllowUIDs, j.UserID)
		if p.AllowUIDs == nil {
			for _, g := range j.Groups {
				ok = ok || slices.Contains(p.AllowGIDs, g)
			}
		}
		if !ok {
			return nil, ReasonPartConfig
		}
	}
	// Size and time limits apply in partitions that schedule (UP,
	// DRAIN) only, so a DOWN or INACTIVE partition is the reason first.
	switch p.State {
	case PartDown:
		return nil, ReasonPartDown
	case PartInactive:
		return nil, ReasonPartInactive
	}
	if j.TotalCPUs > 0 && c.tooManyCPUs(p, j.TotalCPUs) {
		// ESLURM_TOO_MANY_REQUESTED_CPUS: job_limits_check has no reason
		// of its own for it and says PartitionConfig.
		return nil, ReasonPartConfig
	}
	r := &request{job: j, pi: pi, part: p, memSensed: c.snap.Config.MemoryConsumable, nodes: c.nodes}
	r.timeLimit = jobTimeLimit(j, p)
	r.duration = minutesToSeconds(r.timeLimit)

	r.cpt = max(int(j.CPUsPerTask), 1)
	r.ntpn = int(j.NTasksPerNode)
	r.minN = int(j.MinNodes)
	r.maxN = int(j.MaxNodes)
	r.tasks = int(j.NumTasks)
	r.tpcore = int(j.TasksPerCore)
	r.thr = int(j.ThreadsPerCore)
	r.minCPUs = int(j.MinCPUs)
	switch {
	case r.tasks == 0 && r.ntpn > 0:
		r.tasks = max(r.minN, 1) * r.ntpn
	case r.tasks == 0:
		r.tasks = max(r.minN, 1)
	}
	if r.minN == 0 {
		r.minN = 1
		if r.ntpn > 0 {
			r.minN = (r.tasks + r.ntpn - 1) / r.ntpn
		}
	}
	if j.Overcommit && r.ntpn == 0 {
		// The tasks share CPUs: the job needs one CPU on each of its
		// nodes, as many nodes as it asked for (the task count only
		// shows in the job).
		r.tasks = r.minN
	}
	noMax := j.MaxNodes == Infinite32
	switch {
	case noMax:
		// No maximum (the job's max_nodes is 0): as many nodes as the
		// tasks need, bounded by the partition below (get_node_cnts).
		r.maxN = max(r.tasks, r.minN)
	case r.maxN == 0 && (j.MinNodes > 0 || r.ntpn > 0):
		r.maxN = r.minN
	case r.maxN == 0:
		r.maxN = max(r.tasks, r.minN)
	}
	if noMax && j.GPUs > 0 && r.ntpn == 0 && j.NumTasks == 0 {
		// GPUs over the job take as many nodes as they need, but no
		// more nodes than tasks when -n was given (_eval_nodes:
		// max_nodes is at most num_tasks).
		r.maxN = max(len(p.Nodes), r.minN)
	}
	// job_limits_check's node and time limits.
	switch {
	case r.minN > len(p.Nodes):
		return nil, ReasonPartNodeLimit
	case j.MinNodes > 0 && j.MinNodes < p.MinNodes:
		return nil, ReasonPartNodeLimit
	case p.MaxNodes != Infinite32 && (uint32(r.minN) > p.MaxNodes || (!noMax && j.MaxNodes > p.MaxNodes)):
		// An explicit maximum above the partition's fails as well, even
		// when fewer nodes would do.
		return nil, ReasonPartNodeLimit
	case p.MaxTime != Infinite32 && r.timeLimit > p.MaxTime:
		return nil, ReasonPartTimeLimit
	}
	if p.MaxNodes != Infinite32 && uint32(r.maxN) > p.MaxNodes {
		r.maxN = int(p.MaxNodes)
	}
	if uint32(r.maxN) < p.MinNodes {
		return nil, ReasonPartNodeLimit
	}
	if why, _ := acctPolicy(p, j); why != ReasonNone {
		return nil, why
	}
	if r.maxN < r.minN || r.tasks < r.minN {
		return nil, ReasonBadConstraints
	}
	// A job that gave a node range wants its maximum (get_node_cnts'
	// req_nodes) and settles for fewer nodes when no more are free.
	r.wantN = r.minN
	if !noMax && j.MaxNodes > j.MinNodes && j.GPUs == 0 {
		r.wantN = r.maxN
		if j.NumTasks > 0 {
			r.wantN = min(r.wantN, r.tasks)
		}
	}
	if j.Spread {
		// --spread-job: as many nodes as the tasks, one task each first.
		r.wantN = max(r.wantN, min(r.maxN, r.tasks))
	}
	if p.MaxCPUsPerNode != Infinite32 && p.MaxCPUsPerNode != 0 {
		r.maxTasksPN = int(p.MaxCPUsPerNode) / r.cpt
		if r.maxTasksPN == 0 {
			return nil, ReasonBadConstraints
		}
	}

	cfg := &c.snap.Config
	switch {
	case j.MemAll:
		r.memAll = true
	case j.MemPerCPU > 0:
		r.memPerCPU = j.MemPerCPU
	case j.MemPerNode > 0:
		r.memPerNode = j.MemPerNode
	case p.DefMemPerCPU > 0:
		r.memPerCPU = p.DefMemPerCPU
	case p.DefMemPerNode > 0:
		r.memPerNode = p.DefMemPerNode
	case cfg.DefMemPerCPU > 0:
		r.memPerCPU = cfg.DefMemPerCPU
	case cfg.DefMemPerNode > 0:
		r.memPerNode = cfg.DefMemPerNode
	default:
		// No request and no default: Slurm gives the job all of each
		// node's memory.
		r.memAll = true
	}

	r.gres = j.Gres
	if j.GPUs > 0 {
		// --gpus counts over the job: a node needs one free (gpusjob.go).
		r.gpuJob, r.gpuName, r.gpuType, r.gpuSlot = uint64(j.GPUs), j.jobGresName(), j.GPUType, len(j.Gres)
		r.gres = append(slices.Clone(j.Gres), GresReq{Name: r.gpuName, Type: j.GPUType, Count: 1})
	}

	r.whole = cfg.WholeNodes || j.Share == ShareExclusive || p.OverSubscribe == OverSubscribeExclusive
	r.user = j.Share == ShareUser || p.ExclusiveUser
	shareRequest(r)

	cons, err := parseConstraint(j.Features)
	if err != nil {
		return nil, ReasonBadConstraints
	}
	r.cons = cons
	r.alts, r.counts = c.feat.nodeSets(cons)
	if cons != nil {
		for _, t := range cons.counts {
			r.countN = append(r.countN, t.n)
		}
	}
	if len(j.ReqNodes) > 0 {
		r.req = bitset.New(c.n)
		for _, ni := range j.ReqNodes {
			if ni < 0 || uint(ni) >= c.n || !c.partBits[pi].Test(uint(ni)) {
				return nil, ReasonBadConstraints
			}
			if !r.req.Test(uint(ni)) {
				r.req.Set(uint(ni))
				r.reqList = append(r.reqList, ni)
			}
		}
		slices.Sort(r.reqList)
		if len(r.reqList) > r.maxN {
			return nil, ReasonBadConstraints
		}
		r.minN = max(r.minN, len(r.reqList))
		r.wantN = max(r.wantN, r.minN)
	}
	if len(j.ExcNodes) > 0 {
		r.exc = bitset.New(c.n)
		for _, ni := range j.ExcNodes {
			if ni >= 0 && uint(ni) < c.n {
				r.exc.Set(uint(ni))
			}
		}
	}
	r.ntasks = r.tasks
	r.cpuUnits()
	return r, ReasonNone
}

// cpuUnits switches a request whose tasks have several CPUs each to
// counting CPUs. cons_tres's _eval_nodes adds up the CPUs of the nodes
// against the job's tasks x CPUs per task, counting a node's CPUs beyond
// its whole tasks too (with -c 3, a 4-CPU node gives 4), and only asks
// each node to hold one task; dist_tasks_compute_c_b then puts the tasks
// that do not fit whole anywhere onto the first nodes (-n 4 -c 3 runs on
// three 4-CPU nodes). Requests with a task count per node or core, or
// overcommit, keep counting tasks.
func (r *request) cpuUnits() {
	if r.cpt <= 1 || r.ntpn > 0 || r.tpcore > 0 || r.job.Overcommit {
		return
	}
	r.unit = r.cpt
	r.tasks *= r.cpt
	r.cpt = 1
	if r.maxTasksPN > 0 {
		r.maxTasksPN = int(r.part.MaxCPUsPerNode)
	}
}

// base returns the nodes the request may ever use in alternative a: the
// partition's nodes with the features, without the excluded ones. Node
// state is not applied.
func (c *cluster) base(r *request, a int) *bitset.BitSet {
	b := c.partBits[r.pi].Clone()
	if r.alts != nil {
		b.InPlaceIntersection(r.alts[a])
	}
	if r.exc != nil {
		b.InPlaceDifference(r.exc)
	}
	return b
}

func (r *request) altCount() int { return max(len(r.alts), 1) }

// threads is how many threads of each of a node's cores the request's
// tasks may use.
func (r *request) threads(nd *Node) int {
	t := max(int(nd.ThreadsPerCore), 1)
	if r.thr > 0 {
		t = min(t, r.thr)
	}
	return t
}

// coresFor is how many cores tasks of the request take on a node: CPUs
// are hardware threads, cores are allocated whole (CR_Core), and a core
// holds at most --ntasks-per-core tasks; --mincpus raises the count.
func (r *request) coresFor(nd *Node, tasks int) int {
	thr := r.threads(nd)
	cores := (tasks*r.cpt + thr - 1) / thr
	if r.tpcore > 0 {
		cores = max(cores, (tasks+r.tpcore-1)/r.tpcore)
	}
	if r.minCPUs > 0 {
		tpc := max(int(nd.ThreadsPerCore), 1)
		cores = max(cores, (r.minCPUs+tpc-1)/tpc)
	}
	return min(cores, max(nd.EffCores(), 1))
}

// tasksIn is how many tasks of the request fit in cores of a node.
func (r *request) tasksIn(nd *Node, cores int) int {
	cpus := cores * r.threads(nd)
	t := cpus
	if r.cpt > 1 {
		t = cpus / r.cpt
	}
	if r.tpcore > 0 {
		t = min(t, cores*r.tpcore)
	}
	return t
}

// capacity is how many tasks of the request a node could take now, given
// what is free there. 0 means the node cannot be used.
func (c *cluster) capacityNow(r *request, ni int) int {
	if c.excl[ni] {
		return 0
	}
	if (r.user || c.exclUser[ni]) && c.userOn[ni] != noUser && c.userOn[ni] != int64(r.job.UserID) {
		return 0
	}
	if r.whole && c.jobsOn[ni] > 0 {
		return 0
	}
	if (r.share || c.shareCnt != nil) && c.shareBlocked(r, ni) {
		return 0
	}
	cores := c.freeCore[ni]
	if r.over {
		cores = c.shareable(ni, r.maxShare)
	} else if held := c.futureHeld(ni, c.now+r.duration); held != nil {
		// A core reservation starts during the run (resvcores.go).
		if r.whole {
			return 0
		}
		cores -= c.freeHeld(ni, held)
	}
	return c.capacityWith(r, ni, cores, c.freeMem[ni], gresFree)
}

// gresCheck says which GRES counts capacityWith compares the request to.
type gresCheck uint8

const (
	gresFree    gresCheck = iota // what is free now
	gresTotal                    // the node's totals (could it ever fit)
	gresChecked                  // the caller has checked
)

// capacityWith computes the task capacity of a node from free cores and
// memory.
func (c *cluster) capacityWith(r *request, ni int, freeCores int32, freeMem uint64, gc gresCheck) int {
	nd := &c.nodes[ni]
	if r.job.SpecSet && !r.job.SpecThreads && int(r.job.SpecCount) >= nd.Cores() {
		return 0 // --core-spec leaves the job no core of the node
	}
	if gc != gresChecked {
		for _, g := range r.gres {
			var have uint64
			if gc == gresTotal {
				have = c.gresTotal(ni, g.Name, g.Type)
			} else {
				have = c.gresFree(ni, g.Name, g.Type)
			}
			if have < g.Count {
				return 0
			}
		}
		// --gres-flags=enforce-binding: only the cores of the sockets
		// of the devices the job needs count.
		if k := c.enforcedCores(r, ni, gc == gresTotal); k == 0 {
			return 0
		} else if k > 0 {
			freeCores = min(freeCores, int32(k))
		}
	}
	if r.minCPUs > 0 && int(freeCores)*max(int(nd.ThreadsPerCore), 1) < r.minCPUs {
		return 0 // --mincpus
	}
	capTasks := r.tasksIn(nd, int(freeCores))
	if r.whole && int(freeCores) < nd.EffCores() {
		return 0
	}
	if r.maxTasksPN > 0 {
		capTasks = min(capTasks, r.maxTasksPN)
	}
	// Memory: consumable memory limits what fits; otherwise the request
	// only has to fit the node's size.
	mem := freeMem
	if !r.memSensed {
		mem = nd.RealMemory
	}
	switch {
	case r.memAll:
		if r.memSensed && freeMem < nd.AvailMem() {
			return 0
		}
	case r.memPerCPU > 0 && !r.memSensed:
		// Memory is not allocated: cons_tres does not look at it, and
		// select_nodes' node filter (_build_node_list) compares the
		// per-CPU figure itself with the node's memory (real 22.05 runs
		// -c 4 --mem-per-cpu=300 on a 4-CPU 1000 MB node under CR_Core).
		if r.memPerCPU > nd.RealMemory {
			return 0
		}
	case r.memPerCPU > 0 && r.whole:
		// can_job_run_on_node: a whole-node job needs the memory of all
		// the node's CPUs or the node is out; what the memory covers does
		// not limit its tasks otherwise.
		if mem < r.memPerCPU*uint64(wholeCPUs(nd)) {
			return 0
		}
	case r.memPerCPU > 0:
		capTasks = min(capTasks, c.memTasks(r, nd, mem))
		if r.minCPUs > 0 && mem < r.memPerCPU*uint64(r.minCPUs) {
			return 0
		}
	default:
		if mem < r.memPerNode {
			return 0
		}
	}
	if r.ntpn > 0 {
		if capTasks < r.ntpn {
			return 0
		}
		return r.ntpn
	}
	if capTasks < r.unit {
		return 0 // not one whole task
	}
	return min(capTasks, r.tasks)
}

// wholeCPUs is the CPUs a whole-node job holds on nd: every thread of
// every core (allocate's count for such a job).
func wholeCPUs(nd *Node) int {
	return nd.EffCores() * max(int(nd.ThreadsPerCore), 1)
}

// memTasks is how many tasks (CPUs in CPU units) the free memory mem of a
// node covers with memory per CPU. Under CR_Core the memory goes with
// every allocated CPU, the idle threads of the job's cores included, so
// it counts whole cores; under CR_CPU single CPUs (can_job_run_on_node
// takes off one allocation unit at a time). cons_tres then rounds the
// CPUs down to whole tasks.
func (c *cluster) memTasks(r *request, nd *Node, mem uint64) int {
	if !c.snap.Config.CPUsConsumable {
		per := r.memPerCPU * uint64(max(int(nd.ThreadsPerCore), 1))
		t := r.tasksIn(nd, int(mem/per))
		if r.unit > 1 {
			t -= t % r.unit
		}
		return t
	}
	cpus := int(min(mem/r.memPerCPU, uint64(nd.CPUs)+1))
	if r.unit > 1 {
		return cpus - cpus%r.unit
	}
	if r.cpt > 1 {
		return cpus / r.cpt
	}
	return cpus
}
