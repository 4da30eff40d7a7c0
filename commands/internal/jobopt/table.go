package jobopt

import "github.com/goslurm/goslurm/commands/internal/getopt"

// Command is one of the job commands sharing the option table.
type Command int

// The commands (bits, so an option can belong to several).
const (
	Sbatch Command = 1 << iota
	Srun
	Salloc
)

const (
	cmdSbatch = Sbatch
	cmdSrun   = Srun
	cmdSalloc = Salloc
	cmdAll    = Sbatch | Srun | Salloc
)

// Name is the command's name as Slurm prints it.
func (c Command) Name() string {
	switch c {
	case Sbatch:
		return "sbatch"
	case Srun:
		return "srun"
	case Salloc:
		return "salloc"
	}
	return "?"
}

// Values of options that have no short letter. Slurm numbers them from
// 0x100 up; ours are private, only their distinctness matters (aliases
// share one).
const (
	optFirstLong = 0x100 + iota
	optAccelBind
	optAcctgFreq
	optAllocNodelist
	optArgv
	optBatch
	optBcast
	optBcastExclude
	optBell
	optBurstBufferFile
	optBurstBufferSpec
	optCluster
	optClusterConstraint
	optComment
	optCompress
	optContainer
	optContext
	optContiguous
	optCorespersocket
	optCpusPerGpu
	optCpuBind
	optCpuFreq
	optDeadline
	optDebuggerTest
	optDelayBoot
	optEnvironment
	optEpilog
	optExact
	optExclusive
	optExport
	optExportFile
	optGetUserEnv
	optGid
	optGpusPerNode
	optGpusPerSocket
	optGpusPerTask
	optGpuBind
	optGpuFreq
	optGres
	optGresFlags
	optHetGroup
	optHint
	optIgnorePbs
	optInteractive
	optJobid
	optKillInvDep
	optMailType
	optMailUser
	optMcsLabel
	optMem
	optMemBind
	optMemPerCpu
	optMemPerGpu
	optMincpus
	optMpi
	optMsgTimeout
	optMulti
	optNetwork
	optNice
	optNoBell
	optNoRequeue
	optNoShell
	optNtaskspercore
	optNtaskspergpu
	optNtaskspernode
	optNtaskspersocket
	optNtaskspertres
	optOpenMode
	optOverlap
	optParsable
	optPower
	optPrefer
	optPriority
	optProfile
	optProlog
	optPropagate
	optPty
	optQuitOnIntr
	optReboot
	optRequeue
	optReservation
	optResvPorts
	optSendLibs
	optSignal
	optSlurmdDebug
	optSocketspernode
	optSpreadJob
	optSwitches
	optSwitchReq
	optSwitchWait
	optTaskEpilog
	optTaskProlog
	optTestOnly
	optThreadspercore
	optThreadSpec
	optTimeMin
	optTmp
	optUid
	optUmask
	optUsage
	optUseMinNodes
	optWaitAllNodes
	optWckey
	optWhole
	optWrap
	optX11
)

// Spec is one row of the option table: the getopt_long entry plus which
// commands accept it and whether sbatch handles it in its first pass.
type Spec struct {
	Name   string
	HasArg getopt.HasArg
	Val    int
	Cmds   Command
	Early  bool
}

