// Package getopt parses command lines the way glibc's getopt_long does for
// Slurm's job commands: unambiguous prefixes of long options, clustered short
// options with attached values, optional arguments only after "=" (long) or
// attached (short), "--" ending the options, and either stopping at the first
// non-option (the "+" optstring sbatch, srun and salloc use) or permuting
// non-options to the end (GNU's default, squeue and friends).
//
// Diagnostics are glibc's, byte for byte, written to Stderr with the program
// name first, because users' scripts grep them; the caller decides the exit
// status (Slurm's job commands exit 255 after printing a hint).
package getopt

import (
	"fmt"
	"io"
	"strings"
)

// HasArg says whether an option takes an argument (getopt.h has_arg).
type HasArg int

// The three kinds of options.
const (
	NoArgument HasArg = iota
	RequiredArgument
	OptionalArgument
)

// Option is one long option (struct option without the flag pointer).
// Val identifies it to the caller; options sharing Val are aliases and never
// ambiguous with each other (glibc compares has_arg and val).
type Option struct {
	Name   string
	HasArg HasArg
	Val    int
}

// Unknown is what Next returns for an unrecognized or malformed option,
// after printing the diagnostic ('?' as in C).
const Unknown = '?'

// Done is what Next returns when the options are exhausted.
const Done = -1

// Parser walks one argument vector. Args[0] is the program name used in
// diagnostics (glibc prints argv[0] as given).
type Parser struct {
	Args []string
	// Short is the optstring without any leading '+', '-' or ':': letters,
	// ':' after a letter for a required argument, "::" for an optional one.
	Short string
	Long  []Option
	// Permute moves non-options to the end (GNU default). False stops at
	// the first non-option, as a leading '+' or POSIXLY_CORRECT does.
	Permute bool
	Stderr  io.Writer

	// Optind is the index of the next argument to examine; after Done it
	// is the index of the first non-option argument.
	Optind int
	// Arg is the current option's argument; HasValue says whether there is
	// one (an optional argument may be absent).
	Arg      string
	HasValue bool
	// Name is how the current option was written: "--name" (the full long
	// name) or "-c".
	Name string

	next        string // rest of a cluster of short options
	firstNonopt int
	lastNonopt  int
}

// New returns a parser starting at args[1].
func New(args []string, short string, long []Option, permute bool, stderr io.Writer) *Parser {
	return &Parser{Args: args, Short: short, Long: long, Permute: permute, Stderr: stderr,
		Optind: 1, firstNonopt: 1, lastNonopt: 1}
}

// Rest returns the arguments after the options (valid after Done).
func (p *Parser) Rest() []string {
	if p.Optind >= len(p.Args) {
		return nil
	}
	return p.Args[p.Optind:]
}

func (p *Parser) prog() string {
	if len(p.Args) == 0 {
		return ""
	}
	return p.Args[0]
}

func (p *Parser) isNonOption(i int) bool {
	a := p.Args[i]
	return len(a) < 2 || a[0] != '-'
}

// exchange moves the block of skipped non-options [firstNonopt,lastNonopt)
// after the options [lastNonopt,Optind) that followed it.
func (p *Parser) exchange() {
	a := p.Args
	nonopts := append([]string(nil), a[p.firstNonopt:p.lastNonopt]...)
	n := copy(a[p.firstNonopt:], a[p.lastNonopt:p.Optind])
	copy(a[p.firstNonopt+n:], nonopts)
	p.firstNonopt += p.Optind - p.lastNonopt
	p.lastNonopt = p.Optind
}

// Next returns the next option's Val (a short option's letter), Unknown
// after printing a diagnostic, or Done.
func (p *Parser) Next() int {
	p.Arg, p.HasValue, p.Name = "", false, ""
	argc := len(p.Args)
	if p.next == "" {
		if p.lastNonopt > p.Optind {
			p.lastNonopt = p.Optind
		}
		if p.firstNonopt > p.Optind {
			p.firstNonopt = p.Optind
		}
		if p.Permute {
			if p.firstNonopt != p.lastNonopt && p.lastNonopt != p.Optind {
				p.exchange()
			} else if p.lastNonopt != p.Optind {
				p.firstNonopt = p.Optind
			}
			for p.Optind < argc && p.isNonOption(p.Optind) {
				p.Optind++
			}
			p.lastNonopt = p.Optind
		}
		if p.Optind != argc && p.Args[p.Optind] == "--" {
			p.Optind++
			if p.firstNonopt != p.lastNonopt && p.lastNonopt != p.Optind {
				p.exchange()
			} else if p.firstNonopt == p.lastNonopt {
				p.firstNonopt = p.Optind
			}
			p.lastNonopt = argc
			p.Optind = argc
		}
		if p.Optind >= argc {
			if p.firstNonopt != p.lastNonopt {
				p.Optind = p.firstNonopt
			}
			return Done
		}
		if p.isNonOption(p.Optind) {
			return Done // reached only when not permuting
		}
		arg := p.Args[p.Optind]
		if strings.HasPrefix(arg, "--") {
			return p.long(arg[2:])
		}
		p.next = arg[1:]
	}
	return p.short()
}

