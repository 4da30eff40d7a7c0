package conf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unit types. The numeric value is what Slurm stores; UNLIMITED/INFINITE
// read into a 16-bit key is Infinite16, into a 32-bit key Infinite32.
type (
	// Seconds is a duration in seconds.
	Seconds uint32
	// Minutes is a duration in minutes.
	Minutes uint32
	// Microseconds is a duration in microseconds.
	Microseconds uint32
	// MB is a memory size in megabytes (2^20 bytes).
	MB uint64
)

// Special values.
const (
	Infinite16 = 0xffff
	Infinite32 = 0xffffffff
	Infinite64 = math.MaxUint64
	NoVal16    = 0xfffe
	NoVal32    = 0xfffffffe
)

// List is a comma separated list; commas inside brackets do not split
// ("n[1-3,5],m1" is two items).
type List []string

// Has reports whether the list holds s (case-insensitively).
func (l List) Has(s string) bool {
	for _, x := range l {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// hasExact reports whether the list holds s (case-sensitively).
func (l List) hasExact(s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Option is one item of an option list: "name" or "name=value".
type Option struct {
	Name     string
	Value    string
	HasValue bool
}

// Options is a comma separated option list with sub-options
// (SchedulerParameters=bf_interval=30,bf_continue,...).
type Options []Option

// Get returns the value of the last option called name (case-insensitive).
func (o Options) Get(name string) (string, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if strings.EqualFold(o[i].Name, name) {
			return o[i].Value, true
		}
	}
	return "", false
}

// Has reports whether option name is present.
func (o Options) Has(name string) bool { _, ok := o.Get(name); return ok }

// String renders the list back in slurm.conf syntax.
func (o Options) String() string {
	var b strings.Builder
	for i, x := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x.Name)
		if x.HasValue {
			b.WriteByte('=')
			b.WriteString(x.Value)
		}
	}
	return b.String()
}

