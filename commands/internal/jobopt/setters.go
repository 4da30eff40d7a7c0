package jobopt

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/pack"
)

// setter applies one option. has is false for an optional argument that
// was not given (and for options without argument).
type setter func(o *Opts, arg string, has bool) error

func (o *Opts) badSpec(what string) error {
	o.Log.Errorf("Invalid %s specification", what)
	return exitErr(ExitOption)
}

// parseInt is Slurm's parse_int: base-10, nothing after the digits, >= 0
// (> 0 when positive); it exits with status 1 on error.
func (o *Opts) parseInt(name, val string, positive bool) (int, error) {
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < 0 || (positive && n <= 0) {
		o.Log.Errorf("Invalid numeric value \"%s\" for %s.", val, name)
		return 0, exitErr(ExitParsing)
	}
	return int(n), nil
}

func intOpt(name string, get func(*Opts) *int) setter {
	return func(o *Opts, arg string, _ bool) error {
		n, err := o.parseInt(name, arg, true)
		if err != nil {
			return err
		}
		*get(o) = n
		return nil
	}
}

func mbytes(name string, get func(*Opts) *uint64) setter {
	return func(o *Opts, arg string, _ bool) error {
		v, ok := ParseMBytes(arg)
		if !ok {
			return o.badSpec(name)
		}
		*get(o) = v
		return nil
	}
}

func flagBit(bit uint64) setter {
	return func(o *Opts, _ string, _ bool) error { o.JobFlags |= bit; return nil }
}

