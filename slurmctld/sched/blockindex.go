package sched

import (
	"math"
	"math/bits"
)

// The block index lets a backfill search skip, without replaying events,
// the stretches of the window where the job cannot fit. Buckets are
// grouped in blocks of blkLen; for every block the index knows, per
// node, the longest run of reservation-free buckets that starts in the
// block (maxFree, the same for every request class) and, per capacity
// class, the node's highest capacity in the block. A node can be used
// for a job of m buckets somewhere in a block only if its run there is at
// least m, and then with at most that capacity; per class and block, the
// nodes are counted by run length level (count, capacity total, nodes at
// the class's full capacity), which gives a necessary condition for the
// job to fit anywhere in the block. The search sweeps only the blocks
// that pass it, and only over the nodes that can be used there (found
// through per-block bitmaps of the nodes by run length level), so it
// sees exactly the candidate sets a full sweep sees at those buckets.
//
// In bucket space a node is free for a start at b for m buckets iff no
// reservation [k, e) has e > b and k < b+m, i.e. iff the run from b to
// the first reservation not ended by b is at least m.

// Block sizes: blocks cost memory and upkeep per block and node, and
// save work per search. A pass whose queue promises many searches
// starts with fine blocks (mediumBuckets for a middling queue), others
// with coarse ones, refined once the pass has made refineAt searches;
// long windows get longer blocks so that there are at most maxBlocks.
// Only speed depends on this: every block size gives the same plans.
const (
	coarseBuckets = 128
	mediumBuckets = 64
	fineBuckets   = 32
	maxBlocks     = 64
)

// refineAt, and testBlockBuckets when set, are variables for the tests
// that check that block sizes and refinement leave plans unchanged.
var (
	refineAt         = 2000
	testBlockBuckets = 0
)

// blockBuckets chooses the block size from the searches the pass may
// make: at most one per pending job (per partition), fewer with
// bf_max_job_test or bf_job_part_count_reserve.
func (c *cluster) blockBuckets() int {
	if c.fine {
		return fineBuckets
	}
	if testBlockBuckets > 0 {
		return testBlockBuckets
	}
	cfg := &c.snap.Config.BF
	s := len(c.snap.Pending)
	if cfg.MaxJobTest > 0 {
		s = min(s, cfg.MaxJobTest)
	}
	if cfg.JobPartCountReserve > 0 {
		// Searches that find no start do not count against it.
		s = min(s, 4*cfg.JobPartCountReserve*len(c.snap.Partitions))
	}
	switch {
	case s >= 20000:
		c.fine = true
		return fineBuckets
	case s >= 5000:
		return mediumBuckets
	}
	return coarseBuckets
}

// freeInf is a run that no reservation ends.
const freeInf = math.MaxInt32

// initBlocks sets up the class-independent part of the index on the
// first backfill search of a pass, and again after refineBlocks.
func (c *cluster) initBlocks() {
	if c.maxFree != nil {
		return
	}
	if c.lvOf == nil {
		c.words = (int(c.n) + 63) / 64
		c.nodeSpans = make([][]resvSpan, c.n)
		c.poss = make([]uint64, c.words)
		// Run length levels, about 9/8 apart; the last one is "never
		// ends".
		var thr []int
		for t := 1; t <= c.nb; t = max(t+1, t*9/8) {
			thr = append(thr, t)
		}
		c.nLv = len(thr) + 1
		c.lvOf = make([]uint8, c.nb+1)
		lv := 0
		for r := 1; r <= c.nb; r++ {
			for lv+1 < len(thr) && thr[lv+1] <= r {
				lv++
			}
			c.lvOf[r] = uint8(lv)
		}
		c.nBLv = c.bitLevel(c.nLv-1) + 1
	}
	c.blkLen = int32(max(c.blockBuckets(), (c.nb+maxBlocks-1)/maxBlocks))
	c.nBlk = (c.nb + int(c.blkLen) - 1) / int(c.blkLen)
	n := int(c.n)
	c.maxFree = make([]int32, c.nBlk*n)
	c.runStart = make([]int32, c.nBlk*n)
	for i := range c.maxFree {
		c.maxFree[i] = freeInf
		c.runStart[i] = freeInf
	}
	c.blkScratch = make([]int32, 4*c.nBlk)
	// Every run is endless for now: every node is in every level.
	c.levBits = make([]uint64, c.nBlk*c.nBLv*c.words)
	for i := range c.levBits {
		c.levBits[i] = ^uint64(0)
	}
	// Then the reservations made so far (after refineBlocks).
	for ni, l := range c.nodeSpans {
		if len(l) == 0 {
			continue
		}
		nf, first := c.blkScratch[2*c.nBlk:3*c.nBlk], c.blkScratch[3*c.nBlk:4*c.nBlk]
		c.nodeFree(ni, nf, first, 0, c.nBlk)
		for blk, run := range nf {
			c.maxFree[blk*n+ni] = run
			c.runStart[blk*n+ni] = first[blk]
			for bl := c.bitLevel(c.runLevelOf(run)) + 1; bl < c.nBLv; bl++ {
				c.levWords(blk, bl)[ni/64] &^= 1 << (ni % 64)
			}
		}
	}
}

