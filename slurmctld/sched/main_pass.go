package sched

import (
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// MainPass is Slurm's main scheduling loop (schedule()): jobs in priority
// order; in each partition the first job that cannot start for lack of
// resources stops the partition, and its nodes are withheld from the
// later jobs of the pass, so lower priority jobs never overtake it here.
// Overtaking is the backfill pass's business.
func MainPass(s *Snapshot) *Plan { return runPasses(s, true, false) }

// Backfill runs only the backfill pass (Slurm runs it on its own interval,
// bf_interval, after the main pass has had its chance).
func Backfill(s *Snapshot) *Plan { return runPasses(s, false, true) }

// Schedule runs the main pass and, when s.Config.Backfill is set, the
// backfill pass over what the main pass left, and returns the merged plan.
func Schedule(s *Snapshot) *Plan { return runPasses(s, true, s.Config.Backfill) }

// runPasses runs the passes on one working state.
func runPasses(s *Snapshot, main, backfill bool) *Plan {
	c := newCluster(s)
	c.initLicenses()
	out := make([]outcome, len(s.Pending))
	var starts []Start
	resv := hasReservations(s)
	if resv {
		starts = c.resvPass(out)
	}
	if main {
		if resv {
			starts = append(starts, c.mainPass(out)...)
		} else {
			starts = c.mainPass(out)
		}
	}
	if backfill {
		if resv {
			c.resvSpans()
		}
		starts = c.backfill(out, starts)
	}
	if resv {
		c.resvReasons(out)
	}
	p := c.plan(starts, out)
	c.stats.BFTable = 1 + len(c.bounds)
	p.Stats = c.stats
	p.Backfill = backfill
	return p
}

func (c *cluster) mainPass(out []outcome) []Start {
	var starts []Start
	q := c.buildQueue(out)
	c.stats.MainQueue = len(q)
	blocked := make([]bool, len(c.snap.Partitions))
	avail := c.usable.Clone()
	for k, e := range q {
		o := &out[e.ji]
		if o.started {
			continue
		}
		c.stats.MainDepth++
		j := &c.snap.Pending[e.ji]
		if j.HetJobID != 0 {
			// schedule() leaves het jobs to backfill, without a
			// reason, and stops the partition at them (fail_by_part).
			if !blocked[e.pi] {
				blocked[e.pi] = true
				avail.InPlaceDifference(c.partBits[e.pi])
			}
			continue
		}
		if blocked[e.pi] {
			o.setReason(ReasonPriority)
			continue
		}
		r, why := c.newRequest(j, e.pi)
		if why != ReasonNone {
			o.setReasonDesc(why, c.reasonDesc(j, e.pi, why))
			continue
		}
		if c.lic != nil && j.LicBlocked {
			// bf_licenses: schedule() stops at a job blocked on
			// licenses and leaves the rest to backfill.
			c.skipRest(out, q[k+1:])
			break
		}
		pl, ok := c.tryNow(r, avail)
		if ok {
			r, pl = c.widen(r, pl, avail)
		} else if r.share {
			pl, ok = c.tryNowOver(r, avail.Words())
		}
		var a Allocation
		if ok {
			a, ok = c.allocate(r, pl)
		}
		if ok {
			starts = append(starts, Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a})
			o.started = true
			continue
		}
		if a, ok := c.gangStart(j, e.pi, avail, starts); ok {
			starts = append(starts, Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a})
			o.started = true
			continue
		}
		why = c.whyNot(r)
		if why == ReasonResources {
			c.preempt(j, e.pi, avail, starts)
		}
		o.setReason(why)
		if why == ReasonResources {
			blocked[e.pi] = true
			avail.InPlaceDifference(c.partBits[e.pi])
		}
	}
	return starts
}

// tryNow looks for a placement starting now within mask that keeps clear
// of every backfill reservation during the job's run.
func (c *cluster) tryNow(r *request, mask *bitset.BitSet) (placement, bool) {
	end := c.now + r.duration
	free := c.hasFree
	if r.whole {
		free = c.idle
	}
	for a := 0; a < r.altCount(); a++ {
		b := c.base(r, a)
		b.InPlaceIntersection(mask)
		b.InPlaceIntersection(free)
		cands, caps := c.scratchC[:0], c.scratchK[:0]
		sum := 0
		for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
			ni := int(i)
			if c.resvFirst[ni] < end {
				continue
			}
			k := c.capacityNow(r, ni)
			if k > 0 {
				cands = append(cands, ni)
				caps = append(caps, k)
				sum += k
			}
		}
		c.scratchC, c.scratchK = cands, caps
		if len(cands) < r.minN || sum < r.tasks {
			continue
		}
		if pl, ok := c.place(r, cands, caps); ok {
			return pl, true
		}
	}
	return placement{}, false
}

// whyNot names the reason a job that could not start waits: its
// constraints cannot be met by any node of the partition, a node it
// requires is unavailable, or resources are busy.
func (c *cluster) whyNot(r *request) Reason {
	for _, ni := range r.reqList {
		if !c.usable.Test(uint(ni)) {
			return ReasonReqNodeNotAvail
		}
	}
	if b, ok := c.emptyFit(r); ok {
		if b.IntersectionCardinality(c.usable) < uint(r.minN) {
			return ReasonReqNodeNotAvail
		}
		return ReasonResources
	}
	return ReasonBadConstraints
}

// emptyFit reports whether the job could run on the partition's nodes
// were they all empty and up, with the nodes of the feature alternative
// that fits.
func (c *cluster) emptyFit(r *request) (*bitset.BitSet, bool) {
	for a := 0; a < r.altCount(); a++ {
		b := c.base(r, a)
		if !r.job.Contiguous && len(r.counts) == 0 && len(r.reqList) == 0 && r.gpuJob == 0 {
			// Nodes of one configuration are alike when empty: count
			// them with bitmap operations instead of visiting each.
			if c.fitsByConfig(r, b) {
				return b, true
			}
			continue
		}
		var cands, caps []int
		for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
			if k := c.capacityWith(r, int(i), int32(c.nodes[i].EffCores()), c.nodes[i].AvailMem(), gresTotal); k > 0 {
				cands = append(cands, int(i))
				caps = append(caps, k)
			}
		}
		c.gpuAt = gpuAtTotal
		_, ok := c.place(r, cands, caps)
		c.gpuAt = gpuAtNow
		if ok {
			return b, true
		}
	}
	return nil, false
}

// fitsByConfig reports whether the request fits the nodes of b, all empty
// and up, counting nodes per node configuration.
func (c *cluster) fitsByConfig(r *request, b *bitset.BitSet) bool {
	type group struct{ cap, n int }
	var groups []group
	cnt := 0
	for _, cf := range c.configs {
		n := int(b.IntersectionCardinality(cf.bits))
		if n == 0 {
			continue
		}
		nd := &c.nodes[cf.rep]
		k := c.capacityWith(r, cf.rep, int32(nd.EffCores()), nd.AvailMem(), gresTotal)
		if k == 0 {
			continue
		}
		groups = append(groups, group{k, n})
		cnt += n
	}
	if cnt < r.minN {
		return false
	}
	slices.SortFunc(groups, func(x, y group) int { return y.cap - x.cap })
	left, sum := r.maxN, 0
	for _, g := range groups {
		take := min(g.n, left)
		sum += take * g.cap
		left -= take
	}
	return sum >= r.tasks
}
