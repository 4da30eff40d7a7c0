package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// lockedBuf collects log lines from the daemon's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// recorder writes a harmless RebootProgram that appends one line per call
// (its arguments, tab separated, between brackets) to calls and exits
// with code; nothing here ever reboots anything.
func recorder(t *testing.T, dir string, code int, mode os.FileMode) (prog, calls string) {
	t.Helper()
	prog = filepath.Join(dir, "fake-reboot.sh")
	calls = filepath.Join(dir, "calls")
	script := "#!/bin/sh\nIFS='\t'\necho \"[$*]\" >> '" + calls + "'\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(prog, []byte(script), mode); err != nil {
		t.Fatal(err)
	}
	return prog, calls
}

func readCalls(t *testing.T, calls string) []string {
	t.Helper()
	b, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestRebootNodes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		uid      uint32
		noProg   bool   // RebootProgram is args alone, not the recorder
		args     string // appended to RebootProgram
		features msg.NullString
		code     int
		mode     os.FileMode
		params   string // SlurmdParameters
		want     []string
		wantLog  string
		shutdown bool
	}{
		{name: "as written", uid: 500, args: " now  -f", want: []string{"[now\t-f]"},
			wantLog: "Node reboot request being processed"},
		{name: "root may", uid: 0, want: []string{"[]"}, wantLog: "Node reboot request being processed"},
		{name: "features replace the arguments", uid: 500, args: " now", features: msg.Str("knl,a2a"),
			want: []string{"[knl,a2a]"}, wantLog: "Node reboot request with features knl,a2a being processed"},
		{name: "empty features: no arguments", uid: 500, args: " now", features: msg.Str(""),
			want: []string{"[]"}, wantLog: "Node reboot request with features  being processed"},
		{name: "user refused", uid: 1000, wantLog: "Security violation, reboot RPC from uid 1000"},
		{name: "no RebootProgram", uid: 500, noProg: true, wantLog: "RebootProgram isn't defined in config"},
		{name: "not executable", uid: 500, mode: 0o644, wantLog: "fake-reboot.sh]: Permission denied"},
		{name: "missing program", uid: 500, noProg: true, args: "/nonexistent/reboot",
			wantLog: "Cannot run RebootProgram [/nonexistent/reboot]: No such file or directory"},
		{name: "failing program", uid: 500, code: 3, want: []string{"[]"}, wantLog: "returned 768"},
		{name: "shutdown_on_reboot", uid: 500, params: "config_overrides,Shutdown_On_Reboot",
			want: []string{"[]"}, shutdown: true},
		{name: "refused: no shutdown", uid: 1000, params: "shutdown_on_reboot",
			wantLog: "Security violation, reboot RPC from uid 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mode := tc.mode
			if mode == 0 {
				mode = 0o755
			}
			prog, calls := recorder(t, dir, tc.code, mode)
			params := tc.params
			if params == "" {
				params = "config_overrides"
			}
			extra := "SlurmdParameters=" + params + "\n"
			switch {
			case !tc.noProg:
				extra += "RebootProgram=\"" + prog + tc.args + "\"\n"
			case tc.args != "":
				extra += "RebootProgram=" + tc.args + "\n"
			}
			logs := &lockedBuf{}
			down := make(chan struct{}, 1)
			r := newRig(t, rigOpts{extra: extra,
				log:      slog.New(slog.NewTextHandler(logs, nil)),
				shutdown: func() { down <- struct{}{} }})
			// No reply ever; the connection closes once the program ended.
			if f, err := r.call(tc.uid, msgtype.REQUEST_REBOOT_NODES,
				msg.RebootNodesRequest{Features: tc.features, NodeList: msg.Str("n1")}); err == nil {
				t.Fatalf("reboot was answered with %v", f.Header.MsgType)
			}
			if got := readCalls(t, calls); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("RebootProgram calls %q, want %q", got, tc.want)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, logs.String())
			}
			if tc.shutdown {
				select {
				case <-down:
				case <-time.After(60 * time.Second):
					t.Fatal("slurmd was not shut down")
				}
			} else {
				// Best effort: the handler has returned, but a shutdown
				// it started runs on its own goroutine.
				select {
				case <-down:
					t.Error("slurmd shut down")
				default:
				}
			}
		})
	}
}

func TestRebootCommand(t *testing.T) {
	for _, tc := range []struct {
		program  string
		features msg.NullString
		path     string
		cmd      string
	}{
		{"/sbin/reboot", msg.NullString{}, "/sbin/reboot", "/sbin/reboot"},
		{"/sbin/reboot -f now", msg.NullString{}, "/sbin/reboot", "/sbin/reboot -f now"},
		{"/sbin/reboot -f now", msg.Str("a,b"), "/sbin/reboot", "/sbin/reboot 'a,b'"},
		{"/sbin/reboot -f", msg.Str(""), "/sbin/reboot", "/sbin/reboot"},
	} {
		path, cmd := rebootCommand(tc.program, tc.features)
		if path != tc.path || cmd != tc.cmd {
			t.Errorf("rebootCommand(%q, %#v) = %q, %q; want %q, %q", tc.program, tc.features, path, cmd, tc.path, tc.cmd)
		}
	}
}
