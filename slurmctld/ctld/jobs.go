package ctld

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// JobsOptions wire a job manager into the controller (AttachJobs).
type JobsOptions struct {
	// Manager is the job table, already recovered from Store.
	Manager *jobs.Manager
	// Store is the state store the manager journals into; nil means
	// nothing is persisted (tests).
	Store *state.Store
	// Signer signs step credentials (cred/munge through munged, or
	// goslurm's HMAC scheme).
	Signer jobcred.Signer
	// Groups resolves AllowGroups names; nil admits only root to such
	// partitions.
	Groups sched.GroupLookup
	// Reconfig is called under the lock with a configuration read again
	// (reconfigure): the manager's settings follow slurm.conf.
	Reconfig func(*Config) error
	// NodeStateFile is where DOWN/DRAIN/FAIL node states and reasons are
	// kept across restarts (written within a second of a change); empty
	// means they are not saved.
	NodeStateFile string
	// SnapshotInterval is how often a snapshot is taken when the journal
	// grew; 0 means 30 s.
	SnapshotInterval time.Duration
}

// jobCore is the controller's job side: the manager (guarded by the
// controller's lock) and the scheduler's wake-up channel.
type jobCore struct {
	opts   JobsOptions
	m      *jobs.Manager
	cl     *jobs.Cluster
	clCfg  *Config
	kick   chan struct{}
	stop   chan struct{}  // closed when the controller stops: no more retries
	acts   sync.WaitGroup // actions being carried out
	snapMu sync.Mutex     // one snapshot at a time
	snapAt uint64         // seq covered by the last snapshot

	nodesSaved []byte // what the node state file holds (runJobs only)

	act *jobs.Activity // time_last_active of jobs and steps (resync.go)
}

