package jobopt

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
	"golang.org/x/sys/unix"
)

// BatchInput is what sbatch knows besides its options when it builds the
// job descriptor.
type BatchInput struct {
	// Environ is the process environment; Verify and JobDesc add the
	// variables sbatch sets in its own environment before copying it.
	Env *Env
	// ScriptArgv is the script path (resolved as search_path does) and its
	// arguments; empty for --wrap and stdin.
	ScriptArgv []string
	Script     string
	SubmitLine string
	// Hostname is gethostname() for SLURM_SUBMIT_HOST.
	Hostname string
	// Umask and Priority of the process (SLURM_UMASK, SLURM_PRIO_PROCESS).
	Umask    int
	Priority int
	// Rlimits are the SLURM_RLIMIT_* values to propagate, in Slurm's order
	// (nil: read them with getrlimit for PropagateResourceLimits=ALL).
	Rlimits []Rlimit
	// PropagateRlimits, PropagateRlimitsExcept are slurm.conf's
	// PropagateResourceLimits and PropagateResourceLimitsExcept.
	PropagateRlimits, PropagateRlimitsExcept []string
	// ReadFile reads --nodefile, SLURM_HOSTFILE and --export-file (nil:
	// os.ReadFile).
	ReadFile func(string) ([]byte, error)
}

// Rlimit is one propagated resource limit.
type Rlimit struct {
	Name  string // CPU, FSIZE, ...
	Value uint64
}

// RlimitNames are Slurm's propagated limits in its order.
var RlimitNames = []struct {
	Name     string
	Resource int
}{
	{"CPU", unix.RLIMIT_CPU}, {"FSIZE", unix.RLIMIT_FSIZE}, {"DATA", unix.RLIMIT_DATA},
	{"STACK", unix.RLIMIT_STACK}, {"CORE", unix.RLIMIT_CORE}, {"RSS", unix.RLIMIT_RSS},
	{"NPROC", unix.RLIMIT_NPROC}, {"NOFILE", unix.RLIMIT_NOFILE},
	{"MEMLOCK", unix.RLIMIT_MEMLOCK}, {"AS", unix.RLIMIT_AS},
}

// ProcessRlimits reads the current soft limits.
func ProcessRlimits() []Rlimit {
	var out []Rlimit
	for _, r := range RlimitNames {
		var l unix.Rlimit
		if unix.Getrlimit(r.Resource, &l) == nil {
			out = append(out, Rlimit{Name: r.Name, Value: l.Cur})
		}
	}
	return out
}

// BatchEnv holds the per-component values sbatch exports at the end
// (sbatch_env_t); Verify fills it and BatchJobDesc writes it.
type BatchEnv struct {
	cpusPerTask, ntasks, ntasksPerCore, ntasksPerGPU int
	ntasksPerNode, ntasksPerSocket, ntasksPerTres    int
	planeSize, threadsPerCore                        int
	dist, memBind, memBindSort, memBindVerbose       string
}

// ValidateCommon is validate_options_salloc_sbatch_srun, the checks the
// three commands share: -S/--thread-spec (and AllowSpecResourcesUsage) and
// the --mem/--mem-per-cpu/--mem-per-gpu conflict, where the command line
// or script wins over the environment.
func (o *Opts) ValidateCommon() error {
	if err := o.validateSpecCores(); err != nil {
		return err
	}
	return o.validateMemory()
}

