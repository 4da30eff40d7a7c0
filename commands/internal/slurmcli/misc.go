package slurmcli

import (
	"github.com/goslurm/goslurm/hostlist"
	"os/user"
	"strconv"
	"strings"
)

// MergeSort sorts s in place with glibc's qsort algorithm (a top-down
// merge sort, as glibc 2.36 uses for small arrays), so that ties and
// inconsistent comparators order elements exactly as Slurm's list_sort.
func MergeSort[T any](s []T, cmp func(a, b T) int) {
	if len(s) < 2 {
		return
	}
	tmp := make([]T, len(s))
	msort(s, tmp, cmp)
}

func msort[T any](b, tmp []T, cmp func(a, b T) int) {
	n := len(b)
	if n <= 1 {
		return
	}
	n1 := n / 2
	b1, b2 := b[:n1], b[n1:]
	msort(b1, tmp, cmp)
	msort(b2, tmp, cmp)
	i, j, k := 0, 0, 0
	for i < len(b1) && j < len(b2) {
		if cmp(b1[i], b2[j]) <= 0 {
			tmp[k] = b1[i]
			i++
		} else {
			tmp[k] = b2[j]
			j++
		}
		k++
	}
	for i < len(b1) {
		tmp[k] = b1[i]
		i++
		k++
	}
	// The rest of b2 is already in place.
	copy(b, tmp[:k])
}

// Users caches uid and gid lookups as Slurm's uid_to_string_cached.
type Users struct {
	names  map[uint32]string
	groups map[uint32]string
}

// UserName is uid_to_string: the name, "root" for 0, "nobody" if unknown.
func (u *Users) UserName(uid uint32) string {
	if u.names == nil {
		u.names = map[uint32]string{}
	}
	if n, ok := u.names[uid]; ok {
		return n
	}
	n := "nobody"
	if uid == 0 {
		n = "root"
	} else if pw, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		n = pw.Username
	}
	u.names[uid] = n
	return n
}

// UserNameOK returns the user name and whether the uid is known.
func UserNameOK(uid uint32) (string, bool) {
	pw, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", false
	}
	return pw.Username, true
}

// GroupName returns the group's name ("" if unknown).
func (u *Users) GroupName(gid uint32) string {
	if u.groups == nil {
		u.groups = map[uint32]string{}
	}
	if n, ok := u.groups[gid]; ok {
		return n
	}
	n := ""
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		n = g.Name
	}
	u.groups[gid] = n
	return n
}

// UIDFromString is uid_from_string: a user name, or a number naming an
// existing user.
func UIDFromString(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	if pw, err := user.Lookup(s); err == nil {
		n, err := strconv.ParseUint(pw.Uid, 10, 32)
		return uint32(n), err == nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false
	}
	if _, err := user.LookupId(s); err != nil {
		return 0, false
	}
	return uint32(n), true
}

// CompareStr is xstrcmp: NULL sorts before any string.
func CompareStr(a, b Str) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	return strings.Compare(a.V, b.V)
}

// hostRange is the first range of a hostlist as hostlist_cmp_first sees it.
type hostRange struct {
	prefix string
	lo     uint64
	width  int
	single bool
}

func firstRange(host string) hostRange {
	i := len(host)
	for i > 0 && host[i-1] >= '0' && host[i-1] <= '9' {
		i--
	}
	if i == len(host) {
		return hostRange{prefix: host, single: true}
	}
	n, _ := strconv.ParseUint(host[i:], 10, 64)
	return hostRange{prefix: host[:i], lo: n, width: len(host) - i}
}

// CompareFirstHost is hostlist_cmp_first for two lists given by their
// first (sorted) host; "" is an empty list.
func CompareFirstHost(a, b string) int {
	if a == "" && b == "" {
		return 1
	}
	if a == "" {
		return 1
	}
	if b == "" {
		return -1
	}
	h1, h2 := firstRange(a), firstRange(b)
	if d := NatCompare(h1.prefix, h2.prefix); d != 0 {
		return d
	}
	if h1.single != h2.single {
		if h2.single {
			return 1
		}
		return -1
	}
	if h1.width == h2.width || zeroPadCompatible(h1, h2) {
		switch {
		case h1.lo < h2.lo:
			return -1
		case h1.lo > h2.lo:
			return 1
		}
		return 0
	}
	return h1.width - h2.width
}

func zeroPadCompatible(a, b hostRange) bool {
	// hostrange_width_combine: widths combine when the narrower has no
	// zero padding to lose.
	if a.width > b.width {
		a, b = b, a
	}
	return len(strconv.FormatUint(a.lo, 10)) >= a.width && len(strconv.FormatUint(b.lo, 10)) >= b.width
}

// NatCompare is strnatcmp: digit runs compare as numbers.
func NatCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si := i
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			sj := j
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				if len(na) < len(nb) {
					return -1
				}
				return 1
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// SortHostlist is slurm_sort_node_list_str: the list sorted and ranged.
func SortHostlist(s string) string {
	hl, err := hostlist.Parse(s)
	if err != nil {
		return s
	}
	hl.Sort()
	return hl.Ranged()
}
