package sched

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/bits-and-blooms/bitset"
)

// The backfill search index. A search asks for the earliest bucket at
// which a job fits, given what running work releases and the
// reservations made so far. It used to rebuild, per search, every node's
// capacity step function and merge it with the node's reservations; now:
//
//   - capacity classes: a node's task capacity for a job over the window
//     (ignoring reservations) depends only on the node and on a few
//     properties of the request, which the class key holds. Each class
//     keeps every node's capacity at bucket 0 (with its count, total and
//     histogram) and, per bucket, the nodes whose capacity changes there;
//     the class is built once per pass and a node is recomputed only when
//     a job starts on it. The immediate-start test reads the same index.
//   - reservation events: reservations start on bucket boundaries, so in
//     bucket space a reservation occupies [k, e) and a job of m buckets
//     starting at b overlaps it iff k-m < b < e. Reservations are indexed
//     by k and by e, so a search adds and removes blocks as it sweeps the
//     buckets instead of merging every node's reservation list.
//
// The sweep visits buckets in order and keeps, per node, the capacity and
// the number of reservations blocking a start; a histogram of the
// unblocked capacities gives the cheap necessary condition, and only then
// are the candidate nodes listed for the placement, exactly as a per-node
// scan would list them (so plans are unchanged; testdata/plans.golden
// guards that). A bucket is tried only when something changed there.

// capClass is the capacity index of one request class.
type capClass struct {
	r    *request // a request of the class, to recompute nodes with
	mask *bitset.BitSet
	// Per node: capacity at bucket 0, and its steps (by bucket) at
	// stepOff[ni] .. stepOff[ni]+stepLen[ni], kept to remove the node's
	// events when it is recomputed.
	cap0    []int32
	stepOff []int32
	stepLen []int32
	steps   []step
	// evAt[b] lists the nodes whose capacity changes at bucket b (b >= 1),
	// with the capacity from there.
	evAt   [][]capEv
	maxCap int32
	// The nodes with capacity at bucket 0, their count, total and
	// histogram (hist0 by capacity, sized maxCap+1 or more).
	avail0 *bitset.BitSet
	cnt0   int
	total0 int64
	hist0  []int32
}

// sweepNode is a node's state in a search's sweep.
type sweepNode struct{ cap, blk int32 }

// capEv is a node's capacity from a bucket on.
type capEv struct{ node, cap int32 }

// resvSpan is one node's reservation in bucket space.
type resvSpan struct {
	node int32
	k, e int32 // [k, e): first bucket of the reservation, first bucket after it
}

// classKey names everything a node's capacity for r over the window
// depends on (see capacityGres, capacityWith and rawSteps), and the node
// set (partition, feature alternative, excluded nodes).
func (c *cluster) classKey(r *request, a int) string {
	j := r.job
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%d|%s|%d|%d|%d|%d|%t|%t|%t|%d|%d|%d|%d",
		r.pi, a, j.Features, r.cpt, r.ntpn, r.maxTasksPN, min(r.tasks, c.maxCPUs),
		r.whole, r.user, r.memAll, r.memPerCPU, r.memPerNode, j.MinCPUs, len(r.gres))
	if r.user || c.anyExclUser {
		fmt.Fprintf(&b, "|u%d", j.UserID)
	}
	for _, g := range r.gres {
		fmt.Fprintf(&b, "|%s:%s:%d", g.Name, g.Type, g.Count)
	}
	if len(j.ExcNodes) > 0 {
		fmt.Fprintf(&b, "|x%v", j.ExcNodes)
	}
	return b.String()
}

// maxClasses bounds the capacity classes kept in a pass.
const maxClasses = 256

// capClassFor returns the request's class index, building it on first use.
func (c *cluster) capClassFor(r *request, a int) *capClass {
	key := c.classKey(r, a)
	if cc, ok := c.classes[key]; ok {
		return cc
	}
	if len(c.classList) >= maxClasses {
		// Classes are caches: dropping them costs rebuilds only. This
		// bounds memory when nearly every job is its own class (per-user
		// exclusivity, distinct exclude lists).
		clear(c.classes)
		c.classList = c.classList[:0]
	}
	n := int(c.n)
	mask := c.base(r, a)
	mask.InPlaceIntersection(c.usable)
	cc := &capClass{
		r: r, mask: mask,
		cap0:    make([]int32, n),
		stepOff: make([]int32, n),
		stepLen: make([]int32, n),
		evAt:    make([][]capEv, c.nb),
		avail0:  bitset.New(c.n),
	}
	for i, ok := mask.NextSet(0); ok; i, ok = mask.NextSet(i + 1) {
		c.classNode(cc, int(i))
	}
	c.classes[key] = cc
	c.classList = append(c.classList, cc)
	return cc
}

