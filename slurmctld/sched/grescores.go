package sched

import (
	"math/bits"
	"slices"
)

// gresTrimmed is the free cores of node ni a job with GRES does not get
// (held are cores it never gets anyway): cons_tres's _select_cores hands
// such a job's free cores to gres_select_filter_sock_core, which, when the
// tasks the node may run are bounded, keeps only the cores those tasks
// need, taking off the highest free core of the socket with the most free
// cores (the first of equals) until that many are left. On a node of
// 4 one-core sockets a -c 3 job gets cores 1-3, not 0-2. want is the cores
// the job takes here; never fewer are kept. --gpus-per-task bounds the
// tasks by the node's free GPUs. GPUs bound to cores (gres.conf
// Cores=) are not modelled: every socket counts as near the GPUs.
func (c *cluster) gresTrimmed(r *request, ni int, held []uint16, want int) []uint16 {
	j := r.job
	nd := &c.nodes[ni]
	per, socks := int(nd.CoresPerSocket), int(nd.Sockets)
	if per == 0 || socks == 0 {
		return nil
	}
	free := make([]bool, socks*per)
	cnt := make([]int, socks)
	n := 0
	for w := c.coreOff[ni]; w < c.coreOff[ni+1]; w++ {
		word := c.coreBits[w]
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			k := (w-c.coreOff[ni])*64 + b
			if k < len(free) && !slices.Contains(held, uint16(k)) {
				free[k] = true
				cnt[k/per]++
				n++
			}
		}
	}
	// _select_cores' task bounds for the node; -1 is none.
	minT, maxT := 1, -1
	switch {
	case r.ntpn > 0:
		minT, maxT = r.ntpn, r.ntpn
	case r.tpcore > 0:
		minT, maxT = r.tpcore, r.tpcore*(nd.Cores()-len(nd.SpecCores))
	case j.MaxNodes == 1:
		if j.NumTasks > 0 {
			minT, maxT = int(j.NumTasks), int(j.NumTasks)
		}
	case j.NumTasks == 1 || (j.NumTasks == j.MinNodes && j.NumTasks == j.MaxNodes):
		minT, maxT = 1, 1
	}
	cpt := int(j.CPUsPerTask)
	if cpt > 0 && !j.Overcommit {
		alloc := n * max(int(nd.ThreadsPerCore), 1) / cpt
		if alloc < minT {
			return nil
		}
		if maxT < 0 || alloc < maxT {
			maxT = alloc
		}
	}
	if j.GPUsPerTask > 0 {
		// gres_per_task: as many tasks as the node's free GPUs serve.
		byGPU := int(min(c.gresFree(ni, "gpu", j.GPUType)/uint64(j.GPUsPerTask), uint64(len(free))))
		if maxT < 0 || byGPU < maxT {
			maxT = byGPU
		}
	}
	if maxT < 0 {
		return nil
	}
	need := maxT
	if cpt > 0 {
		thr := max(r.threads(nd), 1)
		for ; maxT >= minT; maxT-- {
			need = (maxT*cpt + thr - 1) / thr
			if need <= n {
				break
			}
		}
	}
	need = max(need, want)
	var out []uint16
	for n > need {
		s := -1
		for k := range cnt {
			if cnt[k] > 0 && (s < 0 || cnt[k] > cnt[s]) {
				s = k
			}
		}
		for k := s*per + per - 1; k >= s*per; k-- {
			if free[k] {
				free[k] = false
				out = append(out, uint16(k))
				break
			}
		}
		cnt[s]--
		n--
	}
	return out
}
