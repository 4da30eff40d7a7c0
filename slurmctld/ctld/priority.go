package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// PriorityStateName is the file in StateSaveLocation that keeps the
// fair-share usage and the time of the last decay pass across restarts
// (Slurm keeps assoc_usage and priority_last_decay_ran there).
const PriorityStateName = "priority_usage.json"

// priorityStateVersion is the format of PriorityStateName.
const priorityStateVersion = 1

type priorityFile struct {
	Version int
	LastRan int64
	Ended   map[uint32]int64 `json:",omitempty"`
	Usage   priority.UsageState
}

// ReadPriorityState reads a priority state file; a missing file is no
// saved state.
func ReadPriorityState(path string) (*jobs.PriorityState, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f priorityFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != priorityStateVersion {
		return nil, fmt.Errorf("%s: unsupported version %d", path, f.Version)
	}
	return &jobs.PriorityState{LastRan: f.LastRan, Ended: f.Ended, Usage: f.Usage}, nil
}

// writePriorityState replaces the priority state file: new file, fsync,
// rename, fsync of the directory.
func writePriorityState(path string, st *jobs.PriorityState) error {
	data, err := json.Marshal(priorityFile{Version: priorityStateVersion, LastRan: st.LastRan, Ended: st.Ended, Usage: st.Usage})
	if err != nil {
		return err
	}
	return writeStateFile(path, data)
}

// PriorityOptions configure AttachPriority.
type PriorityOptions struct {
	// StateFile keeps the fair-share usage across restarts (normally
	// StateSaveLocation/PriorityStateName); "" means it is not saved.
	StateFile string
	// IgnoreState starts without usage when the file cannot be read
	// (slurmctld -i); otherwise that is an error.
	IgnoreState bool
}

// AttachPriority starts priority/multifactor when slurm.conf asks for it
// (nothing to do for priority/basic). Call it after AttachJobs and before
// Run. The recovered pending jobs get their priority at once; from then
// on new, released, requeued and updated jobs get theirs before the reply
// leaves, and a decay pass every PriorityCalcPeriod charges running jobs
// (with the fair-share tracker), decays usage and recomputes every
// pending job. The usage is saved to o.StateFile when it changed.
func (c *Controller) AttachPriority(o PriorityOptions) error {
	if c.jobs == nil {
		return fmt.Errorf("ctld: AttachPriority before AttachJobs")
	}
	c.handlePriorityFactors()
	cfg := c.Config()
	if cfg.Priority.Plugin != priority.PluginMultifactor {
		c.attachBilling()
		return nil
	}
	var st *jobs.PriorityState
	if cfg.PriorityTrack && o.StateFile != "" {
		var err error
		st, err = ReadPriorityState(o.StateFile)
		if err != nil {
			if !o.IgnoreState {
				return fmt.Errorf("priority state recovery: %w (start with -i to skip it)", err)
			}
			c.log.Error(fmt.Sprintf("priority state recovery: %v", err))
			st = nil
		}
	}
	p, err := jobs.NewPriority(cfg.Priority, cfg.PriorityTrack, st)
	if err != nil {
		if !o.IgnoreState {
			return err
		}
		c.log.Error(fmt.Sprintf("priority state recovery: %v", err))
		if p, err = jobs.NewPriority(cfg.Priority, cfg.PriorityTrack, nil); err != nil {
			return err
		}
	}
	p.SetLocation(time.Local)
	if !cfg.PriorityTrack {
		// priority_multifactor.c init() without slurmdbd.
		if cfg.Priority.WeightAge != 0 {
			c.log.Error("PriorityWeightAge can only be used with SlurmDBD, ignoring")
		}
		if cfg.Priority.WeightFairshare != 0 {
			c.log.Error("PriorityWeightFairshare can only be used with SlurmDBD, ignoring")
		}
	}
	if hasFlag(cfg.Conf.DebugFlags, "Priority") {
		p.OnArray = c.logPriorityArray
	}
	c.mu.Lock()
	jc := c.jobs
	jc.m.SetPriority(p)
	c.syncBilling()
	cl, err := c.jobCluster()
	if err != nil {
		jc.m.SetPriority(nil)
		c.mu.Unlock()
		return err
	}
	jc.m.PriorityDecay(cl, c.now().Unix())
	prev := jc.opts.Reconfig
	jc.opts.Reconfig = func(nc *Config) error {
		if prev != nil {
			if err := prev(nc); err != nil {
				return err
			}
		}
		return c.reconfigPriority(nc)
	}
	c.mu.Unlock()
	for _, t := range []msgtype.Type{msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_RESOURCE_ALLOCATION,
		msgtype.REQUEST_JOB_REQUEUE, msgtype.REQUEST_UPDATE_JOB,
		msgtype.REQUEST_UPDATE_PARTITION, msgtype.REQUEST_CREATE_PARTITION, msgtype.REQUEST_DELETE_PARTITION} {
		c.prioritizeAfter(t)
	}
	c.savePriority(o.StateFile)
	go c.priorityLoop(o.StateFile, c.now().Unix()+int64(c.priorityPeriod()), jc.stop)
	return nil
}

