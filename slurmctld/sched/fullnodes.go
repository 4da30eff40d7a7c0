package sched

import "math/bits"

// A backfill search can test the same job at many buckets where it
// cannot be placed. For jobs that need exactly N nodes full (N nodes, N
// times the most a node can take, no per-node task count, required
// nodes, feature counts or contiguity, one node weight) the outcome of
// placeOnce follows from a summary of its blocks of consecutive
// candidates, so those failures are found without listing the
// candidates. fullNodesFail answers only "certainly fails"; the
// placement itself is always made by place.

// fnRun summarises a block of consecutive candidates: its nodes, total
// capacity, full nodes, and how many full nodes it starts with.
type fnRun struct {
	start              int32 // first node
	n, full, lead, cap int32
}

// fullNodesShape reports whether r is such a job for class cc.
func (c *cluster) fullNodesShape(r *request, cc *capClass) bool {
	return c.oneWeight && !c.snap.Config.BF.BusyNodes && r.ntpn == 0 &&
		len(r.reqList) == 0 && len(r.counts) == 0 && !r.job.Contiguous &&
		r.minN == r.maxN && cc.full > 0 && r.tasks == r.minN*int(cc.full)
}

// fullNodesFailSet is fullNodesFail for the candidates of a sweep: the
// nodes set in words, those at full capacity f in fullw (a subset), with
// their capacities in ns. It works a word at a time and reads the
// capacities of the nodes not full only.
func (c *cluster) fullNodesFailSet(words, fullw []uint64, ns []sweepNode, f int32, need int) bool {
	runs := c.fnRuns[:0]
	defer func() { c.fnRuns = runs[:0] }()
	var cur fnRun
	open := false // cur continues at the next node
	for w, a := range words {
		if a == 0 {
			if open {
				runs = append(runs, cur)
				open = false
			}
			continue
		}
		fw := fullw[w]
		pos := 0
		for pos < 64 {
			x := a >> pos
			if x == 0 {
				break
			}
			// Skip the gap before the next candidate.
			if z := bits.TrailingZeros64(x); z > 0 {
				if open {
					runs = append(runs, cur)
					open = false
				}
				pos += z
				x >>= z
			}
			// Candidates from pos to pos+l.
			l := bits.TrailingZeros64(^x)
			if l == 64-pos || l == 64 {
				l = 64 - pos
			}
			var seg uint64
			if l == 64 {
				seg = ^uint64(0)
			} else {
				seg = (uint64(1)<<l - 1) << pos
			}
			if !open {
				cur = fnRun{start: int32(w*64 + pos)}
				open = true
			}
			fs := fw & seg
			nf := bits.OnesCount64(fs)
			if cur.lead == cur.n {
				// Still all full: extend the leading full nodes.
				cur.lead += int32(min(bits.TrailingZeros64(^(fs >> pos)), l))
			}
			cur.n += int32(l)
			cur.full += int32(nf)
			cur.cap += int32(nf) * f
			for rest := seg &^ fw; rest != 0; rest &= rest - 1 {
				ni := w*64 + bits.TrailingZeros64(rest)
				v := ns[ni].cap
				if v > f {
					return false // not the shape this reasons about
				}
				cur.cap += v
			}
			if int(cur.lead) >= need {
				return false // placed in the first step
			}
			pos += l
			if pos < 64 && open {
				runs = append(runs, cur)
				open = false
			}
		}
	}
	if open {
		runs = append(runs, cur)
	}
	fail, big := fullNodesFail(runs, need)
	if big >= 0 {
		rn := runs[big]
		c.fnWit.ok = true
		c.fnWit.s, c.fnWit.e, c.fnWit.cap = int(rn.start), int(rn.start+rn.n), rn.cap
	}
	return fail
}

// fnWitness records why the last full-node test failed in its first
// step: the first block with the most capacity, [s, e), is within the
// node limit and has a node not full, and no block starts with enough
// full nodes. As long as that block and its neighbours are unchanged, the
// test fails again unless a block around a changed node has more
// capacity (or as much, earlier) or enough leading full nodes; changed
// lists the nodes that joined, left or changed since.
type fnWitness struct {
	ok      bool
	s, e    int
	cap     int32
	changed []int32
}

// stillFails reports whether the failure recorded in c.fnWit holds for
// the candidates now (see fullNodesFailSet for the arguments). False
// means: test again.
func (c *cluster) stillFails(words, fullw []uint64, ns []sweepNode, f int32, need int) bool {
	wit := &c.fnWit
	n := int(c.n)
	if len(wit.changed) > max(64, n/8) {
		return false // as dear as the full test
	}
	set := func(p int) bool { return p >= 0 && p < n && words[p/64]&(1<<(p%64)) != 0 }
	for _, d := range wit.changed {
		if int(d) >= wit.s-1 && int(d) <= wit.e {
			return false // the block or its bounds changed
		}
		for p := int(d) - 1; p <= int(d)+1; p++ {
			if !set(p) {
				continue
			}
			// The block around p, read node by node: blocks here are
			// short, and a long one sends the test back to the full one.
			s, e := p, p+1
			for s > 0 && set(s-1) {
				if s--; p-s > 512 {
					return false
				}
			}
			for set(e) {
				if e++; e-p > 512 {
					return false
				}
			}
			var rn fnRun
			for q := s; q < e; q++ {
				v := ns[q].cap
				if v > f {
					return false
				}
				rn.n++
				rn.cap += v
				if fullw[q/64]&(1<<(q%64)) != 0 {
					rn.full++
					if rn.lead == rn.n-1 {
						rn.lead++
					}
				}
			}
			if int(rn.lead) >= need || rn.cap > wit.cap || (rn.cap == wit.cap && s < wit.s) {
				return false
			}
		}
	}
	return true
}

// fullNodesFail reports whether placeOnce certainly fails to find need
// full nodes among the runs (in node order), following its steps: a block
// whose first nodes suffice is taken (success); otherwise the block with
// the most capacity is taken whole if it fits in the node limit, and a
// block with a node not full makes the total unreachable; a block over
// the limit sends it to placeByCapacity, which succeeds iff enough full
// nodes are left. The runs are consumed. big is the block that made it
// fail in the first step (see fnWitness), or -1.
func fullNodesFail(runs []fnRun, need int) (fail bool, big int) {
	first := true
	full := 0
	for _, rn := range runs {
		full += int(rn.full)
	}
	for ; need > 0; first = false {
		big := -1
		for i, rn := range runs {
			if rn.n == 0 {
				continue // taken
			}
			if int(rn.lead) >= need {
				return false, -1
			}
			if big < 0 || rn.cap > runs[big].cap {
				big = i
			}
		}
		if big < 0 {
			return true, -1 // no block left
		}
		rn := runs[big]
		if int(rn.n) > need {
			return full < need, -1
		}
		if rn.full < rn.n {
			if first {
				return true, big
			}
			return true, -1
		}
		need -= int(rn.n)
		full -= int(rn.n)
		runs[big].n = 0
	}
	return false, -1
}
