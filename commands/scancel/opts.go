package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/getopt"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
)

// Special values of the parsed id arrays, as scancel uses them.
const (
	noVal       = 0xfffffffe
	infinite    = 0xffffffff
	batchScript = 0xfffffffb // SLURM_BATCH_SCRIPT: "no step given"
	noVal16     = 0xfffe
	jobEnd      = 12 // JOB_END: no state filter
)

// jobSpec is one parsed command-line id: job, array task (noVal, infinite
// for "_*", or an index) and step (batchScript when none).
type jobSpec struct {
	jobID, arrayID, stepID uint32
	found, pend            bool
}

// options is scancel's opt_t.
type options struct {
	account, jobName, nodelist, partition  string
	qos, reservation, sibling, wckey       string
	userName                               string
	hasAccount, hasName, hasNodes, hasPart bool
	hasQOS, hasResv, hasWCKey, hasUser     bool
	batch, ctld, full, hurry, interactive  bool
	signal                                 uint16
	state                                  uint32
	userID                                 uint32
	verbose                                int
	jobs                                   []jobSpec
	jobList                                []string // id strings for the no-filter path
}

// exit ends scancel with a status, from deep inside option parsing as
// Slurm's exit() does.
type exit struct{ code int }

const (
	optCtld = 0x100 + iota
	optHelp
	optMe
	optSibling
	optUsage
	optWCKey
)

var longOptions = []getopt.Option{
	{Name: "account", HasArg: getopt.RequiredArgument, Val: 'A'},
	{Name: "batch", HasArg: getopt.NoArgument, Val: 'b'},
	{Name: "ctld", HasArg: getopt.NoArgument, Val: optCtld},
	{Name: "full", HasArg: getopt.NoArgument, Val: 'f'},
	{Name: "help", HasArg: getopt.NoArgument, Val: optHelp},
	{Name: "hurry", HasArg: getopt.NoArgument, Val: 'H'},
	{Name: "interactive", HasArg: getopt.NoArgument, Val: 'i'},
	{Name: "cluster", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "clusters", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "jobname", HasArg: getopt.RequiredArgument, Val: 'n'},
	{Name: "me", HasArg: getopt.NoArgument, Val: optMe},
	{Name: "name", HasArg: getopt.RequiredArgument, Val: 'n'},
	{Name: "nodelist", HasArg: getopt.RequiredArgument, Val: 'w'},
	{Name: "partition", HasArg: getopt.RequiredArgument, Val: 'p'},
	{Name: "qos", HasArg: getopt.RequiredArgument, Val: 'q'},
	{Name: "quiet", HasArg: getopt.NoArgument, Val: 'Q'},
	{Name: "reservation", HasArg: getopt.RequiredArgument, Val: 'R'},
	{Name: "sibling", HasArg: getopt.RequiredArgument, Val: optSibling},
	{Name: "signal", HasArg: getopt.RequiredArgument, Val: 's'},
	{Name: "state", HasArg: getopt.RequiredArgument, Val: 't'},
	{Name: "usage", HasArg: getopt.NoArgument, Val: optUsage},
	{Name: "user", HasArg: getopt.RequiredArgument, Val: 'u'},
	{Name: "verbose", HasArg: getopt.NoArgument, Val: 'v'},
	{Name: "version", HasArg: getopt.NoArgument, Val: 'V'},
	{Name: "wckey", HasArg: getopt.RequiredArgument, Val: optWCKey},
}

func (s *scancel) errorf(format string, a ...any) {
	fmt.Fprintf(s.stderr, "scancel: error: "+format+"\n", a...)
}

// verbosef is Slurm's verbose(): shown from one -v on.
func (s *scancel) verbosef(format string, a ...any) {
	if s.opt.verbose >= 1 {
		fmt.Fprintf(s.stderr, "scancel: "+format+"\n", a...)
	}
}

// infof is Slurm's info(): shown unless -Q.
func (s *scancel) infof(format string, a ...any) {
	if s.opt.verbose >= 0 {
		fmt.Fprintf(s.stderr, "scancel: "+format+"\n", a...)
	}
}

// boolEnv parses SCANCEL_BATCH-style variables ("true"/"T"/"false"/"F").
func (s *scancel) boolEnv(name string, dst *bool) {
	v, ok := s.getenv(name)
	if !ok {
		return
	}
	switch strings.ToLower(v) {
	case "true", "t":
		*dst = true
	case "false", "f":
		*dst = false
	default:
		s.errorf("Unrecognized %s value: %s", name, v)
	}
}

func (s *scancel) stateName(name string, env bool) uint32 {
	st, ok := slurmcli.JobStateNum(name)
	if ok {
		return st
	}
	if env {
		fmt.Fprintf(s.stderr, "Unrecognized SCANCEL_STATE value: %s\n", name)
	} else {
		fmt.Fprintf(s.stderr, "Invalid job state specified: %s\n", name)
	}
	fmt.Fprintf(s.stderr, "Valid job states are PENDING, RUNNING, and SUSPENDED\n")
	panic(exit{1})
}

