package slurmcli

import (
	"bufio"
	"bytes"
	"testing"
	"time"
)

func TestPrintStr(t *testing.T) {
	tests := []struct {
		s          Str
		width      int
		right, cut bool
		want       string
	}{
		{S("abc"), 5, false, true, "abc  "},
		{S("abc"), 5, true, true, "  abc"},
		{S("abcdef"), 3, false, true, "abc"},
		{S("abcdef"), 3, true, true, "abc"},
		{S("abcdef"), 3, true, false, "abcdef"},
		{S("abcdef"), 0, false, true, "abcdef"},
		{NullStr, 0, false, true, "(null)"},
		{NullStr, 8, true, true, "  (null)"},
		{NullStr, 5, false, true, "     "},
		{NullStr, 6, false, true, "(null)"},
		{S("ab"), -1, false, true, "ab "},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		o := Out{bufio.NewWriter(&b)}
		o.PrintStr(tc.s, tc.width, tc.right, tc.cut)
		o.Flush()
		if b.String() != tc.want {
			t.Errorf("PrintStr(%#v, %d, %v, %v) = %q, want %q", tc.s, tc.width, tc.right, tc.cut, b.String(), tc.want)
		}
	}
}

func TestSecsString(t *testing.T) {
	tests := []struct {
		t     int64
		check bool
		want  string
	}{
		{0, true, "0:00"}, {59, true, "0:59"}, {3599, true, "59:59"}, {3600, true, "1:00:00"},
		{86400 + 61, true, "1-00:01:01"}, {-1, true, "INVALID"}, {YearSeconds + 1, true, "INVALID"},
		{YearSeconds + 1, false, "365-00:00:01"},
	}
	for _, tc := range tests {
		if got := SecsString(tc.t, tc.check); got != tc.want {
			t.Errorf("SecsString(%d, %v) = %q, want %q", tc.t, tc.check, got, tc.want)
		}
	}
}

func TestConvertNumUnit(t *testing.T) {
	tests := []struct {
		num   float64
		unit  int
		flags uint32
		want  string
	}{
		{0, UnitMega, ConvertExact, "0"},
		{100, UnitMega, ConvertExact, "100M"},
		{1024, UnitMega, ConvertExact, "1G"},
		{1536, UnitMega, ConvertExact, "1.50G"},
		{1000, UnitMega, ConvertExact, "1000M"},
		{1024, UnitMega, ConvertExact | ConvertNo, "1024M"},
		{2, UnitNone, ConvertExact, "2"},
		{2048, UnitNone, ConvertExact, "2K"},
		{1500, UnitMega, 0, "1.46G"},
	}
	for _, tc := range tests {
		if got := ConvertNumUnit(tc.num, tc.unit, tc.flags); got != tc.want {
			t.Errorf("ConvertNumUnit(%v, %d, %d) = %q, want %q", tc.num, tc.unit, tc.flags, got, tc.want)
		}
	}
	if got := ConvertNumUnit2(2400000, UnitKilo, 1000, 0); got != "2.40G" {
		t.Errorf("ConvertNumUnit2(2.4 GHz) = %q", got)
	}
}

func TestJobStates(t *testing.T) {
	tests := []struct {
		st          uint32
		long, short string
	}{
		{JobPending, "PENDING", "PD"},
		{JobRunning, "RUNNING", "R"},
		{JobRunning | JobCompleting, "COMPLETING", "CG"},
		{JobComplete | JobCompleting, "COMPLETING", "CG"},
		{JobOOM, "OUT_OF_MEMORY", "OOM"},
		{JobPending | JobRequeueHold, "REQUEUE_HOLD", "RH"},
		{99, "?", "?"},
	}
	for _, tc := range tests {
		if got := JobStateString(tc.st); got != tc.long {
			t.Errorf("JobStateString(%#x) = %q, want %q", tc.st, got, tc.long)
		}
		if got := JobStateCompact(tc.st); got != tc.short {
			t.Errorf("JobStateCompact(%#x) = %q, want %q", tc.st, got, tc.short)
		}
	}
	for name, want := range map[string]uint32{"pd": JobPending, "RUNNING": JobRunning, "cg": JobCompleting,
		"oom": JobOOM, "Stage_Out": JobStageOut} {
		if got, ok := JobStateNum(name); !ok || got != want {
			t.Errorf("JobStateNum(%q) = %#x, %v; want %#x", name, got, ok, want)
		}
	}
	if _, ok := JobStateNum("bogus"); ok {
		t.Errorf("JobStateNum(bogus) succeeded")
	}
	if JobReasonString(8) != "JobHeldAdmin" || JobReasonString(16) != "JobHeldUser" || JobReasonString(9999) != "9999" {
		t.Errorf("JobReasonString: %q %q %q", JobReasonString(8), JobReasonString(16), JobReasonString(9999))
	}
}

