package sched

import (
	"math"
	"math/bits"
)

// Core sharing under OverSubscribe=YES:N / FORCE:N, as select/cons_tres
// does it without gang scheduling (cons_common job_test.c):
//
//   - a job "shares" (NODE_CR_AVAILABLE) in a FORCE partition, or in a YES
//     partition with MaxShare > 1 when it asks --oversubscribe; it never
//     shares with whole nodes;
//   - a sharing job first tries idle cores only, like every job; failing
//     that, it may take cores already held by sharing jobs, up to N jobs a
//     core (Slurm's N rows of the partition);
//   - a sharing job never goes on a node running a job that does not
//     share (node_state ONE_ROW), and a job that does not share never goes
//     on a node running jobs of another partition that allows sharing
//     (_is_node_busy with sharing_only);
//   - memory and GRES stay consumable per job: only cores are shared.
//
// The count per core stands for Slurm's rows: a row is a set of jobs with
// disjoint cores, so a core is in at most N rows' jobs. Counting per core
// is looser than rows (a job need not find one row free on all its
// cores) but keeps the invariant that matters, at most N jobs a core.

// sharingPart reports whether partition pi lets jobs share cores (Slurm
// gives it more than one row).
func (c *cluster) sharingPart(pi int) bool {
	p := &c.snap.Partitions[pi]
	return (p.OverSubscribe == OverSubscribeYes || p.OverSubscribe == OverSubscribeForce) && p.MaxShare > 1
}

// shareRequest sets r.share and r.maxShare from the partition and the job.
func shareRequest(r *request) {
	p := r.part
	switch p.OverSubscribe {
	case OverSubscribeForce:
		r.share = true
	case OverSubscribeYes:
		r.share = p.MaxShare > 1 && r.job.Share == ShareOversubscribe
	}
	if r.whole {
		r.share = false
	}
	r.maxShare = max(int(p.MaxShare), 1)
}

// initShare allocates the per-core sharing state on first use.
func (c *cluster) initShare() {
	if c.shareCnt != nil {
		return
	}
	c.shareCnt = make([]uint16, len(c.coreBits)*64)
	c.credit = make([]int64, len(c.coreBits)*64)
	c.shareOn = make([]int32, c.n)
	c.sharePartOn = make([]int32, c.n)
	for i := range c.sharePartOn {
		c.sharePartOn[i] = noPart
	}
}

const (
	noPart    int32 = -1
	mixedPart int32 = -2
)

// shareBlocked reports whether the sharing rules keep r off node ni now.
func (c *cluster) shareBlocked(r *request, ni int) bool {
	if r.share {
		// Jobs that do not share are there.
		return c.jobsOn[ni] > c.sharedOn(ni)
	}
	return c.shareCnt != nil && c.sharePartOn[ni] != noPart && c.sharePartOn[ni] != int32(r.pi)
}

func (c *cluster) sharedOn(ni int) int32 {
	if c.shareOn == nil {
		return 0
	}
	return c.shareOn[ni]
}

// shareable counts the cores of node ni a sharing job of up to n jobs a
// core may use: free ones and those held by fewer than n sharing jobs.
func (c *cluster) shareable(ni, n int) int32 {
	cores := c.nodes[ni].Cores()
	base := c.coreOff[ni] * 64
	var k int32
	for i := 0; i < cores; i++ {
		g := base + i
		if c.coreBits[g/64]&(1<<(g%64)) != 0 || (c.shareCnt != nil && c.shareCnt[g] > 0 && int(c.shareCnt[g]) < n) {
			k++
		}
	}
	return k
}

// pickShared chooses want cores of node ni for an oversubscribing start:
// free cores first, then the least shared ones.
func (c *cluster) pickShared(ni, want, n int) []uint16 {
	cores := make([]uint16, 0, want)
	base := c.coreOff[ni] * 64
	nc := c.nodes[ni].Cores()
	for lvl := 0; lvl < n && len(cores) < want; lvl++ {
		for i := 0; i < nc && len(cores) < want; i++ {
			g := base + i
			free := c.coreBits[g/64]&(1<<(g%64)) != 0
			if (lvl == 0 && free) || (lvl > 0 && !free && c.shareCnt != nil && int(c.shareCnt[g]) == lvl) {
				cores = append(cores, uint16(i))
			}
		}
	}
	return cores
}

// takeShared records a sharing allocation's cores on node ni, returning
// how many cores its release gives back. A core shared by several jobs is
// free again when the last of them ends, so its release is credited to
// the job that ends last.
func (c *cluster) takeShared(ni int, cores []uint16, end int64) int32 {
	c.initShare()
	base := c.coreOff[ni] * 64
	var credited int32
	for _, k := range cores {
		g := base + int(k)
		if g >= c.coreOff[ni+1]*64 {
			continue
		}
		w, bit := g/64, uint64(1)<<(g%64)
		switch {
		case c.coreBits[w]&bit != 0:
			c.coreBits[w] &^= bit
			c.freeCore[ni]--
			c.shareCnt[g] = 1
			c.credit[g] = end
			credited++
		case c.shareCnt[g] > 0:
			if c.shareCnt[g] < math.MaxUint16 {
				c.shareCnt[g]++
			}
			if end > c.credit[g] {
				c.moveCredit(ni, c.credit[g])
				c.credit[g] = end
				credited++
			}
		}
	}
	return credited
}

// moveCredit takes one core from the release of node ni at time at (the
// core now comes back later, with another job).
func (c *cluster) moveCredit(ni int, at int64) {
	for k := range c.rel[ni] {
		if rl := &c.rel[ni][k]; rl.at == at && rl.cores > 0 {
			rl.cores--
			return
		}
	}
}

// noteShareJob updates the node's sharing counters for a new allocation.
func (c *cluster) noteShareJob(ni int, a *Allocation, shared bool) {
	pi, ok := c.partIdx[a.Partition]
	inSharing := ok && c.sharingPart(pi)
	if !shared && !inSharing {
		return
	}
	c.initShare()
	if shared {
		c.shareOn[ni]++
	}
	if inSharing {
		switch c.sharePartOn[ni] {
		case noPart:
			c.sharePartOn[ni] = int32(pi)
		case int32(pi):
		default:
			c.sharePartOn[ni] = mixedPart
		}
	}
}

// tryNowOver is tryNow's second step for a sharing job: cores held by
// fewer than N sharing jobs count as available.
func (c *cluster) tryNowOver(r *request, mask []uint64) (placement, bool) {
	end := c.now + r.duration
	r.over = true
	for a := 0; a < r.altCount(); a++ {
		b := c.base(r, a)
		cands, caps := c.scratchC[:0], c.scratchK[:0]
		sum := 0
		bw := b.Words()
		for w := range bw {
			word := bw[w] & mask[w]
			for word != 0 {
				ni := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if c.resvFirst[ni] < end {
					continue
				}
				if k := c.capacityNow(r, ni); k > 0 {
					cands = append(cands, ni)
					caps = append(caps, k)
					sum += k
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
	r.over = false
	return placement{}, false
}