func (s *scancel) parseEnv() {
	o := &s.opt
	if v, ok := s.getenv("SCANCEL_ACCOUNT"); ok {
		o.account, o.hasAccount = strings.ToLower(v), true
	}
	s.boolEnv("SCANCEL_BATCH", &o.batch)
	if _, ok := s.getenv("SCANCEL_CTLD"); ok {
		o.ctld = true
	}
	s.boolEnv("SCANCEL_FULL", &o.full)
	if _, ok := s.getenv("SCANCEL_HURRY"); ok {
		o.hurry = true
	}
	s.boolEnv("SCANCEL_INTERACTIVE", &o.interactive)
	if v, ok := s.getenv("SCANCEL_NAME"); ok {
		o.jobName, o.hasName = v, true
	}
	if v, ok := s.getenv("SCANCEL_PARTITION"); ok {
		o.partition, o.hasPart = v, true
	}
	if v, ok := s.getenv("SCANCEL_QOS"); ok {
		o.qos, o.hasQOS = strings.ToLower(v), true
	}
	if v, ok := s.getenv("SCANCEL_STATE"); ok {
		o.state = s.stateName(v, true)
	}
	if v, ok := s.getenv("SCANCEL_USER"); ok {
		o.userName, o.hasUser = v, true
	}
	if v, ok := s.getenv("SCANCEL_VERBOSE"); ok {
		switch strings.ToLower(v) {
		case "true", "t":
			o.verbose = 1
		case "false", "f":
			o.verbose = 0
		default:
			s.errorf("Unrecognized SCANCEL_VERBOSE value: %s", v)
		}
	}
	if v, ok := s.getenv("SCANCEL_WCKEY"); ok {
		o.wckey, o.hasWCKey = v, true
	}
	if v, ok := s.getenv("SLURM_CLUSTERS"); ok {
		s.clusters(v)
	}
}

// clusters is -M: it needs slurmdbd, which goslurm's commands do not talk to.
func (s *scancel) clusters(names string) {
	s.errorf("cluster selection (%s) needs slurmdbd, which this scancel does not support yet", names)
	panic(exit{1})
}

func (s *scancel) parseArgs(args []string) {
	o := &s.opt
	_, posix := s.getenv("POSIXLY_CORRECT")
	g := getopt.New(args, "A:bfHiM:n:p:Qq:R:s:t:u:vVw:", longOptions, !posix, s.stderr)
	for {
		c := g.Next()
		if c == -1 {
			break
		}
		switch c {
		case '?':
			fmt.Fprintf(s.stderr, "Try \"scancel --help\" for more information\n")
			panic(exit{1})
		case 'A':
			o.account, o.hasAccount = strings.ToLower(g.Arg), true
		case 'b':
			o.batch = true
		case optCtld:
			o.ctld = true
		case 'f':
			o.full = true
		case 'H':
			o.hurry = true
		case 'i':
			o.interactive = true
		case 'M':
			s.clusters(g.Arg)
		case optMe:
			o.userName, o.hasUser = strconv.Itoa(os.Getuid()), true
		case 'n':
			o.jobName, o.hasName = g.Arg, true
		case 'p':
			o.partition, o.hasPart = g.Arg, true
		case 'Q':
			o.verbose = -1
		case 'q':
			o.qos, o.hasQOS = strings.ToLower(g.Arg), true
		case 'R':
			o.reservation, o.hasResv = g.Arg, true
		case 's':
			o.signal = sigNameToNum(g.Arg)
			if o.signal == 0 {
				fmt.Fprintf(s.stderr, "Unknown job signal: %s\n", g.Arg)
				panic(exit{1})
			}
		case 't':
			o.state = s.stateName(g.Arg, false)
		case 'u':
			o.userName, o.hasUser = g.Arg, true
		case 'v':
			o.verbose++
		case 'V':
			fmt.Fprintf(s.stdout, "slurm-wlm 22.05.8\n")
			panic(exit{0})
		case 'w':
			o.nodelist, o.hasNodes = g.Arg, true
		case optSibling:
			o.sibling = g.Arg
		case optWCKey:
			o.wckey, o.hasWCKey = g.Arg, true
		case optHelp:
			fmt.Fprint(s.stdout, helpText)
			panic(exit{0})
		case optUsage:
			fmt.Fprint(s.stdout, usageText)
			panic(exit{0})
		}
	}
	rest := g.Args[g.Optind:]
	if len(rest) > 0 {
		s.xlateIDs(rest)
	}
	if !s.verify() {
		panic(exit{1})
	}
}

