package ctld

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/jobs"
)

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunHook(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		args     []string
		timeout  int
		wantOut  string
		wantExit int
		timedOut bool
	}{
		{"args and env only", `echo "$1|$2|$FOO|${HOME:-nohome}|$(pwd)"`, []string{"-s", "x"}, 0, "-s|x|bar|nohome|/", 0, false},
		{"exit status", "echo oops; exit 3", nil, 0, "oops", 3, false},
		{"timeout kills the group", "sleep 30 & sleep 30", nil, 1, "", -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := jobs.Script{Kind: jobs.ScriptMail, Argv: append([]string{writeScript(t, tc.body)}, tc.args...),
				Env: []string{"FOO=bar"}, Timeout: tc.timeout}
			status, out, timedOut, err := runHook(s)
			if err != nil {
				t.Fatal(err)
			}
			ws := syscall.WaitStatus(status)
			if timedOut != tc.timedOut || out != tc.wantOut {
				t.Errorf("out %q timedOut %v, want %q %v", out, timedOut, tc.wantOut, tc.timedOut)
			}
			if tc.wantExit >= 0 && ws.ExitStatus() != tc.wantExit {
				t.Errorf("exit %d, want %d", ws.ExitStatus(), tc.wantExit)
			}
			if tc.timedOut && ws.Signal() != syscall.SIGKILL {
				t.Errorf("status %#x, want SIGKILL", status)
			}
		})
	}
}

func TestAppendJobComp(t *testing.T) {
	c := &Controller{}
	c.log = quietLog()
	p := filepath.Join(t.TempDir(), "jobcomp.txt")
	for _, l := range []string{"a\n", "b\n"} {
		c.appendJobComp(jobs.Script{Kind: jobs.ScriptJobCompFile, Path: p, Line: l})
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "a\nb\n" {
		t.Errorf("%q %v", b, err)
	}
}

func TestCutNUL(t *testing.T) {
	got := cutNUL([]string{"SLURM_JOB_NAME=a\x00b", "plain", "\x00"})
	if got[0] != "SLURM_JOB_NAME=a" || got[1] != "plain" || got[2] != "" {
		t.Errorf("%q", got)
	}
}
