package hostlist

import (
	"math"
	"slices"
	"testing"
)

// countable reports whether every host of hl can be listed: no range
// reaches 2^64-1 or runs backwards (there Slurm's counts wrap and the host
// set is not defined), and the list is small enough to expand.
func countable(hl *Hostlist) bool {
	total := uint64(0)
	for _, r := range hl.ranges {
		if !r.single && (r.hi < r.lo || r.hi == math.MaxUint64) {
			return false
		}
		total += r.count()
		if total > 200000 {
			return false
		}
	}
	return int(total) == hl.Count() && len(hl.ranges) <= 5000
}

func sortedHosts(hl *Hostlist) []string {
	h := hl.Hosts()
	slices.Sort(h)
	return h
}

// checkSameHosts fails unless after holds the same multiset of hosts as
// before (for countable lists).
func checkSameHosts(t *testing.T, op string, before, after *Hostlist) {
	t.Helper()
	if !countable(before) {
		return
	}
	if a, b := sortedHosts(before), sortedHosts(after); !slices.Equal(a, b) || after.Count() != before.Count() {
		t.Fatalf("%s(%q) = %q changed the hosts (%d -> %d hosts)", op, before.Ranged(), after.Ranged(), len(a), len(b))
	}
}

// checkDistinctHosts fails unless uniq holds every distinct host of before
// and its Count matches its hosts.
func checkDistinctHosts(t *testing.T, before, uniq *Hostlist) {
	t.Helper()
	if !countable(before) {
		return
	}
	want := slices.Compact(sortedHosts(before))
	got := uniq.Hosts()
	if len(got) != uniq.Count() {
		t.Fatalf("Uniq(%q) = %q: Count %d, %d hosts", before.Ranged(), uniq.Ranged(), uniq.Count(), len(got))
	}
	slices.Sort(got)
	if !slices.Equal(slices.Compact(got), want) {
		t.Fatalf("Uniq(%q) = %q lost or added a distinct host", before.Ranged(), uniq.Ranged())
	}
}

// TestSortKeepsHosts covers inputs on which Slurm's hostlist_coalesce
// reads freed memory and loses hosts: SortAsScontrol reproduces real
// scontrol 22.05.8 (the "scontrol" column was produced by it), Sort keeps
// every host.
func TestSortKeepsHosts(t *testing.T) {
	tests := []struct{ expr, scontrol, sorted string }{
		{"[3-10,9-15,09-12]", "[3-9,9-10,10-12]", "[3-9,9,09-10,10,10-11,11-12,12-15]"},
		{"[0-11,3-10,9-15,09-12]", "[0-3,3-4,4-5,5-6,6-7,7-8,8-9,9,9-10,10,10-11,11-12]",
			"[0-3,3-4,4-5,5-6,6-7,7-8,8-9,9,9-11,09-10,10,10-11,11-12,12-15]"},
		{"z9,z10,z9,z10,z00", "z[9,9-10,10]", "z[9,9,00,10,10]"},
		{"n[3000000000-3000000002],n[1-2]", "n[3000000000]", "n[1-2,3000000000-3000000002]"},
		{"n[4294967296,1]", "n[4294967296]", "n[1,4294967296]"},
		{"[3-20,5-15,09-12]", "[3-5,5-6,6-7,7-8,8-9,9-10,10-11,11-12,12-13,13-14,14-15,15]",
			"[3-5,5-6,6-7,7-8,8-9,9,09-10,10,10-11,11,11-12,12,12-13,13-14,14-15,15-20]"},
		// prefixes equal to Slurm's strnatcmp (blanks skipped) but not
		// byte-equal: Slurm merges them, renaming hosts
		{"\nb b", "\nb,b", "\nb,b"},
		// well defined in Slurm: both agree
		{"n[01-03],n[2-5]", "n[2-5,01-03]", "n[2-5,01-03]"},
		{"n[1-5],n[3-8]", "n[1-3,3-4,4-5,5-8]", "n[1-3,3-4,4-5,5-8]"},
	}
	for _, tt := range tests {
		hl, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.expr, err)
		}
		s := hl.Copy()
		s.Sort()
		checkSameHosts(t, "Sort", hl, s)
		if s.Ranged() != tt.sorted {
			t.Errorf("Sort(%q) = %q, want %q", tt.expr, s.Ranged(), tt.sorted)
		}
		c := hl.Copy()
		c.SortAsScontrol()
		if c.Ranged() != tt.scontrol {
			t.Errorf("SortAsScontrol(%q) = %q, want %q", tt.expr, c.Ranged(), tt.scontrol)
		}
		if got := CompressSorted(hl.Hosts()); got != s.Ranged() {
			t.Errorf("CompressSorted(%q) = %q, Sort gives %q", tt.expr, got, s.Ranged())
		}
		u := hl.Copy()
		u.Uniq()
		checkDistinctHosts(t, hl, u)
	}
}

