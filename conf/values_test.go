package conf

import (
	"reflect"
	"testing"
)

func TestParseUint(t *testing.T) {
	tests := []struct {
		width int
		in    string
		want  uint64
		err   string
	}{
		{16, "30", 30, ""},
		{16, "0x10", 16, ""},
		{16, "010", 8, ""},
		{16, "UNLIMITED", 0xffff, ""},
		{16, "infinite", 0xffff, ""},
		{16, "", 0, ""},
		{16, "abc", 0, `KillWait value "abc" is not a valid number`},
		{16, "5s", 0, `KillWait value "5s" is not a valid number`},
		{16, "-1", 0, `KillWait value (-1) is less than zero`},
		{16, "70000", 0, `KillWait value (70000) is greater than 65535`},
		{16, "1k", 0, `KillWait value "1k" is not a valid number`},
		{32, "2k", 2048, ""},
		{32, "2K", 2048, ""},
		{32, "4294967295", 0xffffffff, ""},
		{32, "4294967296", 0, `KillWait value (4294967296) is greater than 4294967295`},
		{32, "x", 0, `KillWait value (x) is not a valid number`},
		{32, "-5", 0, `KillWait value (-5) is less than zero`},
		{32, "UNLIMITED", 0xffffffff, ""},
		{64, "99999999999999999999999", 0, `KillWait value (99999999999999999999999) is out of range`},
		{64, "8k", 8192, ""},
		{64, "INFINITE", 1<<64 - 1, ""},
	}
	for _, tt := range tests {
		var got uint64
		var err error
		switch tt.width {
		case 16:
			var v uint16
			v, err = ParseUint16("KillWait", tt.in)
			got = uint64(v)
		case 32:
			var v uint32
			v, err = ParseUint32("KillWait", tt.in)
			got = uint64(v)
		default:
			got, err = ParseUint64("KillWait", tt.in)
		}
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("u%d %q: err = %v, want %q", tt.width, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("u%d %q = %d, %v; want %d", tt.width, tt.in, got, err, tt.want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, s := range []string{"yes", "YES", "Up", "true", "1"} {
		if v, err := ParseBool("K", s); err != nil || !v {
			t.Errorf("%q: %v %v", s, v, err)
		}
	}
	for _, s := range []string{"no", "NO", "down", "False", "0"} {
		if v, err := ParseBool("K", s); err != nil || v {
			t.Errorf("%q: %v %v", s, v, err)
		}
	}
	if _, err := ParseBool("Hidden", "maybe"); err == nil || err.Error() != `"maybe" is not a valid option for "Hidden"` {
		t.Errorf("err = %v", err)
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		secs uint32
		mins uint32
		ok   bool
	}{
		{"5", 300, 5, true},
		{"5:30", 330, 6, true},
		{"1:00:00", 3600, 60, true},
		{"1-00:00:00", 86400, 1440, true},
		{"2-12", 2*86400 + 12*3600, 3600, true},
		{"1-2:30", 86400 + 2*3600 + 30*60, 1590, true},
		{"0", 0, 0, true},
		{"UNLIMITED", TimeInfinite, TimeInfinite, true},
		{"infinite", TimeInfinite, TimeInfinite, true},
		{"-1", TimeInfinite, TimeInfinite, true},
		{"", 0, 0, false},
		{"abc", 0, 0, false},
		{"1:2:3:4", 0, 0, false},
		{"1-2-3", 0, 0, false},
		{"1:2-3", 0, 0, false},
		{"5m", 0, 0, false},
	}
	for _, tt := range tests {
		s, ok := ParseTimeSecs(tt.in)
		if ok != tt.ok || (ok && s != tt.secs) {
			t.Errorf("ParseTimeSecs(%q) = %d,%v want %d,%v", tt.in, s, ok, tt.secs, tt.ok)
		}
		m, ok := ParseTimeMins(tt.in)
		if ok != tt.ok || (ok && m != tt.mins) {
			t.Errorf("ParseTimeMins(%q) = %d,%v want %d,%v", tt.in, m, ok, tt.mins, tt.ok)
		}
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"4", 4, true}, {"2K", 2048, true}, {"2k", 2048, true}, {"2KB", 2000, true}, {"1M", 1 << 20, true},
		{"1G", 1 << 30, true}, {"3T", 3 << 40, true}, {"1P", 1 << 50, true}, {"1GiB", 1 << 30, true},
		{"x", 0, false}, {"4X", 0, false}, {"", 0, false}, {"99999999999P", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseCount(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseCount(%q) = %d,%v want %d,%v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLists(t *testing.T) {
	if got := splitList("n[1-3,5],m1,,x"); !reflect.DeepEqual(got, List{"n[1-3,5]", "m1", "x"}) {
		t.Errorf("splitList = %q", got)
	}
	o := ParseOptions("bf_interval=30,bf_continue,default_queue_depth=100,bf_interval=60")
	if v, _ := o.Get("BF_INTERVAL"); v != "60" {
		t.Errorf("Get = %q", v)
	}
	if !o.Has("bf_continue") || o.Has("nope") {
		t.Error("Has wrong")
	}
	if o.String() != "bf_interval=30,bf_continue,default_queue_depth=100,bf_interval=60" {
		t.Errorf("String = %q", o.String())
	}
	if ParseOptions("") != nil {
		t.Error("empty options not nil")
	}
}

func TestPortRange(t *testing.T) {
	tests := []struct {
		in    string
		rng   bool
		first uint16
		count uint16
		ok    bool
	}{
		{"6817", false, 6817, 1, true},
		{"6817-6820", false, 6817, 4, true},
		{"6820-6817", false, 0, 0, false},
		{"0", false, 0, 0, false},
		{"x", false, 0, 0, false},
		{"60001-63000", true, 60001, 3000, true},
		{"60001", true, 0, 0, false},
	}
	for _, tt := range tests {
		pr, ok := parsePortRange(tt.in, tt.rng)
		if ok != tt.ok || pr.First != tt.first || pr.Count != tt.count {
			t.Errorf("%q: %+v %v", tt.in, pr, ok)
		}
	}
}

func TestGresSpec(t *testing.T) {
	tests := map[string]GresSpec{
		"gpu":                 {"gpu", "", 1},
		"gpu:4":               {"gpu", "", 4},
		"gpu:a100:8":          {"gpu", "a100", 8},
		"mps:200":             {"mps", "", 200},
		"bandwidth:lustre:4G": {"bandwidth", "lustre", 4 << 30},
		"gpu:tesla":           {"gpu", "tesla", 1},
	}
	for in, want := range tests {
		got, ok := ParseGresSpec(in)
		if !ok || got != want {
			t.Errorf("%q: %+v %v", in, got, ok)
		}
	}
}
