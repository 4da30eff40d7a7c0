// Package cli is the scontrol command: option parsing, keyword dispatch
// and the subcommands that need no controller. It is a package (not just
// main) so tests can run it in-process through Main.
package cli

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/commands/internal/getopt"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

// UsageText is our help text, printed where scontrol prints its help (--help,
// "help", a missing argument). It is our own wording, not Slurm's: scripts
// depend on exit codes and messages, not on the help text.
//
//go:embed usage.txt
var UsageText string

const (
	// packageName and version are what "scontrol -V" prints.
	packageName = "slurm-wlm"
	version     = "22.05.8"
	// apiVersion is SLURM_API_VERSION for 22.05 (libslurm.so.38).
	apiVersion = 38 << 16

	// maxInputFields bounds the words of one interactive command line.
	maxInputFields = 128
)

// Long option values that have no short equivalent.
const (
	optHide = 0x102 + iota
	optLocal
	optSibling
	optFederation
)

var longOptions = []getopt.Option{
	{Name: "all", HasArg: getopt.NoArgument, Val: 'a'},
	{Name: "cluster", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "clusters", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "details", HasArg: getopt.NoArgument, Val: 'd'},
	{Name: "federation", HasArg: getopt.NoArgument, Val: optFederation},
	{Name: "future", HasArg: getopt.NoArgument, Val: 'F'},
	{Name: "help", HasArg: getopt.NoArgument, Val: 'h'},
	{Name: "hide", HasArg: getopt.NoArgument, Val: optHide},
	{Name: "local", HasArg: getopt.NoArgument, Val: optLocal},
	{Name: "oneliner", HasArg: getopt.NoArgument, Val: 'o'},
	{Name: "quiet", HasArg: getopt.NoArgument, Val: 'Q'},
	{Name: "sibling", HasArg: getopt.NoArgument, Val: optSibling},
	{Name: "uid", HasArg: getopt.RequiredArgument, Val: 'u'},
	{Name: "usage", HasArg: getopt.NoArgument, Val: 'h'},
	{Name: "verbose", HasArg: getopt.NoArgument, Val: 'v'},
	{Name: "version", HasArg: getopt.NoArgument, Val: 'V'},
}

// IO is the process environment Main runs in.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv looks up an environment variable.
	Getenv func(string) (string, bool)
	// ReadFile reads a file named on the command line (hostlist files).
	// It returns at most limit bytes.
	ReadFile func(name string, limit int) ([]byte, error)
	// WorkDir is where "update" writes the job resize scripts
	// (slurm_job_<id>_resize.sh/.csh); "" is the process's working
	// directory, as Slurm's relative file names mean.
	WorkDir string
}

// state is scontrol's global state, one per Main call.
type state struct {
	io       IO
	stdout   *bufio.Writer
	prog     string
	exitCode int
	exitFlag bool

	allFlag, detailFlag, futureFlag bool
	federationFlag, localFlag       bool
	siblingFlag, oneLiner           bool
	quietFlag                       int // 1 quiet, -1 verbose, 0 normal
	verbosity                       int
	uid                             int

	// Controller access, set up on first use (conn.go).
	conn   *slurmcli.Conn
	tf     *slurmcli.TimeFormatter
	clock  func() time.Time
	users  map[uint32]string
	groups map[uint32]string
	// nodes is the node table loaded for "show job -d" CPU ids.
	nodes *msg.NodeInfoResponse
	// lastNodeInx is where the last "show node NAME" search ended.
	lastNodeInx int
	sleeper     func(time.Duration)
}

func (s *state) getenv(k string) (string, bool) {
	if s.io.Getenv == nil {
		return "", false
	}
	return s.io.Getenv(k)
}

// errorf logs like Slurm's error(): "scontrol: error: ..." on stderr.
func (s *state) errorf(format string, a ...any) {
	fmt.Fprintf(s.io.Stderr, "scontrol: error: "+format+"\n", a...)
}

// fatalf logs like Slurm's fatal() and returns the exit code (1).
func (s *state) fatalf(format string, a ...any) int {
	fmt.Fprintf(s.io.Stderr, "scontrol: fatal: "+format+"\n", a...)
	return 1
}

// infof logs like Slurm's info(): "scontrol: ..." on stderr.
func (s *state) infof(format string, a ...any) {
	s.stdout.Flush()
	fmt.Fprintf(s.io.Stderr, "scontrol: "+format+"\n", a...)
}

// sleep waits between polls; tests replace it.
func (s *state) sleep(d time.Duration) {
	if s.sleeper != nil {
		s.sleeper(d)
		return
	}
	time.Sleep(d)
}

func (s *state) eprintf(format string, a ...any) {
	fmt.Fprintf(s.io.Stderr, format, a...)
}

// exitError, raised with panic, ends Main early with an exit code, where
// scontrol calls exit() deep inside a command.
type exitError struct{ code int }