// AttachJobs installs the job manager: the job and step RPC handlers
// replace the "not supported" ones, and Run drives scheduling, time
// limits and snapshots. Call it before Run and before serving.
func (c *Controller) AttachJobs(o JobsOptions) error {
	if o.Manager == nil {
		return fmt.Errorf("ctld: AttachJobs without a job manager")
	}
	if o.SnapshotInterval <= 0 {
		o.SnapshotInterval = 30 * time.Second
	}
	jc := &jobCore{opts: o, m: o.Manager, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.mu.Lock()
	c.jobs = jc
	_, err := c.jobCluster()
	c.syncUsage(c.now().Unix())
	jc.m.RestoreLicenses(c.cfg.Conf.LicenseList, c.now().Unix())
	c.mu.Unlock()
	if err != nil {
		c.mu.Lock()
		c.jobs = nil
		c.mu.Unlock()
		return err
	}
	prev := c.opts.Hooks.NodeUp
	c.opts.Hooks.NodeUp = func(node string) {
		if prev != nil {
			prev(node)
		}
		c.kickScheduler()
	}
	f := func(h func(context.Context, *server.Request) *server.Response) server.Handler {
		return server.HandlerFunc(h)
	}
	for t, h := range map[msgtype.Type]server.Handler{
		msgtype.REQUEST_SUBMIT_BATCH_JOB:        f(c.rpcSubmitBatch),
		msgtype.REQUEST_SUBMIT_BATCH_HET_JOB:    f(c.rpcSubmitBatchHet),
		msgtype.REQUEST_HET_JOB_ALLOCATION:      f(c.rpcAllocateHet),
		msgtype.REQUEST_RESOURCE_ALLOCATION:     f(c.rpcAllocate),
		msgtype.REQUEST_JOB_WILL_RUN:            f(c.rpcWillRun),
		msgtype.REQUEST_JOB_INFO:                f(c.rpcJobInfo),
		msgtype.REQUEST_JOB_USER_INFO:           f(c.rpcJobInfo),
		msgtype.REQUEST_JOB_INFO_SINGLE:         f(c.rpcJobInfoSingle),
		msgtype.REQUEST_JOB_STEP_INFO:           f(c.rpcStepInfo),
		msgtype.REQUEST_JOB_READY:               f(c.rpcJobReady),
		msgtype.REQUEST_BATCH_SCRIPT:            f(c.rpcBatchScript),
		msgtype.REQUEST_UPDATE_JOB_STEP:         f(c.rpcUpdateStep),
		msgtype.REQUEST_JOB_ALLOCATION_INFO:     f(c.rpcAllocationInfo),
		msgtype.REQUEST_JOB_SBCAST_CRED:         f(c.rpcSbcastCred),
		msgtype.REQUEST_HET_JOB_ALLOC_INFO:      f(c.rpcHetAllocationInfo),
		msgtype.REQUEST_JOB_STEP_CREATE:         f(c.rpcStepCreate),
		msgtype.REQUEST_STEP_COMPLETE:           f(c.rpcStepComplete),
		msgtype.REQUEST_KILL_JOB:                f(c.rpcKill),
		msgtype.REQUEST_CANCEL_JOB_STEP:         f(c.rpcKill),
		msgtype.REQUEST_UPDATE_JOB:              f(c.rpcUpdateJob),
		msgtype.REQUEST_JOB_REQUEUE:             f(c.rpcRequeue),
		msgtype.REQUEST_TOP_JOB:                 f(c.rpcTopJob),
		msgtype.REQUEST_JOB_NOTIFY:              f(c.rpcJobNotify),
		msgtype.REQUEST_SUSPEND:                 f(c.rpcSuspend),
		msgtype.REQUEST_COMPLETE_BATCH_SCRIPT:   f(c.rpcCompleteBatch),
		msgtype.REQUEST_COMPLETE_JOB_ALLOCATION: f(c.rpcCompleteAllocation),
		msgtype.MESSAGE_EPILOG_COMPLETE:         f(c.rpcEpilogComplete),
		msgtype.REQUEST_COMPLETE_PROLOG:         f(c.rpcCompleteProlog),
	} {
		c.Handle(t, h)
	}
	return nil
}

// jobCluster returns the scheduler's view of the node and partition
// tables (built once per configuration; states refreshed on every call).
// Called under the write lock.
func (c *Controller) jobCluster() (*jobs.Cluster, error) {
	jc := c.jobs
	if jc.cl == nil || jc.clCfg != c.cfg {
		snap, err := sched.FromConf(c.cfg.Conf, jc.opts.Groups)
		if err != nil {
			return nil, err
		}
		if len(snap.Nodes) != len(c.nodes) {
			return nil, fmt.Errorf("ctld: scheduler view has %d nodes, the controller %d", len(snap.Nodes), len(c.nodes))
		}
		c.ApplyKeptHardware(snap.Nodes)
		jc.cl = &jobs.Cluster{Nodes: snap.Nodes, Config: snap.Config, Licenses: c.cfg.Conf.LicenseList}
		jc.clCfg = c.cfg
	}
	// Nodes and partitions as the controller holds them now (scontrol
	// update changes both): part_sched.go.
	if c.schedNodes(jc.cl.Nodes) {
		jc.cl.NodesChanged()
	}
	parts, err := c.schedPartitions(jc.opts.Groups)
	if err != nil {
		return nil, err
	}
	jc.cl.Partitions = parts
	jc.cl.Reservations = c.jobReservations()
	jc.cl.GresRecs = c.gresRecs(jc.cl.GresRecs)
	jc.cl.CloudAliases = c.cloudAliases(jc.cl.CloudAliases) // cloud.go
	return jc.cl, nil
}

func schedNodeState(n *Node) sched.NodeState {
	var s sched.NodeState
	if n.IsDown() || n.IsUnknown() || n.Has(msg.NodeStateInvalidReg) {
		s |= sched.NodeDown
	}
	if n.IsDown() {
		s |= sched.NodeDownBase
	}
	if n.IsDrain() {
		s |= sched.NodeDrain
	}
	if n.IsFail() {
		s |= sched.NodeFail
	}
	if n.IsNoRespond() && !n.Has(msg.NodeStatePoweringUp) && !n.Has(msg.NodeStatePoweredDown) {
		// A node powered down or being powered up takes jobs, which
		// wait for it (update_node's make_node_avail for such a node).
		s |= sched.NodeNoRespond
	}
	if n.IsFuture() {
		s |= sched.NodeFuture
	}
	s |= schedPowerState(n) // powersave_jobs.go
	if n.resuming {
		s |= sched.NodeResuming
	}
	return s
}

func schedPartState(up uint16) sched.PartState {
	switch up {
	case msg.PartitionDown:
		return sched.PartDown
	case msg.PartitionDrain:
		return sched.PartDrain
	case msg.PartitionInactive:
		return sched.PartInactive
	}
	return sched.PartUp
}

// syncUsage copies what the jobs hold into the node table (alloc CPUs and
// memory, run and completing counts) and derives the base state as
// slurmctld's make_node_alloc / make_node_comp / make_node_idle do.
// Called under the write lock.
func (c *Controller) syncUsage(now int64) {
	u := c.jobs.m.NodeUsage(len(c.nodes))
	changed := false
	for i, n := range c.nodes {
		hw, kept := c.keptHW[n.Name]
		if !kept {
			hw = hardwareOf(n)
		}
		cpus := n.allocCPUs(hw, u[i].CPUs, u[i].Cores, u[i].LooseCPUs, u[i].Whole)
		if n.AllocCPUs != cpus || n.AllocMem != u[i].MemMB || n.RunJobs != u[i].RunJobs || n.CompletingJobs != u[i].CompletingJobs {
			if n.RunJobs+n.CompletingJobs > 0 && u[i].RunJobs+u[i].CompletingJobs == 0 && (n.IsDrain() || n.IsFail()) {
				c.trig.NodeDrained(n.Index) // make_node_idle's trigger_node_drained
			}
			n.AllocCPUs, n.AllocMem, n.RunJobs, n.CompletingJobs = cpus, u[i].MemMB, u[i].RunJobs, u[i].CompletingJobs
			changed = true
		}
		st := n.State
		flags := st &^ msg.NodeStateBase
		switch n.Base() {
		case msg.NodeStateIdle, msg.NodeStateAllocated, msg.NodeStateMixed:
			if n.RunJobs > 0 {
				st = msg.NodeStateAllocated | flags
			} else {
				if n.Base() != msg.NodeStateIdle {
					n.LastBusy = now
				}
				st = msg.NodeStateIdle | flags
			}
		}
		if n.CompletingJobs > 0 {
			st |= msg.NodeStateCompleting
		} else {
			st &^= msg.NodeStateCompleting
		}
		if n.RunJobs == 0 && n.CompletingJobs == 0 && n.Base() == msg.NodeStateIdle {
			n.Owner = noVal
		}
		if st != n.State {
			n.State = st
			changed = true
		}
	}
	if changed {
		c.lastNodeUpdate = now
	}
	c.gresChanged()
}

// downNodesWithJobs lists DOWN nodes the job table still uses: the job
// manager has not been told (jobs.NodeDown) yet. Called under the lock.
func (c *Controller) downNodesWithJobs() []string {
	var out []string
	for _, n := range c.nodes {
		if n.IsDown() && (n.RunJobs > 0 || n.CompletingJobs > 0) {
			out = append(out, n.Name)
		}
	}
	return out
}

// jobOp runs f on the job manager under the write lock, refreshes the node
// table, and waits (outside the lock) until what f journaled is on disk.
// The returned outcome's actions are still to be carried out.
func (c *Controller) jobOp(ctx context.Context, f func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error)) (jobs.Outcome, error) {
	c.mu.Lock()
	done := c.jobOpLocked(f)
	c.mu.Unlock()
	return done(ctx)
}

