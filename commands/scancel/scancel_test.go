package main

import (
	"bytes"
	"strings"
	"testing"
)

func newTest(env map[string]string) (*scancel, *bytes.Buffer) {
	var errb bytes.Buffer
	s := &scancel{stdout: &bytes.Buffer{}, stderr: &errb,
		getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	s.opt.signal = noVal16
	s.opt.state = jobEnd
	return s, &errb
}

// parse runs option parsing and returns the exit status it ended with
// (-1 when it did not end the program).
func parse(s *scancel, args ...string) (code int) {
	code = -1
	defer func() {
		if r := recover(); r != nil {
			code = r.(exit).code
		}
	}()
	s.parseEnv()
	s.parseArgs(append([]string{"scancel"}, args...))
	return code
}

func TestXlateIDs(t *testing.T) {
	tests := []struct {
		args  []string
		specs []jobSpec
		list  []string
		err   string
	}{
		{[]string{"12"}, []jobSpec{{jobID: 12, arrayID: noVal, stepID: batchScript}}, []string{"12"}, ""},
		{[]string{"12_3"}, []jobSpec{{jobID: 12, arrayID: 3, stepID: batchScript}}, []string{"12_3"}, ""},
		{[]string{"12_*"}, []jobSpec{{jobID: 12, arrayID: infinite, stepID: batchScript}}, []string{"12_*"}, ""},
		{[]string{"12.4"}, []jobSpec{{jobID: 12, arrayID: noVal, stepID: 4}}, []string{"12.4"}, ""},
		{[]string{"12_2.1"}, []jobSpec{{jobID: 12, arrayID: 2, stepID: 1}}, []string{"12_2.1"}, ""},
		{[]string{"12+1"}, []jobSpec{{jobID: 12, arrayID: noVal, stepID: batchScript}}, []string{"12+1"}, ""},
		{[]string{"12_[1-2]"}, []jobSpec{{jobID: 12, arrayID: 1, stepID: batchScript}, {jobID: 12, arrayID: 2, stepID: batchScript}},
			[]string{"12_[1-2]"}, ""},
		{[]string{"12,13"}, []jobSpec{{jobID: 12, arrayID: noVal, stepID: batchScript}, {jobID: 13, arrayID: noVal, stepID: batchScript}},
			[]string{"12", "13"}, ""},
		{[]string{"x"}, nil, nil, "scancel: error: Invalid job id x\n"},
		{[]string{"0"}, nil, nil, "scancel: error: Invalid job id 0\n"},
		{[]string{"12x"}, nil, nil, "scancel: error: Invalid job id 12x\n"},
		{[]string{"12_[1-2]x"}, nil, nil, "scancel: error: Invalid job id 12_[1-2]x\n"},
		{[]string{"12_[1-2"}, nil, nil, "scancel: error: Invalid job id 12_[1-2\n"},
	}
	for _, tt := range tests {
		s, errb := newTest(nil)
		code := parse(s, tt.args...)
		if tt.err != "" {
			if code != 1 || errb.String() != tt.err {
				t.Errorf("%q: code %d stderr %q, want 1 %q", tt.args, code, errb.String(), tt.err)
			}
			continue
		}
		if code != -1 {
			t.Errorf("%q: exited %d: %s", tt.args, code, errb.String())
			continue
		}
		if len(s.opt.jobs) != len(tt.specs) {
			t.Errorf("%q: specs %+v, want %+v", tt.args, s.opt.jobs, tt.specs)
			continue
		}
		for i := range tt.specs {
			if s.opt.jobs[i] != tt.specs[i] {
				t.Errorf("%q: spec %d = %+v, want %+v", tt.args, i, s.opt.jobs[i], tt.specs[i])
			}
		}
		if strings.Join(s.opt.jobList, " ") != strings.Join(tt.list, " ") {
			t.Errorf("%q: id strings %q, want %q", tt.args, s.opt.jobList, tt.list)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		err  string
	}{
		{nil, nil, "scancel: error: No job identification provided\n"},
		{nil, []string{"-s", "BOGUS", "1"}, "Unknown job signal: BOGUS\n"},
		{nil, []string{"-s", "0", "1"}, "Unknown job signal: 0\n"},
		{nil, []string{"-t", "bogus"}, "Invalid job state specified: bogus\nValid job states are PENDING, RUNNING, and SUSPENDED\n"},
		{map[string]string{"SCANCEL_STATE": "zz"}, []string{"1"}, "Unrecognized SCANCEL_STATE value: zz\nValid job states are PENDING, RUNNING, and SUSPENDED\n"},
		{nil, []string{"-u", "no-such-user-here"}, "scancel: error: Invalid user name: no-such-user-here\n"},
		{nil, []string{"--bogus"}, "scancel: unrecognized option '--bogus'\nTry \"scancel --help\" for more information\n"},
	}
	for _, tt := range tests {
		s, errb := newTest(tt.env)
		if code := parse(s, tt.args...); code != 1 || errb.String() != tt.err {
			t.Errorf("%q: code %d stderr %q, want 1 %q", tt.args, code, errb.String(), tt.err)
		}
	}
}

func TestSignalNames(t *testing.T) {
	tests := map[string]uint16{"9": 9, "KILL": 9, "sigusr1": 10, "SIGTERM": 15, " HUP": 1, "USR2 ": 12,
		"10x": 0, "FOO": 0, "65545": 9, "cont": 18}
	for in, want := range tests {
		if got := sigNameToNum(in); got != want {
			t.Errorf("sigNameToNum(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		args    []string
		byStr   bool
		filters bool
	}{
		{[]string{"5"}, true, false},
		{[]string{"5.1"}, false, false},
		{[]string{"-s", "USR1", "5"}, false, false},
		{[]string{"-b", "5"}, false, false},
		{[]string{"-f", "5"}, true, false},
		{[]string{"-n", "x"}, false, true},
	}
	for _, tt := range tests {
		s, errb := newTest(nil)
		if code := parse(s, tt.args...); code != -1 {
			t.Fatalf("%q: exit %d %s", tt.args, code, errb)
		}
		if got := s.opt.hasDefaultOpt() && !s.opt.hasJobSteps(); got != tt.byStr {
			t.Errorf("%q: by id string = %v, want %v", tt.args, got, tt.byStr)
		}
	}
}

// Regression: -f sent KILL_HURRY (0x20) and -H KILL_FED_REQUEUE (0x10),
// so `scancel -f -s TERM` left the batch shell alone where real scancel
// signals it.
func TestKillFlags(t *testing.T) {
	tests := []struct {
		args  []string
		flags uint16
		kind  string
	}{
		{nil, 0, ""},
		{[]string{"-b"}, 0x01, "batch "},
		{[]string{"-f"}, 0x08, "full "},
		{[]string{"-H"}, 0x20, ""},
		{[]string{"-b", "-H"}, 0x21, "batch "},
	}
	for _, tt := range tests {
		s, errb := newTest(nil)
		if code := parse(s, append(tt.args, "12")...); code != -1 {
			t.Fatalf("%q: exited %d: %s", tt.args, code, errb)
		}
		flags, kind := s.opt.killFlags()
		if flags != tt.flags || kind != tt.kind {
			t.Errorf("%q: flags %#x %q, want %#x %q", tt.args, flags, kind, tt.flags, tt.kind)
		}
	}
}
