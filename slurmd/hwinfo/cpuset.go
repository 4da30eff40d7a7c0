package hwinfo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// cpuSet is a set of OS CPU ids. The topologies here have at most a few
// thousand CPUs, so a sorted slice keeps the code plain.
type cpuSet []int

func (s cpuSet) first() int {
	if len(s) == 0 {
		return -1
	}
	return s[0]
}

func (s cpuSet) has(id int) bool {
	i := sort.SearchInts(s, id)
	return i < len(s) && s[i] == id
}

// and keeps the ids also in o.
func (s cpuSet) and(o cpuSet) cpuSet {
	var out cpuSet
	for _, id := range s {
		if o.has(id) {
			out = append(out, id)
		}
	}
	return out
}

// subsetOf reports whether every id of s is in o.
func (s cpuSet) subsetOf(o cpuSet) bool {
	for _, id := range s {
		if !o.has(id) {
			return false
		}
	}
	return true
}

func (s cpuSet) equal(o cpuSet) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// parseCPUMask reads the kernel's hexadecimal cpumask format
// ("ff", "00000000,0000000f": 32-bit words, most significant first).
func parseCPUMask(text string) (cpuSet, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("empty cpumask")
	}
	words := strings.Split(text, ",")
	var out cpuSet
	for w := len(words) - 1; w >= 0; w-- {
		v, err := strconv.ParseUint(words[w], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("cpumask %q: %w", text, err)
		}
		base := (len(words) - 1 - w) * 32
		for b := 0; b < 32; b++ {
			if v&(1<<b) != 0 {
				out = append(out, base+b)
			}
		}
	}
	return out, nil
}

// parseCPUList reads the kernel's list format ("0-3,8,10-11"; "" or a bare
// newline is the empty set, as in /sys/devices/system/cpu/offline).
func parseCPUList(text string) (cpuSet, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(text, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad id %q", text, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", text, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("cpu list %q: range %q too large", text, part)
		}
		for id := a; id <= b; id++ {
			seen[id] = true
		}
	}
	out := make(cpuSet, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Ints(out)
	return out, nil
}