// jobOpLocked is jobOp's part under the lock, for a caller that holds it
// for more; done, called once the lock is released, runs the scripts,
// logs and waits for the journal.
func (c *Controller) jobOpLocked(f func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error)) (done func(context.Context) (jobs.Outcome, error)) {
	now := c.now().Unix()
	cl, err := c.jobCluster()
	var out jobs.Outcome
	if err == nil {
		out, err = f(c.jobs.m, cl, now)
		c.syncUsage(now)
	}
	logs := c.jobs.m.TakeLogs()
	scripts := c.jobs.m.TakeScripts(cl)
	return func(ctx context.Context) (jobs.Outcome, error) {
		c.runScripts(scripts) // MailProg, PrologSlurmctld, ... (scripts.go)
		for _, l := range logs {
			c.log.Log(context.Background(), l.Level, l.Msg)
		}
		if werr := out.Wait(ctx); werr != nil {
			c.log.Error(fmt.Sprintf("job state save failed: %v", werr))
			if err == nil {
				err = slurmerr.Error{Code: slurmerr.SLURM_ERROR}
			}
		}
		return out, err
	}
}

// reply builds the answer of a job RPC: the error's code, or ok(); the
// outcome's actions go out once the reply is sent.
func (c *Controller) reply(out jobs.Outcome, err error, ok func() *server.Response) *server.Response {
	var resp *server.Response
	switch {
	case err != nil && jobs.UserMessage(err) != "":
		// slurm_send_rc_err_msg: sbatch/srun print the text before the
		// error ("Memory specification can not be satisfied").
		resp = server.RCMsg(slurmerr.Code(err), jobs.UserMessage(err))
	case err != nil:
		resp = server.RC(slurmerr.Code(err))
	default:
		resp = ok()
	}
	if len(out.Actions) > 0 {
		acts := out.Actions
		c.jobs.acts.Add(1)
		resp.After = func(error) {
			defer c.jobs.acts.Done()
			c.carryOut(acts)
		}
	}
	return resp
}

