package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// suspendSteps is a fakeSteps that can suspend: it reports each call.
type suspendSteps struct {
	fakeSteps
	calls chan string
}

func (s *suspendSteps) SuspendJob(_ context.Context, job uint32, resume bool, coreSpec uint16) error {
	s.calls <- fmt.Sprintf("job %d resume %v core_spec %#x", job, resume, coreSpec)
	return nil
}

func TestSuspendInt(t *testing.T) {
	steps := &suspendSteps{calls: make(chan string, 4)}
	r := newRig(t, rigOpts{steps: steps})
	req := func(op uint16) msg.SuspendInt {
		return msg.SuspendInt{IndfSusp: 1, JobCoreSpec: 0xfffe, JobID: 7, Op: op}
	}
	next := func() string {
		t.Helper()
		select {
		case c := <-steps.calls:
			return c
		case <-time.After(60 * time.Second):
			t.Fatal("no suspend call")
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		uid  uint32
		body msg.SuspendInt
		rc   int
		call string
	}{
		{"ordinary user", 1000, req(msg.SuspendJob), slurmerr.ESLURM_USER_ID_MISSING, ""},
		{"bad op", 0, req(9), slurmerr.ESLURM_NOT_SUPPORTED, ""},
		{"bad op, ordinary user", 1000, req(9), slurmerr.ESLURM_USER_ID_MISSING, ""},
		{"suspend by SlurmUser", 500, req(msg.SuspendJob), 0, "job 7 resume false core_spec 0xfffe"},
		{"resume by root", 0, req(msg.ResumeJob), 0, "job 7 resume true core_spec 0xfffe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rc := r.rc(tc.uid, msgtype.REQUEST_SUSPEND_INT, tc.body); rc != tc.rc {
				t.Fatalf("rc %d, want %d", rc, tc.rc)
			}
			if tc.call != "" {
				if got := next(); got != tc.call {
					t.Fatalf("call %q, want %q", got, tc.call)
				}
			}
			select {
			case c := <-steps.calls:
				t.Fatalf("unexpected call %q", c)
			default:
			}
		})
	}
}

// A step supervisor that cannot suspend: the request is still answered
// (the controller's state does not depend on it) and nothing breaks.
func TestSuspendIntWithoutSuspender(t *testing.T) {
	r := newRig(t, rigOpts{steps: &fakeSteps{}})
	if rc := r.rc(0, msgtype.REQUEST_SUSPEND_INT, msg.SuspendInt{JobID: 3, Op: msg.SuspendJob}); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
}

// Operations on one job run one at a time.
func TestJobLocks(t *testing.T) {
	l := &jobLocks{m: map[jobLockKey]*jobLock{}}
	d := &Daemon{}
	unlock := l.lock(d, 1)
	other := l.lock(d, 2) // another job: not blocked
	other()
	got := make(chan struct{})
	go func() {
		u := l.lock(d, 1)
		close(got)
		u()
	}()
	select {
	case <-got:
		t.Fatal("second lock of job 1 taken while the first is held")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("second lock never taken")
	}
	for range 100 {
		if l.mu.TryLock() {
			n := len(l.m)
			l.mu.Unlock()
			if n == 0 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("lock entries left")
}
