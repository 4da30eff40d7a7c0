package jobopt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
)

// CreateJobDesc is slurm_opt_create_job_desc(opt, true), shared by sbatch,
// salloc and srun: the descriptor fields that come straight from the
// options (environment, script, argv, std* and the command-specific fields
// are the caller's).
func (o *Opts) CreateJobDesc(submitLine string) (*msg.JobDesc, error) {
	j := msg.NewJobDesc()
	j.Account = o.sopt('A', o.Account)
	j.AcctgFreq = o.sopt(optAcctgFreq, o.AcctgFreq)
	j.BeginTime = o.Begin
	j.Bitflags |= o.JobFlags
	j.BurstBuffer = o.sopt(optBurstBufferSpec, o.BurstBuffer)
	j.Clusters = o.soptAny(o.Clusters, 'M', optCluster)
	j.ClusterFeatures = o.sopt(optClusterConstraint, o.ClusterConstraint)
	j.Comment = o.sopt(optComment, o.Comment)
	j.ReqContext = o.sopt(optContext, o.Context)
	j.Contiguous = b2u16(o.Contiguous)
	if o.CoreSpec != pack.NoVal16 {
		j.CoreSpec = o.CoreSpec
	}
	j.CPUFreqMin, j.CPUFreqMax, j.CPUFreqGov = o.CPUFreqMin, o.CPUFreqMax, o.CPUFreqGov
	if o.CPUsPerGPU != 0 {
		j.CPUsPerTres = msg.Str(fmt.Sprintf("gres:gpu:%d", o.CPUsPerGPU))
	}
	j.Deadline = o.Deadline
	if o.DelayBoot != pack.NoVal {
		j.DelayBoot = o.DelayBoot
	}
	j.Dependency = o.sopt('d', o.Dependency)
	j.ExcNodes = o.sopt('x', o.Exclude)
	j.Features = o.sopt('C', o.Constraint)
	j.Prefer = o.sopt(optPrefer, o.Prefer)
	j.GroupID = o.GID
	if o.Immediate == 1 {
		j.Immediate = 1
	}
	if o.NoKill {
		j.KillOnNodeFail = 0
	}
	j.Licenses = o.sopt('L', o.Licenses)
	j.MailType = o.MailType
	j.MailUser = o.sopt(optMailUser, o.MailUser)
	j.MCSLabel = o.sopt(optMcsLabel, o.MCSLabel)
	j.MemBind = nstr(o.MemBind)
	j.MemBindType = uint16(o.MemBindType)
	if o.MemPerGPU != pack.NoVal64 {
		j.MemPerTres = msg.Str(fmt.Sprintf("gres:gpu:%d", o.MemPerGPU))
	}
	if o.JobName != nil {
		j.Name = msg.Str(*o.JobName)
	}
	j.Network = o.sopt(optNetwork, o.Network)
	if o.Nice != NoVal {
		j.Nice = uint32(int64(NiceOffset) + int64(o.Nice))
	}
	if o.NtasksSet {
		j.Bitflags |= FlagNtasksSet
		j.NumTasks = uint32(o.Ntasks)
	}
	if o.OpenMode != 0 {
		j.OpenMode = o.OpenMode
	}
	switch {
	case o.Overcommit:
		j.MinCPUs = uint32(max(o.MinNodes, 1))
		j.Overcommit = 1
	case o.CPUsSet:
		j.MinCPUs = uint32(o.Ntasks * o.CPUsPerTask)
	case o.NodesSet && o.MinNodes == 0:
		j.MinCPUs = 0
	default:
		j.MinCPUs = uint32(o.Ntasks)
	}
	j.Partition = o.sopt('p', o.Partition)
	if o.PlaneSize != pack.NoVal {
		j.PlaneSize = uint16(o.PlaneSize)
	}
	j.PowerFlags = o.Power
	switch {
	case o.IsSet('H'):
		if o.Hold {
			j.Priority = 0
		} else {
			j.Priority = Infinite
		}
	case o.Priority != 0:
		j.Priority = o.Priority
	}
	j.Profile = o.Profile
	j.QOS = o.sopt('q', o.QOS)
	if o.Reboot {
		j.Reboot = 1
	}
	if o.Nodelist != "" {
		hl, err := hostlist.Parse(o.Nodelist)
		if err == nil {
			hl.Uniq()
			j.ReqNodes = msg.Str(hl.Ranged())
		}
	}
	if o.Distribution&distStateBase == distArbitrary && !j.ReqNodes.Valid {
		o.Log.Errorf("With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option")
		return nil, exitErr(1)
	}
	j.Reservation = o.sopt(optReservation, o.Reservation)
	if o.Shared != pack.NoVal16 {
		j.Shared = o.Shared
	}
	j.SubmitLine = msg.Str(submitLine)
	j.TaskDist = o.Distribution
	if o.TimeLimit != pack.NoVal {
		j.TimeLimit = o.TimeLimit
	}
	if o.TimeMin != pack.NoVal {
		j.TimeMin = o.TimeMin
	}
	j.TresBind = nstr(o.TresBind)
	j.TresFreq = nstr(o.TresFreq)
	j.TresPerJob = tres("gres:gpu", o.GPUs)
	j.TresPerNode = tres("gres:gpu", o.GPUsPerNode)
	if o.Gres != "" && !strings.EqualFold(o.Gres, "none") {
		if j.TresPerNode.Valid {
			j.TresPerNode.Value += "," + o.Gres
		} else {
			j.TresPerNode = msg.Str(o.Gres)
		}
	}
	j.TresPerSocket = tres("gres:gpu", o.GPUsPerSocket)
	j.TresPerTask = tres("gres:gpu", o.GPUsPerTask)
	j.UserID = o.UID
	j.WarnFlags, j.WarnSignal, j.WarnTime = o.WarnFlags, o.WarnSignal, o.WarnTime
	j.WorkDir = nstr(o.Chdir)
	if o.CPUsSet {
		j.Bitflags |= FlagCPUsSet
		j.CPUsPerTask = uint16(o.CPUsPerTask)
	}
	if o.NodesSet {
		j.MinNodes = uint32(o.MinNodes)
		if o.MaxNodes != 0 {
			j.MaxNodes = uint32(o.MaxNodes)
		}
	} else if o.NtasksSet && o.Ntasks == 0 {
		j.MinNodes = 0
	}
	setU16 := func(dst *uint16, v int) {
		if v != NoVal {
			*dst = uint16(v)
		}
	}
	setU16(&j.SocketsPerNode, o.SocketsPerNode)
	setU16(&j.CoresPerSocket, o.CoresPerSocket)
	setU16(&j.ThreadsPerCore, o.ThreadsPerCore)
	setU16(&j.NtasksPerNode, o.NtasksPerNode)
	setU16(&j.NtasksPerSocket, o.NtasksPerSocket)
	setU16(&j.NtasksPerCore, o.NtasksPerCore)
	if o.NtasksPerTres != NoVal {
		j.NtasksPerTres = uint16(o.NtasksPerTres)
	} else if o.NtasksPerGPU != NoVal {
		j.NtasksPerTres = uint16(o.NtasksPerGPU)
	}
	if o.PnMinCPUs > -1 {
		j.PnMinCPUs = uint16(o.PnMinCPUs)
	}
	if o.PnMinMemory != pack.NoVal64 {
		j.PnMinMemory = o.PnMinMemory
	} else if o.MemPerCPU != pack.NoVal64 {
		j.PnMinMemory = o.MemPerCPU | MemPerCPU
	}
	if o.PnMinTmpDisk != pack.NoVal64 {
		j.PnMinTmpDisk = uint32(o.PnMinTmpDisk)
	}
	if o.ReqSwitch >= 0 {
		j.ReqSwitch = uint32(o.ReqSwitch)
	}
	if o.Wait4Switch >= 0 {
		j.Wait4Switch = uint32(o.Wait4Switch)
	}
	j.WCKey = o.sopt(optWckey, o.WCKey)
	j.X11 = o.X11
	return j, nil
}