// table is Slurm 22.05's common option table (src/common/slurm_opt.c) in
// its order, which is the order getopt_long lists ambiguous candidates in.
// A command's table is the rows it accepts.
var table = []Spec{
	{Name: "accel-bind", HasArg: getopt.RequiredArgument, Val: optAccelBind, Cmds: cmdSrun},
	{Name: "account", HasArg: getopt.RequiredArgument, Val: 'A', Cmds: cmdAll},
	{Name: "acctg-freq", HasArg: getopt.RequiredArgument, Val: optAcctgFreq, Cmds: cmdAll},
	{Name: "array", HasArg: getopt.RequiredArgument, Val: 'a', Cmds: cmdSbatch},
	{Name: "batch", HasArg: getopt.RequiredArgument, Val: optBatch, Cmds: cmdSbatch},
	{Name: "bcast", HasArg: getopt.OptionalArgument, Val: optBcast, Cmds: cmdSrun},
	{Name: "bcast-exclude", HasArg: getopt.RequiredArgument, Val: optBcastExclude, Cmds: cmdSrun},
	{Name: "begin", HasArg: getopt.RequiredArgument, Val: 'b', Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "bell", HasArg: getopt.NoArgument, Val: optBell, Cmds: cmdSalloc},
	{Name: "bb", HasArg: getopt.RequiredArgument, Val: optBurstBufferSpec, Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "bbf", HasArg: getopt.RequiredArgument, Val: optBurstBufferFile, Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "cluster-constraint", HasArg: getopt.RequiredArgument, Val: optClusterConstraint, Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "chdir", HasArg: getopt.RequiredArgument, Val: 'D', Cmds: cmdAll},
	{Name: "cluster", HasArg: getopt.RequiredArgument, Val: optCluster, Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "clusters", HasArg: getopt.RequiredArgument, Val: 'M', Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "comment", HasArg: getopt.RequiredArgument, Val: optComment, Cmds: cmdAll},
	{Name: "compress", HasArg: getopt.OptionalArgument, Val: optCompress, Cmds: cmdSrun},
	{Name: "container", HasArg: getopt.RequiredArgument, Val: optContainer, Cmds: cmdAll},
	{Name: "context", HasArg: getopt.RequiredArgument, Val: optContext, Cmds: cmdAll},
	{Name: "contiguous", HasArg: getopt.NoArgument, Val: optContiguous, Cmds: cmdAll},
	{Name: "constraint", HasArg: getopt.RequiredArgument, Val: 'C', Cmds: cmdAll},
	{Name: "core-spec", HasArg: getopt.RequiredArgument, Val: 'S', Cmds: cmdAll},
	{Name: "cores-per-socket", HasArg: getopt.RequiredArgument, Val: optCorespersocket, Cmds: cmdAll},
	{Name: "cpu-bind", HasArg: getopt.RequiredArgument, Val: optCpuBind, Cmds: cmdSrun},
	{Name: "cpu_bind", HasArg: getopt.RequiredArgument, Val: optCpuBind, Cmds: cmdSrun},
	{Name: "cpu-freq", HasArg: getopt.RequiredArgument, Val: optCpuFreq, Cmds: cmdAll},
	{Name: "cpus-per-gpu", HasArg: getopt.RequiredArgument, Val: optCpusPerGpu, Cmds: cmdAll},
	{Name: "cpus-per-task", HasArg: getopt.RequiredArgument, Val: 'c', Cmds: cmdAll},
	{Name: "deadline", HasArg: getopt.RequiredArgument, Val: optDeadline, Cmds: cmdAll},
	{Name: "debugger-test", HasArg: getopt.NoArgument, Val: optDebuggerTest, Cmds: cmdSrun},
	{Name: "delay-boot", HasArg: getopt.RequiredArgument, Val: optDelayBoot, Cmds: cmdAll},
	{Name: "dependency", HasArg: getopt.RequiredArgument, Val: 'd', Cmds: cmdAll},
	{Name: "disable-status", HasArg: getopt.NoArgument, Val: 'X', Cmds: cmdSrun},
	{Name: "distribution", HasArg: getopt.RequiredArgument, Val: 'm', Cmds: cmdAll},
	{Name: "epilog", HasArg: getopt.RequiredArgument, Val: optEpilog, Cmds: cmdSrun},
	{Name: "error", HasArg: getopt.RequiredArgument, Val: 'e', Cmds: cmdSbatch | cmdSrun},
	{Name: "exact", HasArg: getopt.NoArgument, Val: optExact, Cmds: cmdSrun},
	{Name: "exclude", HasArg: getopt.RequiredArgument, Val: 'x', Cmds: cmdAll},
	{Name: "exclusive", HasArg: getopt.OptionalArgument, Val: optExclusive, Cmds: cmdAll},
	{Name: "export", HasArg: getopt.RequiredArgument, Val: optExport, Cmds: cmdSbatch | cmdSrun},
	{Name: "export-file", HasArg: getopt.RequiredArgument, Val: optExportFile, Cmds: cmdSbatch},
	{Name: "extra-node-info", HasArg: getopt.RequiredArgument, Val: 'B', Cmds: cmdAll},
	{Name: "get-user-env", HasArg: getopt.OptionalArgument, Val: optGetUserEnv, Cmds: cmdSbatch | cmdSalloc},
	{Name: "gid", HasArg: getopt.RequiredArgument, Val: optGid, Cmds: cmdAll},
	{Name: "gpu-bind", HasArg: getopt.RequiredArgument, Val: optGpuBind, Cmds: cmdAll},
	{Name: "gpu-freq", HasArg: getopt.RequiredArgument, Val: optGpuFreq, Cmds: cmdAll},
	{Name: "gpus", HasArg: getopt.RequiredArgument, Val: 'G', Cmds: cmdAll},
	{Name: "gpus-per-node", HasArg: getopt.RequiredArgument, Val: optGpusPerNode, Cmds: cmdAll},
	{Name: "gpus-per-socket", HasArg: getopt.RequiredArgument, Val: optGpusPerSocket, Cmds: cmdAll},
	{Name: "gpus-per-task", HasArg: getopt.RequiredArgument, Val: optGpusPerTask, Cmds: cmdAll},
	{Name: "gres", HasArg: getopt.RequiredArgument, Val: optGres, Cmds: cmdAll},
	{Name: "gres-flags", HasArg: getopt.RequiredArgument, Val: optGresFlags, Cmds: cmdAll},
	{Name: "help", HasArg: getopt.NoArgument, Val: 'h', Cmds: cmdAll, Early: true},
	{Name: "het-group", HasArg: getopt.RequiredArgument, Val: optHetGroup, Cmds: cmdSrun},
	{Name: "hint", HasArg: getopt.RequiredArgument, Val: optHint, Cmds: cmdAll},
	{Name: "hold", HasArg: getopt.NoArgument, Val: 'H', Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "ignore-pbs", HasArg: getopt.NoArgument, Val: optIgnorePbs, Cmds: cmdSbatch},
	{Name: "immediate", HasArg: getopt.OptionalArgument, Val: 'I', Cmds: cmdSrun | cmdSalloc},
	{Name: "input", HasArg: getopt.RequiredArgument, Val: 'i', Cmds: cmdSbatch | cmdSrun},
	{Name: "interactive", HasArg: getopt.NoArgument, Val: optInteractive, Cmds: cmdSrun},
	{Name: "jobid", HasArg: getopt.RequiredArgument, Val: optJobid, Cmds: cmdSrun},
	{Name: "job-name", HasArg: getopt.RequiredArgument, Val: 'J', Cmds: cmdAll},
	{Name: "kill-command", HasArg: getopt.OptionalArgument, Val: 'K', Cmds: cmdSalloc},
	{Name: "kill-on-bad-exit", HasArg: getopt.OptionalArgument, Val: 'K', Cmds: cmdSrun},
	{Name: "kill-on-invalid-dep", HasArg: getopt.RequiredArgument, Val: optKillInvDep, Cmds: cmdSbatch},
	{Name: "label", HasArg: getopt.NoArgument, Val: 'l', Cmds: cmdSrun},
	{Name: "licenses", HasArg: getopt.RequiredArgument, Val: 'L', Cmds: cmdAll},
	{Name: "mail-type", HasArg: getopt.RequiredArgument, Val: optMailType, Cmds: cmdAll},
	{Name: "mail-user", HasArg: getopt.RequiredArgument, Val: optMailUser, Cmds: cmdAll},
	{Name: "threads", HasArg: getopt.RequiredArgument, Val: 'T', Cmds: cmdSrun},
	{Name: "mcs-label", HasArg: getopt.RequiredArgument, Val: optMcsLabel, Cmds: cmdAll},
	{Name: "mem", HasArg: getopt.RequiredArgument, Val: optMem, Cmds: cmdAll},
	{Name: "mem-bind", HasArg: getopt.RequiredArgument, Val: optMemBind, Cmds: cmdAll},
	{Name: "mem-per-cpu", HasArg: getopt.RequiredArgument, Val: optMemPerCpu, Cmds: cmdAll},
	{Name: "mem-per-gpu", HasArg: getopt.RequiredArgument, Val: optMemPerGpu, Cmds: cmdAll},
	{Name: "mincpus", HasArg: getopt.RequiredArgument, Val: optMincpus, Cmds: cmdAll},
	{Name: "mpi", HasArg: getopt.RequiredArgument, Val: optMpi, Cmds: cmdSrun},
	{Name: "msg-timeout", HasArg: getopt.RequiredArgument, Val: optMsgTimeout, Cmds: cmdSrun},
	{Name: "multi-prog", HasArg: getopt.NoArgument, Val: optMulti, Cmds: cmdSrun},
	{Name: "network", HasArg: getopt.RequiredArgument, Val: optNetwork, Cmds: cmdAll},
	{Name: "nice", HasArg: getopt.OptionalArgument, Val: optNice, Cmds: cmdAll},
	{Name: "no-allocate", HasArg: getopt.NoArgument, Val: 'Z', Cmds: cmdSrun},
	{Name: "no-bell", HasArg: getopt.NoArgument, Val: optNoBell, Cmds: cmdSalloc},
	{Name: "no-kill", HasArg: getopt.OptionalArgument, Val: 'k', Cmds: cmdAll},
	{Name: "no-shell", HasArg: getopt.NoArgument, Val: optNoShell, Cmds: cmdSalloc},
	{Name: "no-requeue", HasArg: getopt.NoArgument, Val: optNoRequeue, Cmds: cmdSbatch},
	{Name: "nodefile", HasArg: getopt.RequiredArgument, Val: 'F', Cmds: cmdAll},
	{Name: "nodelist", HasArg: getopt.RequiredArgument, Val: 'w', Cmds: cmdAll},
	{Name: "nodes", HasArg: getopt.RequiredArgument, Val: 'N', Cmds: cmdAll},
	{Name: "ntasks", HasArg: getopt.RequiredArgument, Val: 'n', Cmds: cmdAll},
	{Name: "ntasks-per-core", HasArg: getopt.RequiredArgument, Val: optNtaskspercore, Cmds: cmdAll},
	{Name: "ntasks-per-gpu", HasArg: getopt.RequiredArgument, Val: optNtaskspergpu, Cmds: cmdAll},
	{Name: "ntasks-per-node", HasArg: getopt.RequiredArgument, Val: optNtaskspernode, Cmds: cmdAll},
	{Name: "ntasks-per-socket", HasArg: getopt.RequiredArgument, Val: optNtaskspersocket, Cmds: cmdAll},
	{Name: "ntasks-per-tres", HasArg: getopt.RequiredArgument, Val: optNtaskspertres, Cmds: cmdAll},
	{Name: "open-mode", HasArg: getopt.RequiredArgument, Val: optOpenMode, Cmds: cmdSbatch | cmdSrun},
	{Name: "output", HasArg: getopt.RequiredArgument, Val: 'o', Cmds: cmdSbatch | cmdSrun},
	{Name: "overcommit", HasArg: getopt.NoArgument, Val: 'O', Cmds: cmdAll},
	{Name: "overlap", HasArg: getopt.OptionalArgument, Val: optOverlap, Cmds: cmdSrun},
	{Name: "oversubscribe", HasArg: getopt.NoArgument, Val: 's', Cmds: cmdAll},
	{Name: "pack-group", HasArg: getopt.RequiredArgument, Val: optHetGroup, Cmds: cmdSrun},
	{Name: "parsable", HasArg: getopt.NoArgument, Val: optParsable, Cmds: cmdSbatch},
	{Name: "partition", HasArg: getopt.RequiredArgument, Val: 'p', Cmds: cmdAll},
	{Name: "power", HasArg: getopt.RequiredArgument, Val: optPower, Cmds: cmdAll},
	{Name: "prefer", HasArg: getopt.RequiredArgument, Val: optPrefer, Cmds: cmdSbatch | cmdSrun | cmdSalloc},
	{Name: "preserve-env", HasArg: getopt.NoArgument, Val: 'E', Cmds: cmdSrun},
	{Name: "priority", HasArg: getopt.RequiredArgument, Val: optPriority, Cmds: cmdAll},
	{Name: "profile", HasArg: getopt.RequiredArgument, Val: optProfile, Cmds: cmdAll},
	{Name: "prolog", HasArg: getopt.RequiredArgument, Val: optProlog, Cmds: cmdSrun},
	{Name: "propagate", HasArg: getopt.OptionalArgument, Val: optPropagate, Cmds: cmdSbatch | cmdSrun},
	{Name: "pty", HasArg: getopt.NoArgument, Val: optPty, Cmds: cmdSrun},
	{Name: "qos", HasArg: getopt.RequiredArgument, Val: 'q', Cmds: cmdAll},
	{Name: "quiet", HasArg: getopt.NoArgument, Val: 'Q', Cmds: cmdAll, Early: true},
	{Name: "quit-on-interrupt", HasArg: getopt.NoArgument, Val: optQuitOnIntr, Cmds: cmdSrun},
	{Name: "reboot", HasArg: getopt.NoArgument, Val: optReboot, Cmds: cmdAll},
	{Name: "relative", HasArg: getopt.RequiredArgument, Val: 'r', Cmds: cmdSrun},
	{Name: "requeue", HasArg: getopt.NoArgument, Val: optRequeue, Cmds: cmdSbatch},
	{Name: "reservation", HasArg: getopt.RequiredArgument, Val: optReservation, Cmds: cmdAll},
	{Name: "resv-ports", HasArg: getopt.OptionalArgument, Val: optResvPorts, Cmds: cmdSrun},
	{Name: "send-libs", HasArg: getopt.OptionalArgument, Val: optSendLibs, Cmds: cmdSrun},
	{Name: "signal", HasArg: getopt.RequiredArgument, Val: optSignal, Cmds: cmdAll},
	{Name: "slurmd-debug", HasArg: getopt.RequiredArgument, Val: optSlurmdDebug, Cmds: cmdSrun},
	{Name: "sockets-per-node", HasArg: getopt.RequiredArgument, Val: optSocketspernode, Cmds: cmdAll},
	{Name: "spread-job", HasArg: getopt.NoArgument, Val: optSpreadJob, Cmds: cmdAll},
	{Name: "switches", HasArg: getopt.RequiredArgument, Val: optSwitches, Cmds: cmdAll},
	{Name: "task-epilog", HasArg: getopt.RequiredArgument, Val: optTaskEpilog, Cmds: cmdSrun},
	{Name: "task-prolog", HasArg: getopt.RequiredArgument, Val: optTaskProlog, Cmds: cmdSrun},
	{Name: "tasks-per-node", HasArg: getopt.RequiredArgument, Val: optNtaskspernode, Cmds: cmdAll},
	{Name: "test-only", HasArg: getopt.NoArgument, Val: optTestOnly, Cmds: cmdSbatch | cmdSrun},
	{Name: "thread-spec", HasArg: getopt.RequiredArgument, Val: optThreadSpec, Cmds: cmdAll},
	{Name: "threads-per-core", HasArg: getopt.RequiredArgument, Val: optThreadspercore, Cmds: cmdAll},
	{Name: "time", HasArg: getopt.RequiredArgument, Val: 't', Cmds: cmdAll},
	{Name: "time-min", HasArg: getopt.RequiredArgument, Val: optTimeMin, Cmds: cmdAll},
	{Name: "tmp", HasArg: getopt.RequiredArgument, Val: optTmp, Cmds: cmdAll},
	{Name: "uid", HasArg: getopt.RequiredArgument, Val: optUid, Cmds: cmdAll},
	{Name: "unbuffered", HasArg: getopt.NoArgument, Val: 'u', Cmds: cmdSrun},
	{Name: "use-min-nodes", HasArg: getopt.NoArgument, Val: optUseMinNodes, Cmds: cmdAll},
	{Name: "verbose", HasArg: getopt.NoArgument, Val: 'v', Cmds: cmdAll, Early: true},
	{Name: "version", HasArg: getopt.NoArgument, Val: 'V', Cmds: cmdAll, Early: true},
	{Name: "usage", HasArg: getopt.NoArgument, Val: optUsage, Cmds: cmdAll, Early: true},
	{Name: "wait", HasArg: getopt.NoArgument, Val: 'W', Cmds: cmdSbatch},
	{Name: "wait-all-nodes", HasArg: getopt.RequiredArgument, Val: optWaitAllNodes, Cmds: cmdSbatch | cmdSalloc},
	{Name: "wait", HasArg: getopt.RequiredArgument, Val: 'W', Cmds: cmdSrun},
	{Name: "wckey", HasArg: getopt.RequiredArgument, Val: optWckey, Cmds: cmdAll},
	{Name: "whole", HasArg: getopt.NoArgument, Val: optWhole, Cmds: cmdSrun},
	{Name: "wrap", HasArg: getopt.RequiredArgument, Val: optWrap, Cmds: cmdSbatch, Early: true},
	{Name: "x11", HasArg: getopt.OptionalArgument, Val: optX11, Cmds: cmdSrun | cmdSalloc},
}

// envOnly are options without a command-line name: they are reached only
// through input environment variables (SBATCH_REQ_SWITCH, ...).
var envOnly = []Spec{
	{Val: optSwitchReq, HasArg: getopt.RequiredArgument, Cmds: cmdAll},
	{Val: optSwitchWait, HasArg: getopt.RequiredArgument, Cmds: cmdAll},
	{Val: optUmask, HasArg: getopt.NoArgument, Cmds: cmdSbatch},
	{Val: optAllocNodelist, HasArg: getopt.RequiredArgument, Cmds: cmdSrun},
}
