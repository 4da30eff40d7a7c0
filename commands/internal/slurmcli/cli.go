package slurmcli

import (
	"bufio"
	"strconv"
	"strings"
	"time"
)

// Exit is the panic value with which sinfo and squeue end early, where
// Slurm's code calls exit() deep inside.
type Exit int

// RecoverExit is deferred by a command's run: it flushes w and turns an
// Exit panic into the run's status in *code. Other panics go on.
func RecoverExit(code *int, w *bufio.Writer) {
	w.Flush()
	if r := recover(); r != nil {
		e, ok := r.(Exit)
		if !ok {
			panic(r)
		}
		*code = int(e)
	}
}

// Repeat runs report once, or with -i (iterate > 0) every iterate
// seconds until the process is killed, as sinfo and squeue do; dated
// puts Slurm's date line before each report. The status is 1 once a
// report has failed.
func Repeat(w *bufio.Writer, iterate int, dated bool, report func(now time.Time) error) int {
	rc := 0
	for {
		now := time.Now()
		if dated {
			w.WriteString(DateLine(now) + "\n")
		}
		if err := report(now); err != nil {
			rc = 1
		}
		if iterate == 0 {
			return rc
		}
		w.WriteString("\n")
		w.Flush()
		time.Sleep(time.Duration(iterate) * time.Second)
	}
}

// SplitList is strtok on ",": empty items are dropped.
func SplitList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Atoi is C's atoi: leading blanks, a sign, digits, anything after
// ignored, the result an int.
func Atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	n, i, neg := 0, 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		if n > 1<<31 {
			n = 1 << 31
		}
	}
	if neg {
		n = -n
	}
	return int(int32(n))
}

// Strtol is C's strtol in base 10: it parses a leading decimal number
// (clamped to the int64 range) and returns it with the rest; without
// digits it returns 0 and all of s.
func Strtol(s string) (int64, string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == d {
		return 0, s
	}
	n, err := strconv.ParseInt(s[start:i], 10, 64)
	if err != nil {
		if s[start] == '-' {
			n = -1 << 63
		} else {
			n = 1<<63 - 1
		}
	}
	return n, s[i:]
}

// FormatItem is one "%[.][width]letter[suffix]" item of a -o format.
type FormatItem struct {
	Right  bool
	Width  int
	Letter byte
	Suffix string
	Text   string // the item without its '%'
}

// ParseFormat splits a -o format as sinfo and squeue read it: the text
// before the first '%' (hasPrefix is false when the format starts with
// one) and the '%' items. "%all" in any case stands for every letter,
// a-z then A-Z, each item ending in "|" and the upper-case ones also in
// upperPad; all reports it (an unknown letter is then skipped silently).
func ParseFormat(format, upperPad string) (prefix string, hasPrefix bool, items []FormatItem, all bool) {
	rest := format
	if i := strings.IndexByte(format, '%'); i != 0 {
		if i < 0 {
			i = len(format)
		}
		prefix, hasPrefix, rest = format[:i], true, format[i:]
	}
	if strings.EqualFold(format, "%all") {
		var b strings.Builder
		b.WriteString("%a")
		for c := 'b'; c <= 'z'; c++ {
			b.WriteString("|%" + string(c))
		}
		for c := 'A'; c <= 'Z'; c++ {
			b.WriteString("|%" + string(c) + upperPad)
		}
		rest, all = b.String(), true
	}
	for _, tok := range strings.Split(rest, "%") {
		if tok == "" {
			continue
		}
		it := FormatItem{Text: tok}
		i := 0
		if tok[0] == '.' {
			it.Right = true
			i++
		}
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			it.Width = it.Width*10 + int(tok[i]-'0')
			i++
		}
		if i < len(tok) {
			it.Letter = tok[i]
			i++
		}
		it.Suffix = tok[i:]
		items = append(items, it)
	}
	return prefix, hasPrefix, items, all
}

// LongFormatItem is one "name[:[.][width][suffix]]" item of a -O format.
type LongFormatItem struct {
	Name   string
	Right  bool
	Width  int // 20 when not given
	Suffix string
}

// ParseLongFormat splits a -O format at its commas, dropping empty items.
func ParseLongFormat(format string) []LongFormatItem {
	var items []LongFormatItem
	for _, tok := range strings.Split(format, ",") {
		if tok == "" {
			continue
		}
		name, spec, hasSpec := strings.Cut(tok, ":")
		it := LongFormatItem{Name: name, Width: 20}
		if hasSpec {
			if strings.HasPrefix(spec, ".") {
				it.Right = true
				spec = spec[1:]
			}
			n, rest := Strtol(spec)
			it.Width, it.Suffix = int(int32(n)), rest
		}
		items = append(items, it)
	}
	return items
}
