package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func run(t *testing.T, env map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	files := map[string]string{"/hosts": "n3\nn1\n\nn2\n", "/bad": "n[1-x]\n"}
	code := Main(append([]string{"scontrol"}, args...), IO{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ReadFile: func(name string, limit int) ([]byte, error) {
			if name == "/dir" {
				return nil, errors.New("is a directory")
			}
			if c, ok := files[name]; ok {
				return []byte(c), nil
			}
			return nil, &OpenError{Err: errors.New("no such file")}
		},
	})
	return out.String(), errb.String(), code
}

func TestShowHostlist(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		out, err string
		code     int
	}{
		{"hostnames", nil, []string{"show", "hostnames", "n[1-3]"}, "n1\nn2\nn3\n", "", 0},
		{"hostlist", nil, []string{"show", "hostlist", "n1,n2,n3,a5,a01"}, "n[1-3],a[5,01]\n", "", 0},
		{"sorted", nil, []string{"show", "hostlistsorted", "n1,n2,n3,a5,a01,n2"}, "a[5,01],n[1-2,2-3]\n", "", 0},
		{"missing bracket", nil, []string{"show", "hostnames", "n[1-"}, "n]\n", "", 0},
		{"no list", nil, []string{"show", "hostnames"}, "", "scontrol: error: host list is empty\n", 0},
		{"env list", map[string]string{"SLURM_NODELIST": "x[1-2]"}, []string{"show", "hostnames"}, "x1\nx2\n", "", 0},
		{"too many hosts", nil, []string{"show", "hostnames", "n[1-300000]"}, "",
			"scontrol: error: _parse_single_range: Too many hosts in range `1-300000'\nInvalid hostlist: n[1-300000]\n", 0},
		{"too many hosts encode", nil, []string{"show", "hostlist", "n[1-300000]"}, "",
			"scontrol: error: _parse_single_range: Too many hosts in range `1-300000'\nInvalid hostlist: n[1-300000]\n", 1},
		{"no encode arg", nil, []string{"show", "hostlist"}, UsageText, "invalid encode argument\n", 1},
		{"file", nil, []string{"show", "hostlistsorted", "/hosts"}, "n[1-3]\n", "", 0},
		{"file bad", nil, []string{"show", "hostlist", "/bad"}, "",
			"scontrol: error: _parse_single_range: Invalid range: `1-x'\nInvalid hostlist: n[1-x],\n", 1},
		{"file missing", nil, []string{"show", "hostlist", "/nope"}, "", "Can not open /nope\n", 1},
		{"file dir", nil, []string{"show", "hostlist", "/dir"}, "", "Error reading /dir\n", 1},
		{"abbrev", nil, []string{"sho", "HOSTL", "b,a"}, "b,a\n", "", 0},
		{"eq form", nil, []string{"show", "hostnames=n[1-2]"}, "n1\nn2\n", "", 0},
		{"too many args", nil, []string{"show", "hostnames", "a", "b"}, "", "too many arguments for keyword:show\n", 1},
		{"bad entity", nil, []string{"show", "host", "a"}, "", "invalid entity:host for keyword:show \n", 1},
		{"bad keyword", nil, []string{"bogus"}, "", "invalid keyword: bogus\n", 1},
		{"bad option", nil, []string{"-z"}, "", "scontrol: invalid option -- 'z'\nTry \"scontrol --help\" for more information\n", 1},
		{"ambiguous", nil, []string{"--h"}, "", "scontrol: option '--h' is ambiguous; possibilities: '--help' '--hide'\nTry \"scontrol --help\" for more information\n", 1},
		{"permuted option", nil, []string{"show", "hostlist", "-d", "n[1-2]"}, "n[1-2]\n", "", 0},
		{"version", nil, []string{"-v", "-V"}, "slurm-wlm 22.05.8\nslurm_api_version: 2490368, 38.0.0\n", "", 0},
	}
	for _, tt := range tests {
		out, errs, code := run(t, tt.env, "", tt.args...)
		if out != tt.out || errs != tt.err || code != tt.code {
			t.Errorf("%s: got (%q, %q, %d), want (%q, %q, %d)", tt.name, clip(out), errs, code, clip(tt.out), tt.err, tt.code)
		}
	}
}

func TestInteractive(t *testing.T) {
	out, errs, code := run(t, nil, "show hostlist n2,n1\n!!\nexit\nshow hostlist x\n")
	want := "scontrol: show hostlist n2,n1\nn[2,1]\nscontrol: !!\nn[2,1]\nscontrol: exit\n"
	if out != want || errs != "" || code != 0 {
		t.Errorf("got (%q, %q, %d), want %q", out, errs, code, want)
	}
}

func TestHasPrefixFold(t *testing.T) {
	tests := []struct {
		s, word string
		n       int
		want    bool
	}{
		{"hostn", "hostnames", 5, true}, {"host", "hostnames", 5, false},
		{"HOSTNAMES", "hostnames", 9, true}, {"hostnamesx", "hostnames", 10, false},
		{"holdXYZ", "hold", 4, true}, {"", "all", 2, false},
	}
	for _, tt := range tests {
		if got := hasPrefixFold(tt.s, tt.word, tt.n); got != tt.want {
			t.Errorf("hasPrefixFold(%q, %q, %d) = %v", tt.s, tt.word, tt.n, got)
		}
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
