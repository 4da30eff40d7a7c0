package hostlist

import (
	"slices"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"", "n1", "n[1-3]", "n[01-10],login", "rack[1-2]-n[01-04]", "r[1-2]c[1-2]n[1-2]",
	"n[1-3],n2,a5,a01", "n[8-012]", "n[1-", "[", "n[]", "a[x]b[1-2]c[1-3]",
	"n[1-65536]", "n[0-18446744073709551615]", "n[18446744073709551614-18446744073709551615]",
	"x[ 1]y[2]", "n[1, 2]", "a\nb1,ab2", "n[5-],n[1a-3]", "n[1-2]][3]",
}

// simpleHosts reports whether every host is a plain name (letters, dots,
// dashes, underscores, then digits) whose number fits comfortably in 64
// bits, the domain where names survive a round trip through the ranged
// form.
func simpleHosts(hosts []string) bool {
	for _, h := range hosts {
		if h == "" || len(h) > 60 {
			return false
		}
		for i := 0; i < len(h); i++ {
			c := h[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
				return false
			}
		}
		if _, _, width, ok := parseHostname(h); ok && width > 18 {
			return false
		}
	}
	return true
}

func FuzzExpand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	defer func(old int) { maxTotalRanges = old }(maxTotalRanges)
	maxTotalRanges = 1 << 14
	f.Fuzz(func(t *testing.T, expr string) {
		hl, err := Parse(expr)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q): error %T is not *Error", expr, err)
			}
			return
		}
		if hl.Count() > 200000 || len(hl.ranges) > 5000 {
			return // valid but too big to check quickly
		}
		hosts := hl.Hosts()
		_ = hl.Ranged()
		if !hl.Truncated() && len(hosts) > hl.Count() {
			t.Fatalf("Parse(%q): %d hosts, Count %d", expr, len(hosts), hl.Count())
		}
		for i := 0; i < len(hosts) && i < 50; i++ {
			if h, ok := hl.Nth(i); ok && len(hosts[i]) < 79 && h != hosts[i] {
				t.Fatalf("Parse(%q).Nth(%d) = %q, Hosts has %q", expr, i, h, hosts[i])
			}
		}
		sorted := hl.Copy()
		sorted.Sort()
		uniq := hl.Copy()
		uniq.Uniq()
		if len(hl.ranges) <= 200 {
			ref := hl.Copy()
			ref.sortReference(false)
			if got, want := sorted.Ranged(), ref.Ranged(); got != want {
				t.Fatalf("Sort(%q) = %q, reference %q", expr, got, want)
			}
			scontrol := hl.Copy()
			scontrol.SortAsScontrol()
			ref = hl.Copy()
			ref.sortReference(true)
			if got, want := scontrol.Ranged(), ref.Ranged(); got != want {
				t.Fatalf("SortAsScontrol(%q) = %q, reference %q", expr, got, want)
			}
			ref = hl.Copy()
			ref.uniqReference()
			if got, want := uniq.Ranged(), ref.Ranged(); got != want || uniq.Count() != ref.Count() {
				t.Fatalf("Uniq(%q) = %q, reference %q", expr, got, want)
			}
		}
		// Sort keeps every host, Uniq every distinct one (it may keep a
		// duplicate, e.g. when the same name was split differently:
		// "n1[2]" and "n12").
		checkSameHosts(t, "Sort", hl, sorted)
		checkDistinctHosts(t, hl, uniq)
		if !simpleHosts(hosts) || !countable(hl) || len(hl.ranges) > 300 {
			return
		}
		// The ranged form of simple hosts parses back to the same hosts.
		back, err := Expand(hl.Ranged())
		if err != nil || !slices.Equal(back, hosts) {
			t.Fatalf("Expand(Ranged(%q)) = %q, %v; want %q", expr, back, err, hosts)
		}
	})
}

// hostsFromFuzz turns arbitrary fuzz input into plain host names.
func hostsFromFuzz(data string) []string {
	var hosts []string
	for _, part := range strings.FieldsFunc(data, func(r rune) bool { return r == ',' || r == '\n' }) {
		var b strings.Builder
		for i := 0; i < len(part) && b.Len() < 24; i++ {
			c := part[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
				b.WriteByte(c)
			case c >= 'A' && c <= 'Z':
				b.WriteByte(c)
			}
		}
		if h := b.String(); h != "" && simpleHosts([]string{h}) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func FuzzCompressRoundTrip(f *testing.F) {
	for _, s := range []string{
		"n1,n2,n3", "n1\nn3\nn2\nn2", "a5,a01,n1,n2", "n9,n10,n011", "n99,n100,n0101",
		"rack1-n01,rack1-n02,rack2-n01", "1,2,3,x", "n8,n9,n10,n010", "a,a,a1,a01,a001",
		"c0,c00,c000,c1", "node.1,node.2,node-3", "z9,z10,z09,z010", "z9,z10,z9,z10,z00",
		"n3000000000,n3000000001,n1,n2", "9,10,09,010,11,12,13,010,011",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		hosts := hostsFromFuzz(data)
		c := Compress(hosts)
		got, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(%q)) = %q: %v", hosts, c, err)
		}
		if len(hosts) == 0 {
			hosts = []string{}
		}
		if !slices.Equal(got, hosts) {
			t.Fatalf("Expand(Compress(%q)) = %q (via %q)", hosts, got, c)
		}
		if again := Compress(got); again != c {
			t.Fatalf("Compress not stable: %q then %q", c, again)
		}
		s := CompressSorted(hosts)
		sortedBack, err := Expand(s)
		if err != nil {
			t.Fatalf("Expand(CompressSorted(%q)) = %q: %v", hosts, s, err)
		}
		a, b := slices.Clone(hosts), slices.Clone(sortedBack)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("CompressSorted(%q) = %q lost or added hosts: %q", hosts, s, sortedBack)
		}
	})
}
