package getopt

import (
	"bytes"
	"strings"
	"testing"
)

// TestQueryCommandCases are the cases the query commands' (squeue, sinfo,
// scancel, scontrol) former parser was tested with: permutation, optional
// arguments, aliases and glibc's diagnostics.
func TestQueryCommandCases(t *testing.T) {
	longs := []Option{
		{Name: "jobs", HasArg: OptionalArgument, Val: 'j'},
		{Name: "format", HasArg: RequiredArgument, Val: 'o'},
		{Name: "Format", HasArg: RequiredArgument, Val: 'O'},
		{Name: "node", HasArg: RequiredArgument, Val: 'w'},
		{Name: "nodes", HasArg: RequiredArgument, Val: 'w'},
		{Name: "noheader", HasArg: NoArgument, Val: 'h'},
		{Name: "all", HasArg: NoArgument, Val: 'a'},
	}
	tests := []struct {
		args []string
		want string // "c=arg" per option, "|" then the remaining words
		err  string
	}{
		{[]string{"-a", "x", "-h"}, "a h | x", ""},
		{[]string{"-j", "5"}, "j | 5", ""},
		{[]string{"-j5"}, "j=5 |", ""},
		{[]string{"--jobs=5,6"}, "j=5,6 |", ""},
		{[]string{"--jobs", "5"}, "j | 5", ""},
		{[]string{"-ofoo", "-o", "bar"}, "o=foo o=bar |", ""},
		{[]string{"--form=%i"}, "o=%i |", ""},
		{[]string{"--nod", "n1"}, "w=n1 |", ""},
		{[]string{"--no"}, "? |", "prog: option '--no' is ambiguous; possibilities: '--node' '--noheader'\n"},
		{[]string{"--bogus=1"}, "? |", "prog: unrecognized option '--bogus=1'\n"},
		{[]string{"-z"}, "? |", "prog: invalid option -- 'z'\n"},
		{[]string{"-o"}, "? |", "prog: option requires an argument -- 'o'\n"},
		{[]string{"--format"}, "? |", "prog: option '--format' requires an argument\n"},
		{[]string{"--all=1"}, "? |", "prog: option '--all' doesn't allow an argument\n"},
		{[]string{"-ha", "--", "-a"}, "h a | -a", ""},
	}
	for _, tc := range tests {
		var stderr bytes.Buffer
		g := New(append([]string{"prog"}, tc.args...), "aj::o:O:hw:", longs, true, &stderr)
		var got []string
		for {
			c := g.Next()
			if c == Done {
				break
			}
			s := string(rune(c))
			if g.HasValue {
				s += "=" + g.Arg
			}
			got = append(got, s)
		}
		got = append(got, "|")
		got = append(got, g.Args[g.Optind:]...)
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, s, tc.want)
		}
		if stderr.String() != tc.err {
			t.Errorf("%q: stderr %q, want %q", tc.args, stderr.String(), tc.err)
		}
	}
}
