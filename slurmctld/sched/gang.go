package sched

import (
	"cmp"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// Gang preemption (PreemptMode=...,GANG with preempt/partition_prio): a job
// that finds no free cores may be placed on cores that jobs of lower
// PriorityTier partitions hold, as select/cons_tres's _job_test does in
// gang mode (steps 2 and 3: the cores of partitions of a higher tier or
// with PreemptMode=OFF stay out of reach, those of its own tier too, those
// of lower tiers count as free). It starts at once; the controller's gang
// logic then suspends (or, for other modes, preempts) the jobs it
// overlaps. Their memory and GRES stay theirs: only cores are shared.
// Among the lower tier partitions, from the highest tier down, as many as
// the job still fits without keep their cores (the job avoids them to the
// extent it can).

// gangStart places job j in partition pi within mask on cores of lower
// tier jobs, when gang preemption is on; starts are the pass's starts so
// far. The allocation is taken from the pass's state.
func (c *cluster) gangStart(j *Job, pi int, mask *bitset.BitSet, starts []Start) (Allocation, bool) {
	pc := &c.snap.Config.Preempt
	// A het job's components start together from backfill's plan, and
	// gang.c never holds het jobs: none starts on another job's cores.
	if !pc.Enabled || !pc.Gang || c.snap.Config.WholeNodes || j.HetJobID != 0 {
		return Allocation{}, false
	}
	lower := c.gangLower(pi)
	if len(lower) == 0 {
		return Allocation{}, false
	}
	strip := make(map[string]bool, len(lower))
	for _, qi := range lower {
		strip[c.snap.Partitions[qi].Name] = true
	}
	if !c.gangCovers(pi, strip, starts) {
		// Nothing of theirs on the partition's nodes: no what-if
		// state to build (backfill comes here for every job that
		// does not fit).
		return Allocation{}, false
	}
	if gangPrefilter && !c.gangMayFit(j, pi, mask, strip, starts) {
		return Allocation{}, false
	}
	a, ok := c.gangTry(j, pi, mask, starts, strip)
	if !ok {
		return Allocation{}, false
	}
	for _, qi := range lower {
		delete(strip, c.snap.Partitions[qi].Name)
		if gangPrefilter && !c.gangMayFit(j, pi, mask, strip, starts) {
			break
		}
		b, ok := c.gangTry(j, pi, mask, starts, strip)
		if !ok {
			break
		}
		a = b
	}
	if r, why := c.newRequest(j, pi); why == ReasonNone {
		c.takeLicenses(r, c.now)
	}
	c.take(&a, a.End)
	nodes := make([]int, 0, len(a.Nodes))
	for _, na := range a.Nodes {
		c.sortReleases(na.Node)
		nodes = append(nodes, na.Node)
	}
	c.refreshClasses(nodes)
	return a, true
}

// gangPrefilter turns gangMayFit on; tests turn it off to compare the
// decisions made with and without it.
var gangPrefilter = true

// gangMayFit is a necessary condition for gangTry to succeed, checked on
// the pass's own state so that backfill does not build a what-if cluster
// for every job that does not fit (under the controller's write lock).
// Stripping the jobs of the partitions in strip gives back cores only:
// their memory and GRES stay, so the what-if state has, per node, exactly
// the memory and GRES free here (both states hold the snapshot's running
// jobs and the pass's starts) and at most the cores free here plus those
// the stripped jobs hold (all the node's cores when sharing jobs or core
// reservations make that count unsure). capacityWith only grows with free
// cores, and every other test of capacityNow (whole-node jobs, users,
// sharing, core reservations) only lowers a node's capacity, so the bound
// below is never under what tryNow or tryNowOver would find in the
// what-if state; if it cannot hold the job, neither can they.
func (c *cluster) gangMayFit(j *Job, pi int, mask *bitset.BitSet, strip map[string]bool, starts []Start) bool {
	r, why := c.newRequest(j, pi)
	if why != ReasonNone {
		return true // let gangTry decide, as without the filter
	}
	stripped := c.strippedCores(r, strip, starts)
	end := c.now + r.duration
	for a := 0; a < r.altCount(); a++ {
		b := c.base(r, a)
		b.InPlaceIntersection(mask)
		caps := c.scratchK[:0]
		for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
			ni := int(i)
			if c.resvFirst[ni] < end {
				continue
			}
			cores := int32(c.nodes[ni].Cores())
			if stripped != nil {
				cores = min(cores, max(c.freeCore[ni], 0)+stripped[ni])
			}
			if k := c.capacityWith(r, ni, cores, c.freeMem[ni], gresFree); k > 0 {
				caps = append(caps, k)
			}
		}
		c.scratchK = caps
		most := len(caps)
		if r.unit == 0 {
			// distributeCPUs may lift a node to the job's minimum
			// CPUs: there only the total is a bound.
			most = r.maxN
		}
		if len(caps) >= r.minN && topCaps(caps, most) >= r.tasks {
			return true
		}
	}
	return false
}

