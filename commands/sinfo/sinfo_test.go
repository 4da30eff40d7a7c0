package main

import (
	"bufio"
	"bytes"
	"testing"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
)

func TestNodeStateID(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"idle", sc.NodeStateIdle, true},
		{"i", sc.NodeStateIdle, true},
		{"MIX", sc.NodeStateMixed, true},
		{"alloc", sc.NodeStateAllocated, true},
		{"drain", sc.NodeStateDrain, true},
		{"drained", sc.NodeStateDrain | sc.NodeStateIdle, true},
		{"drng", sc.NodeStateDrain | sc.NodeStateAllocated, true},
		{"resv", sc.NodeStateRes, true},
		{"no_respond", sc.NodeStateNoRespond, true},
		{"fail", sc.NodeStateFail, true},
		{"bogus", 0, false},
	}
	for _, tc := range tests {
		got, ok := nodeStateID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nodeStateID(%q) = %#x, %v; want %#x, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBuildStateList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	s := &sinfo{prog: "sinfo", stderr: &stderr, out: sc.Out{Writer: bufio.NewWriter(&stdout)}}
	if !s.buildStateList("idle&drain") || !s.stateListAnd || len(s.stateList) != 2 {
		t.Errorf("idle&drain: %v %v", s.stateList, s.stateListAnd)
	}
	if !s.buildStateList("all") || len(s.stateList) != sc.NodeStateEnd+2 {
		t.Errorf("all: %v", s.stateList)
	}
	if s.buildStateList("idle,bogus") || stderr.String() != "sinfo: error: Bad state string: \"bogus\"\n" {
		t.Errorf("bogus accepted or stderr %q", stderr.String())
	}
}

func TestMinMax(t *testing.T) {
	s := &sinfo{convert: sc.ConvertExact}
	tests := []struct {
		got, want string
	}{
		{s.minMax32(4, 4, false, true), "4"},
		{s.minMax32(2, 4, false, true), "2+"},
		{s.minMax32(1, sc.Infinite, true, true), "1-infinite"},
		{s.minMax32(1, 2, true, true), "1-2"},
		{s.minMax16(2048, 4096, true), "2K-4K"},
		{minMax64(1000, 2000, false), "1000+"},
		{minMax64(sc.NoVal64, 5, true), "N/A-5"},
		{cpuLoad(678, 678), "6.78"},
		{cpuLoad(sc.NoVal, 10), "N/A-0.10"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}

func TestPreemptModeString(t *testing.T) {
	for m, want := range map[uint16]string{0: "OFF", 0x8000: "GANG", 0x8001: "GANG,SUSPEND", 2: "REQUEUE", 8: "CANCEL", 0x4003: "WITHIN,UNKNOWN", 3: "UNKNOWN"} {
		if got := preemptModeString(m); got != want {
			t.Errorf("preemptModeString(%#x) = %q, want %q", m, got, want)
		}
	}
}
