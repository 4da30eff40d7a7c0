package msg

import (
	"sync"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// StepInfoMsg is RESPONSE_JOB_STEP_INFO (job_step_info_response_msg_t,
// reference §5.9). In 22.05 the header is u32 step count first, then time
// last_update (21.08 had them the other way round).
type StepInfoMsg struct {
	LastUpdate int64
	Steps      []StepInfo
}

// StepInfo is one step record (job_step_info_t) as slurmctld's
// pack_ctld_job_step_info sends it: 36 fields in wire order.
type StepInfo struct {
	ArrayJobID       uint32       // 1
	ArrayTaskID      uint32       // 2
	StepID           StepID       // 3
	UserID           uint32       // 4
	NumCPUs          uint32       // 5
	CPUFreqMin       uint32       // 6
	CPUFreqMax       uint32       // 7
	CPUFreqGov       uint32       // 8
	NumTasks         uint32       // 9
	TaskDist         uint32       // 10
	TimeLimit        uint32       // 11
	State            uint32       // 12
	SrunPID          uint32       // 13
	StartTime        int64        // 14
	RunTime          int64        // 15
	Cluster          NullString   // 16
	Container        NullString   // 17
	Partition        NullString   // 18
	SrunHost         NullString   // 19
	ResvPorts        NullString   // 20
	Nodes            NullString   // 21
	Name             NullString   // 22
	Network          NullString   // 23
	NodeInx          HexBitmap    // 24
	SelectJobinfo    SelectPlugin // 25
	TresAllocStr     NullString   // 26
	StartProtocolVer uint16       // 27
	CPUsPerTres      NullString   // 28
	MemPerTres       NullString   // 29
	SubmitLine       NullString   // 30
	TresBind         NullString   // 31
	TresFreq         NullString   // 32
	TresPerStep      NullString   // 33
	TresPerNode      NullString   // 34
	TresPerSocket    NullString   // 35
	TresPerTask      NullString   // 36
}

func walkStepInfo(w fieldWalker, _ codec.Version, s *StepInfo) {
	w.u32(&s.ArrayJobID)
	w.u32(&s.ArrayTaskID)
	walkStepID(w, &s.StepID)
	w.u32(&s.UserID)
	w.u32(&s.NumCPUs)
	w.u32(&s.CPUFreqMin)
	w.u32(&s.CPUFreqMax)
	w.u32(&s.CPUFreqGov)
	w.u32(&s.NumTasks)
	w.u32(&s.TaskDist)
	w.u32(&s.TimeLimit)
	w.u32(&s.State)
	w.u32(&s.SrunPID)

	w.time(&s.StartTime)
	w.time(&s.RunTime)

	w.str(&s.Cluster)
	w.str(&s.Container)
	w.str(&s.Partition)
	w.str(&s.SrunHost)
	w.str(&s.ResvPorts)
	w.str(&s.Nodes)
	w.str(&s.Name)
	w.str(&s.Network)
	w.bitmap(&s.NodeInx)

	walkSelectJobinfo(w, &s.SelectJobinfo)
	w.str(&s.TresAllocStr)
	w.u16(&s.StartProtocolVer)

	w.str(&s.CPUsPerTres)
	w.str(&s.MemPerTres)
	w.str(&s.SubmitLine)
	w.str(&s.TresBind)
	w.str(&s.TresFreq)
	w.str(&s.TresPerStep)
	w.str(&s.TresPerNode)
	w.str(&s.TresPerSocket)
	w.str(&s.TresPerTask)
}

// minStepInfoSize is the packed size of the smallest step record.
var minStepInfoSize = sync.OnceValue(func() int {
	var w pack.Writer
	s := StepInfo{SelectJobinfo: SelectConsTres, NodeInx: NullBitmap}
	walkStepInfo(&encoder{w: &w}, codec.Version2205, &s)
	return w.Len()
})

func walkStepInfoMsg(w fieldWalker, v codec.Version, b *StepInfoMsg) {
	n := w.count(len(b.Steps), minStepInfoSize())
	w.time(&b.LastUpdate)
	if w.decoding() {
		b.Steps = nil
		if w.err() != nil || n == 0 {
			return
		}
		b.Steps = make([]StepInfo, n)
	}
	for i := range b.Steps {
		walkStepInfo(w, v, &b.Steps[i])
		if w.err() != nil {
			return
		}
	}
}
