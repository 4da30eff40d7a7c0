package sched

// Time values are Unix seconds; durations are seconds unless the name says
// minutes. Memory is in MB. Node indexes are positions in Snapshot.Nodes,
// which is also the bit position in every node bitmap (slurm.conf order).

// Slurm's special 32-bit values for limits given in minutes or counts.
const (
	Infinite32 uint32 = 0xffffffff // UNLIMITED
	NoValue32  uint32 = 0xfffffffe // not set
)

// InfiniteRun is how long a job with an UNLIMITED time limit is assumed to
// run when its end time is needed (Slurm uses a year as well).
const InfiniteRun int64 = 365 * 24 * 3600

// Snapshot is everything one scheduling pass looks at. The package does not
// modify it.
type Snapshot struct {
	Now        int64 // Unix seconds; the only clock the package reads
	Config     Config
	Nodes      []Node // index = bitmap position = slurm.conf order
	Partitions []Partition
	Running    []Allocation // jobs holding resources now (running, suspended, completing)
	Pending    []Job        // any order; the pass sorts by priority
	// Reservations are the advanced reservations (resv.go); nil for none.
	Reservations []Reservation
	// Licenses are the configured licenses with their totals, for
	// bf_licenses (licenses.go); ignored unless Config.BF.Licenses.
	Licenses []License
}

// License is a license name with a count: a configured total, or what a
// job requests or holds.
type License struct {
	Name  string
	Count uint32
}

// NodeState holds the flags that decide whether a node can take new work.
// Whether it is idle or allocated is derived from Snapshot.Running.
type NodeState uint16

const (
	NodeUp          NodeState = 0
	NodeDown        NodeState = 1 << iota // DOWN: unusable
	NodeDrain                             // DRAIN/DRAINING: no new jobs
	NodeFail                              // FAIL/FAILING: no new jobs
	NodeNoRespond                         // NOT_RESPONDING: no new jobs
	NodeFuture                            // FUTURE: not in service yet
	NodePoweredDown                       // POWERED_DOWN: usable, after resume (treated as usable)
	NodeReserved                          // in an advanced reservation the pass does not model
	// NodeResuming: rebooting with nextstate=resume (22.05's
	// rs_node_bitmap). The node counts as up whatever its other flags
	// (DOWN, DRAIN, NOT_RESPONDING while it reboots), so a job that needs
	// it waits for Resources, but no job starts on it in this pass: it is
	// held as if by a job ending at the next second.
	NodeResuming
	// NodeDownBase: the base state is DOWN itself (IS_NODE_DOWN), not
	// UNKNOWN or INVALID_REG, which NodeDown also covers. The scheduler
	// ignores it; the job manager tests it where real tests IS_NODE_DOWN
	// (epilogs awaited at job end, job resume).
	NodeDownBase
)

// Usable reports whether new jobs may be placed on a node in this state
// (for a resuming node: once it is back).
func (s NodeState) Usable() bool {
	if s&NodeResuming != 0 {
		s &^= NodeDown | NodeDrain | NodeFail | NodeNoRespond
	}
	return s&(NodeDown|NodeDrain|NodeFail|NodeNoRespond|NodeFuture|NodeReserved) == 0
}

// Gres is a count of one generic resource, "name[:type]:count" (gpu:a100:4).
// An empty Type on a request matches any type.
type Gres struct {
	Name  string
	Type  string
	Count uint64
}

// Node is one compute node as the scheduler sees it.
type Node struct {
	Name           string
	Sockets        uint16 // total sockets (boards x sockets per board)
	CoresPerSocket uint16
	ThreadsPerCore uint16
	CPUs           uint16 // schedulable CPUs (normally sockets x cores x threads)
	RealMemory     uint64 // MB
	Gres           []Gres
	Features       []string // active features
	Weight         uint32   // lower is preferred
	State          NodeState

	// AvailFeatures are the node's available features (Features= of
	// slurm.conf or scontrol update); submission checks a constraint's
	// names against them.
	AvailFeatures []string

	// SpecCores are the node's specialized cores (CoreSpecCount as the
	// node's slurmd chose them, or CPUSpecList), by index: kept for the
	// system, never given to a job. MemSpec is MemSpecLimit: MB kept for
	// the system, so jobs get RealMemory-MemSpec of consumable memory.
	SpecCores []uint16
	MemSpec   uint64

	// GresBind are the node's gres.conf records of GRES names some of
	// whose devices are bound to cores (Cores=), in the controller's
	// order; a job asking for such GRES gets cores near the devices it
	// gets (gresbind.go). nil when no record has Cores=.
	GresBind []GresBind
}

