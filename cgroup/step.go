package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options describe the step cgroup Create builds.
type Options struct {
	Layout      Layout
	UID, GID    uint32 // the job's user; v1 step and task dirs are chowned to it, as Slurm does
	Step        StepID
	Constraints Constraints
	// Accounting also creates the step in the v1 cpuacct hierarchy (what
	// jobacct_gather/cgroup reads). v2 always has cpu.stat.
	Accounting bool
}

// ErrNotFound is returned by Adopt when the step cgroup does not exist.
var ErrNotFound = errors.New("cgroup: step cgroup not found")

// ErrNoSwap is Create's error when ConstrainSwapSpace is set but the
// memory controller has no swap accounting (task/cgroup's init error).
//
//lint:ignore ST1005 Slurm's wording
var ErrNoSwap = errors.New("ConstrainSwapSpace is enabled but there is no support for swap in the memory cgroup controller.")

// ErrSuspended is returned by Start while the step is suspended: starting
// inside a frozen cgroup would freeze the caller too on v1.
var ErrSuspended = errors.New("cgroup: step is suspended")

// Step is the cgroup of one job step: proctrack/cgroup (every process of
// the step, daemonized ones included, is tracked and killed) and
// task/cgroup (cpuset, memory, devices).
//
// Methods are safe for concurrent use.
type Step struct {
	layout Layout
	uid    uint32
	id     StepID
	paths  StepPaths
	impl   impl

	mu         sync.Mutex
	suspended  bool
	supervisor int // pid given to AttachSupervisor, 0 if none
}

// impl is what differs between v1 and v2.
type impl interface {
	create(o Options) error
	addPID(pid int, task *uint32) error
	start(cmd *exec.Cmd, task *uint32) error
	attachSupervisor(pid int) error
	pids() ([]int, error)
	freeze(ctx context.Context) error
	thaw(ctx context.Context) error
	killAll(ctx context.Context) error // one SIGKILL round over every process
	oom() (OOMReport, error)
	remove(supervisor int) error
}

// Create builds the step's cgroups (creating the uid/job levels if needed,
// as Slurm does) and applies the constraints.
func Create(o Options) (*Step, error) {
	s := newStep(o.Layout, o.UID, o.Step)
	if o.Layout.Version == V1 {
		s.impl = &v1Step{l: o.Layout, p: s.paths, uid: o.UID, gid: o.GID}
	}
	if err := s.impl.create(o); err != nil {
		return nil, fmt.Errorf("cgroup: create %s: %w", s.paths.Step, err)
	}
	return s, nil
}

func newStep(l Layout, uid uint32, id StepID) *Step {
	s := &Step{layout: l, uid: uid, id: id, paths: l.Paths(uid, id)}
	if l.Version == V2 {
		s.impl = &v2Step{l: l, p: s.paths}
	}
	return s
}

// Adopt takes over an existing step cgroup, given its directory relative
// to the mount as Paths returns it (for instance after a slurmd restart).
func Adopt(l Layout, stepPath string) (*Step, error) {
	uid, id, err := l.ParseStepPath(stepPath)
	if err != nil {
		return nil, err
	}
	s := newStep(l, uid, id)
	switch l.Version {
	case V1:
		v := &v1Step{l: l, p: s.paths, uid: uid}
		if err := v.adopt(); err != nil {
			return nil, err
		}
		fi, err := os.Stat(l.Abs(Freezer, s.paths.Step))
		if err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				v.gid = st.Gid
			}
		}
		s.impl = v
	default:
		if _, err := os.Stat(l.Abs("", s.paths.StepUser)); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, stepPath, err)
		}
	}
	if b, err := os.ReadFile(s.freezeFile()); err == nil {
		st := strings.TrimSpace(string(b))
		s.suspended = st == "FROZEN" || st == "1"
	}
	return s, nil
}

func (s *Step) freezeFile() string {
	if s.layout.Version == V1 {
		return s.layout.Abs(Freezer, s.paths.Step) + "/freezer.state"
	}
	return s.layout.Abs("", s.paths.StepUser) + "/cgroup.freeze"
}

// ID is the step's id.
func (s *Step) ID() StepID { return s.id }

// UID is the job's user (0 on v2 adoption: v2 paths do not carry it).
func (s *Step) UID() uint32 { return s.uid }

