package hostlist

import (
	"math"
	"strconv"
)

// hostRange is a run of hosts prefix+lo .. prefix+hi, numbers zero-padded
// to width. A single host whose name does not end in digits has single set
// and is named by prefix alone.
type hostRange struct {
	prefix string
	lo, hi uint64
	width  int
	single bool
}

// count is the number of hosts in r, with Slurm's unsigned arithmetic
// (a range 0-MaxUint64 counts as zero).
func (r *hostRange) count() uint64 {
	if r.single {
		return 1
	}
	return r.hi - r.lo + 1
}

// empty reports whether r holds no more hosts. Like Slurm, a range whose hi
// is MaxUint64 counts as empty.
func (r *hostRange) empty() bool {
	return r.hi < r.lo || r.hi == math.MaxUint64
}

// Hostlist is an ordered list of hosts stored as ranges. The zero value is
// an empty list. A Hostlist is not safe for concurrent use.
type Hostlist struct {
	ranges []*hostRange
	nhosts int
}

// New returns an empty Hostlist.
func New() *Hostlist { return &Hostlist{} }

// Copy returns an independent copy of hl.
func (hl *Hostlist) Copy() *Hostlist {
	c := &Hostlist{ranges: make([]*hostRange, len(hl.ranges)), nhosts: hl.nhosts}
	for i, r := range hl.ranges {
		cp := *r
		c.ranges[i] = &cp
	}
	return c
}

// Count returns the number of hosts, duplicates included.
func (hl *Hostlist) Count() int { return hl.nhosts }

// pushRange appends a copy of r, merging it into the last range when it
// continues it (same prefix, compatible padding, next number).
func (hl *Hostlist) pushRange(r *hostRange) {
	n := len(hl.ranges)
	if n > 0 {
		tail := hl.ranges[n-1]
		if tail.hi == r.lo-1 && prefixCmp(tail, r) == 0 && widthCombine(tail, r) {
			tail.hi = r.hi
			hl.nhosts += int(r.count())
			return
		}
	}
	cp := *r
	hl.ranges = append(hl.ranges, &cp)
	hl.nhosts += int(r.count())
}

// parseHostname splits a host name into prefix and numeric suffix the way
// Slurm does for one-dimensional clusters: the suffix is the trailing run of
// digits. ok is false when the name does not end in a digit.
func parseHostname(name string) (prefix string, num uint64, width int, ok bool) {
	i := len(name)
	for i > 0 && isDigit(name[i-1]) {
		i--
	}
	if i == len(name) {
		return name, 0, 0, false
	}
	num, _ = strtoul(name[i:])
	return name[:i], num, len(name) - i, true
}

// PushHost appends one host name, taken literally (no bracket expansion).
func (hl *Hostlist) PushHost(name string) {
	name = cString(name)
	prefix, num, width, ok := parseHostname(name)
	if ok {
		hl.pushRange(&hostRange{prefix: prefix, lo: num, hi: num, width: width})
	} else {
		hl.pushRange(&hostRange{prefix: name, single: true})
	}
}

// Push parses expr and appends its hosts. It returns the number of hosts
// added.
func (hl *Hostlist) Push(expr string) (int, error) {
	other, err := Parse(expr)
	if err != nil {
		return 0, err
	}
	hl.PushList(other)
	return other.nhosts, nil
}

// PushList appends the hosts of other.
func (hl *Hostlist) PushList(other *Hostlist) {
	for _, r := range other.ranges {
		hl.pushRange(r)
	}
}

