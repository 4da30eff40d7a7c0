package stepd

// Process tracking, the proctrack plugin's role. Without cgroups a step is
// its tasks' process groups (proctrack/pgid): a process that calls setsid
// escapes. With ProctrackType=proctrack/cgroup the step is a cgroup
// (package cgroup, task/cgroup's limits included): every process is
// tracked, killed at the end, and out-of-memory kills are seen.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/cgroup"
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
)

// sigOOM is SIG_OOM, the job_rc Slurm reports for an out-of-memory kill.
const sigOOM = 253

type tracker interface {
	// start starts cmd as local task task, tracked from its first
	// instruction, in its own process group.
	start(cmd *exec.Cmd, task uint32) error
	// signal sends sig to every process of the step.
	signal(sig unix.Signal)
	// killAll SIGKILLs what is left and waits (bounded) until nothing is.
	killAll()
	// oom returns the step's out-of-memory kills (oom_kill events).
	oom() uint64
	// close releases the tracking (removes the cgroups).
	close()
}

// newTracker picks the tracker ProctrackType asks for.
func newTracker(cfg *Config, uid, gid uint32, id cgroup.StepID, cred *jobcred.Credential) (tracker, error) {
	if cfg.ProctrackType != "proctrack/cgroup" {
		return &pgidTracker{}, nil
	}
	return newCgroupTracker(cfg, uid, gid, id, cred)
}

// pgidTracker is proctrack/pgid.
type pgidTracker struct {
	mu    sync.Mutex
	pgids []int
}

func (p *pgidTracker) start(cmd *exec.Cmd, _ uint32) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.pgids = append(p.pgids, cmd.Process.Pid)
	p.mu.Unlock()
	return nil
}

func (p *pgidTracker) signal(sig unix.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.pgids {
		unix.Kill(-g, sig)
	}
}

func (p *pgidTracker) killAll()    { p.signal(unix.SIGKILL) }
func (p *pgidTracker) oom() uint64 { return 0 }
func (p *pgidTracker) close()      {}

// cgroupTracker is proctrack/cgroup plus task/cgroup.
type cgroupTracker struct {
	step *cgroup.Step
}

func newCgroupTracker(cfg *Config, uid, gid uint32, id cgroup.StepID, cred *jobcred.Credential) (*cgroupTracker, error) {
	cgconf, err := conf.LoadCgroup(conf.OSFS{}, cfg.CgroupConf)
	if err != nil {
		return nil, fmt.Errorf("cgroup.conf: %w", err)
	}
	v, err := cgroup.Detect(cgconf.CgroupPlugin, "/sys/fs/cgroup")
	if err != nil {
		return nil, err
	}
	layout, err := cgroup.NewLayout(v, cgconf, cgroup.LayoutOptions{NodeName: cfg.NodeName, MultipleSlurmd: cfg.MultipleSlurmd})
	if err != nil {
		return nil, err
	}
	threads := cfg.ThreadsPerCore
	if threads < 1 {
		threads = 1
	}
	cons, err := cgroup.Compute(cgconf, cgroup.Node{RealMemoryMB: cfg.RealMemoryMB, CPUs: cfg.NodeCPUs,
		CPUMap: cgroup.CPUMap{Threads: threads}}, id, allocationFor(cred, cfg.NodeName))
	if err != nil {
		return nil, err
	}
	st, err := cgroup.Create(cgroup.Options{Layout: layout, UID: uid, GID: gid, Step: id, Constraints: cons})
	if err != nil {
		return nil, fmt.Errorf("step cgroup: %w", err)
	}
	// As slurmstepd: outside the step's freezer, and never the OOM killer's
	// choice (StartTask briefly charges forks to the step on v1).
	if err := st.AttachSupervisor(os.Getpid()); err != nil {
		st.Delete()
		return nil, fmt.Errorf("step cgroup: %w", err)
	}
	os.WriteFile("/proc/self/oom_score_adj", []byte("-1000"), 0)
	return &cgroupTracker{step: st}, nil
}

func (c *cgroupTracker) start(cmd *exec.Cmd, task uint32) error {
	return c.step.StartTask(cmd, task)
}

func (c *cgroupTracker) signal(sig unix.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.step.Signal(ctx, syscall.Signal(sig), nil)
}

func (c *cgroupTracker) killAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.step.Kill(ctx)
}

func (c *cgroupTracker) oom() uint64 {
	r, err := c.step.OOM()
	if err != nil || !r.OutOfMemory() {
		return 0
	}
	return max(r.StepOOMKills, 1)
}

// oomMessage is slurmstepd's report of out-of-memory kills, which users
// see in the job's stderr.
func oomMessage(kills uint64, step string) string {
	return fmt.Sprintf("Detected %d oom-kill event(s) in %s. Some of your processes may have been killed by the cgroup out-of-memory handler.", kills, step)
}

func (c *cgroupTracker) close() { c.step.Delete() }

// allocationFor reads this node's cores and memory out of the credential:
// its slice of the job and step core bitmaps (abstract core ids) and its
// entries of the job and step memory run-lengths.
func allocationFor(cred *jobcred.Credential, node string) cgroup.Allocation {
	var a cgroup.Allocation
	if cred == nil {
		return a
	}
	b := &cred.Body
	if idx := hostIndex(b.JobHostlist.S, node); idx >= 0 {
		first, last := coreSlice(b.SocketGroups, idx)
		for i := first; i < last; i++ {
			if b.JobCoreBitmap != nil && i < b.JobCoreBitmap.Len() && b.JobCoreBitmap.Test(i) {
				a.JobCores = append(a.JobCores, i-first)
			}
			if b.StepCoreBitmap != nil && i < b.StepCoreBitmap.Len() && b.StepCoreBitmap.Test(i) {
				a.StepCores = append(a.StepCores, i-first)
			}
		}
		a.JobMemMB = memFor(b.JobMem, idx)
	}
	if idx := hostIndex(b.StepHostlist.S, node); idx >= 0 {
		a.StepMemMB = memFor(b.StepMem, idx)
	}
	return a
}

func hostIndex(list, node string) int {
	hosts, err := hostlist.Expand(list)
	if err != nil {
		return -1
	}
	for i, h := range hosts {
		if h == node {
			return i
		}
	}
	return -1
}

// coreSlice is node idx's range in a job core bitmap.
func coreSlice(groups []jobcred.SocketGroup, idx int) (int, int) {
	first, hi := 0, idx+1
	for _, g := range groups {
		per := int(g.SocketsPerNode) * int(g.CoresPerSocket)
		if hi > int(g.RepCount) {
			first += per * int(g.RepCount)
			hi -= int(g.RepCount)
			continue
		}
		first += per * (hi - 1)
		return first, first + per
	}
	return 0, 0
}

func memFor(groups []jobcred.MemGroup, idx int) uint64 {
	for _, g := range groups {
		if idx < int(g.Reps) {
			return g.MB
		}
		idx -= int(g.Reps)
	}
	return 0
}
