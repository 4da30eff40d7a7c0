package gres

import (
	"errors"
	"math"
	"strings"
)

// ErrInvalidJobGres is a job GRES request string real's _get_next_gres
// refuses (ESLURM_INVALID_GRES).
var ErrInvalidJobGres = errors.New("gres: invalid job GRES specification")

// ParseJobRequest reads a job's tres_per_* (or cpus/mem_per_tres) string
// the way slurmctld's _get_next_gres does: each item starts at the next
// "gres:" and runs to the next comma (text before it is not a GRES and
// is passed over; with no "gres:" left the rest is ignored); "name",
// "name:count", "name:type" (count 1) or "name:type:count", the count
// with an optional suffix_mult suffix. An empty type or count
// ("gpu:", "gpu::1") is refused; items with a count of 0 are left out,
// before their names are looked at. Names are not checked here.
func ParseJobRequest(s string) ([]Req, error) {
	var out []Req
	rest := s
	for rest != "" {
		k := strings.Index(rest, "gres:")
		if k < 0 {
			break
		}
		item := rest[k+len("gres:"):]
		if c := strings.IndexByte(item, ','); c >= 0 {
			item, rest = item[:c], item[c+1:]
		} else {
			rest = ""
		}
		if item == "" {
			continue
		}
		r := Req{Name: item, Count: 1}
		name, sep, two := strings.Cut(item, ":")
		if two {
			r.Name = name
			typ, cnt, three := strings.Cut(sep, ":")
			switch {
			case three:
				if typ == "" || cnt == "" {
					return nil, ErrInvalidJobGres
				}
				n, ok := validNumber(cnt)
				if !ok {
					return nil, ErrInvalidJobGres
				}
				r.Type, r.Count = typ, n
			case sep == "":
				return nil, ErrInvalidJobGres
			default:
				if n, ok := validNumber(sep); ok {
					r.Count = n
				} else {
					r.Type = sep
				}
			}
		}
		if r.Count == 0 {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// validNumber is _is_valid_number: strtoull (leading blanks, a sign,
// decimal digits; ULLONG_MAX refused) then a suffix_mult suffix for the
// rest; the product wraps as in C.
func validNumber(s string) (uint64, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	over := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			over = true
		}
		v = v*10 + d
		i++
	}
	end := s[i:]
	switch {
	case i == start:
		v, end = 0, s // no digits: strtoull reads nothing
	case over:
		v = math.MaxUint64
	case neg:
		v = -v
	}
	if v == math.MaxUint64 {
		return 0, false
	}
	mult, ok := suffixMult(end)
	if !ok {
		return 0, false
	}
	return v * mult, true
}

// suffixMult is slurm_protocol_defs.c's suffix_mult.
func suffixMult(s string) (uint64, bool) {
	if s == "" {
		return 1, true
	}
	const ki, kb = 1024, 1000
	for _, m := range []struct {
		bin, dec uint64
		names    []string
	}{
		{ki, kb, []string{"k", "kib", "kb"}},
		{ki * ki, kb * kb, []string{"m", "mib", "mb"}},
		{ki * ki * ki, kb * kb * kb, []string{"g", "gib", "gb"}},
		{ki * ki * ki * ki, kb * kb * kb * kb, []string{"t", "tib", "tb"}},
		{ki * ki * ki * ki * ki, kb * kb * kb * kb * kb, []string{"p", "pib", "pb"}},
	} {
		switch {
		case strings.EqualFold(s, m.names[0]), strings.EqualFold(s, m.names[1]):
			return m.bin, true
		case strings.EqualFold(s, m.names[2]):
			return m.dec, true
		}
	}
	return 0, false
}
