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
// order), then number, merging adjacent ranges. It does not remove
// duplicates: "n[1-3],n2" sorts to "n[1-2,2-3]".
func (hl *Hostlist) Sort() {
	if len(hl.ranges) <= 1 {
		return
	}
	mergeSort(hl.ranges)
	hl.coalesce()
}

// intersect is Slurm's hostrange_intersect for sorted a <= b.
func intersect(a, b *hostRange) *hostRange {
	if a.single || b.single {
		return nil
	}
	if a.hi > b.lo && prefixCmp(a, b) == 0 && widthCombine(a, b) {
		n := *a
		n.lo = b.lo
		n.hi = min(b.hi, a.hi)
		return &n
	}
	return nil
}

// coalesce splits overlapping neighbours the way Slurm's hostlist_coalesce
// does, then joins adjacent ranges.
//
// Slurm scans pairs from the end of the list towards the front, and after
// every split inserts single hosts in the middle of its array and rescans
// from the end, which is quadratic. Testing a disjoint pair changes
// nothing, so resuming just right of the split gives the same result;
// keeping the list as a front slice and a back stack (the scan position
// is the boundary) makes every step O(1) amortised.
func (hl *Hostlist) coalesce() {
	n := len(hl.ranges)
	if n < 2 {
		return
	}
	front := hl.ranges[: n-1 : n-1]      // list positions 0 .. len(front)-1
	back := []*hostRange{hl.ranges[n-1]} // the rest, leftmost last
	for len(front) > 0 {
		prev, next := front[len(front)-1], back[len(back)-1]
		nr := intersect(prev, next)
		if nr == nil {
			back = append(back, prev)
			front = front[:len(front)-1]
			continue
		}
		if nr.hi < prev.hi {
			next.hi = prev.hi
		}
		prev.hi = nr.lo
		next.lo = nr.hi
		// When prev has emptied, Slurm deletes (and frees) next instead,
		// then keeps reading next.lo. With glibc, each single host
		// allocated in the loop below reuses next's memory, so next.lo
		// always equals the host being tested and the second test never
		// holds. We reproduce that observed behaviour.
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
		// Slurm rescans from the end; the first pair that can intersect
		// is (j, j+1), j being where next (or its successor) now is.
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
	hl.collapse()
}

// collapse joins neighbouring ranges that continue each other. Slurm
// walks from the end, merging each range into its predecessor and
// deleting it; this does the same merges in the same order in one pass.
func (hl *Hostlist) collapse() {
	n := len(hl.ranges)
	if n < 2 {
		return
	}
	// Kept ranges are written from the end of the slice backwards.
	w := n - 1
	cur := hl.ranges[n-1]
	for i := n - 1; i > 0; i-- {
		prev := hl.ranges[i-1]
		if prev.hi == cur.lo-1 && prefixCmp(prev, cur) == 0 && widthCombine(prev, cur) {
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
func join(a, b *hostRange) int {
	if prefixCmp(a, b) != 0 || !widthCombine(a, b) {
		return -1
	}
	switch {
	case a.single && b.single:
		return 1
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

// Uniq sorts the list (as Sort) and removes duplicate hosts.
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
