package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// realV2 mounts the cgroup2 hierarchy on a temporary directory (the
// kernel allows it next to v1 mounts) and returns a layout under a private
// scope there, or skips.
func realV2(t *testing.T) Layout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	mp := t.TempDir()
	if err := unix.Mount("none", mp, "cgroup2", 0, ""); err != nil {
		t.Skipf("cannot mount cgroup2: %v", err)
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	top := fmt.Sprintf("goslurm_test_%d_%s", os.Getpid(), name)
	l := Layout{Version: V2, Mountpoint: mp, ScopeDir: top + "/system.slice/slurmstepd.scope"}
	t.Cleanup(func() {
		for _, d := range []string{l.ScopeDir, top + "/system.slice", top} {
			if err := rmdir(filepath.Join(mp, d), true); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if err := unix.Unmount(mp, 0); err != nil {
			t.Errorf("umount %s: %v", mp, err)
		}
	})
	return l
}

func TestV2RealMembershipKillFreeze(t *testing.T) {
	l := realV2(t)
	ctx := testCtx(t)
	s := newStepT(t, Options{Layout: l, Step: stepID(201, StepBatch)})
	p := s.Paths()
	for _, d := range []string{p.Job, p.Step, p.StepSlurm, p.StepUser} {
		if _, err := os.Stat(l.Abs("", d) + "/cgroup.procs"); err != nil {
			t.Fatalf("%s is not a cgroup: %v", d, err)
		}
	}

	// A daemonizing process, started inside (CLONE_INTO_CGROUP).
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	cmd := helperCmd(t, "daemon", pidFile)
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	daemon := waitPidFile(t, pidFile)
	if b, _ := os.ReadFile(l.Abs("", p.StepUser+"/"+TaskSpecial) + "/cgroup.procs"); !strings.Contains(string(b), fmt.Sprint(daemon)) {
		t.Fatalf("task_special cgroup.procs = %q, want %d", b, daemon)
	}
	// A process added by pid to task 3.
	sleeper := helperCmd(t, "sleep")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTask(sleeper.Process.Pid, 3); err != nil {
		t.Fatal(err)
	}
	pids, err := s.PIDs()
	want := []int{daemon, sleeper.Process.Pid}
	slices.Sort(want)
	if err != nil || !slices.Equal(pids, want) {
		t.Fatalf("PIDs = %v, %v; want %v", pids, err, want)
	}

	// Suspend and resume. (Unlike v1, the v2 freezer lets a fatal signal
	// kill a frozen process at once, so no pending-signal check here.)
	if err := s.Suspend(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, _ := readKV(l.Abs("", p.StepUser) + "/cgroup.events"); ev["frozen"] != 1 {
		t.Fatalf("cgroup.events %v, want frozen 1", ev)
	}
	if err := s.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, _ := readKV(l.Abs("", p.StepUser) + "/cgroup.events"); ev["frozen"] != 0 {
		t.Fatalf("cgroup.events %v, want frozen 0", ev)
	}
	// SIGTERM to the children of the caller only.
	if err := s.Signal(ctx, syscall.SIGTERM, ChildrenOf(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	err = sleeper.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("sleeper: %v, want SIGTERM", err)
	}
	if gone(daemon) {
		t.Fatal("SIGTERM limited to children reached the daemon")
	}

	// Adopt by path, then a forking process and the daemon die together.
	a, err := Adopt(l, p.Step)
	if err != nil {
		t.Fatal(err)
	}
	forkFile := filepath.Join(t.TempDir(), "forker.pid")
	forker := helperCmd(t, "forker", forkFile)
	if err := a.StartTask(forker, 0); err != nil {
		t.Fatal(err)
	}
	waitPidFile(t, forkFile)
	if err := a.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	_ = forker.Wait()
	if pids, _ := a.PIDs(); len(pids) != 0 || !gone(daemon) {
		t.Fatalf("after Kill PIDs = %v, daemon gone %v", pids, gone(daemon))
	}
	if r, err := a.OOM(); err != nil || r.Monitored {
		t.Fatalf("OOM without a memory controller: %+v, %v", r, err)
	}
}

func TestV2RealSupervisorAndDelete(t *testing.T) {
	l := realV2(t)
	s0, err := Create(Options{Layout: l, Step: stepID(202, 0)})
	if err != nil {
		t.Fatal(err)
	}
	s1 := newStepT(t, Options{Layout: l, Step: stepID(202, 1)})
	sup := helperCmd(t, "sleep")
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Process.Kill(); _ = sup.Wait() })
	if err := s0.AttachSupervisor(sup.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if pids, _ := s0.PIDs(); len(pids) != 0 {
		t.Fatalf("supervisor listed among the step's processes: %v", pids)
	}
	if err := s0.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Abs("", s0.Paths().Step)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("step dir still there: %v", err)
	}
	if _, err := os.Stat(l.Abs("", s1.Paths().Job)); err != nil {
		t.Fatalf("job dir removed under step_1: %v", err)
	}
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sup.Process.Pid)); !strings.Contains(string(b), "0::/\n") {
		t.Fatalf("supervisor not moved to the root: %q", b)
	}
}

