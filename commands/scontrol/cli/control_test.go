package cli

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

func TestJobIDList(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"12", "12", true},
		{"12,13 14", "12|13|14", true},
		{"12_3", "12_3", true},
		{"12_[1-3]", "12_1-3", true},
		{"[10-12]", "10|11|12", true},
		{"[10-11]_2", "10_2|11_2", true},
		{"12+1", "12+1", true},
		{"12-13", "", false},
		{"abc", "", false},
		{"12_3_4", "", false},
		{"[1-2", "", false},
	}
	for _, tt := range tests {
		ids, ok := jobIDList(tt.in)
		if ok != tt.ok || (ok && strings.Join(ids, "|") != tt.want) {
			t.Errorf("jobIDList(%q) = %q, %v; want %q, %v", tt.in, ids, ok, tt.want, tt.ok)
		}
	}
}

func TestTimeStr2Mins(t *testing.T) {
	tests := map[string]uint32{"30": 30, "1:30": 2, "1:00:00": 60, "1-0": 1440, "1-2:3": 1563, "1-2:3:4": 1564,
		"UNLIMITED": infinite, "-1": infinite, "abc": noVal, "": noVal, "1:2:3:4": noVal, "5-": 7200}
	for in, want := range tests {
		if got := timeStr2Mins(in); got != want {
			t.Errorf("timeStr2Mins(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParseRequeueFlags(t *testing.T) {
	var f uint32
	if !parseRequeueFlags("Incomplete", &f) || f != requeueIncomplete {
		t.Errorf("Incomplete: %v %x", f, f)
	}
	f = 0
	if !parseRequeueFlags("State=SpecialExit", &f) || f != requeueSpecialExit {
		t.Errorf("State=SpecialExit: %x", f)
	}
	if parseRequeueFlags("123", &f) {
		t.Errorf("123 taken as a flag")
	}
}

func TestStepIDString(t *testing.T) {
	tests := []struct {
		id    msg.StepID
		noJob bool
		want  string
	}{
		{msg.StepID{JobID: 5, StepID: 0, StepHetComp: noVal}, false, "StepId=5.0"},
		{msg.StepID{JobID: 5, StepID: stepBatch, StepHetComp: noVal}, false, "StepId=5.batch"},
		{msg.StepID{JobID: 5, StepID: stepExtern, StepHetComp: noVal}, true, "extern"},
		{msg.StepID{JobID: 5, StepID: noVal, StepHetComp: noVal}, false, "JobId=5"},
		{msg.StepID{JobID: 5, StepID: 2, StepHetComp: 1}, false, "StepId=5.2+1"},
	}
	for _, tt := range tests {
		if got := stepIDString(tt.id, tt.noJob); got != tt.want {
			t.Errorf("stepIDString(%+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestExitParts(t *testing.T) {
	tests := []struct{ st, code, sig uint32 }{{0, 0, 0}, {1 << 8, 1, 0}, {9, 0, 9}, {15 | 0x80, 0, 15}, {0x7f, 0, 0}}
	for _, tt := range tests {
		if c, s := exitParts(tt.st); c != tt.code || s != tt.sig {
			t.Errorf("exitParts(%#x) = %d:%d, want %d:%d", tt.st, c, s, tt.code, tt.sig)
		}
	}
}

func TestNotImplementedStillReported(t *testing.T) {
	_, errs, code := run(t, nil, "", "show", "aliases")
	if code != 1 || !strings.Contains(errs, "not implemented yet") {
		t.Errorf("got %q %d", errs, code)
	}
}