// setters maps option Val to its effect (slurm_opt.c arg_set_*).
var setters = map[int]setter{
	'A':          func(o *Opts, a string, _ bool) error { o.Account = a; return nil },
	optAcctgFreq: func(o *Opts, a string, _ bool) error { o.AcctgFreq = a; return nil },
	'a':          func(o *Opts, a string, _ bool) error { o.ArrayInx = a; return nil },
	optBatch:     func(o *Opts, a string, _ bool) error { o.BatchFeatures = a; return nil },
	'b': func(o *Opts, a string, _ bool) error {
		t, ok := o.parseTime(a)
		if !ok || t == 0 {
			return o.badSpec("--begin")
		}
		o.Begin = t
		return nil
	},
	optBurstBufferSpec:   func(o *Opts, a string, _ bool) error { o.BurstBuffer = a; return nil },
	optBurstBufferFile:   func(o *Opts, a string, _ bool) error { o.BurstBufferFile = a; return nil },
	optClusterConstraint: func(o *Opts, a string, _ bool) error { o.ClusterConstraint = a; return nil },
	'D': func(o *Opts, a string, _ bool) error {
		if filepath.IsAbs(a) {
			o.Chdir = a
		} else {
			o.Chdir = filepath.Join(o.Cwd, a)
			if strings.HasSuffix(a, "/") || a == "." {
				o.Chdir = strings.TrimSuffix(o.Cwd, "/") + "/" + a
			}
		}
		return nil
	},
	optCluster:    func(o *Opts, a string, _ bool) error { o.Clusters = a; return nil },
	'M':           func(o *Opts, a string, _ bool) error { o.Clusters = a; return nil },
	optComment:    func(o *Opts, a string, _ bool) error { o.Comment = a; return nil },
	optContainer:  func(o *Opts, a string, _ bool) error { o.Container = a; return nil },
	optContext:    func(o *Opts, a string, _ bool) error { o.Context = a; return nil },
	optContiguous: func(o *Opts, _ string, _ bool) error { o.Contiguous = true; return nil },
	'C':           func(o *Opts, a string, _ bool) error { o.Constraint = a; return nil },
	'S': func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--core-spec", a, false)
		if err != nil {
			return err
		}
		o.CoreSpec = uint16(n)
		return nil
	},
	optCorespersocket: intOpt("--cores-per-socket", func(o *Opts) *int { return &o.CoresPerSocket }),
	optCpuFreq: func(o *Opts, a string, _ bool) error {
		mn, mx, gov, err := o.cpuFreq(a)
		if err != nil {
			return err
		}
		o.CPUFreqMin, o.CPUFreqMax, o.CPUFreqGov = mn, mx, gov
		return nil
	},
	optCpusPerGpu: func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--cpus-per-gpu", a, true)
		o.CPUsPerGPU = n
		return err
	},
	'c': func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--cpus-per-task", a, true)
		if err != nil {
			return err
		}
		o.CPUsPerTask, o.CPUsSet = n, true
		return nil
	},
	optDeadline: func(o *Opts, a string, _ bool) error {
		t, ok := o.parseTime(a)
		if !ok || t == 0 {
			return o.badSpec("--deadline")
		}
		o.Deadline = t
		return nil
	},
	optDelayBoot: func(o *Opts, a string, _ bool) error {
		v, ok := conf.ParseTimeSecs(a)
		if !ok {
			return o.badSpec("--delay-boot")
		}
		o.DelayBoot = v
		return nil
	},
	'd': func(o *Opts, a string, _ bool) error { o.Dependency = a; return nil },
	'm': func(o *Opts, a string, _ bool) error {
		d, plane, ok := ParseDistribution(a, o.getenv)
		if !ok {
			if strings.HasPrefix(strings.ToLower(a), "plane") {
				o.Log.Errorf("Invalid plane size or size not specified")
			}
			return o.badSpec("--distribution")
		}
		o.Distribution = d
		if plane != 0 {
			o.PlaneSize = plane
		}
		return nil
	},
	'e': func(o *Opts, a string, _ bool) error { o.Efname = devNullIfNone(a); return nil },
	'x': func(o *Opts, a string, _ bool) error { o.Exclude = a; return nil },
	optExclusive: func(o *Opts, a string, has bool) error {
		switch {
		case !has || strings.EqualFold(a, "exclusive"):
			o.Shared = SharedNone
		case strings.EqualFold(a, "oversubscribe"):
			o.Shared = SharedOK
		case strings.EqualFold(a, "user"):
			o.Shared = SharedUser
		case strings.EqualFold(a, "mcs"):
			o.Shared = SharedMCS
		default:
			return o.badSpec("--exclusive")
		}
		return nil
	},
	optExport:     func(o *Opts, a string, _ bool) error { s := a; o.Export = &s; return nil },
	optExportFile: func(o *Opts, a string, _ bool) error { o.ExportFile = a; return nil },
	'B': func(o *Opts, a string, _ bool) error {
		s, c, t, ok := parseSocketCoreThread(a)
		if !ok {
			return o.badSpec("--extra-node-info")
		}
		if s != NoVal {
			o.SocketsPerNode = s
		}
		if c != NoVal {
			o.CoresPerSocket = c
		}
		if t != NoVal {
			o.ThreadsPerCore = t
		}
		o.ExtraSet = true
		return nil
	},
	optGetUserEnv: func(o *Opts, a string, has bool) error {
		if !has {
			o.GetUserEnvTime = 0
			return nil
		}
		i := 0
		for i < len(a) && (a[i] >= '0' && a[i] <= '9' || i == 0 && (a[i] == '-' || a[i] == '+')) {
			i++
		}
		n, _ := strconv.Atoi(a[:i])
		o.GetUserEnvTime = n
		switch rest := a[i:]; {
		case rest == "":
		case rest[0] == 's' || rest[0] == 'S':
			o.GetUserEnvMode = 1
		case rest[0] == 'l' || rest[0] == 'L':
			o.GetUserEnvMode = 2
		default:
			return o.badSpec("--get-user-env")
		}
		return nil
	},
	optGid: func(o *Opts, a string, _ bool) error {
		if o.RealUID != 0 {
			o.Log.Errorf("--gid only permitted by root user")
			return exitErr(ExitOption)
		}
		g, ok := lookupGID(a)
		if !ok {
			return o.badSpec("--gid")
		}
		o.GID = g
		return nil
	},
	optGpuBind:     func(o *Opts, a string, _ bool) error { o.GPUBind, o.TresBind = a, "gpu:"+a; return nil },
	optGpuFreq:     func(o *Opts, a string, _ bool) error { o.GPUFreq, o.TresFreq = a, "gpu:"+a; return nil },
	'G':            func(o *Opts, a string, _ bool) error { o.GPUs = a; return nil },
	optGpusPerNode: func(o *Opts, a string, _ bool) error { o.GPUsPerNode = a; return nil },
	optGpusPerSocket: func(o *Opts, a string, _ bool) error {
		o.GPUsPerSocket = a
		return nil
	},
	optGpusPerTask: func(o *Opts, a string, _ bool) error { o.GPUsPerTask = a; return nil },
	optGres: func(o *Opts, a string, _ bool) error {
		if strings.EqualFold(a, "none") {
			o.Gres = a
		} else {
			o.Gres = PrependTresType(a)
		}
		return nil
	},
	optGresFlags: func(o *Opts, a string, _ bool) error {
		o.JobFlags &^= FlagGresNoBinding | FlagGresEnforce
		switch {
		case strings.EqualFold(a, "disable-binding"):
			o.JobFlags |= FlagGresNoBinding
		case strings.EqualFold(a, "enforce-binding"):
			o.JobFlags |= FlagGresEnforce
		default:
			return o.badSpec("--gres-flags")
		}
		return nil
	},
	'h':          func(o *Opts, _ string, _ bool) error { o.Help = true; return nil },
	optHint:      func(o *Opts, a string, _ bool) error { o.Hint = a; return nil },
	'H':          func(o *Opts, _ string, _ bool) error { o.Hold = true; return nil },
	optIgnorePbs: func(o *Opts, _ string, _ bool) error { o.IgnorePBS = true; return nil },
	'I': func(o *Opts, a string, has bool) error {
		if !has {
			o.Immediate = 1
			return nil
		}
		n, err := o.parseInt("immediate", a, false)
		o.Immediate = n
		return err
	},
	'i': func(o *Opts, a string, _ bool) error { o.Ifname = devNullIfNone(a); return nil },
	'J': func(o *Opts, a string, _ bool) error { s := a; o.JobName = &s; return nil },
	optKillInvDep: func(o *Opts, a string, _ bool) error {
		switch {
		case strings.EqualFold(a, "yes"):
			o.JobFlags |= FlagKillInvDep
		case strings.EqualFold(a, "no"):
			o.JobFlags |= FlagNoKillInvDep
		default:
			return o.badSpec("--kill-on-invalid-dep")
		}
		return nil
	},
	'L': func(o *Opts, a string, _ bool) error { o.Licenses = a; return nil },
	optMailType: func(o *Opts, a string, _ bool) error {
		o.MailType |= ParseMailType(a)
		if o.MailType == Infinite16 {
			return o.badSpec("--mail-type")
		}
		return nil
	},
	optMailUser: func(o *Opts, a string, _ bool) error { o.MailUser = a; return nil },
	optMcsLabel: func(o *Opts, a string, _ bool) error { o.MCSLabel = a; return nil },
	optMem: func(o *Opts, a string, _ bool) error {
		v, ok := ParseMBytes(a)
		if !ok {
			return o.badSpec("--mem")
		}
		o.PnMinMemory = v
		if o.Cmd == Srun {
			o.MemPerCPU = pack.NoVal64
		}
		return nil
	},
	optMemBind: func(o *Opts, a string, _ bool) error {
		t, complaint, ok := ParseMemBind(a)
		if !ok {
			o.Log.Errorf("%s", complaint)
			return exitErr(ExitOption)
		}
		o.MemBind, o.MemBindType = memBindList(a), t
		return nil
	},
	optMemPerCpu: mbytes("--mem-per-cpu", func(o *Opts) *uint64 { return &o.MemPerCPU }),
	optMemPerGpu: mbytes("--mem-per-gpu", func(o *Opts) *uint64 { return &o.MemPerGPU }),
	optMincpus: func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--mincpus", a, true)
		o.PnMinCPUs = n
		return err
	},
	optNetwork: func(o *Opts, a string, _ bool) error { o.Network = a; return nil },
	optNice: func(o *Opts, a string, has bool) error {
		n := int64(100)
		if has {
			n = strtoll(a)
		}
		if n > int64(NiceOffset)-3 || n < -(int64(NiceOffset)-3) {
			o.Log.Errorf("Invalid --nice value, out of range (+/- %d)", NiceOffset-3)
			return exitErr(ExitOption)
		}
		o.Nice = int(n)
		return nil
	},
	'k': func(o *Opts, a string, has bool) error {
		switch {
		case !has || strings.EqualFold(a, "set"):
			o.NoKill = true
		case strings.EqualFold(a, "off") || strings.EqualFold(a, "no"):
			o.NoKill = false
		default:
			return o.badSpec("--no-kill")
		}
		return nil
	},
	optNoRequeue: func(o *Opts, _ string, _ bool) error { o.Requeue = 0; return nil },
	'F':          func(o *Opts, a string, _ bool) error { o.Nodefile, o.Nodelist = a, ""; return nil },
	'w':          func(o *Opts, a string, _ bool) error { o.Nodefile, o.Nodelist = "", a; return nil },
	'N': func(o *Opts, a string, _ bool) error {
		mn, mx, err := o.parseNodeCount(a)
		if err != nil {
			return err
		}
		o.MinNodes, o.MaxNodes, o.NodesSet = mn, mx, true
		return nil
	},
	'n': func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--ntasks", a, true)
		if err != nil {
			return err
		}
		o.Ntasks, o.NtasksSet = n, true
		return nil
	},
	optNtaskspercore:   intOpt("--ntasks-per-core", func(o *Opts) *int { return &o.NtasksPerCore }),
	optNtaskspergpu:    intOpt("--ntasks-per-gpu", func(o *Opts) *int { return &o.NtasksPerGPU }),
	optNtaskspernode:   intOpt("--ntasks-per-node", func(o *Opts) *int { return &o.NtasksPerNode }),
	optNtaskspersocket: intOpt("--ntasks-per-socket", func(o *Opts) *int { return &o.NtasksPerSocket }),
	optNtaskspertres:   intOpt("--ntasks-per-tres", func(o *Opts) *int { return &o.NtasksPerTres }),
	optOpenMode: func(o *Opts, a string, _ bool) error {
		switch {
		case a != "" && (a[0] == 'a' || a[0] == 'A'):
			o.OpenMode = OpenModeAppend
		case a != "" && (a[0] == 't' || a[0] == 'T'):
			o.OpenMode = OpenModeTruncate
		default:
			return o.badSpec("--open-mode")
		}
		return nil
	},
	'o':         func(o *Opts, a string, _ bool) error { o.Ofname = devNullIfNone(a); return nil },
	'O':         func(o *Opts, _ string, _ bool) error { o.Overcommit = true; return nil },
	's':         func(o *Opts, _ string, _ bool) error { o.Shared = SharedOK; return nil },
	optParsable: func(o *Opts, _ string, _ bool) error { o.Parsable = true; return nil },
	'p':         func(o *Opts, a string, _ bool) error { o.Partition = a; return nil },
	optPower:    func(o *Opts, a string, _ bool) error { o.Power = powerFlags(a); return nil },
	optPrefer:   func(o *Opts, a string, _ bool) error { o.Prefer = a; return nil },
	optPriority: func(o *Opts, a string, _ bool) error {
		if strings.EqualFold(a, "TOP") {
			o.Priority = pack.NoVal - 1
			return nil
		}
		p := strtoll(a)
		if p < 0 {
			o.Log.Errorf("Priority must be >= 0")
			return exitErr(ExitOption)
		}
		if p >= int64(pack.NoVal) {
			o.Log.Errorf("Priority must be < %d", pack.NoVal)
			return exitErr(ExitOption)
		}
		o.Priority = uint32(p)
		return nil
	},
	optProfile: func(o *Opts, a string, _ bool) error {
		p, ok := parseProfile(a)
		if !ok {
			o.Log.Errorf("invalid --profile=%s option", a)
			return exitErr(ExitOption)
		}
		o.Profile = p
		return nil
	},
	optPropagate: func(o *Opts, a string, has bool) error {
		if !has {
			a = "ALL"
		}
		o.Propagate = a
		return nil
	},
	'q':            func(o *Opts, a string, _ bool) error { o.QOS = a; return nil },
	'Q':            func(o *Opts, _ string, _ bool) error { o.Quiet++; return nil },
	optReboot:      func(o *Opts, _ string, _ bool) error { o.Reboot = true; return nil },
	optRequeue:     func(o *Opts, _ string, _ bool) error { o.Requeue = 1; return nil },
	optReservation: func(o *Opts, a string, _ bool) error { o.Reservation = a; return nil },
	optSignal: func(o *Opts, a string, _ bool) error {
		sig, t, f, ok := ParseSignal(a, o.Cmd == Sbatch)
		if !ok {
			return o.badSpec("--signal")
		}
		o.WarnSignal, o.WarnTime, o.WarnFlags = sig, t, o.WarnFlags|f
		return nil
	},
	optSocketspernode: intOpt("--sockets-per-node", func(o *Opts) *int { return &o.SocketsPerNode }),
	optSpreadJob:      flagBit(FlagSpreadJob),
	optSwitchReq: func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--switches", a, true)
		o.ReqSwitch = n
		return err
	},
	optSwitchWait: func(o *Opts, a string, _ bool) error { o.Wait4Switch = timeSecsOrNoVal(a); return nil },
	optSwitches: func(o *Opts, a string, _ bool) error {
		count, wait, found := strings.Cut(a, "@")
		if found {
			o.Wait4Switch = timeSecsOrNoVal(wait)
		}
		n, err := o.parseInt("--switches", count, true)
		o.ReqSwitch = n
		return err
	},
	optTestOnly: func(o *Opts, _ string, _ bool) error { o.TestOnly = true; return nil },
	optThreadSpec: func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--thread-spec", a, true)
		o.CoreSpec = uint16(n) | CoreSpecThread
		return err
	},
	optThreadspercore: intOpt("--threads-per-core", func(o *Opts) *int { return &o.ThreadsPerCore }),
	't': func(o *Opts, a string, _ bool) error {
		v, ok := conf.ParseTimeMins(a)
		if !ok {
			return o.badSpec("--time")
		}
		if v == 0 {
			v = Infinite
		}
		o.TimeLimit = v
		return nil
	},
	optTimeMin: func(o *Opts, a string, _ bool) error {
		v, ok := conf.ParseTimeMins(a)
		if !ok {
			return o.badSpec("--time-min")
		}
		if v == 0 {
			v = Infinite
		}
		o.TimeMin = v
		return nil
	},
	optTmp: mbytes("--tmp", func(o *Opts) *uint64 { return &o.PnMinTmpDisk }),
	optUid: func(o *Opts, a string, _ bool) error {
		if o.RealUID != 0 {
			o.Log.Errorf("--uid only permitted by root user")
			return exitErr(ExitOption)
		}
		u, ok := lookupUID(a)
		if !ok {
			return o.badSpec("--uid")
		}
		o.UID = u
		return nil
	},
	optUseMinNodes: flagBit(FlagUseMinNodes),
	optUsage:       func(o *Opts, _ string, _ bool) error { o.Usage = true; return nil },
	'v': func(o *Opts, a string, has bool) error {
		if !has {
			o.Verbose++
			return nil
		}
		n, err := o.parseInt("--verbose", a, false)
		o.Verbose = n
		return err
	},
	'V': func(o *Opts, _ string, _ bool) error { o.Version = true; return nil },
	'W': func(o *Opts, a string, has bool) error {
		// srun's --wait=SECONDS is its own (max_wait), sbatch's a flag.
		if o.Cmd == Srun && o.Custom != nil {
			return o.Custom("wait", a, has)
		}
		o.Wait = true
		return nil
	},
	optWaitAllNodes: func(o *Opts, a string, _ bool) error {
		n, err := o.parseInt("--wait-all-nodes", a, false)
		if err != nil {
			return err
		}
		if n > 1 {
			return o.badSpec("--wait-all-nodes")
		}
		o.WaitAllNodes = uint16(n)
		return nil
	},
	optWckey: func(o *Opts, a string, _ bool) error { o.WCKey = a; return nil },
	optWrap:  func(o *Opts, a string, _ bool) error { s := a; o.Wrap = &s; return nil },
}

