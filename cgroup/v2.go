package cgroup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// v2Controllers are the controllers Slurm's cgroup/v2 enables in its
// subtree (freezer and devices are not controllers on v2).
var v2Controllers = []string{"cpuset", "memory", "cpu"}

// v2Step is a step on the unified hierarchy:
// <scope>/job_<j>/step_<s>/{slurm, user/task_<n>, user/task_special}.
type v2Step struct {
	l Layout
	p StepPaths
}

func (v *v2Step) abs(rel string) string { return v.l.Abs("", rel) }

func (v *v2Step) manager(rel string) (*cgroup2.Manager, error) {
	return cgroup2.Load(rel, cgroup2.WithMountpoint(v.l.Mountpoint))
}

// enableSubtree turns on, in dir's cgroup.subtree_control, each of Slurm's
// controllers that dir has, one at a time as Slurm does; like Slurm it
// goes on when one fails. The library's ToggleControllers writes every
// ancestor up to the mount, which belongs to systemd, so this is raw.
func enableSubtree(dir string) {
	b, err := os.ReadFile(dir + "/cgroup.controllers")
	if err != nil {
		return
	}
	have := strings.Fields(string(b))
	for _, c := range v2Controllers {
		for _, h := range have {
			if h == c {
				_ = writeFile(dir+"/cgroup.subtree_control", "+"+c)
			}
		}
	}
}

