package msg

// Step creation (reference §5.11, §5.12, §6.8 step 4): srun asks slurmctld
// for a step of its allocation with REQUEST_JOB_STEP_CREATE and gets back
// RESPONSE_JOB_STEP_CREATE, which carries the step layout, the signed job
// credential srun forwards to every slurmd in REQUEST_LAUNCH_TASKS, and the
// select and switch job data. Conventions are small.go's; the credential is
// kept byte for byte (daemon_common.go's walkCred), so the response body
// checks its own end like the other credential bodies (daemonCodec).

import (
	"fmt"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// StepCreateRequest is job_step_create_request_msg_t, the body of
// REQUEST_JOB_STEP_CREATE at protocol 22.05 (39 fields, numbered in wire
// order). srun sends StepID {job, NO_VAL, NO_VAL} (the controller picks the
// step id), Host its own hostname and Port its step-message listener;
// slurmctld resolves Host to send the step's SRUN_* messages.
type StepCreateRequest struct {
	StepID         StepID     // 1
	UserID         uint32     // 2
	MinNodes       uint32     // 3
	MaxNodes       uint32     // 4
	Container      NullString // 5
	CPUCount       uint32     // 6
	CPUFreqMin     uint32     // 7
	CPUFreqMax     uint32     // 8
	CPUFreqGov     uint32     // 9
	NumTasks       uint32     // 10
	PnMinMemory    uint64     // 11 MB; the MEM_PER_CPU bit marks a per-CPU value
	TimeLimit      uint32     // 12 minutes
	ThreadsPerCore uint16     // 13
	Relative       uint16     // 14
	TaskDist       uint32     // 15
	PlaneSize      uint16     // 16
	Port           uint16     // 17 srun's step listener
	Immediate      uint16     // 18
	ResvPortCnt    uint16     // 19
	SrunPID        uint32     // 20
	Flags          uint32     // 21 SSF_* bits
	Host           NullString // 22 srun's hostname
	Name           NullString // 23
	Network        NullString // 24
	NodeList       NullString // 25
	ExcNodes       NullString // 26
	Features       NullString // 27
	StepHetCompCnt uint32     // 28
	StepHetGrps    NullString // 29
	CPUsPerTres    NullString // 30
	MemPerTres     NullString // 31
	NtasksPerTres  uint16     // 32
	SubmitLine     NullString // 33
	TresBind       NullString // 34
	TresFreq       NullString // 35
	TresPerStep    NullString // 36
	TresPerNode    NullString // 37
	TresPerSocket  NullString // 38
	TresPerTask    NullString // 39
}

func walkStepCreateRequest(w fieldWalker, _ codec.Version, b *StepCreateRequest) {
	walkStepID(w, &b.StepID)
	w.u32(&b.UserID)
	w.u32(&b.MinNodes)
	w.u32(&b.MaxNodes)
	w.str(&b.Container)
	w.u32(&b.CPUCount)
	w.u32(&b.CPUFreqMin)
	w.u32(&b.CPUFreqMax)
	w.u32(&b.CPUFreqGov)
	w.u32(&b.NumTasks)
	w.u64(&b.PnMinMemory)
	w.u32(&b.TimeLimit)
	w.u16(&b.ThreadsPerCore)
	w.u16(&b.Relative)
	w.u32(&b.TaskDist)
	w.u16(&b.PlaneSize)
	w.u16(&b.Port)
	w.u16(&b.Immediate)
	w.u16(&b.ResvPortCnt)
	w.u32(&b.SrunPID)
	w.u32(&b.Flags)
	w.str(&b.Host)
	w.str(&b.Name)
	w.str(&b.Network)
	w.str(&b.NodeList)
	w.str(&b.ExcNodes)
	w.str(&b.Features)
	w.u32(&b.StepHetCompCnt)
	w.str(&b.StepHetGrps)
	w.str(&b.CPUsPerTres)
	w.str(&b.MemPerTres)
	w.u16(&b.NtasksPerTres)
	w.str(&b.SubmitLine)
	w.str(&b.TresBind)
	w.str(&b.TresFreq)
	w.str(&b.TresPerStep)
	w.str(&b.TresPerNode)
	w.str(&b.TresPerSocket)
	w.str(&b.TresPerTask)
}

// StepLayout is slurm_step_layout_t as pack_slurm_step_layout packs it: where
// the step's tasks run. node_cnt travels first and is len(TIDs); TIDs[i] are
// the global task ids on the i-th node of NodeList (nil for none, the form a
// count of 0 decodes to). TaskCnt is carried as sent; Slurm sets it to the
// total of the TIDs but does not check that on receipt.
type StepLayout struct {
	FrontEnd         NullString
	NodeList         NullString
	StartProtocolVer uint16
	TaskCnt          uint32
	TaskDist         uint32
	TIDs             [][]uint32
}

// NodeCnt is the node_cnt the layout packs.
func (l *StepLayout) NodeCnt() uint32 { return uint32(len(l.TIDs)) }

// walkStepLayout walks the u16 presence flag (nil is 0) and the layout.
// Slurm reads any non-zero flag as present; the codec insists on 1 so that a
// decoded layout re-encodes to the same bytes.
func walkStepLayout(w fieldWalker, p **StepLayout) {
	var flag uint16
	if !w.decoding() && *p != nil {
		flag = 1
	}
	flag = valU16(w, flag)
	if w.decoding() {
		*p = nil
		if w.err() != nil || flag == 0 {
			return
		}
		if flag != 1 {
			w.fail(fmt.Errorf("msg: step layout flag %d, want 0 or 1", flag))
			return
		}
		*p = new(StepLayout)
	} else if flag == 0 {
		return
	}
	l := *p
	w.str(&l.FrontEnd)
	w.str(&l.NodeList)
	var n uint32
	if !w.decoding() {
		if uint64(len(l.TIDs)) >= uint64(^uint32(0)) {
			jobFail(w, fmt.Errorf("msg: step layout of %d nodes", len(l.TIDs)))
			return
		}
		n = uint32(len(l.TIDs))
	}
	n = valU32(w, n)
	w.u16(&l.StartProtocolVer)
	w.u32(&l.TaskCnt)
	w.u32(&l.TaskDist)
	if w.decoding() {
		// Each node's array is at least its u32 count.
		if !bound(w, uint64(n), 4, "step layout nodes") {
			*p = nil
			return
		}
		l.TIDs = nil
		if n > 0 {
			l.TIDs = make([][]uint32, n)
		}
	}
	for i := range l.TIDs {
		walkU32s(w, &l.TIDs[i])
		if w.err() != nil {
			break
		}
	}
	if w.decoding() && w.err() != nil {
		*p = nil
	}
}

// StepCreateResponse is job_step_create_response_msg_t, the body of
// RESPONSE_JOB_STEP_CREATE. Cred is required and is packed at the message's
// protocol version without a length prefix (a decoded one keeps its exact
// bytes; build a new one with jobcred.Create at jobcred.Version2205).
// slurmctld sets UseProtocolVer to the step's start protocol version and
// Layout.FrontEnd only on front-end systems.
type StepCreateResponse struct {
	DefCPUBindType uint32              // 1 the job's cpu_bind_type; 0 when the job has none (NO_VAL16)
	ResvPorts      NullString          // 2 e.g. "12000-12001"; NULL without reserved ports
	JobStepID      uint32              // 3 the step id the controller assigned
	Layout         *StepLayout         // 4 nil: no layout (u16 0)
	Cred           *jobcred.Credential // 5
	SelectJobinfo  SelectPlugin        // 6
	SwitchJobinfo  uint32              // 7 switch plugin id; SwitchNone
	UseProtocolVer uint16              // 8
}

func walkStepCreateResponse(w fieldWalker, v codec.Version, b *StepCreateResponse) {
	w.u32(&b.DefCPUBindType)
	w.str(&b.ResvPorts)
	w.u32(&b.JobStepID)
	walkStepLayout(w, &b.Layout)
	if !w.decoding() && w.err() == nil {
		switch {
		case b.Cred == nil:
			daemonFail(w, "nil credential")
		case b.Cred.Version != uint16(v):
			daemonFail(w, "credential packed at %#04x in a %v message", b.Cred.Version, v)
		}
	}
	walkCred(w, &b.Cred, uint16(v))
	walkSelectJobinfo(w, &b.SelectJobinfo)
	walkSwitchJobinfo(w, &b.SwitchJobinfo)
	w.u16(&b.UseProtocolVer)
}

func init() { registrars = append(registrars, registerStepCreate) }

func registerStepCreate(g *codec.Registry) {
	g.Register(msgtype.REQUEST_JOB_STEP_CREATE, bodyCodec("REQUEST_JOB_STEP_CREATE", walkStepCreateRequest))
	g.Register(msgtype.RESPONSE_JOB_STEP_CREATE, daemonCodec("RESPONSE_JOB_STEP_CREATE", walkStepCreateResponse))
}