func caller(r *server.Request) jobs.Caller {
	return jobs.Caller{
		UID: r.Identity.UID, GID: r.Identity.GID,
		Host:            r.Peer.Addr().Unmap().String(),
		ProtocolVersion: uint16(r.Header.Version),
	}
}

// hostNames caches reverse lookups of credential origins.
var hostNames sync.Map

// authHost is auth_g_get_host: the name of the host that made the
// request's credential (munge's encode address, else the peer), which
// slurmctld records as the job's alloc_node.
func authHost(r *server.Request) string {
	addr := r.Identity.Origin
	if !addr.IsValid() || addr.IsUnspecified() {
		addr = r.Peer.Addr()
	}
	addr = addr.Unmap()
	key := addr.String()
	if v, ok := hostNames.Load(key); ok {
		return v.(string)
	}
	name := key
	if names, err := net.LookupAddr(key); err == nil && len(names) > 0 {
		name = strings.TrimSuffix(names[0], ".")
	}
	hostNames.Store(key, name)
	return name
}

// submitter is caller with the host name a job records (alloc_node).
func submitter(r *server.Request) jobs.Caller {
	c := caller(r)
	c.HostName = authHost(r)
	return c
}

// kickScheduler asks for a scheduling pass soon (coalesced).
func (c *Controller) kickScheduler() {
	if c.jobs == nil {
		return
	}
	select {
	case c.jobs.kick <- struct{}{}:
	default:
	}
}

func rcOK() *server.Response { return server.RC(0) }

// ---------------------------------------------------------------------------
// RPC handlers.

func (c *Controller) rpcSubmitBatch(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.JobDesc](r.Body)
	var resp *msg.SubmitResponse
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		resp, o, err = m.Submit(d, submitter(r), cl, now)
		return o, err
	})
	if err != nil {
		c.log.Info(fmt.Sprintf("_slurm_rpc_submit_batch_job: %s", slurmerr.Message(slurmerr.Code(err))))
	} else {
		c.log.Debug(fmt.Sprintf("_slurm_rpc_submit_batch_job: JobId=%d", resp.JobID))
		if d.Priority != 0 {
			// A held job (sbatch -H) changes nothing a pass could act on.
			c.kickScheduler()
		}
	}
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_SUBMIT_BATCH_JOB, Body: resp}
	})
}

func (c *Controller) rpcAllocate(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.JobDesc](r.Body)
	var a *msg.Allocation
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		a, o, err = m.Allocate(d, submitter(r), cl, now)
		return o, err
	})
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_RESOURCE_ALLOCATION, Body: a}
	})
}

func (c *Controller) rpcWillRun(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.JobDesc](r.Body)
	var wr *msg.WillRunResponse
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var err error
		wr, err = m.WillRun(d, caller(r), cl, now)
		return jobs.Outcome{}, err
	})
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_JOB_WILL_RUN, Body: wr}
	})
}