// Verify is sbatch's _opt_verify: ValidateCommon, then it resolves
// conflicts, fills defaults derived from other options and sets the
// variables sbatch puts in its own environment (in.Env).
func (o *Opts) Verify(in *BatchInput) (*BatchEnv, error) {
	if err := o.ValidateCommon(); err != nil {
		return nil, err
	}
	if o.Quiet > 0 && o.Verbose > 0 {
		o.Log.Errorf("don't specify both --verbose (-v) and --quiet (-Q)")
		return nil, exitErr(1)
	}
	if o.BurstBuffer != "" && o.BurstBufferFile != "" {
		o.Log.Errorf("Cannot specify both --burst-buffer and --bbf")
		return nil, exitErr(1)
	}
	if o.Container != "" {
		if _, ok := in.Env.Get("SLURM_CONTAINER"); !ok {
			in.Env.Set("SLURM_CONTAINER", o.Container, true)
		}
	}
	if o.Hint != "" {
		if err := o.ApplyHint(in.Env); err != nil {
			return nil, err
		}
	}
	if o.Ifname == "" {
		o.Ifname = "/dev/null"
	}
	o.Efname = fullPath(o.Efname, o.Chdir)
	o.Ifname = fullPath(o.Ifname, o.Chdir)
	o.Ofname = fullPath(o.Ofname, o.Chdir)

	if o.Nodefile != "" {
		names, err := o.readHostfile(in, o.Nodefile)
		if err != nil {
			o.Log.Errorf("Invalid --nodefile node file")
			return nil, exitErr(ExitOption)
		}
		o.Nodelist = names
	}
	if o.Nodelist == "" {
		if hf, ok := in.Env.Get("SLURM_HOSTFILE"); ok {
			if !strings.Contains(hf, "/") {
				hf = "./" + hf
			}
			o.Nodelist = hf
			o.Distribution = o.Distribution&distStateFlags | distArbitrary
			names, err := o.readHostfile(in, hf)
			if err != nil {
				o.Log.Errorf("Failure getting NodeNames from hostfile")
				return nil, exitErr(1)
			}
			o.Nodelist = names
		}
	}
	if o.Nodelist != "" && strings.Contains(o.Nodelist, "/") {
		names, err := o.readHostfile(in, o.Nodelist)
		if err != nil {
			o.Log.Errorf("Invalid node list specified")
			return nil, exitErr(1)
		}
		o.Nodelist = names
	}
	var uniq *hostlist.Hostlist
	if o.Nodelist != "" {
		hl, err := hostlist.Parse(o.Nodelist)
		if err != nil {
			o.Log.Errorf("Invalid node list specified")
			return nil, exitErr(1)
		}
		hl.Uniq()
		uniq = hl
		n := hl.Count()
		if o.NodesSet {
			o.MinNodes = max(n, o.MinNodes)
		} else {
			o.MinNodes = n
		}
		o.NodesSet = true
	}
	if o.NtasksPerNode != NoVal && o.NtasksPerNode > 0 && !o.NtasksSet &&
		(o.MaxNodes == 0 || o.MinNodes == o.MaxNodes) {
		o.Ntasks = o.MinNodes * o.NtasksPerNode
		o.NtasksSet = true
	}
	if o.CPUsSet && o.PnMinCPUs < o.CPUsPerTask {
		o.PnMinCPUs = o.CPUsPerTask
	}
	if o.JobName == nil {
		switch {
		case o.Wrap != nil:
			s := "wrap"
			o.JobName = &s
		case len(in.ScriptArgv) > 0:
			s := path.Base(in.ScriptArgv[0])
			o.JobName = &s
		}
	}
	if o.JobName != nil {
		in.Env.Set("SLURM_JOB_NAME", *o.JobName, true)
	}
	if o.MaxNodes != 0 && o.MinNodes > o.MaxNodes {
		o.Log.Errorf("invalid number of nodes (-N %d-%d)", o.MinNodes, o.MaxNodes)
		return nil, exitErr(1)
	}
	if o.Distribution&distStateBase == distPlane && o.PlaneSize != pack.NoVal && o.PlaneSize != 0 {
		ps := int(o.PlaneSize)
		if (o.MinNodes <= 0 || o.Ntasks/ps < o.MinNodes) && (o.MinNodes-1)*ps >= o.Ntasks {
			o.Log.Errorf("Too few processes for the requested {plane,node} distribution")
			return nil, exitErr(1)
		}
	}

	be := &BatchEnv{cpusPerTask: NoVal, ntasks: NoVal, ntasksPerCore: NoVal, ntasksPerGPU: NoVal,
		ntasksPerNode: NoVal, ntasksPerSocket: NoVal, ntasksPerTres: NoVal, planeSize: NoVal,
		threadsPerCore: NoVal}
	if o.CPUsSet {
		be.cpusPerTask = o.CPUsPerTask
	}
	be.dist = DistributionString(o.Distribution)
	if o.Distribution&distStateBase == distPlane {
		be.planeSize = int(o.PlaneSize)
	}

	switch {
	case (o.NodesSet || o.ExtraSet) && (o.MinNodes == o.MaxNodes || o.MaxNodes == 0) && !o.NtasksSet:
		o.Ntasks = max(o.MinNodes, 1)
		for _, v := range []int{o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore} {
			if v != NoVal {
				o.Ntasks *= v
				o.NtasksSet = true
			}
		}
		if o.NtasksSet {
			o.Log.Verbosef("Number of tasks implicitly set to %d.", o.Ntasks)
		}
	case o.NodesSet && o.NtasksSet:
		if o.Ntasks < o.MaxNodes {
			o.MaxNodes = o.Ntasks
		}
		if o.Ntasks < o.MinNodes {
			o.Log.Infof("Warning: can't run %d processes on %d nodes, setting nnodes to %d",
				o.Ntasks, o.MinNodes, o.Ntasks)
			o.MinNodes, o.MaxNodes = o.Ntasks, o.Ntasks
			if uniq != nil && uniq.Count() > o.MinNodes {
				hosts := uniq.Hosts()
				hl, err := hostlist.Parse(strings.Join(hosts[:o.MinNodes], ","))
				if err == nil {
					o.Nodelist = hl.Ranged()
				}
			}
		}
	}
	if o.Distribution&distStateBase == distArbitrary && (!o.NodesSet || !o.NtasksSet) {
		// Slurm reuses the list it already de-duplicated.
		hl, err := uniq, error(nil)
		if hl == nil {
			hl, err = hostlist.Parse(o.Nodelist)
		}
		if err == nil {
			if !o.NtasksSet {
				o.NtasksSet, o.Ntasks = true, hl.Count()
			}
			if !o.NodesSet {
				hl.Uniq()
				o.NodesSet = true
				o.MinNodes, o.MaxNodes = hl.Count(), hl.Count()
			}
		}
	}
	if o.NtasksSet && o.Ntasks > 0 {
		be.ntasks = o.Ntasks
	}
	be.ntasksPerCore = o.NtasksPerCore
	if o.NtasksPerTres != NoVal {
		be.ntasksPerTres = o.NtasksPerTres
	} else {
		be.ntasksPerGPU = o.NtasksPerGPU
	}
	be.ntasksPerNode = o.NtasksPerNode
	be.ntasksPerSocket = o.NtasksPerSocket
	be.threadsPerCore = o.ThreadsPerCore

	if o.Deadline != 0 && o.Begin != 0 && o.Deadline < o.Begin {
		o.Log.Errorf("Incompatible begin and deadline time specification")
		return nil, exitErr(1)
	}
	switch o.OpenMode {
	case OpenModeAppend:
		in.Env.Set("SLURM_OPEN_MODE", "a", true)
	case OpenModeTruncate:
		in.Env.Set("SLURM_OPEN_MODE", "t", true)
	}
	if o.Dependency != "" {
		in.Env.Set("SLURM_JOB_DEPENDENCY", o.Dependency, true)
	}
	if o.Export != nil && !strings.EqualFold(*o.Export, "ALL") {
		in.Env.Set("SLURM_EXPORT_ENV", *o.Export, false)
	}
	if o.Profile != 0 {
		in.Env.Set("SLURM_PROFILE", profileString(o.Profile), true)
	}
	if o.AcctgFreq != "" {
		in.Env.Set("SLURM_ACCTG_FREQ", o.AcctgFreq, true)
	}
	if o.MemBindType != 0 {
		if _, ok := in.Env.Get("SBATCH_MEM_BIND"); !ok {
			be.memBind = MemBindTypeString(o.MemBindType)
			if o.MemBind != "" {
				be.memBind += ":" + o.MemBind
			}
		}
		if _, ok := in.Env.Get("SLURM_MEM_BIND_SORT"); !ok && o.MemBindType&0x40 != 0 {
			be.memBindSort = "sort"
		}
		if _, ok := in.Env.Get("SLURM_MEM_BIND_VERBOSE"); !ok {
			be.memBindVerbose = "quiet"
			if o.MemBindType&0x01 != 0 {
				be.memBindVerbose = "verbose"
			}
		}
	}
	if v := cpuFreqString(o.CPUFreqMin, o.CPUFreqMax, o.CPUFreqGov); v != "" {
		in.Env.Set("SLURM_CPU_FREQ_REQ", v, true)
	}
	return be, nil
}

