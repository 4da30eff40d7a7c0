package stepd

// Suspend and resume, slurmstepd's REQUEST_STEP_SUSPEND and
// REQUEST_STEP_RESUME: slurmd asks every step of a job when the
// controller sends REQUEST_SUSPEND_INT (scontrol suspend / resume). As
// slurmstepd 22.05 does: SIGTSTP first (so MPI launchers can stop their
// ranks), two seconds, then SIGSTOP to the whole step; with
// proctrack/cgroup the SIGSTOP is the cgroup freezer. Resume is SIGCONT
// (which also thaws the freezer).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmd/daemon"
)

var _ daemon.JobSuspender = DaemonSteps{}

// Socket requests (stepd_api.h step_msg_t).
const (
	reqStepSuspend = 10
	reqStepResume  = 11
)

// tstpWait is the pause between SIGTSTP and SIGSTOP (slurmstepd's
// sleep(2)); tests shorten it.
var tstpWait = 2 * time.Second

// runningWait bounds how long a request waits for a step that is still
// starting (slurmstepd's _wait_for_job_running waits twice 60 s).
var runningWait = 120 * time.Second

// suspendable is a supervised step that can be stopped: its tracker once
// its processes run.
type suspendable interface {
	stepHandler
	tracker() tracker
}

// suspendCtl is one step's suspended flag; the mutex also keeps a suspend
// and a resume from interleaving (slurmstepd's suspend_mutex).
type suspendCtl struct {
	mu        sync.Mutex
	suspended bool
}

// suspendCtls holds the flag of each step handler. A supervisor process
// runs one step; keeping the flag beside the handler, not in it, leaves
// the batch and srun step types as they are.
var suspendCtls sync.Map // stepHandler -> *suspendCtl

func ctlOf(h stepHandler) *suspendCtl {
	v, _ := suspendCtls.LoadOrStore(h, &suspendCtl{})
	return v.(*suspendCtl)
}

// serveSuspend answers one suspend or resume request: the job's
// specialized core count (native uint16, unused here: no core_spec
// plugin), then (int rc, int errno).
func serveSuspend(c io.ReadWriter, h stepHandler, req int32, uid uint32) error {
	var b [2]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return err
	}
	s, ok := h.(suspendable)
	switch {
	case !h.authorized(uid):
		return writeRC(c, int32(unix.EPERM))
	case !ok:
		return writeRC(c, int32(slurmerr.ESLURM_NOT_SUPPORTED))
	}
	trk := waitRunning(s)
	if trk == nil {
		return writeRC(c, slurmerr.ESLURMD_JOB_NOTRUNNING)
	}
	if req == reqStepSuspend {
		return writeRC(c, ctlOf(h).suspend(trk))
	}
	return writeRC(c, ctlOf(h).resume(trk))
}

// waitRunning waits until the step's processes run and returns its
// tracker; nil if it ends (or never starts) first.
func waitRunning(s suspendable) tracker {
	deadline := time.Now().Add(runningWait)
	for {
		st := s.state()
		if st == StateRunning {
			if trk := s.tracker(); trk != nil {
				return trk
			}
		}
		if st >= StateEnding || st == StateNotRunning || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *suspendCtl) suspend(trk tracker) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.suspended {
		return slurmerr.ESLURMD_STEP_SUSPENDED
	}
	trk.signal(unix.SIGTSTP)
	time.Sleep(tstpWait)
	trk.signal(unix.SIGSTOP)
	s.suspended = true
	return 0
}

func (s *suspendCtl) resume(trk tracker) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.suspended {
		return slurmerr.ESLURMD_STEP_NOTSUSPENDED
	}
	trk.signal(unix.SIGCONT)
	s.suspended = false
	return 0
}

func (b *batch) tracker() tracker {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pid == 0 {
		return nil
	}
	return b.trk
}

func (ts *taskStep) tracker() tracker {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.trk
}

// suspendStep sends one suspend or resume request on an open connection.
func (s *stepConn) suspendStep(resume bool, coreSpec uint16) error {
	req := uint32(reqStepSuspend)
	if resume {
		req = reqStepResume
	}
	b := ne.AppendUint32(nil, req)
	b = ne.AppendUint16(b, coreSpec)
	if _, err := s.c.Write(b); err != nil {
		return err
	}
	return s.rcErr()
}

// SuspendJob stops (or, with resume, continues) every step of job on this
// node, all steps at once since a suspend takes seconds (slurmd's
// _rpc_suspend_job). A suspend that fails is tried once more a second
// later: a step may just be starting. A job with no step here is not an
// error. The supervisors check the caller (root or SlurmUser only).
func (m *Manager) SuspendJob(ctx context.Context, job uint32, resume bool, coreSpec uint16) error {
	steps := m.stepsOf(job, NoVal)
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, r := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.suspendOne(r, resume, coreSpec)
			if errs[i] != nil && !resume && ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
					errs[i] = m.suspendOne(r, resume, coreSpec)
				}
			}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("step %d.%d: %w", r.JobID, r.StepID, errs[i])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) suspendOne(r StepRef, resume bool, coreSpec uint16) error {
	// The step may be starting (up to runningWait) and the suspend itself
	// takes tstpWait.
	c, err := dialStep(r.Socket, m.timeout()+runningWait+tstpWait)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.suspendStep(resume, coreSpec)
}