// GresBind is one gres.conf record of a node: Count devices of Name and
// Type whose cores are Cores (node-local core ids; nil = not bound,
// near every socket).
type GresBind struct {
	Name, Type string
	Count      uint64
	Cores      []uint16
}

// Cores is the number of cores of the node (the unit cons_tres allocates).
func (n *Node) Cores() int { return int(n.Sockets) * int(n.CoresPerSocket) }

// EffCores is the cores jobs may have: all but the specialized ones.
func (n *Node) EffCores() int { return max(n.Cores()-len(n.SpecCores), 0) }

// AvailMem is the memory jobs may have: RealMemory less MemSpecLimit.
func (n *Node) AvailMem() uint64 { return n.RealMemory - min(n.MemSpec, n.RealMemory) }

// PartState is a partition's State=.
type PartState uint8

const (
	PartUp       PartState = iota // UP: jobs queue and start
	PartDown                      // DOWN: jobs queue, none start
	PartDrain                     // DRAIN: no new jobs queue; queued ones start
	PartInactive                  // INACTIVE: nothing queues or starts
)

// OverSubscribe is a partition's OverSubscribe= (Shared=) policy.
type OverSubscribe uint8

const (
	OverSubscribeNo        OverSubscribe = iota // cores are not shared between jobs
	OverSubscribeYes                            // --oversubscribe jobs may share cores, MaxShare jobs a core
	OverSubscribeForce                          // all jobs may share cores, MaxShare jobs a core
	OverSubscribeExclusive                      // every job gets whole nodes
)

// Partition is one partition with its limits and policies.
type Partition struct {
	Name    string
	Nodes   []int // node indexes, configuration order
	Default bool
	State   PartState

	MaxTime     uint32 // minutes; Infinite32 = UNLIMITED
	DefaultTime uint32 // minutes; NoValue32 = use MaxTime
	MinNodes    uint32
	MaxNodes    uint32 // Infinite32 = UNLIMITED

	MaxCPUsPerNode uint32 // Infinite32 = UNLIMITED
	DefMemPerCPU   uint64 // MB, 0 = cluster default
	DefMemPerNode  uint64 // MB, 0 = cluster default
	MaxMemPerCPU   uint64 // MB, 0 = unlimited
	MaxMemPerNode  uint64 // MB, 0 = unlimited

	OverSubscribe OverSubscribe
	MaxShare      uint16 // jobs per resource with YES/FORCE
	ExclusiveUser bool   // a node runs jobs of one user at a time
	LLN           bool   // least loaded node first

	// Access. Empty lists mean everybody. AllowGIDs is AllowGroups with
	// names resolved by the caller (the package cannot read the group
	// database); AllowGroups keeps the names for messages. AllowUIDs,
	// when the caller fills it (non-nil), is the groups' members as
	// slurmctld's allow_uids (get_groups_members): a user passes when
	// listed or when the primary group is allowed (validate_group);
	// nil falls back to the job's supplementary groups.
	AllowGroups   []string
	AllowGIDs     []uint32
	AllowUIDs     []uint32
	AllowAccounts []string
	DenyAccounts  []string
	RootOnly      bool

	PriorityTier      uint16 // higher tiers are scheduled first
	PriorityJobFactor uint16 // used by the priority package

	// PreemptMode is how the partition's jobs are preempted: its own
	// PreemptMode= or else the cluster's, GANG left out (preempt.go).
	PreemptMode PreemptMode
	// GraceTime is the seconds a preempted job of the partition gets
	// between SIGTERM and its end.
	GraceTime uint32

	// Alternate is where submissions go while this partition does not
	// take new jobs (DRAIN, INACTIVE); "" for none.
	Alternate string
	// DisableRootJobs refuses jobs of user root.
	DisableRootJobs bool
	// AllocNodes are the hosts (hostlist expressions) jobs may be
	// submitted from; empty for any.
	AllocNodes []string
}

// Hold says who holds a job.
type Hold uint8

const (
	HoldNone  Hold = iota
	HoldAdmin      // scontrol hold: JobHeldAdmin
	HoldUser       // scontrol hold by the owner / sbatch -H: JobHeldUser
)

// Share is the node sharing a job asks for.
type Share uint8

const (
	ShareDefault       Share = iota // the partition decides
	ShareExclusive                  // --exclusive: whole nodes, no other job
	ShareUser                       // --exclusive=user: nodes shared only with the same user
	ShareOversubscribe              // --oversubscribe
)

// GresReq is one --gres item, counted per node.
type GresReq struct {
	Name  string
	Type  string // "" = any type
	Count uint64 // per node
}

