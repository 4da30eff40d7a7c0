package slurmcli

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Str is a C string as the commands see it: Null is a NULL pointer, which
// glibc's printf shows as "(null)" (or nothing under a precision below 6).
type Str struct {
	V    string
	Null bool
}

// S makes a non-NULL Str.
func S(v string) Str { return Str{V: v} }

// NullStr is the NULL string.
var NullStr = Str{Null: true}

// Out is a buffered standard output with the printf-style helpers the
// Slurm query commands share.
type Out struct {
	*bufio.Writer
}

// cString renders s for a "%s" conversion with the given precision
// (-1: none), as glibc does for a NULL pointer.
func cString(s Str, prec int) string {
	if s.Null {
		if prec == -1 || prec >= 6 {
			return "(null)"
		}
		return ""
	}
	return s.V
}

// PrintStr writes s in a field of width: right-justified ("%*s") when
// right, else left-justified and cut to width ("%.*s" then padding). cut
// also truncates a right-justified value to width. Width 0 prints the
// value as is; a negative width (squeue only) prints it and one blank.
// It returns the number of bytes written, as printf does.
func (o Out) PrintStr(s Str, width int, right, cut bool) int {
	var text string
	switch {
	case width < 0:
		text = cString(s, -1) + " "
	case width == 0:
		text = cString(s, -1)
	case right:
		v := cString(s, -1)
		if len(v) < width {
			v = strings.Repeat(" ", width-len(v)) + v
		}
		text = v
	default:
		v := cString(s, width)
		if len(v) > width {
			v = v[:width]
		}
		text = v
	}
	if width > 0 && cut && len(text) > width {
		text = text[:width]
	}
	o.WriteString(text)
	n := len(text)
	for n < width {
		o.WriteByte(' ')
		n++
	}
	return n
}

// PrintStrS is PrintStr for a non-NULL string.
func (o Out) PrintStrS(s string, width int, right, cut bool) int {
	return o.PrintStr(S(s), width, right, cut)
}

// PrintInt prints a decimal integer as PrintStr does.
func (o Out) PrintInt(v int64, width int, right, cut bool) int {
	return o.PrintStrS(strconv.FormatInt(v, 10), width, right, cut)
}

// Suffix writes a field's suffix (the text after its specifier).
func (o Out) Suffix(s string) {
	o.WriteString(s)
}

// YearSeconds bounds squeue's elapsed-time display (INVALID beyond).
const YearSeconds = 365 * 24 * 60 * 60

// SecsString renders seconds as [D-]H:MM:SS or M:SS. checkRange makes
// negative or over-a-year values "INVALID", as squeue does.
func SecsString(t int64, checkRange bool) string {
	if checkRange && (t < 0 || t > YearSeconds) {
		return "INVALID"
	}
	seconds := t % 60
	minutes := (t / 60) % 60
	hours := (t / 3600) % 24
	days := t / 86400
	switch {
	case days != 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, hours, minutes, seconds)
	case hours != 0:
		return fmt.Sprintf("%d:%02d:%02d", hours, minutes, seconds)
	default:
		return fmt.Sprintf("%d:%02d", minutes, seconds)
	}
}

// TimeFormatter renders time stamps as slurm_make_time_str does, following
// SLURM_TIME_FORMAT.
type TimeFormatter struct {
	format   string // strftime format
	relative bool
}

// NewTimeFormatter reads SLURM_TIME_FORMAT's value (ok false: unset).
func NewTimeFormatter(value string, ok bool, errorf func(format string, a ...any)) *TimeFormatter {
	tf := &TimeFormatter{format: "%FT%T"}
	switch {
	case !ok || value == "" || value == "standard":
	case value == "relative":
		tf.relative = true
	case !strings.Contains(value, "%") || len(value) >= 32:
		if errorf != nil {
			errorf("invalid SLURM_TIME_FORMAT = '%s'", value)
		}
	default:
		tf.format = value
	}
	return tf
}

