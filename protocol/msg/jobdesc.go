package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Bits of JobDesc.Bitflags that the 22.05 packer sets itself (slurm.h).
const (
	UseDefaultAcct  uint64 = 1 << 25
	UseDefaultPart  uint64 = 1 << 26
	UseDefaultQOS   uint64 = 1 << 27
	UseDefaultWCKey uint64 = 1 << 28
)

// JobDesc is a job_desc_msg_t, the body of REQUEST_SUBMIT_BATCH_JOB,
// REQUEST_RESOURCE_ALLOCATION, REQUEST_JOB_WILL_RUN and REQUEST_UPDATE_JOB
// (reference §5.4). Fields are in wire order; the comment numbers them.
//
// The codec packs exactly what the struct holds. Slurm's packer also ORs the
// UseDefault* bits into Bitflags for a NULL account, partition, QOS or
// wckey: a client calls SetDefaultBits before sending (the codec does not,
// so a decoded request re-encodes to the bytes it came from).
type JobDesc struct {
	SiteFactor        uint32       // 1
	BatchFeatures     NullString   // 2
	ClusterFeatures   NullString   // 3
	Clusters          NullString   // 4
	Contiguous        uint16       // 5
	Container         NullString   // 6
	CoreSpec          uint16       // 7
	TaskDist          uint32       // 8
	KillOnNodeFail    uint16       // 9
	Features          NullString   // 10
	FedSiblingsActive uint64       // 11
	FedSiblingsViable uint64       // 12
	JobID             uint32       // 13
	JobIDStr          NullString   // 14
	Name              NullString   // 15
	AllocNode         NullString   // 16
	AllocSID          uint32       // 17
	ArrayInx          NullString   // 18
	BurstBuffer       NullString   // 19
	PnMinCPUs         uint16       // 20
	PnMinMemory       uint64       // 21
	PnMinTmpDisk      uint32       // 22
	PowerFlags        uint8        // 23
	Prefer            NullString   // 24
	CPUFreqMin        uint32       // 25
	CPUFreqMax        uint32       // 26
	CPUFreqGov        uint32       // 27
	Partition         NullString   // 28
	Priority          uint32       // 29
	Dependency        NullString   // 30
	Account           NullString   // 31
	AdminComment      NullString   // 32
	Comment           NullString   // 33
	Nice              uint32       // 34
	Profile           uint32       // 35
	QOS               NullString   // 36
	MCSLabel          NullString   // 37
	OriginCluster     NullString   // 38
	OpenMode          uint8        // 39
	Overcommit        uint8        // 40
	AcctgFreq         NullString   // 41
	NumTasks          uint32       // 42
	ReqContext        NullString   // 43
	ReqNodes          NullString   // 44
	ExcNodes          NullString   // 45
	Environment       []NullString // 46 "NAME=value"; no entry may be NULL
	SpankJobEnv       []NullString // 47 no entry may be NULL
	Script            NullString   // 48
	Argv              []NullString // 49
	StdErr            NullString   // 50
	StdIn             NullString   // 51
	StdOut            NullString   // 52
	SubmitLine        NullString   // 53
	WorkDir           NullString   // 54
	Immediate         uint16       // 55
	Reboot            uint16       // 56
	Requeue           uint16       // 57
	Shared            uint16       // 58
	CPUsPerTask       uint16       // 59
	NtasksPerNode     uint16       // 60
	NtasksPerBoard    uint16       // 61
	NtasksPerSocket   uint16       // 62
	NtasksPerCore     uint16       // 63
	NtasksPerTres     uint16       // 64
	PlaneSize         uint16       // 65
	CPUBindType       uint16       // 66
	MemBindType       uint16       // 67
	CPUBind           NullString   // 68
	MemBind           NullString   // 69
	TimeLimit         uint32       // 70 minutes
	TimeMin           uint32       // 71
	MinCPUs           uint32       // 72
	MaxCPUs           uint32       // 73
	MinNodes          uint32       // 74
	MaxNodes          uint32       // 75
	BoardsPerNode     uint16       // 76
	SocketsPerBoard   uint16       // 77
	SocketsPerNode    uint16       // 78
	CoresPerSocket    uint16       // 79
	ThreadsPerCore    uint16       // 80
	UserID            uint32       // 81
	GroupID           uint32       // 82
	AllocRespPort     uint16       // 83
	RespHost          NullString   // 84 normally NULL: the controller uses the peer address
	OtherPort         uint16       // 85
	Network           NullString   // 86
	BeginTime         int64        // 87
	EndTime           int64        // 88
	Deadline          int64        // 89
	Licenses          NullString   // 90
	MailType          uint16       // 91
	MailUser          NullString   // 92
	Reservation       NullString   // 93
	RestartCnt        uint16       // 94
	WarnFlags         uint16       // 95
	WarnSignal        uint16       // 96
	WarnTime          uint16       // 97
	WCKey             NullString   // 98
	ReqSwitch         uint32       // 99
	Wait4Switch       uint32       // 100
	SelectJobinfo     SelectPlugin // 101 always present on the wire
	WaitAllNodes      uint16       // 102
	Bitflags          uint64       // 103
	DelayBoot         uint32       // 104
	Extra             NullString   // 105
	X11               uint16       // 106
	X11MagicCookie    NullString   // 107
	X11Target         NullString   // 108
	X11TargetPort     uint16       // 109
	CPUsPerTres       NullString   // 110
	MemPerTres        NullString   // 111
	TresBind          NullString   // 112
	TresFreq          NullString   // 113
	TresPerJob        NullString   // 114
	TresPerNode       NullString   // 115
	TresPerSocket     NullString   // 116
	TresPerTask       NullString   // 117
	CrontabEntry      *CronEntry   // 118 nil unless scrontab
}