// rpcJobInfo answers REQUEST_JOB_INFO (every job, or the listed ids) and
// REQUEST_JOB_USER_INFO (one user's jobs).
func (c *Controller) rpcJobInfo(_ context.Context, r *server.Request) *server.Response {
	uid := ^uint32(0)
	var lastUpdate int64
	var flags uint16
	var ids []uint32
	if r.Header.MsgType == msgtype.REQUEST_JOB_USER_INFO {
		req := bodyOf[msg.JobUserInfoRequest](r.Body)
		uid, flags = req.UserID, req.ShowFlags
	} else {
		req := bodyOf[msg.JobInfoRequest](r.Body)
		lastUpdate, flags, ids = req.LastUpdate, req.ShowFlags, req.JobIDs
	}
	// Cached packed records when the registry can send them as they are
	// (jobs.RegisterPackedJobInfo): under the lock only the changed jobs
	// are packed; the body is copied out after it is released.
	packed := jobs.AcceptsPackedJobInfo(c.cd.Bodies)
	c.mu.Lock()
	defer c.mu.Unlock()
	if lastUpdate != 0 && noChange(lastUpdate, max(c.boot, c.jobs.m.LastUpdate())) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	cl, err := c.jobCluster()
	if err != nil {
		return server.RC(slurmerr.SLURM_ERROR)
	}
	if packed {
		// An error is a version the cache does not pack: the list is
		// then built below.
		p, err := c.jobs.m.PackJobInfo(r.Header.Version, cl, len(c.nodes), flags, uid, ids, c.now().Unix())
		if err == nil {
			return &server.Response{MsgType: msgtype.RESPONSE_JOB_INFO, Body: p}
		}
	}
	resp := c.jobs.m.JobInfoMsg(cl, len(c.nodes), flags, uid, c.now().Unix())
	if ids != nil {
		want := map[uint32]bool{}
		for _, id := range ids {
			want[id] = true
		}
		kept := resp.Jobs[:0]
		for _, j := range resp.Jobs {
			if want[j.JobID] || (j.ArrayJobID != 0 && want[j.ArrayJobID]) {
				kept = append(kept, j)
			}
		}
		resp.Jobs = kept
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_INFO, Body: resp}
}

func (c *Controller) rpcJobInfoSingle(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobIDShowRequest](r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.jobCluster()
	if err != nil {
		return server.RC(slurmerr.SLURM_ERROR)
	}
	resp, ok := c.jobs.m.JobInfoSingle(req.JobID, cl, len(c.nodes), req.ShowFlags, c.now().Unix())
	if !ok {
		return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_INFO, Body: resp}
}

func (c *Controller) rpcStepInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobStepInfoRequest](r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.jobCluster()
	if err != nil {
		return server.RC(slurmerr.SLURM_ERROR)
	}
	resp, ok := c.jobs.m.StepInfo(req.StepID, cl, len(c.nodes), c.now().Unix())
	if !ok {
		return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_STEP_INFO, Body: resp}
}

func (c *Controller) rpcJobReady(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobIDShowRequest](r.Body)
	var v uint32
	_, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (out jobs.Outcome, err error) {
		v, out, err = m.JobReady(req.JobID, cl, now)
		return out, err
	})
	if err != nil {
		return server.RC(slurmerr.Code(err))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_READY, Body: codec.ReturnCode{RC: v}}
}

func (c *Controller) rpcAllocationInfo(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobAllocInfoRequest](r.Body)
	var a *msg.Allocation
	_, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		out, err := m.RefreshAlias(req.JobID, cl, now) // job_alloc_info's "TBD" refresh
		if err != nil {
			return out, err
		}
		a, err = m.AllocationInfo(req.JobID, caller(r))
		return out, err
	})
	if err != nil {
		return server.RC(slurmerr.Code(err))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_ALLOCATION_INFO, Body: a}
}

// rpcSbcastCred answers sbcast: the credential is made under the lock
// and signed outside it.
func (c *Controller) rpcSbcastCred(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SelectedStep](r.Body)
	c.mu.Lock()
	g, err := c.jobs.m.SbcastCred(req, caller(r), c.now().Unix())
	logs := c.jobs.m.TakeLogs()
	c.mu.Unlock()
	for _, l := range logs {
		c.log.Log(ctx, l.Level, l.Msg)
	}
	if err != nil {
		return server.RC(slurmerr.Code(err))
	}
	resp, err := g.Sign(ctx, c.jobs.opts.Signer, r.Header.Version)
	if err != nil {
		c.log.Error(fmt.Sprintf("_slurm_rpc_job_sbcast_cred JobId=%d cred create error: %v", req.StepID.JobID, err))
		return server.RC(slurmerr.SLURM_ERROR)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_JOB_SBCAST_CRED, Body: resp}
}

