package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/gres"
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
	ReasonMaxRequeue     uint16 = 71  // WAIT_MAX_REQUEUE "JobHoldMaxRequeue"
	ReasonArrayTaskLimit uint16 = 72  // WAIT_ARRAY_TASK_LIMIT
	ReasonOOM            uint16 = 181 // FAIL_OOM
)

// Hold says who holds a pending job (priority 0).
type Hold uint8

const (
	HoldNone  Hold = iota
	HoldUser       // sbatch -H, scontrol hold by the owner: JobHeldUser
	HoldAdmin      // scontrol hold by root/SlurmUser: JobHeldAdmin
	// HoldMaxRequeue: requeued after a failure MAX_BATCH_REQUEUE times
	// (JobHoldMaxRequeue); only an operator may release it.
	HoldMaxRequeue
)

// Job is one record of the job table. Exported fields are what the journal
// and snapshots save (JSON); the script and environment are kept apart
// (payload.go): PayloadSeq names them on disk, or Payload holds them.
// Every saved field is omitempty, which halves the records: they are always
// decoded into a new Job, so a field left out reads as its zero value.
// Strings that repeat across jobs are shared (internJob).
type Job struct {
	ID          uint32 `json:",omitempty"`
	ArrayJobID  uint32 `json:",omitempty"` // 0: not an array
	ArrayTaskID uint32 `json:",omitempty"` // NoVal: not an array, or the meta record
	// Array is set on the meta record of an array while tasks are pending.
	Array *ArrayInfo `json:",omitempty"`
	// Heterogeneous job (hetjob.go): HetJobID is the leader's id in every
	// component (0: not a het job), HetJobOffset the component's place,
	// HetJobIDSet the components' ids ("12-13"); HetComps, on the leader
	// only, lists every component's id in offset order (het_job_list).
	HetJobID     uint32   `json:",omitempty"`
	HetJobOffset uint32   `json:",omitempty"`
	HetJobIDSet  string   `json:",omitempty"`
	HetComps     []uint32 `json:",omitempty"`

	Name      string `json:",omitempty"`
	UserID    uint32 `json:",omitempty"`
	GroupID   uint32 `json:",omitempty"`
	UserName  string `json:",omitempty"`
	Account   string `json:",omitempty"`
	QOS       string `json:",omitempty"`
	Comment   string `json:",omitempty"`
	AllocNode string `json:",omitempty"`
	AllocSID  uint32 `json:",omitempty"`

	// PartitionReq is what was asked for ("a,b"), Partitions its resolved
	// list; Partition is the one the job runs (ran) in.
	PartitionReq string   `json:",omitempty"`
	Partitions   []string `json:",omitempty"`
	Partition    string   `json:",omitempty"`

	State     uint32 `json:",omitempty"` // msg.Job* base state | flags
	Reason    uint16 `json:",omitempty"`
	StateDesc string `json:",omitempty"`
	Priority  uint32 `json:",omitempty"`
	Nice      uint32 `json:",omitempty"` // NICE_OFFSET encoded, as on the wire
	Hold      Hold   `json:",omitempty"`
	AdminPrio bool   `json:",omitempty"` // priority set by an operator: not recomputed

	SubmitTime   int64 `json:",omitempty"`
	EligibleTime int64 `json:",omitempty"`
	BeginTime    int64 `json:",omitempty"` // --begin; 0 none
	StartTime    int64 `json:",omitempty"`
	EndTime      int64 `json:",omitempty"`
	SuspendTime  int64 `json:",omitempty"`
	PreSusTime   int64 `json:",omitempty"`
	Deadline     int64 `json:",omitempty"`
	// PreemptTime is when the job was preempted; PreemptStart when this
	// pending job last had others preempted for it (preempt.go).
	PreemptTime  int64 `json:",omitempty"`
	PreemptStart int64 `json:",omitempty"`
	// RanNodes is the node count of the job's last run, which a requeued
	// job's record keeps showing (total_nodes is never reset).
	RanNodes uint32 `json:",omitempty"`
	// LastEval and EstStart (a pending job's expected start, from
	// backfill) are advisory and not journaled: each pass recomputes them.
	LastEval int64 `json:"-"`
	EstStart int64 `json:"-"`

	TimeLimit uint32 `json:",omitempty"` // minutes; NoVal = partition default
	TimeMin   uint32 `json:",omitempty"`

	MinNodes      uint32 `json:",omitempty"`
	MaxNodes      uint32 `json:",omitempty"`
	MinCPUs       uint32 `json:",omitempty"`
	MaxCPUs       uint32 `json:",omitempty"`
	NumTasks      uint32 `json:",omitempty"` // NoVal: not given
	CPUsPerTask   uint16 `json:",omitempty"` // NoVal16: not given
	NTasksPerNode uint16 `json:",omitempty"`
	// Per board/core/socket/tres task counts as the job record keeps them
	// (mc_ptr: INFINITE16 for unset core and socket counts, 0 for unset
	// board and tres counts).
	NTasksPerBoard  uint16 `json:",omitempty"`
	NTasksPerCore   uint16 `json:",omitempty"`
	NTasksPerSocket uint16 `json:",omitempty"`
	NTasksPerTres   uint16 `json:",omitempty"`
	PnMinCPUs       uint16 `json:",omitempty"`
	PnMinMemory     uint64 `json:",omitempty"` // MB, memPerCPU bit for per-CPU, NoVal64 unset
	PnMinTmpDisk    uint32 `json:",omitempty"`
	Shared          uint16 `json:",omitempty"`
	Contiguous      uint16 `json:",omitempty"`
	TaskDist        uint32 `json:",omitempty"` // -m (task_dist), 0 = not given; see sched.Job.CoreBlock
	Features        string `json:",omitempty"`
	ReqNodes        string `json:",omitempty"`
	ExcNodes        string `json:",omitempty"`
	Requeue         bool   `json:",omitempty"`
	Overcommit      uint8  `json:",omitempty"`
	OpenMode        uint8  `json:",omitempty"`
	CPUBindType     uint16 `json:",omitempty"`
	CPUBind         string `json:",omitempty"`
	CoreSpec        uint16 `json:",omitempty"`
	Profile         uint32 `json:",omitempty"`
	AcctgFreq       string `json:",omitempty"`
	Container       string `json:",omitempty"`
	Network         string `json:",omitempty"`
	Reservation     string `json:",omitempty"`
	Licenses        string `json:",omitempty"`
	MailType        uint16 `json:",omitempty"`
	MailUser        string `json:",omitempty"`
	TresBind        string `json:",omitempty"`
	TresFreq        string `json:",omitempty"`
	TresPerNode     string `json:",omitempty"`
	TresPerJob      string `json:",omitempty"` // --gpus: GRES over the whole job
	TresPerTask     string `json:",omitempty"` // --gpus-per-task: GRES a task
	TresPerSocket   string `json:",omitempty"` // --gpus-per-socket (with --sockets-per-node)
	CPUsPerTres     string `json:",omitempty"` // --cpus-per-gpu
	MemPerTres      string `json:",omitempty"` // --mem-per-gpu
	// TresCleared marks the GRES request strings above an update set to
	// "" (tresCleared bits): real keeps an empty string, which job info
	// carries (scontrol prints "TresPerTask=") where an unset one is NULL.
	TresCleared uint8  `json:",omitempty"`
	Bitflags    uint64 `json:",omitempty"`
	SiteFactor  uint32 `json:",omitempty"`
	// The socket/core request (multi_core_data), as given.
	BoardsPerNode, SocketsPerBoard                 uint16 `json:",omitempty"`
	SocketsPerNode, CoresPerSocket, ThreadsPerCore uint16 `json:",omitempty"`
	PlaneSize                                      uint16 `json:",omitempty"`
	KillOnNodeFail                                 bool   `json:",omitempty"`
	// Refused: job_allocate refused the submission and kept the record
	// FAILED (keepRefused); it never reached the scheduler, so it never
	// accrued (AccrueTime=Unknown).
	Refused bool `json:",omitempty"`
	// PrologNodes are the nodes whose PrologFlags=Alloc prolog has not
	// reported complete yet (node_bitmap_pr).
	PrologNodes []string `json:",omitempty"`
	// --signal=[{R|B}:]SIG[@TIME]: the signal, seconds before the end,
	// and the KILL_JOB_* flags plus warnSent (warnsignal.go).
	WarnSignal, WarnTime, WarnFlags uint16 `json:",omitempty"`

	// Dependency holds the parsed --dependency (nil: none).
	Dependency *Dependency `json:",omitempty"`

	Batch bool `json:",omitempty"`
	// HasSpankEnv: the payload has a SPANK environment (kill messages
	// carry it), so the payload is read back at the end only then.
	HasSpankEnv bool   `json:",omitempty"`
	WorkDir     string `json:",omitempty"`
	StdIn       string `json:",omitempty"`
	StdOut      string `json:",omitempty"`
	StdErr      string `json:",omitempty"`
	Command     string `json:",omitempty"` // argv[0..] joined, as squeue's COMMAND
	SubmitLine  string `json:",omitempty"`

	// Interactive allocations (salloc, srun): where the grant is pushed.
	RespHost        string `json:",omitempty"`
	AllocRespPort   uint16 `json:",omitempty"`
	OtherPort       uint16 `json:",omitempty"`
	ProtocolVersion uint16 `json:",omitempty"`

	ExitCode  uint32 `json:",omitempty"` // raw wait status
	DerivedEC uint32 `json:",omitempty"`

	// Allocation, once started.
	Nodes     []string   `json:",omitempty"` // allocated node names, node table order
	NodeIdx   []int      `json:",omitempty"` // their indexes in the caller's node table
	NodeCPUs  []uint32   `json:",omitempty"` // CPUs per allocated node
	NodeMem   []uint64   `json:",omitempty"` // MB per allocated node
	NodeCores [][]uint16 `json:",omitempty"`
	// NodeGres is what the job holds of GRES on each of its nodes, by
	// device index where the node has device files (gres.go).
	NodeGres [][]gres.Alloc `json:",omitempty"`
	// SharedCores: the scheduler placed the job on cores it may share
	// with other sharing jobs (OverSubscribe=YES:N/FORCE:N).
	SharedCores bool   `json:",omitempty"`
	TotalCPUs   uint32 `json:",omitempty"`
	BatchHost   string `json:",omitempty"`
	// AliasList is the job's alias_list: its CLOUD nodes' addresses
	// ("TBD" while one of them is still powered down or powering up),
	// for the launch messages and srun's allocation.
	AliasList string `json:",omitempty"`
	// Completing are the nodes that have not sent MESSAGE_EPILOG_COMPLETE
	// yet after the job ended.
	Completing []string `json:",omitempty"`

	RestartCnt uint16 `json:",omitempty"`
	// EarlierExits is only read from old state: an array task's statuses
	// of the runs that had ended when it was requeued. Recovered turns
	// them into the meta record's ArrayExit (convertArrayExits).
	EarlierExits []uint32 `json:",omitempty"`
	// ArrayExit is, on an array's meta record, real's array_recs
	// min_exit_code, max_exit_code and tot_comp_tasks (arrayComp).
	ArrayExit *ArrayExit `json:",omitempty"`
	// FailRequeues counts the requeues after a launch or node failure since
	// the job was submitted or last held for too many of them: Slurm's
	// batch_flag less one (scontrol show job's BatchFlag).
	FailRequeues uint16 `json:",omitempty"`
	// ResizeTime is when the running job last lost nodes (resize_time).
	ResizeTime int64 `json:",omitempty"`
	// ReqCPUs and ReqNodeCnt, when set, are the CPU and node counts of the
	// job's requested TRES (tres_req_cnt) fixed by a resize: losing
	// nodes leaves them as they were, an update of NumNodes sets the
	// node count (_update_job) (0: from the job as it is, reqTRES).
	ReqCPUs    uint32  `json:",omitempty"`
	ReqNodeCnt uint32  `json:",omitempty"`
	Steps      []*Step `json:",omitempty"`
	NextStepID uint32  `json:",omitempty"`

	Payload *Payload `json:",omitempty"`
	// PayloadSeq is the seq of the payload's journal record (0: none, or
	// Payload holds it).
	PayloadSeq uint64 `json:",omitempty"`

	// lic is Licenses parsed (licenses.go); derived, so not saved.
	lic licenseCache
	// schedNodes is where backfill plans to start a pending job
	// (sched_nodes: scontrol's SchedNodeList); advisory, not saved.
	schedNodes string
	// stepWaiters are the sruns told their step must wait for CPUs or
	// memory, woken when a step ends (stepalloc.go); not saved, as Slurm
	// keeps no pending step across a restart.
	stepWaiters []stepWaiter
	// revokedAt is the Time of the last kill message sent for the job:
	// slurmd revokes the job's credentials created at or before that
	// second (slurm_cred_revoked), so no launch may carry a credential of
	// that second (launchable). Not saved: a restart takes longer than
	// the second it guards.
	revokedAt int64
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
	ID uint32
	// HetStep marks one component of a het step (srun with ":" in a
	// plain allocation): HetComp is its step_het_comp, so the step is
	// ID+HetComp (hetstep.go). Other steps have no component (NO_VAL).
	HetStep   bool   `json:",omitempty"`
	HetComp   uint32 `json:",omitempty"`
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
	// NoKill: srun --no-kill (SSF_NO_KILL); the step goes on on its
	// other nodes when one of them fails.
	NoKill bool `json:",omitempty"`
	// Done marks node ranks (step host list order) that reported
	// REQUEST_STEP_COMPLETE.
	Done   []bool
	ExitRC uint32
	// OOMKill: slurmd cancelled the step over the job's memory limit
	// (KILL_OOM) and ExitRC became SIG_OOM before any node reported:
	// the step counts that, not NO_VAL, if none ever does. The first
	// report still sets the code outright, as in _step_partial_comp.
	OOMKill bool `json:",omitempty"`
	// TimedOut: the step reached its time limit and its nodes were told
	// to kill it (REQUEST_KILL_TIMELIMIT); it shows TIMEOUT until they
	// report it complete, and is not killed again.
	TimedOut bool
	// SusTime is the seconds the step spent suspended (its job's
	// suspensions after it started): not charged to its time limit.
	SusTime int64
	// Alloc is what the step holds of its job's CPUs, cores and memory
	// (stepalloc.go); nil for a step that holds nothing.
	Alloc *StepAlloc `json:",omitempty"`
	// Gres is what the step holds of its job's GRES, per job node
	// (gres.go); nil for none.
	Gres [][]gres.Alloc `json:",omitempty"`
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

// IsArrayMeta reports the meta record of an array that still holds tasks
// of its own: pending ones, or ones cancelled with it in place (a whole
// pending array cancelled keeps its task range, as 22.05 does). Code that
// acts on pending tasks checks Pending() too.
func (j *Job) IsArrayMeta() bool { return j.Array != nil && len(j.Array.Pending) > 0 }

// holdsResources: running, suspended, or still completing on some node.
func (j *Job) holdsResources() bool { return j.Running() || (j.IsCompleting() && len(j.NodeIdx) > 0) }

func (j *Job) setBase(b uint32) { j.State = j.State&^msg.JobStateBase | b }
