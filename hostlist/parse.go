package hostlist

import (
	"math"
	"strconv"
	"strings"
)

// Limits enforced by Slurm 22.05, with the same thresholds.
const (
	// MaxRange is the largest number of hosts one lo-hi range may cover.
	MaxRange = 64 * 1024
	// MaxRanges is the largest number of comma-separated entries inside
	// one pair of brackets.
	MaxRanges = 256 * 1024
	// MaxPrefixCount is the largest number of names a bracket group that
	// is not the last one in a name ("rack[1-4]-n[1-8]") may produce.
	MaxPrefixCount = 64 * 1024
)

// maxTotalRanges bounds how many ranges one parse may create. Slurm has no
// such limit and simply runs out of memory on inputs such as
// "a[1-60000]b[1-60000]c1"; we fail cleanly instead. A variable so tests can
// lower it.
var maxTotalRanges = 1 << 22

// isSep matches the separators between hostlist tokens, as hostlist_create
// uses them.
func isSep(c byte) bool { return c == '\t' || c == ',' || c == ' ' }

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// cString cuts s at its first NUL, as C sees a string.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// strtoul parses s like C's strtoul(s, &end, 10): optional leading blanks,
// an optional sign, decimal digits; overflow saturates at MaxUint64 and a
// minus sign negates modulo 2^64. end is the index just past the number, or
// 0 when no digits were found.
func strtoul(s string) (v uint64, end int) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	overflow := false
	for i < len(s) && isDigit(s[i]) {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
		i++
	}
	if i == start {
		return 0, 0
	}
	if overflow {
		return math.MaxUint64, i
	}
	if neg {
		v = -v
	}
	return v, i
}

// nextToken returns the token starting at or after *pos and advances *pos
// past it and the separators following it. A bracketed part may contain
// separators: "n[1, 3]" is one token.
func nextToken(s string, pos *int) (string, bool) {
	i := *pos
	for i < len(s) && isSep(s[i]) {
		i++
	}
	if i == len(s) {
		*pos = i
		return "", false
	}
	start, parse := i, i
	for {
		for i < len(s) && !isSep(s[i]) {
			i++
		}
		var jumped bool
		for {
			// Only a '[' inside the token matters; searching the rest of
			// s would make a long list of plain names quadratic.
			ob := indexFrom(s[:min(i+1, len(s))], parse, '[')
			if ob < 0 {
				break
			}
			cb := indexFrom(s, parse, ']')
			if cb < 0 || cb < ob {
				break
			}
			if cb < i {
				parse = cb + 1
				continue
			}
			i = cb
			jumped = true
			break
		}
		if !jumped {
			break
		}
	}
	end := i
	for i < len(s) && isSep(s[i]) {
		i++
	}
	*pos = i
	return s[start:end], true
}