func TestNodeStates(t *testing.T) {
	tests := []struct {
		st            uint32
		long, compact string
	}{
		{NodeStateIdle, "IDLE", "IDLE"},
		{NodeStateMixed, "MIXED", "MIX"},
		{NodeStateAllocated | NodeStateCompleting, "ALLOCATED+", "ALLOC+"},
		{NodeStateIdle | NodeStateDrain, "DRAINED", "DRAIN"},
		{NodeStateMixed | NodeStateDrain, "DRAINING", "DRNG"},
		{NodeStateIdle | NodeStateDrain | NodeStateNoRespond, "DRAINED*", "DRAIN*"},
		{NodeStateDown | NodeStateNoRespond, "DOWN*", "DOWN*"},
		{NodeStateUnknown | NodeStateNoRespond, "UNKNOWN*", "UNK*"},
		{NodeStateIdle | NodeStatePoweredDown, "IDLE~", "IDLE~"},
		{NodeStateIdle | NodeStateMaint, "MAINT", "MAINT"},
		{NodeStateIdle | NodeStateRebootRequested, "REBOOT", "BOOT"},
		{NodeStateMixed | NodeStatePlanned, "MIXED-", "MIX-"},
		{NodeStateIdle | NodeStateRes, "RESERVED", "RESV"},
		{NodeStateFuture, "FUTURE", "FUTR"},
		{NodeStateIdle | NodeStateInvalidReg, "INVAL", "INVAL"},
	}
	for _, tc := range tests {
		if got := NodeStateString(tc.st); got != tc.long {
			t.Errorf("NodeStateString(%#x) = %q, want %q", tc.st, got, tc.long)
		}
		if got := NodeStateCompact(tc.st); got != tc.compact {
			t.Errorf("NodeStateCompact(%#x) = %q, want %q", tc.st, got, tc.compact)
		}
	}
	if got := NodeStateComplete(NodeStateIdle | NodeStateDrain | NodeStateNoRespond); got != "IDLE+DRAIN+NOT_RESPONDING" {
		t.Errorf("NodeStateComplete = %q", got)
	}
}

func TestXlateArrayTaskStr(t *testing.T) {
	tests := []struct {
		hex    string
		max    uint32
		bitstr int
		want   string
	}{
		{"0x3E", 2, -1, "1-5%2"},
		{"0x111111", 0, -1, "0-20:4"},
		{"0x5", 0, -1, "0,2"},
		{"0xFFFF", 0, 5, "0-15"[:1] + "..."},
	}
	for _, tc := range tests {
		got, _ := XlateArrayTaskStr(tc.hex, tc.max, tc.bitstr)
		if got != tc.want {
			t.Errorf("XlateArrayTaskStr(%q, %d, %d) = %q, want %q", tc.hex, tc.max, tc.bitstr, got, tc.want)
		}
	}
	if got := BitFmt([]bool{true, true, false, true}, 0); got != "0-1,3" {
		t.Errorf("BitFmt = %q", got)
	}
}

func TestMergeSortStable(t *testing.T) {
	type kv struct{ k, v int }
	s := []kv{{2, 0}, {1, 1}, {2, 2}, {1, 3}, {0, 4}, {2, 5}}
	MergeSort(s, func(a, b kv) int { return a.k - b.k })
	want := []kv{{0, 4}, {1, 1}, {1, 3}, {2, 0}, {2, 2}, {2, 5}}
	for i := range s {
		if s[i] != want[i] {
			t.Fatalf("MergeSort = %v, want %v", s, want)
		}
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2026, 3, 5, 7, 8, 9, 0, time.UTC)
	for f, want := range map[string]string{
		"%FT%T": "2026-03-05T07:08:09", "%a %b %d %T %Y": "Thu Mar 05 07:08:09 2026",
		"%-d %b %H:%M": "5 Mar 07:08", "%s": "1772694489", "%%x%q": "%x%q", "%e|%j|%p|%y": " 5|064|AM|26",
	} {
		if got := Strftime(f, tm); got != want {
			t.Errorf("Strftime(%q) = %q, want %q", f, got, want)
		}
	}
}

func TestHostCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"n1", "n2", -1}, {"n10", "n9", 1}, {"n1", "n1", 0}, {"a1", "b0", -1}, {"", "n1", 1},
		{"n1", "", -1}, {"login", "n1", -1},
	}
	for _, tc := range tests {
		got := CompareFirstHost(tc.a, tc.b)
		if (got < 0) != (tc.want < 0) || (got > 0) != (tc.want > 0) {
			t.Errorf("CompareFirstHost(%q, %q) = %d, want sign of %d", tc.a, tc.b, got, tc.want)
		}
	}
}
