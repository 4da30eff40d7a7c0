package jobopt

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/getopt"
)

// Sentinels returned when --help, --usage or --version is processed: the
// command prints its text and exits 0 at once (later options are not
// looked at, as in Slurm).
var (
	ErrHelp    = errors.New("help requested")
	ErrUsage   = errors.New("usage requested")
	ErrVersion = errors.New("version requested")
)

// Table returns the long options and the short optstring (without the
// leading '+') of cmd, in Slurm's table order.
func Table(cmd Command) ([]getopt.Option, string) {
	var long []getopt.Option
	var short strings.Builder
	for _, s := range table {
		if s.Cmds&cmd == 0 {
			continue
		}
		long = append(long, getopt.Option{Name: s.Name, HasArg: s.HasArg, Val: s.Val})
		if s.Val < optFirstLong {
			short.WriteByte(byte(s.Val))
			switch s.HasArg {
			case getopt.RequiredArgument:
				short.WriteString(":")
			case getopt.OptionalArgument:
				short.WriteString("::")
			}
		}
	}
	return long, short.String()
}

func (o *Opts) spec(val int) (Spec, bool) {
	for _, t := range [][]Spec{table, envOnly} {
		for _, s := range t {
			if s.Val == val && s.Cmds&o.Cmd != 0 {
				return s, true
			}
		}
	}
	return Spec{}, false
}

// Apply processes one option value from src (slurm_process_option). In
// the late pass (late true) options sbatch handles early (help, verbose,
// quiet, wrap, ...) are skipped unless they come from the environment.
// Flag options given a value through the environment are set by "", "yes"
// or a non-zero number and reset by anything else.
func (o *Opts) Apply(val int, arg string, has bool, src Source, late bool) error {
	if val == getopt.Unknown {
		fmt.Fprintf(o.Log.W, "Try \"%s --help\" for more information\n", o.Cmd.Name())
		return exitErr(ExitOption)
	}
	s, ok := o.spec(val)
	if !ok {
		return fmt.Errorf("jobopt: option value %d not in %s's table", val, o.Cmd.Name())
	}
	if src != FromEnv && o.Cmd == Sbatch && late && s.Early {
		return nil
	}
	if has {
		switch s.HasArg {
		case getopt.NoArgument:
			if !envFlagSet(arg) {
				if r := resetters[val]; r != nil {
					r(o)
				}
				o.unset(val)
				return nil
			}
			if val != 'v' {
				has, arg = false, ""
			}
		case getopt.OptionalArgument:
			if arg == "" {
				has = false
			}
		}
	}
	switch val {
	case 'h':
		return ErrHelp
	case optUsage:
		return ErrUsage
	case 'V':
		return ErrVersion
	}
	set := setters[val]
	if set == nil && o.Custom != nil {
		set = func(o *Opts, arg string, has bool) error { return o.Custom(s.Name, arg, has) }
	}
	if set == nil {
		o.Log.Errorf("--%s is not supported by goslurm's %s yet", s.Name, o.Cmd.Name())
		return exitErr(ExitOption)
	}
	if err := set(o, arg, has); err != nil {
		return err
	}
	o.set[val] = src
	return nil
}