// Job is one pending job with what sbatch can ask for. Zero values mean
// "not given" unless noted.
type Job struct {
	JobID      uint32
	Priority   uint32 // computed by the caller; 0 means held (as in Slurm)
	SubmitTime int64
	BeginTime  int64 // --begin; 0 = none
	UserID     uint32
	GroupID    uint32
	Groups     []uint32 // supplementary GIDs of the user, for AllowGroups
	Account    string
	// AccountUnknown: the job's association, hence its account, is not
	// known (no accounting database, AccountingStorageType=none). A
	// partition's AllowAccounts then keeps the job out and DenyAccounts
	// lets it in, as select_nodes' part_policy_valid_acct decides;
	// Account (the job's --account) is not looked at for them.
	AccountUnknown bool
	QOS            string // for the caller's priority computation; not used here

	// Partitions are the candidate partitions (-p a,b), in the order
	// given; empty means the default partition.
	Partitions []string
	// PartitionPriorities, when not nil, is the job's priority in each
	// of Partitions (same order; Slurm's priority_array): the queue
	// orders the job by it when it considers it in that partition.
	PartitionPriorities []uint32

	Hold           Hold
	DependencyWait bool // a dependency is not satisfied yet (evaluated by the caller)

	MinNodes      uint32 // -N min; 0 = derived from the other requests
	MaxNodes      uint32 // -N max; 0 = MinNodes; Infinite32 = no maximum (Slurm's max_nodes 0)
	NumTasks      uint32 // -n; 0 = one per node
	CPUsPerTask   uint16 // -c; 0 = 1
	NTasksPerNode uint16 // --ntasks-per-node; 0 = not given
	MinCPUs       uint32 // --mincpus per node; 0 = not given
	// TasksPerCore is --ntasks-per-core: at most that many tasks on a
	// core, so a task may leave a core's other threads idle; 0 = no limit.
	TasksPerCore uint16
	// ThreadsPerCore is --threads-per-core (or --hint=nomultithread): the
	// tasks use at most that many threads of a core, the others stay
	// allocated and idle; 0 = all.
	ThreadsPerCore uint16
	// Overcommit is -O: the tasks share CPUs, one CPU a node suffices.
	Overcommit bool
	// Spread is --spread-job: one task a node on as many nodes as the job
	// may have, before a node gets a second task.
	Spread bool
	// TotalCPUs is the job's minimum CPU count over all its nodes
	// (job_limits_check compares it with the partition's CPUs and
	// MaxCPUsPerNode times its nodes); 0 = not checked.
	TotalCPUs uint32

	MemPerNode uint64 // --mem MB; 0 with MemPerCPU 0 = partition/cluster default
	MemPerCPU  uint64 // --mem-per-cpu MB
	MemAll     bool   // --mem=0: all the memory of each node
	// SpecSet: the job named the cores (SpecThreads: threads) of each
	// node it leaves to the system, SpecCount of them (--core-spec,
	// --thread-spec; only with AllowSpecResourcesUsage). It then has
	// whole nodes and, of their specialized cores, those beyond the
	// count (all with a count of 0).
	SpecSet     bool
	SpecThreads bool
	SpecCount   uint16

	Gres    []GresReq // --gres, per node
	GPUs    uint32    // --gpus: total over the job (of JobGres)
	GPUType string    // type of --gpus=type:n
	// GPUsPerTask is --gpus-per-task (GPUs then counts them over the
	// job): it bounds the tasks a node runs by its free GPUs, which
	// bounds the cores a job gets there (grescores.go).
	GPUsPerTask uint32
	// GresEnforceBind is --gres-flags=enforce-binding: the job's cores
	// must all be on sockets of GRES it gets (gresbind.go).
	// --gres-flags=disable-binding changes nothing cons_tres looks at.
	GresEnforceBind bool
	// CoreBlock: the job's -m distributes a node's cores by block
	// (block:block, cyclic:block, plane), lowest first, not cyclically
	// over its sockets (corepick.go).
	CoreBlock bool
	// JobGres names the GRES that GPUs, GPUType and GPUsPerTask count
	// ("" is gpu): cons_tres counts any GRES over the job or per task
	// the way it counts GPUs (a site GRES asked for with scontrol
	// update's TresPerJob or TresPerTask).
	JobGres string
	// CoreCyclic: the job's -m names a cyclic (or fcyclic) socket
	// distribution, which CR_Core_Default_Dist_Block does not override.
	CoreCyclic bool

	Features   string // --constraint expression as written: a&b, a|b, [a*2&b*1], a*4
	Contiguous bool
	Share      Share
	ReqNodes   []int // --nodelist: node indexes that must be part of the allocation
	ExcNodes   []int // --exclude: node indexes never to use

	TimeLimit uint32 // minutes; NoValue32 (or 0) = partition DefaultTime
	TimeMin   uint32 // --time-min minutes; 0 = not given (see Start.TimeLimit)

	// Reservation is --reservation: the job runs only on that
	// reservation's nodes during its window (resv.go).
	Reservation string

	// HetJobID is the leader's id of a heterogeneous job's component (0:
	// none). The main pass never starts one: it stops the partition
	// there, as schedule() does; backfill plans each component, and the
	// caller starts them only when all of them may start.
	HetJobID uint32

	// PreemptWait: jobs were preempted for this one a moment ago
	// (KillWait + MessageTimeout); the pass does not look for more
	// (preempt.go).
	PreemptWait bool
	// Licenses are the job's -L requests and LicBlocked says they are
	// not all free now (license_job_test); both only for bf_licenses
	// (licenses.go). Without it the caller leaves such jobs out.
	Licenses   []License
	LicBlocked bool
}