// classNode (re)computes one node's capacity steps in a class.
func (c *cluster) classNode(cc *capClass, ni int) {
	r := cc.r
	if cap(c.gfree) < len(r.gres) {
		c.gfree = make([]uint64, len(r.gres))
	}
	c.steps = c.steps[:0]
	c.rawSteps(r, ni, c.gfree[:len(r.gres)])
	st := c.steps
	// Drop the node's old events.
	off := cc.stepOff[ni]
	for _, s := range cc.steps[off : off+cc.stepLen[ni]] {
		if s.b == 0 {
			continue
		}
		ev := cc.evAt[s.b]
		for k := range ev {
			if ev[k].node == int32(ni) {
				ev[k] = ev[len(ev)-1]
				cc.evAt[s.b] = ev[:len(ev)-1]
				break
			}
		}
	}
	if v := cc.cap0[ni]; v > 0 {
		cc.avail0.Clear(uint(ni))
		cc.cnt0--
		cc.total0 -= int64(v)
		cc.hist0[v]--
	}
	cc.cap0[ni] = 0
	cc.stepLen[ni] = 0
	if len(st) == 0 {
		return
	}
	if v := st[0].cap; v > 0 {
		cc.cap0[ni] = v
		cc.avail0.Set(uint(ni))
		cc.cnt0++
		cc.total0 += int64(v)
		if int(v) >= len(cc.hist0) {
			cc.hist0 = append(cc.hist0, make([]int32, int(v)+1-len(cc.hist0))...)
		}
		cc.hist0[v]++
	}
	cc.stepOff[ni] = int32(len(cc.steps))
	cc.stepLen[ni] = int32(len(st))
	cc.steps = append(cc.steps, st...)
	for _, s := range st {
		cc.maxCap = max(cc.maxCap, s.cap)
		if s.b > 0 {
			cc.evAt[s.b] = append(cc.evAt[s.b], capEv{node: int32(ni), cap: s.cap})
		}
	}
}

// refreshClasses recomputes the nodes a start changed in every class.
func (c *cluster) refreshClasses(nodes []int) {
	for _, cc := range c.classList {
		for _, ni := range nodes {
			if cc.mask.Test(uint(ni)) {
				c.classNode(cc, ni)
			}
		}
		// Recomputed nodes leave their old steps behind; compact when
		// the garbage dominates.
		if len(cc.steps) > 4*int(c.n)+1024 {
			c.compactClass(cc)
		}
	}
}

func (c *cluster) compactClass(cc *capClass) {
	live := 0
	for ni := range cc.stepLen {
		live += int(cc.stepLen[ni])
	}
	if len(cc.steps) < 2*live {
		return
	}
	steps := make([]step, 0, live)
	for ni := range cc.stepLen {
		off, n := cc.stepOff[ni], cc.stepLen[ni]
		cc.stepOff[ni] = int32(len(steps))
		steps = append(steps, cc.steps[off:off+n]...)
	}
	cc.steps = steps
}

// addSpans indexes new reservations of nodes from bucket k to e.
func (c *cluster) addSpans(nodes []int, k, e int32) {
	for _, ni := range nodes {
		sp := resvSpan{node: int32(ni), k: k, e: e}
		c.spanByK[k] = append(c.spanByK[k], sp)
		if e < int32(c.nb) {
			c.spanByE[e] = append(c.spanByE[e], sp)
		}
	}
}

