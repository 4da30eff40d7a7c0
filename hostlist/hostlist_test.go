package hostlist

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{"", []string{}},
		{"n1", []string{"n1"}},
		{"n[1-3]", []string{"n1", "n2", "n3"}},
		{"n[01-03]", []string{"n01", "n02", "n03"}},
		{"n[8-012]", []string{"n8", "n9", "n10", "n11", "n12"}},
		{"n[08-12]", []string{"n08", "n09", "n10", "n11", "n12"}},
		{"n[098-101]", []string{"n098", "n099", "n100", "n101"}},
		{"n[1,3,5-6]", []string{"n1", "n3", "n5", "n6"}},
		{"n[3,1],n1", []string{"n3", "n1", "n1"}},
		{"rack[1-2]-n[01-02]", []string{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}},
		// With three groups the middle one varies slowest (Slurm's order).
		{"r[1-2]c[1-2]n[1-2]", []string{"r1c1n1", "r1c1n2", "r2c1n1", "r2c1n2", "r1c2n1", "r1c2n2", "r2c2n1", "r2c2n2"}},
		{"a[1,3]b[01-02]c", nil}, // text after the last bracket is an error
		{"node-1.x,node_2.y", []string{"node-1.x", "node_2.y"}},
		{"a b\tc,,d", []string{"a", "b", "c", "d"}},
		{" , n1 ,", []string{"n1"}},
		{"n[1, 2]", []string{"n1", "n02"}},     // width counts the blank
		{"n[5-]", []string{"n5"}},              // empty high bound
		{"n[1a-2]", []string{"n01", "n02"}},    // garbage before '-' ignored
		{"n[+1-2]", []string{"n01", "n02"}},    // sign accepted by strtoul
		{"n[1-", []string{"n]"}},               // a missing ']' is appended
		{"[1-", []string{"1-"}},                // ... or '[' dropped
		{"a[b[1-2]", []string{"a[b1", "a[b2"}}, // stray '[' stays in the prefix
		{"x[ 1]y[2]", []string{"x01y2"}},
		{"a[x]b[1-2]c[1-2]", []string{}},                               // far-left error only logged
		{"n[0-18446744073709551615]", []string{}},                      // counts as zero hosts
		{"n[18446744073709551616]", []string{"n18446744073709551615"}}, // saturates
		{"n007", []string{"n007"}},
		{"123", []string{"123"}},
		{"[", []string{""}},
	}
	for _, tt := range tests {
		got, err := Expand(tt.expr)
		if tt.want == nil {
			if err == nil {
				t.Errorf("Expand(%q) = %q, want error", tt.expr, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.expr, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Expand(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		expr     string
		sentinel error
		detail   string
	}{
		{"n[1-300000]", ErrTooManyHosts, "_parse_single_range: Too many hosts in range `1-300000'"},
		{"n[1-65537]", ErrTooManyHosts, "_parse_single_range: Too many hosts in range `1-65537'"},
		{"n[0-65536]", ErrTooManyHosts, "_parse_single_range: Too many hosts in range `0-65536'"},
		{"n[]", ErrInvalidRange, "_parse_single_range: Invalid range: `'"},
		{"n[3-1]", ErrInvalidRange, "_parse_single_range: Invalid range: `3-1'"},
		{"n[1--2]", ErrInvalidRange, "_parse_single_range: Invalid range: `1--2'"},
		{"n[1x2]", ErrInvalidRange, "_parse_single_range: Invalid range: `1x2'"},
		{"n[a]", ErrInvalidRange, "_parse_single_range: Invalid range: `a'"},
		{"n[1-2b]", ErrInvalidRange, "_parse_single_range: Invalid range: `1-2b'"},
		{"n[1,]", ErrInvalidRange, "_parse_single_range: Invalid range: `'"},
		{"n[1-2]x", ErrMalformed, ""},
		{"n[1-2]][3]", ErrInvalidRange, "_parse_single_range: Invalid range: `1-2]'"},
		{"n[1]x[2]y", ErrMalformed, ""},
		{"a[1-2]b[x]c[1]", ErrInvalidRange, "_parse_single_range: Invalid range: `x'"},
		{"a[1-65537]b[1]", ErrTooManyHosts, "_parse_single_range: Too many hosts in range `1-65537'"},
		{"a[1-40000,1-40000]b[1]", ErrTooManyPrefixes, ""},
		{"n[" + strings.Repeat("1,", MaxRanges) + "1]", ErrTooManyRanges, "_parse_range_list: Too many ranges, can't process entire list"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.expr)
		var he *Error
		if !errors.As(err, &he) {
			t.Errorf("Parse(%.40q) error = %v, want *Error", tt.expr, err)
			continue
		}
		if !errors.Is(err, tt.sentinel) {
			t.Errorf("Parse(%.40q) = %v, want %v", tt.expr, he.Err, tt.sentinel)
		}
		if he.Detail != tt.detail {
			t.Errorf("Parse(%.40q) detail = %q, want %q", tt.expr, he.Detail, tt.detail)
		}
		if tt.sentinel != ErrTooManyRanges && he.Error() != "Invalid hostlist: "+tt.expr {
			t.Errorf("Parse(%.40q).Error() = %q", tt.expr, he.Error())
		}
	}
}

func TestLimitsAccepted(t *testing.T) {
	for _, expr := range []string{
		"n[1-65536]", "n[0-65535]", "a[1-65536]b[1]",
		"a[1-32768,1-32768]b1[1]", "n[" + strings.Repeat("1,", MaxRanges-1) + "1]",
	} {
		hl, err := Parse(expr)
		if err != nil {
			t.Errorf("Parse(%.40q): %v", expr, err)
			continue
		}
		if hl.Count() == 0 {
			t.Errorf("Parse(%.40q): empty", expr)
		}
	}
}

func TestParseLogNested(t *testing.T) {
	var logged []string
	hl, err := ParseLog("a[x]b[1-2]c[1-3]", func(m string) { logged = append(logged, m) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"_parse_single_range: Invalid range: `x'", "_parse_single_range: Invalid range: `x'"}
	if !slices.Equal(logged, want) || hl.Count() != 0 {
		t.Errorf("logged %q count %d, want %q and 0", logged, hl.Count(), want)
	}
}

func TestRangedAndSort(t *testing.T) {
	tests := []struct {
		expr, ranged, sorted, uniq string
	}{
		{"", "", "", ""},
		{"n1,n2,n3,a5,a01", "n[1-3],a[5,01]", "a[5,01],n[1-3]", "a[5,01],n[1-3]"},
		{"n1,n2,n3,a5,a01,n2", "n[1-3],a[5,01],n2", "a[5,01],n[1-2,2-3]", "a[5,01],n[1-3]"},
		{"n[1-3],n3", "n[1-3,3]", "n[1-3,3]", "n[1-3]"},
		{"n3,n2,n1", "n[3,2,1]", "n[1-3]", "n[1-3]"},
		{"n[8-9],n10", "n[8-10]", "n[8-10]", "n[8-10]"},
		{"n[08-09],n10", "n[08-10]", "n[08-10]", "n[08-10]"},
		{"n01,n1", "n[01,1]", "n[1,01]", "n[1,01]"},
		{"b,a,b1,a1", "b,a,b1,a1", "a,a1,b,b1", "a,a1,b,b1"},
		{"n10,n9,n1", "n[10,9,1]", "n[1,9-10]", "n[1,9-10]"},
		{"n[1-5],n[3-8]", "n[1-5,3-8]", "n[1-3,3-4,4-5,5-8]", "n[1-8]"},
		{"a1,a,a1", "a1,a,a1", "a,a[1,1]", "a,a1"},
		{"n[0-18446744073709551615]", "n0-18446744073709551615", "n0-18446744073709551615", "n0-18446744073709551615"},
		{"rack10-n1,rack9-n1,rack1-n1", "rack10-n1,rack9-n1,rack1-n1", "rack1-n1,rack9-n1,rack10-n1", "rack1-n1,rack9-n1,rack10-n1"},
	}
	for _, tt := range tests {
		hl, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.expr, err)
		}
		if got := hl.Ranged(); got != tt.ranged {
			t.Errorf("Ranged(%q) = %q, want %q", tt.expr, got, tt.ranged)
		}
		// Slurm's sort is well defined on these: both sorts agree.
		s := hl.Copy()
		s.Sort()
		if got := s.Ranged(); got != tt.sorted {
			t.Errorf("sorted(%q) = %q, want %q", tt.expr, got, tt.sorted)
		}
		s = hl.Copy()
		s.SortAsScontrol()
		if got := s.Ranged(); got != tt.sorted {
			t.Errorf("SortAsScontrol(%q) = %q, want %q", tt.expr, got, tt.sorted)
		}
		u := hl.Copy()
		u.Uniq()
		if got := u.Ranged(); got != tt.uniq {
			t.Errorf("uniq(%q) = %q, want %q", tt.expr, got, tt.uniq)
		}
		if got, want := u.Count(), len(uniqStrings(hl.Hosts())); got != want && tt.expr != "n[0-18446744073709551615]" {
			t.Errorf("uniq(%q).Count() = %d, want %d", tt.expr, got, want)
		}
	}
}

func uniqStrings(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func TestCompress(t *testing.T) {
	tests := []struct {
		hosts        []string
		want, sorted string
	}{
		{nil, "", ""},
		{[]string{"n1", "n2", "n3", "a5"}, "n[1-3],a5", "a5,n[1-3]"},
		{[]string{"n[1-2]"}, "n[1-2]", "n[1-2]"}, // taken literally
		{[]string{"c1", "c3", "c2"}, "c[1,3,2]", "c[1-3]"},
		{[]string{"x"}, "x", "x"},
		{[]string{"n09", "n10"}, "n[09-10]", "n[09-10]"},
	}
	for _, tt := range tests {
		if got := Compress(tt.hosts); got != tt.want {
			t.Errorf("Compress(%q) = %q, want %q", tt.hosts, got, tt.want)
		}
		if got := CompressSorted(tt.hosts); got != tt.sorted {
			t.Errorf("CompressSorted(%q) = %q, want %q", tt.hosts, got, tt.sorted)
		}
	}
}

func TestCountNthFind(t *testing.T) {
	hl, err := Parse("n[1-3],login,n[01-02],nid0000[2-7]")
	if err != nil {
		t.Fatal(err)
	}
	hosts := hl.Hosts()
	if hl.Count() != len(hosts) || len(hosts) != 12 {
		t.Fatalf("Count = %d, hosts = %q", hl.Count(), hosts)
	}
	for i, h := range hosts {
		if got, ok := hl.Nth(i); !ok || got != h {
			t.Errorf("Nth(%d) = %q, %v; want %q", i, got, ok, h)
		}
	}
	if _, ok := hl.Nth(12); ok {
		t.Error("Nth(12) should fail")
	}
	if _, ok := hl.Nth(-1); ok {
		t.Error("Nth(-1) should fail")
	}
	finds := []struct {
		host string
		want int
	}{
		{"n1", 0}, {"n3", 2}, {"login", 3}, {"n01", 4}, {"n02", 5},
		{"nid00002", 6}, {"nid00007", 11}, {"n4", -1}, {"nope", -1}, {"", -1},
	}
	for _, f := range finds {
		if got := hl.Find(f.host); got != f.want {
			t.Errorf("Find(%q) = %d, want %d", f.host, got, f.want)
		}
	}
}

func TestPushDelete(t *testing.T) {
	hl := New()
	if n, err := hl.Push("n[1-5]"); n != 5 || err != nil {
		t.Fatalf("Push = %d, %v", n, err)
	}
	hl.PushHost("n6")
	hl.PushHost("login")
	if got := hl.Ranged(); got != "n[1-6],login" {
		t.Fatalf("Ranged = %q", got)
	}
	if _, err := hl.Push("n[1-x]"); err == nil {
		t.Fatal("Push of a bad expression should fail")
	}
	n, err := hl.Delete("n[3-4],login,zz")
	if err != nil || n != 3 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	if got := hl.Ranged(); got != "n[1-2,5-6]" || hl.Count() != 4 {
		t.Fatalf("after Delete: %q count %d", got, hl.Count())
	}
	if !hl.DeleteNth(0) || hl.DeleteNth(3) {
		t.Fatal("DeleteNth bounds")
	}
	if got := hl.Ranged(); got != "n[2,5-6]" {
		t.Fatalf("after DeleteNth: %q", got)
	}
	if !hl.DeleteHost("n2") || hl.DeleteHost("n2") {
		t.Fatal("DeleteHost")
	}
	if got := hl.Hosts(); !slices.Equal(got, []string{"n5", "n6"}) {
		t.Fatalf("Hosts = %q", got)
	}
}

func TestTruncated(t *testing.T) {
	hl, err := Parse("n[18446744073709551614-18446744073709551615]")
	if err != nil {
		t.Fatal(err)
	}
	if !hl.Truncated() || len(hl.Hosts()) != 1 {
		t.Errorf("Truncated = %v, hosts %q", hl.Truncated(), hl.Hosts())
	}
	hl, _ = Parse("n[1-3]")
	if hl.Truncated() {
		t.Error("n[1-3] truncated")
	}
}

func TestStrnatcmp(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "a", 0}, {"a", "b", -1}, {"a2", "a10", -1}, {"a10", "a2", 1},
		{"a01", "a1", -1}, {"a b", "ab", 0}, {"", "", 0}, {"", "a", -1},
		{"rack10-n", "rack9-n", 1}, {"x\x80", "x", -1}, // bytes >= 0x80 are negative chars
	}
	for _, tt := range tests {
		if got := strnatcmp(tt.a, tt.b); got != tt.want {
			t.Errorf("strnatcmp(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestStrtoul(t *testing.T) {
	tests := []struct {
		s   string
		v   uint64
		end int
	}{
		{"12", 12, 2}, {"  7x", 7, 3}, {"+3", 3, 2}, {"-1", 1<<64 - 1, 2},
		{"", 0, 0}, {"x", 0, 0}, {"-", 0, 0}, {"99999999999999999999", 1<<64 - 1, 20},
		{"18446744073709551615", 1<<64 - 1, 20},
	}
	for _, tt := range tests {
		v, end := strtoul(tt.s)
		if v != tt.v || end != tt.end {
			t.Errorf("strtoul(%q) = %d, %d; want %d, %d", tt.s, v, end, tt.v, tt.end)
		}
	}
}
