package sched

import (
	"fmt"
	"strings"

	"github.com/bits-and-blooms/bitset"
)

// backfill is sched/backfill's pass. Jobs are taken in priority order; a
// job starts now if it fits and keeps clear of every reservation made so
// far, otherwise it gets a reservation at its earliest possible start in
// the window (bf_window, steps of bf_resolution), which later, lower
// priority jobs must not touch. Reservations take whole nodes for their
// time span, as in Slurm.
//
// During a pass free resources only shrink, so a job shape that could not
// start (or found no start in the window) stays unable to for the rest of
// the pass; jobs needing at least as much in the same place are skipped
// without a search. This is what keeps a pass over tens of thousands of
// pending jobs affordable.
func (c *cluster) backfill(out []outcome, starts []Start) []Start {
	cfg := &c.snap.Config.BF
	q := c.buildQueue(out)
	c.stats.BFQueue = len(q)

	failNow := map[string][]shape{}
	failWin := map[string][]shape{}
	// failPreempt: shapes a preemption search found nothing for in this
	// pass. Searches only ever lose candidates as the pass preempts, so
	// a job of the same class and a shape no smaller is not searched
	// again (each search builds what-if states of the whole cluster).
	failPreempt := map[string][]shape{}
	perUser := map[uint32]int{}
	perPart := make([]int, len(c.snap.Partitions))
	resvPart := make([]int, len(c.snap.Partitions))
	tested, started := 0, 0
	seen := make([]bool, len(c.snap.Pending))

	for _, e := range q {
		o := &out[e.ji]
		if o.started {
			continue
		}
		j := &c.snap.Pending[e.ji]
		if !seen[e.ji] {
			if cfg.MaxJobTest > 0 && tested >= cfg.MaxJobTest {
				continue
			}
			if cfg.MaxJobUser > 0 && perUser[j.UserID] >= cfg.MaxJobUser {
				continue
			}
			seen[e.ji] = true
			tested++
			perUser[j.UserID]++
		}
		if cfg.MaxJobPart > 0 {
			if perPart[e.pi] >= cfg.MaxJobPart {
				continue
			}
			perPart[e.pi]++
		}
		o.tested = true
		c.stats.BFDepth++
		r, why := c.newRequest(j, e.pi)
		if why != ReasonNone {
			if !o.skipped {
				o.setReasonDesc(why, c.reasonDesc(j, e.pi, why))
			}
			continue
		}
		reduced := useTimeMin(r)
		key, sh := c.shapeOf(r)
		canStart := cfg.MaxJobStart == 0 || started < cfg.MaxJobStart
		// bf_licenses: a job whose licenses are not free for its run
		// cannot start now, whatever the nodes.
		licNow := c.licensesFit(r, 0, c.runBuckets(r))
		tried := canStart && licNow && !dominated(failNow[key], sh)
		if tried {
			c.stats.BFDepthTry++
			pl, ok := c.tryNowIndexed(r)
			if ok {
				r, pl = c.widen(r, pl, c.usable)
			} else if r.share {
				pl, ok = c.tryNowOver(r, c.usable.Words())
			}
			var a Allocation
			if ok {
				a, ok = c.allocate(r, pl)
			}
			if ok {
				st := Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a, Backfill: true}
				if reduced {
					st.TimeLimit = r.timeLimit
				}
				starts = append(starts, st)
				o.started = true
				started++
				if j.HetJobID != 0 {
					// backfill.c only plans a het job's components
					// and starts them together after the pass: the
					// planned nodes are reserved whole meanwhile.
					c.reserve(pl.nodes, c.now, c.now+r.duration)
				}
				continue
			}
			if a, ok := c.gangStart(j, e.pi, c.usable, starts); ok {
				starts = append(starts, Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a, Backfill: true})
				o.started = true
				started++
				continue
			}
			failNow[key] = addShape(failNow[key], sh)
		}
		why = c.whyNotCached(r, key, sh)
		if !o.skipped && (licNow || why != ReasonResources) {
			// Backfill leaves the reason of a job it could not start
			// for its licenses as it was, and of one the main pass
			// did not reach (bf_licenses).
			o.setReason(why)
		}
		if why == ReasonResources && c.mayPreemptFor(j) && !dominated(failPreempt[key], sh) {
			if c.preemptBackfill(j, e.pi, starts) {
				o.reason, o.desc = ReasonResources, "" // select_nodes' NODES_BUSY
				continue
			}
			failPreempt[key] = addShape(failPreempt[key], sh)
		}
		if why != ReasonResources || dominated(failWin[key], sh) {
			// Jobs that can never run here as things are (bad
			// constraints, required nodes down) get no reservation.
			continue
		}
		if !c.reserves(j) || (cfg.JobPartCountReserve > 0 && resvPart[e.pi] >= cfg.JobPartCountReserve) {
			// Tested for an immediate start only, as Slurm does.
			continue
		}
		if !tried {
			c.stats.BFDepthTry++
		}
		t, nodes, ok := c.earliest(r)
		if !ok {
			failWin[key] = addShape(failWin[key], sh)
			continue
		}
		// A job queued in several partitions is tested in each (one queue
		// entry per partition, as backfill.c) and reserved in each where
		// it cannot start now, unless bf_one_resv_per_job; its expected
		// start is the earliest of them.
		if !o.reserved || t < o.startTime {
			o.startTime = t
			o.part = r.part.Name
			o.schedNodes = nodes
			c.markPlanned(nodes)
		}
		if o.reserved && cfg.OneResvPerJob {
			continue
		}
		c.reserve(nodes, t, t+r.duration)
		c.takeLicenses(r, t)
		o.reserved = true
		resvPart[e.pi]++
	}
	return starts
}

