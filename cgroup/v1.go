package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// v1Step is a step on the legacy hierarchy: the same relative path under
// each controller mount.
type v1Step struct {
	l        Layout
	p        StepPaths
	uid, gid uint32
	ctls     []string // freezer first
}

// selfMoveMu serializes v1 starts: the calling process moves itself into
// the step's cgroups around the fork.
var selfMoveMu sync.Mutex

// taskLevel reports whether Slurm puts tasks in step_x/task_<n> for ctl
// (memory and devices via task/cgroup, cpuacct via jobacct_gather/cgroup);
// freezer and cpuset work at the step level.
func taskLevel(ctl string) bool {
	return ctl == Memory || ctl == Devices || ctl == Cpuacct
}

func (v *v1Step) hierarchy(ctl string) cgroup1.InitOpts {
	root := v.l.Mountpoint
	return cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) {
		switch ctl {
		case Freezer:
			return []cgroup1.Subsystem{cgroup1.NewFreezer(root)}, nil
		case Cpuset:
			return []cgroup1.Subsystem{cgroup1.NewCpuset(root)}, nil
		case Memory:
			return []cgroup1.Subsystem{cgroup1.NewMemory(root, cgroup1.OptionalSwap())}, nil
		case Devices:
			return []cgroup1.Subsystem{cgroup1.NewDevices(root)}, nil
		case Cpuacct:
			return []cgroup1.Subsystem{cgroup1.NewCpuacct(root)}, nil
		}
		return nil, fmt.Errorf("cgroup: unsupported v1 controller %q", ctl)
	})
}

// open creates (or opens) rel in controller ctl with res applied.
func (v *v1Step) open(ctl, rel string, res *specs.LinuxResources) (cgroup1.Cgroup, error) {
	if res == nil {
		res = &specs.LinuxResources{}
	}
	cg, err := cgroup1.New(cgroup1.StaticPath(rel), res, v.hierarchy(ctl))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ctl, rel, err)
	}
	if len(cg.Subsystems()) == 0 {
		return nil, fmt.Errorf("%s: controller not mounted under %s", ctl, v.l.Mountpoint)
	}
	return cg, nil
}

// load opens an existing rel in controller ctl.
func (v *v1Step) load(ctl, rel string) (cgroup1.Cgroup, error) {
	cg, err := cgroup1.Load(cgroup1.StaticPath(rel), v.hierarchy(ctl))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ctl, rel, err)
	}
	return cg, nil
}

func (v *v1Step) create(o Options) error {
	c := o.Constraints
	v.ctls = []string{Freezer}
	if c.Cores {
		v.ctls = append(v.ctls, Cpuset)
	}
	if c.Memory {
		v.ctls = append(v.ctls, Memory)
		if c.JobMemory.MemSwap != 0 || c.StepMemory.MemSwap != 0 {
			if _, err := os.Stat(v.l.Abs(Memory, "memory.memsw.limit_in_bytes")); err != nil {
				return ErrNoSwap
			}
		}
	}
	if c.Devices {
		v.ctls = append(v.ctls, Devices)
	}
	if o.Accounting {
		v.ctls = append(v.ctls, Cpuacct)
	}
	for _, ctl := range v.ctls {
		if err := v.createCtl(ctl, c); err != nil {
			return err
		}
	}
	return nil
}

func (v *v1Step) createCtl(ctl string, c Constraints) error {
	unlock, err := lockDir(v.l.ControllerDir(ctl))
	if err != nil {
		return err
	}
	defer unlock()
	var job, step *specs.LinuxResources
	switch ctl {
	case Cpuset:
		// Empty mems (and the uid level's cpus) are copied from the parent
		// by the library, as Slurm's xcgroup_cpuset_init does.
		job = &specs.LinuxResources{CPU: &specs.LinuxCPU{Cpus: c.JobCPUs}}
		step = &specs.LinuxResources{CPU: &specs.LinuxCPU{Cpus: c.StepCPUs}}
	case Memory:
		job = &specs.LinuxResources{Memory: memorySpec(c.JobMemory)}
		step = &specs.LinuxResources{Memory: memorySpec(c.StepMemory)}
	case Devices:
		job = &specs.LinuxResources{Devices: deviceSpecs(c.JobDevices)}
		step = &specs.LinuxResources{Devices: deviceSpecs(c.StepDevices)}
	}
	for _, lv := range []struct {
		rel string
		res *specs.LinuxResources
	}{{v.l.Prepend, nil}, {v.p.User, nil}, {v.p.Job, job}, {v.p.Step, step}} {
		if _, err := v.open(ctl, lv.rel, lv.res); err != nil {
			return err
		}
	}
	if ctl == Memory {
		// The library's LinuxMemory.Kernel is deprecated; write it raw.
		for _, lv := range []struct {
			rel  string
			kmem uint64
		}{{v.p.Job, c.JobMemory.Kmem}, {v.p.Step, c.StepMemory.Kmem}} {
			if lv.kmem != 0 {
				if err := writeFile(v.l.Abs(Memory, lv.rel)+"/memory.kmem.limit_in_bytes", strconv.FormatUint(lv.kmem, 10)); err != nil {
					return err
				}
			}
		}
	}
	// Slurm hands the step directory to the job's user.
	if err := os.Chown(v.l.Abs(ctl, v.p.Step), int(v.uid), int(v.gid)); err != nil {
		return fmt.Errorf("chown %s: %w", v.l.Abs(ctl, v.p.Step), err)
	}
	return nil
}