// SetGPUEnv is set_env_from_opts: the GPU request variables a job sees,
// with the _HET_GROUP_<het> suffix for a het-job component (het >= 0).
func (o *Opts) SetGPUEnv(out *Env, het int) {
	if o.CPUsPerGPU != 0 {
		out.SetHet("SLURM_CPUS_PER_GPU", het, strconv.Itoa(o.CPUsPerGPU))
	}
	for _, v := range []struct{ name, val string }{
		{"SLURM_GPUS", o.GPUs}, {"SLURM_GPU_BIND", o.GPUBind}, {"SLURM_GPU_FREQ", o.GPUFreq},
		{"SLURM_GPUS_PER_NODE", o.GPUsPerNode}, {"SLURM_GPUS_PER_SOCKET", o.GPUsPerSocket},
		{"SLURM_GPUS_PER_TASK", o.GPUsPerTask},
	} {
		if v.val != "" {
			out.SetHet(v.name, het, v.val)
		}
	}
	if o.MemPerGPU != pack.NoVal64 {
		out.SetHet("SLURM_MEM_PER_GPU", het, strconv.FormatUint(o.MemPerGPU, 10))
	}
}

// Write is set_envs: the sbatch_env_t variables, with the het-job
// component suffix when het >= 0.
func (be *BatchEnv) Write(out *Env, het int) {
	setInt := func(name string, v int) {
		if v != NoVal {
			out.SetHet(name, het, strconv.Itoa(v))
		}
	}
	setStr := func(name, v string) {
		if v != "" {
			out.SetHet(name, het, v)
		}
	}
	setInt("SLURM_CPUS_PER_TASK", be.cpusPerTask)
	setStr("SLURM_DISTRIBUTION", be.dist)
	setStr("SLURM_MEM_BIND", be.memBind)
	setStr("SLURM_MEM_BIND_SORT", be.memBindSort)
	setStr("SLURM_MEM_BIND_VERBOSE", be.memBindVerbose)
	if be.ntasks != NoVal {
		setInt("SLURM_NPROCS", be.ntasks)
		setInt("SLURM_NTASKS", be.ntasks)
	}
	setInt("SLURM_NTASKS_PER_CORE", be.ntasksPerCore)
	setInt("SLURM_NTASKS_PER_GPU", be.ntasksPerGPU)
	setInt("SLURM_NTASKS_PER_NODE", be.ntasksPerNode)
	setInt("SLURM_NTASKS_PER_SOCKET", be.ntasksPerSocket)
	setInt("SLURM_NTASKS_PER_TRES", be.ntasksPerTres)
	setInt("SLURM_DIST_PLANESIZE", be.planeSize)
	setInt("SLURM_THREADS_PER_CORE", be.threadsPerCore)
}

