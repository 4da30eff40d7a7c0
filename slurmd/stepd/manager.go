package stepd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// StepRef is a running step found through its supervisor's socket.
type StepRef struct {
	JobID, StepID uint32
	HetComp       uint32 // NoVal unless a het step
	State         int32  // StateStarting, StateRunning, StateEnding
	UID           uint32 // the step owner
	PID           int    // the supervisor's pid
	Socket        string
}

// Manager is slurmd's side of step supervision: it starts one supervisor
// process (slurmstepd) per step and reaches running ones through their
// sockets in the spool dir, so it holds no state of its own and a restarted
// slurmd sees exactly the steps that are still running.
type Manager struct {
	Config Config
	// StepdPath is the slurmstepd binary; "" means "slurmstepd" next to the
	// running executable.
	StepdPath string
	// Timeout bounds talking to one supervisor; 0 means 10 s.
	Timeout time.Duration
}

// NewManager returns a Manager for cfg.
func NewManager(cfg Config) *Manager { return &Manager{Config: cfg} }

func (m *Manager) timeout() time.Duration {
	if m.Timeout <= 0 {
		return 10 * time.Second
	}
	return m.Timeout
}

func (m *Manager) stepdPath() (string, error) {
	if m.StepdPath != "" {
		return m.StepdPath, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), "slurmstepd"), nil
}

func (m *Manager) privileged(uid uint32) bool {
	return uid == 0 || uid == m.Config.SlurmUserUID
}

// LaunchBatch starts the supervisor of a batch job. It returns once the
// supervisor listens on its socket (the script may not have started yet:
// Prolog runs first), so slurmd can answer the launch at once, as Slurm does.
// from is the sender's identity from the message credential: only root and
// SlurmUser may launch (ESLURM_USER_ID_MISSING otherwise); a job whose batch
// step already runs here is ESLURM_DUPLICATE_JOB_ID.
func (m *Manager) LaunchBatch(ctx context.Context, req *msg.BatchJobLaunch, from auth.Identity) error {
	if !m.privileged(from.UID) {
		return slurmErr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	path := SocketPath(m.Config.SpoolDir, m.Config.NodeName, req.JobID, StepIDBatch)
	if c, err := dialStep(path, m.timeout()); err == nil {
		c.Close()
		return slurmErr(slurmerr.ESLURM_DUPLICATE_JOB_ID)
	}
	return m.start(ctx, msgtype.REQUEST_BATCH_JOB_LAUNCH, req)
}

// LaunchTasks starts the supervisor of this node's part of an srun step.
// The caller (slurmd) has verified the credential (signature, expiry,
// replay, revocation, this node in its host lists) and answers srun with
// RESPONSE_SLURM_RC_MSG; here: the sender must be the step's user or
// privileged, and srun, the header's orig_addr, replaces the body's
// orig_addr as slurmd does (the port in it is not used: srun's ports are
// in the request). A step that already runs here is
// ESLURM_DUPLICATE_JOB_ID.
func (m *Manager) LaunchTasks(ctx context.Context, req *msg.LaunchTasksRequest, from auth.Identity, srun codec.Addr) error {
	if from.UID != req.UID && !m.privileged(from.UID) {
		return slurmErr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	if srun.Family == codec.AFInet || srun.Family == codec.AFInet6 {
		r := *req
		r.OrigAddr = srun
		req = &r
	}
	if _, err := nodeIndex(req.CompleteNodelist.Value, m.Config.NodeName); err != nil {
		return err
	}
	path := SocketPath(m.Config.SpoolDir, m.Config.NodeName, req.StepID.JobID, req.StepID.StepID)
	if c, err := dialStep(path, m.timeout()); err == nil {
		c.Close()
		return slurmErr(slurmerr.ESLURM_DUPLICATE_JOB_ID)
	}
	return m.start(ctx, msgtype.REQUEST_LAUNCH_TASKS, req)
}

// start runs a supervisor in its own session, sends it the init message and
// waits for its "ok" (or its error).
func (m *Manager) start(ctx context.Context, mt msgtype.Type, body any) error {
	exe, err := m.stepdPath()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("stepd: start %s: %w", exe, err)
	}
	werr := writeInit(stdin, &m.Config, mt, body)
	stdin.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var reply string
	select {
	case reply = <-line:
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		return ctx.Err()
	}
	if werr != nil || reply != "ok" {
		cmd.Process.Kill()
		cmd.Wait()
		if werr != nil {
			return werr
		}
		if reply == "" {
			reply = "slurmstepd exited during start-up"
		}
		return fmt.Errorf("stepd: %s", strings.TrimPrefix(reply, "error: "))
	}
	// Reap it when it ends; if slurmd goes first, init inherits it.
	go cmd.Wait()
	return nil
}

// Running lists the steps whose supervisors answer on their sockets, and
// removes sockets nobody listens on any more.
func (m *Manager) Running() []StepRef {
	pattern := filepath.Join(m.Config.SpoolDir, m.Config.NodeName+"_*")
	paths, _ := filepath.Glob(pattern)
	var out []StepRef
	for _, p := range paths {
		job, step, het, ok := parseSocketName(filepath.Base(p), m.Config.NodeName)
		if !ok {
			continue
		}
		c, err := dialStep(p, m.timeout())
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				os.Remove(p) // a supervisor that died without cleaning up
			}
			continue
		}
		ref := StepRef{JobID: job, StepID: step, HetComp: het, Socket: p}
		st, err1 := c.state()
		pid, err2 := c.daemonPID()
		uid, err3 := c.uid()
		c.Close()
		if err1 != nil || err2 != nil || err3 != nil || st == StateNotRunning {
			continue
		}
		ref.State, ref.PID, ref.UID = st, int(pid), uid
		out = append(out, ref)
	}
	return out
}

