package jobopt

import (
	"maps"
	"os"
	"time"

	"github.com/goslurm/goslurm/protocol/pack"
)

// Slurm constants the options map to (slurm.h, 22.05).
const (
	NiceOffset uint32 = 0x80000000
	MemPerCPU  uint64 = 0x8000000000000000

	SharedNone uint16 = 0
	SharedOK   uint16 = 1
	SharedUser uint16 = 2
	SharedMCS  uint16 = 3

	OpenModeAppend   uint8 = 1
	OpenModeTruncate uint8 = 2

	CoreSpecThread uint16 = 0x8000
	Infinite16     uint16 = 0xffff
	Infinite       uint32 = 0xffffffff

	// job_desc bitflags set by options.
	FlagKillInvDep    uint64 = 1 << 0
	FlagNoKillInvDep  uint64 = 1 << 1
	FlagGresEnforce   uint64 = 1 << 4
	FlagSpreadJob     uint64 = 1 << 8
	FlagUseMinNodes   uint64 = 1 << 9
	FlagNtasksSet     uint64 = 1 << 14
	FlagCPUsSet       uint64 = 1 << 15
	FlagGresNoBinding uint64 = 1 << 19

	// --signal flags (warn_flags).
	KillJobBatch uint16 = 1 << 0
	KillJobResv  uint16 = 1 << 8
)

// Source says where an option's value came from; Slurm's memory options
// resolve conflicts by it.
type Source int

// Sources, lowest precedence first.
const (
	FromScript Source = iota + 1
	FromEnv
	FromCLI
)

// Opts is the parsed state of one job command (slurm_opt_t plus the
// sbatch-only part), before it becomes a job descriptor. Numeric fields use
// Slurm's "unset" markers (NoVal, -1, 0) exactly as slurm_opt.c resets them,
// because job descriptor building tests them the same way.
type Opts struct {
	Cmd Command
	Log *Log
	// Now is the clock for --begin and --deadline; nil means time.Now.
	Now func() time.Time
	// Getenv reads the submitting environment; nil means os.Getenv.
	Getenv func(string) (string, bool)
	// UID/GID of the submitting user (getuid/getgid), for --uid/--gid
	// checks and defaults.
	RealUID, RealGID uint32
	// Cwd is getcwd(), the default --chdir.
	Cwd string
	// Custom applies the options this package has no setter for (srun's
	// and salloc's own: --label, --multi-prog, --bell, ...), by long name;
	// nil rejects them. Its errors end the command like a setter's.
	Custom func(name, arg string, has bool) error
	// AllowSpecResources is slurm.conf's AllowSpecResourcesUsage.
	AllowSpecResources bool
	// CPUFreqGovernors is slurm.conf's CpuFreqGovernors (nil: Slurm's
	// default OnDemand,Performance,UserSpace).
	CPUFreqGovernors []string

	set map[int]Source // options set, by Val, and how

	Account, AcctgFreq                   string
	Begin, Deadline                      int64
	BurstBuffer, BurstBufferFile         string
	ClusterConstraint, Clusters          string
	Comment, Constraint, Prefer          string
	Container, Context                   string
	Contiguous                           bool
	CoreSpec                             uint16
	CoresPerSocket, SocketsPerNode       int // NoVal = unset
	ThreadsPerCore                       int
	ExtraSet                             bool
	CPUFreqMin, CPUFreqMax, CPUFreqGov   uint32
	CPUsPerGPU                           int
	CPUsPerTask                          int
	CPUsSet                              bool
	DelayBoot                            uint32
	Dependency                           string
	Distribution, PlaneSize              uint32
	Exclude                              string
	Shared                               uint16
	Export                               *string
	GetUserEnvTime, GetUserEnvMode       int
	UID, GID                             uint32
	GPUBind, TresBind, GPUFreq, TresFreq string
	GPUs, GPUsPerNode, GPUsPerSocket     string
	GPUsPerTask, Gres, Hint              string
	JobFlags                             uint64
	Hold                                 bool
	Ifname, Ofname, Efname               string
	JobName                              *string
	Licenses                             string
	MailType                             uint16
	MailUser, MCSLabel                   string
	MemBind                              string
	MemBindType                          uint32
	PnMinMemory, MemPerCPU, MemPerGPU    uint64 // NoVal64 = unset
	PnMinTmpDisk                         uint64
	PnMinCPUs                            int // -1 = unset
	Network                              string
	Nice                                 int // NoVal = unset
	NoKill                               bool
	Nodefile, Nodelist                   string
	MinNodes, MaxNodes                   int
	NodesSet                             bool
	Ntasks                               int
	NtasksSet                            bool
	NtasksPerCore, NtasksPerNode         int // NoVal = unset
	NtasksPerSocket, NtasksPerTres       int
	NtasksPerGPU                         int
	OpenMode                             uint8
	Overcommit                           bool
	Partition                            string
	Power                                uint8
	Priority                             uint32
	Profile                              uint32
	QOS                                  string
	Quiet, Verbose                       int
	Reboot                               bool
	Reservation                          string
	WarnSignal, WarnTime, WarnFlags      uint16
	ReqSwitch, Wait4Switch               int // -1 = unset
	TimeLimit, TimeMin                   uint32
	WCKey                                string
	X11                                  uint16
	Chdir                                string
	Immediate                            int

	// sbatch only.
	ArrayInx, BatchFeatures, ExportFile string
	IgnorePBS, Parsable, TestOnly, Wait bool
	Propagate                           string
	Requeue                             uint32 // NoVal = unset
	WaitAllNodes                        uint16
	Wrap                                *string
	Umask                               int

	// Help / Usage / Version are set when the option was seen; the
	// command prints its text and exits 0.
	Help, Usage, Version bool
}