// NewJobDesc returns a descriptor with slurm_init_job_desc_msg's "unset"
// values (NO_VAL and friends; everything else 0 or NULL) and the cons_tres
// select plugin id. AllocSID is left NO_VAL; the Slurm API puts getsid(0)
// there before sending.
func NewJobDesc() *JobDesc {
	return &JobDesc{
		AllocSID:        pack.NoVal,
		CPUFreqMin:      pack.NoVal,
		CPUFreqMax:      pack.NoVal,
		CPUFreqGov:      pack.NoVal,
		DelayBoot:       pack.NoVal,
		GroupID:         pack.NoVal,
		JobID:           pack.NoVal,
		MaxCPUs:         pack.NoVal,
		MaxNodes:        pack.NoVal,
		MinCPUs:         pack.NoVal,
		MinNodes:        pack.NoVal,
		Nice:            pack.NoVal,
		NumTasks:        pack.NoVal,
		PnMinTmpDisk:    pack.NoVal,
		Priority:        pack.NoVal,
		ReqSwitch:       pack.NoVal,
		SiteFactor:      pack.NoVal,
		TaskDist:        pack.NoVal,
		TimeLimit:       pack.NoVal,
		TimeMin:         pack.NoVal,
		UserID:          pack.NoVal,
		Wait4Switch:     pack.NoVal,
		Contiguous:      pack.NoVal16,
		CoreSpec:        pack.NoVal16,
		CoresPerSocket:  pack.NoVal16,
		CPUBindType:     pack.NoVal16,
		CPUsPerTask:     pack.NoVal16,
		KillOnNodeFail:  pack.NoVal16,
		MemBindType:     pack.NoVal16,
		MailType:        pack.NoVal16,
		NtasksPerCore:   pack.NoVal16,
		NtasksPerTres:   pack.NoVal16,
		NtasksPerNode:   pack.NoVal16,
		NtasksPerSocket: pack.NoVal16,
		PlaneSize:       pack.NoVal16,
		PnMinCPUs:       pack.NoVal16,
		Reboot:          pack.NoVal16,
		Requeue:         pack.NoVal16,
		Shared:          pack.NoVal16,
		SocketsPerNode:  pack.NoVal16,
		ThreadsPerCore:  pack.NoVal16,
		WaitAllNodes:    pack.NoVal16,
		Overcommit:      pack.NoVal8,
		PnMinMemory:     pack.NoVal64,
		SelectJobinfo:   SelectConsTres,
	}
}

// SetDefaultBits does what Slurm's packer does before packing: it sets
// UseDefaultAcct, UseDefaultPart, UseDefaultQOS and UseDefaultWCKey for a
// NULL account, partition, QOS and wckey.
func (j *JobDesc) SetDefaultBits() {
	if !j.Account.Valid {
		j.Bitflags |= UseDefaultAcct
	}
	if !j.Partition.Valid {
		j.Bitflags |= UseDefaultPart
	}
	if !j.QOS.Valid {
		j.Bitflags |= UseDefaultQOS
	}
	if !j.WCKey.Valid {
		j.Bitflags |= UseDefaultWCKey
	}
}

