package cli

import (
	"fmt"
	"io"
	"strings"
)

// longOpt describes one long option, as in getopt_long's struct option.
type longOpt struct {
	name   string
	hasArg bool
	val    int
}

// getopt is a GNU getopt_long work-alike: argument permutation (unless
// POSIXLY_CORRECT is set), "--", clustered short options, unique-prefix
// abbreviation of long options, and glibc's exact diagnostics.
type getopt struct {
	args      []string // permuted in place, args[0] is the program name
	optstring string
	longs     []longOpt
	stderr    io.Writer
	posix     bool

	optind      int
	optarg      string
	next        string // rest of a cluster of short options
	inCluster   bool
	firstNonopt int
	lastNonopt  int
}

func newGetopt(args []string, optstring string, longs []longOpt, posix bool, stderr io.Writer) *getopt {
	return &getopt{args: args, optstring: optstring, longs: longs, posix: posix,
		stderr: stderr, optind: 1, firstNonopt: 1, lastNonopt: 1}
}

func (g *getopt) nonOption(i int) bool {
	a := g.args[i]
	return len(a) < 2 || a[0] != '-'
}

// exchange moves the block of skipped non-options [firstNonopt,lastNonopt)
// after the options [lastNonopt,optind) that followed it.
func (g *getopt) exchange() {
	a := g.args
	nonopts := append([]string(nil), a[g.firstNonopt:g.lastNonopt]...)
	n := copy(a[g.firstNonopt:], a[g.lastNonopt:g.optind])
	copy(a[g.firstNonopt+n:], nonopts)
	g.firstNonopt += g.optind - g.lastNonopt
	g.lastNonopt = g.optind
}

// next returns the next option character (or a long option's val), '?'
// after printing a diagnostic, or -1 when options are exhausted; then
// optind indexes the first non-option argument.
func (g *getopt) nextOpt() int {
	g.optarg = ""
	argc := len(g.args)
	if !g.inCluster {
		if g.lastNonopt > g.optind {
			g.lastNonopt = g.optind
		}
		if g.firstNonopt > g.optind {
			g.firstNonopt = g.optind
		}
		if !g.posix {
			if g.firstNonopt != g.lastNonopt && g.lastNonopt != g.optind {
				g.exchange()
			} else if g.lastNonopt != g.optind {
				g.firstNonopt = g.optind
			}
			for g.optind < argc && g.nonOption(g.optind) {
				g.optind++
			}
			g.lastNonopt = g.optind
		}
		if g.optind != argc && g.args[g.optind] == "--" {
			g.optind++
			if g.firstNonopt != g.lastNonopt && g.lastNonopt != g.optind {
				g.exchange()
			} else if g.firstNonopt == g.lastNonopt {
				g.firstNonopt = g.optind
			}
			g.lastNonopt = argc
			g.optind = argc
		}
		if g.optind == argc {
			if g.firstNonopt != g.lastNonopt {
				g.optind = g.firstNonopt
			}
			return -1
		}
		if g.nonOption(g.optind) {
			return -1 // only reached in POSIX (require-order) mode
		}
		arg := g.args[g.optind]
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
		g.optind++
	}
	i := strings.IndexByte(g.optstring, c)
	if i < 0 || c == ':' || c == ';' {
		fmt.Fprintf(g.stderr, "%s: invalid option -- '%c'\n", g.args[0], c)
		return '?'
	}
	if i+1 < len(g.optstring) && g.optstring[i+1] == ':' {
		switch {
		case g.next != "":
			g.optarg = g.next
			g.optind++
		case g.optind == argc:
			fmt.Fprintf(g.stderr, "%s: option requires an argument -- '%c'\n", g.args[0], c)
			c = '?'
		default:
			g.optarg = g.args[g.optind]
			g.optind++
		}
		g.next = ""
		g.inCluster = false
	}
	return int(c)
}

func (g *getopt) long(spec string) int {
	name, value, hasValue := strings.Cut(spec, "=")
	found := -1
	for i, o := range g.longs {
		if o.name == name {
			found = i
			break
		}
	}
	if found < 0 {
		var ambiguous []int
		for i, o := range g.longs {
			if !strings.HasPrefix(o.name, name) {
				continue
			}
			if found < 0 {
				found = i
				continue
			}
			f := g.longs[found]
			if f.hasArg != o.hasArg || f.val != o.val {
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
				fmt.Fprintf(&b, " '--%s'", g.longs[i].name)
			}
			b.WriteByte('\n')
			io.WriteString(g.stderr, b.String())
			g.optind++
			return '?'
		}
	}
	if found < 0 {
		fmt.Fprintf(g.stderr, "%s: unrecognized option '--%s'\n", g.args[0], spec)
		g.optind++
		return '?'
	}
	o := g.longs[found]
	g.optind++
	if hasValue {
		if !o.hasArg {
			fmt.Fprintf(g.stderr, "%s: option '--%s' doesn't allow an argument\n", g.args[0], o.name)
			return '?'
		}
		g.optarg = value
	} else if o.hasArg {
		if g.optind < len(g.args) {
			g.optarg = g.args[g.optind]
			g.optind++
		} else {
			fmt.Fprintf(g.stderr, "%s: option '--%s' requires an argument\n", g.args[0], o.name)
			return '?'
		}
	}
	return o.val
}