// stepsOf returns the running steps of a job, or one step of it (stepID
// NoVal means all).
func (m *Manager) stepsOf(jobID, stepID uint32) []StepRef {
	var out []StepRef
	for _, r := range m.Running() {
		if r.JobID == jobID && (stepID == NoVal || r.StepID == stepID) {
			out = append(out, r)
		}
	}
	return out
}

// Signal sends sig (a signal number or one of Slurm's pseudo-signals,
// SigTimeLimit...) to one step, or to every step of the job when step is
// NoVal. flags are REQUEST_SIGNAL_TASKS' (KillJobBatch: the batch shell
// only); from is the requester's uid, which the supervisor checks again
// (owner, root or SlurmUser). ESLURM_INVALID_JOB_ID when nothing matches.
func (m *Manager) Signal(ctx context.Context, job, step uint32, sig int, flags uint16, from uint32) error {
	return m.each(job, step, func(c *stepConn) error { return c.signal(sig, int(flags), "", from) })
}

// Kill sends SIGKILL to every process of every step of the job at once
// (REQUEST_STEP_TERMINATE).
func (m *Manager) Kill(job uint32) error {
	return m.each(job, NoVal, func(c *stepConn) error { return c.terminate() })
}

// Terminate ends every step of job as slurmd's kill path does: SIGCONT and
// SIGTERM, KillWait, then SIGKILL (each supervisor runs that sequence
// itself), and returns once no step of the job has processes left (its
// supervisor may still be running the Epilog or reporting), or when ctx
// ends. A job with no steps here is not an error.
func (m *Manager) Terminate(ctx context.Context, job uint32) error {
	err := m.each(job, NoVal, func(c *stepConn) error { return c.signal(SigTermKill, 0, "", 0) })
	if errors.Is(err, slurmErr(slurmerr.ESLURM_INVALID_JOB_ID)) {
		return nil
	}
	if err != nil {
		return err
	}
	for {
		left := false
		for _, r := range m.stepsOf(job, NoVal) {
			left = left || r.State < StateEnding
		}
		if !left {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// each runs f on a connection to every matching step.
func (m *Manager) each(job, step uint32, f func(*stepConn) error) error {
	steps := m.stepsOf(job, step)
	if len(steps) == 0 {
		return slurmErr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	var errs []error
	for _, r := range steps {
		c, err := dialStep(r.Socket, m.timeout())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := f(c); err != nil {
			errs = append(errs, fmt.Errorf("step %d.%d: %w", r.JobID, r.StepID, err))
		}
		c.Close()
	}
	return errors.Join(errs...)
}

// TimeLimit is what slurmd does for REQUEST_KILL_TIMELIMIT on its steps:
// the time-limit notice (a line in the job's stderr), then SIGCONT,
// SIGTERM, KillWait and SIGKILL, which each supervisor runs by itself so
// this returns at once.
func (m *Manager) TimeLimit(job uint32) error {
	if err := m.Signal(context.Background(), job, NoVal, SigTimeLimit, 0, 0); err != nil {
		return err
	}
	return m.Signal(context.Background(), job, NoVal, SigTermKill, 0, 0)
}