func TestV2RealDevices(t *testing.T) {
	l := realV2(t)
	cfg := cfgWith(t, "ConstrainDevices=yes\n")
	null := Device{Type: 'c', Major: 1, Minor: 3}
	c, err := Compute(cfg, Node{}, stepID(203, 0), Allocation{JobDevices: []Device{null}, StepDevices: []Device{null}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(Options{Layout: l, Step: stepID(203, 0), Constraints: c})
	if err != nil {
		// The eBPF device program needs bpf(2) rights and memlock.
		if s2, aerr := Adopt(l, l.Paths(0, stepID(203, 0)).Step); aerr == nil {
			_ = s2.Delete()
		}
		t.Skipf("cannot load the eBPF device filter: %v", err)
	}
	t.Cleanup(func() { _ = s.Delete() })
	for _, tt := range []struct {
		task int
		want int
	}{{0, 3}} {
		cmd := helperCmd(t, "readnull")
		// /dev/null for stdio is opened by the parent, outside the step.
		if err := s.StartTask(cmd, uint32(tt.task)); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.want {
			t.Fatalf("open /dev/null in the step: exit %d, want %d (denied)", code, tt.want)
		}
	}
	// Outside the step /dev/null still opens.
	if f, err := os.Open("/dev/null"); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
}

// fakeV2 is a plain directory posing as a cgroup2 mount, for the
// controller files this kernel's v2 hierarchy lacks (its controllers are
// all bound to v1).
func fakeV2(t *testing.T) Layout {
	mp := t.TempDir()
	l, err := NewLayout(V2, nil, LayoutOptions{NodeName: "n7", MultipleSlurmd: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Mountpoint = mp
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(mp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n")
	write("cgroup.subtree_control", "")
	write("system.slice/cgroup.controllers", "cpuset cpu io memory pids\n")
	write("system.slice/n7_slurmstepd.scope/cgroup.controllers", "cpuset cpu memory\n")
	write("system.slice/n7_slurmstepd.scope/memory.swap.max", "max\n")
	return l
}

func TestV2FakeControllerFiles(t *testing.T) {
	l := fakeV2(t)
	ctx := testCtx(t)
	cfg := cfgWith(t, "ConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=10\nMemorySwappiness=10\n")
	c, err := Compute(cfg, Node{RealMemoryMB: 1000, CPUs: 2}, stepID(301, 4), Allocation{
		JobCores: []int{0, 1}, StepCores: []int{1}, JobMemMB: 500, StepMemMB: 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(Options{Layout: l, Step: stepID(301, 4), Constraints: c, UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Paths()
	if p.Step != "/system.slice/n7_slurmstepd.scope/job_301/step_4" {
		t.Fatalf("step path %s", p.Step)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(l.Mountpoint, rel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for _, tt := range []struct{ file, want string }{
		// subtree control: only Slurm's controllers that the level has.
		{"cgroup.subtree_control", "+cpu"}, // last write wins in a plain file
		{"system.slice/n7_slurmstepd.scope/cgroup.subtree_control", "+cpu"},
		{p.Job + "/cpuset.cpus", "0-1"},
		{p.Job + "/memory.max", "524288000"},
		{p.Job + "/memory.high", "524288000"},
		// v2 swap.max is swap alone: memsw (550 MB) minus RAM (500 MB).
		{p.Job + "/memory.swap.max", "52428800"},
		{p.StepUser + "/cpuset.cpus", "1"},
		{p.StepUser + "/memory.max", "209715200"},
		{p.StepUser + "/memory.swap.max", "20971520"},
	} {
		if got := read(tt.file); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.file, got, tt.want)
		}
	}
	// memory.swappiness does not exist on v2; the step supervisor's own
	// leaf gets no limits.
	for _, f := range []string{p.Job + "/memory.swappiness", p.StepSlurm + "/memory.max"} {
		if _, err := os.Stat(filepath.Join(l.Mountpoint, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written: %v", f, err)
		}
	}

	if err := s.AddPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTask(4343, 2); err != nil {
		t.Fatal(err)
	}
	if got := read(p.StepUser + "/task_2/cgroup.procs"); got != "4343" {
		t.Errorf("task_2 cgroup.procs = %q", got)
	}
	if pids, err := s.PIDs(); err != nil || !slices.Equal(pids, []int{4242, 4343}) {
		t.Fatalf("PIDs = %v, %v", pids, err)
	}

	// Freeze waits for cgroup.events to say frozen.
	if err := os.WriteFile(filepath.Join(l.Mountpoint, p.StepUser, "cgroup.events"), []byte("populated 1\nfrozen 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Suspend(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(p.StepUser + "/cgroup.freeze"); got != "1" {
		t.Errorf("cgroup.freeze = %q", got)
	}

	// OOM counters: memory.events is hierarchical on v2.
	for rel, content := range map[string]string{
		p.StepUser + "/memory.events":      "low 0\nhigh 3\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n",
		p.Job + "/memory.events":           "low 0\nhigh 3\nmax 9\noom 2\noom_kill 2\noom_group_kill 0\n",
		p.StepUser + "/memory.swap.events": "high 0\nmax 0\nfail 4\n",
	} {
		if err := os.WriteFile(filepath.Join(l.Mountpoint, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.OOM()
	if err != nil {
		t.Fatal(err)
	}
	want := OOMReport{Monitored: true, StepOOMKills: 1, JobOOMKills: 2, StepMemFailcnt: 7, StepMemswFailcnt: 4, JobMemFailcnt: 9}
	if r != want || !r.OutOfMemory() {
		t.Fatalf("OOM = %+v, want %+v", r, want)
	}
}

func TestV2FakeSwapUnsupported(t *testing.T) {
	l := fakeV2(t)
	if err := os.Remove(filepath.Join(l.Mountpoint, l.ScopeDir, "memory.swap.max")); err != nil {
		t.Fatal(err)
	}
	cfg := cfgWith(t, "ConstrainSwapSpace=yes\n")
	c, err := Compute(cfg, Node{RealMemoryMB: 1000}, stepID(302, 0), Allocation{JobMemMB: 100, StepMemMB: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(Options{Layout: l, Step: stepID(302, 0), Constraints: c}); err == nil ||
		!strings.Contains(err.Error(), "no support for swap") {
		t.Fatalf("Create = %v, want the swap support error", err)
	}
}

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		plugin string
		want   Version
	}{{"cgroup/v1", V1}, {"cgroup/v2", V2}} {
		if v, err := Detect(tt.plugin, "/nonexistent"); err != nil || v != tt.want {
			t.Errorf("Detect(%q) = %v, %v", tt.plugin, v, err)
		}
	}
	if _, err := Detect("cgroup/v3", ""); err == nil {
		t.Error("cgroup/v3: want error")
	}
	if _, err := Detect("autodetect", t.TempDir()); err == nil {
		t.Error("autodetect on a plain directory: want error")
	}
}