// splitList splits on commas outside brackets and drops empty items.
func splitList(s string) List {
	if s == "" {
		return nil
	}
	var out List
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				if i > start {
					out = append(out, s[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// ParseOptions parses "a,b=1,c=x" into Options.
func ParseOptions(s string) Options {
	items := splitList(s)
	if items == nil {
		return nil
	}
	out := make(Options, 0, len(items))
	for _, it := range items {
		if k, v, ok := strings.Cut(it, "="); ok {
			out = append(out, Option{Name: k, Value: v, HasValue: true})
		} else {
			out = append(out, Option{Name: it})
		}
	}
	return out
}

// cStrtoul mimics C strtoul/strtoull with base 0 on s: it returns the value,
// the number of bytes used (0 if no digits), whether the value overflowed
// and whether a minus sign was seen.
func cStrtoul(s string) (v uint64, n int, overflow, neg bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i < len(s) && s[i] == '0' {
		if i+2 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') && hexVal(s[i+2]) < 16 {
			base, i = 16, i+2
		} else {
			base = 8
		}
	}
	ds := i
	for i < len(s) {
		d := hexVal(s[i])
		if d >= base {
			break
		}
		if !overflow {
			hi, lo := mulAdd(v, base, d)
			if hi {
				overflow = true
			} else {
				v = lo
			}
		}
		i++
	}
	if i == ds {
		return 0, 0, false, false
	}
	if overflow {
		v = math.MaxUint64
	} else if neg {
		v = -v
	}
	return v, i, overflow, neg
}

func mulAdd(v, base, d uint64) (bool, uint64) {
	if v > (math.MaxUint64-d)/base {
		return true, 0
	}
	return false, v*base + d
}

func hexVal(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

func isUnlimited(s string) bool {
	return strings.EqualFold(s, "UNLIMITED") || strings.EqualFold(s, "INFINITE")
}

// ParseUint16 reads a value the way Slurm reads a 16-bit key; the error
// text is Slurm's.
func ParseUint16(key, value string) (uint16, error) {
	if value == "" {
		return 0, nil // strtoul("") is 0 with nothing left over
	}
	v, n, ovf, _ := cStrtoul(value)
	switch {
	case n == 0 || n != len(value):
		if isUnlimited(value) {
			return Infinite16, nil
		}
		return 0, fmt.Errorf("%s value \"%s\" is not a valid number", key, value)
	case ovf:
		return 0, fmt.Errorf("%s value (%s) is out of range", key, value)
	case value[0] == '-':
		return 0, fmt.Errorf("%s value (%s) is less than zero", key, value)
	case v > 0xffff:
		return 0, fmt.Errorf("%s value (%s) is greater than 65535", key, value)
	}
	return uint16(v), nil
}

func parseUintK(key, value string, max uint64) (uint64, error) {
	if value == "" {
		return 0, nil
	}
	v, n, ovf, _ := cStrtoul(value)
	if n > 0 && n < len(value) && (value[n] == 'k' || value[n] == 'K') {
		v *= 1024
		n++
	}
	switch {
	case n == 0 || n != len(value):
		if isUnlimited(value) {
			return max, nil
		}
		return 0, fmt.Errorf("%s value (%s) is not a valid number", key, value)
	case ovf:
		return 0, fmt.Errorf("%s value (%s) is out of range", key, value)
	case value[0] == '-':
		return 0, fmt.Errorf("%s value (%s) is less than zero", key, value)
	case v > max:
		return 0, fmt.Errorf("%s value (%s) is greater than 4294967295", key, value)
	}
	return v, nil
}

// ParseUint32 reads a value the way Slurm reads a 32-bit key (k/K suffix
// multiplies by 1024).
func ParseUint32(key, value string) (uint32, error) {
	v, err := parseUintK(key, value, Infinite32)
	return uint32(v), err
}

// ParseUint64 reads a value the way Slurm reads a 64-bit key.
func ParseUint64(key, value string) (uint64, error) {
	return parseUintK(key, value, Infinite64)
}

// ParseBool reads YES/UP/TRUE/1 and NO/DOWN/FALSE/0 in any case.
func ParseBool(key, value string) (bool, error) {
	switch strings.ToLower(value) {
	case "yes", "up", "true", "1":
		return true, nil
	case "no", "down", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("\"%s\" is not a valid option for \"%s\"", value, key)
}

// ParseFloat reads a float the way Slurm reads float keys (cgroup.conf).
func ParseFloat(key, value string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimLeft(value, " \t\n\v\f\r"), 64)
	if err != nil {
		if isUnlimited(value) {
			return math.Inf(1), nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%s value (%s) is out of range", key, value)
		}
		return 0, fmt.Errorf("%s value (%s) is not a valid number", key, value)
	}
	return f, nil
}

// validTimespec checks the shape of a job time string: only digits, '-' and
// ':'; at most one '-' (before any ':') and two ':'; enough numbers.
func validTimespec(s string) bool {
	digits, dash, colon := 0, 0, 0
	inDigit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if !inDigit {
				digits++
				inDigit = true
			}
		case c == '-':
			inDigit = false
			dash++
			if colon > 0 {
				return false
			}
		case c == ':':
			inDigit = false
			colon++
		default:
			return false
		}
	}
	if digits == 0 || dash > 1 || colon > 2 {
		return false
	}
	if dash > 0 {
		if colon == 1 && digits < 3 || colon == 2 && digits < 4 {
			return false
		}
	} else if colon == 1 && digits < 2 || colon == 2 && digits < 3 {
		return false
	}
	return true
}

// scanInts reads up to len(dst) integers separated by the given separators
// in order, like sscanf("%d-%d:%d:%d"); it returns how many were read.
func scanInts(s string, seps string, dst []*int64) int {
	got := 0
	for k, d := range dst {
		if k > 0 {
			if s == "" || s[0] != seps[k-1] {
				return got
			}
			s = s[1:]
		}
		j := 0
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		st := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == st {
			return got
		}
		n, err := strconv.ParseInt(s[:j], 10, 64)
		if err != nil {
			n = math.MaxInt32
		}
		*d = n
		s = s[j:]
		got++
	}
	return got
}

// TimeInfinite is the value ParseTimeSecs/ParseTimeMins return for
// INFINITE, UNLIMITED and -1.
const TimeInfinite = Infinite32

// ParseTimeSecs reads Slurm's job time syntax ("minutes", "minutes:seconds",
// "hours:minutes:seconds", "days-hours", "days-hours:minutes",
// "days-hours:minutes:seconds", INFINITE/UNLIMITED/-1) into seconds.
func ParseTimeSecs(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	if s == "-1" || isUnlimited(s) {
		return TimeInfinite, true
	}
	if !validTimespec(s) {
		return 0, false
	}
	var d, h, m, sec int64
	if strings.IndexByte(s, '-') >= 0 {
		scanInts(s, "-::", []*int64{&d, &h, &m, &sec})
		d, h, m = d*86400, h*3600, m*60
	} else if scanInts(s, "::", []*int64{&h, &m, &sec}) == 3 {
		h, m = h*3600, m*60
	} else {
		sec, m, h = m, h*60, 0
	}
	t := d + h + m + sec
	if t < 0 || t >= NoVal32 {
		return 0, false
	}
	return uint32(t), true
}

// ParseTimeMins is ParseTimeSecs rounded up to whole minutes.
func ParseTimeMins(s string) (uint32, bool) {
	v, ok := ParseTimeSecs(s)
	if !ok || v == TimeInfinite {
		return v, ok
	}
	return uint32((uint64(v) + 59) / 60), true
}

// suffixMult returns the multiplier of a count suffix (k, kib = 1024,
// kb = 1000, m, g, t, p likewise) or false.
func suffixMult(s string) (uint64, bool) {
	switch strings.ToLower(s) {
	case "":
		return 1, true
	case "k", "kib":
		return 1 << 10, true
	case "kb":
		return 1e3, true
	case "m", "mib":
		return 1 << 20, true
	case "mb":
		return 1e6, true
	case "g", "gib":
		return 1 << 30, true
	case "gb":
		return 1e9, true
	case "t", "tib":
		return 1 << 40, true
	case "tb":
		return 1e12, true
	case "p", "pib":
		return 1 << 50, true
	case "pb":
		return 1e15, true
	}
	return 0, false
}

// ParseCount reads a gres.conf Count: an integer with an optional suffix.
func ParseCount(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	m, ok := suffixMult(s[i:])
	if !ok {
		return 0, false
	}
	if m != 1 && n > math.MaxUint64/m {
		return 0, false
	}
	return n * m, true
}
