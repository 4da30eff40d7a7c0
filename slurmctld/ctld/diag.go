package ctld

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// diagStats is slurmctld's diag_stats_t: what sdiag shows of the job
// counters and the scheduling cycles. The job counters the job table keeps
// (submitted, started, backfilled) are running totals there; here are
// their values at the last reset, so a reset costs the job table nothing.
type diagStats struct {
	mu sync.Mutex
	// start is last_proc_req_start, the start of the statistics
	// interval; nextReset the midnight (UTC, as slurmctld computes it)
	// of the next daily reset.
	start, nextReset int64
	latency          uint32

	// Totals of the job table at the last reset: every reset for
	// last, only sdiag -r for all (backfilled_jobs survives the daily
	// reset; last_backfilled_jobs does not).
	last    jobs.DiagCounters
	bfAllAt uint64

	completed, canceled, failed uint32

	pending, running uint32
	statesTS         int64

	schedMax, schedLast, schedSum, schedCount, schedDepth, schedQueue uint32

	bfCount, bfLast, bfDepth, bfDepthTry, bfQueue, bfMax       uint32
	bfSum                                                      uint64
	bfWhen                                                     int64
	bfDepthSum, bfDepthTrySum, bfQueueSum, bfTable, bfTableSum uint32
	bfActive                                                   uint32
}

// jobStatesInterval is JOB_COUNT_INTERVAL: the pending and running counts
// are taken again when this old.
const jobStatesInterval = 30

// nextMidnight is the daily reset time after now, as the background loop
// computes it (UTC midnight).
func nextMidnight(now int64) int64 { return now - now%86400 + 86400 }

// measureLatency is the start-up measure of 1000 clock reads sdiag shows
// (gettimeofday's), in microseconds.
func measureLatency() uint32 {
	start := time.Now()
	var t time.Time
	for range 1000 {
		t = time.Now()
	}
	return uint32(t.Sub(start).Microseconds())
}

func (d *diagStats) init(now int64) {
	d.start, d.nextReset = now, nextMidnight(now)
	d.latency = measureLatency()
}

// reset is reset_stats: explicit (sdiag -r) also clears the backfilled
// jobs since start. What describes the last cycle (its time, queue
// length, table size, when) and the job state counts stay.
func (d *diagStats) reset(now int64, totals jobs.DiagCounters, explicit bool) {
	d.last = totals
	if explicit {
		d.bfAllAt = totals.Backfilled
	}
	d.completed, d.canceled, d.failed = 0, 0, 0
	d.schedMax, d.schedSum, d.schedCount, d.schedDepth = 0, 0, 0, 0
	d.bfCount, d.bfSum, d.bfLast, d.bfDepthSum, d.bfDepthTrySum = 0, 0, 0, 0, 0
	d.bfQueue, d.bfQueueSum, d.bfTableSum, d.bfMax, d.bfDepth, d.bfDepthTry = 0, 0, 0, 0, 0, 0
	d.start = now
}

// mainCycle records a main scheduling pass that took us microseconds.
func (d *diagStats) mainCycle(us uint32, ps sched.PassStats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.schedMax = max(d.schedMax, us)
	d.schedSum += us
	d.schedLast = us
	d.schedCount++
	d.schedDepth += uint32(ps.MainDepth)
	d.schedQueue = uint32(ps.MainQueue)
}

// bfCycle records a backfill pass started at when that took us
// microseconds. A pass with nothing to backfill is no cycle (backfill.c
// returns before it counts one).
func (d *diagStats) bfCycle(when int64, us uint32, ps sched.PassStats) {
	if ps.BFQueue == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bfQueue = uint32(ps.BFQueue)
	d.bfQueueSum += d.bfQueue
	d.bfWhen = when
	d.bfDepth, d.bfDepthTry = uint32(ps.BFDepth), uint32(ps.BFDepthTry)
	d.bfCount++
	d.bfSum += uint64(us)
	d.bfLast = us
	d.bfDepthSum += d.bfDepth
	d.bfDepthTrySum += d.bfDepthTry
	d.bfMax = max(d.bfMax, us)
	d.bfTable = uint32(ps.BFTable)
	d.bfTableSum += d.bfTable
}

