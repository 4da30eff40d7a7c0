package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
)

// Slurm's special values.
const (
	NoVal      uint32 = 0xfffffffe
	Infinite   uint32 = 0xffffffff
	NoVal16    uint16 = 0xfffe
	infinite16 uint16 = 0xffff
	NoVal64    uint64 = 0xfffffffffffffffe
	niceOff    uint32 = 0x80000000 // NICE_OFFSET: nice travels as value + offset
	memPerCPU  uint64 = 0x8000000000000000

	// synthBase starts the ids Snapshot gives extra tasks of a job array
	// so several of them can start in one pass. MaxJobId is at most
	// 0x03ff0000, so real job ids never reach it.
	synthBase uint32 = 0x80000000

	// Job bitflags the controller sets (slurm.h).
	wasRunning   uint64 = 1 << 20 // JOB_WAS_RUNNING
	jobDependent uint64 = 1 << 29 // JOB_DEPENDENT: held or waiting on a dependency
	partAssigned uint64 = 1 << 31 // JOB_PART_ASSIGNED: no partition was requested
)

// Job state reasons this package sets (22.05 numbering; sched has the
// ones its passes set).
const (
	ReasonNone           uint16 = 0
	ReasonPriority       uint16 = 1
	ReasonDependency     uint16 = 2
	ReasonResources      uint16 = 3
	ReasonHeldAdmin      uint16 = 8  // WAIT_HELD "JobHeldAdmin"
	ReasonBeginTime      uint16 = 9  // WAIT_TIME
	ReasonHeldUser       uint16 = 16 // WAIT_HELD_USER
	ReasonNodeDown       uint16 = 20 // FAIL_DOWN_NODE
	ReasonLaunchFailed   uint16 = 23 // FAIL_LAUNCH
	ReasonExitCode       uint16 = 24 // FAIL_EXIT_CODE
	ReasonTimeLimit      uint16 = 25 // FAIL_TIMEOUT
	ReasonInactiveLimit  uint16 = 26
	ReasonDepInvalid     uint16 = 39  // WAIT_DEP_INVALID "DependencyNeverSatisfied"
	ReasonArrayTaskLimit uint16 = 72  // WAIT_ARRAY_TASK_LIMIT
	ReasonOOM            uint16 = 181 // FAIL_OOM
)

// Hold says who holds a pending job (priority 0).
type Hold uint8

const (
	HoldNone  Hold = iota
	HoldUser       // sbatch -H, scontrol hold by the owner: JobHeldUser
	HoldAdmin      // scontrol hold by root/SlurmUser: JobHeldAdmin
)

