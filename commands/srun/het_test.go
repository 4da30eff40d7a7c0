package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
)

func TestCutColon(t *testing.T) {
	for _, tc := range []struct {
		in         []string
		argv, rest []string
		more       bool
	}{
		{[]string{"hostname"}, []string{"hostname"}, nil, false},
		{[]string{"a", "x", ":", "-n1", "b"}, []string{"a", "x"}, []string{":", "-n1", "b"}, true},
		{[]string{":", "b"}, []string{}, []string{":", "b"}, true},
		{[]string{"a", ":"}, []string{"a"}, []string{":"}, true},
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

// Each part after a ":" is read from its first word: its options, then
// its command.
func TestHetComponentsParts(t *testing.T) {
	type comp struct {
		argv   string
		ntasks int
		label  bool
	}
	for _, tc := range []struct {
		args []string
		want []comp
	}{
		{[]string{"srun", "-n1", "a", ":", "-n2", "b"}, []comp{{"a", 1, false}, {"b", 2, false}}},
		{[]string{"srun", "a", ":", "b", "c"}, []comp{{"a", 1, false}, {"b c", 1, false}}},
		{[]string{"srun", "-n1", "a", ":", "--label", "-n3", "b"}, []comp{{"a", 1, false}, {"b", 3, true}}},
		{[]string{"srun", "a", ":", "-n2", "b", ":", "c"}, []comp{{"a", 1, false}, {"b", 2, false}, {"c", 1, false}}},
	} {
		var out, errb bytes.Buffer
		pio := &procIO{stdout: &out, stderr: &errb, environ: []string{"SLURM_CONF=testdata/slurm.conf", "SLURM_JOB_ID=5"}, cwd: "/"}
		s := &srun{sopt: srunOpts{relative: -1}, io: pio, log: &jobopt.Log{Prog: "srun", W: pio.stderr}, env: jobopt.NewEnv(pio.environ), errorExit: 1}
		cli := launch.CLI{Cmd: jobopt.Srun, EnvTable: jobopt.HetEnvTable(jobopt.SrunEnv, 0), Usage: usageText, Help: helpText, Custom: s.custom,
			Log: s.log, Env: s.env, Stdout: s.io.stdout, Stderr: s.io.stderr, Cwd: s.io.cwd, Now: s.io.now}
		ctl, o, operands, err := cli.Parse(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		comps, _, ok := s.hetComponents(&cli, ctl, tc.args, o, operands, true)
		if !ok {
			t.Fatalf("%q: refused: %s", tc.args, errb.String())
		}
		var got []comp
		for _, c := range comps {
			n := c.o.Ntasks
			if !c.o.NtasksSet {
				n = 1
			}
			got = append(got, comp{strings.Join(c.argv, " "), n, c.sopt.label})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: components %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// A ":" with nothing after it, or before it, is no command, not a panic.
func TestHetEmptyParts(t *testing.T) {
	for _, args := range [][]string{{"srun", ":"}, {"srun", "a", ":"}, {"srun", "--het-group=1", ":"}, {"srun", ":", "b"}} {
		var out, errb bytes.Buffer
		code := run(args, &procIO{stdout: &out, stderr: &errb, environ: []string{"SLURM_CONF=testdata/slurm.conf", "SLURM_JOB_ID=5"}, cwd: "/"})
		if code == 0 || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