// The counters slurmctld's RPC handlers bump: a batch script or an
// allocation reported complete (successfully processed, whatever the job's
// exit code), a job cancelled (kill RPC accepted), a batch launch slurmd
// failed.
func (d *diagStats) jobCompleted() { d.mu.Lock(); d.completed++; d.mu.Unlock() }
func (d *diagStats) jobCanceled()  { d.mu.Lock(); d.canceled++; d.mu.Unlock() }
func (d *diagStats) jobFailed()    { d.mu.Lock(); d.failed++; d.mu.Unlock() }

// jobStates records the pending and running counts taken at now.
func (d *diagStats) jobStates(now int64, pending, running uint32) {
	d.mu.Lock()
	d.pending, d.running, d.statesTS = pending, running, now
	d.mu.Unlock()
}

// statesDue reports whether the job state counts are jobStatesInterval
// old.
func (d *diagStats) statesDue(now int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return now-d.statesTS >= jobStatesInterval
}

// dailyReset is the background loop's midnight reset (reset_stats(0)).
func (d *diagStats) dailyReset(now int64, totals func() jobs.DiagCounters) {
	d.mu.Lock()
	due := now >= d.nextReset
	d.mu.Unlock()
	if !due {
		return
	}
	t := totals()
	d.mu.Lock()
	defer d.mu.Unlock()
	if now >= d.nextReset {
		d.nextReset = nextMidnight(now)
		d.reset(now, t, false)
	}
}

// fill packs the statistics (pack_all_stat's part) into s.
func (d *diagStats) fill(s *msg.SchedStats, now int64, totals jobs.DiagCounters) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s.ReqTime, s.ReqTimeStart = now, d.start
	s.GettimeofdayLatency = d.latency
	s.JobsSubmitted = uint32(totals.Submitted - d.last.Submitted)
	s.JobsStarted = uint32(totals.Started - d.last.Started)
	s.JobsCompleted, s.JobsCanceled, s.JobsFailed = d.completed, d.canceled, d.failed
	s.JobsPending, s.JobsRunning, s.JobStatesTS = d.pending, d.running, d.statesTS
	s.ScheduleCycleMax, s.ScheduleCycleLast, s.ScheduleCycleSum = d.schedMax, d.schedLast, d.schedSum
	s.ScheduleCycleCounter, s.ScheduleCycleDepth, s.ScheduleQueueLen = d.schedCount, d.schedDepth, d.schedQueue
	s.BFBackfilledJobs = uint32(totals.Backfilled - d.bfAllAt)
	s.BFLastBackfilledJobs = uint32(totals.Backfilled - d.last.Backfilled)
	s.BFCycleCounter, s.BFCycleSum, s.BFCycleLast = d.bfCount, d.bfSum, d.bfLast
	s.BFLastDepth, s.BFLastDepthTry, s.BFQueueLen, s.BFCycleMax = d.bfDepth, d.bfDepthTry, d.bfQueue, d.bfMax
	s.BFWhenLastCycle = d.bfWhen
	s.BFDepthSum, s.BFDepthTrySum, s.BFQueueLenSum = d.bfDepthSum, d.bfDepthTrySum, d.bfQueueSum
	s.BFTableSize, s.BFTableSizeSum = d.bfTable, d.bfTableSum
	s.BFActive = d.bfActive
}

// micros is a duration in microseconds as a u32 (saturating).
func micros(d time.Duration) uint32 {
	us := d.Microseconds()
	switch {
	case us < 0:
		return 0
	case us > int64(^uint32(0)):
		return ^uint32(0)
	}
	return uint32(us)
}

// ctldDiag gathers what sdiag reads.
type ctldDiag struct {
	stats diagStats
	rpc   rpcStats
	agent agentStats
	// serving counts the requests being served.
	serving atomic.Int32
}

// diagTotals are the job table's running totals (zero without one).
func (c *Controller) diagTotals() jobs.DiagCounters {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.jobs == nil {
		return jobs.DiagCounters{}
	}
	return c.jobs.m.DiagCounters()
}

// serveCounted runs h and records the request's RPC statistics, as
// slurmctld_req does for every message type it serves.
func (c *Controller) serveCounted(ctx context.Context, h server.Handler, r *server.Request) *server.Response {
	c.diag.serving.Add(1)
	defer c.diag.serving.Add(-1)
	start := time.Now()
	resp := h.Serve(ctx, r)
	c.diag.rpc.record(r.Header.MsgType, r.Identity.UID, uint64(max(time.Since(start).Microseconds(), 0)))
	return resp
}