// refineBlocks switches the pass to fine blocks: the index is rebuilt
// on the next search, classes included.
func (c *cluster) refineBlocks() {
	c.fine = true
	c.maxFree = nil
	clear(c.classes)
	c.classList = c.classList[:0]
}

// runLevelOf is the level of a stored run, -1 when it is not positive.
func (c *cluster) runLevelOf(run int32) int {
	switch {
	case run < 1:
		return -1
	case run == freeInf:
		return c.nLv - 1
	}
	return c.runLevel(int64(run))
}

// bitLevel is the bitmap level of a run length level (-1: none): the
// bitmaps only narrow the nodes a search looks at, so they are coarser
// than the counts, which keeps their updates cheap.
func (c *cluster) bitLevel(lv int) int {
	if lv < 0 {
		return -1
	}
	return lv / 3
}

// levWords is the bitmap of the nodes whose longest free run in a block
// is at bitmap level bl or above.
func (c *cluster) levWords(blk, bl int) []uint64 {
	i := (blk*c.nBLv + bl) * c.words
	return c.levBits[i : i+c.words]
}

// runLevel is the level of a run of r >= 1 buckets.
func (c *cluster) runLevel(r int64) int {
	if r > int64(c.nb) {
		return c.nLv - 1
	}
	return int(c.lvOf[r])
}

// lvAdd adds (sign 1) or removes (-1) a node's contribution to a class's
// counts in a block, given its longest free run and highest capacity
// there.
func (c *cluster) lvAdd(cc *capClass, blk int, run, capMax int32, sign int32) {
	if capMax <= 0 || run < 1 {
		return
	}
	r := int64(run)
	if run == freeInf {
		r = math.MaxInt64
	}
	i := blk*c.nLv + c.runLevel(r)
	cc.lvCnt[i] += sign
	cc.lvTot[i] += int64(sign) * int64(capMax)
	if capMax >= cc.full {
		cc.lvFull[i] += sign
	}
}

// classBlocks records a node's new capacity steps in a class's block
// index: its capacity at each block's start, whether it has any at the
// next block's start, and its highest capacity in each block, whose
// changes move the node in the class's counts.
func (c *cluster) classBlocks(cc *capClass, ni int, steps []step) {
	n := int(c.n)
	nb := int32(c.nb)
	cur := int32(0)
	si := 0
	bit := uint64(1) << (ni % 64)
	for blk := 0; blk <= c.nBlk; blk++ {
		lo := int32(blk) * c.blkLen
		for si < len(steps) && steps[si].b <= lo {
			cur = steps[si].cap
			si++
		}
		cc.capStart[blk*n+ni] = cur
		w := &cc.capPos[blk*c.words+ni/64]
		if cur > 0 {
			*w |= bit
		} else {
			*w &^= bit
		}
		if blk == c.nBlk {
			break
		}
		hi := min(lo+c.blkLen, nb)
		mx := cur
		for k := si; k < len(steps) && steps[k].b < hi; k++ {
			mx = max(mx, steps[k].cap)
		}
		if old := cc.capMax[ni*c.nBlk+blk]; old != mx {
			run := c.maxFree[blk*n+ni]
			c.lvAdd(cc, blk, run, old, -1)
			c.lvAdd(cc, blk, run, mx, 1)
			cc.capMax[ni*c.nBlk+blk] = mx
		}
	}
}

// buildClassBlocks fills a new class's block index once every node's
// steps are known, a block at a time: the arrays are laid out by block,
// and the steps by node, so both are read and written in order.
func (c *cluster) buildClassBlocks(cc *capClass) {
	n := int(c.n)
	nb := int32(c.nb)
	if cap(c.bcur) < n {
		c.bcur = make([]int32, n)
		c.bcap = make([]int32, n)
	}
	cursor, curCap := c.bcur[:n], c.bcap[:n]
	clear(cursor)
	clear(curCap)
	words := cc.mask.Words()
	for blk := 0; blk <= c.nBlk; blk++ {
		lo := int32(blk) * c.blkLen
		hi := min(lo+c.blkLen, nb)
		for w, word := range words {
			for word != 0 {
				ni := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				sl := cc.stepLen[ni]
				if sl == 0 {
					continue
				}
				steps := cc.steps[cc.stepOff[ni] : cc.stepOff[ni]+sl]
				i, cur := int(cursor[ni]), curCap[ni]
				for i < len(steps) && steps[i].b <= lo {
					cur = steps[i].cap
					i++
				}
				cursor[ni], curCap[ni] = int32(i), cur
				cc.capStart[blk*n+ni] = cur
				if cur > 0 {
					cc.capPos[blk*c.words+w] |= 1 << (ni % 64)
				}
				if blk == c.nBlk {
					continue
				}
				mx := cur
				for k := i; k < len(steps) && steps[k].b < hi; k++ {
					mx = max(mx, steps[k].cap)
				}
				cc.capMax[ni*c.nBlk+blk] = mx
				c.lvAdd(cc, blk, c.maxFree[blk*n+ni], mx, 1)
			}
		}
	}
}