// Paths are the step's directories relative to the mount(s).
func (s *Step) Paths() StepPaths { return s.paths }

// Layout is the layout the step was created or adopted with.
func (s *Step) Layout() Layout { return s.layout }

// AddPID puts an already running process into the step (Slurm's
// proctrack add / step addto). On v2 it goes to user/task_special.
func (s *Step) AddPID(pid int) error {
	return s.impl.addPID(pid, nil)
}

// AddTask puts task number task's process into the step and its task
// level cgroups (v1 memory/devices/cpuacct step_x/task_<n>, v2
// user/task_<n>).
func (s *Step) AddTask(pid int, task uint32) error {
	return s.impl.addPID(pid, &task)
}

// Start starts cmd so that its process is inside the step from its first
// instruction (it cannot fork before being tracked). See StartTask.
func (s *Step) Start(cmd *exec.Cmd) error { return s.start(cmd, nil) }

// StartTask is Start for task number task.
//
// On v2 the child is cloned straight into its leaf (CLONE_INTO_CGROUP).
// On v1, which has no such clone flag, the calling process moves itself
// into the step's cgroups, forks, and moves back; other goroutines of the
// caller that fork during that window start inside the step too, and the
// caller's allocations in that window are charged to the step's memory
// cgroup: a supervisor should run with oom_score_adj -1000 as slurmstepd
// does. Unset Stdin/Stdout/Stderr are given /dev/null opened beforehand,
// since the step's device rules may deny it.
func (s *Step) StartTask(cmd *exec.Cmd, task uint32) error { return s.start(cmd, &task) }

func (s *Step) start(cmd *exec.Cmd, task *uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.suspended {
		return ErrSuspended
	}
	return s.impl.start(cmd, task)
}

// AttachSupervisor places the step supervisor (slurmstepd's role) where
// Slurm places slurmstepd: v1 in the job level freezer cgroup (outside the
// step it freezes and kills) and in the step's cpuset/memory/devices
// cgroups; v2 in step/slurm. Delete moves it out again. The caller should
// protect itself from the OOM killer (Slurm sets oom_score_adj -1000).
func (s *Step) AttachSupervisor(pid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.impl.attachSupervisor(pid); err != nil {
		return err
	}
	s.supervisor = pid
	return nil
}

// PIDs lists every process of the step (cgroup.procs of the step and all
// its sub-cgroups), the supervisor excluded.
func (s *Step) PIDs() ([]int, error) {
	p, err := s.impl.pids()
	if err != nil {
		return nil, err
	}
	slices.Sort(p)
	return slices.Compact(p), nil
}

// HasPID reports whether pid is one of the step's processes.
func (s *Step) HasPID(pid int) (bool, error) {
	p, err := s.impl.pids()
	return slices.Contains(p, pid), err
}

// Suspend freezes every process of the step (SIGSTOP for proctrack/cgroup).
func (s *Step) Suspend(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.impl.freeze(ctx); err != nil {
		return err
	}
	s.suspended = true
	return nil
}

// Resume thaws the step.
func (s *Step) Resume(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.impl.thaw(ctx); err != nil {
		return err
	}
	s.suspended = false
	return nil
}