// Main runs scontrol with args (args[0] is the program name) and returns
// the exit code.
func Main(args []string, pio IO) (code int) {
	s := &state{io: pio, stdout: bufio.NewWriter(pio.Stdout), uid: -1}
	if len(args) == 0 {
		args = []string{"scontrol"}
	}
	s.prog = args[0]
	defer func() {
		s.stdout.Flush()
		if r := recover(); r != nil {
			e, ok := r.(exitError)
			if !ok {
				panic(r)
			}
			code = e.code
		}
	}()
	if _, ok := s.getenv("SCONTROL_ALL"); ok {
		s.allFlag = true
	}
	if v, ok := s.getenv("SLURM_CLUSTERS"); ok {
		return s.clusterUnsupported(v)
	}
	if _, ok := s.getenv("SCONTROL_FEDERATION"); ok {
		s.federationFlag = true
	}
	if _, ok := s.getenv("SCONTROL_FUTURE"); ok {
		s.futureFlag = true
	}
	if _, ok := s.getenv("SCONTROL_LOCAL"); ok {
		s.localFlag = true
	}
	_, sib1 := s.getenv("SCONTROL_SIB")
	_, sib2 := s.getenv("SCONTROL_SIBLING")
	if sib1 || sib2 {
		s.siblingFlag = true
	}

	argv := append([]string(nil), args...)
	_, posix := s.getenv("POSIXLY_CORRECT")
	g := getopt.New(argv, "adhM:FoQu:vV", longOptions, !posix, s.io.Stderr)
	for {
		if g.Optind < len(argv) && hasPrefixFold(argv[g.Optind], "setdebugflags", 8) {
			break // "-<flag>" arguments of setdebugflags are not options
		}
		c := g.Next()
		if c == -1 {
			break
		}
		switch c {
		case '?':
			s.eprintf("Try \"scontrol --help\" for more information\n")
			return 1
		case 'a':
			s.allFlag = true
		case 'd':
			s.detailFlag = true
		case 'F':
			s.futureFlag = true
		case 'h':
			s.usage()
			return s.exitCode
		case optFederation:
			s.federationFlag = true
		case optHide:
			s.allFlag, s.detailFlag = false, false
		case optLocal:
			s.localFlag = true
		case 'M':
			return s.clusterUnsupported(g.Arg)
		case 'o':
			s.oneLiner = true
		case 'Q':
			s.quietFlag = 1
		case optSibling:
			s.siblingFlag = true
		case 'u':
			uid, ok := lookupUID(g.Arg)
			if !ok {
				s.errorf("--uid=\"%s\" invalid", g.Arg)
				return s.exitCode
			}
			s.uid = uid
		case 'v':
			s.quietFlag = -1
			s.verbosity++
		case 'V':
			s.printVersion()
			return s.exitCode
		}
	}

	if g.Optind < len(argv) {
		s.processCommand(argv[g.Optind:])
	} else {
		s.interactive()
	}
	return s.exitCode
}

// clusterUnsupported handles -M/--cluster and SLURM_CLUSTERS, which need
// slurmdbd.
func (s *state) clusterUnsupported(names string) int {
	s.errorf("cluster selection (%s) needs slurmdbd, which this scontrol does not support yet", names)
	return 1
}

// lookupUID resolves a user name or numeric uid like Slurm's
// uid_from_string.
func lookupUID(name string) (int, bool) {
	if u, err := user.Lookup(name); err == nil {
		if id, err := strconv.Atoi(u.Uid); err == nil {
			return id, true
		}
	}
	id, err := strconv.ParseInt(name, 10, 64)
	if err != nil || id < 0 || id > 1<<31-1 {
		return 0, false
	}
	if _, err := user.LookupId(name); err != nil {
		return 0, false
	}
	return int(id), true
}

func (s *state) usage() { s.stdout.WriteString(UsageText) }

func (s *state) printVersion() {
	fmt.Fprintf(s.stdout, "%s %s\n", packageName, version)
	if s.quietFlag == -1 {
		fmt.Fprintf(s.stdout, "slurm_api_version: %d, %d.%d.%d\n", apiVersion,
			apiVersion>>16&0xff, apiVersion>>8&0xff, apiVersion&0xff)
	}
}

// interactive reads commands from stdin until EOF, "exit" or "quit". The
// prompt and the echoed line match readline's output when stdin is not a
// terminal.
func (s *state) interactive() {
	if s.io.Stdin == nil {
		s.stdout.WriteString("scontrol: \n")
		return
	}
	in := bufio.NewReader(s.io.Stdin)
	var last string
	for {
		s.stdout.WriteString("scontrol: ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			s.stdout.WriteString("\n")
			return
		}
		line = strings.TrimSuffix(line, "\n")
		s.stdout.WriteString(line + "\n")
		if line == "!!" {
			line = last
		} else {
			last = line
		}
		fields, ok := s.splitLine(line)
		if !ok {
			s.stdout.WriteString("\n")
			return
		}
		s.processCommand(fields)
		if s.exitFlag {
			return
		}
	}
}

// splitLine breaks an interactive line into words: blanks separate words
// except inside quotes, and the quotes stay part of the word (as scontrol
// does).
func (s *state) splitLine(line string) ([]string, bool) {
	var out []string
	for i := 0; i < len(line); i++ {
		if isSpace(line[i]) {
			continue
		}
		if len(out)+1 > maxInputFields {
			s.exitCode = 1
			s.eprintf("%s: can not process over %d words\n", s.prog, maxInputFields-1)
			return nil, false
		}
		start := i
		dq, sq := false, false
		for i++; i < len(line); i++ {
			c := line[i]
			if c == '"' {
				dq = !dq
				continue
			}
			if c == '\'' {
				sq = !sq
				continue
			}
			if dq || sq {
				continue
			}
			if isSpace(c) {
				break
			}
		}
		out = append(out, line[start:i])
	}
	return out, true
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