func walkJobDesc(w fieldWalker, _ codec.Version, j *JobDesc) {
	w.u32(&j.SiteFactor)
	w.str(&j.BatchFeatures)
	w.str(&j.ClusterFeatures)
	w.str(&j.Clusters)
	w.u16(&j.Contiguous)
	w.str(&j.Container)
	w.u16(&j.CoreSpec)
	w.u32(&j.TaskDist)
	w.u16(&j.KillOnNodeFail)
	w.str(&j.Features)
	w.u64(&j.FedSiblingsActive)
	w.u64(&j.FedSiblingsViable)
	w.u32(&j.JobID)
	w.str(&j.JobIDStr)
	w.str(&j.Name)

	w.str(&j.AllocNode)
	w.u32(&j.AllocSID)
	w.str(&j.ArrayInx)
	w.str(&j.BurstBuffer)
	w.u16(&j.PnMinCPUs)
	w.u64(&j.PnMinMemory)
	w.u32(&j.PnMinTmpDisk)
	w.u8(&j.PowerFlags)
	w.str(&j.Prefer)

	w.u32(&j.CPUFreqMin)
	w.u32(&j.CPUFreqMax)
	w.u32(&j.CPUFreqGov)

	w.str(&j.Partition)
	w.u32(&j.Priority)
	w.str(&j.Dependency)
	w.str(&j.Account)
	w.str(&j.AdminComment)
	w.str(&j.Comment)
	w.u32(&j.Nice)
	w.u32(&j.Profile)
	w.str(&j.QOS)
	w.str(&j.MCSLabel)

	w.str(&j.OriginCluster)
	w.u8(&j.OpenMode)
	w.u8(&j.Overcommit)
	w.str(&j.AcctgFreq)
	w.u32(&j.NumTasks)

	w.str(&j.ReqContext)
	w.str(&j.ReqNodes)
	w.str(&j.ExcNodes)
	walkEnvArray(w, &j.Environment, "environment")
	walkEnvArray(w, &j.SpankJobEnv, "spank_job_env")
	w.str(&j.Script)
	walkStrArray(w, &j.Argv)

	w.str(&j.StdErr)
	w.str(&j.StdIn)
	w.str(&j.StdOut)
	w.str(&j.SubmitLine)
	w.str(&j.WorkDir)

	w.u16(&j.Immediate)
	w.u16(&j.Reboot)
	w.u16(&j.Requeue)
	w.u16(&j.Shared)
	w.u16(&j.CPUsPerTask)
	w.u16(&j.NtasksPerNode)
	w.u16(&j.NtasksPerBoard)
	w.u16(&j.NtasksPerSocket)
	w.u16(&j.NtasksPerCore)
	w.u16(&j.NtasksPerTres)

	w.u16(&j.PlaneSize)
	w.u16(&j.CPUBindType)
	w.u16(&j.MemBindType)
	w.str(&j.CPUBind)
	w.str(&j.MemBind)

	w.u32(&j.TimeLimit)
	w.u32(&j.TimeMin)
	w.u32(&j.MinCPUs)
	w.u32(&j.MaxCPUs)
	w.u32(&j.MinNodes)
	w.u32(&j.MaxNodes)
	w.u16(&j.BoardsPerNode)
	w.u16(&j.SocketsPerBoard)
	w.u16(&j.SocketsPerNode)
	w.u16(&j.CoresPerSocket)
	w.u16(&j.ThreadsPerCore)
	w.u32(&j.UserID)
	w.u32(&j.GroupID)

	w.u16(&j.AllocRespPort)
	w.str(&j.RespHost)
	w.u16(&j.OtherPort)
	w.str(&j.Network)
	w.time(&j.BeginTime)
	w.time(&j.EndTime)
	w.time(&j.Deadline)

	w.str(&j.Licenses)
	w.u16(&j.MailType)
	w.str(&j.MailUser)
	w.str(&j.Reservation)
	w.u16(&j.RestartCnt)
	w.u16(&j.WarnFlags)
	w.u16(&j.WarnSignal)
	w.u16(&j.WarnTime)
	w.str(&j.WCKey)
	w.u32(&j.ReqSwitch)
	w.u32(&j.Wait4Switch)

	walkSelectJobinfo(w, &j.SelectJobinfo)
	w.u16(&j.WaitAllNodes)
	w.u64(&j.Bitflags)
	w.u32(&j.DelayBoot)
	w.str(&j.Extra)
	w.u16(&j.X11)
	w.str(&j.X11MagicCookie)
	w.str(&j.X11Target)
	w.u16(&j.X11TargetPort)

	w.str(&j.CPUsPerTres)
	w.str(&j.MemPerTres)
	w.str(&j.TresBind)
	w.str(&j.TresFreq)
	w.str(&j.TresPerJob)
	w.str(&j.TresPerNode)
	w.str(&j.TresPerSocket)
	w.str(&j.TresPerTask)
	walkCronEntry(w, &j.CrontabEntry)
}

// JobDescList is the body of REQUEST_HET_JOB_ALLOCATION and
// REQUEST_SUBMIT_BATCH_HET_JOB: u16 count, then that many job descriptors.
type JobDescList struct {
	Jobs []JobDesc
}

// minJobDescSize bounds a decoded het count: every descriptor is more than
// 400 bytes even with every string NULL.
const minJobDescSize = 400

func walkJobDescList(w fieldWalker, v codec.Version, b *JobDescList) {
	n := walkHetCount(w, len(b.Jobs), minJobDescSize, "job_desc")
	if w.decoding() {
		b.Jobs = nil
		if w.err() != nil || n == 0 {
			return
		}
		b.Jobs = make([]JobDesc, n)
	}
	for i := range b.Jobs {
		walkJobDesc(w, v, &b.Jobs[i])
		if w.err() != nil {
			return
		}
	}
}