// topCaps is the sum of the n largest capacities: no placement on at most
// n of the nodes holds more tasks (distribute gives a node no more than
// its capacity). It reorders caps.
func topCaps(caps []int, n int) int {
	if n < len(caps) {
		slices.SortFunc(caps, func(x, y int) int { return cmp.Compare(y, x) })
		caps = caps[:n]
	}
	sum := 0
	for _, k := range caps {
		sum += k
	}
	return sum
}

// strippedCores counts, per node, the cores the jobs of the partitions in
// strip hold (whole-node jobs keep theirs), or is nil when free cores
// plus those do not bound what the what-if state has free: with sharing
// jobs (a core counts once however many hold it, and an oversubscribing
// request may use held cores) or core reservations held in the pass
// (the what-if state does not hold them).
func (c *cluster) strippedCores(r *request, strip map[string]bool, starts []Start) []int32 {
	if r.share || c.shareCnt != nil {
		return nil
	}
	for i := range c.snap.Reservations {
		if c.snap.Reservations[i].partial() {
			return nil
		}
	}
	out := make([]int32, c.n)
	add := func(a *Allocation) {
		if !strip[a.Partition] || a.Exclusive {
			return
		}
		for _, na := range a.Nodes {
			if na.Node >= 0 && uint(na.Node) < c.n {
				out[na.Node] += int32(len(na.Cores))
			}
		}
	}
	for i := range c.snap.Running {
		add(&c.snap.Running[i])
	}
	for i := range starts {
		add(&starts[i].Alloc)
	}
	return out
}

// gangLower lists the partitions whose jobs' cores a job of partition pi
// may run on: a lower tier and a PreemptMode other than OFF, highest tier
// first (cons_tres keeps its partitions by tier, highest first).
func (c *cluster) gangLower(pi int) []int {
	tier := c.snap.Partitions[pi].PriorityTier
	var out []int
	for qi := range c.snap.Partitions {
		q := &c.snap.Partitions[qi]
		if q.PriorityTier < tier && q.PreemptMode != PreemptOff {
			out = append(out, qi)
		}
	}
	slices.SortStableFunc(out, func(x, y int) int {
		return cmp.Compare(c.snap.Partitions[y].PriorityTier, c.snap.Partitions[x].PriorityTier)
	})
	return out
}

// gangCovers reports whether a job of the partitions in strip holds cores
// on a node of partition pi.
func (c *cluster) gangCovers(pi int, strip map[string]bool, starts []Start) bool {
	on := func(a *Allocation) bool {
		if !strip[a.Partition] || a.Exclusive {
			return false
		}
		for _, na := range a.Nodes {
			if na.Node >= 0 && (len(na.Cores) > 0 || na.CPUs > 0) && c.partBits[pi].Test(uint(na.Node)) {
				return true
			}
		}
		return false
	}
	for i := range c.snap.Running {
		if on(&c.snap.Running[i]) {
			return true
		}
	}
	for i := range starts {
		if on(&starts[i].Alloc) {
			return true
		}
	}
	return false
}

// gangTry tests job j in a what-if state of the pass where the jobs of the
// partitions in strip hold no cores (their memory and GRES stay), and
// returns the allocation it would get.
func (c *cluster) gangTry(j *Job, pi int, mask *bitset.BitSet, starts []Start, strip map[string]bool) (Allocation, bool) {
	s := *c.snap
	s.Pending = nil
	s.Running = make([]Allocation, 0, len(c.snap.Running)+len(starts))
	add := func(a Allocation) {
		// A whole-node job keeps its nodes whatever its tier
		// (_verify_node_state: a node in exclusive use).
		if strip[a.Partition] && !a.Exclusive {
			a = coresOff(a)
		}
		s.Running = append(s.Running, a)
	}
	for _, a := range c.snap.Running {
		add(a)
	}
	for _, st := range starts {
		add(st.Alloc)
	}
	w := newCluster(&s)
	copy(w.resvFirst, c.resvFirst)
	r, why := w.newRequest(j, pi)
	if why != ReasonNone {
		return Allocation{}, false
	}
	pl, ok := w.tryNow(r, mask)
	if !ok && r.share {
		pl, ok = w.tryNowOver(r, mask.Words())
	}
	if !ok {
		return Allocation{}, false
	}
	return w.allocate(r, pl)
}

// coresOff is an allocation with its cores given up: what stays is memory
// and GRES, outside of any partition's sharing rules (as a job suspended
// by scontrol is seen).
func coresOff(a Allocation) Allocation {
	a.Exclusive, a.ExclusiveUser, a.Shared, a.Partition = false, false, true, ""
	nodes := make([]NodeAlloc, len(a.Nodes))
	for k, na := range a.Nodes {
		na.Cores, na.CPUs = nil, 0
		nodes[k] = na
	}
	a.Nodes = nodes
	return a
}