func memorySpec(m MemoryLimits) *specs.LinuxMemory {
	i := func(v uint64) *int64 { n := int64(v); return &n }
	s := &specs.LinuxMemory{Limit: i(m.Limit), Reservation: i(m.SoftLimit), Swappiness: m.Swappiness}
	if m.MemSwap != 0 {
		s.Swap = i(m.MemSwap)
	}
	return s
}

func deviceSpecs(ds []Device) []specs.LinuxDeviceCgroup {
	var out []specs.LinuxDeviceCgroup
	for _, d := range ds {
		major, minor := d.Major, d.Minor
		out = append(out, specs.LinuxDeviceCgroup{
			Allow: d.Allowed, Type: string(d.Type), Major: &major, Minor: &minor, Access: "rwm",
		})
	}
	return out
}

// adopt finds which controllers hold the step.
func (v *v1Step) adopt() error {
	for _, ctl := range []string{Freezer, Cpuset, Memory, Devices, Cpuacct} {
		if _, err := os.Stat(v.l.Abs(ctl, v.p.Step)); err == nil {
			v.ctls = append(v.ctls, ctl)
		} else if ctl == Freezer {
			return fmt.Errorf("%w: %s: %v", ErrNotFound, v.l.Abs(ctl, v.p.Step), err)
		}
	}
	return nil
}

// dirFor is where a process of the step (task n when task is set) goes
// in ctl, creating a task directory if needed.
func (v *v1Step) dirFor(ctl string, task *uint32) (cgroup1.Cgroup, error) {
	if task == nil || !taskLevel(ctl) {
		return v.load(ctl, v.p.Step)
	}
	rel := path.Join(v.p.Step, TaskDir(*task))
	cg, err := v.open(ctl, rel, nil)
	if err != nil {
		return nil, err
	}
	if err := os.Chown(v.l.Abs(ctl, rel), int(v.uid), int(v.gid)); err != nil {
		return nil, fmt.Errorf("chown %s: %w", v.l.Abs(ctl, rel), err)
	}
	return cg, nil
}

func (v *v1Step) addPID(pid int, task *uint32) error {
	if pid <= 0 {
		return fmt.Errorf("cgroup: bad pid %d", pid)
	}
	for _, ctl := range v.ctls {
		cg, err := v.dirFor(ctl, task)
		if err != nil {
			return err
		}
		if err := cg.AddProc(uint64(pid)); err != nil {
			return fmt.Errorf("add pid %d to %s %s: %w", pid, ctl, v.p.Step, err)
		}
	}
	return nil
}