// Signal sends sig to the step's processes while the step is frozen, so
// none can fork a child that escapes the signal. When only is not nil,
// just the pids it accepts get the signal (Slurm sends signals other than
// SIGKILL to the supervisor's children only: see ChildrenOf).
//
// Like proctrack/cgroup: SIGSTOP suspends the step (the freezer); SIGCONT
// and SIGKILL also resume a suspended step; any other signal leaves a
// suspended step frozen, delivered once it is resumed.
func (s *Step) Signal(ctx context.Context, sig syscall.Signal, only func(pid int) bool) error {
	if sig == syscall.SIGSTOP {
		return s.Suspend(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.impl.freeze(ctx); err != nil {
		return err
	}
	pids, err := s.impl.pids()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, pid := range pids {
		if pid == s.supervisor || (only != nil && !only(pid)) {
			continue
		}
		if err := unix.Kill(pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
		}
	}
	if !s.suspended || sig == syscall.SIGCONT || sig == syscall.SIGKILL {
		if err := s.impl.thaw(ctx); err != nil {
			errs = append(errs, err)
		} else {
			s.suspended = false
		}
	}
	return errors.Join(errs...)
}

// Kill sends SIGKILL to every process of the step, again and again (with
// a growing pause, as proctrack_p_wait does) until the step is empty or
// ctx ends. A suspended step is thawed so its processes can die.
func (s *Step) Kill(ctx context.Context) error {
	delay := 5 * time.Millisecond
	for {
		pids, err := s.PIDs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		s.mu.Lock()
		err = s.impl.killAll(ctx)
		if err == nil {
			s.suspended = false
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if err := sleepCtx(ctx, delay); err != nil {
			left, _ := s.PIDs()
			return fmt.Errorf("cgroup: %s still has %d processes: %w", s.paths.Step, len(left), err)
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// Wait returns when the step has no process left, or ctx's error.
func (s *Step) Wait(ctx context.Context) error {
	delay := 2 * time.Millisecond
	for {
		pids, err := s.PIDs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return err
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// OOMReport is what the memory cgroup recorded. Slurm sets the job state
// OUT_OF_MEMORY when the step had an oom-kill event (OutOfMemory); the
// fail counters only give the "hit memory limit" log lines.
type OOMReport struct {
	Monitored        bool   // the memory controller is in use for the step
	StepOOMKills     uint64 // oom_kill events in the step (and its tasks)
	JobOOMKills      uint64 // oom_kill events counted at the job level
	StepMemFailcnt   uint64 // v1 memory.failcnt; v2 memory.events max
	StepMemswFailcnt uint64 // v1 memory.memsw.failcnt; v2 memory.swap.events fail
	JobMemFailcnt    uint64
	JobMemswFailcnt  uint64
}

// OutOfMemory reports whether a process of the step was killed by the
// cgroup OOM killer (Slurm: "Detected %d oom-kill event(s) in StepId=...").
func (r OOMReport) OutOfMemory() bool { return r.StepOOMKills > 0 }

// OOM reads the step's out-of-memory counters. Read it after the step's
// processes are gone and before Delete.
func (s *Step) OOM() (OOMReport, error) { return s.impl.oom() }

// Delete removes the step's task and step cgroups, then the job and uid
// levels when no other step uses them. It fails while a process is
// still inside; the attached supervisor is moved out first.
func (s *Step) Delete() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.impl.remove(s.supervisor)
}

// ChildrenOf returns a filter for Signal accepting the direct children of
// ppid (Slurm's test for "a slurm task": its parent is slurmstepd).
func ChildrenOf(ppid int) func(pid int) bool {
	return func(pid int) bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// The command name may contain spaces and ')': the ppid is the
		// second field after the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			return false
		}
		f := strings.Fields(string(b[i+1:]))
		return len(f) >= 2 && f[1] == strconv.Itoa(ppid)
	}
}

// readPidsFile parses a cgroup.procs or tasks file.
func readPidsFile(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("cgroup: %s: bad pid %q", path, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// lockDir takes Slurm's common_cgroup_lock: an exclusive flock on a
// cgroup directory, which serializes step creation and deletion (with
// real slurmstepds too) so a job directory is not removed under a step
// being created.
func lockDir(dir string) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { unix.Close(fd) }, nil
}

// ErrBusy is returned by Delete while processes remain in the step.
var ErrBusy = errors.New("cgroup: step still has processes")

// notBusy fails fast, instead of retrying rmdir, when dir or one of its
// task directories (ents) still lists a process.
func notBusy(dir string, ents []os.DirEntry) error {
	dirs := []string{dir}
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, dir+"/"+e.Name())
		}
	}
	for _, d := range dirs {
		if p, err := readPidsFile(d + "/cgroup.procs"); err == nil && len(p) > 0 {
			return fmt.Errorf("%w: %s has %d", ErrBusy, d, len(p))
		}
	}
	return nil
}

// rmdir removes one cgroup directory (never recursively: a job directory
// may hold other steps). A missing directory is not an error. The kernel
// may still hold a just-exited task for a moment, so EBUSY is retried a
// few times when retry is set.
func rmdir(dir string, retry bool) error {
	delay := time.Millisecond
	for i := 0; ; i++ {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !retry || !errors.Is(err, unix.EBUSY) || i == 8 {
			return fmt.Errorf("rmdir %s: %w", dir, err)
		}
		time.Sleep(delay)
		delay *= 2
	}
}

// writeFile writes a cgroup control file. O_CREATE (as os.WriteFile, which
// the library uses) only matters on the plain directories tests use.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}
