package sched

import (
	"math/bits"
	"slices"
)

// freeCores marks the free cores of node ni that are not in held.
func (c *cluster) freeCores(ni int, held []uint16) []bool {
	free := make([]bool, c.nodes[ni].Cores())
	for w := c.coreOff[ni]; w < c.coreOff[ni+1]; w++ {
		word := c.coreBits[w]
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			if k := (w-c.coreOff[ni])*64 + b; k < len(free) && !slices.Contains(held, uint16(k)) {
				free[k] = true
			}
		}
	}
	return free
}

// blockCores picks want of the avail cores of a node of socks sockets of
// per cores as cons_tres's block core distribution does
// (_block_sync_core_bitmap, one board): socket by socket, best fit, the
// socket with the fewest free cores that still holds what is left, else
// the one with the most (the first of equals), its lowest free cores
// first. A -n4 job on a node of 2 sockets of 4 cores with core 0 busy
// gets 4-7, not 1-4.
func blockCores(avail []bool, socks, per, want int) []uint16 {
	if socks <= 0 || per <= 0 || socks*per > len(avail) {
		return takeLowest(avail, want)
	}
	cnt := make([]int, socks)
	for k, ok := range avail[:socks*per] {
		if ok {
			cnt[k/per]++
		}
	}
	out := make([]uint16, 0, want)
	for len(out) < want {
		best, bestFit := -1, false
		for s := range socks {
			fit := cnt[s] >= want-len(out)
			if best < 0 || cnt[best] == 0 || (fit && !bestFit) || (fit && cnt[s] < cnt[best]) || (!fit && !bestFit && cnt[s] > cnt[best]) {
				best, bestFit = s, fit
			}
		}
		if cnt[best] == 0 {
			break
		}
		for k := best * per; k < (best+1)*per && len(out) < want; k++ {
			if avail[k] {
				out = append(out, uint16(k))
			}
		}
		cnt[best] = 0
	}
	slices.Sort(out)
	return out
}

// takeLowest is the first want cores of avail.
func takeLowest(avail []bool, want int) []uint16 {
	out := make([]uint16, 0, want)
	for k, ok := range avail {
		if len(out) == want {
			break
		}
		if ok {
			out = append(out, uint16(k))
		}
	}
	return out
}

// cyclicCores picks want of the avail cores of a node of socks sockets
// of per cores as cons_tres's default core distribution does under
// CR_Core (_cyclic_sync_core_bitmap): with more than one CPU a task,
// sockets in order first take as many whole tasks as their free CPUs
// hold, then the sockets take one core each in turn, lowest free first,
// until the job's CPUs are covered. vpus is the CPUs a core gives the
// job. A -n3 job on an idle node of 2 sockets of 4 cores gets 0-1,4.
func cyclicCores(avail []bool, socks, per, want, cpt, vpus int) []uint16 {
	if socks <= 1 || per <= 0 || socks*per > len(avail) {
		return takeLowest(avail, want)
	}
	vpus = max(vpus, 1)
	cpus := want * vpus
	next := make([]int, socks)
	for s := range next {
		next[s] = s * per
	}
	out := make([]uint16, 0, want)
	take := func(k int) {
		out = append(out, uint16(k))
		cpus = max(cpus-vpus, 0)
	}
	if cpt > 1 {
		for s := 0; s < socks && cpus > 0; s++ {
			cnt := 0
			for k := s * per; k < (s+1)*per; k++ {
				if avail[k] {
					cnt += vpus
				}
			}
			cnt -= cnt % cpt
			for ; next[s] < (s+1)*per && cnt > 0 && cpus > 0; next[s]++ {
				if avail[next[s]] {
					take(next[s])
					cnt = max(cnt-vpus, 0)
				}
			}
		}
	}
	for cpus > 0 {
		before := cpus
		for s := 0; s < socks && cpus > 0; s++ {
			for next[s] < (s+1)*per && !avail[next[s]] {
				next[s]++
			}
			if next[s] == (s+1)*per {
				continue
			}
			take(next[s])
			next[s]++
		}
		if cpus == before {
			break
		}
	}
	slices.Sort(out)
	return out
}