// sopt is a string option as Slurm's xstrdup leaves it: NULL when never
// given, "" when given empty.
func (o *Opts) sopt(val int, s string) msg.NullString {
	if s != "" || o.IsSet(val) {
		return msg.Str(s)
	}
	return msg.NullString{}
}

func (o *Opts) soptAny(s string, vals ...int) msg.NullString {
	for _, v := range vals {
		if o.IsSet(v) {
			return msg.Str(s)
		}
	}
	return nstr(s)
}

func nstr(s string) msg.NullString {
	if s == "" {
		return msg.NullString{}
	}
	return msg.Str(s)
}

func nstrs(list []string) []msg.NullString {
	if len(list) == 0 {
		return nil
	}
	out := make([]msg.NullString, len(list))
	for i, s := range list {
		out[i] = msg.Str(s)
	}
	return out
}

func b2u16(b bool) uint16 {
	if b {
		return 1
	}
	return 0
}

// tres is xfmt_tres: "gres:gpu:2" for "2", "gres:gpu:a100:2" for
// "a100:2", and each comma-separated entry likewise.
func tres(prefix, val string) msg.NullString {
	if val == "" {
		return msg.NullString{}
	}
	var parts []string
	for _, tok := range strings.Split(val, ",") {
		parts = append(parts, prefix+":"+tok)
	}
	return msg.Str(strings.Join(parts, ","))
}
