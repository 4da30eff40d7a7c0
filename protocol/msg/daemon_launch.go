package msg

// Launch messages: REQUEST_BATCH_JOB_LAUNCH (reference protocol-daemon.md
// §2.3), REQUEST_LAUNCH_PROLOG (§2.4) and REQUEST_LAUNCH_TASKS (§4.1). Each
// carries a job credential, kept as received (see daemon_common.go).

import (
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// BatchJobLaunch is REQUEST_BATCH_JOB_LAUNCH (batch_job_launch_msg_t),
// protocol 22.05. Argv and Environment travel with their count twice (an
// explicit u32, then the packstr_array's own); decoding insists the two
// agree. CPUsPerNode and CPUCountReps are the num_cpu_groups run-length
// arrays and have equal lengths. Cred is preceded on the wire by a u16
// cred_version, Cred.Version.
type BatchJobLaunch struct {
	JobID         uint32
	HetJobID      uint32
	UID           uint32
	GID           uint32
	UserName      NullString
	GIDs          []uint32
	Partition     NullString
	NTasks        uint32
	PnMinMemory   uint64
	OpenMode      uint8
	Overcommit    uint8
	ArrayJobID    uint32
	ArrayTaskID   uint32
	AcctgFreq     NullString
	Container     NullString
	CPUBindType   uint16
	CPUsPerTask   uint16
	RestartCnt    uint16
	JobCoreSpec   uint16
	CPUsPerNode   []uint16
	CPUCountReps  []uint32
	AliasList     NullString
	CPUBind       NullString
	Nodes         NullString
	Script        NullString
	WorkDir       NullString
	StdErr        NullString
	StdIn         NullString
	StdOut        NullString
	Argv          []NullString
	SpankJobEnv   []NullString
	Environment   []NullString
	JobMem        uint64
	Cred          *jobcred.Credential
	SelectJobinfo SelectPlugin
	Account       NullString
	QOS           NullString
	ResvName      NullString
	Profile       uint32
	TresBind      NullString
	TresFreq      NullString
}

func walkBatchJobLaunch(w fieldWalker, v codec.Version, b *BatchJobLaunch) {
	w.u32(&b.JobID)
	w.u32(&b.HetJobID)
	w.u32(&b.UID)
	w.u32(&b.GID)
	w.str(&b.UserName)
	walkU32s(w, &b.GIDs)
	w.str(&b.Partition)
	w.u32(&b.NTasks)
	w.u64(&b.PnMinMemory)
	w.u8(&b.OpenMode)
	w.u8(&b.Overcommit)
	w.u32(&b.ArrayJobID)
	w.u32(&b.ArrayTaskID)
	w.str(&b.AcctgFreq)
	w.str(&b.Container)
	w.u16(&b.CPUBindType)
	w.u16(&b.CPUsPerTask)
	w.u16(&b.RestartCnt)
	w.u16(&b.JobCoreSpec)
	walkCPUGroups(w, &b.CPUsPerNode, &b.CPUCountReps)
	w.str(&b.AliasList)
	w.str(&b.CPUBind)
	w.str(&b.Nodes)
	w.str(&b.Script)
	w.str(&b.WorkDir)
	w.str(&b.StdErr)
	w.str(&b.StdIn)
	w.str(&b.StdOut)
	walkCountedStrArray(w, &b.Argv, "argc")
	walkStrArray(w, &b.SpankJobEnv)
	walkCountedStrArray(w, &b.Environment, "envc")
	w.u64(&b.JobMem)
	walkCredVersioned(w, v, &b.Cred)
	walkSelectJobinfo(w, &b.SelectJobinfo)
	w.str(&b.Account)
	w.str(&b.QOS)
	w.str(&b.ResvName)
	w.u32(&b.Profile)
	w.str(&b.TresBind)
	w.str(&b.TresFreq)
}

// walkCPUGroups walks u32 num_cpu_groups and, when it is not 0, a
// pack16_array and a pack32_array of that many entries each.
func walkCPUGroups(w fieldWalker, perNode *[]uint16, reps *[]uint32) {
	n := uint32(len(*perNode))
	if !w.decoding() && len(*perNode) != len(*reps) {
		daemonFail(w, "%d cpus_per_node entries, %d cpu_count_reps", len(*perNode), len(*reps))
		return
	}
	w.u32(&n)
	if w.err() != nil || n == 0 {
		if w.decoding() {
			*perNode, *reps = nil, nil
		}
		return
	}
	walkU16s(w, perNode)
	walkU32s(w, reps)
	if w.decoding() && w.err() == nil && (uint32(len(*perNode)) != n || uint32(len(*reps)) != n) {
		daemonFail(w, "num_cpu_groups %d, arrays of %d and %d", n, len(*perNode), len(*reps))
	}
}

// LaunchTasksRequest is REQUEST_LAUNCH_TASKS (launch_tasks_request_msg_t),
// protocol 22.05. The same body goes to every node of the step; a node finds
// its index in CompleteNodelist and uses GlobalTaskIDs[index] (the wire's
// tasks_to_launch[i] is len(GlobalTaskIDs[i])). NNodes must equal
// len(GlobalTaskIDs). HetJobNNodes / HetJobNTasks are NO_VAL for a step that
// is not heterogeneous; otherwise HetJobTIDs / HetJobTIDOffsets hold that
// many entries. OrigAddr is srun's address (slurmd overwrites it from the
// header).
type LaunchTasksRequest struct {
	StepID           StepID
	UID              uint32
	GID              uint32
	UserName         NullString
	GIDs             []uint32
	HetJobNodeOffset uint32
	HetJobID         uint32
	HetJobNNodes     uint32
	HetJobTIDs       [][]uint32
	HetJobNTasks     uint32
	HetJobTIDOffsets []uint32
	HetJobOffset     uint32
	HetJobStepCnt    uint32
	HetJobTaskOffset uint32
	HetJobNodeList   NullString
	MPIPluginID      uint32
	NTasks           uint32
	NTasksPerBoard   uint16
	NTasksPerCore    uint16
	NTasksPerTres    uint16
	NTasksPerSocket  uint16
	JobMemLim        uint64
	StepMemLim       uint64
	NNodes           uint32
	CPUsPerTask      uint16
	TresPerTask      NullString
	ThreadsPerCore   uint16
	TaskDist         uint32
	NodeCPUs         uint16
	JobCoreSpec      uint16
	AccelBindType    uint16
	Cred             *jobcred.Credential
	GlobalTaskIDs    [][]uint32
	RespPorts        []uint16
	OrigAddr         codec.Addr
	Env              []NullString
	SpankJobEnv      []NullString
	Container        NullString
	Cwd              NullString
	CPUBindType      uint16
	CPUBind          NullString
	MemBindType      uint16
	MemBind          NullString
	Argv             []NullString
	Flags            uint32
	OFName           NullString
	EFName           NullString
	IFName           NullString
	IOPorts          []uint16
	Profile          uint32
	TaskProlog       NullString
	TaskEpilog       NullString
	SlurmdDebug      uint16
	SwitchJobinfo    uint32 // switch plugin id; SwitchNone
	Options          []JobOption
	AliasList        NullString
	CompleteNodelist NullString
	OpenMode         uint8
	AcctgFreq        NullString
	CPUFreqMin       uint32
	CPUFreqMax       uint32
	CPUFreqGov       uint32
	SelectJobinfo    SelectPlugin
	TresBind         NullString
	TresFreq         NullString
	X11              uint16
	X11AllocHost     NullString
	X11AllocPort     uint16
	X11MagicCookie   NullString
	X11Target        NullString
	X11TargetPort    uint16
}

// Flags of LaunchTasksRequest.Flags (22.05).
const (
	LaunchParallelDebug uint32 = 0x01
	LaunchMultiProg     uint32 = 0x02
	LaunchPTY           uint32 = 0x04
	LaunchBufferedIO    uint32 = 0x08
	LaunchLabelIO       uint32 = 0x10
	LaunchNoAlloc       uint32 = 0x40
	LaunchOvercommit    uint32 = 0x80
)

// MPI plugin ids of LaunchTasksRequest.MPIPluginID.
const (
	MPINone uint32 = 101
	MPIPMI2 uint32 = 102
)

func walkLaunchTasks(w fieldWalker, v codec.Version, b *LaunchTasksRequest) {
	walkStepID(w, &b.StepID)
	w.u32(&b.UID)
	w.u32(&b.GID)
	w.str(&b.UserName)
	walkU32s(w, &b.GIDs)
	w.u32(&b.HetJobNodeOffset)
	w.u32(&b.HetJobID)
	w.u32(&b.HetJobNNodes)
	walkNoValRecords(w, b.HetJobNNodes, &b.HetJobTIDs, 4, "het_job_tids", walkU32s)
	w.u32(&b.HetJobNTasks)
	walkNoValRecords(w, b.HetJobNTasks, &b.HetJobTIDOffsets, 4, "het_job_tid_offsets",
		func(w fieldWalker, p *uint32) { w.u32(p) })
	w.u32(&b.HetJobOffset)
	w.u32(&b.HetJobStepCnt)
	w.u32(&b.HetJobTaskOffset)
	w.str(&b.HetJobNodeList)
	w.u32(&b.MPIPluginID)
	w.u32(&b.NTasks)
	w.u16(&b.NTasksPerBoard)
	w.u16(&b.NTasksPerCore)
	w.u16(&b.NTasksPerTres)
	w.u16(&b.NTasksPerSocket)
	w.u64(&b.JobMemLim)
	w.u64(&b.StepMemLim)
	w.u32(&b.NNodes)
	if b.NNodes >= pack.NoVal {
		daemonFail(w, "nnodes %#x", b.NNodes)
	}
	w.u16(&b.CPUsPerTask)
	w.str(&b.TresPerTask)
	w.u16(&b.ThreadsPerCore)
	w.u32(&b.TaskDist)
	w.u16(&b.NodeCPUs)
	w.u16(&b.JobCoreSpec)
	w.u16(&b.AccelBindType)
	walkCredVersioned(w, v, &b.Cred)
	walkTasksToLaunch(w, b.NNodes, &b.GlobalTaskIDs)
	walkPorts(w, &b.RespPorts, "resp ports")
	walkSlurmAddr(w, &b.OrigAddr)
	walkStrArray(w, &b.Env)
	walkStrArray(w, &b.SpankJobEnv)
	w.str(&b.Container)
	w.str(&b.Cwd)
	w.u16(&b.CPUBindType)
	w.str(&b.CPUBind)
	w.u16(&b.MemBindType)
	w.str(&b.MemBind)
	walkStrArray(w, &b.Argv)
	w.u32(&b.Flags)
	w.str(&b.OFName)
	w.str(&b.EFName)
	w.str(&b.IFName)
	walkPorts(w, &b.IOPorts, "io ports")
	w.u32(&b.Profile)
	w.str(&b.TaskProlog)
	w.str(&b.TaskEpilog)
	w.u16(&b.SlurmdDebug)
	walkSwitchJobinfo(w, &b.SwitchJobinfo)
	walkJobOptions(w, &b.Options)
	w.str(&b.AliasList)
	w.str(&b.CompleteNodelist)
	w.u8(&b.OpenMode)
	w.str(&b.AcctgFreq)
	w.u32(&b.CPUFreqMin)
	w.u32(&b.CPUFreqMax)
	w.u32(&b.CPUFreqGov)
	walkSelectJobinfo(w, &b.SelectJobinfo)
	w.str(&b.TresBind)
	w.str(&b.TresFreq)
	w.u16(&b.X11)
	w.str(&b.X11AllocHost)
	w.u16(&b.X11AllocPort)
	w.str(&b.X11MagicCookie)
	w.str(&b.X11Target)
	w.u16(&b.X11TargetPort)
}

// walkNoValRecords walks n records whose count was sent just before (n ==
// NO_VAL: none, and the slice is nil). Encoding checks len(*s) against n.
func walkNoValRecords[T any](w fieldWalker, n uint32, s *[]T, minSize int, what string, item func(fieldWalker, *T)) {
	if w.err() != nil {
		return
	}
	if n == pack.NoVal {
		if w.decoding() {
			*s = nil
		} else if len(*s) != 0 {
			daemonFail(w, "%d %s with a NO_VAL count", len(*s), what)
		}
		return
	}
	if w.decoding() {
		*s = nil
		if n == 0 || !bound(w, uint64(n), minSize, what) {
			return
		}
		*s = make([]T, n)
	} else if uint64(len(*s)) != uint64(n) {
		daemonFail(w, "%d %s, count %d", len(*s), what, n)
		return
	}
	for i := range *s {
		item(w, &(*s)[i])
		if w.err() != nil {
			return
		}
	}
}

// walkTasksToLaunch walks, for each of the nnodes nodes, u16 tasks_to_launch
// and the pack32_array of its global task ids, whose count must equal it.
func walkTasksToLaunch(w fieldWalker, nnodes uint32, ids *[][]uint32) {
	walkNoValRecords(w, nnodes, ids, 6, "nodes' task ids", func(w fieldWalker, p *[]uint32) {
		if !w.decoding() && len(*p) > 0xffff {
			daemonFail(w, "%d tasks on one node", len(*p))
			return
		}
		n := uint16(len(*p))
		w.u16(&n)
		walkU32s(w, p)
		if w.decoding() && w.err() == nil && len(*p) != int(n) {
			daemonFail(w, "tasks_to_launch %d, %d task ids", n, len(*p))
		}
	})
}

// PrologLaunch is REQUEST_LAUNCH_PROLOG (prolog_launch_msg_t), protocol
// 22.05. Its credential has no cred_version in front; it is packed at the
// message version.
type PrologLaunch struct {
	JobGres        []GresJobAlloc
	JobID          uint32
	HetJobID       uint32
	UID            uint32
	GID            uint32
	AliasList      NullString
	Nodes          NullString
	StdErr         NullString
	StdOut         NullString
	WorkDir        NullString
	X11            uint16
	X11AllocHost   NullString
	X11AllocPort   uint16
	X11MagicCookie NullString
	X11Target      NullString
	X11TargetPort  uint16
	SpankJobEnv    []NullString
	Cred           *jobcred.Credential
	UserName       NullString
}

func walkPrologLaunch(w fieldWalker, v codec.Version, b *PrologLaunch) {
	walkGresJobAlloc(w, &b.JobGres)
	w.u32(&b.JobID)
	w.u32(&b.HetJobID)
	w.u32(&b.UID)
	w.u32(&b.GID)
	w.str(&b.AliasList)
	w.str(&b.Nodes)
	w.str(&b.StdErr)
	w.str(&b.StdOut)
	w.str(&b.WorkDir)
	w.u16(&b.X11)
	w.str(&b.X11AllocHost)
	w.u16(&b.X11AllocPort)
	w.str(&b.X11MagicCookie)
	w.str(&b.X11Target)
	w.u16(&b.X11TargetPort)
	walkStrArray(w, &b.SpankJobEnv)
	walkCred(w, &b.Cred, uint16(v))
	w.str(&b.UserName)
}
