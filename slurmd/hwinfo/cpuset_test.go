package hwinfo

import (
	"fmt"
	"testing"
)

func TestParseCPUMask(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"1\n", "[0]", true},
		{"3", "[0 1]", true},
		{"cc", "[2 3 6 7]", true},
		{"00000000,00000001", "[0]", true},
		{"80000000,00000001", "[0 63]", true},
		{"1,00000000,00000000", "[64]", true},
		{"", "", false},
		{"xyz", "", false},
		{"1ffffffff", "", false}, // a word is 32 bits
	}
	for _, tc := range tests {
		got, err := parseCPUMask(tc.in)
		if (err == nil) != tc.ok || (tc.ok && fmt.Sprint(got) != tc.want) {
			t.Errorf("parseCPUMask(%q) = %v, %v; want %s ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0-3\n", "[0 1 2 3]", true},
		{"0,2-3,7", "[0 2 3 7]", true},
		{"\n", "[]", true},
		{"3,1,1", "[1 3]", true},
		{"3-1", "", false},
		{"a", "", false},
		{"-1", "", false},
		{"0-99999999", "", false},
	}
	for _, tc := range tests {
		got, err := parseCPUList(tc.in)
		if (err == nil) != tc.ok || (tc.ok && fmt.Sprint([]int(got)) != tc.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %s ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3", "0,2-3,7\n", "", "1-0", "4294967296"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseCPUList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(set); i++ {
			if set[i] <= set[i-1] {
				t.Fatalf("%q: not ascending: %v", s, set)
			}
		}
	})
}

func FuzzParseCPUMask(f *testing.F) {
	for _, s := range []string{"ff", "00000000,00000001", ",", "f,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseCPUMask(s)
		if err != nil {
			return
		}
		for i := 1; i < len(set); i++ {
			if set[i] <= set[i-1] {
				t.Fatalf("%q: not ascending: %v", s, set)
			}
		}
	})
}