// strtol parses a leading base-10 integer as C's strtol does (leading
// blanks, optional sign); it returns the value and the unparsed rest. No
// digits gives 0 and the whole string.
func strtol(str string) (int64, string) {
	i := 0
	for i < len(str) && (str[i] == ' ' || (str[i] >= '\t' && str[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(str) && (str[i] == '+' || str[i] == '-') {
		neg = str[i] == '-'
		i++
	}
	start := i
	var v int64
	overflow := false
	for i < len(str) && str[i] >= '0' && str[i] <= '9' {
		d := int64(str[i] - '0')
		if v > (1<<63-1-d)/10 {
			overflow = true
		} else {
			v = v*10 + d
		}
		i++
	}
	if i == start {
		return 0, str
	}
	if overflow {
		v = 1<<63 - 1
		if neg {
			return -1 << 63, str[i:]
		}
		return v, str[i:]
	}
	if neg {
		v = -v
	}
	return v, str[i:]
}

// xlateIDs parses the positional ids: "J", "J_T", "J_*", "J_[list]",
// "J.S", "J+O", comma-separated lists of them.
func (s *scancel) xlateIDs(rest []string) {
	o := &s.opt
	args := append([]string(nil), rest...)
	for i := 0; i < len(args); i++ {
		arg := args[i]
		jobID, next := strtol(arg)
		if jobID <= 0 {
			s.invalidID(arg)
		}
		spec := jobSpec{jobID: uint32(jobID), stepID: batchScript}
		switch {
		case strings.HasPrefix(next, "_["):
			end := strings.IndexByte(next[2:], ']')
			if end < 0 || 2+end+1 != len(next) {
				s.invalidID(arg)
			}
			hl, err := hostlist.Parse(next[1:])
			if err != nil {
				s.invalidID(arg)
			}
			for _, elem := range hl.Hosts() {
				t, _ := strtol(elem)
				if t < 0 {
					s.invalidID(arg)
				}
				o.jobs = append(o.jobs, jobSpec{jobID: uint32(jobID), arrayID: uint32(t), stepID: batchScript})
			}
			o.jobList = append(o.jobList, arg)
			continue
		case strings.HasPrefix(next, "_*"):
			spec.arrayID = infinite
			next = next[2:]
		case strings.HasPrefix(next, "_"):
			var t int64
			t, next = strtol(next[1:])
			if t < 0 {
				s.invalidID(arg)
			}
			spec.arrayID = uint32(t)
		case strings.HasPrefix(next, "+"):
			var t int64
			t, next = strtol(next[1:])
			if t < 0 {
				s.invalidID(arg)
			}
			spec.arrayID = noVal
		default:
			spec.arrayID = noVal
		}
		if strings.HasPrefix(next, ".") {
			var t int64
			t, next = strtol(next[1:])
			if t < 0 {
				s.invalidID(arg)
			}
			spec.stepID = uint32(t)
		}
		o.jobs = append(o.jobs, spec)
		if strings.HasPrefix(next, ",") {
			// The id string sent is cut at the comma; the rest is the
			// next argument.
			cut := len(arg) - len(next)
			args = append(args[:i+1], append([]string{next[1:]}, args[i+1:]...)...)
			arg = arg[:cut]
		} else if next != "" {
			s.invalidID(arg)
		}
		o.jobList = append(o.jobList, arg)
	}
}

func (s *scancel) invalidID(arg string) {
	s.errorf("Invalid job id %s", arg)
	panic(exit{1})
}

func (s *scancel) verify() bool {
	o := &s.opt
	if o.hasUser {
		uid, ok := slurmcli.UIDFromString(o.userName)
		if !ok {
			s.errorf("Invalid user name: %s", o.userName)
			return false
		}
		o.userID = uid
	}
	if !o.hasAccount && len(o.jobs) == 0 && !o.hasName && !o.hasNodes &&
		!o.hasPart && !o.hasQOS && !o.hasResv && o.state == jobEnd &&
		!o.hasUser && !o.hasWCKey {
		s.errorf("No job identification provided")
		return false
	}
	return true
}

// hasDefaultOpt is true when only ids were given: then each id string goes
// to the controller as is, without loading the job list first.
func (o *options) hasDefaultOpt() bool {
	return !o.hasAccount && !o.batch && !o.interactive && !o.hasName &&
		!o.hasPart && !o.hasQOS && !o.hasResv && o.signal == noVal16 &&
		o.state == jobEnd && o.userID == 0 && !o.hasUser && !o.hasWCKey && !o.hasNodes
}

func (o *options) hasJobSteps() bool {
	for _, j := range o.jobs {
		if j.stepID != batchScript {
			return true
		}
	}
	return false
}

var signalNames = []struct {
	name string
	num  uint16
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9}, {"ALRM", 14},
	{"TERM", 15}, {"USR1", 10}, {"USR2", 12}, {"URG", 23}, {"CONT", 18},
	{"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}

func isBlank(str string) bool {
	return strings.TrimLeft(str, " \t\n\v\f\r") == ""
}

// sigNameToNum is sig_name2num: a number or a signal name with or without
// "SIG" (any case); 0 when unknown. The result is truncated to 16 bits as
// scancel stores it.
func sigNameToNum(name string) uint16 {
	v, rest := strtol(name)
	if rest != name {
		if isBlank(rest) {
			return uint16(int32(v))
		}
		return 0
	}
	p := strings.TrimLeft(name, " \t\n\v\f\r")
	if len(p) >= 3 && strings.EqualFold(p[:3], "SIG") {
		p = p[3:]
	}
	for _, sg := range signalNames {
		if len(p) >= len(sg.name) && strings.EqualFold(p[:len(sg.name)], sg.name) && isBlank(p[len(sg.name):]) {
			return sg.num
		}
	}
	return 0
}
