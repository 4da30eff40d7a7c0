package getopt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A table shaped like Slurm's: required, optional and flag options, two
// aliases sharing a value, and prefixes that collide.
var testLong = []Option{
	{"cpu-bind", RequiredArgument, 10},
	{"cpu_bind", RequiredArgument, 10},
	{"exclusive", OptionalArgument, 11},
	{"hold", NoArgument, 'H'},
	{"nice", OptionalArgument, 12},
	{"ntasks-per-node", RequiredArgument, 13},
	{"no-kill", OptionalArgument, 'k'},
	{"time", RequiredArgument, 't'},
	{"time-min", RequiredArgument, 14},
	{"tmp", RequiredArgument, 15},
	{"verbose", NoArgument, 'v'},
}

const testShort = "Hk::t:vN:"

type event struct {
	Val   int
	Name  string
	Arg   string
	Value bool
}

// parse runs the parser to the end (or the first error) and returns what
// it saw, the diagnostics and the remaining arguments.
func parse(args []string, permute bool) ([]event, string, []string) {
	var errb strings.Builder
	p := New(append([]string{"sbatch"}, args...), testShort, testLong, permute, &errb)
	var evs []event
	for {
		c := p.Next()
		if c == Done {
			break
		}
		evs = append(evs, event{c, p.Name, p.Arg, p.HasValue})
		if c == Unknown {
			break
		}
	}
	return evs, errb.String(), p.Rest()
}

func TestGetoptLikeGlibc(t *testing.T) {
	for _, tc := range []struct {
		args   string
		events []event
		stderr string
		rest   string
	}{
		// Clusters and attached values.
		{"-vvv", []event{{'v', "-v", "", false}, {'v', "-v", "", false}, {'v', "-v", "", false}}, "", ""},
		{"-t5 -N 2", []event{{'t', "-t", "5", true}, {'N', "-N", "2", true}}, "", ""},
		{"-Ht5", []event{{'H', "-H", "", false}, {'t', "-t", "5", true}}, "", ""},
		{"-vt 5 job.sh", []event{{'v', "-v", "", false}, {'t', "-t", "5", true}}, "", "job.sh"},
		// Optional arguments: only attached or after '='.
		{"-kset", []event{{'k', "-k", "set", true}}, "", ""},
		{"-k off", []event{{'k', "-k", "", false}}, "", "off"},
		{"--nice=5", []event{{12, "--nice", "5", true}}, "", ""},
		{"--nice 5", []event{{12, "--nice", "", false}}, "", "5"},
		{"--nice=", []event{{12, "--nice", "", true}}, "", ""},
		// Exact match beats a longer option; unique prefixes; aliases.
		{"--time 5", []event{{'t', "--time", "5", true}}, "", ""},
		{"--time-=3", []event{{14, "--time-min", "3", true}}, "", ""},
		{"--ntasks=2", []event{{13, "--ntasks-per-node", "2", true}}, "", ""},
		{"--cpu=none", []event{{10, "--cpu-bind", "none", true}}, "", ""},
		{"--excl", []event{{11, "--exclusive", "", false}}, "", ""},
		// Errors, worded as glibc 2.36 (checked against real sbatch).
		{"--ti=5", []event{{Unknown, "", "", false}},
			"sbatch: option '--ti=5' is ambiguous; possibilities: '--time' '--time-min'\n", ""},
		{"--t 5", []event{{Unknown, "", "", false}},
			"sbatch: option '--t' is ambiguous; possibilities: '--time' '--time-min' '--tmp'\n", "5"},
		{"--n", []event{{Unknown, "", "", false}},
			"sbatch: option '--n' is ambiguous; possibilities: '--nice' '--ntasks-per-node' '--no-kill'\n", ""},
		{"--foo=bar x", []event{{Unknown, "", "", false}}, "sbatch: unrecognized option '--foo=bar'\n", "x"},
		{"--hold=1", []event{{Unknown, "--hold", "", false}}, "sbatch: option '--hold' doesn't allow an argument\n", ""},
		{"--time", []event{{Unknown, "--time", "", false}}, "sbatch: option '--time' requires an argument\n", ""},
		{"-t", []event{{Unknown, "-t", "", false}}, "sbatch: option requires an argument -- 't'\n", ""},
		{"-vZ", []event{{'v', "-v", "", false}, {Unknown, "-Z", "", false}}, "sbatch: invalid option -- 'Z'\n", ""},
		// Stop at the first non-option ("+" optstring) and at "--".
		{"job.sh -t 5", nil, "", "job.sh -t 5"},
		{"-v -- -t 5", []event{{'v', "-v", "", false}}, "", "-t 5"},
		{"- -v", nil, "", "- -v"},
		{"-t -v x", []event{{'t', "-t", "-v", true}}, "", "x"},
	} {
		evs, stderr, rest := parse(strings.Fields(tc.args), false)
		if d := cmp.Diff(tc.events, evs); d != "" {
			t.Errorf("%q: events (-want +got):\n%s", tc.args, d)
		}
		if stderr != tc.stderr {
			t.Errorf("%q: stderr %q, want %q", tc.args, stderr, tc.stderr)
		}
		if got := strings.Join(rest, " "); got != tc.rest {
			t.Errorf("%q: rest %q, want %q", tc.args, got, tc.rest)
		}
	}
}

func TestGetoptPermute(t *testing.T) {
	for _, tc := range []struct {
		args   string
		events []event
		rest   string
	}{
		{"a -t 5 b -v", []event{{'t', "-t", "5", true}, {'v', "-v", "", false}}, "a b"},
		{"a b -- -v c", nil, "a b -v c"},
		{"-v a -- b -H", []event{{'v', "-v", "", false}}, "a b -H"},
	} {
		evs, _, rest := parse(strings.Fields(tc.args), true)
		if d := cmp.Diff(tc.events, evs); d != "" {
			t.Errorf("%q: events (-want +got):\n%s", tc.args, d)
		}
		if got := strings.Join(rest, " "); got != tc.rest {
			t.Errorf("%q: rest %q, want %q", tc.args, got, tc.rest)
		}
	}
}

func FuzzGetopt(f *testing.F) {
	f.Add("-vvv --time=5 --ti x -k -- y")
	f.Add("--n --nice=3 -Ht5 job.sh")
	f.Fuzz(func(t *testing.T, s string) {
		for _, permute := range []bool{false, true} {
			args := append([]string{"prog"}, strings.Fields(s)...)
			p := New(args, testShort, testLong, permute, &strings.Builder{})
			for i := 0; ; i++ {
				if i > len(s)+len(args)+4 {
					t.Fatalf("%q: no end", s)
				}
				if p.Next() == Done {
					break
				}
			}
			if p.Optind < 1 || p.Optind > len(args) {
				t.Fatalf("%q: optind %d of %d", s, p.Optind, len(args))
			}
		}
	})
}