func envFlagSet(v string) bool {
	if v == "" || strings.EqualFold(v, "yes") {
		return true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n != 0
}

// ParseArgs runs getopt over args (args[0] is the program name used in
// getopt's messages) and applies each option from src; it stops at the
// first non-option and returns its index.
func (o *Opts) ParseArgs(args []string, src Source, late bool, stderr io.Writer) (int, error) {
	long, short := Table(o.Cmd)
	p := getopt.New(args, short, long, false, stderr)
	for {
		c := p.Next()
		if c == getopt.Done {
			return p.Optind, nil
		}
		if err := o.Apply(c, p.Arg, p.HasValue, src, late); err != nil {
			return p.Optind, err
		}
	}
}

// EnvVar maps an input environment variable to the option it sets.
type EnvVar struct {
	Name string
	Val  int
}

// SbatchEnv is sbatch's input environment table (src/sbatch/opt.c), in
// the order it is applied.
var SbatchEnv = []EnvVar{
	{"SBATCH_ACCOUNT", 'A'}, {"SBATCH_ARRAY_INX", 'a'}, {"SBATCH_ACCTG_FREQ", optAcctgFreq},
	{"SBATCH_BATCH", optBatch}, {"SBATCH_BURST_BUFFER", optBurstBufferSpec},
	{"SBATCH_CLUSTER_CONSTRAINT", optClusterConstraint}, {"SBATCH_CLUSTERS", 'M'},
	{"SLURM_CLUSTERS", 'M'}, {"SBATCH_CONTAINER", optContainer}, {"SBATCH_CONSTRAINT", 'C'},
	{"SBATCH_CORE_SPEC", 'S'}, {"SBATCH_CPU_FREQ_REQ", optCpuFreq},
	{"SBATCH_CPUS_PER_GPU", optCpusPerGpu}, {"SBATCH_DEBUG", 'v'},
	{"SBATCH_DELAY_BOOT", optDelayBoot}, {"SBATCH_DISTRIBUTION", 'm'},
	{"SBATCH_EXCLUSIVE", optExclusive}, {"SBATCH_EXPORT", optExport},
	{"SBATCH_GET_USER_ENV", optGetUserEnv}, {"SBATCH_GRES", optGres},
	{"SBATCH_GRES_FLAGS", optGresFlags}, {"SBATCH_GPUS", 'G'}, {"SBATCH_GPU_BIND", optGpuBind},
	{"SBATCH_GPU_FREQ", optGpuFreq}, {"SBATCH_GPUS_PER_NODE", optGpusPerNode},
	{"SBATCH_GPUS_PER_SOCKET", optGpusPerSocket}, {"SBATCH_GPUS_PER_TASK", optGpusPerTask},
	{"SLURM_HINT", optHint}, {"SBATCH_HINT", optHint}, {"SBATCH_JOB_NAME", 'J'},
	{"SBATCH_MEM_BIND", optMemBind}, {"SBATCH_MEM_PER_CPU", optMemPerCpu},
	{"SBATCH_MEM_PER_GPU", optMemPerGpu}, {"SBATCH_MEM_PER_NODE", optMem},
	{"SBATCH_NETWORK", optNetwork}, {"SBATCH_NO_KILL", 'k'}, {"SBATCH_NO_REQUEUE", optNoRequeue},
	{"SBATCH_OPEN_MODE", optOpenMode}, {"SBATCH_OVERCOMMIT", 'O'}, {"SBATCH_PARTITION", 'p'},
	{"SBATCH_POWER", optPower}, {"SBATCH_PROFILE", optProfile}, {"SBATCH_QOS", 'q'},
	{"SBATCH_REQ_SWITCH", optSwitchReq}, {"SBATCH_REQUEUE", optRequeue},
	{"SBATCH_RESERVATION", optReservation}, {"SBATCH_SIGNAL", optSignal},
	{"SBATCH_SPREAD_JOB", optSpreadJob}, {"SBATCH_THREAD_SPEC", optThreadSpec},
	{"SBATCH_THREADS_PER_CORE", optThreadspercore}, {"SBATCH_TIMELIMIT", 't'},
	{"SBATCH_USE_MIN_NODES", optUseMinNodes}, {"SBATCH_WAIT", 'W'},
	{"SBATCH_WAIT_ALL_NODES", optWaitAllNodes}, {"SBATCH_WAIT4SWITCH", optSwitchWait},
	{"SBATCH_WCKEY", optWckey}, {"SBATCH_ERROR", 'e'}, {"SBATCH_INPUT", 'i'}, {"SBATCH_OUTPUT", 'o'},
}

// SbatchEarlyEnv is read before sbatch's first pass (_opt_early_env), so
// it is in force when #PBS lines are considered.
var SbatchEarlyEnv = []EnvVar{{"SBATCH_IGNORE_PBS", optIgnorePbs}}

// ApplyEnv applies the variables of table that are set.
func (o *Opts) ApplyEnv(table []EnvVar) error {
	for _, e := range table {
		v, ok := o.getenv(e.Name)
		if !ok {
			continue
		}
		if err := o.Apply(e.Val, v, true, FromEnv, true); err != nil {
			return err
		}
	}
	return nil
}

// ApplyDirectives feeds a script's directive words to the option parser
// (argv[0] is the command name, as Slurm passes it); a word that is not an
// option ends with "Invalid directive found in batch script".
func (o *Opts) ApplyDirectives(words []string, stderr io.Writer) error {
	args := append([]string{o.Cmd.Name()}, words...)
	n, err := o.ParseArgs(args, FromScript, true, stderr)
	if err != nil {
		return err
	}
	if n < len(args) {
		o.Log.Errorf("Invalid directive found in batch script: %s", args[n])
		return exitErr(ExitOption)
	}
	return nil
}

// HetEnvTable is table as srun reads it for het job component group:
// each variable, then its _PACK_GROUP_<group> and _HET_GROUP_<group>
// forms (the job id variables have none), so a component's own value
// wins.
func HetEnvTable(table []EnvVar, group int) []EnvVar {
	out := make([]EnvVar, 0, 3*len(table))
	for _, e := range table {
		out = append(out, e)
		if e.Name == "SLURM_JOBID" || e.Name == "SLURM_JOB_ID" {
			continue
		}
		out = append(out, EnvVar{Name: fmt.Sprintf("%s_PACK_GROUP_%d", e.Name, group), Val: e.Val},
			EnvVar{Name: fmt.Sprintf("%s_HET_GROUP_%d", e.Name, group), Val: e.Val})
	}
	return out
}
