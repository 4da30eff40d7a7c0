package jobopt

import (
	"strconv"
	"strings"
	"time"
)

// parseTime is Slurm's parse_time(s, 0) for --begin and --deadline, with
// the clock from o.Now: it returns 0 (and true) when nothing was specified,
// and false after printing Slurm's "Invalid time specification" line.
func (o *Opts) parseTime(s string) (int64, bool) {
	t, pos, ok := ParseTime(s, o.now())
	if !ok {
		o.Log.Printf("Invalid time specification (pos=%d): %s\n", pos, s)
		return 0, false
	}
	return t, true
}

var deltaUnits = []struct {
	name string
	mult int64
}{
	{"seconds", 1}, {"second", 1}, {"minutes", 60}, {"minute", 60},
	{"hours", 3600}, {"hour", 3600}, {"days", 86400}, {"day", 86400},
	{"weeks", 7 * 86400}, {"week", 7 * 86400},
}

func prefixFold(s string, at int, word string) bool {
	return len(s)-at >= len(word) && strings.EqualFold(s[at:at+len(word)], word)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// at returns s[i] or 0 past the end, like reading a C string.
func at(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

// ParseTime implements parse_time's grammar: uts<epoch>; today, tomorrow,
// midnight, noon, fika, teatime; now[{+|-}count[unit]]; HH:MM[:SS][AM|PM];
// YYYY-MM-DD, MMDD[YY], MM/DD[/YY], MM.DD[.YY]; combined with "T" or
// blanks. A time without a date is the next such time; a date without a
// year that has passed is next year. On error pos is where parse_time
// reports the problem.
func ParseTime(s string, now time.Time) (int64, int, bool) {
	if prefixFold(s, 0, "uts") {
		n, err := strconv.ParseInt(s[3:], 10, 64)
		if err != nil || n < 1000000 {
			return 0, 0, false
		}
		return n, 0, true
	}
	hour, minute, second := -1, -1, 0
	month, mday, year := -1, -1, -1
	pos := 0
	for ; pos < len(s) && s[pos] != '\n'; pos++ {
		c := s[pos]
		if c == ' ' || c == '\t' || c == '-' || c == 'T' {
			continue
		}
		switch {
		case prefixFold(s, pos, "today"):
			month, mday, year = int(now.Month())-1, now.Day(), now.Year()
			pos += 4
			continue
		case prefixFold(s, pos, "tomorrow"):
			t := now.Add(24 * time.Hour)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()
			pos += 7
			continue
		case prefixFold(s, pos, "midnight"):
			hour, minute, second = 0, 0, 0
			pos += 7
			continue
		case prefixFold(s, pos, "noon"):
			hour, minute, second = 12, 0, 0
			pos += 3
			continue
		case prefixFold(s, pos, "fika"):
			hour, minute, second = 15, 0, 0
			pos += 3
			continue
		case prefixFold(s, pos, "teatime"):
			hour, minute, second = 16, 0, 0
			pos += 6
			continue
		case prefixFold(s, pos, "now"):
			var delta int64
			for i := pos + 3; ; i++ {
				ci := at(s, i)
				if ci == '+' || ci == '-' {
					p := pos + i
					d, np, ok := getDelta(s, p)
					if !ok {
						return 0, np, false
					}
					pos = np
					delta = d
					if ci == '-' {
						delta = -d
					}
					break
				}
				if ci == ' ' || ci == '\t' {
					continue
				}
				if ci == 0 || ci == '\n' {
					pos += i - 1
					break
				}
				return 0, pos + i, false
			}
			t := now.Add(time.Duration(delta) * time.Second)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()
			hour, minute, second = t.Hour(), t.Minute(), t.Second()
			continue
		}
		if !isDigit(c) {
			return 0, pos, false
		}
		if at(s, pos+1) == ':' || at(s, pos+2) == ':' {
			h, m, sec, np, ok := getClock(s, pos)
			if !ok {
				return 0, np, false
			}
			hour, minute, second, pos = h, m, sec, np
			continue
		}
		mo, d, y, np, ok := getDate(s, pos)
		if !ok {
			return 0, np, false
		}
		month, mday, pos = mo, d, np
		if y != -1 {
			year = y
		}
	}
	switch {
	case hour == -1 && month == -1:
		return 0, pos, true
	case hour == -1:
		hour, minute = 0, 0
	case month == -1:
		if hour > now.Hour() || hour == now.Hour() && minute > now.Minute() {
			month, mday, year = int(now.Month())-1, now.Day(), now.Year()
		} else {
			t := now.Add(24 * time.Hour)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()
		}
	}
	if year == -1 {
		nm := int(now.Month()) - 1
		later := month > nm ||
			month == nm && (mday > now.Day() ||
				mday == now.Day() && (hour > now.Hour() ||
					hour == now.Hour() && minute > now.Minute()))
		year = now.Year()
		if !later {
			year++
		}
	}
	t := time.Date(year, time.Month(month+1), mday, hour, minute, second, 0, now.Location())
	return t.Unix(), pos, true
}

// getDelta reads "+count[unit]" starting at the sign (s[p]).
func getDelta(s string, p int) (int64, int, bool) {
	var cnt int64
	digits := 0
	off := p + 1
	for ; off < len(s) && s[off] != '\n'; off++ {
		c := s[off]
		if c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' {
			continue
		}
		unit := false
		for _, u := range deltaUnits {
			if prefixFold(s, off, u.name) {
				off += len(u.name)
				cnt *= u.mult
				unit = true
				break
			}
		}
		if unit {
			break
		}
		if isDigit(c) {
			cnt = cnt*10 + int64(c-'0')
			digits++
			continue
		}
		return 0, off - 1, false
	}
	if digits == 0 {
		return 0, p, false
	}
	return cnt, off - 1, true
}

func getClock(s string, off int) (h, m, sec, pos int, ok bool) {
	if !isDigit(at(s, off)) {
		return 0, 0, 0, off, false
	}
	h = int(s[off] - '0')
	off++
	if at(s, off) != ':' {
		if !isDigit(at(s, off)) {
			return 0, 0, 0, off, false
		}
		h = h*10 + int(s[off]-'0')
		off++
	}
	if h > 23 {
		return 0, 0, 0, off - 2, false
	}
	if at(s, off) != ':' {
		return 0, 0, 0, off, false
	}
	off++
	if !isDigit(at(s, off)) || !isDigit(at(s, off+1)) {
		if isDigit(at(s, off)) {
			off++
		}
		return 0, 0, 0, off, false
	}
	m = int(s[off]-'0')*10 + int(s[off+1]-'0')
	off += 2
	if m > 59 {
		return 0, 0, 0, off - 2, false
	}
	if at(s, off) == ':' {
		off++
		if !isDigit(at(s, off)) || !isDigit(at(s, off+1)) {
			if isDigit(at(s, off)) {
				off++
			}
			return 0, 0, 0, off, false
		}
		sec = int(s[off]-'0')*10 + int(s[off+1]-'0')
		off += 2
		if sec > 59 {
			return 0, 0, 0, off - 2, false
		}
	}
	for off < len(s) && (s[off] == ' ' || s[off] == '\t' || s[off] == '\n' || s[off] == '\v' || s[off] == '\f' || s[off] == '\r') {
		off++
	}
	switch {
	case prefixFold(s, off, "pm"):
		h += 12
		if h > 23 {
			if h != 24 {
				return 0, 0, 0, off, false
			}
			h = 12
		}
		off += 2
	case prefixFold(s, off, "am"):
		if h > 11 {
			if h != 12 {
				return 0, 0, 0, off, false
			}
			h = 0
		}
		off += 2
	}
	return h, m, sec, off - 1, true
}

// getDate reads YYYY-MM-DD or MM[/.]DD[[/.]YY]; year is -1 when absent.
func getDate(s string, off int) (month, mday, year, pos int, ok bool) {
	num := func(n int) (int, bool) {
		v := 0
		for i := 0; i < n; i++ {
			if !isDigit(at(s, off)) {
				return 0, false
			}
			v = v*10 + int(s[off]-'0')
			off++
		}
		return v, true
	}
	oneOrTwo := func() int {
		v := int(at(s, off)) - '0'
		off++
		if isDigit(at(s, off)) {
			v = v*10 + int(s[off]-'0')
			off++
		}
		return v
	}
	if len(s) >= off+7 && at(s, off+4) == '-' && at(s, off+7) == '-' {
		y, good := num(4)
		if !good {
			return 0, 0, 0, off, false
		}
		off++
		mon := oneOrTwo()
		if mon < 1 || mon > 12 {
			return 0, 0, 0, off - 2, false
		}
		off++
		if !isDigit(at(s, off)) {
			return 0, 0, 0, off, false
		}
		d := oneOrTwo()
		if d < 1 || d > 31 {
			return 0, 0, 0, off - 2, false
		}
		return mon - 1, d, y, off - 1, true
	}
	mon := oneOrTwo()
	if mon < 1 || mon > 12 {
		return 0, 0, 0, off - 2, false
	}
	if c := at(s, off); c == '.' || c == '/' {
		off++
	}
	if !isDigit(at(s, off)) {
		return 0, 0, 0, off, false
	}
	d := oneOrTwo()
	if d < 1 || d > 31 {
		return 0, 0, 0, off - 2, false
	}
	if c := at(s, off); c == '.' || c == '/' {
		off++
	}
	year = -1
	if isDigit(at(s, off)) {
		y, good := num(2)
		if !good {
			return 0, 0, 0, off, false
		}
		if y != 0 {
			year = 2000 + y
		}
	}
	return mon - 1, d, year, off - 1, true
}