func indexFrom(s string, from int, c byte) int {
	if from > len(s) {
		return -1
	}
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// numRange is one entry of a bracket list.
type numRange struct {
	lo, hi uint64
	width  int
}

// parser carries the state of one Parse call.
type parser struct {
	hl     *Hostlist
	logf   func(string)
	detail string // last message logged, for the final *Error
	work   int    // prefix values expanded so far, bounded by maxTotalRanges
}

func (p *parser) log(msg string) {
	p.detail = msg
	if p.logf != nil {
		p.logf(msg)
	}
}

// parseSingleRange parses "N" or "LO-HI" the way Slurm does, quirks
// included: the width is the length of the text before '-', garbage before
// the '-' is ignored when a high bound follows, and "5-" means 5.
func (p *parser) parseSingleRange(s string) (numRange, error) {
	invalid := func() (numRange, error) {
		p.log("_parse_single_range: Invalid range: `" + s + "'")
		return numRange{}, ErrInvalidRange
	}
	if strings.IndexByte(s, 'x') >= 0 {
		return invalid()
	}
	loText, hiText, dash := strings.Cut(s, "-")
	if dash && strings.HasPrefix(hiText, "-") {
		return invalid()
	}
	var r numRange
	r.width = len(loText)
	lo, end := strtoul(loText)
	if end == 0 {
		return invalid()
	}
	r.lo, r.hi = lo, lo
	rest := loText[end:]
	if dash && hiText != "" {
		hi, hend := strtoul(hiText)
		if hend == 0 {
			return invalid()
		}
		r.hi = hi
		rest = hiText[hend:]
	}
	if rest != "" {
		return invalid()
	}
	if r.lo > r.hi {
		return invalid()
	}
	if r.hi-r.lo+1 > MaxRange {
		p.log("_parse_single_range: Too many hosts in range `" + s + "'")
		return numRange{}, ErrTooManyHosts
	}
	return r, nil
}

// parseRangeList parses the comma-separated text between brackets.
func (p *parser) parseRangeList(s string) ([]numRange, error) {
	var out []numRange
	for {
		if len(out) == MaxRanges {
			msg := "_parse_range_list: Too many ranges, can't process entire list"
			p.detail = msg
			return nil, ErrTooManyRanges
		}
		item, rest, more := strings.Cut(s, ",")
		r, err := p.parseSingleRange(item)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if !more {
			return out, nil
		}
		s = rest
	}
}

// fatal reports whether err must abort the whole parse even inside a nested
// prefix group (where Slurm otherwise ignores failures).
func fatal(err error) bool { return err == ErrTooManyRanges || err == ErrTooLarge }

// pushRangeList pushes prefix+ranges, expanding any bracket group left in
// the prefix ("rack[1-2]-n" + [1-4]). Groups are expanded right to left,
// each value of an outer group enclosing the inner ones, which gives Slurm's
// order. As in Slurm, only a failure in the innermost prefix group (the one
// nearest the final bracket) fails the parse; failures further left are
// logged and skipped.
func (p *parser) pushRangeList(prefix string, ranges []numRange) error {
	open := strings.LastIndexByte(prefix, '[')
	if open >= 0 {
		if rel := strings.LastIndexByte(prefix[open:], ']'); rel >= 0 {
			closeIdx := open + rel
			head := prefix[:open]
			group := prefix[open+1 : closeIdx]
			tail := prefix[closeIdx+1:]
			recurse := strings.IndexByte(head, '[') >= 0
			pre, err := p.parseRangeList(group)
			if err != nil {
				return err
			}
			var count uint64
			var sb strings.Builder
			for _, pr := range pre {
				count += pr.hi - pr.lo + 1
				if count > MaxPrefixCount {
					p.detail = ""
					return ErrTooManyPrefixes
				}
				for j := pr.lo; ; j++ {
					if p.work++; p.work > maxTotalRanges {
						p.detail = ""
						return ErrTooLarge
					}
					sb.Reset()
					sb.WriteString(head)
					writePadded(&sb, j, pr.width)
					sb.WriteString(tail)
					np := sb.String()
					if recurse {
						if err := p.pushRangeList(np, ranges); err != nil {
							if fatal(err) {
								return err
							}
							// Slurm keeps max(rc, -1) == 0: ignored.
						}
					} else {
						for _, r := range ranges {
							if err := p.pushHR(np, r.lo, r.hi, r.width); err != nil {
								return err
							}
						}
					}
					if j == pr.hi {
						break
					}
				}
			}
			return nil
		}
	}
	for _, r := range ranges {
		if err := p.pushHR(prefix, r.lo, r.hi, r.width); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) pushHR(prefix string, lo, hi uint64, width int) error {
	if len(p.hl.ranges) >= maxTotalRanges {
		p.detail = ""
		return ErrTooLarge
	}
	p.hl.pushRange(&hostRange{prefix: prefix, lo: lo, hi: hi, width: width})
	return nil
}

// writePadded writes v in decimal, zero-padded to width, like "%0*lu".
func writePadded(sb *strings.Builder, v uint64, width int) {
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], v, 10)
	for n := len(d); n < width; n++ {
		sb.WriteByte('0')
	}
	sb.Write(d)
}

// appendPadded is writePadded for byte slices.
func appendPadded(b []byte, v uint64, width int) []byte {
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], v, 10)
	for n := len(d); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// Parse parses a hostlist expression. Hosts keep the order of the
// expression; duplicates are kept.
func Parse(expr string) (*Hostlist, error) {
	return ParseLog(expr, nil)
}

// ParseLog is Parse, and also passes logf every message Slurm would log
// (with error()) while parsing, in order. Slurm logs some messages for
// expressions it nevertheless accepts: a bad bracket group far to the left
// in "a[x]b[1-2]c[1-3]" is reported once per value of the groups to its
// right and then skipped.
func ParseLog(expr string, logf func(msg string)) (*Hostlist, error) {
	expr = cString(expr)
	p := &parser{hl: New(), logf: logf}
	fail := func(err error) (*Hostlist, error) {
		return nil, &Error{Expr: expr, Detail: p.detail, Err: err}
	}
	pos := 0
	for {
		tok, ok := nextToken(expr, &pos)
		if !ok {
			break
		}
		open := strings.LastIndexByte(tok, '[')
		if open < 0 {
			if err := p.pushHost(tok); err != nil {
				return fail(err)
			}
			continue
		}
		prefix, rest := tok[:open], tok[open+1:]
		closeIdx := strings.IndexByte(rest, ']')
		if closeIdx < 0 {
			// No closing bracket: Slurm appends one (or, with no
			// prefix, drops the opening one) and takes the name as is.
			name := rest
			if prefix != "" {
				name = prefix + "]"
			}
			if err := p.pushHost(name); err != nil {
				return fail(err)
			}
			continue
		}
		if closeIdx+1 < len(rest) && rest[closeIdx+1] != ',' {
			p.detail = ""
			return fail(ErrMalformed)
		}
		ranges, err := p.parseRangeList(rest[:closeIdx])
		if err != nil {
			return fail(err)
		}
		if err := p.pushRangeList(prefix, ranges); err != nil {
			return fail(err)
		}
	}
	return p.hl, nil
}

func (p *parser) pushHost(name string) error {
	if len(p.hl.ranges) >= maxTotalRanges {
		p.detail = ""
		return ErrTooLarge
	}
	p.hl.PushHost(name)
	return nil
}

// Expand returns every host named by expr, in expression order, duplicates
// kept: Expand("n[1-2],m") is ["n1" "n2" "m"].
func Expand(expr string) ([]string, error) {
	hl, err := Parse(expr)
	if err != nil {
		return nil, err
	}
	return hl.Hosts(), nil
}