// NoVal is Slurm's NO_VAL as an int field's "unset".
const NoVal = int(pack.NoVal)

// NewOpts returns options reset to Slurm's defaults for cmd.
func NewOpts(cmd Command, log *Log) *Opts {
	o := &Opts{Cmd: cmd, Log: log, RealUID: uint32(os.Getuid()), RealGID: uint32(os.Getgid())}
	if wd, err := os.Getwd(); err == nil {
		o.Cwd = wd
	}
	o.Reset(true)
	return o
}

func (o *Opts) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Opts) getenv(k string) (string, bool) {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.LookupEnv(k)
}

// Reset puts every option back to its default (slurm_reset_all_options).
// With all false (sbatch's second pass and each het-job component) only
// the options Slurm marks reset_each_pass are reset; the others keep what
// the first pass (the command line) or the previous component left, as
// in Slurm.
func (o *Opts) Reset(all bool) {
	if !all {
		for val, reset := range eachPass {
			reset(o)
			o.unset(val)
		}
		return
	}
	keep := *o
	*o = Opts{Cmd: keep.Cmd, Log: keep.Log, Now: keep.Now, Getenv: keep.Getenv,
		RealUID: keep.RealUID, RealGID: keep.RealGID, Cwd: keep.Cwd,
		AllowSpecResources: keep.AllowSpecResources, CPUFreqGovernors: keep.CPUFreqGovernors,
		Custom: keep.Custom}
	o.set = map[int]Source{}
	for _, reset := range eachPass {
		reset(o)
	}
	o.DelayBoot = pack.NoVal
	o.Shared = pack.NoVal16
	o.GetUserEnvTime, o.GetUserEnvMode = -1, -1
	o.UID, o.GID = o.RealUID, o.RealGID
	o.PnMinMemory = pack.NoVal64
	o.Nice = NoVal
	o.TimeLimit, o.TimeMin = pack.NoVal, pack.NoVal
	o.Requeue = pack.NoVal
	o.WaitAllNodes = pack.NoVal16
	if o.Cmd != Salloc {
		o.Chdir = o.Cwd
	}
}

// NextPass is the options a further het job component starts from:
// these, less the ones reset on each pass (slurm_reset_all_options with
// first_pass false). The job-wide ones (-J, -t, -A, -o, ...) carry over.
func (o *Opts) NextPass() *Opts {
	n := *o
	n.set = maps.Clone(o.set)
	n.Reset(false)
	return &n
}

