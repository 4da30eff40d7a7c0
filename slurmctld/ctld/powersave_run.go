package ctld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// maxShutdownDelay is MAX_SHUTDOWN_DELAY: how long, at most, shutdown
// waits for the power programs still running before leaving them.
const maxShutdownDelay = 10

// powerProcs tracks the power programs running (proc_track_list).
type powerProcs struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	running int
}

// runPowerSave is power_save.c's thread: every second the programs that
// ended are reaped, and a pass runs when the nodes changed since the last
// (at most every power_save_min_interval) or power_save_interval passed.
// A reconfigure reads the configuration again (config_power_mgr). At the
// end it waits for the programs as 22.05 does before leaving them.
func (c *Controller) runPowerSave(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	c.mu.Lock()
	seen := c.cfg
	c.powerReconfig()
	c.mu.Unlock()
	var lastScan int64
	for {
		select {
		case <-ctx.Done():
			c.powerShutdown()
			return
		case <-tick.C:
		}
		c.mu.Lock()
		if c.cfg != seen {
			seen = c.cfg
			c.powerReconfig()
		}
		ps := c.ps
		if ps == nil || !ps.cfg.enabled {
			c.mu.Unlock()
			continue
		}
		now := c.now().Unix()
		if now < lastScan+ps.cfg.minInterval || (c.lastNodeUpdate < lastScan && now < lastScan+ps.cfg.interval) {
			c.mu.Unlock()
			continue
		}
		lastScan = now
		w := ps.pass(c.nodes, c.nodeIndex, c.parts, c.powerJobs(), c.suspendedJobsPerNode(), now)
		for _, n := range w.timedOut {
			c.setNodeDown(n, "ResumeTimeout reached", now)
		}
		if w.suspend != "" || w.resume != "" || len(w.timedOut) > 0 {
			c.lastNodeUpdate = now
		}
		cfg := c.cfg
		debug := c.debugFlags()&powerDebugFlag() != 0
		c.mu.Unlock()
		c.powerLogs(w.logs, debug)
		if len(w.timedOut) > 0 {
			c.kickScheduler() // their jobs are requeued (tickJobs)
		}
		if w.suspend != "" {
			c.runPowerProg(cfg, ps.cfg.suspendProg, w.suspend, "", debug, "suspending nodes")
		}
		if w.resume != "" {
			c.runPowerProg(cfg, ps.cfg.resumeProg, w.resume, w.resumeJSON, debug, "waking nodes")
		}
		if w.failed != "" {
			c.runPowerProg(cfg, ps.cfg.resumeFailProg, w.failed, "", debug, "handle failed nodes")
		}
	}
}

func powerDebugFlag() uint64 { return conf.DebugFlagMask([]string{"Power"}) }

// powerReconfig is config_power_mgr after the configuration changed:
// power saving on or off, the nodes' times set again. Under the lock.
func (c *Controller) powerReconfig() {
	pc, logs := powerConfig(c.cfg.Conf, c.parts, c.validPowerProg)
	was := c.ps != nil && c.ps.cfg.enabled
	c.ps = &powerState{cfg: pc}
	setPowerTimeouts(c.cfg.Conf, c.nodes, c.parts)
	c.powerLogs(logs, c.debugFlags()&powerDebugFlag() != 0)
	if was && !pc.enabled {
		c.log.Info("power_save mode has been disabled due to configuration changes")
	}
}

// powerOn reports whether power saving is on (power_save_test). Under
// the lock.
func (c *Controller) powerOn() bool { return c.ps != nil && c.ps.cfg.enabled }

// powerJobs is resume_job_list: the jobs CONFIGURING for nodes to power
// up, in the order they started. Under the lock.
func (c *Controller) powerJobs() []psJob {
	if c.jobs == nil {
		return nil
	}
	type started struct {
		j     psJob
		start int64
	}
	var list []started
	for _, j := range c.jobs.m.Jobs() {
		if j.State&msg.JobConfiguring == 0 || j.State&msg.JobPowerUpNode == 0 || !j.Running() {
			continue
		}
		list = append(list, started{psJob{id: j.ID, nodes: append([]int(nil), j.NodeIdx...)}, j.StartTime})
	}
	sort.SliceStable(list, func(a, b int) bool {
		if list[a].start != list[b].start {
			return list[a].start < list[b].start
		}
		return list[a].j.id < list[b].j.id
	})
	out := make([]psJob, len(list))
	for i := range list {
		out[i] = list[i].j
	}
	return out
}

