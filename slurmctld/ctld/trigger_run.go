package ctld

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bits-and-blooms/bitset"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/trigger"
)

// TriggerStateName is the file in StateSaveLocation that keeps the
// event triggers across restarts (Slurm's trigger_state; ours is JSON).
const TriggerStateName = "trigger_state.json"

// trigState is the controller's side of the trigger table: where it is
// saved and what was saved last.
type trigState struct {
	saveMu sync.Mutex
	file   string
	saved  uint64
	logOn  atomic.Bool // DebugFlags=Triggers, read before each pass
}

// TriggerOptions configure AttachTriggers.
type TriggerOptions struct {
	// StateFile keeps the triggers (normally
	// StateSaveLocation/TriggerStateName); "" means they are not saved.
	StateFile string
	// Recover reads StateFile (22.05 restores triggers unless started
	// with -c).
	Recover bool
	// IgnoreState starts without the triggers when the file cannot be
	// read (slurmctld -i); otherwise that is an error.
	IgnoreState bool
}

// AttachTriggers recovers the saved triggers and has every change saved
// from then on. Call it after AttachJobs (job triggers need their jobs)
// and before serving.
func (c *Controller) AttachTriggers(o TriggerOptions) error {
	c.trigS.saveMu.Lock()
	c.trigS.file = o.StateFile
	c.trigS.saveMu.Unlock()
	if !o.Recover || o.StateFile == "" {
		// Without recovery the old table is replaced at the first save,
		// as 22.05's state save at shutdown replaces it.
		c.trigS.saveMu.Lock()
		c.trigS.saved = ^uint64(0)
		c.trigS.saveMu.Unlock()
		return nil
	}
	data, err := os.ReadFile(o.StateFile)
	if errors.Is(err, os.ErrNotExist) {
		c.log.Info(fmt.Sprintf("No trigger state file (%s) to recover", o.StateFile))
		return nil
	}
	var s trigger.State
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	n := 0
	if err == nil {
		c.mu.RLock()
		n, err = c.trig.Restore(&s, c.trigCluster())
		c.mu.RUnlock()
	}
	if err != nil {
		if !o.IgnoreState {
			return fmt.Errorf("incomplete trigger data checkpoint file %s: %w (start with -i to ignore this)", o.StateFile, err)
		}
		c.log.Error(fmt.Sprintf("Incomplete trigger data checkpoint file: %v", err))
	}
	c.log.Log(context.Background(), levelVerbose, fmt.Sprintf("State of %d triggers recovered", n))
	// What was recovered is on disk already.
	_, seq := c.trig.Snapshot()
	c.trigS.saveMu.Lock()
	c.trigS.saved = seq
	c.trigS.saveMu.Unlock()
	return nil
}

// saveTriggers writes the table when it changed since the last write
// (new file, fsync, rename, fsync of the directory).
func (c *Controller) saveTriggers(context.Context) {
	c.trigS.saveMu.Lock()
	defer c.trigS.saveMu.Unlock()
	if c.trigS.file == "" {
		return
	}
	s, seq := c.trig.Snapshot()
	if seq == c.trigS.saved {
		return
	}
	data, err := json.Marshal(s)
	if err == nil {
		err = writeStateFile(c.trigS.file, data)
	}
	if err != nil {
		c.log.Error(fmt.Sprintf("Can't save trigger state: %v", err))
		return
	}
	c.trigS.saved = seq
}

// triggerSetRequest builds trigger_set's input. Called under the read lock.
func (c *Controller) triggerSetRequest(cfg *Config, uid, gid uint32, ts []msg.Trigger) trigger.SetRequest {
	return trigger.SetRequest{
		UID: uid, GID: gid, SlurmUID: cfg.SlurmUID, MaxJobCount: cfg.Conf.MaxJobCount, Triggers: ts,
		Runnable: func(program string, uid, gid uint32) bool { return c.triggerRunnable(program, uid, gid) },
	}
}

// triggerRunnable is _validate_trigger: the program's first word names a
// regular file that uid (as owner, group gid or other) may execute.
func (c *Controller) triggerRunnable(program string, uid, gid uint32) bool {
	path := program
	if i := strings.IndexAny(path, " \t\n\v\f\r"); i >= 0 {
		path = path[:i]
	}
	fi, err := os.Stat(path)
	if err != nil {
		c.log.Info(fmt.Sprintf("trigger program %s not found", program))
		return false
	}
	if !fi.Mode().IsRegular() {
		c.log.Info(fmt.Sprintf("trigger program %s not a regular file", program))
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && trigger.Executable(uint32(fi.Mode().Perm()), st.Uid, st.Gid, uid, gid) {
		return true
	}
	c.log.Info(fmt.Sprintf("trigger program %s not executable", program))
	return false
}

// trigView is the trigger table's view of the controller. Used under the
// controller's lock.
type trigView struct{ c *Controller }

func (c *Controller) trigCluster() trigger.Cluster { return trigView{c} }

func (v trigView) NodeBitmap(list string) (*bitset.BitSet, bool) {
	names, err := hostlist.Expand(list)
	if err != nil {
		return nil, false
	}
	b := bitset.New(uint(len(v.c.nodes)))
	for _, name := range names {
		n := v.c.nodeIndex[name]
		if n == nil {
			return nil, false
		}
		b.Set(uint(n.Index))
	}
	return b, true
}

func (v trigView) NodeNames(b *bitset.BitSet) string {
	var names []string
	for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
		if int(i) < len(v.c.nodes) {
			names = append(names, v.c.nodes[i].Name)
		}
	}
	return hostlist.Compress(names)
}