// eachPass resets the options slurm_opt.c marks reset_each_pass.
var eachPass = map[int]func(o *Opts){
	optBurstBufferSpec: func(o *Opts) { o.BurstBuffer = "" },
	'C':                func(o *Opts) { o.Constraint = "" },
	optContiguous:      func(o *Opts) { o.Contiguous = false },
	'S':                func(o *Opts) { o.CoreSpec = pack.NoVal16 },
	optThreadSpec:      func(o *Opts) { o.CoreSpec = pack.NoVal16 },
	optCorespersocket:  func(o *Opts) { o.CoresPerSocket = NoVal },
	optCpuFreq:         func(o *Opts) { o.CPUFreqMin, o.CPUFreqMax, o.CPUFreqGov = pack.NoVal, pack.NoVal, pack.NoVal },
	optCpusPerGpu:      func(o *Opts) { o.CPUsPerGPU = 0 },
	'c':                func(o *Opts) { o.CPUsPerTask, o.CPUsSet = 0, false },
	'm':                func(o *Opts) { o.Distribution, o.PlaneSize = distUnknown, pack.NoVal },
	optExclusive:       func(o *Opts) { o.Shared = pack.NoVal16 },
	's':                func(o *Opts) { o.Shared = pack.NoVal16 },
	'B': func(o *Opts) {
		o.ExtraSet = false
		o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore = NoVal, NoVal, NoVal
	},
	optGpuBind:         func(o *Opts) { o.GPUBind, o.TresBind = "", "" },
	optGpuFreq:         func(o *Opts) { o.GPUFreq, o.TresFreq = "", "" },
	'G':                func(o *Opts) { o.GPUs = "" },
	optGpusPerNode:     func(o *Opts) { o.GPUsPerNode = "" },
	optGpusPerSocket:   func(o *Opts) { o.GPUsPerSocket = "" },
	optGpusPerTask:     func(o *Opts) { o.GPUsPerTask = "" },
	optGres:            func(o *Opts) { o.Gres = "" },
	optGresFlags:       func(o *Opts) { o.JobFlags &^= FlagGresNoBinding | FlagGresEnforce },
	optHint:            func(o *Opts) { o.Hint = "" },
	'L':                func(o *Opts) { o.Licenses = "" },
	optMailType:        func(o *Opts) { o.MailType = 0 },
	optMailUser:        func(o *Opts) { o.MailUser = "" },
	optMemBind:         func(o *Opts) { o.MemBind, o.MemBindType = "", 0 },
	optMemPerCpu:       func(o *Opts) { o.MemPerCPU = pack.NoVal64 },
	optMemPerGpu:       func(o *Opts) { o.MemPerGPU = pack.NoVal64 },
	optMincpus:         func(o *Opts) { o.PnMinCPUs = -1 },
	optNetwork:         func(o *Opts) { o.Network = "" },
	'F':                func(o *Opts) { o.Nodefile = "" },
	'w':                func(o *Opts) { o.Nodelist = "" },
	'N':                func(o *Opts) { o.MinNodes, o.MaxNodes, o.NodesSet = 1, 0, false },
	'n':                func(o *Opts) { o.Ntasks, o.NtasksSet = 1, false },
	optNtaskspercore:   func(o *Opts) { o.NtasksPerCore = NoVal },
	optNtaskspernode:   func(o *Opts) { o.NtasksPerNode = NoVal },
	optNtaskspersocket: func(o *Opts) { o.NtasksPerSocket = NoVal },
	optNtaskspertres:   func(o *Opts) { o.NtasksPerTres = NoVal },
	optNtaskspergpu:    func(o *Opts) { o.NtasksPerGPU = NoVal },
	'O':                func(o *Opts) { o.Overcommit = false },
	'p':                func(o *Opts) { o.Partition = "" },
	optPower:           func(o *Opts) { o.Power = 0 },
	optSocketspernode:  func(o *Opts) { o.SocketsPerNode = NoVal },
	optSpreadJob:       func(o *Opts) { o.JobFlags &^= FlagSpreadJob },
	optSwitchReq:       func(o *Opts) { o.ReqSwitch = -1 },
	optSwitchWait:      func(o *Opts) { o.Wait4Switch = -1 },
	optSwitches:        func(o *Opts) { o.ReqSwitch, o.Wait4Switch = -1, -1 },
	optThreadspercore:  func(o *Opts) { o.ThreadsPerCore = NoVal },
	optTmp:             func(o *Opts) { o.PnMinTmpDisk = pack.NoVal64 },
	optUmask:           func(o *Opts) { o.Umask = -1 },
	optUseMinNodes:     func(o *Opts) { o.JobFlags &^= FlagUseMinNodes },
}

// IsSet reports whether the option with this Val was given (by any source).
func (o *Opts) IsSet(val int) bool {
	_, ok := o.set[val]
	return ok
}

// SetBy returns where the option with this Val came from (0 if unset).
func (o *Opts) SetBy(val int) Source { return o.set[val] }

func (o *Opts) unset(val int) { delete(o.set, val) }

// MarkCLI records the option with this Val as given on the command line,
// as a command's own check does when it rewrites a value
// (slurm_process_option_or_exit with set_by_env false).
func (o *Opts) MarkCLI(val int) {
	if o.set == nil {
		o.set = map[int]Source{}
	}
	o.set[val] = FromCLI
}

// ValOf returns the value of the long option name in o's command table
// (for IsSet and SetBy from outside the package).
func (o *Opts) ValOf(name string) (int, bool) {
	for _, s := range table {
		if s.Name == name && s.Cmds&o.Cmd != 0 {
			return s.Val, true
		}
	}
	return 0, false
}