// NodeAlloc is what one job holds on one node.
type NodeAlloc struct {
	Node     int      // index in Snapshot.Nodes
	Cores    []uint16 // node-local core ids (socket*CoresPerSocket + core)
	CPUs     uint32
	MemoryMB uint64
	Gres     []Gres
	// GresBind is what the job holds of each of the node's GresBind
	// records (same order; nil = none, or the node has no such records).
	GresBind []uint64
}

// jobGresName is the name of the GRES the job counts over the job.
func (j *Job) jobGresName() string {
	if j.JobGres == "" {
		return "gpu"
	}
	return j.JobGres
}

// Allocation is the resources of one job over time.
type Allocation struct {
	JobID     uint32
	UserID    uint32
	Partition string
	Start     int64
	End       int64 // expected end: start + time limit
	// Exclusive marks whole-node allocations no other job may share;
	// ExclusiveUser ones may be shared only with jobs of UserID.
	Exclusive     bool
	ExclusiveUser bool
	// Shared marks a job that may share its cores with other sharing
	// jobs (OverSubscribe=FORCE, or YES with --oversubscribe); false is a
	// job that does not share, which no sharing job may join on a node.
	Shared bool
	Nodes  []NodeAlloc
	// Running marks a job running or suspended (not completing): only
	// those may be preempted (preempt.go).
	Running bool
	// Licenses are what a running job holds until End, for bf_licenses
	// (set only for running jobs: backfill ignores the suspended and
	// completing ones' licenses, as backfill.c does), and Reservation
	// the job's reservation, whose licenses it uses first.
	Licenses    []License
	Reservation string
}

// Start tells the controller to start a job.
type Start struct {
	JobID     uint32
	Partition string
	Alloc     Allocation
	Backfill  bool // started by the backfill pass
	// TimeLimit, when not 0, is the job's new time limit in minutes: the
	// backfill pass started it with its --time-min (Alloc.End agrees),
	// and the controller sets the job's TimeLimit to it, as Slurm does.
	TimeLimit uint32
}

// Pending is the state of a job that does not start in this pass.
type Pending struct {
	JobID     uint32
	Reason    Reason
	StartTime int64  // expected start; 0 = unknown
	Partition string // partition of the expected start, if known
	// Desc is the state description that goes with Reason, when Slurm
	// sets one (DescReservedMaint); "" for none.
	Desc string
	// SchedNodes are the nodes backfill planned the expected start on
	// (the job's sched_nodes, scontrol's SchedNodeList); nil for none.
	SchedNodes []int
	// Skipped: with bf_licenses the main pass stopped at a job blocked
	// on licenses before it and no pass gave it a reason; the job keeps
	// the one it has (Reason is Priority, for one that has none).
	Skipped bool
}

// Plan is the outcome of a pass.
type Plan struct {
	Starts  []Start
	Pending []Pending
	// Stats are the pass's sdiag figures.
	Stats PassStats
	// Preemptions are the jobs to preempt so that pending jobs can
	// start (preempt.go); those pending jobs wait for Resources.
	Preemptions []Preemption
	// Planned lists (ascending) the nodes the backfill pass chose for
	// pending jobs' expected starts; the controller marks the idle ones
	// NODE_STATE_PLANNED. Empty after a main pass.
	Planned []int
	// Backfill: the backfill pass ran (the pending jobs' SchedNodes are
	// its answer; a main pass leaves theirs alone).
	Backfill bool
}

// PassStats is what a pass reports for sdiag (slurmctld's diag_stats):
// the main pass's queue length and depth, and the backfill pass's queue
// length, depth, depth of placement tests and the size of its resource
// timeline (Slurm's node_space table: one record, plus one per distinct
// reservation boundary inside the window).
type PassStats struct {
	MainQueue, MainDepth                  int
	BFQueue, BFDepth, BFDepthTry, BFTable int
}