// start moves the caller into the step, forks cmd there, and moves the
// caller back to where it was.
func (v *v1Step) start(cmd *exec.Cmd, task *uint32) error {
	selfMoveMu.Lock()
	defer selfMoveMu.Unlock()
	orig, err := cgroup1.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		return err
	}
	// os/exec opens /dev/null for unset stdio inside Start, which the
	// step's device rules may deny: open it before entering.
	if cmd.Stdin == nil || cmd.Stdout == nil || cmd.Stderr == nil {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		if cmd.Stdin == nil {
			cmd.Stdin = null
		}
		if cmd.Stdout == nil {
			cmd.Stdout = null
		}
		if cmd.Stderr == nil {
			cmd.Stderr = null
		}
	}
	self := os.Getpid()
	var moved []string
	back := func() error {
		var errs []error
		for _, ctl := range moved {
			rel := orig[ctl]
			if rel == "" {
				rel = "/"
			}
			if err := writeFile(v.l.Abs(ctl, rel)+"/cgroup.procs", strconv.Itoa(self)); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, ctl := range v.ctls {
		cg, err := v.dirFor(ctl, task)
		if err == nil {
			err = cg.AddProc(uint64(self))
		}
		if err != nil {
			return errors.Join(fmt.Errorf("cgroup: enter %s: %w", ctl, err), back())
		}
		moved = append(moved, ctl)
	}
	err = cmd.Start()
	if berr := back(); berr != nil {
		return errors.Join(err, fmt.Errorf("cgroup: caller could not leave the step: %w", berr))
	}
	return err
}

func (v *v1Step) attachSupervisor(pid int) error {
	for _, ctl := range v.ctls {
		rel := v.p.Step
		if ctl == Freezer {
			rel = v.p.Job
		}
		if err := writeFile(v.l.Abs(ctl, rel)+"/cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

func (v *v1Step) pids() ([]int, error) {
	cg, err := v.load(Freezer, v.p.Step)
	if err != nil {
		return nil, err
	}
	procs, err := cg.Processes(cgroup1.Freezer, true)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(procs))
	for _, p := range procs {
		out = append(out, p.Pid)
	}
	return out, nil
}

// setFreezer writes freezer.state and waits for it to settle. The
// library's Freeze/Thaw spin without any limit; this one stops with ctx.
func (v *v1Step) setFreezer(ctx context.Context, state string) error {
	file := v.l.Abs(Freezer, v.p.Step) + "/freezer.state"
	delay := 100 * time.Microsecond
	for {
		if err := writeFile(file, state); err != nil {
			return err
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) == state {
			return nil
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return fmt.Errorf("cgroup: %s stays %s: %w", file, strings.TrimSpace(string(b)), err)
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

func (v *v1Step) freeze(ctx context.Context) error { return v.setFreezer(ctx, "FROZEN") }
func (v *v1Step) thaw(ctx context.Context) error   { return v.setFreezer(ctx, "THAWED") }

// killAll: a frozen task cannot fork, and the SIGKILL it gets while
// frozen takes effect at the thaw.
func (v *v1Step) killAll(ctx context.Context) error {
	if err := v.freeze(ctx); err != nil {
		return err
	}
	pids, err := v.pids()
	for _, pid := range pids {
		if kerr := unix.Kill(pid, unix.SIGKILL); kerr != nil && !errors.Is(kerr, unix.ESRCH) {
			err = errors.Join(err, fmt.Errorf("kill %d: %w", pid, kerr))
		}
	}
	return errors.Join(err, v.thaw(ctx))
}

func (v *v1Step) has(ctl string) bool {
	for _, c := range v.ctls {
		if c == ctl {
			return true
		}
	}
	return false
}

// memStat reads oom_kill and the fail counters of one memory cgroup.
func (v *v1Step) memStat(rel string) (oomKill, failcnt, memswFailcnt uint64, err error) {
	cg, err := v.load(Memory, rel)
	if err != nil {
		return 0, 0, 0, err
	}
	m, err := cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("memory %s: %w", rel, err)
	}
	if m.MemoryOomControl != nil {
		oomKill = m.MemoryOomControl.OomKill
	}
	if m.Memory != nil {
		if m.Memory.Usage != nil {
			failcnt = m.Memory.Usage.Failcnt
		}
		if m.Memory.Swap != nil {
			memswFailcnt = m.Memory.Swap.Failcnt
		}
	}
	return oomKill, failcnt, memswFailcnt, nil
}

// oom sums oom_kill over the step and its task directories: on v1 the
// counter is kept where the limit was hit, not propagated upwards.
func (v *v1Step) oom() (OOMReport, error) {
	var r OOMReport
	if !v.has(Memory) {
		return r, nil
	}
	r.Monitored = true
	var err error
	var kills uint64
	if kills, r.StepMemFailcnt, r.StepMemswFailcnt, err = v.memStat(v.p.Step); err != nil {
		return r, err
	}
	r.StepOOMKills = kills
	ents, err := os.ReadDir(v.l.Abs(Memory, v.p.Step))
	if err != nil {
		return r, err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "task_") {
			k, _, _, err := v.memStat(path.Join(v.p.Step, e.Name()))
			if err != nil {
				return r, err
			}
			r.StepOOMKills += k
		}
	}
	if r.JobOOMKills, r.JobMemFailcnt, r.JobMemswFailcnt, err = v.memStat(v.p.Job); err != nil {
		return r, err
	}
	return r, nil
}

func (v *v1Step) remove(supervisor int) error {
	var errs []error
	for _, ctl := range v.ctls {
		if supervisor > 0 {
			// Slurm moves slurmstepd to the root cgroup before rmdir.
			err := writeFile(v.l.ControllerDir(ctl)+"/cgroup.procs", strconv.Itoa(supervisor))
			if err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, err)
			}
		}
		errs = append(errs, v.removeCtl(ctl))
	}
	return errors.Join(errs...)
}

func (v *v1Step) removeCtl(ctl string) error {
	unlock, err := lockDir(v.l.ControllerDir(ctl))
	if err != nil {
		return err
	}
	defer unlock()
	step := v.l.Abs(ctl, v.p.Step)
	ents, err := os.ReadDir(step)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := notBusy(step, ents); err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "task_") {
			if err := rmdir(path.Join(step, e.Name()), true); err != nil {
				return err
			}
		}
	}
	if err := rmdir(step, true); err != nil {
		return err
	}
	// Best effort: other steps of the job, or jobs of the user, may
	// still use these.
	if rmdir(v.l.Abs(ctl, v.p.Job), false) == nil {
		_ = rmdir(v.l.Abs(ctl, v.p.User), false)
	}
	return nil
}