// rpcStatsInfo is _slurm_rpc_dump_stats: the statistics, or (root and
// SlurmUser only) their reset, answered without them.
func (c *Controller) rpcStatsInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.StatsInfoRequest](r.Body)
	reset := req.CommandID == msg.StatsCommandReset
	if reset && !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation: REQUEST_STATS_INFO reset from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_ACCESS_DENIED)
	}
	now := c.now().Unix()
	totals := c.diagTotals()
	resp := &msg.StatsInfoResponse{}
	d := &c.diag
	if reset {
		d.stats.mu.Lock()
		d.stats.reset(now, totals, true)
		d.stats.mu.Unlock()
		d.rpc.clear()
	} else {
		resp.PartsPacked = 1
		d.stats.fill(&resp.Sched, now, totals)
		// slurmctld's count also holds its RPC manager thread and the
		// slot it takes for the next connection before it polls.
		resp.Sched.ServerThreadCount = uint32(max(d.serving.Load(), 0)) + 2
		resp.Sched.AgentQueueSize = d.agent.queueSize()
		resp.Sched.AgentCount = uint32(max(d.agent.agents.Load(), 0))
		resp.Sched.AgentThreadCount = uint32(max(d.agent.threads.Load(), 0))
	}
	d.rpc.fill(resp)
	d.agent.fill(resp, now)
	return &server.Response{MsgType: msgtype.RESPONSE_STATS_INFO, Body: resp}
}

// diagTick is the background loop's statistics work: the job state counts
// every jobStatesInterval, the daily reset.
func (c *Controller) diagTick() {
	now := c.now().Unix()
	d := &c.diag.stats
	if d.statesDue(now) {
		var pending, running uint32
		c.mu.RLock()
		if c.jobs != nil {
			pending, running = c.jobs.m.StateCounts()
		}
		c.mu.RUnlock()
		d.jobStates(now, pending, running)
	}
	d.dailyReset(now, c.diagTotals)
}

// diagPass records a scheduling pass: began is when it started, took its
// cost under the lock. A backfill pass runs the main pass first, so it
// counts as a cycle of each (the pass is one computation: its cost cannot
// be split between them).
func (c *Controller) diagPass(backfill bool, began int64, took time.Duration, ps sched.PassStats) {
	us := micros(took)
	c.diag.stats.mainCycle(us, ps)
	if backfill {
		c.diag.stats.bfCycle(began, us, ps)
	}
}

// setBFActive marks a backfill pass under way (bf_active).
func (d *diagStats) setBFActive(on bool) {
	d.mu.Lock()
	d.bfActive = 0
	if on {
		d.bfActive = 1
	}
	d.mu.Unlock()
}

// countBatchComplete counts a REQUEST_COMPLETE_BATCH_SCRIPT as
// _slurm_rpc_complete_batch_script does: failed when slurmd could not run
// the script, completed when the completion was processed.
func (c *Controller) countBatchComplete(req *msg.CompleteBatchScript, err error) {
	if jobs.BatchFailure(req.SlurmRC) {
		c.diag.stats.jobFailed()
	}
	if err == nil {
		c.diag.stats.jobCompleted()
	}
}

// countedPass runs a scheduling pass and records it for sdiag; the
// outcome's actions are still to be carried out.
func (c *Controller) countedPass(ctx context.Context, backfill bool) (jobs.Outcome, error) {
	var took time.Duration
	var ps sched.PassStats
	began := c.now().Unix()
	c.diag.stats.setBFActive(backfill)
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		start := time.Now()
		o, err := m.Schedule(cl, now, backfill)
		took, ps = time.Since(start), m.LastPass()
		if backfill {
			c.setPlanned(m.PlannedNodes(), now)
		}
		return o, err
	})
	c.diag.stats.setBFActive(false)
	c.diagPass(backfill, began, took, ps)
	return out, err
}

// sendAgent sends req to nodes through the forwarding trees, counted as
// an agent for sdiag.
func (c *Controller) sendAgent(ctx context.Context, nodes []string, req forward.Request) ([]forward.Result, error) {
	t := c.diag.agent.start(len(nodes))
	defer c.diag.agent.end(t)
	return c.Sender().Send(ctx, nodes, req)
}