// markPlanned adds the nodes of a job's expected start to the planned
// set. backfill.c does so whenever it records the job's sched_nodes (its
// first or an earlier start), before bf_one_resv_per_job is looked at.
func (c *cluster) markPlanned(nodes []int) {
	if c.planned == nil {
		c.planned = bitset.New(c.n)
	}
	for _, ni := range nodes {
		c.planned.Set(uint(ni))
	}
}

// useTimeMin applies --time-min as 22.05's backfill does: a job whose
// time-min is below its time limit is tested, started and reserved with
// the time-min as its limit, and a job it starts keeps that limit
// (backfill.c sets the limit to comp_time_limit, which is the time-min
// since 20.02.5, and _reset_job_time_limit only ever lowers it). It
// reports whether the limit was reduced.
func useTimeMin(r *request) bool {
	tm := r.job.TimeMin
	if tm == 0 || tm == NoValue32 || tm >= r.timeLimit {
		return false
	}
	r.timeLimit = tm
	r.duration = minutesToSeconds(tm)
	return true
}

// reserves reports whether a job that cannot start gets a reservation
// (bf_min_age_reserve, bf_min_prio_reserve); the others are only tested
// for an immediate start.
func (c *cluster) reserves(j *Job) bool {
	cfg := &c.snap.Config.BF
	if cfg.MinAgeReserve > 0 && c.now-j.SubmitTime < cfg.MinAgeReserve {
		return false
	}
	if cfg.MinPrioReserve > 0 && j.Priority < cfg.MinPrioReserve {
		return false
	}
	return true
}

// whyNotCached is whyNot with the "no node can ever run this" answer
// remembered per candidate set and shape, since it costs a scan.
func (c *cluster) whyNotCached(r *request, key string, sh shape) Reason {
	if len(r.reqList) > 0 {
		return c.whyNot(r)
	}
	// whyNot looks at sizes only, not at the run time.
	sh.duration = 0
	k := whyKey{key, sh}
	if v, ok := c.whyCache[k]; ok {
		return v
	}
	v := c.whyNot(r)
	c.whyCache[k] = v
	return v
}

type whyKey struct {
	key string
	sh  shape
}

// shape is the size of a request, for dominance between jobs with the same
// candidate key: a job at least as big in every respect as one that failed
// fails too.
type shape struct {
	tasks, minN, maxN  int
	memPerCPU, memNode uint64
	duration           int64
}