// Hosts returns every host in order, as Slurm lists them one by one
// (scontrol show hostnames). The names share one backing string, so a
// 100,000-host list costs three allocations.
func (hl *Hostlist) Hosts() []string {
	var size int
	for _, r := range hl.ranges {
		digits := 0
		if !r.single {
			digits = max(r.width, len(strconv.FormatUint(r.hi, 10)))
		}
		size += int(min(r.count(), uint64(max(hl.nhosts, 0)))) * (len(r.prefix) + digits)
	}
	buf := make([]byte, 0, min(size, 1<<30))
	ends := make([]int, 0, max(hl.nhosts, 0))
	hl.walk(func(r *hostRange, n uint64) {
		buf = append(buf, r.prefix...)
		if !r.single {
			buf = appendPadded(buf, n, r.width)
		}
		ends = append(ends, len(buf))
	})
	all := string(buf)
	out := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// walk calls f for every host, reproducing Slurm's hostlist_shift loop:
// it stops at a range counting zero hosts, and a range ending at MaxUint64
// yields only its first host. It reports whether hosts were still due when
// the ranges ran out (Slurm's scontrol crashes with SIGSEGV there).
func (hl *Hostlist) walk(f func(r *hostRange, n uint64)) (crashed bool) {
	left := hl.nhosts
	for _, r := range hl.ranges {
		if left <= 0 {
			return false
		}
		if r.single {
			f(r, 0)
			left--
			continue
		}
		if r.count() == 0 {
			return false
		}
		for lo := r.lo; left > 0; {
			f(r, lo)
			left--
			lo++
			if r.hi < lo || r.hi == math.MaxUint64 {
				break
			}
		}
	}
	return left > 0
}

// Truncated reports whether the host count disagrees with the ranges so
// that Hosts stops early and Slurm's scontrol would crash (SIGSEGV), as for
// "n[18446744073709551614-18446744073709551615]".
func (hl *Hostlist) Truncated() bool {
	return hl.walk(func(*hostRange, uint64) {})
}

// Nth returns the host at index n (0-based), or false when n is out of
// range. Like Slurm, names longer than 79 bytes are cut and a prefix of 79
// bytes or more yields nothing.
func (hl *Hostlist) Nth(n int) (string, bool) {
	if n < 0 {
		return "", false
	}
	count := 0
	for _, r := range hl.ranges {
		in := int(r.count())
		if n <= in-1+count {
			return nthString(r, uint64(n-count))
		}
		count += in
	}
	return "", false
}

// hostNameMax matches Slurm's HOST_NAME_MAX+16 buffer in hostlist_nth.
const nthBuf = 64 + 16

func nthString(r *hostRange, depth uint64) (string, bool) {
	if len(r.prefix)+1 >= nthBuf {
		return "", false
	}
	if r.single {
		return r.prefix, true
	}
	num := appendPadded(nil, r.lo+depth, r.width)
	if len(num) >= nthBuf {
		return "", false
	}
	s := r.prefix + string(num)
	if len(s) > nthBuf-1 {
		s = s[:nthBuf-1]
	}
	return s, true
}

// hostname is a parsed host name used by Find; Find may rewrite its prefix
// and suffix while matching, as Slurm does.
type hostname struct {
	full   string
	prefix string
	suffix int // index of the numeric suffix in full; -1 if none
	num    uint64
}

func newHostname(name string) *hostname {
	prefix, num, width, ok := parseHostname(name)
	if !ok {
		return &hostname{full: name, prefix: name, suffix: -1}
	}
	return &hostname{full: name, prefix: prefix, suffix: len(name) - width, num: num}
}

// within reports whether hn names a host of r. For prefixes of different
// lengths it moves digits between prefix and suffix ("nid0000[2-7]" finds
// "nid00002"); those changes to hn persist, as in Slurm.
func (r *hostRange) within(hn *hostname) bool {
	if r.single {
		return hn.full == r.prefix
	}
	if hn.suffix < 0 {
		return false
	}
	if r.prefix != hn.prefix {
		len1, len2 := len(r.prefix), len(hn.prefix)
		if len1 == len2 {
			return false
		}
		ldiff := len1 - len2
		switch {
		case ldiff > 0 && len(hn.full)-hn.suffix >= ldiff:
			hn.prefix += hn.full[hn.suffix : hn.suffix+ldiff]
		case ldiff < 0:
			hn.prefix = hn.prefix[:len2+ldiff]
		default:
			return false
		}
		hn.suffix += ldiff
		hn.num, _ = strtoul(hn.full[hn.suffix:])
		if r.prefix != hn.prefix {
			return false
		}
	}
	if hn.num <= r.hi && hn.num >= r.lo {
		width := len(hn.full) - hn.suffix
		num := uint64(int64(int32(hn.num)))
		return widthEquiv(r.lo, &r.width, num, &width)
	}
	return false
}

// Find returns the index of the first occurrence of host name in hl, or -1.
// As in Slurm, a match may adjust the stored zero-padding width.
func (hl *Hostlist) Find(name string) int {
	hn := newHostname(cString(name))
	count := 0
	for _, r := range hl.ranges {
		if r.within(hn) {
			if hn.suffix >= 0 {
				return int(int32(uint64(count) + hn.num - r.lo))
			}
			return count
		}
		count += int(r.count())
	}
	return -1
}

// DeleteNth removes the host at index n. It reports false when n is out of
// range.
func (hl *Hostlist) DeleteNth(n int) bool {
	if n < 0 || n >= hl.nhosts {
		return false
	}
	count := 0
	for i, r := range hl.ranges {
		in := int(r.count())
		if n <= in-1+count {
			num := r.lo + uint64(n-count)
			switch {
			case r.single:
				hl.deleteRange(i)
			case num != r.lo && num != r.hi:
				rest := *r
				r.hi = num - 1
				rest.lo = num + 1
				hl.insertRange(i+1, &rest)
			default:
				if num == r.lo {
					r.lo++
				} else {
					r.hi--
				}
				if r.empty() {
					hl.deleteRange(i)
				}
			}
			break
		}
		count += in
	}
	hl.nhosts--
	return true
}

// DeleteHost removes the first occurrence of name; it reports whether one
// was found.
func (hl *Hostlist) DeleteHost(name string) bool {
	n := hl.Find(name)
	if n < 0 {
		return false
	}
	hl.DeleteNth(n)
	return true
}

// Delete removes, for each host of expr (taken from its end), the first
// occurrence of that host, and returns the number of hosts removed.
func (hl *Hostlist) Delete(expr string) (int, error) {
	del, err := Parse(expr)
	if err != nil {
		return 0, err
	}
	hosts := del.Hosts()
	n := 0
	for i := len(hosts) - 1; i >= 0; i-- {
		if hl.DeleteHost(hosts[i]) {
			n++
		}
	}
	return n, nil
}

func (hl *Hostlist) deleteRange(i int) {
	copy(hl.ranges[i:], hl.ranges[i+1:])
	hl.ranges[len(hl.ranges)-1] = nil
	hl.ranges = hl.ranges[:len(hl.ranges)-1]
}

func (hl *Hostlist) insertRange(i int, r *hostRange) {
	hl.ranges = append(hl.ranges, nil)
	copy(hl.ranges[i+1:], hl.ranges[i:])
	hl.ranges[i] = r
}

// String returns the ranged form, like Ranged.
func (hl *Hostlist) String() string { return hl.Ranged() }

// zeroPadded returns how many zeros "%0*lu" adds to num for width.
func zeroPadded(num uint64, width int) int {
	n := 1
	for num /= 10; num != 0; num /= 10 {
		n++
	}
	if width > n {
		return width - n
	}
	return 0
}

// widthEquiv reports whether numbers n and m can share one zero-padding
// width, and if so makes *wn and *wm equal (Slurm's _width_equiv).
func widthEquiv(n uint64, wn *int, m uint64, wm *int) bool {
	if *wn == *wm {
		return true
	}
	npad, nmpad := zeroPadded(n, *wn), zeroPadded(n, *wm)
	mpad, mnpad := zeroPadded(m, *wm), zeroPadded(m, *wn)
	switch {
	case npad != nmpad && mpad != mnpad:
		return false
	case npad != nmpad:
		*wm = *wn
	default:
		*wn = *wm
	}
	return true
}

func widthCombine(a, b *hostRange) bool { return widthEquiv(a.lo, &a.width, b.lo, &b.width) }

// prefixCmp orders ranges by prefix in natural order; equal prefixes differ
// when exactly one range is a single non-numeric host.
func prefixCmp(a, b *hostRange) int {
	if c := strnatcmp(a.prefix, b.prefix); c != 0 {
		return c
	}
	return b1(b.single) - b1(a.single)
}

func b1(v bool) int {
	if v {
		return 1
	}
	return 0
}

// withinRange reports whether a and b print inside the same brackets.
func withinRange(a, b *hostRange) bool {
	if b == nil {
		return false
	}
	return prefixCmp(a, b) == 0 && !a.single && !b.single
}