func (v trigView) Job(id uint32) (trigger.Job, bool) {
	if v.c.jobs == nil {
		return trigger.Job{}, false
	}
	j := v.c.jobs.m.Job(id)
	if j == nil {
		return trigger.Job{}, false
	}
	tj := trigger.Job{Pending: j.Pending(), Finished: j.Finished(), EndTime: j.EndTime}
	tj.Completed = tj.Finished && !j.IsCompleting()
	if len(j.NodeIdx) > 0 {
		tj.Nodes = bitset.New(uint(len(v.c.nodes)))
		for _, i := range j.NodeIdx {
			tj.Nodes.Set(uint(i))
		}
	}
	return tj, true
}

func (v trigView) IdleNodes(minIdle int64) *bitset.BitSet {
	b := bitset.New(uint(len(v.c.nodes)))
	for i, n := range v.c.nodes {
		if n.IsIdle() && n.LastBusy <= minIdle {
			b.Set(uint(i))
		}
	}
	return b
}

// Event notes, called under the write lock where 22.05 calls trigger_*.

func (c *Controller) trigNodeDown(n *Node) { c.trig.NodeDown(n.Index) }
func (c *Controller) trigNodeUp(n *Node)   { c.trig.NodeUp(n.Index) }

// trigNodeDrained notes a DRAIN or FAIL node that holds no job.
func (c *Controller) trigNodeDrained(n *Node) {
	if n.RunJobs == 0 && n.CompletingJobs == 0 {
		c.trig.NodeDrained(n.Index)
	}
}

// BackupSilent notes that backup controllers did not answer the
// controller in control's ping (trigger_backup_ctld_fail).
func (c *Controller) BackupSilent(idx []int) {
	if len(idx) > 0 {
		c.trig.BackupCtldFail()
	}
}

// runTriggers is the trigger part of 22.05's background loop: a pass
// every Interval seconds, its programs started outside the lock.
func (c *Controller) runTriggers(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := c.now().Unix()
	for {
		select {
		case <-ctx.Done():
			c.saveTriggers(ctx)
			return
		case <-t.C:
		}
		if c.now().Unix()-last <= trigger.Interval {
			continue
		}
		c.trigS.logOn.Store(c.debugFlagOn("Triggers"))
		c.mu.RLock()
		now := c.now().Unix()
		last = now
		launches := c.trig.Process(now, c.trigCluster())
		slurmUID := c.cfg.SlurmUID
		c.mu.RUnlock()
		c.saveTriggers(ctx)
		for _, l := range launches {
			c.runTriggerProgram(l, slurmUID)
		}
	}
}

// triggerLog is the table's DebugFlags=Triggers output.
func (c *Controller) triggerLog(s string) {
	if c.trigS.logOn.Load() {
		c.log.Log(context.Background(), levelVerbose, "TRIGGERS: "+s)
	}
}

// runTriggerProgram is _trigger_run_program: the program runs as the
// trigger's owner (supplementary groups, group and user set; failures to
// switch are ignored when the owner is SlurmUser, whose identity this
// process has), in a session of its own with slurmctld's environment
// and no open files. It is killed with its process group after
// MaxProgTime seconds.
func (c *Controller) runTriggerProgram(l trigger.Launch, slurmUID uint32) {
	if l.Path == "" || !c.triggerRunnable(l.Program, l.UID, l.GID) {
		return
	}
	cmd := &exec.Cmd{Path: l.Path, Args: l.Argv}
	attr := &syscall.SysProcAttr{Setsid: true}
	euid := uint32(os.Geteuid())
	switch {
	case euid == 0:
		attr.Credential = &syscall.Credential{Uid: l.UID, Gid: l.GID, Groups: userGroups(l.UID, l.GID)}
	case l.UID == euid || l.UID == slurmUID:
		// Already that user (or SlurmUser, whose failures 22.05 ignores).
	default:
		c.log.Error(fmt.Sprintf("trigger: setresuid: cannot run trigger %d as uid %d", l.ID, l.UID))
		return
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		c.log.Error(fmt.Sprintf("trigger: %s: %v", l.Path, err))
		return
	}
	go func() {
		timer := time.AfterFunc(trigger.MaxProgTime*time.Second, func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		})
		defer timer.Stop()
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ws, _ := ee.Sys().(syscall.WaitStatus)
			exited, sig := 0, 0
			if ws.Exited() {
				exited = 1
			}
			if ws.Signaled() {
				sig = int(ws.Signal())
			}
			c.log.Info(fmt.Sprintf("trigger uid=%d type=%s:%s exit=%d:%d", l.UID, trigger.ResTypeString(l.ResType), trigger.TypeString(l.Type), exited, sig))
		}
	}()
}

// userGroups is initgroups: the user's groups and gid.
func userGroups(uid, gid uint32) []uint32 {
	groups := []uint32{gid}
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return groups
	}
	ids, err := u.GroupIds()
	if err != nil {
		return groups
	}
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != gid {
			groups = append(groups, uint32(g))
		}
	}
	return groups
}
