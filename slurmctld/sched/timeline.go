package sched

import (
	"fmt"
	"math/bits"
	"slices"
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
//     keeps every node's capacity at the start of each block of buckets
//     and, per bucket, the nodes whose capacity changes there; the class
//     is built once per pass and a node is recomputed only when a job
//     starts on it. The immediate-start test reads the same index.
//   - reservation events: reservations start on bucket boundaries, so in
//     bucket space a reservation occupies [k, e) and a job of m buckets
//     starting at b overlaps it iff k-m < b < e. Reservations are indexed
//     by k and by e, so a search adds and removes blocks as it sweeps the
//     buckets instead of merging every node's reservation list.
//
// A search skips the blocks of buckets where the block index
// (blockindex.go) shows the job cannot fit. In the others it visits
// buckets in order and keeps, for the nodes that can be used there, the
// capacity and the number of reservations blocking a start; a histogram
// of the unblocked capacities gives the cheap necessary condition, and
// only then are the candidate nodes listed for the placement, exactly as
// a per-node scan would list them (so plans are unchanged;
// testdata/plans.golden guards that). A bucket is tried only when
// something changed there, and jobs that need whole nodes are first
// checked by fullnodes.go's exact failure test.

// capClass is the capacity index of one request class.
type capClass struct {
	r    *request // a request of the class, to recompute nodes with
	mask *bitset.BitSet
	// Per node: its capacity steps (by bucket) at stepOff[ni] ..
	// stepOff[ni]+stepLen[ni], kept to remove the node's events when it
	// is recomputed.
	stepOff []int32
	stepLen []int32
	steps   []step
	live    int // steps in use in steps
	// evAt[b] lists the nodes whose capacity changes at bucket b (b >= 1),
	// with the capacity from there.
	evAt   [][]capEv
	maxCap int32
	// capStart[blk*n+ni] is the node's capacity at the first bucket of
	// block blk (row 0: now; row nBlk: at the end of the window).
	capStart []int32
	// mono: every node's capacity only grows over the window (as
	// releases only add resources), so a node without capacity at the
	// start of the next block has none in the block.
	mono bool
	// capPos[blk*words ..] is the bitmap of the nodes with capacity at
	// the start of block blk (row 0: now); with mono, the nodes with
	// capacity in block blk are those of row blk+1.
	capPos []uint64
	// capMax[ni*nBlk+blk] is the node's highest capacity in block blk
	// (by node: reservations update a node's blocks together).
	// built: the block index is kept up to date node by node (it is
	// filled at once when the class is built).
	built  bool
	capMax []int32
	// Block index (see blockindex.go): per block and run length level,
	// the nodes that can be used, their total highest capacity and how
	// many reach full, the most any node of the class can take.
	lvCnt  []int32
	lvTot  []int64
	lvFull []int32
	full   int32
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
	fmt.Fprintf(&b, "|%d|%d|%d", r.tpcore, r.thr, r.unit)
	if r.user || c.anyExclUser {
		fmt.Fprintf(&b, "|u%d", j.UserID)
	}
	if r.share {
		b.WriteString("|s")
	}
	for _, g := range r.gres {
		fmt.Fprintf(&b, "|%s:%s:%d", g.Name, g.Type, g.Count)
	}
	if j.GresEnforceBind {
		fmt.Fprintf(&b, "|e%d", r.gpuJob)
	}
	if len(j.ExcNodes) > 0 {
		fmt.Fprintf(&b, "|x%v", j.ExcNodes)
	}
	return b.String()
}

// maxClasses bounds the capacity classes kept in a pass, and
// classMemory the memory they take (their block index grows with the
// node count).
const (
	maxClasses  = 256
	classMemory = 256 << 20
)

// capClassFor returns the request's class index, building it on first use.
func (c *cluster) capClassFor(r *request, a int) *capClass {
	key := c.classKey(r, a)
	if cc, ok := c.classes[key]; ok {
		return cc
	}
	c.initBlocks()
	// Bytes per class: steps, events, and the block index.
	per := int(c.n)*(8+16+4*(2*c.nBlk+1)) + c.nBlk*(c.words*8+c.nLv*16) + c.nb*24
	if len(c.classList) >= min(maxClasses, max(classMemory/per, 8)) {
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
		stepOff:  make([]int32, n),
		stepLen:  make([]int32, n),
		evAt:     make([][]capEv, c.nb),
		capStart: make([]int32, (c.nBlk+1)*n),
		capPos:   make([]uint64, (c.nBlk+1)*c.words),
		capMax:   make([]int32, c.nBlk*n),
		mono:     true,
		lvCnt:    make([]int32, c.nBlk*c.nLv),
		lvTot:    make([]int64, c.nBlk*c.nLv),
		lvFull:   make([]int32, c.nBlk*c.nLv),
	}
	// No capacity exceeds the node's CPUs (so maxCPUs, which the class
	// key bounds the tasks by) or the exact tasks per node.
	cc.full = int32(min(r.tasks, c.maxCPUs))
	if r.ntpn > 0 {
		cc.full = int32(r.ntpn)
	}
	for i, ok := mask.NextSet(0); ok; i, ok = mask.NextSet(i + 1) {
		c.classNode(cc, int(i))
	}
	c.buildClassBlocks(cc)
	cc.built = true
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
	off := cc.stepOff[ni]
	if cc.built {
		c.classBlocks(cc, ni, st)
	}
	// Drop the node's old events.
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
	cc.live -= int(cc.stepLen[ni])
	cc.stepLen[ni] = 0
	if len(st) == 0 {
		return
	}
	cc.stepOff[ni] = int32(len(cc.steps))
	cc.stepLen[ni] = int32(len(st))
	cc.live += len(st)
	cc.steps = append(cc.steps, st...)
	for i, s := range st {
		if i > 0 && s.cap < st[i-1].cap {
			cc.mono = false
		}
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
		if len(cc.steps) > 4*int(c.n)+1024 && len(cc.steps) >= 2*cc.live {
			c.compactClass(cc)
		}
	}
}

func (c *cluster) compactClass(cc *capClass) {
	steps := make([]step, 0, cc.live)
	for ni := range cc.stepLen {
		off, n := cc.stepOff[ni], cc.stepLen[ni]
		cc.stepOff[ni] = int32(len(steps))
		steps = append(steps, cc.steps[off:off+n]...)
	}
	cc.steps = steps
}

// addSpans indexes new reservations of nodes from bucket k to e.
func (c *cluster) addSpans(nodes []int, k, e int32) {
	c.initBlocks()
	for _, ni := range nodes {
		sp := resvSpan{node: int32(ni), k: k, e: e}
		c.spanByK[k] = append(c.spanByK[k], sp)
		if e < int32(c.nb) {
			c.spanByE[e] = append(c.spanByE[e], sp)
		}
		c.spanAdded(ni, sp)
	}
}

// earliestAlt finds the earliest bucket at which the request fits in
// feature alternative a, on nodes free of reservations for its whole
// run, and the nodes it would get. Blocks where the job cannot fit are
// skipped (see blockindex.go); the others are swept bucket by bucket,
// following only the nodes that can be used there. Their state at a
// block's first bucket is computed from their capacity steps and
// reservations, then kept up to date by the events of each bucket, also
// into the next block when that one is swept too. The candidate sets are
// those of a sweep from bucket 0 over every node.
func (c *cluster) earliestAlt(r *request, a int) (int64, []int, bool) {
	cc := c.capClassFor(r, a)
	m := (r.duration + c.res - 1) / c.res // buckets the job occupies
	n := int(c.n)
	nb := int32(c.nb)
	if cap(c.sweepNodes) < n {
		c.sweepNodes = make([]sweepNode, n)
		c.sweepAvail = bitset.New(c.n)
	}
	c.failC, c.failK = c.failC[:0], c.failK[:0]
	c.failed = false
	// Per node: capacity at the bucket and how many reservations block
	// a start there, side by side for the random accesses below.
	ns := c.sweepNodes[:n]
	avail := c.sweepAvail
	if cap(c.hist) < int(cc.maxCap)+1 {
		c.hist = make([]int32, cc.maxCap+1)
	}
	hist := c.hist[:cc.maxCap+1]
	cnt, total := 0, int64(0)
	// fullw: the available nodes at the class's full capacity.
	if len(c.sweepFull) < c.words {
		c.sweepFull = make([]uint64, c.words)
	}
	fullw := c.sweepFull[:c.words]
	full := cc.full
	// The last full-node failure's witness (see fullnodes.go).
	wit := &c.fnWit
	wit.ok = false
	wit.changed = wit.changed[:0]
	// off and on change a node's contribution.
	off := func(x *sweepNode, ni int32) {
		if v := x.cap; v > 0 {
			avail.Clear(uint(ni))
			hist[v]--
			cnt--
			total -= int64(v)
			if v == full {
				fullw[ni/64] &^= 1 << (ni % 64)
			}
			if wit.ok {
				wit.changed = append(wit.changed, ni)
			}
		}
	}
	on := func(x *sweepNode, ni int32) {
		if v := x.cap; v > 0 {
			avail.Set(uint(ni))
			hist[v]++
			cnt++
			total += int64(v)
			if v == full {
				fullw[ni/64] |= 1 << (ni % 64)
			}
			if wit.ok {
				wit.changed = append(wit.changed, ni)
			}
		}
	}
	// A span [k, e) blocks the starts lo <= b < hi: lo = max(k-m+1, 0),
	// hi = min(e, nb); it blocks some start iff lo < hi.
	spanLo := func(sp resvSpan) int64 { return max(int64(sp.k)-m+1, 0) }
	// poss: the nodes followed (tested inline below: this is the
	// innermost loop of a pass).
	poss := c.poss
	fullShape := c.fullNodesShape(r, cc)
	dirty := false
	// advance applies the events of bucket b to the nodes followed.
	advance := func(b int32) {
		for _, sp := range c.spanByE[b] {
			if poss[sp.node>>6]&(1<<(sp.node&63)) != 0 && max(int64(sp.k)-m+1, 0) < int64(min(sp.e, nb)) {
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
				if poss[sp.node>>6]&(1<<(sp.node&63)) != 0 && max(int64(sp.k)-m+1, 0) < int64(min(sp.e, nb)) {
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
			if poss[ev.node>>6]&(1<<(ev.node&63)) == 0 {
				continue
			}
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
	following := false // the nodes followed are up to date at lo-1
	for blk := 0; blk < c.nBlk; blk++ {
		if m >= 1 && !c.mayFit(cc, r, blk, m) {
			following = false
			continue
		}
		lo := int32(blk) * c.blkLen
		hi := min(lo+c.blkLen, nb)
		if following {
			advance(lo)
		} else {
			clear(poss)
			avail.ClearAll()
			clear(fullw)
			wit.ok = false
			clear(hist)
			cnt, total = 0, 0
			dirty = true
		}
		// Follow the nodes that can be used in this block, from lo.
		row := c.maxFree[blk*n : (blk+1)*n]
		row0 := c.runStart[blk*n : (blk+1)*n]
		cs := cc.capStart[blk*n : (blk+1)*n]
		ce := cc.capStart[(blk+1)*n : (blk+2)*n]
		var lev []uint64
		if m >= 1 {
			lev = c.levWords(blk, c.bitLevel(c.runLevel(m)))
		}
		var pos []uint64
		if cc.mono {
			pos = cc.capPos[(blk+1)*c.words : (blk+2)*c.words]
		}
		for w, word := range cc.mask.Words() {
			if lev != nil {
				word &= lev[w]
			}
			if pos != nil {
				word &= pos[w]
			}
			for word != 0 {
				ni := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if poss[w]&(1<<(ni&63)) != 0 {
					continue // followed from an earlier block
				}
				if run := row[ni]; run != freeInf && int64(run) < m {
					continue // no start in the block is free of reservations
				}
				if cc.stepLen[ni] == 0 || (cc.mono && ce[ni] == 0) {
					continue // no capacity in the block
				}
				poss[w] |= 1 << (ni & 63)
				blkd := int32(0)
				if run := row0[ni]; run != freeInf && int64(run) < m {
					// Blocked at lo: count the reservations that block it.
					for _, sp := range c.nodeSpans[ni] {
						if spanLo(sp) <= int64(lo) && lo < min(sp.e, nb) {
							blkd++
						}
					}
				}
				x := &ns[ni]
				*x = sweepNode{cap: cs[ni], blk: blkd}
				if blkd == 0 && x.cap > 0 {
					on(x, int32(ni))
					dirty = true
				}
			}
		}
		for b := lo; b < hi; b++ {
			if b > lo {
				advance(b)
			}
			dirty = dirty || (r.gpuJob > 0 && c.gresReleasedAt(b))
			if !dirty || !c.licensesFit(r, int(b), int(m)) {
				// Without its licenses (bf_licenses) the job cannot
				// start here; dirty stays, so a later bucket where
				// they are free is tried.
				continue
			}
			dirty = false
			if cnt < r.minN || total < int64(r.tasks) || topSum(hist, r.maxN) < r.tasks {
				continue
			}
			if fullShape {
				if wit.ok && c.stillFails(avail.Words(), fullw, ns, full, r.minN) {
					wit.changed = wit.changed[:0]
					continue
				}
				wit.ok = false
				wit.changed = wit.changed[:0]
				if c.fullNodesFailSet(avail.Words(), fullw, ns, full, r.minN) {
					continue
				}
			}
			cands, caps := c.scratchC[:0], c.scratchK[:0]
			for i, ok := avail.NextSet(0); ok; i, ok = avail.NextSet(i + 1) {
				cands = append(cands, int(i))
				caps = append(caps, int(ns[i].cap))
			}
			c.scratchC, c.scratchK = cands, caps
			if c.failed && r.gpuJob == 0 && slices.Equal(cands, c.failC) && slices.Equal(caps, c.failK) {
				// The same candidates as the last failed try (the state a
				// block starts with may equal the one before it).
				continue
			}
			c.gpuAt = gpuAtBucket + b
			pl, ok := c.placeFuture(r, cands, caps)
			c.gpuAt = gpuAtNow
			if ok {
				return c.now + int64(b)*c.res, pl.nodes, true
			}
			// Keep the failed lists; the next ones are built in the old.
			c.failC, c.scratchC = cands, c.failC
			c.failK, c.scratchK = caps, c.failK
			c.failed = true
		}
		following = true
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
		// For placeOneBlock's requests, its choice is made on the way:
		// the block of consecutive candidates with the least capacity
		// holding the tasks (the shortest, then the first).
		oneBlock := c.oneWeight && r.oneBlock()
		bestLo, bestN, bestCap := -1, 0, 0
		runLo, runSum := 0, 0
		endRun := func(pos int) {
			if n := pos - runLo; n > 0 && runSum >= r.tasks && (bestLo < 0 || runSum < bestCap || (runSum == bestCap && n < bestN)) {
				bestLo, bestN, bestCap = runLo, n, runSum
			}
			runLo, runSum = pos, 0
		}
		// A node free of reservations until end has a free run of at
		// least m buckets from now: the block index drops the others.
		var lev []uint64
		if m := (r.duration + c.res - 1) / c.res; m >= 1 {
			lev = c.levWords(0, c.bitLevel(c.runLevel(m)))
		}
		now := cc.capPos[:c.words] // capacity now
		for w, word := range cc.mask.Words() {
			// Nodes of core reservations starting later: the
			// timeline keeps off their cores, the test is the job's
			// own run (resvcores.go).
			fut := uint64(0)
			if c.futureNodes != nil {
				fut = word & c.futureNodes.Words()[w]
			}
			word = word&now[w] | fut
			if lev != nil {
				word &= lev[w]
			}
			for word != 0 {
				ni := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				k := cc.capStart[ni]
				if (fut != 0 && c.coreFuture[ni] != nil) || (r.job.GresEnforceBind && len(c.nodes[ni].GresBind) > 0) {
					// The class counts enforce-binding on the node's
					// totals only; which sockets' devices are free
					// now decides the cores the job may use.
					k = int32(c.capacityNow(r, ni))
				}
				if k > 0 && c.resvFirst[ni] >= end {
					if len(cands) > 0 && ni != cands[len(cands)-1]+1 {
						endRun(len(cands))
					}
					cands = append(cands, ni)
					caps = append(caps, int(k))
					sum += int(k)
					runSum += int(k)
				}
			}
		}
		c.scratchC, c.scratchK = cands, caps
		if len(cands) < r.minN || sum < r.tasks {
			continue
		}
		if endRun(len(cands)); oneBlock && bestLo >= 0 {
			// What place would do (one weight: placeOnce, then its
			// one-block step).
			if pl, ok := c.placeFrom(r, cands, caps, bestLo); ok {
				return pl, true
			}
		}
		if pl, ok := c.place(r, cands, caps); ok {
			return pl, true
		}
	}
	return placement{}, false
}
