package main

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
)

func TestCutColon(t *testing.T) {
	for _, tc := range []struct {
		in         []string
		argv, rest []string
		more       bool
	}{
		{[]string{"hostname"}, []string{"hostname"}, nil, false},
		{[]string{"a", "x", ":", "-n1", "b"}, []string{"a", "x"}, []string{"-n1", "b"}, true},
		{[]string{":", "b"}, []string{}, []string{"b"}, true},
		{[]string{"a", ":"}, []string{"a"}, []string{}, true},
	} {
		argv, rest, more := cutColon(tc.in)
		if !slices.Equal(argv, tc.argv) || !slices.Equal(rest, tc.rest) || more != tc.more {
			t.Errorf("cutColon(%q) = %q %q %v, want %q %q %v", tc.in, argv, rest, more, tc.argv, tc.rest, tc.more)
		}
	}
}

func TestParseHetGroup(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"1", []int{1}, true},
		{"0,1", []int{0, 1}, true},
		{"0-2", []int{0, 1, 2}, true},
		{"[0-1,3]", []int{0, 1, 3}, true},
		{"2,0", []int{0, 2}, true},
		{"x", nil, false},
		{"128", nil, false},
	} {
		got, ok := parseHetGroup(tc.in)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("parseHetGroup(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLocalHetStep(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want bool
	}{
		{[]string{"SLURM_JOB_ID=5"}, []string{"-n1", "a", ":", "b"}, true},
		{[]string{"SLURM_JOB_ID=5", "SLURM_HET_SIZE=2"}, []string{"a", ":", "b"}, false},
		{nil, []string{"a", ":", "b"}, false},
		{[]string{"SLURM_JOB_ID=5"}, []string{"a"}, false},
	} {
		if got := localHetStep(jobopt.NewEnv(tc.env), tc.args); got != tc.want {
			t.Errorf("localHetStep(%q, %q) = %v, want %v", tc.env, tc.args, got, tc.want)
		}
	}
}

func TestHetEnvTable(t *testing.T) {
	tab := jobopt.HetEnvTable([]jobopt.EnvVar{{Name: "SLURM_JOB_ID", Val: 1}, {Name: "SLURM_NTASKS", Val: 'n'}}, 1)
	var names []string
	for _, e := range tab {
		names = append(names, e.Name)
	}
	want := []string{"SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_NTASKS_PACK_GROUP_1", "SLURM_NTASKS_HET_GROUP_1"}
	if !slices.Equal(names, want) {
		t.Errorf("HetEnvTable names = %q, want %q", names, want)
	}
}