// Job is one record of the job table. Exported fields are what the journal
// and snapshots save (JSON); the script and environment only travel in the
// submit record and snapshots (Payload).
type Job struct {
	ID          uint32
	ArrayJobID  uint32 // 0: not an array
	ArrayTaskID uint32 // NoVal: not an array, or the meta record
	// Array is set on the meta record of an array while tasks are pending.
	Array *ArrayInfo `json:",omitempty"`

	Name      string
	UserID    uint32
	GroupID   uint32
	UserName  string
	Account   string
	QOS       string
	Comment   string
	AllocNode string
	AllocSID  uint32

	// PartitionReq is what was asked for ("a,b"), Partitions its resolved
	// list; Partition is the one the job runs (ran) in.
	PartitionReq string
	Partitions   []string
	Partition    string

	State     uint32 // msg.Job* base state | flags
	Reason    uint16
	StateDesc string
	Priority  uint32
	Nice      uint32 // NICE_OFFSET encoded, as on the wire
	Hold      Hold
	AdminPrio bool // priority set by an operator: not recomputed

	SubmitTime   int64
	EligibleTime int64
	BeginTime    int64 // --begin; 0 none
	StartTime    int64
	EndTime      int64
	SuspendTime  int64
	PreSusTime   int64
	Deadline     int64
	// LastEval and EstStart (a pending job's expected start, from
	// backfill) are advisory and not journaled: each pass recomputes them.
	LastEval int64 `json:"-"`
	EstStart int64 `json:"-"`

	TimeLimit uint32 // minutes; NoVal = partition default
	TimeMin   uint32

	MinNodes      uint32
	MaxNodes      uint32
	MinCPUs       uint32
	MaxCPUs       uint32
	NumTasks      uint32 // NoVal: not given
	CPUsPerTask   uint16 // NoVal16: not given
	NTasksPerNode uint16
	// Per board/core/socket/tres task counts as the job record keeps them
	// (mc_ptr: INFINITE16 for unset core and socket counts, 0 for unset
	// board and tres counts).
	NTasksPerBoard  uint16
	NTasksPerCore   uint16
	NTasksPerSocket uint16
	NTasksPerTres   uint16
	PnMinCPUs       uint16
	PnMinMemory     uint64 // MB, memPerCPU bit for per-CPU, NoVal64 unset
	PnMinTmpDisk    uint32
	Shared          uint16
	Contiguous      uint16
	Features        string
	ReqNodes        string
	ExcNodes        string
	Requeue         bool
	Overcommit      uint8
	OpenMode        uint8
	CPUBindType     uint16
	CPUBind         string
	CoreSpec        uint16
	Profile         uint32
	AcctgFreq       string
	Container       string
	Network         string
	Reservation     string
	Licenses        string
	MailType        uint16
	MailUser        string
	TresBind        string
	TresFreq        string
	TresPerNode     string
	Bitflags        uint64
	SiteFactor      uint32
	// The socket/core request (multi_core_data), as given.
	BoardsPerNode, SocketsPerBoard                 uint16
	SocketsPerNode, CoresPerSocket, ThreadsPerCore uint16
	PlaneSize                                      uint16
	KillOnNodeFail                                 bool

	// Dependency holds the parsed --dependency (nil: none).
	Dependency *Dependency `json:",omitempty"`

	Batch      bool
	WorkDir    string
	StdIn      string
	StdOut     string
	StdErr     string
	Command    string // argv[0..] joined, as squeue's COMMAND
	SubmitLine string

	// Interactive allocations (salloc, srun): where the grant is pushed.
	RespHost        string
	AllocRespPort   uint16
	OtherPort       uint16
	ProtocolVersion uint16

	ExitCode  uint32 // raw wait status
	DerivedEC uint32

	// Allocation, once started.
	Nodes     []string // allocated node names, node table order
	NodeIdx   []int    // their indexes in the caller's node table
	NodeCPUs  []uint32 // CPUs per allocated node
	NodeMem   []uint64 // MB per allocated node
	NodeCores [][]uint16
	// SharedCores: the scheduler placed the job on cores it may share
	// with other sharing jobs (OverSubscribe=YES:N/FORCE:N).
	SharedCores bool `json:",omitempty"`
	TotalCPUs   uint32
	BatchHost   string
	// Completing are the nodes that have not sent MESSAGE_EPILOG_COMPLETE
	// yet after the job ended.
	Completing []string `json:",omitempty"`

	RestartCnt uint16
	Steps      []*Step `json:",omitempty"`
	NextStepID uint32

	Payload *Payload `json:",omitempty"`
}

// ArrayInfo is the meta record's view of its pending tasks.
type ArrayInfo struct {
	Pending  []uint32 // task ids not started yet, ascending
	MaxTasks uint32   // the % throttle; 0 = no limit
	Spec     string   // as submitted: "0-99%10"
}

// Payload is what a batch job carries to its node and never changes.
type Payload struct {
	Script      string
	Env         []string
	SpankJobEnv []string `json:",omitempty"`
	Argv        []string `json:",omitempty"`
}

// Step is one job step created by srun (REQUEST_JOB_STEP_CREATE).
type Step struct {
	ID        uint32
	Name      string
	Nodes     []string
	NodeIdx   []int
	Tasks     uint32
	CPUs      uint32
	TimeLimit uint32
	StartTime int64
	Host      string
	Port      uint16
	SrunPID   uint32
	TaskDist  uint32
	// Done marks node ranks (step host list order) that reported
	// REQUEST_STEP_COMPLETE.
	Done   []bool
	ExitRC uint32
}

// Base is the job's base state.
func (j *Job) Base() uint32 { return j.State & msg.JobStateBase }

// Pending reports a pending job (array meta records included).
func (j *Job) Pending() bool { return j.Base() == msg.JobPending }

// Running reports a running or suspended job.
func (j *Job) Running() bool {
	b := j.Base()
	return b == msg.JobRunning || b == msg.JobSuspended
}

// Finished reports a job past its end (completing or not).
func (j *Job) Finished() bool { return j.Base() > msg.JobSuspended }

// IsCompleting reports a job whose nodes have not all finished the epilog.
func (j *Job) IsCompleting() bool { return j.State&msg.JobCompleting != 0 }

// IsArrayMeta reports the meta record of an array with pending tasks.
func (j *Job) IsArrayMeta() bool { return j.Array != nil && len(j.Array.Pending) > 0 }

// holdsResources: running, suspended, or still completing on some node.
func (j *Job) holdsResources() bool { return j.Running() || (j.IsCompleting() && len(j.NodeIdx) > 0) }

func (j *Job) setBase(b uint32) { j.State = j.State&^msg.JobStateBase | b }