// Format renders t (Unix seconds).
func (tf *TimeFormatter) Format(t int64, now time.Time) string {
	switch {
	case t == 0 || t == int64(Infinite):
		return "Unknown"
	case t == int64(NoVal):
		return "None"
	}
	tm := time.Unix(t, 0)
	f := tf.format
	if tf.relative {
		f = relativeFormat(tm, now)
	}
	return Strftime(f, tm)
}

func relativeFormat(tm, now time.Time) string {
	y1, m1, d1 := tm.Date()
	y2, m2, d2 := now.Date()
	a := time.Date(y1, m1, d1, 0, 0, 0, 0, time.UTC)
	b := time.Date(y2, m2, d2, 0, 0, 0, 0, time.UTC)
	distance := int(a.Sub(b).Hours() / 24)
	switch {
	case distance == -1:
		return "Ystday %H:%M"
	case distance == 0:
		return "%H:%M:%S"
	case distance == 1:
		return "Tomorr %H:%M"
	case distance < -365 || distance > 365:
		return "%-d %b %Y"
	case distance < -1 || distance > 6:
		return "%-d %b %H:%M"
	}
	return "%a %H:%M"
}

// Strftime implements the strftime conversions Slurm users put in
// SLURM_TIME_FORMAT (C locale).
func Strftime(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 >= len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if f[i] == '-' && i+1 < len(f) {
			noPad = true
			i++
		}
		num := func(v, w int) {
			if noPad {
				fmt.Fprintf(&b, "%d", v)
			} else {
				fmt.Fprintf(&b, "%0*d", w, v)
			}
		}
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if noPad {
				fmt.Fprintf(&b, "%d", t.Day())
			} else {
				fmt.Fprintf(&b, "%2d", t.Day())
			}
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'F':
			fmt.Fprintf(&b, "%d-%02d-%02d", t.Year(), int(t.Month()), t.Day())
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'R':
			fmt.Fprintf(&b, "%02d:%02d", t.Hour(), t.Minute())
		case 'D':
			fmt.Fprintf(&b, "%02d/%02d/%02d", int(t.Month()), t.Day(), t.Year()%100)
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 's':
			fmt.Fprintf(&b, "%d", t.Unix())
		case 'Z':
			z, _ := t.Zone()
			b.WriteString(z)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// DateLine is print_date's line: "%a %b %d %T %Y".
func DateLine(now time.Time) string {
	return Strftime("%a %b %d %T %Y", now)
}

// Unit numbers of convert_num_unit.
const (
	UnitNone = 0
	UnitKilo = 1
	UnitMega = 2
)

// Flags of convert_num_unit.
const (
	ConvertExact = 0x1
	ConvertNo    = 0x2
)

// ConvertNumUnit is convert_num_unit with no target unit: it scales num
// by 1024 while that stays exact (ConvertExact) or not at all
// (ConvertNo), and appends the unit letter.
func ConvertNumUnit(num float64, origType int, flags uint32) string {
	return ConvertNumUnit2(num, origType, 1024, flags)
}

// ConvertNumUnit2 is convert_num_unit2: ConvertNumUnit with a divisor
// (1000 for frequencies); flags 0 scales while the value exceeds it.
func ConvertNumUnit2(num float64, origType int, divisor uint64, flags uint32) string {
	const units = "\x00KMGTP?"
	d := float64(divisor)
	if int64(num) == 0 {
		return "0"
	}
	switch {
	case flags&ConvertNo != 0:
	case flags&ConvertExact != 0:
		for num >= d && uint64(num)%(divisor/2) == 0 {
			num /= d
			origType++
		}
	default:
		for num >= d {
			num /= d
			origType++
		}
	}
	if origType < 0 || origType > 5 {
		origType = 6
	}
	suffix := ""
	if origType != 0 {
		suffix = string(units[origType])
	}
	i := uint64(num)
	if float64(i) == num {
		return strconv.FormatUint(i, 10) + suffix
	}
	return fmt.Sprintf("%.2f", num) + suffix
}