// rpcStepCreate creates the step under the lock and signs its credential
// outside it (munged is a round trip).
func (c *Controller) rpcStepCreate(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.StepCreateRequest](r.Body)
	var g *jobs.StepGrant
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var o jobs.Outcome
		var err error
		g, o, err = m.CreateStep(req, caller(r), cl, now)
		return o, err
	})
	var resp *msg.StepCreateResponse
	if err == nil {
		resp, err = g.Sign(ctx, c.jobs.opts.Signer, c.now())
		if err != nil {
			c.log.Error(fmt.Sprintf("_slurm_rpc_job_step_create: credential signing failed: %v", err))
			err = slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_CREDENTIAL}
		}
	}
	return c.reply(out, err, func() *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_JOB_STEP_CREATE, Body: resp}
	})
}

func (c *Controller) rpcStepComplete(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.StepComplete](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.StepComplete(req, caller(r), now)
	})
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcKill(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobStepKillRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Kill(req, caller(r), cl, now)
	})
	if err == nil {
		c.kickScheduler()
		// _slurm_rpc_kill_job counts any signal; a step cancel RPC
		// only SIGKILL to the whole job.
		if r.Header.MsgType == msgtype.REQUEST_KILL_JOB || (req.StepID.StepID == jobs.NoVal && req.Signal == 9) {
			c.diag.stats.jobCanceled()
		}
	}
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcUpdateJob(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.JobDesc](r.Body)
	if d.Licenses.Valid && d.Licenses.Value != "" && !c.validJobLicenses(d.Licenses.Value) {
		return server.RC(slurmerr.ESLURM_INVALID_LICENSES)
	}
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Update(d, caller(r), cl, now)
	})
	var ae *jobs.ArrayErrors
	if errors.As(err, &ae) {
		// Some tasks of an array took the update, some did not.
		c.kickScheduler()
		return c.reply(out, nil, func() *server.Response {
			return &server.Response{MsgType: msgtype.RESPONSE_JOB_ARRAY_ERRORS,
				Body: &msg.JobArrayErrorsResponse{Errors: ae.Entries}}
		})
	}
	if err == nil {
		c.kickScheduler()
	}
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcTopJob(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SuspendRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Top(req, caller(r), now)
	})
	if err == nil {
		c.kickScheduler()
	}
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcJobNotify(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobNotifyRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, _ int64) (jobs.Outcome, error) {
		return m.Notify(req, caller(r))
	})
	return c.reply(out, err, rcOK)
}

// validJobLicenses is license_validate for a job's Licenses=: every name
// configured in slurm.conf's Licenses, no count above its total.
func (c *Controller) validJobLicenses(spec string) bool {
	return jobs.ValidLicenses(spec, c.cfg.Conf.LicenseList) == nil
}

func (c *Controller) rpcRequeue(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.JobRequeueRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Requeue(req, caller(r), cl, now)
	})
	if err == nil {
		c.kickScheduler()
	}
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcCompleteBatch(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.CompleteBatchScript](r.Body)
	perfEvent("complete-in", req.JobID, req.NodeName.Value)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.CompleteBatch(req, caller(r), cl, now)
	})
	perfEvent("complete-out", req.JobID, err)
	c.countBatchComplete(req, err)
	c.kickScheduler()
	return c.reply(out, err, rcOK)
}

func (c *Controller) rpcCompleteAllocation(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.CompleteJobAllocationRequest](r.Body)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.CompleteAllocation(req, caller(r), cl, now)
	})
	if err == nil {
		c.diag.stats.jobCompleted()
	}
	c.kickScheduler()
	return c.reply(out, err, rcOK)
}

// rpcEpilogComplete is one-way: nothing is sent back.
func (c *Controller) rpcEpilogComplete(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.EpilogComplete](r.Body)
	if req.ReturnCode != 0 {
		c.log.Error(fmt.Sprintf("_slurm_rpc_epilog_complete: epilog error JobId=%d Node=%s Err=%s",
			req.JobID, req.NodeName.Value, slurmerr.Message(int(req.ReturnCode))))
	}
	perfEvent("epilog-in", req.JobID, req.NodeName.Value)
	c.epilogComplete(ctx, req.JobID, req.NodeName.Value, caller(r))
	return nil
}

// rpcCompleteProlog is _slurm_rpc_complete_prolog: a node's
// PrologFlags=Alloc prolog ended. Only node daemons (root, SlurmUser)
// report it.
func (c *Controller) rpcCompleteProlog(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.CompleteProlog](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, REQUEST_COMPLETE_PROLOG from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.PrologComplete(req, now)
	})
	if err != nil {
		c.log.Info(fmt.Sprintf("_slurm_rpc_complete_prolog JobId=%d: %s ", req.JobID, slurmerr.Message(slurmerr.Code(err))))
	}
	return c.reply(out, err, rcOK)
}

