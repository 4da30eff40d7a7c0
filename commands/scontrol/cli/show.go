package cli

import (
	"errors"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// fileLimit is the most of a hostlist file scontrol reads (1 MiB); the
// rest is ignored.
const fileLimit = 1024 * 1024

// showEntity is one "show" entity, in scontrol's matching order.
type showEntity struct {
	names []string
	min   int
	run   func(s *state, args []string, val *string)
}

var showEntities []showEntity

func init() {
	todo := func(s *state, args []string, _ *string) { notImplemented(s, args[:2]) }
	e := func(min int, run func(*state, []string, *string), names ...string) showEntity {
		return showEntity{names: names, min: min, run: run}
	}
	showEntities = []showEntity{
		e(1, todo, "aliases"),
		e(2, todo, "bbstat", "dwstat"),
		e(2, todo, "burstbuffer"),
		e(2, todo, "assoc_mgr", "cache"),
		e(1, showConfig, "config"),
		e(1, showDaemons, "daemons"),
		e(1, todo, "Federations"),
		e(1, todo, "FrontendName"),
		e(5, showHostnames, "hostnames"),
		e(5, func(s *state, a []string, v *string) { s.encodeHostlist(v, false) }, "hostlist"),
		e(9, func(s *state, a []string, v *string) { s.encodeHostlist(v, true) }, "hostlistsorted"),
		e(1, showJob, "jobs", "jobid"),
		e(2, showLicenses, "licenses"),
		e(1, showNodes, "nodes"),
		e(2, showPartitions, "partitions", "partitionname"),
		e(1, showReservations, "reservations", "reservationname"),
		e(2, todo, "slurmd"),
		e(2, showSteps, "steps"),
		e(1, showTopology, "topology"),
	}
}

// cmdShow is "show ENTITY [ID]" (also "show ENTITY=ID").
func cmdShow(s *state, args []string) {
	if len(args) < 2 {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too few arguments for keyword:%s\n", args[0])
		}
		return
	}
	// Entities that take options of their own; scontrol tests only
	// their first two characters here.
	allowOpt := hasPrefixFold(args[1], "assoc_mgr", 2) ||
		hasPrefixFold(args[1], "bbstat", 2) ||
		hasPrefixFold(args[1], "dwstat", 2)
	if len(args) > 3 && !allowOpt {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too many arguments for keyword:%s\n", args[0])
		}
		return
	}
	tag := args[1]
	tagLen := len(tag)
	var val *string
	if i := strings.IndexByte(tag, '='); i >= 0 {
		tagLen = i
		v := tag[i+1:]
		val = &v
	} else if len(args) == 3 {
		v := args[2]
		val = &v
	}
	for _, ent := range showEntities {
		for _, n := range ent.names {
			if hasPrefixFold(tag, n, max(tagLen, ent.min)) {
				ent.run(s, args, val)
				return
			}
		}
	}
	s.exitCode = 1
	if s.quietFlag != 1 {
		s.eprintf("invalid entity:%s for keyword:%s \n", tag, args[0])
	}
}

func showDaemons(s *state, args []string, val *string) {
	if val != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too many arguments for keyword:%s\n", args[0])
		}
		return
	}
	s.printDaemons()
}

// parseHostlist parses expr, logging Slurm's messages; ok is false after
// "Invalid hostlist". A fatal error ends scontrol.
func (s *state) parseHostlist(expr string) (*hostlist.Hostlist, bool) {
	hl, err := hostlist.ParseLog(expr, func(msg string) { s.errorf("%s", msg) })
	if err != nil {
		if errors.Is(err, hostlist.ErrTooManyRanges) {
			s.stdout.Flush()
			panic(exitError{s.fatalf("%s", err.Error())})
		}
		s.eprintf("Invalid hostlist: %s\n", expr)
		return nil, false
	}
	return hl, true
}

// showHostnames prints one host per line. Without an argument it uses
// $SLURM_NODELIST. Errors never change the exit code, as in scontrol.
func showHostnames(s *state, _ []string, val *string) {
	var list string
	if val != nil {
		list = *val
	} else if v, ok := s.getenv("SLURM_NODELIST"); ok {
		list = v
	} else {
		s.errorf("host list is empty")
		return
	}
	hl, ok := s.parseHostlist(list)
	if !ok {
		return
	}
	// Where Slurm's own host count and ranges disagree (only for numbers
	// at the top of the 64-bit range) real scontrol crashes; we print the
	// hosts it would have printed and carry on.
	for _, h := range hl.Hosts() {
		s.stdout.WriteString(h)
		s.stdout.WriteByte('\n')
	}
}

// encodeHostlist prints the ranged form of a list of names or of a file
// (an argument starting with '/') holding names separated by commas or
// newlines.
func (s *state) encodeHostlist(val *string, sorted bool) {
	if val == nil {
		s.exitCode = 1
		s.eprintf("invalid encode argument\n")
		s.usage()
		return
	}
	list := *val
	if strings.HasPrefix(list, "/") {
		data, err := s.readFile(list)
		if err != nil {
			s.exitCode = 1
			return
		}
		list = reformatHostfile(data)
	}
	hl, ok := s.parseHostlist(list)
	if !ok {
		s.exitCode = 1
		return
	}
	if sorted {
		// Byte-identical to real scontrol, including the hosts its
		// hostlist_coalesce loses by reading freed memory.
		hl.SortAsScontrol()
	}
	s.stdout.Write(hl.AppendRanged(nil))
	s.stdout.WriteByte('\n')
}

var errReported = errors.New("reported")

func (s *state) readFile(name string) ([]byte, error) {
	if s.io.ReadFile == nil {
		s.eprintf("Can not open %s\n", name)
		return nil, errReported
	}
	data, err := s.io.ReadFile(name, fileLimit)
	if err != nil {
		var oe *OpenError
		if errors.As(err, &oe) {
			s.eprintf("Can not open %s\n", name)
		} else {
			s.eprintf("Error reading %s\n", name)
		}
		return nil, errReported
	}
	return data, nil
}

// OpenError is returned by IO.ReadFile when the file cannot be opened (as
// opposed to read).
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// reformatHostfile turns a hostlist file into one expression: the text up
// to the first NUL, newlines turned into commas, runs of commas squeezed.
func reformatHostfile(data []byte) string {
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		data = data[:i]
	}
	var b strings.Builder
	b.Grow(len(data))
	prevComma := false
	for _, c := range data {
		if c == '\n' {
			c = ','
		}
		if c == ',' && prevComma {
			continue
		}
		prevComma = c == ','
		b.WriteByte(c)
	}
	return b.String()
}