// prioritizeAfter wraps the handler of t: once it has run, the job it
// created (submit, allocation), the jobs it named (update: recomputed
// whatever changed) or the jobs given a priority elsewhere (requeue) get
// their multifactor priority, before the reply is sent. After a
// partition change, the partitions' TRESBillingWeights are read again.
func (c *Controller) prioritizeAfter(t msgtype.Type) {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	inner, ok := c.mux[t]
	if !ok {
		return
	}
	c.mux[t] = server.HandlerFunc(func(ctx context.Context, r *server.Request) *server.Response {
		resp := inner.Serve(ctx, r)
		c.updatePriorities(t, r, resp)
		return resp
	})
}

func (c *Controller) updatePriorities(t msgtype.Type, r *server.Request, resp *server.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.jobCluster()
	if err != nil {
		c.log.Error(fmt.Sprintf("priority: %v", err))
		return
	}
	m, now := c.jobs.m, c.now().Unix()
	c.syncBilling()
	switch t {
	case msgtype.REQUEST_SUBMIT_BATCH_JOB:
		if b, ok := resp.Body.(*msg.SubmitResponse); ok {
			m.UpdateJobPriorities(cl, now, false, b.JobID)
		}
	case msgtype.REQUEST_RESOURCE_ALLOCATION:
		if b, ok := resp.Body.(*msg.Allocation); ok {
			m.UpdateJobPriorities(cl, now, false, b.JobID)
		}
	case msgtype.REQUEST_UPDATE_JOB:
		d := bodyOf[msg.JobDesc](r.Body)
		m.UpdateJobPriorities(cl, now, true, m.JobIDs(d.JobIDStr.Value, d.JobID)...)
	case msgtype.REQUEST_JOB_REQUEUE:
		m.UpdatePriorities(cl, now, false)
	}
}

// reconfigPriority applies a configuration read again (under the lock).
// The plugin and whether usage is tracked only change with a restart, as
// in Slurm, where the priority plugin is loaded once.
func (c *Controller) reconfigPriority(nc *Config) error {
	p := c.jobs.m.Priority()
	if p == nil {
		return nil
	}
	if nc.Priority.Plugin != priority.PluginMultifactor {
		c.log.Error("PriorityType changed: restart slurmctld for it to take effect")
		return nil
	}
	if err := p.Reconfigure(nc.Priority); err != nil {
		return err
	}
	p.OnArray = nil
	if hasFlag(nc.Conf.DebugFlags, "Priority") {
		p.OnArray = c.logPriorityArray
	}
	c.syncBilling()
	cl, err := c.jobCluster()
	if err != nil {
		return err
	}
	c.jobs.m.UpdatePriorities(cl, c.now().Unix(), true)
	return nil
}

// priorityLoop runs the decay passes every PriorityCalcPeriod and saves
// the usage (within a few seconds of a change) until stop is closed.
func (c *Controller) priorityLoop(stateFile string, next int64, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			c.savePriority(stateFile)
			return
		case <-t.C:
			select {
			case <-stop: // stopping wins over a tick that came at once
				c.savePriority(stateFile)
				return
			default:
			}
			now := c.now().Unix()
			if now >= next {
				c.PriorityPass()
				next = now + int64(c.priorityPeriod())
			}
			c.savePriority(stateFile)
		}
	}
}

