package hostlist

// strnatcmp compares two strings in "natural" order as Slurm's strnatcmp
// does: blanks are skipped, runs of digits compare by value (runs starting
// with '0' compare digit by digit, as fractions), other bytes compare as C
// chars (signed on the platforms Slurm runs on).
func strnatcmp(a, b string) int {
	at := func(s string, i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	ai, bi := 0, 0
	for {
		ca, cb := at(a, ai), at(b, bi)
		for isSpace(ca) {
			ai++
			ca = at(a, ai)
		}
		for isSpace(cb) {
			bi++
			cb = at(b, bi)
		}
		if isDigit(ca) && isDigit(cb) {
			var r int
			if ca == '0' || cb == '0' {
				r = compareLeft(a[ai:], b[bi:])
			} else {
				r = compareRight(a[ai:], b[bi:])
			}
			if r != 0 {
				return r
			}
		}
		if ca == 0 && cb == 0 {
			return 0
		}
		if sa, sb := int8(ca), int8(cb); sa < sb {
			return -1
		} else if sa > sb {
			return 1
		}
		ai++
		bi++
	}
}

func digitAt(s string, i int) bool { return i < len(s) && isDigit(s[i]) }

// compareRight compares right-aligned digit runs: the longer run wins, else
// the first differing digit.
func compareRight(a, b string) int {
	bias := 0
	for i := 0; ; i++ {
		da, db := digitAt(a, i), digitAt(b, i)
		switch {
		case !da && !db:
			return bias
		case !da:
			return -1
		case !db:
			return 1
		case a[i] < b[i]:
			if bias == 0 {
				bias = -1
			}
		case a[i] > b[i]:
			if bias == 0 {
				bias = 1
			}
		}
	}
}

// compareLeft compares left-aligned digit runs: the first difference wins.
func compareLeft(a, b string) int {
	for i := 0; ; i++ {
		da, db := digitAt(a, i), digitAt(b, i)
		switch {
		case !da && !db:
			return 0
		case !da:
			return -1
		case !db:
			return 1
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
}

// rangeCmp is Slurm's hostrange_cmp: prefix in natural order, then the low
// number when the paddings are compatible, else the width. It may unify the
// two widths (as Slurm's does), and it keeps Slurm's truncation of the
// difference to a C int.
func rangeCmp(a, b *hostRange) int {
	if c := prefixCmp(a, b); c != 0 {
		return c
	}
	if widthCombine(a, b) {
		return int(int32(a.lo - b.lo))
	}
	return a.width - b.width
}

// mergeSort sorts rs with the same merge sort (and therefore the same
// sequence of comparisons) as glibc's qsort, which Slurm uses. rangeCmp
// is not a strict order and mutates widths, so the algorithm matters.
func mergeSort(rs []*hostRange) {
	if len(rs) <= 1 {
		return
	}
	tmp := make([]*hostRange, len(rs))
	msort(rs, tmp)
}

func msort(b, tmp []*hostRange) {
	n := len(b)
	if n <= 1 {
		return
	}
	n1 := n / 2
	b1, b2 := b[:n1], b[n1:]
	msort(b1, tmp)
	msort(b2, tmp)
	i, j, k := 0, 0, 0
	for i < len(b1) && j < len(b2) {
		if rangeCmp(b1[i], b2[j]) <= 0 {
			tmp[k] = b1[i]
			i++
		} else {
			tmp[k] = b2[j]
			j++
		}
		k++
	}
	k += copy(tmp[k:], b1[i:])
	copy(b, tmp[:k])
}

// Sort orders the hosts as Slurm's hostlist_sort: by prefix (natural
// order), then number, splitting overlapping ranges and merging adjacent
// ones. It does not remove duplicates: "n[1-3],n2" sorts to "n[1-2,2-3]".
//
// Sort never loses or invents a host: the sorted list holds the same
// multiset of hosts. Wherever Slurm's sort is well defined the result is
// exactly Slurm's. Where Slurm's hostlist_coalesce reads freed memory and
// drops hosts (two neighbouring ranges out of numeric order, which its
// comparison allows for mixed zero-padding and for numbers 2^31 or more
// apart), Sort puts the pair in order and splits it as Slurm splits an
// ordered pair, keeping every host. Likewise it never merges ranges whose
// prefixes differ only in blanks ("\nn1" and "n2"), which Slurm compares
// as equal and merges, renaming hosts. Use SortAsScontrol only to
// reproduce scontrol's output byte for byte.
func (hl *Hostlist) Sort() { hl.sort(false) }

// SortAsScontrol is Sort as real scontrol 22.05 (glibc) prints it,
// including the use-after-free in Slurm's hostlist_coalesce that drops
// hosts: "[3-10,9-15,09-12]" sorts to "[3-9,9-10,10-12]", losing 13-15
// and a 10. It exists only so that "scontrol show hostlistsorted" stays
// byte-identical to Slurm's; everything else should call Sort. It agrees
// with Sort except where Slurm loses hosts or merges prefixes that differ
// only in blanks; Count is not adjusted for the lost hosts.
func (hl *Hostlist) SortAsScontrol() { hl.sort(true) }

func (hl *Hostlist) sort(asScontrol bool) {
	if len(hl.ranges) <= 1 {
		return
	}
	mergeSort(hl.ranges)
	hl.coalesce(asScontrol)
}

// samePrefix reports whether a and b may be merged into one range.
// Slurm compares prefixes with strnatcmp, which skips blanks, so it merges
// "\nn1" into "n1" and renames the host; with exact it takes byte-equal
// prefixes only.
func samePrefix(a, b *hostRange, exact bool) bool {
	return prefixCmp(a, b) == 0 && (!exact || a.prefix == b.prefix)
}

// intersect is Slurm's hostrange_intersect for sorted a <= b (with exact,
// prefixes must be byte-equal).
func intersect(a, b *hostRange, exact bool) *hostRange {
	if a.single || b.single {
		return nil
	}
	if a.hi > b.lo && samePrefix(a, b, exact) && widthCombine(a, b) {
		n := *a
		n.lo = b.lo
		n.hi = min(b.hi, a.hi)
		return &n
	}
	return nil
}

// coalesce splits overlapping neighbours the way Slurm's hostlist_coalesce
// does, then joins adjacent ranges. asScontrol selects what happens to a
// pair out of numeric order (see Sort and SortAsScontrol).
//
// Slurm scans pairs from the end of the list towards the front, and after
// every split inserts single hosts in the middle of its array and rescans
// from the end, which is quadratic. Testing a disjoint pair changes
// nothing, so resuming just right of the split gives the same result;
// keeping the list as a front slice and a back stack (the scan position
// is the boundary) makes every step O(1) amortised.
//
// For an ordered pair prev=[a,b], next=[c,d] (a <= c < b) a split lays
// the hosts of both out in ascending order: [a,c], then singles c, c+1,
// c+1, ..., m-1, m-1, m, then [m,max(b,d)] with m = min(b,d). Each split
// sorts a contiguous run of hosts that held an inversion, so inversions
// only decrease and the loop ends.
func (hl *Hostlist) coalesce(asScontrol bool) {
	n := len(hl.ranges)
	if n < 2 {
		return
	}
	front := hl.ranges[: n-1 : n-1]      // list positions 0 .. len(front)-1
	back := []*hostRange{hl.ranges[n-1]} // the rest, leftmost last
	for len(front) > 0 {
		prev, next := front[len(front)-1], back[len(back)-1]
		nr := intersect(prev, next, !asScontrol)
		if nr == nil {
			back = append(back, prev)
			front = front[:len(front)-1]
			continue
		}
		if next.lo < prev.lo && !asScontrol {
			// The pair is out of order: Slurm's sort compared it by
			// width (or its difference overflowed an int) and
			// intersect has since unified the widths. Slurm would
			// empty prev below and free the wrong range. Swap the
			// pair instead (with unified widths no name changes) and
			// split it, if it still overlaps, as an ordered pair.
			prev, next = next, prev
			front[len(front)-1], back[len(back)-1] = prev, next
			nr = intersect(prev, next, !asScontrol)
		}
		if nr != nil {
			if nr.hi < prev.hi {
				next.hi = prev.hi
			}
			prev.hi = nr.lo
			next.lo = nr.hi
			// When prev has emptied (a pair out of order, which only
			// SortAsScontrol splits), Slurm deletes (and frees) next
			// instead, then keeps reading next.lo. With glibc, each
			// single host allocated in the loop below reuses next's
			// memory, so next.lo always equals the host being tested
			// and the second test never holds. We reproduce that
			// observed behaviour.
			nextGone := prev.empty()
			if nextGone {
				back = back[:len(back)-1]
			}
			for lo := nr.lo; lo <= nr.hi; lo++ {
				one := hostRange{prefix: nr.prefix, lo: lo, hi: lo, width: nr.width}
				if lo > prev.hi {
					c := one
					front = append(front, &c)
				}
				if !nextGone && lo < next.lo {
					c := one
					front = append(front, &c)
				}
				if lo == nr.hi { // do not wrap at MaxUint64
					break
				}
			}
		}
		// Slurm rescans from the end; the first pair that can intersect
		// is (j, j+1), j being where next (or its successor) now is.
		// After a swap without a split the same holds: pairs further
		// right are unchanged.
		j := len(front)
		total := len(front) + len(back)
		target := min(j+1, total-1)
		for len(front) < target {
			front = append(front, back[len(back)-1])
			back = back[:len(back)-1]
		}
		for len(front) > target {
			back = append(back, front[len(front)-1])
			front = front[:len(front)-1]
		}
	}
	out := make([]*hostRange, 0, len(front)+len(back))
	out = append(out, front...)
	for i := len(back) - 1; i >= 0; i-- {
		out = append(out, back[i])
	}
	hl.ranges = out
	hl.collapse(!asScontrol)
}

// collapse joins neighbouring ranges that continue each other. Slurm
// walks from the end, merging each range into its predecessor and
// deleting it; this does the same merges in the same order in one pass.
func (hl *Hostlist) collapse(exact bool) {
	n := len(hl.ranges)
	if n < 2 {
		return
	}
	// Kept ranges are written from the end of the slice backwards.
	w := n - 1
	cur := hl.ranges[n-1]
	for i := n - 1; i > 0; i-- {
		prev := hl.ranges[i-1]
		if prev.hi == cur.lo-1 && samePrefix(prev, cur, exact) && widthCombine(prev, cur) {
			prev.hi = cur.hi
		} else {
			hl.ranges[w] = cur
			w--
		}
		cur = prev
	}
	hl.ranges[w] = cur
	kept := copy(hl.ranges, hl.ranges[w:])
	clear(hl.ranges[kept:])
	hl.ranges = hl.ranges[:kept]
}

// join merges b into a (a sorted before b) when they overlap or touch. It
// returns the number of duplicated hosts, or -1 when they cannot merge.
// For a <= b with byte-equal prefixes it is Slurm's hostrange_join;
// prefixes that differ only in blanks (equal to Slurm) are not joined.
func join(a, b *hostRange) int {
	if !samePrefix(a, b, true) || !widthCombine(a, b) {
		return -1
	}
	switch {
	case a.single && b.single:
		return 1
	case b.lo < a.lo:
		// Out of numeric order (Slurm's sort compared the pair by width
		// or its difference overflowed an int). Slurm's join would drop
		// b whole even when disjoint from a; join only when they
		// overlap or touch, counting the true overlap.
		if b.hi < a.lo-1 {
			return -1
		}
		d := uint64(0)
		if b.hi >= a.lo {
			d = min(a.hi, b.hi) - a.lo + 1
		}
		a.lo, a.hi = b.lo, max(a.hi, b.hi)
		return int(int32(d))
	case a.hi == b.lo-1:
		a.hi = b.hi
		return 0
	case a.hi >= b.lo:
		if a.hi < b.hi {
			d := a.hi - b.lo + 1
			a.hi = b.hi
			return int(int32(d))
		}
		return int(int32(b.count()))
	}
	return -1
}

// Uniq sorts the list (in Slurm's order, as Sort) and removes duplicate
// hosts as Slurm's hostlist_uniq does. It never drops a distinct host:
// where Slurm's order leaves two ranges out of numeric order, Slurm's join
// may delete hosts that are not duplicates; Uniq then joins only ranges
// that overlap or touch. Nor does it join prefixes that differ only in
// blanks, which Slurm treats as equal. It can keep a duplicate that Slurm's order does
// not bring next to its twin (or that is named through different
// prefixes, "n1[2]" and "n12").
func (hl *Hostlist) Uniq() {
	if len(hl.ranges) <= 1 {
		return
	}
	mergeSort(hl.ranges)
	// Slurm joins each range into its predecessor and deletes it; a
	// single left-to-right pass performs the same joins.
	w := 0
	for _, r := range hl.ranges[1:] {
		if d := join(hl.ranges[w], r); d >= 0 {
			hl.nhosts -= d
			continue
		}
		w++
		hl.ranges[w] = r
	}
	clear(hl.ranges[w+1:])
	hl.ranges = hl.ranges[:w+1]
}