// resetters undo a flag option for an environment variable whose value is
// not "set" (empty, "yes" or a non-zero number set it; anything else resets).
var resetters = map[int]func(o *Opts){
	'H':            func(o *Opts) { o.Hold = false },
	optRequeue:     func(o *Opts) { o.Requeue = pack.NoVal },
	optNoRequeue:   func(o *Opts) { o.Requeue = pack.NoVal },
	'O':            func(o *Opts) { o.Overcommit = false },
	's':            func(o *Opts) { o.Shared = pack.NoVal16 },
	optContiguous:  func(o *Opts) { o.Contiguous = false },
	optSpreadJob:   func(o *Opts) { o.JobFlags &^= FlagSpreadJob },
	optUseMinNodes: func(o *Opts) { o.JobFlags &^= FlagUseMinNodes },
	optIgnorePbs:   func(o *Opts) { o.IgnorePBS = false },
	optParsable:    func(o *Opts) { o.Parsable = false },
	optTestOnly:    func(o *Opts) { o.TestOnly = false },
	'W':            func(o *Opts) { o.Wait = false },
	optReboot:      func(o *Opts) { o.Reboot = false },
	'Q':            func(o *Opts) { o.Quiet = 0 },
	'v':            func(o *Opts) { o.Verbose = 0 },
}

func devNullIfNone(a string) string {
	if strings.EqualFold(a, "none") {
		return "/dev/null"
	}
	return a
}

// strtoll parses a leading optionally signed decimal number, ignoring what
// follows, like C's strtoll(s, NULL, 10).
func strtoll(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

func timeSecsOrNoVal(s string) int {
	v, ok := conf.ParseTimeSecs(s)
	if !ok {
		return NoVal
	}
	return int(v)
}