func (c *Controller) powerLogs(logs []psLog, debug bool) {
	for _, l := range logs {
		switch {
		case l.flag && !debug:
		case l.flag:
			c.log.Info(l.text)
		case l.debug:
			c.log.Debug(l.text)
		case l.info:
			c.log.Info(l.text)
		default:
			c.log.Error(l.text)
		}
	}
}

// validPowerProg is _valid_prog: an absolute path to an executable file
// that group and others cannot write.
func (c *Controller) validPowerProg(path string) bool {
	if !filepath.IsAbs(path) {
		c.log.Error(fmt.Sprintf("power_save program %s not absolute pathname", path))
		return false
	}
	if syscall.Access(path, 1) != nil { // X_OK
		c.log.Error(fmt.Sprintf("power_save program %s not executable", path))
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		c.log.Error(fmt.Sprintf("power_save program %s not found", path))
		return false
	}
	if fi.Mode().Perm()&0o022 != 0 {
		c.log.Error(fmt.Sprintf("power_save program %s has group or world write permission", path))
		return false
	}
	return true
}

// runPowerProg is _run_prog: prog runs with the hostlist as its only
// argument (argv[0] its base name), in a process group of its own, with
// no open files and an environment of SLURM_CONF only (and
// SLURM_RESUME_FILE, a file holding json, for ResumeProgram). As in
// 22.05 it is not killed however long it runs; its end is logged when it
// failed, and a success has the nodes pinged at once.
func (c *Controller) runPowerProg(cfg *Config, prog, hosts, json string, debug bool, what string) {
	if prog == "" {
		return
	}
	env := []string{"SLURM_CONF=" + cfg.Path}
	var tmp string
	if json != "" {
		f, err := os.CreateTemp("", "resumeprog.")
		if err == nil {
			_, err = f.WriteString(json)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			c.log.Error("failed to create tmp file for ResumeProgram")
		} else {
			tmp = f.Name()
			env = append(env, "SLURM_RESUME_FILE="+tmp)
		}
	}
	cmd := &exec.Cmd{Path: prog, Args: []string{filepath.Base(prog), hosts}, Env: env, Dir: "/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.log.Error(fmt.Sprintf("fork: %v", err))
		if tmp != "" {
			os.Remove(tmp)
		}
		return
	}
	if debug {
		c.log.Info(fmt.Sprintf("POWER: power_save: pid %d %s %s", cmd.Process.Pid, what, hosts))
	}
	c.psProcs.mu.Lock()
	c.psProcs.running++
	c.psProcs.mu.Unlock()
	c.psProcs.wg.Add(1)
	start := time.Now()
	go func() {
		defer c.psProcs.wg.Done()
		_ = cmd.Wait()
		if tmp != "" {
			os.Remove(tmp)
		}
		c.psProcs.mu.Lock()
		c.psProcs.running--
		c.psProcs.mu.Unlock()
		if d := int64(time.Since(start) / time.Second); debug && d > c.powerMaxTimeout() {
			c.log.Info(fmt.Sprintf("POWER: program %d ran for %d sec", cmd.Process.Pid, d))
		}
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case !ok:
		case ws.Exited() && ws.ExitStatus() != 0:
			c.log.Error(fmt.Sprintf("power_save: program exit status of %d", ws.ExitStatus()))
		case ws.Signaled():
			c.log.Error(fmt.Sprintf("power_save: program signaled: %s", signalText(ws.Signal())))
		default:
			c.mu.Lock()
			c.pingNow = true
			c.mu.Unlock()
			c.kickPing()
		}
	}()
}

func (c *Controller) powerMaxTimeout() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ps == nil {
		return 0
	}
	return c.ps.cfg.maxTimeout
}

// signalText is strsignal's text for the usual signals.
func signalText(s syscall.Signal) string {
	t := s.String()
	if t == "" {
		return t
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// powerShutdown is _shutdown_power: wait for the programs still running,
// at most the longest timeout (10 s at most), then leave them.
func (c *Controller) powerShutdown() {
	c.psProcs.mu.Lock()
	running := c.psProcs.running
	c.psProcs.mu.Unlock()
	if running == 0 {
		return
	}
	limit := min(c.powerMaxTimeout(), maxShutdownDelay)
	done := make(chan struct{})
	go func() {
		c.psProcs.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Duration(limit) * time.Second):
		c.psProcs.mu.Lock()
		n := c.psProcs.running
		c.psProcs.mu.Unlock()
		c.log.Error(fmt.Sprintf("power_save: orphaning %d processes which are not terminating so slurmctld can exit", n))
	}
}