func (c *Controller) epilogComplete(ctx context.Context, jobID uint32, node string, who jobs.Caller) {
	out, err := c.jobOp(ctx, func(m *jobs.Manager, _ *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.EpilogComplete(jobID, node, who, now)
	})
	if err != nil {
		c.log.Debug(fmt.Sprintf("_slurm_rpc_epilog_complete: JobId=%d Node=%s: %v", jobID, node, err))
	}
	perfEvent("epilog-done", jobID, node)
	c.kickScheduler()
	c.spawnActions(out.Actions)
}

// spawnActions carries out actions in the background.
func (c *Controller) spawnActions(acts []jobs.Action) {
	if len(acts) == 0 {
		return
	}
	c.jobs.acts.Add(1)
	go func() {
		defer c.jobs.acts.Done()
		c.carryOut(acts)
	}()
}

// ---------------------------------------------------------------------------
// Background work: scheduling, time limits, snapshots.

// runJobs drives the job manager until ctx ends: Tick every second, a
// main scheduling pass when kicked (submit, completion, node up) and every
// sched_interval, backfill every bf_interval, snapshots when the journal
// grew.
//
// Kicked passes are paced: after one that took d, the next kicked one
// starts no sooner than d after it ended. An idle controller schedules a
// submitted job at once, while a storm of submits at 10,000 pending jobs
// no longer runs passes back to back under the exclusive lock (at most
// half the controller's time goes to them, and submits wait at most one
// pass). Real slurmctld rate-limits the same passes with batch_sched_delay.
func (c *Controller) runJobs(ctx context.Context) {
	jc := c.jobs
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	c.mu.RLock()
	cfg := jc.cl.Config
	c.mu.RUnlock()
	schedEvery := time.Duration(max(cfg.SchedInterval, 1)) * time.Second
	bfEvery := time.Duration(max(cfg.BF.Interval, 1)) * time.Second
	lastSched, lastBF, lastSnap := time.Now(), time.Now(), time.Now()
	var pace kickPacer
	c.diagTick()
	c.afterRecovery(ctx) // scripts.go
	c.kickScheduler()
	for {
		select {
		case <-ctx.Done():
			pace.stop()
			close(jc.stop)
			c.snapshot(context.Background())
			c.saveNodes()
			return
		case <-jc.kick:
			if pace.wait(time.Now()) {
				continue
			}
			c.kickedPass(ctx, &pace)
		case <-pace.due():
			c.kickedPass(ctx, &pace)
		case now := <-tick.C:
			c.diagTick()
			c.tickJobs(ctx)
			c.saveNodes()
			switch {
			case cfg.Backfill && now.Sub(lastBF) >= bfEvery:
				c.schedulePass(ctx, true)
				lastBF, lastSched = now, now
			case now.Sub(lastSched) >= schedEvery:
				c.schedulePass(ctx, false)
				lastSched = now
			}
			if now.Sub(lastSnap) >= jc.opts.SnapshotInterval {
				c.snapshot(ctx)
				lastSnap = now
			}
		}
	}
}

// kickedPass runs a kicked main pass and notes its cost for pacing.
func (c *Controller) kickedPass(ctx context.Context, pace *kickPacer) {
	start := time.Now()
	c.schedulePass(ctx, false)
	end := time.Now()
	pace.ran(start, end)
}

// kickPacer holds kicked scheduling passes back while the last one's
// cost has not been paid back in time without passes.
type kickPacer struct {
	next  time.Time   // earliest start of the next kicked pass
	timer *time.Timer // armed while a kick waits for next
}

// wait reports whether a kick arriving at now must wait; it then arms the
// timer (due) for the pass.
func (p *kickPacer) wait(now time.Time) bool {
	if p.timer != nil {
		return true // a pass is already due
	}
	if !now.Before(p.next) {
		return false
	}
	p.timer = time.NewTimer(p.next.Sub(now))
	return true
}

// due is the channel of the held-back pass (nil, never ready, when none).
func (p *kickPacer) due() <-chan time.Time {
	if p.timer == nil {
		return nil
	}
	return p.timer.C
}

