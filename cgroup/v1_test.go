package cgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// realV1 returns a layout on this machine's v1 hierarchy under a private
// prefix, or skips when that is impossible.
func realV1(t *testing.T) Layout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if v, err := Detect("", "/sys/fs/cgroup"); err != nil || v != V1 {
		t.Skipf("no cgroup v1 at /sys/fs/cgroup (%v, %v)", v, err)
	}
	for _, ctl := range []string{Freezer, Cpuset, Memory, Devices} {
		if _, err := os.Stat("/sys/fs/cgroup/" + ctl + "/cgroup.procs"); err != nil {
			t.Skipf("v1 %s controller not mounted: %v", ctl, err)
		}
	}
	l, err := NewLayout(V1, nil, LayoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	l.Prepend = fmt.Sprintf("/goslurm_test_%d_%s", os.Getpid(), name)
	t.Cleanup(func() {
		for _, ctl := range []string{Freezer, Cpuset, Memory, Devices, Cpuacct} {
			if err := rmdir(l.Abs(ctl, l.Prepend), true); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return l
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newStepT creates a step and registers its kill and removal.
func newStepT(t *testing.T, o Options) *Step {
	t.Helper()
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Kill(ctx); err != nil {
			t.Errorf("cleanup kill: %v", err)
		}
		if err := s.Delete(); err != nil {
			t.Errorf("cleanup delete: %v", err)
		}
	})
	return s
}

func stepID(job, step uint32) StepID { return StepID{JobID: job, StepID: step, HetComp: NoVal} }

func TestV1DaemonizedProcessIsKilled(t *testing.T) {
	l := realV1(t)
	ctx := testCtx(t)
	s := newStepT(t, Options{Layout: l, Step: stepID(101, StepBatch)})
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	cmd := helperCmd(t, "daemon", pidFile)
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	// The intermediate parent exits at once: the daemon is orphaned in a
	// new session and only the cgroup still ties it to the step.
	if err := cmd.Wait(); err != nil {
		t.Fatalf("daemon parent: %v", err)
	}
	pid := waitPidFile(t, pidFile)
	pids, err := s.PIDs()
	if err != nil || !slices.Contains(pids, pid) {
		t.Fatalf("PIDs = %v, %v; want the daemon %d", pids, err, pid)
	}
	if sid, _ := unix.Getsid(pid); sid == unix.Getpid() || sid == 0 {
		t.Errorf("daemon session %d: not detached", sid)
	} else if own, _ := unix.Getsid(0); sid == own {
		t.Errorf("daemon still in the test's session %d", sid)
	}
	if ok, err := s.HasPID(pid); !ok || err != nil {
		t.Errorf("HasPID(%d) = %v, %v", pid, ok, err)
	}
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if pids, _ := s.PIDs(); len(pids) != 0 {
		t.Fatalf("after Kill PIDs = %v", pids)
	}
	if !gone(pid) {
		t.Fatalf("daemon %d survived", pid)
	}
}

func TestV1ForkingProcessIsKilled(t *testing.T) {
	l := realV1(t)
	ctx := testCtx(t)
	s := newStepT(t, Options{Layout: l, Step: stepID(102, 0)})
	pidFile := filepath.Join(t.TempDir(), "forker.pid")
	cmd := helperCmd(t, "forker", pidFile)
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	waitPidFile(t, pidFile)
	for {
		pids, err := s.PIDs()
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) >= 4 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("forker: %v, want killed by SIGKILL", err)
	}
	if pids, _ := s.PIDs(); len(pids) != 0 {
		t.Fatalf("after Kill PIDs = %v", pids)
	}
}

func TestV1MemoryLimitOOM(t *testing.T) {
	l := realV1(t)
	cfg := cfgWith(t, "ConstrainRAMSpace=yes\n")
	c, err := Compute(cfg, Node{RealMemoryMB: 1000, CPUs: 2}, stepID(103, 0), Allocation{JobMemMB: 100, StepMemMB: 50})
	if err != nil {
		t.Fatal(err)
	}
	s := newStepT(t, Options{Layout: l, Step: stepID(103, 0), Constraints: c})
	if b, err := os.ReadFile(l.Abs(Memory, s.Paths().Step) + "/memory.limit_in_bytes"); err != nil ||
		strings.TrimSpace(string(b)) != "52428800" {
		t.Fatalf("step memory.limit_in_bytes = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(l.Abs(Memory, s.Paths().Job) + "/memory.limit_in_bytes"); strings.TrimSpace(string(b)) != "104857600" {
		t.Fatalf("job memory.limit_in_bytes = %q", b)
	}

	// Within the limit: no OOM.
	small := helperCmd(t, "alloc", "10")
	if err := s.StartTask(small, 0); err != nil {
		t.Fatal(err)
	}
	if err := small.Wait(); err != nil {
		t.Fatalf("10 MB allocation: %v", err)
	}
	if r, err := s.OOM(); err != nil || !r.Monitored || r.OutOfMemory() {
		t.Fatalf("after 10 MB: %+v, %v", r, err)
	}

	big := helperCmd(t, "alloc", "200")
	var out bytes.Buffer
	big.Stdout = &out
	if err := s.StartTask(big, 1); err != nil {
		t.Fatal(err)
	}
	err = big.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("200 MB allocation under 50 MB: %v (%q), want SIGKILL", err, out.String())
	}
	r, err := s.OOM()
	if err != nil {
		t.Fatal(err)
	}
	if !r.OutOfMemory() || r.StepMemFailcnt == 0 {
		t.Fatalf("OOM report %+v, want an oom-kill and a fail count", r)
	}
	t.Logf("OOM report: %+v", r)
}

func TestV1Cpuset(t *testing.T) {
	l := realV1(t)
	cfg := cfgWith(t, "ConstrainCores=yes\n")
	c, err := Compute(cfg, Node{CPUs: 2}, stepID(104, 0), Allocation{JobCores: []int{0, 1}, StepCores: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	s := newStepT(t, Options{Layout: l, Step: stepID(104, 0), Constraints: c})
	cmd := helperCmd(t, "cpus")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "0" {
		t.Fatalf("Cpus_allowed_list = %q, want 0", got)
	}
	if b, _ := os.ReadFile(l.Abs(Cpuset, s.Paths().Job) + "/cpuset.cpus"); strings.TrimSpace(string(b)) != "0-1" {
		t.Fatalf("job cpuset.cpus = %q", b)
	}
	// The caller went back to its own cpuset.
	self, _ := os.ReadFile("/proc/self/cgroup")
	if strings.Contains(string(self), l.Prepend) {
		t.Fatalf("test process still in the step:\n%s", self)
	}
}

func TestV1Devices(t *testing.T) {
	l := realV1(t)
	null := Device{Type: 'c', Major: 1, Minor: 3} // /dev/null as a GRES device not allocated
	cfg := cfgWith(t, "ConstrainDevices=yes\n")
	for _, tt := range []struct {
		name     string
		dev      Device
		wantCode int
	}{{"denied", null, 3}, {"allocated", Device{Type: 'c', Major: 1, Minor: 3, Allowed: true}, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compute(cfg, Node{}, stepID(105, 0), Allocation{JobDevices: []Device{tt.dev}, StepDevices: []Device{tt.dev}})
			if err != nil {
				t.Fatal(err)
			}
			s := newStepT(t, Options{Layout: l, Step: stepID(105, 0), Constraints: c})
			cmd := helperCmd(t, "readnull")
			if err := s.StartTask(cmd, 0); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Fatalf("open /dev/null: exit %d, want %d", code, tt.wantCode)
			}
		})
	}
}

func TestV1SuspendSignalAdopt(t *testing.T) {
	l := realV1(t)
	ctx := testCtx(t)
	s := newStepT(t, Options{Layout: l, Step: stepID(106, 2)})
	cmd := helperCmd(t, "sleep")
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// A restarted slurmd finds the step by its path.
	a, err := Adopt(l, s.Paths().Step)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != s.ID() || a.UID() != 0 {
		t.Fatalf("adopted %+v uid %d", a.ID(), a.UID())
	}
	pids, _ := a.PIDs()
	if !slices.Equal(pids, []int{cmd.Process.Pid}) {
		t.Fatalf("adopted PIDs = %v, want [%d]", pids, cmd.Process.Pid)
	}

	if err := a.Signal(ctx, syscall.SIGSTOP, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(l.Abs(Freezer, s.Paths().Step) + "/freezer.state"); strings.TrimSpace(string(b)) != "FROZEN" {
		t.Fatalf("freezer.state = %q after SIGSTOP", b)
	}
	// A handle adopted while the step is frozen knows it is suspended
	// and refuses to start a process (on v1 the caller would freeze).
	b, err := Adopt(l, s.Paths().Step)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(helperCmd(t, "sleep")); !errors.Is(err, ErrSuspended) {
		t.Fatalf("Start while suspended: %v, want ErrSuspended", err)
	}
	// SIGTERM to a suspended step stays pending until it resumes.
	if err := a.Signal(ctx, syscall.SIGTERM, ChildrenOf(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("process ended while frozen: %v", err)
	default:
	}
	if err := a.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("sleep: %v, want SIGTERM", err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Adopt(l, l.Paths(0, stepID(1, 0)).Step); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Adopt of a missing step: %v", err)
	}
}

func TestV1DeleteAndSupervisor(t *testing.T) {
	l := realV1(t)
	ctx := testCtx(t)
	cfg := cfgWith(t, "ConstrainCores=yes\nConstrainRAMSpace=yes\n")
	c, err := Compute(cfg, Node{RealMemoryMB: 1000, CPUs: 2}, stepID(107, 0), Allocation{JobCores: []int{0}, StepCores: []int{0}, JobMemMB: 100, StepMemMB: 100})
	if err != nil {
		t.Fatal(err)
	}
	s0, err := Create(Options{Layout: l, Step: stepID(107, 0), Constraints: c, UID: 4242, GID: 4343})
	if err != nil {
		t.Fatal(err)
	}
	s1 := newStepT(t, Options{Layout: l, Step: stepID(107, 1), Constraints: c, UID: 4242, GID: 4343})
	fi, err := os.Stat(l.Abs(Memory, s0.Paths().Step))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4343 {
		t.Fatalf("step dir owned by %d:%d, want 4242:4343", st.Uid, st.Gid)
	}
	if !strings.HasSuffix(s0.Paths().Step, "/uid_4242/job_107/step_0") {
		t.Fatalf("step path %s", s0.Paths().Step)
	}

	// A stand-in supervisor: attached like slurmstepd, not one of the
	// step's processes, moved out on Delete.
	sup := helperCmd(t, "sleep")
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Process.Kill(); _ = sup.Wait() })
	if err := s0.AttachSupervisor(sup.Process.Pid); err != nil {
		t.Fatal(err)
	}
	task := helperCmd(t, "sleep")
	if err := s0.Start(task); err != nil {
		t.Fatal(err)
	}
	pids, _ := s0.PIDs()
	if !slices.Equal(pids, []int{task.Process.Pid}) {
		t.Fatalf("PIDs = %v, want only the task %d", pids, task.Process.Pid)
	}
	if err := s0.Delete(); !errors.Is(err, ErrBusy) {
		t.Fatalf("Delete with a live task: %v, want ErrBusy", err)
	}
	if err := s0.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	_ = task.Wait()
	if err := s0.Delete(); err != nil {
		t.Fatal(err)
	}
	for _, ctl := range []string{Freezer, Cpuset, Memory} {
		if _, err := os.Stat(l.Abs(ctl, s0.Paths().Step)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s step dir still there: %v", ctl, err)
		}
		// step_1 still uses the job directory.
		if _, err := os.Stat(l.Abs(ctl, s1.Paths().Job)); err != nil {
			t.Errorf("%s job dir removed under step_1: %v", ctl, err)
		}
	}
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sup.Process.Pid))
	if strings.Contains(string(cg), l.Prepend) {
		t.Fatalf("supervisor not moved out:\n%s", cg)
	}
	// Deleting the last step removes the job and uid levels too (checked
	// by realV1's cleanup, which fails if the prefix is not empty).
}
