package sched

import "github.com/bits-and-blooms/bitset"

// widen gives a job that asked for a node range (-N min-max) as many
// nodes as are free now up to its maximum, as select/cons_tres does
// (get_node_cnts asks eval_nodes for max_nodes, which settles for fewer
// down to min_nodes). pl is r's placement on fewer nodes; mask bounds the
// nodes as in tryNow. It returns the request the placement is for (its
// node and, without -n, task counts raised) and the placement.
func (c *cluster) widen(r *request, pl placement, mask *bitset.BitSet) (*request, placement) {
	if r.wantN <= len(pl.nodes) || r.over {
		return r, pl
	}
	free := c.hasFree
	if r.whole {
		free = c.idle
	}
	b := c.partBits[r.pi].Clone()
	b.InPlaceIntersection(mask)
	b.InPlaceIntersection(free)
	hi := min(r.wantN, int(b.Count()))
	lo := len(pl.nodes) // fits
	best, bestR := pl, r
	// Fewer nodes fit whenever more do: search the largest count.
	for lo < hi {
		k := (lo + hi + 1) / 2
		w := r.withNodes(k)
		if p, ok := c.tryNow(w, mask); ok {
			best, bestR, lo = p, w, max(k, len(p.nodes))
		} else {
			hi = k - 1
		}
	}
	return bestR, best
}

// withNodes is r needing k nodes; without a task count (-n) the job runs
// one task per node (or --ntasks-per-node each), so the tasks grow too.
func (r *request) withNodes(k int) *request {
	w := *r
	w.minN = k
	if r.job.NumTasks == 0 {
		w.tasks = k
		if r.ntpn > 0 {
			w.tasks = k * r.ntpn
		}
		w.ntasks = w.tasks
		if r.unit > 0 {
			w.tasks *= r.unit
		}
	}
	return &w
}