// ran notes a kicked pass from start to end; a held-back pass is taken by
// it.
func (p *kickPacer) ran(start, end time.Time) {
	p.stop()
	p.next = end.Add(end.Sub(start))
}

func (p *kickPacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}

func (c *Controller) schedulePass(ctx context.Context, backfill bool) {
	perfEvent("pass-begin", 0, backfill)
	out, err := c.countedPass(ctx, backfill)
	if err != nil {
		c.log.Error(fmt.Sprintf("schedule: %v", err))
	}
	perfEvent("pass-end", 0, len(out.Actions))
	c.spawnActions(out.Actions)
}

// tickJobs is the once-a-second work: time limits and purges, and the jobs
// of nodes that went DOWN since the last call.
func (c *Controller) tickJobs(ctx context.Context) {
	var revoked bool
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		revoked = m.RevokeWaitOver(now) // a job killed last second may start
		all, err := m.Tick(cl, now)
		if err != nil {
			return all, err
		}
		if up, err := m.PowerUpReady(cl, now); err != nil { // powersave_jobs.go
			return all, err
		} else {
			all.Actions = append(all.Actions, up.Actions...)
			if up.Ticket != nil {
				all.Ticket = up.Ticket
			}
		}
		err = c.killOnDownNodes(m, cl, now, &all)
		return all, err
	})
	if err != nil {
		c.log.Error(fmt.Sprintf("job tick: %v", err))
	}
	if len(out.Actions) > 0 || revoked {
		c.kickScheduler()
	}
	c.spawnActions(out.Actions)
}

// killOnDownNodes is kill_running_job_by_node_name for the nodes DOWN
// with jobs, and those power_down_force asked for: their running jobs
// end or are requeued, and the jobs completing stop waiting for them.
// Under the lock (jobOp); what it does is added to all.
func (c *Controller) killOnDownNodes(m *jobs.Manager, cl *jobs.Cluster, now int64, all *jobs.Outcome) error {
	for _, node := range append(c.downNodesWithJobs(), c.takePowerKills()...) {
		c.log.Info(fmt.Sprintf("Killing jobs on DOWN node %s", node))
		o, err := m.NodeDown(node, cl, now)
		all.Actions = append(all.Actions, o.Actions...)
		if o.Ticket != nil {
			all.Ticket = o.Ticket // tickets complete in order: the last covers the rest
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// settleDownNodesLocked does at once what the job tick would do a moment
// later for nodes an update set DOWN: 22.05 kills their jobs, and lets the
// jobs completing on them go, within the update and under the same lock
// hold. Called under the lock; the function it returns (nil when there
// is nothing to do) finishes the work once the lock is released.
func (c *Controller) settleDownNodesLocked() func(context.Context) {
	if c.jobs == nil || (len(c.downNodesWithJobs()) == 0 && len(c.powerKill) == 0) {
		return nil
	}
	done := c.jobOpLocked(func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		var all jobs.Outcome
		err := c.killOnDownNodes(m, cl, now, &all)
		return all, err
	})
	return func(ctx context.Context) {
		out, err := done(ctx)
		if err != nil {
			c.log.Error(fmt.Sprintf("down node jobs: %v", err))
		}
		if len(out.Actions) > 0 {
			c.kickScheduler()
		}
		c.spawnActions(out.Actions)
	}
}

// snapshot writes the job table to the state store when the journal grew
// since the last one.
func (c *Controller) snapshot(ctx context.Context) {
	jc := c.jobs
	st := jc.opts.Store
	if st == nil {
		return
	}
	jc.snapMu.Lock()
	defer jc.snapMu.Unlock()
	var buf bytes.Buffer
	c.mu.Lock()
	seq := st.LastSeq()
	if seq == jc.snapAt {
		c.mu.Unlock()
		return
	}
	err := jc.m.WriteSnapshot(&buf)
	c.mu.Unlock()
	if err == nil {
		err = st.Snapshot(ctx, seq, func(w io.Writer) error {
			_, err := w.Write(buf.Bytes())
			return err
		})
	}
	if err != nil {
		c.log.Error(fmt.Sprintf("state save: %v", err))
		return
	}
	jc.snapAt = seq
}

// WaitActions waits for the actions under way (tests, shutdown).
func (c *Controller) WaitActions() {
	if c.jobs != nil {
		c.jobs.acts.Wait()
	}
}