// TestUniqOutOfOrder checks that Uniq keeps hosts that Slurm's join drops
// when the sort leaves ranges out of numeric order.
func TestUniqOutOfOrder(t *testing.T) {
	for _, tt := range []struct{ expr, uniq string }{
		// 3e9 - 1 overflows Slurm's int comparison: n[3e9...] sorts first.
		{"n[3000000000-3000000002],n[1-2]", "n[3000000000-3000000002,1-2]"},
		{"n[2147483648-2147483650],n[2147483649-2147483651],n[1-3]", "n[2147483648-2147483651,1-3]"},
		{"[3-10,9-15,09-12]", "[3-15,09-12]"},
		{"\nb b", "\nb,b"},
	} {
		hl, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		u := hl.Copy()
		u.Uniq()
		checkDistinctHosts(t, hl, u)
		if got := u.Ranged(); got != tt.uniq {
			t.Errorf("Uniq(%q) = %q, want %q", tt.expr, got, tt.uniq)
		}
	}
	// The out-of-order join itself: overlapping, touching, disjoint.
	for _, tt := range []struct {
		a, b   [2]uint64
		d      int
		lo, hi uint64
	}{
		{[2]uint64{10, 15}, [2]uint64{9, 12}, 3, 9, 15},
		{[2]uint64{10, 15}, [2]uint64{3, 20}, 6, 3, 20},
		{[2]uint64{10, 15}, [2]uint64{3, 9}, 0, 3, 15},
		{[2]uint64{10, 15}, [2]uint64{3, 8}, -1, 10, 15},
	} {
		a := &hostRange{prefix: "n", lo: tt.a[0], hi: tt.a[1]}
		b := &hostRange{prefix: "n", lo: tt.b[0], hi: tt.b[1]}
		if d := join(a, b); d != tt.d || a.lo != tt.lo || a.hi != tt.hi {
			t.Errorf("join(%v, %v) = %d, n[%d-%d]; want %d, n[%d-%d]", tt.a, tt.b, d, a.lo, a.hi, tt.d, tt.lo, tt.hi)
		}
	}
}

// blankPrefixes reports whether a prefix holds a blank. Only then can
// Slurm's strnatcmp call different prefixes equal and merge their ranges,
// renaming hosts (sometimes back again: "0 1 \f0 0").
func blankPrefixes(hl *Hostlist) bool {
	for _, r := range hl.ranges {
		for i := 0; i < len(r.prefix); i++ {
			if isSpace(r.prefix[i]) {
				return true
			}
		}
	}
	return false
}

// FuzzSort checks, for every expression, that Sort and Uniq keep the
// hosts, that both sorts match their step-by-step references, and that
// Sort equals SortAsScontrol whenever the latter keeps every host and no
// prefix holds a blank (Slurm's behaviour is then well defined).
func FuzzSort(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{
		"[3-10,9-15,09-12]", "[0-11,3-10,9-15,09-12]", "z9,z10,z9,z10,z00", "n[01-03],n[2-5]",
		"n[3000000000-3000000002],n[1-2]", "[3-20,5-15,09-12]", "n[1-5],n[3-8]",
		"[26-35,3-10,09-12],a,ax,[011-021],n[03-07],[0-11],a[039-043],n0x,a[008-015],[9-15]",
	} {
		f.Add(s)
	}
	defer func(old int) { maxTotalRanges = old }(maxTotalRanges)
	maxTotalRanges = 1 << 14
	f.Fuzz(func(t *testing.T, expr string) {
		hl, err := Parse(expr)
		if err != nil || !countable(hl) || len(hl.ranges) > 300 {
			return
		}
		s := hl.Copy()
		s.Sort()
		checkSameHosts(t, "Sort", hl, s)
		ref := hl.Copy()
		ref.sortReference(false)
		if s.Ranged() != ref.Ranged() {
			t.Fatalf("Sort(%q) = %q, reference %q", expr, s.Ranged(), ref.Ranged())
		}
		c := hl.Copy()
		c.SortAsScontrol()
		ref = hl.Copy()
		ref.sortReference(true)
		if c.Ranged() != ref.Ranged() {
			t.Fatalf("SortAsScontrol(%q) = %q, reference %q", expr, c.Ranged(), ref.Ranged())
		}
		if slices.Equal(sortedHosts(c), sortedHosts(hl)) && !blankPrefixes(hl) && c.Ranged() != s.Ranged() {
			t.Fatalf("Sort(%q) = %q, but SortAsScontrol keeps the hosts and gives %q", expr, s.Ranged(), c.Ranged())
		}
		again := s.Copy()
		again.Sort()
		checkSameHosts(t, "Sort", s, again)
		u := hl.Copy()
		u.Uniq()
		checkDistinctHosts(t, hl, u)
	})
}