func (c *Controller) priorityPeriod() uint32 {
	cfg := c.Config()
	return max(cfg.Priority.CalcPeriod, 1)
}

// PriorityPass runs one decay pass now (the periodic work; tests call it
// directly).
func (c *Controller) PriorityPass() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs == nil {
		return
	}
	cl, err := c.jobCluster()
	if err != nil {
		c.log.Error(fmt.Sprintf("priority: %v", err))
		return
	}
	c.syncBilling()
	c.jobs.m.PriorityDecay(cl, c.now().Unix())
}

// syncBilling gives the job manager the partitions' TRESBillingWeights
// as they stand (scontrol update partition changes them). Called under
// the lock.
func (c *Controller) syncBilling() {
	w := map[string]string{}
	for _, p := range c.parts {
		if p.Conf != nil && p.Conf.TRESBillingWeights != "" {
			w[p.Name] = p.Conf.TRESBillingWeights
		}
	}
	if err := c.jobs.m.SetBillingWeights(w); err != nil {
		c.log.Error(fmt.Sprintf("TRESBillingWeights: %v", err))
	}
	c.jobs.m.SetBillingMaxTRES(c.cfg.Priority.Flags&conf.PriorityMaxTRES != 0)
}

// attachBilling keeps the partitions' TRESBillingWeights current under
// priority/basic, where they still set jobs' billing TRES: now, after
// every partition change and after a reconfigure.
func (c *Controller) attachBilling() {
	c.mu.Lock()
	c.syncBilling()
	jc := c.jobs
	prev := jc.opts.Reconfig
	jc.opts.Reconfig = func(nc *Config) error {
		if prev != nil {
			if err := prev(nc); err != nil {
				return err
			}
		}
		if nc.Priority.Plugin == priority.PluginMultifactor {
			c.log.Error("PriorityType changed: restart slurmctld for it to take effect")
		}
		c.syncBilling()
		return nil
	}
	c.mu.Unlock()
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	for _, t := range []msgtype.Type{msgtype.REQUEST_UPDATE_PARTITION, msgtype.REQUEST_CREATE_PARTITION, msgtype.REQUEST_DELETE_PARTITION} {
		inner, ok := c.mux[t]
		if !ok {
			continue
		}
		c.mux[t] = server.HandlerFunc(func(ctx context.Context, r *server.Request) *server.Response {
			resp := inner.Serve(ctx, r)
			c.mu.Lock()
			c.syncBilling()
			c.mu.Unlock()
			return resp
		})
	}
}

// logPriorityArray logs a job's priority in each of its partitions, as
// the multifactor plugin does with DebugFlags=Priority.
func (c *Controller) logPriorityArray(j *jobs.Job, a []jobs.PartitionPriority) {
	var b strings.Builder
	for i, e := range a {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", e.Partition, e.Priority)
	}
	c.log.Log(context.Background(), levelVerbose, fmt.Sprintf("PRIO: %s multi-partition priorities: %s", jobLogID(j), b.String()))
}

// jobLogID is a job as Slurm's %pJ prints it.
func jobLogID(j *jobs.Job) string {
	if j.ArrayJobID != 0 && j.ArrayTaskID != jobs.NoVal {
		return fmt.Sprintf("JobId=%d_%d(%d)", j.ArrayJobID, j.ArrayTaskID, j.ID)
	}
	if j.ArrayJobID != 0 {
		return fmt.Sprintf("JobId=%d_*", j.ArrayJobID)
	}
	return fmt.Sprintf("JobId=%d", j.ID)
}

// savePriority writes the usage file when the usage changed since the
// last save.
func (c *Controller) savePriority(stateFile string) {
	if stateFile == "" || c.jobs == nil {
		return
	}
	c.mu.Lock()
	p := c.jobs.m.Priority()
	var st *jobs.PriorityState
	if p != nil && p.Changed() {
		st = p.State()
	}
	c.mu.Unlock()
	if st == nil {
		return
	}
	if err := writePriorityState(stateFile, st); err != nil {
		c.log.Error(fmt.Sprintf("priority state save: %v", err))
		c.mu.Lock()
		p.Unsaved()
		c.mu.Unlock()
	}
}