func (a shape) covers(b shape) bool {
	return b.tasks >= a.tasks && b.minN >= a.minN && b.maxN <= a.maxN &&
		b.memPerCPU >= a.memPerCPU && b.memNode >= a.memNode && b.duration >= a.duration
}

func dominated(fails []shape, s shape) bool {
	for _, f := range fails {
		if f.covers(s) {
			return true
		}
	}
	return false
}

func addShape(fails []shape, s shape) []shape {
	if len(fails) >= 32 {
		// Keep the list short; dropping entries only costs searches.
		fails = fails[1:]
	}
	return append(fails, s)
}

// shapeOf returns the key of everything that must be equal for dominance
// (where the job may run and how its per-task needs look) and its size.
func (c *cluster) shapeOf(r *request) (string, shape) {
	j := r.job
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%s|%d|%d|%t|%t|%t|%t|%d", r.pi, j.Features, r.cpt, r.ntpn, r.whole, r.memAll, j.Contiguous, r.memPerCPU > 0, j.MinCPUs)
	fmt.Fprintf(&b, "|%d|%d|%d", r.tpcore, r.thr, r.unit)
	if r.user {
		fmt.Fprintf(&b, "|u%d", j.UserID)
	}
	if r.share {
		fmt.Fprintf(&b, "|s%d", r.maxShare)
	}
	for _, g := range r.gres {
		fmt.Fprintf(&b, "|%s:%s:%d", g.Name, g.Type, g.Count)
	}
	if r.gpuJob > 0 {
		// --gpus-per-task bounds each node's tasks by its GPUs: the
		// same total split per task is another shape.
		fmt.Fprintf(&b, "|G%d/%d", r.gpuJob, j.GPUsPerTask)
	}
	if len(j.ReqNodes) > 0 || len(j.ExcNodes) > 0 {
		fmt.Fprintf(&b, "|%v|%v", j.ReqNodes, j.ExcNodes)
	}
	if c.lic != nil {
		// bf_licenses: jobs fail or succeed by their licenses too.
		for _, l := range j.Licenses {
			fmt.Fprintf(&b, "|L%s:%d", l.Name, l.Count)
		}
	}
	return b.String(), shape{
		tasks: r.tasks, minN: r.minN, maxN: r.maxN,
		memPerCPU: r.memPerCPU, memNode: r.memPerNode, duration: r.duration,
	}
}

// earliest finds the earliest start within the window at which the job
// fits, on nodes free of reservations for its whole run, and the nodes it
// would get. Start times are now + k*bf_resolution.
func (c *cluster) earliest(r *request) (int64, []int, bool) {
	if c.searches++; !c.fine && c.searches > refineAt {
		c.refineBlocks()
	}
	for a := 0; a < r.altCount(); a++ {
		if t, nodes, ok := c.earliestAlt(r, a); ok {
			return t, nodes, true
		}
	}
	return 0, nil, false
}

// step is a change of a node's usable task capacity at a bucket.
type step struct {
	b   int32
	cap int32
}

// topSum is the task capacity of the n nodes with the most room, from a
// histogram of node capacities.
func topSum(hist []int32, n int) int {
	sum := 0
	for c := len(hist) - 1; c > 0 && n > 0; c-- {
		k := min(int(hist[c]), n)
		sum += k * c
		n -= k
	}
	return sum
}

// placeFuture places a reservation; with bf_busy_nodes nodes busy now are
// preferred so idle ones stay free for jobs that can start at once.
func (c *cluster) placeFuture(r *request, cands, caps []int) (placement, bool) {
	if c.snap.Config.BF.BusyNodes {
		var bc, bk []int
		for i, ni := range cands {
			if !c.idle.Test(uint(ni)) {
				bc = append(bc, ni)
				bk = append(bk, caps[i])
			}
		}
		if len(bc) > 0 && len(bc) < len(cands) {
			if pl, ok := c.place(r, bc, bk); ok {
				return pl, true
			}
		}
	}
	return c.place(r, cands, caps)
}