func fullPath(name, cwd string) string {
	if name == "" || name[0] == '/' {
		return name
	}
	return cwd + "/" + name
}

func (o *Opts) readHostfile(in *BatchInput, name string) (string, error) {
	read := in.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, err := read(name)
	if err != nil {
		return "", err
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		names = append(names, strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("empty host file %s", name)
	}
	return strings.Join(names, ","), nil
}

// validateMemory is _validate_memory_options: values from the command
// line or script win over the environment; two given together are fatal.
func (o *Opts) validateMemory() error {
	cli := func(v int) bool { s := o.SetBy(v); return s == FromCLI || s == FromScript }
	env := func(v int) bool { return o.SetBy(v) == FromEnv }
	n := 0
	for _, v := range []int{optMem, optMemPerCpu, optMemPerGpu} {
		if cli(v) {
			n++
		}
	}
	switch {
	case n > 1:
		o.Log.Fatalf("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
		return exitErr(1)
	case cli(optMem):
		o.MemPerCPU, o.MemPerGPU = pack.NoVal64, pack.NoVal64
	case cli(optMemPerCpu):
		o.PnMinMemory, o.MemPerGPU = pack.NoVal64, pack.NoVal64
	case cli(optMemPerGpu):
		o.PnMinMemory, o.MemPerCPU = pack.NoVal64, pack.NoVal64
	default:
		e := 0
		for _, v := range []int{optMem, optMemPerCpu, optMemPerGpu} {
			if env(v) {
				e++
			}
		}
		if e > 1 {
			o.Log.Fatalf("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.")
			return exitErr(1)
		}
	}
	return nil
}

// ApplyHint is validate_hint_option followed by verify_hint: a --hint
// from the command line or script resets the topology options, one that
// conflicts with them is dropped; the hint sets the implied counts and
// SLURM_HINT.
func (o *Opts) ApplyHint(env *Env) error {
	cli := func(v int) bool { s := o.SetBy(v); return s == FromCLI || s == FromScript }
	envSet := func(v int) bool { return o.SetBy(v) == FromEnv }
	topo := []int{optNtaskspercore, optThreadspercore, 'B'}
	anyOf := func(f func(int) bool) bool {
		for _, v := range topo {
			if f(v) {
				return true
			}
		}
		return false
	}
	switch {
	case cli(optHint) && anyOf(cli):
		o.Log.Verbosef("Following options are mutually exclusive with --hint: --ntasks-per-core, --threads-per-core, -B and --cpu-bind (other then --cpu-bind=verbose). Ignoring --hint.")
		o.Hint = ""
		return nil
	case cli(optHint):
		o.NtasksPerCore, o.ThreadsPerCore = NoVal, NoVal
		o.SocketsPerNode, o.CoresPerSocket, o.ExtraSet = NoVal, NoVal, false
	case anyOf(cli):
		o.Hint = ""
		return nil
	case envSet(optHint) && anyOf(envSet):
		o.Log.Verbosef("Following options are mutually exclusive with --hint: --ntasks-per-core, --threads-per-core, -B and --cpu-bind, but more than one set by environment variables. Ignoring SLURM_HINT.")
		o.Hint = ""
		return nil
	}
	for _, tok := range strings.Split(o.Hint, ",") {
		switch strings.ToLower(tok) {
		case "compute_bound":
			o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore = NoVal, NoVal, 1
		case "memory_bound":
			o.CoresPerSocket, o.ThreadsPerCore = 1, 1
		case "multithread":
			o.ThreadsPerCore, o.NtasksPerCore = NoVal, int(Infinite16)
		case "nomultithread":
			o.ThreadsPerCore = 1
		default:
			o.Log.Errorf("unrecognized --hint argument \"%s\", see --hint=help", tok)
			return exitErr(1)
		}
	}
	env.Set("SLURM_HINT", o.Hint, true)
	return nil
}

func profileString(p uint32) string {
	if p == 0xffffffff {
		return "All"
	}
	if p == 0x01 {
		return "None"
	}
	var parts []string
	for _, b := range []struct {
		bit  uint32
		name string
	}{{0x02, "Energy"}, {0x08, "Lustre"}, {0x10, "Network"}, {0x04, "Task"}} {
		if p&b.bit != 0 {
			parts = append(parts, b.name)
		}
	}
	return strings.Join(parts, ",")
}

// BatchJobDesc builds the REQUEST_SUBMIT_BATCH_JOB descriptor the way
// sbatch's main does after option processing: its environment additions,
// then CreateJobDesc, _fill_job_desc_from_opts, the GPU variables
// (SetGPUEnv), the script and the sbatch_env_t variables. AllocSID stays
// NO_VAL (the submit call fills getsid(0)); the packer's UseDefault bits
// are not set here.
func (o *Opts) BatchJobDesc(in *BatchInput, be *BatchEnv) (*msg.JobDesc, error) {
	j, out, err := o.BatchComponent(in)
	if err != nil {
		return nil, err
	}
	o.SetGPUEnv(out, -1)
	j.Script = msg.Str(in.Script)
	be.Write(out, -1)
	j.Environment = nstrs(out.List())
	return j, nil
}

// BatchComponent is one component of a batch job: sbatch's environment
// additions, CreateJobDesc and _fill_job_desc_from_opts. It returns the
// descriptor without script and the job environment, to which the caller
// adds SetGPUEnv and BatchEnv.Write (all on the first component for a
// het job) before storing it in Environment.
func (o *Opts) BatchComponent(in *BatchInput) (*msg.JobDesc, *Env, error) {
	env := in.Env
	if o.GetUserEnvTime < 0 {
		rl := in.Rlimits
		if rl == nil {
			rl = ProcessRlimits()
		}
		names, user, bad := propagated(o.Propagate, in.PropagateRlimits, in.PropagateRlimitsExcept)
		if bad != "" {
			o.Log.Errorf("Bad rlimit name: %s", bad)
			o.Log.Errorf("--propagate=%s is not valid.", o.Propagate)
			return nil, nil, exitErr(1)
		}
		for _, r := range rl {
			if !names[r.Name] {
				continue
			}
			v := strconv.FormatUint(r.Value, 10)
			if user {
				v = "U" + v
			}
			env.Set("SLURM_RLIMIT_"+r.Name, v, true)
		}
	}
	// With --export-file the submitting environment is not passed on.
	if o.ExportFile != "" {
		*env = Env{}
	}
	env.Set("SLURM_PRIO_PROCESS", strconv.Itoa(in.Priority), true)
	if o.Cwd != "" {
		env.Set("SLURM_SUBMIT_DIR", o.Cwd, true)
	}
	env.Set("SLURM_SUBMIT_HOST", in.Hostname, true)
	if _, ok := env.Get("SLURM_UMASK"); !ok {
		m := in.Umask
		if o.Umask >= 0 {
			m = o.Umask
		}
		env.Set("SLURM_UMASK", fmt.Sprintf("0%d%d%d", (m>>6)&7, (m>>3)&7, m&7), true)
	}

	j, err := o.CreateJobDesc(in.SubmitLine)
	if err != nil {
		return nil, nil, err
	}

	// _fill_job_desc_from_opts.
	if o.JobName == nil {
		j.Name = msg.Str("sbatch")
	}
	j.ArrayInx = o.sopt('a', o.ArrayInx)
	j.BatchFeatures = o.sopt(optBatch, o.BatchFeatures)
	j.Container = o.sopt(optContainer, o.Container)
	j.WaitAllNodes = o.WaitAllNodes

	out := NewEnv(nil)
	if o.ExportFile != "" {
		vars, err := o.readExportFile(in)
		if err != nil {
			return nil, nil, err
		}
		out.Merge(vars)
	}
	getUserEnv := o.GetUserEnvTime
	switch {
	case o.Export == nil || strings.EqualFold(*o.Export, "ALL"):
		out.Merge(env.List())
	case strings.EqualFold(*o.Export, "NONE"):
		out = NewEnv(nil)
		for _, kv := range env.List() {
			if strings.HasPrefix(kv, "SLURM") {
				out.Merge([]string{kv})
			}
		}
		getUserEnv = 0
	default:
		exportFilter(out, env, *o.Export)
		getUserEnv = 0
	}
	if getUserEnv >= 0 {
		out.Set("SLURM_GET_USER_ENV", "1", true)
	}
	if o.Distribution&distStateBase == distArbitrary {
		out.Set("SLURM_ARBITRARY_NODELIST", j.ReqNodes.Value, true)
	}
	j.Argv = nstrs(in.ScriptArgv)
	j.StdErr = nstr(o.Efname)
	j.StdIn = nstr(o.Ifname)
	j.StdOut = nstr(o.Ofname)
	if o.Requeue != pack.NoVal {
		j.Requeue = uint16(o.Requeue)
	}
	return j, out, nil
}

// exportFilter is env_merge_filter: the named variables (NAME or
// NAME=value, ALL for everything) plus every SLURM_* variable.
func exportFilter(out, env *Env, spec string) {
	for _, tok := range splitQuoted(spec) {
		switch {
		case strings.EqualFold(tok, "ALL"):
			out.Merge(env.List())
		case strings.Contains(tok, "="):
			out.Merge([]string{tok})
		default:
			if v, ok := env.Get(tok); ok {
				out.Set(tok, v, true)
			}
		}
	}
	for _, kv := range env.List() {
		if strings.HasPrefix(kv, "SLURM_") {
			out.Merge([]string{kv})
		}
	}
}

// splitQuoted splits at commas outside single or double quotes
// (find_quote_token), keeping the quotes.
func splitQuoted(s string) []string {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ',':
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func (o *Opts) readExportFile(in *BatchInput) ([]string, error) {
	read := in.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, err := read(o.ExportFile)
	if err != nil {
		o.Log.Errorf("Could not open file %s: %v", o.ExportFile, err)
		return nil, exitErr(1)
	}
	// env_array_from_file: entries end with NUL (only); an empty entry
	// ends the list.
	var vars []string
	for _, kv := range strings.Split(string(data), "\x00") {
		if kv == "" {
			break
		}
		if strings.Contains(kv, "=") {
			vars = append(vars, kv)
		}
	}
	return vars, nil
}

// propagated returns which limits to send and whether they carry the "U"
// mark of a user request (--propagate), from --propagate or slurm.conf
// (parse_rlimits: ALL, NONE or names with or without RLIMIT_, case
// sensitive). bad is the first unknown name.
func propagated(user string, conf, except []string) (names map[string]bool, mark bool, bad string) {
	parse := func(list []string, flag bool) (map[string]bool, string) {
		out := map[string]bool{}
		if len(list) == 1 && (list[0] == "ALL" || list[0] == "NONE") {
			for _, r := range RlimitNames {
				out[r.Name] = flag == (list[0] == "ALL")
			}
			return out, ""
		}
		for _, r := range RlimitNames {
			out[r.Name] = !flag
		}
		for _, n := range list {
			n = strings.TrimPrefix(n, "RLIMIT_")
			if _, ok := out[n]; !ok {
				return nil, n
			}
			out[n] = flag
		}
		return out, ""
	}
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	}
	if user != "" {
		m, b := parse(split(user), true)
		return m, true, b
	}
	if len(except) > 0 {
		m, b := parse(split(strings.Join(except, ",")), false)
		return m, false, b
	}
	if len(conf) == 0 {
		conf = []string{"ALL"}
	}
	m, b := parse(split(strings.Join(conf, ",")), true)
	return m, false, b
}

// validateSpecCores is _validate_spec_cores_options.
func (o *Opts) validateSpecCores() error {
	if !o.IsSet('S') && !o.IsSet(optThreadSpec) {
		return nil
	}
	cli := func(v int) bool { s := o.SetBy(v); return s == FromCLI || s == FromScript }
	if cli('S') && cli(optThreadSpec) {
		o.Log.Fatalf("-S/--core-spec and --thred-spec options are mutually exclusive")
		return exitErr(1)
	}
	if !o.AllowSpecResources {
		what := "-S"
		if o.CoreSpec&CoreSpecThread != 0 {
			what = "--thread-spec"
		}
		o.Log.Errorf("Ignoring %s since it's not allowed by configuration (AllowSpecResourcesUsage = No)", what)
	}
	return nil
}

// cpuFreqString is the SLURM_CPU_FREQ_REQ text cpu_freq_set_env writes.
func cpuFreqString(mn, mx, gov uint32) string {
	const noVal = 0xfffffffe
	name := func(v uint32) string {
		switch v {
		case 0x80000001:
			return "Low"
		case 0x80000002:
			return "Medium"
		case 0x80000003:
			return "High"
		case 0x80000004:
			return "HighM1"
		case 0x88000000:
			return "Conservative"
		case 0x84000000:
			return "OnDemand"
		case 0x82000000:
			return "Performance"
		case 0x81000000:
			return "PowerSave"
		case 0x80800000:
			return "UserSpace"
		case 0x80400000:
			return "SchedUtil"
		}
		return strconv.FormatUint(uint64(v), 10)
	}
	var s string
	switch {
	case mn != noVal && mx != noVal:
		s = name(mn) + "-" + name(mx)
	case mx != noVal:
		s = name(mx)
	}
	if gov != noVal {
		if s != "" {
			s += ":"
		}
		s += name(gov)
	}
	return s
}