func (p *Parser) short() int {
	argc := len(p.Args)
	c := p.next[0]
	p.next = p.next[1:]
	if p.next == "" {
		p.Optind++
	}
	p.Name = "-" + string(c)
	i := strings.IndexByte(p.Short, c)
	if i < 0 || c == ':' || c == ';' {
		fmt.Fprintf(p.Stderr, "%s: invalid option -- '%c'\n", p.prog(), c)
		return Unknown
	}
	kind := NoArgument
	if i+1 < len(p.Short) && p.Short[i+1] == ':' {
		kind = RequiredArgument
		if i+2 < len(p.Short) && p.Short[i+2] == ':' {
			kind = OptionalArgument
		}
	}
	switch kind {
	case OptionalArgument:
		if p.next != "" {
			p.Arg, p.HasValue = p.next, true
			p.Optind++
		}
		p.next = ""
	case RequiredArgument:
		switch {
		case p.next != "":
			p.Arg, p.HasValue = p.next, true
			p.Optind++
		case p.Optind >= argc:
			fmt.Fprintf(p.Stderr, "%s: option requires an argument -- '%c'\n", p.prog(), c)
			p.next = ""
			return Unknown
		default:
			p.Arg, p.HasValue = p.Args[p.Optind], true
			p.Optind++
		}
		p.next = ""
	}
	return int(c)
}

// Lookup resolves a long option name the way getopt_long does: an exact
// match, else the only prefix match (aliases with the same HasArg and Val
// count as one). ambiguous lists the candidates when there is no single
// one; idx is -1 then, and also when nothing matches.
func Lookup(long []Option, name string) (idx int, ambiguous []int) {
	for i, o := range long {
		if o.Name == name {
			return i, nil
		}
	}
	idx = -1
	for i, o := range long {
		if !strings.HasPrefix(o.Name, name) {
			continue
		}
		if idx < 0 {
			idx = i
			continue
		}
		f := long[idx]
		if f.HasArg != o.HasArg || f.Val != o.Val {
			if ambiguous == nil {
				ambiguous = append(ambiguous, idx)
			}
			ambiguous = append(ambiguous, i)
		}
	}
	if ambiguous != nil {
		return -1, ambiguous
	}
	return idx, nil
}

func (p *Parser) long(spec string) int {
	name, value, hasValue := strings.Cut(spec, "=")
	p.Optind++
	found, ambiguous := Lookup(p.Long, name)
	if ambiguous != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: option '--%s' is ambiguous; possibilities:", p.prog(), spec)
		for _, i := range ambiguous {
			fmt.Fprintf(&b, " '--%s'", p.Long[i].Name)
		}
		b.WriteByte('\n')
		io.WriteString(p.Stderr, b.String())
		return Unknown
	}
	if found < 0 {
		fmt.Fprintf(p.Stderr, "%s: unrecognized option '--%s'\n", p.prog(), spec)
		return Unknown
	}
	o := p.Long[found]
	p.Name = "--" + o.Name
	switch {
	case hasValue:
		if o.HasArg == NoArgument {
			fmt.Fprintf(p.Stderr, "%s: option '--%s' doesn't allow an argument\n", p.prog(), o.Name)
			return Unknown
		}
		p.Arg, p.HasValue = value, true
	case o.HasArg == RequiredArgument:
		if p.Optind >= len(p.Args) {
			fmt.Fprintf(p.Stderr, "%s: option '--%s' requires an argument\n", p.prog(), o.Name)
			return Unknown
		}
		p.Arg, p.HasValue = p.Args[p.Optind], true
		p.Optind++
	}
	return o.Val
}
