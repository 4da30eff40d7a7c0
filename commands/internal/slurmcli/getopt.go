package slurmcli

import (
	"fmt"
	"io"
	"strings"
)

// Argument kinds of a long option (getopt_long's has_arg).
const (
	NoArgument = iota
	RequiredArgument
	OptionalArgument
)

// LongOpt describes one long option, as in getopt_long's struct option.
type LongOpt struct {
	Name   string
	HasArg int
	Val    int
}

// getopt is a GNU getopt_long work-alike: argument permutation (unless
// POSIXLY_CORRECT is set), "--", clustered short options, unique-prefix
// abbreviation of long options, and glibc's exact diagnostics.
type Getopt struct {
	args      []string // permuted in place, args[0] is the program name
	optstring string
	longs     []LongOpt
	stderr    io.Writer
	posix     bool

	Optind int
	Optarg string
	// HasOptarg tells an optional argument that was given (even empty)
	// from one that was not.
	HasOptarg   bool
	next        string // rest of a cluster of short options
	inCluster   bool
	firstNonopt int
	lastNonopt  int
}

func NewGetopt(args []string, optstring string, longs []LongOpt, posix bool, stderr io.Writer) *Getopt {
	return &Getopt{args: args, optstring: optstring, longs: longs, posix: posix,
		stderr: stderr, Optind: 1, firstNonopt: 1, lastNonopt: 1}
}

func (g *Getopt) nonOption(i int) bool {
	a := g.args[i]
	return len(a) < 2 || a[0] != '-'
}

// exchange moves the block of skipped non-options [firstNonopt,lastNonopt)
// after the options [lastNonopt,optind) that followed it.
func (g *Getopt) exchange() {
	a := g.args
	nonopts := append([]string(nil), a[g.firstNonopt:g.lastNonopt]...)
	n := copy(a[g.firstNonopt:], a[g.lastNonopt:g.Optind])
	copy(a[g.firstNonopt+n:], nonopts)
	g.firstNonopt += g.Optind - g.lastNonopt
	g.lastNonopt = g.Optind
}

// next returns the next option character (or a long option's val), '?'
// after printing a diagnostic, or -1 when options are exhausted; then
// optind indexes the first non-option argument.
func (g *Getopt) Next() int {
	g.Optarg = ""
	g.HasOptarg = false
	argc := len(g.args)
	if !g.inCluster {
		if g.lastNonopt > g.Optind {
			g.lastNonopt = g.Optind
		}
		if g.firstNonopt > g.Optind {
			g.firstNonopt = g.Optind
		}
		if !g.posix {
			if g.firstNonopt != g.lastNonopt && g.lastNonopt != g.Optind {
				g.exchange()
			} else if g.lastNonopt != g.Optind {
				g.firstNonopt = g.Optind
			}
			for g.Optind < argc && g.nonOption(g.Optind) {
				g.Optind++
			}
			g.lastNonopt = g.Optind
		}
		if g.Optind != argc && g.args[g.Optind] == "--" {
			g.Optind++
			if g.firstNonopt != g.lastNonopt && g.lastNonopt != g.Optind {
				g.exchange()
			} else if g.firstNonopt == g.lastNonopt {
				g.firstNonopt = g.Optind
			}
			g.lastNonopt = argc
			g.Optind = argc
		}
		if g.Optind == argc {
			if g.firstNonopt != g.lastNonopt {
				g.Optind = g.firstNonopt
			}
			return -1
		}
		if g.nonOption(g.Optind) {
			return -1 // only reached in POSIX (require-order) mode
		}
		arg := g.args[g.Optind]
		if strings.HasPrefix(arg, "--") {
			return g.long(arg[2:])
		}
		g.next = arg[1:]
		g.inCluster = true
	}
	c := g.next[0]
	g.next = g.next[1:]
	if g.next == "" {
		g.inCluster = false
		g.Optind++
	}
	i := strings.IndexByte(g.optstring, c)
	if i < 0 || c == ':' || c == ';' {
		fmt.Fprintf(g.stderr, "%s: invalid option -- '%c'\n", g.args[0], c)
		return '?'
	}
	if i+2 < len(g.optstring) && g.optstring[i+1] == ':' && g.optstring[i+2] == ':' {
		// Optional argument: only attached ("-j5"), never the next word.
		if g.next != "" {
			g.Optarg, g.HasOptarg = g.next, true
			g.Optind++
		}
		g.next = ""
		g.inCluster = false
		return int(c)
	}
	if i+1 < len(g.optstring) && g.optstring[i+1] == ':' {
		switch {
		case g.next != "":
			g.Optarg, g.HasOptarg = g.next, true
			g.Optind++
		case g.Optind == argc:
			fmt.Fprintf(g.stderr, "%s: option requires an argument -- '%c'\n", g.args[0], c)
			c = '?'
		default:
			g.Optarg, g.HasOptarg = g.args[g.Optind], true
			g.Optind++
		}
		g.next = ""
		g.inCluster = false
	}
	return int(c)
}

func (g *Getopt) long(spec string) int {
	name, value, hasValue := strings.Cut(spec, "=")
	found := -1
	for i, o := range g.longs {
		if o.Name == name {
			found = i
			break
		}
	}
	if found < 0 {
		var ambiguous []int
		for i, o := range g.longs {
			if !strings.HasPrefix(o.Name, name) {
				continue
			}
			if found < 0 {
				found = i
				continue
			}
			f := g.longs[found]
			if f.HasArg != o.HasArg || f.Val != o.Val {
				if ambiguous == nil {
					ambiguous = append(ambiguous, found)
				}
				ambiguous = append(ambiguous, i)
			}
		}
		if ambiguous != nil {
			var b strings.Builder
			fmt.Fprintf(&b, "%s: option '--%s' is ambiguous; possibilities:", g.args[0], spec)
			for _, i := range ambiguous {
				fmt.Fprintf(&b, " '--%s'", g.longs[i].Name)
			}
			b.WriteByte('\n')
			io.WriteString(g.stderr, b.String())
			g.Optind++
			return '?'
		}
	}
	if found < 0 {
		fmt.Fprintf(g.stderr, "%s: unrecognized option '--%s'\n", g.args[0], spec)
		g.Optind++
		return '?'
	}
	o := g.longs[found]
	g.Optind++
	switch {
	case hasValue && o.HasArg == NoArgument:
		fmt.Fprintf(g.stderr, "%s: option '--%s' doesn't allow an argument\n", g.args[0], o.Name)
		return '?'
	case hasValue:
		g.Optarg, g.HasOptarg = value, true
	case o.HasArg == RequiredArgument:
		if g.Optind < len(g.args) {
			g.Optarg, g.HasOptarg = g.args[g.Optind], true
			g.Optind++
		} else {
			fmt.Fprintf(g.stderr, "%s: option '--%s' requires an argument\n", g.args[0], o.Name)
			return '?'
		}
	}
	return o.Val
}

// Args returns the (permuted) argument vector; after Next returned -1,
// Args()[Optind:] are the non-option arguments.
func (g *Getopt) Args() []string { return g.args }
