package sched

import (
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// Core reservations (Reservation.Cores): some cores of their nodes are
// held, not the whole nodes. A job of the reservation runs on those cores
// only (job_test_resv's exc_core_bitmap, the complement of the
// reservation's cores); the other jobs may use the other cores of the
// nodes, but not the reserved ones while the reservation lasts.

// partial reports a core reservation.
func (rv *Reservation) partial() bool { return rv.Cores != nil }

// onlyCores takes the free cores of rv's nodes that rv does not hold out
// of the free state, so a placement tried now uses the reserved cores
// only; the returned function puts them back (the placement took free
// cores, which were all reserved ones, so nothing it took is restored).
func (c *cluster) onlyCores(rv *Reservation) func() {
	type hidden struct {
		ni    int
		cores []int
	}
	var hid []hidden
	for ni, keep := range rv.Cores {
		if ni < 0 || uint(ni) >= c.n {
			continue
		}
		h := hidden{ni: ni}
		for k := 0; k < c.nodes[ni].Cores(); k++ {
			w, bit := c.coreOff[ni]+k/64, uint64(1)<<(k%64)
			if c.coreBits[w]&bit != 0 && !slices.Contains(keep, uint16(k)) {
				c.coreBits[w] &^= bit
				c.freeCore[ni]--
				h.cores = append(h.cores, k)
			}
		}
		if c.freeCore[ni] <= 0 {
			c.hasFree.Clear(uint(ni))
		}
		hid = append(hid, h)
	}
	return func() {
		var nodes []int
		for _, h := range hid {
			for _, k := range h.cores {
				c.coreBits[c.coreOff[h.ni]+k/64] |= 1 << (k % 64)
				c.freeCore[h.ni]++
			}
			if c.freeCore[h.ni] > 0 && !c.excl[h.ni] {
				c.hasFree.Set(uint(h.ni))
			}
			nodes = append(nodes, h.ni)
		}
		c.refreshClasses(nodes)
	}
}

// holdResvCores takes the reserved cores of the core reservations on now
// out of the free state until their end, for the jobs that do not run in
// them: held like the cores of a job that ends with the reservation, so a
// whole-node job does not get the node either (job_test_resv drops such
// nodes for jobs that will not share them). The cores of those that start
// later are noted in coreFuture: a job starting now keeps off them when
// its run would reach the reservation's start.
func (c *cluster) holdResvCores() {
	for i := range c.snap.Reservations {
		rv := &c.snap.Reservations[i]
		if !rv.partial() || rv.End <= c.now {
			continue
		}
		var nodes []int
		for ni, cores := range rv.Cores {
			if ni < 0 || uint(ni) >= c.n {
				continue
			}
			if rv.Start > c.now {
				if c.coreFuture == nil {
					c.coreFuture = make([][]futureCores, c.n)
					c.futureNodes = bitset.New(c.n)
				}
				c.futureNodes.Set(uint(ni))
				c.coreFuture[ni] = append(c.coreFuture[ni], futureCores{start: rv.Start, cores: cores})
				continue
			}
			c.holdCores(ni, cores, rv.End)
			nodes = append(nodes, ni)
		}
		slices.Sort(nodes)
		c.refreshClasses(nodes)
	}
}

// futureCores are the cores of a core reservation that starts later.
type futureCores struct {
	start int64
	cores []uint16
}

// futureHeld is the cores of node ni that core reservations starting
// before end hold (nil for none): a job running until end keeps off them.
func (c *cluster) futureHeld(ni int, end int64) []uint16 {
	if c.coreFuture == nil {
		return nil
	}
	var out []uint16
	for _, f := range c.coreFuture[ni] {
		if f.start < end {
			out = append(out, f.cores...)
		}
	}
	return out
}

// freeHeld counts the free cores of node ni among held.
func (c *cluster) freeHeld(ni int, held []uint16) int32 {
	var n int32
	seen := make(map[uint16]bool, len(held))
	for _, k := range held {
		w, bit := c.coreOff[ni]+int(k)/64, uint64(1)<<(k%64)
		if !seen[k] && w < c.coreOff[ni+1] && c.coreBits[w]&bit != 0 {
			n++
		}
		seen[k] = true
	}
	return n
}

// holdCores takes the given cores of node ni, those still free, until
// end, as take does for a job's.
func (c *cluster) holdCores(ni int, cores []uint16, end int64) {
	off := c.coreOff[ni]
	var taken int32
	for _, k := range cores {
		w, bit := off+int(k)/64, uint64(1)<<(k%64)
		if w < c.coreOff[ni+1] && c.coreBits[w]&bit != 0 {
			c.coreBits[w] &^= bit
			taken++
		}
	}
	c.freeCore[ni] -= taken
	c.jobsOn[ni]++
	c.idle.Clear(uint(ni))
	if c.freeCore[ni] <= 0 {
		c.hasFree.Clear(uint(ni))
	}
	c.rel[ni] = append(c.rel[ni], release{
		at: end, b: int32(min((end-c.now+c.res-1)/c.res, int64(c.nb))), cores: taken, gres: -1,
	})
	c.sortReleases(ni)
}

// futureHold is, for the backfill timeline, the free cores of node ni
// that core reservations starting later hold, and the bucket from which
// they are all over: planning keeps off them from now, the start test
// (capacityNow) checks each job's run against their windows.
func (c *cluster) futureHold(ni int) (int32, int32) {
	if c.coreFuture == nil || c.coreFuture[ni] == nil {
		return 0, 0
	}
	var held []uint16
	var end int64
	for i := range c.snap.Reservations {
		rv := &c.snap.Reservations[i]
		if cores, ok := rv.Cores[ni]; ok && rv.partial() && rv.Start > c.now && rv.End > c.now {
			held = append(held, cores...)
			end = max(end, rv.End)
		}
	}
	return c.freeHeld(ni, held), int32(min((end-c.now+c.res-1)/c.res, int64(c.nb)))
}
