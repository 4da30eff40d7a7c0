package main

import (
	"bytes"
	"strings"
	"testing"
)

const handmade = "../../slurmctld/sched/sim/testdata/handmade.swf"

func TestMainPrintsBothPolicies(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"slurmsim", handmade}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"### handmade.swf",
		"Cluster: 4 nodes x 1 CPUs = 4 CPUs, one partition, MaxTime 20 min.",
		"3 records skipped (1 larger than the machine, 0 without processors, 1 without run time, 0 without submit time, 1 malformed)",
		"| metric | FIFO | backfill |",
		"| jobs simulated | 5 | 5 |",
		"| mean wait | 528 s (8.8 min) | 312 s (5.2 min) |",
		"| jobs started by backfill | 0 | 1 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestMainUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no trace", []string{"slurmsim"}, 2},
		{"bad policy", []string{"slurmsim", "--policy", "lottery", handmade}, 2},
		{"bad interval", []string{"slurmsim", "--bf-interval", "0", handmade}, 2},
		{"missing file", []string{"slurmsim", "testdata/does-not-exist.swf"}, 1},
		{"help", []string{"slurmsim", "--help"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main(tc.args, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, errb.String())
			}
		})
	}
}

func TestPolicyFlagSelectsColumns(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"slurmsim", "--policy", "fifo", "--jobs", "3", handmade}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	if got := out.String(); !strings.Contains(got, "| metric | FIFO |\n") || !strings.Contains(got, "| jobs simulated | 3 |") {
		t.Errorf("output:\n%s", got)
	}
}