// rawSteps appends to c.steps the node's task capacity for the request as
// a step function of the bucket: capacity grows as running work releases
// resources. Reservations are not applied (see earliestAlt).
func (c *cluster) rawSteps(r *request, ni int, gfree []uint64) {
	nb := int32(c.nb)
	cores, mem := c.freeCore[ni], c.freeMem[ni]
	for k, g := range r.gres {
		gfree[k] = c.gresFree(ni, g.Name, g.Type)
	}
	jobs := c.jobsOn[ni]
	// A node held whole, or by another user with user exclusivity, takes
	// nothing until all its jobs are gone; so does a whole-node request.
	gated := r.whole || c.excl[ni] || ((r.user || c.exclUser[ni]) && c.userOn[ni] != noUser && c.userOn[ni] != int64(r.job.UserID)) ||
		((r.share || c.shareCnt != nil) && c.shareBlocked(r, ni))
	maxCap := int32(r.tasks)
	if r.ntpn > 0 {
		maxCap = int32(r.ntpn)
	}
	// Free cores that core reservations starting later hold are out
	// until the last of those ends (resvcores.go).
	heldFree, heldEnd := c.futureHold(ni)
	cores -= heldFree
	start := len(c.steps)
	cur := int32(0)
	if !gated || jobs == 0 {
		cur = int32(c.capacityGres(r, ni, cores, mem, gfree))
	}
	c.steps = append(c.steps, step{0, cur})
	back := func(bk int32) {
		cores += heldFree
		heldFree = 0
		if gated && jobs > 0 {
			return
		}
		if v := int32(c.capacityGres(r, ni, cores, mem, gfree)); v != cur {
			cur = v
			if last := &c.steps[len(c.steps)-1]; last.b == bk {
				last.cap = v
			} else {
				c.steps = append(c.steps, step{bk, v})
			}
		}
	}
	rels := c.rel[ni]
	for k := range rels {
		if cur >= maxCap {
			break
		}
		rl := &rels[k]
		bk := rl.b
		if heldFree > 0 && heldEnd <= bk && heldEnd < nb {
			back(heldEnd)
		}
		if bk >= nb {
			break
		}
		cores += rl.cores
		mem += rl.mem
		if rl.gres >= 0 && len(r.gres) > 0 {
			for _, ga := range c.relGres[rl.gres] {
				sl := &c.gres[ni][ga.slot]
				for k, g := range r.gres {
					if sl.name == g.Name && (g.Type == "" || sl.typ == g.Type) {
						gfree[k] += ga.count
					}
				}
			}
		}
		if !rl.memOnly {
			jobs--
		}
		if gated && jobs > 0 {
			continue
		}
		v := int32(c.capacityGres(r, ni, cores, mem, gfree))
		if v == cur {
			continue
		}
		cur = v
		if last := &c.steps[len(c.steps)-1]; last.b == bk {
			last.cap = v
		} else {
			c.steps = append(c.steps, step{bk, v})
		}
	}
	if heldFree > 0 && heldEnd < nb && cur < maxCap {
		back(heldEnd)
	}
	// Drop a node that never has capacity in the window.
	for _, st := range c.steps[start:] {
		if st.cap > 0 {
			return
		}
	}
	c.steps = c.steps[:start]
}

// capacityGres is capacityWith with GRES availability given explicitly
// (what will be free at a future time).
func (c *cluster) capacityGres(r *request, ni int, cores int32, mem uint64, gfree []uint64) int {
	for k, g := range r.gres {
		if gfree[k] < g.Count {
			return 0
		}
	}
	// --gres-flags=enforce-binding: at most the cores of the sockets its
	// devices may come from (which devices are free when is not
	// tracked here; tryNowIndexed counts the job's cores now).
	if k := c.enforcedCores(r, ni, true); k == 0 {
		return 0
	} else if k > 0 {
		cores = min(cores, int32(k))
	}
	return c.capacityWith(r, ni, cores, mem, gresChecked)
}
