package hostlist

import (
	"math/rand/v2"
	"testing"
)

// The reference implementations below follow Slurm's algorithms step by
// step (rescanning from the end after every change, deleting and inserting
// one element at a time). They are quadratic and exist only to check the
// linear versions.

// coalesceReference is Slurm's hostlist_coalesce. Unless asScontrol, a
// pair out of numeric order is swapped, then split if it still overlaps,
// and only byte-equal prefixes merge.
func (hl *Hostlist) coalesceReference(asScontrol bool) {
	for i := len(hl.ranges) - 1; i > 0; i-- {
		nr := intersect(hl.ranges[i-1], hl.ranges[i], !asScontrol)
		if nr == nil {
			continue
		}
		prev, next := hl.ranges[i-1], hl.ranges[i]
		if !asScontrol && next.lo < prev.lo {
			prev, next = next, prev
			hl.ranges[i-1], hl.ranges[i] = prev, next
			if nr = intersect(prev, next, !asScontrol); nr == nil {
				i = len(hl.ranges)
				continue
			}
		}
		j := i
		if nr.hi < prev.hi {
			next.hi = prev.hi
		}
		prev.hi = nr.lo
		next.lo = nr.hi
		nextGone := prev.empty()
		if nextGone {
			hl.deleteRange(i)
		}
		for nr.lo <= nr.hi {
			one := &hostRange{prefix: nr.prefix, lo: nr.lo, hi: nr.lo, width: nr.width}
			if nr.lo > prev.hi {
				c := *one
				hl.insertRange(j, &c)
				j++
			}
			if !nextGone && nr.lo < next.lo {
				c := *one
				hl.insertRange(j, &c)
				j++
			}
			if nr.lo == nr.hi {
				break
			}
			nr.lo++
		}
		i = len(hl.ranges)
	}
	for i := len(hl.ranges) - 1; i > 0; i-- {
		prev, next := hl.ranges[i-1], hl.ranges[i]
		if prev.hi == next.lo-1 && samePrefix(prev, next, !asScontrol) && widthCombine(prev, next) {
			prev.hi = next.hi
			hl.deleteRange(i)
		}
	}
}

func (hl *Hostlist) sortReference(asScontrol bool) {
	if len(hl.ranges) <= 1 {
		return
	}
	mergeSort(hl.ranges)
	hl.coalesceReference(asScontrol)
}

func (hl *Hostlist) uniqReference() {
	if len(hl.ranges) <= 1 {
		return
	}
	mergeSort(hl.ranges)
	for i := 1; i < len(hl.ranges); {
		d := join(hl.ranges[i-1], hl.ranges[i])
		if d < 0 {
			i++
			continue
		}
		hl.deleteRange(i)
		hl.nhosts -= d
	}
}

// randomRangeList builds a list of overlapping, duplicated and oddly padded
// ranges over a few prefixes.
func randomRangeList(r *rand.Rand) *Hostlist {
	hl := New()
	prefixes := []string{"n", "a", "n0", "rack1-n", ""}
	for k := r.IntN(12); k >= 0; k-- {
		p := prefixes[r.IntN(len(prefixes))]
		switch r.IntN(6) {
		case 0:
			hl.PushHost(p + "x")
		case 1:
			hl.PushHost(p)
		default:
			lo := uint64(r.IntN(40))
			hi := lo + uint64(r.IntN(15))
			hl.pushRange(&hostRange{prefix: p, lo: lo, hi: hi, width: r.IntN(4)})
		}
	}
	return hl
}

func TestSortMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 20000; i++ {
		hl := randomRangeList(r)
		a, b := hl.Copy(), hl.Copy()
		a.Sort()
		b.sortReference(false)
		if a.Ranged() != b.Ranged() || a.Count() != b.Count() {
			t.Fatalf("Sort(%q) = %q, reference %q", hl.Ranged(), a.Ranged(), b.Ranged())
		}
		checkSameHosts(t, "Sort", hl, a)
		a, b = hl.Copy(), hl.Copy()
		a.SortAsScontrol()
		b.sortReference(true)
		if a.Ranged() != b.Ranged() || a.Count() != b.Count() {
			t.Fatalf("SortAsScontrol(%q) = %q, reference %q", hl.Ranged(), a.Ranged(), b.Ranged())
		}
		a, b = hl.Copy(), hl.Copy()
		a.Uniq()
		b.uniqReference()
		if a.Ranged() != b.Ranged() || a.Count() != b.Count() {
			t.Fatalf("Uniq(%q) = %q (%d), reference %q (%d)", hl.Ranged(), a.Ranged(), a.Count(), b.Ranged(), b.Count())
		}
		checkDistinctHosts(t, hl, a)
	}
}
