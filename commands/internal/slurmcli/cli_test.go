package slurmcli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		atoi int
		n    int64
		rest string
	}{
		{"12", 12, 12, ""},
		{"  -7x", -7, -7, "x"},
		{"+3.5", 3, 3, ".5"},
		{"abc", 0, 0, "abc"},
		{"99999999999", -2147483648, 99999999999, ""},
		{"99999999999999999999", -2147483648, 1<<63 - 1, ""},
		{"-99999999999999999999", -2147483648, -1 << 63, ""},
	} {
		if got := Atoi(c.in); got != c.atoi {
			t.Errorf("Atoi(%q) = %d, want %d", c.in, got, c.atoi)
		}
		if n, rest := Strtol(c.in); n != c.n || rest != c.rest {
			t.Errorf("Strtol(%q) = %d, %q; want %d, %q", c.in, n, rest, c.n, c.rest)
		}
	}
}

func TestSplitList(t *testing.T) {
	if got := SplitList(",a,,b,"); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("SplitList = %q", got)
	}
	if got := SplitList(""); got != nil {
		t.Errorf("SplitList(\"\") = %q", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		format    string
		prefix    string
		hasPrefix bool
		items     []FormatItem
	}{
		{"", "", true, nil},
		{"%i", "", false, []FormatItem{{Letter: 'i', Text: "i"}}},
		{"pre %.5i|%20j%%x", "pre ", true, []FormatItem{
			{Right: true, Width: 5, Letter: 'i', Suffix: "|", Text: ".5i|"},
			{Width: 20, Letter: 'j', Text: "20j"},
			{Letter: 'x', Text: "x"},
		}},
		{"%.", "", false, []FormatItem{{Right: true, Text: "."}}},
	} {
		prefix, hasPrefix, items, all := ParseFormat(c.format, "")
		if prefix != c.prefix || hasPrefix != c.hasPrefix || all || !cmp.Equal(items, c.items) {
			t.Errorf("ParseFormat(%q) = %q, %v, %+v, %v", c.format, prefix, hasPrefix, items, all)
		}
	}
	_, hasPrefix, items, all := ParseFormat("%ALL", " ")
	if hasPrefix || !all || len(items) != 52 || items[0].Suffix != "|" || items[26].Suffix != " |" || items[51].Suffix != " " {
		t.Errorf("%%all: %v %v %+v", hasPrefix, all, items)
	}
}

func TestParseLongFormat(t *testing.T) {
	got := ParseLongFormat("jobid:.5|,,name,bogus:3x,state:")
	want := []LongFormatItem{
		{Name: "jobid", Right: true, Width: 5, Suffix: "|"},
		{Name: "name", Width: 20},
		{Name: "bogus", Width: 3, Suffix: "x"},
		{Name: "state", Width: 0},
	}
	if !cmp.Equal(got, want) {
		t.Errorf("ParseLongFormat: %s", cmp.Diff(want, got))
	}
}
