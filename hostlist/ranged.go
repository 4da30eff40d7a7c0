package hostlist

// Ranged returns the compressed form of the list, exactly as Slurm's
// hostlist_ranged_string prints it for one-dimensional clusters. Runs of
// neighbouring ranges with the same prefix share one pair of brackets, in
// list order: "n[1-3],a[5,01]". Call Sort (or Uniq) first for the
// canonical form.
func (hl *Hostlist) Ranged() string {
	return string(hl.AppendRanged(nil))
}

// AppendRanged appends the ranged form to b.
func (hl *Hostlist) AppendRanged(b []byte) []byte {
	rs := hl.ranges
	for i := 0; i < len(rs); {
		if i > 0 {
			b = append(b, ',')
		}
		var next *hostRange
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		bracket := rs[i].count() > 1 || withinRange(rs[i], next)
		b = append(b, rs[i].prefix...)
		if bracket {
			b = append(b, '[')
		}
		start := i
		for {
			if i > start {
				b = append(b, ',')
			}
			b = rs[i].appendNumbers(b)
			i++
			if i >= len(rs) || !withinRange(rs[i], rs[i-1]) {
				break
			}
		}
		if bracket {
			b = append(b, ']')
		}
	}
	return b
}

// appendNumbers appends "lo" or "lo-hi" (nothing for a single host).
func (r *hostRange) appendNumbers(b []byte) []byte {
	if r.single {
		return b
	}
	b = appendPadded(b, r.lo, r.width)
	if r.lo < r.hi {
		b = append(b, '-')
		b = appendPadded(b, r.hi, r.width)
	}
	return b
}

// Compress returns the ranged form of hosts, keeping their order (no
// sorting, no de-duplication): Compress([n1 n2 n3 a5]) is "n[1-3],a5".
// Names are taken literally; use Parse for expressions.
func Compress(hosts []string) string {
	hl := New()
	for _, h := range hosts {
		hl.PushHost(h)
	}
	return hl.Ranged()
}

// CompressSorted is Compress after Sort (Slurm's order, duplicates kept):
// the form "scontrol show hostlistsorted" prints, except that it keeps the
// hosts scontrol loses (see SortAsScontrol).
func CompressSorted(hosts []string) string {
	hl := New()
	for _, h := range hosts {
		hl.PushHost(h)
	}
	hl.Sort()
	return hl.Ranged()
}