// earliestAlt finds the earliest bucket at which the request fits in
// feature alternative a, on nodes free of reservations for its whole
// run, and the nodes it would get.
func (c *cluster) earliestAlt(r *request, a int) (int64, []int, bool) {
	cc := c.capClassFor(r, a)
	n := int(c.n)
	nb := int32(c.nb)
	m := (r.duration + c.res - 1) / c.res // buckets the job occupies
	if cap(c.sweepNodes) < n {
		c.sweepNodes = make([]sweepNode, n)
		c.sweepAvail = bitset.New(c.n)
	}
	// Per node: capacity at the bucket and how many reservations block
	// a start there, side by side for the random accesses below.
	ns := c.sweepNodes[:n]
	for i, v := range cc.cap0 {
		ns[i] = sweepNode{cap: v}
	}
	avail := c.sweepAvail
	cc.avail0.CopyFull(avail)
	if cap(c.hist) < int(cc.maxCap)+1 {
		c.hist = make([]int32, cc.maxCap+1)
	}
	hist := c.hist[:cc.maxCap+1]
	clear(hist)
	copy(hist, cc.hist0)
	cnt, total := cc.cnt0, cc.total0
	// off and on change a node's contribution.
	off := func(x *sweepNode, ni int32) {
		if v := x.cap; v > 0 {
			avail.Clear(uint(ni))
			hist[v]--
			cnt--
			total -= int64(v)
		}
	}
	on := func(x *sweepNode, ni int32) {
		if v := x.cap; v > 0 {
			avail.Set(uint(ni))
			hist[v]++
			cnt++
			total += int64(v)
		}
	}
	// A span [k, e) blocks the starts lo <= b < hi: lo = max(k-m+1, 0),
	// hi = min(e, nb).
	blocks := func(sp resvSpan) bool { return max(int64(sp.k)-m+1, 0) < int64(min(sp.e, nb)) }
	for k := int64(0); k < int64(nb) && k <= m-1; k++ {
		for _, sp := range c.spanByK[k] {
			if blocks(sp) {
				x := &ns[sp.node]
				if x.blk == 0 {
					off(x, sp.node)
				}
				x.blk++
			}
		}
	}
	dirty := true
	for b := int32(0); b < nb; b++ {
		if b > 0 {
			for _, sp := range c.spanByE[b] {
				if blocks(sp) {
					x := &ns[sp.node]
					x.blk--
					if x.blk == 0 {
						on(x, sp.node)
						dirty = true
					}
				}
			}
			if k := int64(b) + m - 1; k < int64(nb) {
				for _, sp := range c.spanByK[k] {
					if blocks(sp) {
						x := &ns[sp.node]
						if x.blk == 0 {
							off(x, sp.node)
							dirty = true
						}
						x.blk++
					}
				}
			}
			// Every event is a change: steps differ from the one before.
			for _, ev := range cc.evAt[b] {
				x := &ns[ev.node]
				if x.blk == 0 {
					off(x, ev.node)
					x.cap = ev.cap
					on(x, ev.node)
					dirty = true
				} else {
					x.cap = ev.cap
				}
			}
		}
		if !dirty {
			continue
		}
		dirty = false
		if cnt < r.minN || total < int64(r.tasks) || topSum(hist, r.maxN) < r.tasks {
			continue
		}
		cands, caps := c.scratchC[:0], c.scratchK[:0]
		for i, ok := avail.NextSet(0); ok; i, ok = avail.NextSet(i + 1) {
			cands = append(cands, int(i))
			caps = append(caps, int(ns[i].cap))
		}
		c.scratchC, c.scratchK = cands, caps
		if pl, ok := c.placeFuture(r, cands, caps); ok {
			return c.now + int64(b)*c.res, pl.nodes, true
		}
	}
	return 0, nil, false
}

// tryNowIndexed is tryNow for the backfill pass: the class index holds
// every node's capacity now (its capacity at bucket 0 is what capacityNow
// gives), so the scan reads one number per node.
func (c *cluster) tryNowIndexed(r *request) (placement, bool) {
	end := c.now + r.duration
	for a := 0; a < r.altCount(); a++ {
		cc := c.capClassFor(r, a)
		cands, caps := c.scratchC[:0], c.scratchK[:0]
		sum := 0
		for w, word := range cc.mask.Words() {
			for word != 0 {
				ni := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if k := cc.cap0[ni]; k > 0 && c.resvFirst[ni] >= end {
					cands = append(cands, ni)
					caps = append(caps, int(k))
					sum += int(k)
				}
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