// nodeFree writes the node's longest free run starting in each block
// from b0 to b1 (excluded), and the run from the block's first bucket,
// from its reservations (sorted by end).
func (c *cluster) nodeFree(ni int, dst, first []int32, b0, b1 int) {
	sp := c.nodeSpans[ni]
	// suf[i] is the earliest start among sp[i:]: for a bucket b, with i
	// the first reservation ending after b, the run from b is suf[i]-b.
	if cap(c.sufBuf) < len(sp) {
		c.sufBuf = make([]int32, len(sp)+16)
	}
	suf := c.sufBuf[:len(sp)]
	for i := len(sp) - 1; i >= 0; i-- {
		suf[i] = sp[i].k
		if i+1 < len(sp) {
			suf[i] = min(suf[i], suf[i+1])
		}
	}
	runAt := func(i int, b int32) int32 {
		if i < len(sp) {
			return suf[i] - b
		}
		return freeInf
	}
	nb := int32(c.nb)
	i := 0
	for blk := b0; blk < b1; blk++ {
		lo := int32(blk) * c.blkLen
		hi := min(lo+c.blkLen, nb)
		for i < len(sp) && sp[i].e <= lo {
			i++
		}
		// The run shrinks as b advances and grows only where a
		// reservation ends: the longest starts at lo or at such an end.
		best := runAt(i, lo)
		first[blk] = best
		for j := i; j < len(sp) && sp[j].e < hi; {
			e := sp[j].e
			for j < len(sp) && sp[j].e <= e {
				j++
			}
			best = max(best, runAt(j, e))
		}
		dst[blk] = best
	}
}

// spanAdded updates the index after a reservation was added on a node.
func (c *cluster) spanAdded(ni int, sp resvSpan) {
	l := append(c.nodeSpans[ni], sp)
	for i := len(l) - 1; i > 0 && l[i].e < l[i-1].e; i-- {
		l[i], l[i-1] = l[i-1], l[i]
	}
	c.nodeSpans[ni] = l
	// Runs change only from the end of the last reservation starting
	// no later than this one (before it, that one bounds them) to this
	// one's end.
	g := int32(0)
	for _, o := range l {
		if o != sp && o.k <= sp.k {
			g = max(g, o.e)
		}
	}
	b0, b1 := int(g/c.blkLen), min(c.nBlk, int((sp.e+c.blkLen-1)/c.blkLen))
	if b0 >= b1 {
		return
	}
	nf := c.blkScratch[2*c.nBlk : 3*c.nBlk]
	c.nodeFree(ni, nf, c.blkScratch[3*c.nBlk:4*c.nBlk], b0, b1)
	n := int(c.n)
	// The class counts and bitmaps go by level: only a change of level
	// moves them.
	moved := c.movedBuf[:0]
	w, bit := ni/64, uint64(1)<<(ni%64)
	for blk := b0; blk < b1; blk++ {
		run := nf[blk]
		old := c.maxFree[blk*n+ni]
		c.maxFree[blk*n+ni] = run
		c.runStart[blk*n+ni] = c.blkScratch[3*c.nBlk+blk]
		if old == run {
			continue
		}
		lo, ln := c.runLevelOf(old), c.runLevelOf(run)
		if lo == ln {
			continue
		}
		moved = append(moved, blkMove{blk: blk, old: old, run: run})
		lo, ln = c.bitLevel(lo), c.bitLevel(ln)
		for bl := ln + 1; bl <= lo; bl++ {
			c.levWords(blk, bl)[w] &^= bit
		}
		for bl := lo + 1; bl <= ln; bl++ {
			c.levWords(blk, bl)[w] |= bit
		}
	}
	c.movedBuf = moved
	if len(moved) == 0 {
		return
	}
	for _, cc := range c.classList {
		if !cc.mask.Test(uint(ni)) || cc.stepLen[ni] == 0 {
			continue
		}
		for _, mv := range moved {
			v := cc.capMax[ni*c.nBlk+mv.blk]
			c.lvAdd(cc, mv.blk, mv.old, v, -1)
			c.lvAdd(cc, mv.blk, mv.run, v, 1)
		}
	}
}

// blkMove is a change of a node's longest free run in a block.
type blkMove struct {
	blk      int
	old, run int32
}

// mayFit is the block's necessary condition for a job of m >= 1 buckets:
// enough nodes and capacity among those that can be used somewhere in
// the block, counted at their best.
func (c *cluster) mayFit(cc *capClass, r *request, blk int, m int64) bool {
	base := blk * c.nLv
	cnt, full := 0, 0
	tot := int64(0)
	for lv := base + c.runLevel(m); lv < base+c.nLv; lv++ {
		cnt += int(cc.lvCnt[lv])
		tot += cc.lvTot[lv]
		full += int(cc.lvFull[lv])
	}
	if cnt < r.minN || tot < int64(r.tasks) {
		return false
	}
	// Every capacity is at most full; those not full, one less.
	f := int(cc.full)
	top := min(r.maxN, full)
	return top*f+max(min(r.maxN, cnt)-top, 0)*(f-1) >= r.tasks
}
