package msg

import (
	"fmt"
	"sync"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Job states (job_states in slurm.h): the base state is JobState&JobStateBase.
const (
	JobPending   uint32 = 0
	JobRunning   uint32 = 1
	JobSuspended uint32 = 2
	JobComplete  uint32 = 3
	JobCancelled uint32 = 4
	JobFailed    uint32 = 5
	JobTimeout   uint32 = 6
	JobNodeFail  uint32 = 7
	JobPreempted uint32 = 8
	JobBootFail  uint32 = 9
	JobDeadline  uint32 = 10
	JobOOM       uint32 = 11

	JobStateBase uint32 = 0xff

	JobLaunchFailed uint32 = 0x100
	JobUpdateDB     uint32 = 0x200
	JobRequeue      uint32 = 0x400
	JobRequeueHold  uint32 = 0x800
	JobSpecialExit  uint32 = 0x1000
	JobResizing     uint32 = 0x2000
	JobConfiguring  uint32 = 0x4000
	JobCompleting   uint32 = 0x8000
	JobStopped      uint32 = 0x10000
	JobReconfigFail uint32 = 0x20000
	JobPowerUpNode  uint32 = 0x40000
	JobRevoked      uint32 = 0x80000
	JobRequeueFed   uint32 = 0x100000
	JobResvDelHold  uint32 = 0x200000
	JobSignaling    uint32 = 0x400000
	JobStageOut     uint32 = 0x800000
)

// JobInfoMsg is RESPONSE_JOB_INFO (job_info_msg_t, reference §5.5): u32
// record count, time last_update, time last_backfill, then the records.
//
// Slurm's client sets BACKFILL_LAST in a pending job's Bitflags after
// unpacking when last_backfill <= last_sched_eval; the codec leaves the
// record as sent.
type JobInfoMsg struct {
	LastUpdate   int64
	LastBackfill int64
	Jobs         []JobInfo
}

// JobInfo is one job record (slurm_job_info_t) as slurmctld's pack_job sends
// it in 22.05: 125 fields, in wire order (the comments number them).
//
// Slurm packs the job's container twice (fields 6 and 48) from the same
// value; Container holds it, and a record whose two copies differ fails to
// decode. The multi_core block (field 105) is MultiCore: nil when the job
// has no socket/core request (the byte 0).
type JobInfo struct {
	ArrayJobID           uint32        // 1
	ArrayTaskID          uint32        // 2 NO_VAL for a non-array job
	ArrayTaskStr         NullString    // 3 hex bitmap text of pending task ids (array parent)
	ArrayMaxTasks        uint32        // 4
	AssocID              uint32        // 5
	Container            NullString    // 6 and 48
	DelayBoot            uint32        // 7
	JobID                uint32        // 8
	UserID               uint32        // 9
	GroupID              uint32        // 10
	HetJobID             uint32        // 11
	HetJobIDSet          NullString    // 12
	HetJobOffset         uint32        // 13
	Profile              uint32        // 14
	JobState             uint32        // 15
	BatchFlag            uint16        // 16
	StateReason          uint16        // 17
	PowerFlags           uint8         // 18
	Reboot               uint8         // 19
	RestartCnt           uint16        // 20
	ShowFlags            uint16        // 21
	Deadline             int64         // 22
	AllocSID             uint32        // 23
	TimeLimit            uint32        // 24
	TimeMin              uint32        // 25
	Nice                 uint32        // 26
	SubmitTime           int64         // 27
	EligibleTime         int64         // 28
	AccrueTime           int64         // 29
	StartTime            int64         // 30
	EndTime              int64         // 31
	SuspendTime          int64         // 32
	PreSusTime           int64         // 33
	ResizeTime           int64         // 34
	LastSchedEval        int64         // 35
	PreemptTime          int64         // 36
	Priority             uint32        // 37
	BillableTres         PackedDouble  // 38
	Cluster              NullString    // 39
	Nodes                NullString    // 40
	SchedNodes           NullString    // 41
	Partition            NullString    // 42
	Account              NullString    // 43
	AdminComment         NullString    // 44
	SiteFactor           uint32        // 45
	Network              NullString    // 46
	Comment              NullString    // 47
	BatchFeatures        NullString    // 49
	BatchHost            NullString    // 50
	BurstBuffer          NullString    // 51
	BurstBufferState     NullString    // 52
	SystemComment        NullString    // 53
	QOS                  NullString    // 54
	PreemptableTime      int64         // 55
	Licenses             NullString    // 56
	StateDesc            NullString    // 57
	ResvName             NullString    // 58
	MCSLabel             NullString    // 59
	ExitCode             uint32        // 60
	DerivedEC            uint32        // 61
	GresTotal            NullString    // 62
	JobResrcs            *JobResources // 63 nil unless SHOW_DETAIL
	GresDetailStr        []NullString  // 64
	Name                 NullString    // 65
	UserName             NullString    // 66
	WCKey                NullString    // 67
	ReqSwitch            uint32        // 68
	Wait4Switch          uint32        // 69
	AllocNode            NullString    // 70
	NodeInx              HexBitmap     // 71
	SelectJobinfo        SelectPlugin  // 72
	Features             NullString    // 73
	Prefer               NullString    // 74
	ClusterFeatures      NullString    // 75
	WorkDir              NullString    // 76
	Dependency           NullString    // 77
	Command              NullString    // 78
	NumCPUs              uint32        // 79
	MaxCPUs              uint32        // 80
	NumNodes             uint32        // 81
	MaxNodes             uint32        // 82
	Requeue              uint16        // 83
	NtasksPerNode        uint16        // 84
	NtasksPerTres        uint16        // 85
	NumTasks             uint32        // 86
	Shared               uint16        // 87
	CPUFreqMin           uint32        // 88
	CPUFreqMax           uint32        // 89
	CPUFreqGov           uint32        // 90
	Cronspec             NullString    // 91
	Contiguous           uint16        // 92
	CoreSpec             uint16        // 93
	CPUsPerTask          uint16        // 94
	PnMinCPUs            uint16        // 95
	PnMinMemory          uint64        // 96
	PnMinTmpDisk         uint32        // 97
	ReqNodes             NullString    // 98
	ReqNodeInx           HexBitmap     // 99
	ExcNodes             NullString    // 100
	ExcNodeInx           HexBitmap     // 101
	StdErr               NullString    // 102
	StdIn                NullString    // 103
	StdOut               NullString    // 104
	MultiCore            *MultiCore    // 105
	Bitflags             uint64        // 106
	TresAllocStr         NullString    // 107
	TresReqStr           NullString    // 108
	StartProtocolVer     uint16        // 109
	FedOriginStr         NullString    // 110
	FedSiblingsActive    uint64        // 111
	FedSiblingsActiveStr NullString    // 112
	FedSiblingsViable    uint64        // 113
	FedSiblingsViableStr NullString    // 114
	CPUsPerTres          NullString    // 115
	MemPerTres           NullString    // 116
	TresBind             NullString    // 117
	TresFreq             NullString    // 118
	TresPerJob           NullString    // 119
	TresPerNode          NullString    // 120
	TresPerSocket        NullString    // 121
	TresPerTask          NullString    // 122
	MailType             uint16        // 123
	MailUser             NullString    // 124
	SelinuxContext       NullString    // 125
}

// JobResources is a job_resources_t as pack_job_resources sends it (the
// 17 items of reference §5.5). A nil *JobResources is the lone u32 NO_VAL.
//
// The wire's nhosts is len(CPUs): Slurm's unpacker insists that the cpus
// array has exactly nhosts entries, so the two cannot differ. Likewise
// CPUArrayValue must be as long as CPUArrayReps.
type JobResources struct {
	NCPUs            uint32
	NodeReq          uint32
	Nodes            NullString
	WholeNode        uint8
	ThreadsPerCore   uint16
	CRType           uint16
	CPUArrayReps     []uint32
	CPUArrayValue    []uint16
	CPUs             []uint16
	CPUsUsed         []uint16
	MemoryAllocated  []uint64
	MemoryUsed       []uint64
	SocketsPerNode   []uint16
	CoresPerSocket   []uint16
	SockCoreRepCount []uint32
	CoreBitmap       HexBitmap
	CoreBitmapUsed   HexBitmap
}

func walkJobResources(w fieldWalker, p **JobResources) {
	nhosts := pack.NoVal
	if !w.decoding() && *p != nil {
		nhosts = uint32(len((*p).CPUs))
		if uint64(len((*p).CPUs)) >= uint64(pack.NoVal) {
			w.fail(fmt.Errorf("%w: job_resources with %d hosts", codec.ErrEncode, len((*p).CPUs)))
			return
		}
	}
	nhosts = valU32(w, nhosts)
	if w.decoding() {
		*p = nil
		if w.err() != nil || nhosts == pack.NoVal {
			return
		}
		*p = new(JobResources)
	} else if nhosts == pack.NoVal {
		return
	}
	j := *p
	w.u32(&j.NCPUs)
	w.u32(&j.NodeReq)
	w.str(&j.Nodes)
	w.u8(&j.WholeNode)
	w.u16(&j.ThreadsPerCore)
	w.u16(&j.CRType)
	walkU32s(w, &j.CPUArrayReps)
	walkU16s(w, &j.CPUArrayValue)
	if len(j.CPUArrayValue) != len(j.CPUArrayReps) && w.err() == nil {
		jobFail(w, fmt.Errorf("msg: job_resources has %d cpu_array_value for %d cpu_array_reps", len(j.CPUArrayValue), len(j.CPUArrayReps)))
		return
	}
	walkU16s(w, &j.CPUs)
	if uint64(len(j.CPUs)) != uint64(nhosts) && w.err() == nil {
		w.fail(fmt.Errorf("msg: job_resources has %d cpus for %d hosts", len(j.CPUs), nhosts))
		return
	}
	walkU16s(w, &j.CPUsUsed)
	walkU64s(w, &j.MemoryAllocated)
	walkU64s(w, &j.MemoryUsed)
	walkU16s(w, &j.SocketsPerNode)
	walkU16s(w, &j.CoresPerSocket)
	walkU32s(w, &j.SockCoreRepCount)
	w.bitmap(&j.CoreBitmap)
	w.bitmap(&j.CoreBitmapUsed)
}

func walkJobInfo(w fieldWalker, _ codec.Version, j *JobInfo) {
	w.u32(&j.ArrayJobID)
	w.u32(&j.ArrayTaskID)
	w.str(&j.ArrayTaskStr)
	w.u32(&j.ArrayMaxTasks)

	w.u32(&j.AssocID)
	w.str(&j.Container)
	w.u32(&j.DelayBoot)
	w.u32(&j.JobID)
	w.u32(&j.UserID)
	w.u32(&j.GroupID)
	w.u32(&j.HetJobID)
	w.str(&j.HetJobIDSet)
	w.u32(&j.HetJobOffset)
	w.u32(&j.Profile)

	w.u32(&j.JobState)
	w.u16(&j.BatchFlag)
	w.u16(&j.StateReason)
	w.u8(&j.PowerFlags)
	w.u8(&j.Reboot)
	w.u16(&j.RestartCnt)
	w.u16(&j.ShowFlags)
	w.time(&j.Deadline)

	w.u32(&j.AllocSID)
	w.u32(&j.TimeLimit)
	w.u32(&j.TimeMin)
	w.u32(&j.Nice)

	w.time(&j.SubmitTime)
	w.time(&j.EligibleTime)
	w.time(&j.AccrueTime)
	w.time(&j.StartTime)
	w.time(&j.EndTime)
	w.time(&j.SuspendTime)
	w.time(&j.PreSusTime)
	w.time(&j.ResizeTime)
	w.time(&j.LastSchedEval)
	w.time(&j.PreemptTime)
	w.u32(&j.Priority)
	w.dbl(&j.BillableTres)
	w.str(&j.Cluster)
	w.str(&j.Nodes)
	w.str(&j.SchedNodes)
	w.str(&j.Partition)
	w.str(&j.Account)
	w.str(&j.AdminComment)
	w.u32(&j.SiteFactor)
	w.str(&j.Network)
	w.str(&j.Comment)
	if w.decoding() {
		again := valStr(w, NullString{})
		if again != j.Container && w.err() == nil {
			w.fail(fmt.Errorf("msg: job %d: container sent as %#v and %#v", j.JobID, j.Container, again))
		}
	} else {
		w.str(&j.Container)
	}
	w.str(&j.BatchFeatures)
	w.str(&j.BatchHost)
	w.str(&j.BurstBuffer)
	w.str(&j.BurstBufferState)
	w.str(&j.SystemComment)
	w.str(&j.QOS)
	w.time(&j.PreemptableTime)
	w.str(&j.Licenses)
	w.str(&j.StateDesc)
	w.str(&j.ResvName)
	w.str(&j.MCSLabel)

	w.u32(&j.ExitCode)
	w.u32(&j.DerivedEC)
	w.str(&j.GresTotal)
	walkJobResources(w, &j.JobResrcs)
	walkStrArray(w, &j.GresDetailStr)

	w.str(&j.Name)
	w.str(&j.UserName)
	w.str(&j.WCKey)
	w.u32(&j.ReqSwitch)
	w.u32(&j.Wait4Switch)

	w.str(&j.AllocNode)
	w.bitmap(&j.NodeInx)
	walkSelectJobinfo(w, &j.SelectJobinfo)

	// _pack_default_job_details
	w.str(&j.Features)
	w.str(&j.Prefer)
	w.str(&j.ClusterFeatures)
	w.str(&j.WorkDir)
	w.str(&j.Dependency)
	w.str(&j.Command)

	w.u32(&j.NumCPUs)
	w.u32(&j.MaxCPUs)
	w.u32(&j.NumNodes)
	w.u32(&j.MaxNodes)
	w.u16(&j.Requeue)
	w.u16(&j.NtasksPerNode)
	w.u16(&j.NtasksPerTres)
	w.u32(&j.NumTasks)

	w.u16(&j.Shared)
	w.u32(&j.CPUFreqMin)
	w.u32(&j.CPUFreqMax)
	w.u32(&j.CPUFreqGov)

	w.str(&j.Cronspec)

	// _pack_pending_job_details
	w.u16(&j.Contiguous)
	w.u16(&j.CoreSpec)
	w.u16(&j.CPUsPerTask)
	w.u16(&j.PnMinCPUs)

	w.u64(&j.PnMinMemory)
	w.u32(&j.PnMinTmpDisk)
	w.str(&j.ReqNodes)
	w.bitmap(&j.ReqNodeInx)
	w.str(&j.ExcNodes)
	w.bitmap(&j.ExcNodeInx)

	w.str(&j.StdErr)
	w.str(&j.StdIn)
	w.str(&j.StdOut)
	walkMultiCore(w, &j.MultiCore)

	w.u64(&j.Bitflags)
	w.str(&j.TresAllocStr)
	w.str(&j.TresReqStr)
	w.u16(&j.StartProtocolVer)

	w.str(&j.FedOriginStr)
	w.u64(&j.FedSiblingsActive)
	w.str(&j.FedSiblingsActiveStr)
	w.u64(&j.FedSiblingsViable)
	w.str(&j.FedSiblingsViableStr)

	w.str(&j.CPUsPerTres)
	w.str(&j.MemPerTres)
	w.str(&j.TresBind)
	w.str(&j.TresFreq)
	w.str(&j.TresPerJob)
	w.str(&j.TresPerNode)
	w.str(&j.TresPerSocket)
	w.str(&j.TresPerTask)

	w.u16(&j.MailType)
	w.str(&j.MailUser)
	w.str(&j.SelinuxContext)
}

// minJobInfoSize is the packed size of the smallest job record (every string
// and bitmap NULL, no job_resources, no multi_core): the bound on a decoded
// record count.
var minJobInfoSize = sync.OnceValue(func() int {
	var w pack.Writer
	j := JobInfo{
		SelectJobinfo: SelectConsTres,
		NodeInx:       NullBitmap, ReqNodeInx: NullBitmap, ExcNodeInx: NullBitmap,
	}
	walkJobInfo(&encoder{w: &w}, codec.Version2205, &j)
	return w.Len()
})

func walkJobInfoMsg(w fieldWalker, v codec.Version, b *JobInfoMsg) {
	n := w.count(len(b.Jobs), minJobInfoSize())
	w.time(&b.LastUpdate)
	w.time(&b.LastBackfill)
	if w.decoding() {
		b.Jobs = nil
		if w.err() != nil || n == 0 {
			return
		}
		b.Jobs = make([]JobInfo, n)
	}
	for i := range b.Jobs {
		walkJobInfo(w, v, &b.Jobs[i])
		if w.err() != nil {
			return
		}
	}
}
