package stepd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// fakeStep is a stepHandler whose tracker is a real process group.
type fakeStep struct {
	mu    sync.Mutex
	st    int32
	trk   tracker
	admin bool // authorized() answer
}

func (f *fakeStep) state() int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}
func (f *fakeStep) owner() uint32                         { return 1000 }
func (f *fakeStep) authorized(uint32) bool                { return f.admin }
func (f *fakeStep) signal(int, int, string, uint32) int32 { return 0 }
func (f *fakeStep) terminate(uint32) int32                { return 0 }
func (f *fakeStep) tracker() tracker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.trk
}

// procStateOf is the state letter of /proc/pid/stat.
func procStateOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return s[i+2 : i+3]
}

func waitProcState(t *testing.T, pid int, want func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !want(procStateOf(pid)) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d state %q", pid, procStateOf(pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serveFake serves h on the socket of job 5, step 0 in a temp spool and
// returns a Manager that finds it.
func serveFake(t *testing.T, h stepHandler) *Manager {
	t.Helper()
	spool := t.TempDir()
	l, err := listenStep(SocketPath(spool, "n1", 5, 0))
	if err != nil {
		t.Fatal(err)
	}
	go serveStep(l, h)
	t.Cleanup(func() { l.Close() })
	m := NewManager(Config{NodeName: "n1", SpoolDir: spool})
	m.Timeout = 10 * time.Second
	return m
}

func startSleeper(t *testing.T) (*pgidTracker, int) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	trk := &pgidTracker{}
	if err := trk.start(cmd, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		trk.killAll()
		cmd.Wait()
	})
	return trk, cmd.Process.Pid
}

func TestSuspendStep(t *testing.T) {
	old := tstpWait
	tstpWait = 10 * time.Millisecond
	t.Cleanup(func() { tstpWait = old })
	trk, pid := startSleeper(t)
	h := &fakeStep{st: StateRunning, trk: trk, admin: true}
	m := serveFake(t, h)
	ctx := context.Background()
	stepErr := func(err error) int {
		var se slurmerr.Error
		if errors.As(err, &se) {
			return se.Code
		}
		return -1
	}

	if err := m.SuspendJob(ctx, 5, false, 0xfffe); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	waitProcState(t, pid, func(s string) bool { return s == "T" })
	// A second suspend is refused by the step (slurmd only logs it).
	if err := m.SuspendJob(ctx, 5, false, 0xfffe); stepErr(err) != slurmerr.ESLURMD_STEP_SUSPENDED {
		t.Fatalf("suspend again: %v", err)
	}
	if err := m.SuspendJob(ctx, 5, true, 0xfffe); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitProcState(t, pid, func(s string) bool { return s == "S" || s == "R" })
	if err := m.SuspendJob(ctx, 5, true, 0xfffe); stepErr(err) != slurmerr.ESLURMD_STEP_NOTSUSPENDED {
		t.Fatalf("resume again: %v", err)
	}
	// No step of the job here: nothing to do.
	if err := m.SuspendJob(ctx, 6, false, 0xfffe); err != nil {
		t.Fatalf("other job: %v", err)
	}
}

func TestSuspendStepRefused(t *testing.T) {
	old := runningWait
	runningWait = 100 * time.Millisecond
	t.Cleanup(func() { runningWait = old })
	trk, pid := startSleeper(t)
	for _, tc := range []struct {
		name  string
		step  *fakeStep
		errno error
		code  int
	}{
		{"not root or SlurmUser", &fakeStep{st: StateRunning, trk: trk}, unix.EPERM, 0},
		{"ending", &fakeStep{st: StateEnding, trk: trk, admin: true}, nil, slurmerr.ESLURMD_JOB_NOTRUNNING},
		{"never starts", &fakeStep{st: StateStarting, admin: true}, nil, slurmerr.ESLURMD_JOB_NOTRUNNING},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := serveFake(t, tc.step)
			err := m.SuspendJob(context.Background(), 5, false, 0xfffe)
			var se slurmerr.Error
			switch {
			case tc.errno != nil && !errors.Is(err, tc.errno):
				t.Fatalf("err %v, want %v", err, tc.errno)
			case tc.errno == nil && (!errors.As(err, &se) || se.Code != tc.code):
				t.Fatalf("err %v, want code %d", err, tc.code)
			}
			if s := procStateOf(pid); s == "T" {
				t.Fatal("stopped anyway")
			}
		})
	}
}