func mkdirCgroup(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// SetupScope prepares the v2 tree as slurmd does at start-up with
// IgnoreSystemd=yes: it enables Slurm's controllers from the mount down to
// system.slice, creates the stepd scope directory and enables them there.
// (Creating the scope through systemd's D-Bus API, Slurm's default, is
// not implemented.)
func SetupScope(l Layout) error {
	if l.Version != V2 {
		return fmt.Errorf("%w: SetupScope is for cgroup/v2", ErrLayout)
	}
	dir := l.Mountpoint
	enableSubtree(dir)
	parts := strings.Split(l.ScopeDir, "/")
	for _, p := range parts {
		dir = path.Join(dir, p)
		if err := mkdirCgroup(dir); err != nil {
			return fmt.Errorf("cgroup: Could not create scope directory %s: %w", dir, err)
		}
		enableSubtree(dir)
	}
	return nil
}

func (v *v2Step) create(o Options) error {
	if err := SetupScope(v.l); err != nil {
		return err
	}
	c := o.Constraints
	if c.Memory && (c.JobMemory.MemSwap != 0 || c.StepMemory.MemSwap != 0) {
		if _, err := os.Stat(v.abs("/"+v.l.ScopeDir) + "/memory.swap.max"); err != nil {
			return ErrNoSwap
		}
	}
	unlock, err := lockDir(v.abs("/" + v.l.ScopeDir))
	if err != nil {
		return err
	}
	for _, rel := range []string{v.p.Job, v.p.Step} {
		if err := mkdirCgroup(v.abs(rel)); err != nil {
			unlock()
			return err
		}
		enableSubtree(v.abs(rel))
	}
	// Once the step directory exists no other step removes the job's.
	unlock()
	if err := mkdirCgroup(v.abs(v.p.StepUser)); err != nil {
		return err
	}
	enableSubtree(v.abs(v.p.StepUser))
	if err := mkdirCgroup(v.abs(v.p.StepSlurm)); err != nil {
		return err
	}
	// The step level limits go on step/user, so that the supervisor in
	// step/slurm is only under the job's.
	if err := v.apply(v.p.Job, c, c.JobCPUs, c.JobMemory, c.JobDevices); err != nil {
		return err
	}
	return v.apply(v.p.StepUser, c, c.StepCPUs, c.StepMemory, c.StepDevices)
}

func (v *v2Step) apply(rel string, c Constraints, cpus string, mem MemoryLimits, devs []Device) error {
	var r cgroup2.Resources
	if c.Cores {
		r.CPU = &cgroup2.CPU{Cpus: cpus}
	}
	if c.Memory {
		i := func(v uint64) *int64 { n := int64(v); return &n }
		r.Memory = &cgroup2.Memory{Max: i(mem.Limit), High: i(mem.SoftLimit)}
		if mem.MemSwap != 0 {
			// memory.swap.max is swap alone. 22.05 wrote the RAM+swap
			// value here (fixed in later releases, which subtract).
			r.Memory.Swap = i(mem.MemSwap - min(mem.MemSwap, mem.Limit))
		}
	}
	if c.Devices && len(devs) > 0 {
		// Slurm's eBPF program allows what it is not told to deny. The
		// library gives the last rule priority and stops at a wildcard.
		any := int64(-1)
		r.Devices = append([]specs.LinuxDeviceCgroup{{Allow: true, Type: "a", Major: &any, Minor: &any, Access: "rwm"}},
			deviceSpecs(devs)...)
	}
	m, err := v.manager(rel)
	if err != nil {
		return err
	}
	if err := m.Update(&r); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

func (v *v2Step) leaf(task *uint32) string {
	if task == nil {
		return v.p.StepUser + "/" + TaskSpecial
	}
	return v.p.StepUser + "/" + TaskDir(*task)
}

func (v *v2Step) addPID(pid int, task *uint32) error {
	if pid <= 0 {
		return fmt.Errorf("cgroup: bad pid %d", pid)
	}
	leaf := v.leaf(task)
	if err := mkdirCgroup(v.abs(leaf)); err != nil {
		return err
	}
	m, err := v.manager(leaf)
	if err != nil {
		return err
	}
	if err := m.AddProc(uint64(pid)); err != nil {
		return fmt.Errorf("add pid %d to %s: %w", pid, leaf, err)
	}
	return nil
}

// start clones cmd straight into its leaf (clone3 CLONE_INTO_CGROUP,
// Linux 5.7).
func (v *v2Step) start(cmd *exec.Cmd, task *uint32) error {
	leaf := v.abs(v.leaf(task))
	if err := mkdirCgroup(leaf); err != nil {
		return err
	}
	fd, err := unix.Open(leaf, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", leaf, err)
	}
	defer unix.Close(fd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = fd
	return cmd.Start()
}

func (v *v2Step) attachSupervisor(pid int) error {
	return writeFile(v.abs(v.p.StepSlurm)+"/cgroup.procs", strconv.Itoa(pid))
}

func (v *v2Step) pids() ([]int, error) {
	m, err := v.manager(v.p.StepUser)
	if err != nil {
		return nil, err
	}
	procs, err := m.Procs(true)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(procs))
	for _, p := range procs {
		out = append(out, int(p))
	}
	return out, nil
}

// readKV reads a flat keyed cgroup file (cgroup.events, memory.events).
func readKV(file string) (map[string]uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
}

// setFreeze writes cgroup.freeze and waits for cgroup.events to report
// the state. The library's Freeze only rereads cgroup.freeze, which
// holds the request, not the outcome.
func (v *v2Step) setFreeze(ctx context.Context, want uint64) error {
	dir := v.abs(v.p.StepUser)
	if err := writeFile(dir+"/cgroup.freeze", strconv.FormatUint(want, 10)); err != nil {
		return err
	}
	delay := 100 * time.Microsecond
	for {
		ev, err := readKV(dir + "/cgroup.events")
		if err != nil {
			return err
		}
		got, ok := ev["frozen"]
		if !ok || got == want {
			return nil
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return fmt.Errorf("cgroup: %s frozen stays %d: %w", dir, got, err)
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

func (v *v2Step) freeze(ctx context.Context) error { return v.setFreeze(ctx, 1) }
func (v *v2Step) thaw(ctx context.Context) error   { return v.setFreeze(ctx, 0) }

// killAll uses cgroup.kill (Linux 5.14), which kills the whole subtree at
// once, frozen or not; the library falls back to freeze, kill, thaw.
// Like proctrack/cgroup on SIGKILL, the step is then resumed.
func (v *v2Step) killAll(ctx context.Context) error {
	m, err := v.manager(v.p.StepUser)
	if err != nil {
		return err
	}
	return errors.Join(m.Kill(), v.thaw(ctx))
}

// oom reads memory.events (hierarchical on v2) of step/user and the job.
func (v *v2Step) oom() (OOMReport, error) {
	var r OOMReport
	user := v.abs(v.p.StepUser)
	if _, err := os.Stat(user + "/memory.events"); err != nil {
		return r, nil
	}
	r.Monitored = true
	read := func(rel string) (kills, max, swapFail uint64, err error) {
		m, err := v.manager(rel)
		if err != nil {
			return 0, 0, 0, err
		}
		st, err := m.StatFiltered(cgroup2.StatMemoryEvents)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %w", rel, err)
		}
		if st.MemoryEvents != nil {
			kills, max = st.MemoryEvents.OomKill, st.MemoryEvents.Max
		}
		// The library does not read memory.swap.events.
		if ev, err := readKV(v.abs(rel) + "/memory.swap.events"); err == nil {
			swapFail = ev["fail"]
		}
		return kills, max, swapFail, nil
	}
	var err error
	if r.StepOOMKills, r.StepMemFailcnt, r.StepMemswFailcnt, err = read(v.p.StepUser); err != nil {
		return r, err
	}
	r.JobOOMKills, r.JobMemFailcnt, r.JobMemswFailcnt, err = read(v.p.Job)
	return r, err
}

func (v *v2Step) remove(supervisor int) error {
	if supervisor > 0 {
		// Slurm moves slurmstepd to the root of the hierarchy first.
		err := writeFile(v.l.Mountpoint+"/cgroup.procs", strconv.Itoa(supervisor))
		if err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	user := v.abs(v.p.StepUser)
	ents, err := os.ReadDir(user)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := notBusy(user, ents); err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "task_") {
			if err := rmdir(path.Join(user, e.Name()), true); err != nil {
				return err
			}
		}
	}
	unlock, err := lockDir(v.abs("/" + v.l.ScopeDir))
	if err != nil {
		return err
	}
	defer unlock()
	for _, rel := range []string{v.p.StepSlurm, v.p.StepUser, v.p.Step} {
		if err := rmdir(v.abs(rel), true); err != nil {
			return err
		}
	}
	_ = rmdir(v.abs(v.p.Job), false) // other steps may still use it
	return nil
}
