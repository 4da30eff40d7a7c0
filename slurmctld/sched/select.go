package sched

import "slices"

// placement is the nodes chosen for a job and the tasks each one runs.
type placement struct {
	nodes []int
	tasks []int
	// cpus, for a request counting CPUs (request.unit), is the CPUs each
	// node's tasks get (dist_tasks_compute_c_b); nil otherwise.
	cpus []int
	// gpus is each node's share of the job's --gpus (gpusjob.go).
	gpus []uint64
}

// run is a maximal block of candidate nodes with consecutive indexes.
type run struct {
	lo, hi int // positions in the candidate list, [lo, hi)
	cap    int // tasks the block can take
}

// place chooses nodes for r among cands (node indexes, ascending) whose
// task capacities are caps (all > 0). Nodes are tried by weight: first the
// lowest weight group alone, then with the next group added, and so on.
func (c *cluster) place(r *request, cands, caps []int) (placement, bool) {
	if len(cands) == 0 {
		return placement{}, false
	}
	if r.gpuJob > 0 {
		return c.placeGPUs(r, cands, caps)
	}
	w0 := c.nodes[cands[0]].Weight
	same := true
	for _, ni := range cands[1:] {
		if c.oneWeight {
			break
		}
		if c.nodes[ni].Weight != w0 {
			same = false
			break
		}
	}
	if same {
		return c.placeOnce(r, cands, caps, nil)
	}
	var weights []uint32
	for _, ni := range cands {
		weights = append(weights, c.nodes[ni].Weight)
	}
	slices.Sort(weights)
	weights = slices.Compact(weights)
	subC := make([]int, 0, len(cands))
	subK := make([]int, 0, len(cands))
	var lower []int
	for _, w := range weights {
		subC, subK, lower = subC[:0], subK[:0], lower[:0]
		for i, ni := range cands {
			if c.nodes[ni].Weight <= w {
				subC = append(subC, ni)
				subK = append(subK, caps[i])
				if c.nodes[ni].Weight < w {
					lower = append(lower, ni)
				}
			}
		}
		// The lighter nodes did not suffice alone: use them all and the
		// fewest of this weight; failing that, any choice in the pool.
		if len(lower) > 0 && !r.job.Contiguous {
			if pl, ok := c.placeOnce(r, subC, subK, lower); ok {
				return pl, true
			}
		}
		if pl, ok := c.placeOnce(r, subC, subK, nil); ok {
			return pl, true
		}
	}
	return placement{}, false
}

// placeOnce places the request on the given candidates: required nodes
// first, then the feature-count terms, then the rest by best fit over
// blocks of consecutive nodes (one block if any fits, else the fewest
// blocks, largest first).
func (c *cluster) placeOnce(r *request, cands, caps []int, pre []int) (placement, bool) {
	if pre == nil {
		if pl, ok := c.placeOneBlock(r, cands, caps); ok {
			return pl, true
		}
	}
	return c.placeBlocks(r, cands, caps, pre)
}

// placeOneBlock is placeOnce's first step for the common request that
// needs one node or more, as many tasks as nodes at most, no task count
// per node, required nodes, feature counts or contiguity: the block of
// consecutive candidates with the least capacity that holds the tasks
// (the shortest such, then the first), from its start. It reports false
// when no single block holds them, leaving the other steps to
// placeBlocks; when it places, placeBlocks would place the same way.
func (c *cluster) placeOneBlock(r *request, cands, caps []int) (placement, bool) {
	if !r.oneBlock() || len(cands) == 0 {
		return placement{}, false
	}
	// Every capacity is at least 1, so the tasks take at most r.tasks
	// nodes of a block and the node limit never binds: a block fits
	// iff its capacity reaches the tasks.
	bestLo, bestN, bestCap := -1, 0, 0
	lo, sum := 0, 0
	for pos := 0; pos <= len(cands); pos++ {
		if pos > 0 && (pos == len(cands) || cands[pos] != cands[pos-1]+1) {
			if n := pos - lo; sum >= r.tasks && (bestLo < 0 || sum < bestCap || (sum == bestCap && n < bestN)) {
				bestLo, bestN, bestCap = lo, n, sum
			}
			lo, sum = pos, 0
		}
		if pos < len(cands) {
			sum += caps[pos]
		}
	}
	return c.placeFrom(r, cands, caps, bestLo)
}

// oneBlock reports whether placeOneBlock applies to r.
func (r *request) oneBlock() bool {
	return r.minN == 1 && r.maxN >= r.tasks && r.ntpn == 0 && len(r.reqList) == 0 &&
		len(r.counts) == 0 && !r.job.Contiguous && r.gpuJob == 0
}

// placeFrom places r on the candidates from position lo on, as many as
// its tasks need (placeOneBlock's choice); lo < 0: no block holds them.
func (c *cluster) placeFrom(r *request, cands, caps []int, lo int) (placement, bool) {
	if lo < 0 {
		return placement{}, false
	}
	bestLo := lo
	if cap(c.pbRest) < r.tasks {
		c.pbRest = make([]int, r.tasks)
	}
	chosen := c.pbRest[:0]
	if max(r.minN, r.wantN) <= 1 {
		hi := lo + 1
		for hi < len(cands) && cands[hi] == cands[hi-1]+1 {
			hi++
		}
		if p := bestSingle(caps, lo, hi, r.tasks); p >= 0 {
			return distribute(r, cands, caps, append(chosen, p))
		}
	}
	for p, got := bestLo, 0; got < r.tasks; p++ {
		chosen = append(chosen, p)
		got += caps[p]
	}
	return distribute(r, cands, caps, chosen)
}

// bestSingle is cons_tres's best fit for a request that needs one node
// more at most, with no required node: in the block of candidate
// positions [lo, hi) the node whose capacity holds all the tasks with
// the least to spare (the first of equals), so that a job fitting on one
// node is not spread from the block's start over a partly used node and
// the next. -1 when no node holds them alone.
func bestSingle(caps []int, lo, hi, tasks int) int {
	best := -1
	for p := lo; p < hi && p < len(caps); p++ {
		if caps[p] < tasks || (best >= 0 && caps[p] >= caps[best]) {
			continue
		}
		best = p
		if caps[p] == tasks {
			break
		}
	}
	return best
}

// placeBlocks is placeOnce's general case.
func (c *cluster) placeBlocks(r *request, cands, caps []int, pre []int) (placement, bool) {
	if cap(c.chosenBuf) < len(cands) {
		c.chosenBuf = make([]bool, len(cands))
	}
	chosen := c.chosenBuf[:len(cands)]
	clear(chosen)
	var nodes []int
	have, got := 0, 0
	pick := func(pos int) {
		chosen[pos] = true
		nodes = append(nodes, pos)
		have++
		got += caps[pos]
	}
	for _, ni := range r.reqList {
		pos, ok := slices.BinarySearch(cands, ni)
		if !ok {
			return placement{}, false
		}
		pick(pos)
	}
	for _, ni := range pre {
		pos, _ := slices.BinarySearch(cands, ni)
		if !chosen[pos] {
			pick(pos)
		}
	}
	for t, bits := range r.counts {
		need := r.countN[t]
		for pos, ni := range cands {
			if need == 0 {
				break
			}
			if !chosen[pos] && bits.Test(uint(ni)) {
				pick(pos)
				need--
			}
		}
		if need > 0 {
			return placement{}, false
		}
	}
	needNodes := func() int { return max(r.minN-have, 0) }
	needTasks := func() int { return max(r.tasks-got, 0) }
	if have > r.maxN {
		return placement{}, false
	}
	if len(r.reqList) > 0 && len(pre) == 0 && len(r.counts) == 0 && !r.job.Contiguous {
		// cons_tres grows a required node's block from the first
		// required node: the nodes after it first, then those before.
		first, _ := slices.BinarySearch(cands, r.reqList[0])
		for p := first + 1; p < len(cands) && cands[p] == cands[p-1]+1 && (needNodes() > 0 || needTasks() > 0) && have < r.maxN; p++ {
			if !chosen[p] {
				pick(p)
			}
		}
		for p := first - 1; p >= 0 && cands[p] == cands[p+1]-1 && (needNodes() > 0 || needTasks() > 0) && have < r.maxN; p-- {
			if !chosen[p] {
				pick(p)
			}
		}
	}
	if needNodes() > 0 || needTasks() > 0 {
		runs := c.runs(cands, caps, chosen)
		if r.job.Contiguous {
			if have > 0 {
				// Required nodes or counted features with --contiguous:
				// the block must contain them; not supported.
				return placement{}, false
			}
			best := -1
			bestK := 0
			for i, rn := range runs {
				k := takeFrom(rn, caps, needNodes(), needTasks(), r.maxN-have)
				if k < 0 {
					continue
				}
				if best < 0 || rn.cap < runs[best].cap || (rn.cap == runs[best].cap && rn.hi-rn.lo < runs[best].hi-runs[best].lo) {
					best, bestK = i, k
				}
			}
			if best < 0 {
				return placement{}, false
			}
			for p := runs[best].lo; p < runs[best].lo+bestK; p++ {
				pick(p)
			}
		} else {
			for needNodes() > 0 || needTasks() > 0 {
				if len(runs) == 0 {
					return placement{}, false
				}
				room := r.maxN - have
				best, bestK := -1, 0
				for i, rn := range runs {
					k := takeFrom(rn, caps, needNodes(), needTasks(), room)
					if k < 0 {
						continue
					}
					if best < 0 || rn.cap < runs[best].cap || (rn.cap == runs[best].cap && rn.hi-rn.lo < runs[best].hi-runs[best].lo) {
						best, bestK = i, k
					}
				}
				if best >= 0 {
					if have == 0 && max(r.minN, r.wantN) <= 1 {
						if p := bestSingle(caps, runs[best].lo, runs[best].hi, r.tasks); p >= 0 {
							pick(p)
							break
						}
					}
					for p := runs[best].lo; p < runs[best].lo+bestK; p++ {
						pick(p)
					}
					break
				}
				// No block suffices: take the largest one whole.
				big := 0
				for i, rn := range runs {
					if rn.cap > runs[big].cap {
						big = i
					}
				}
				rn := runs[big]
				if rn.hi-rn.lo > room {
					// Taking the whole block would exceed the node limit:
					// take its biggest nodes only.
					return c.placeByCapacity(r, cands, caps, chosen, nodes, have, got)
				}
				for p := rn.lo; p < rn.hi; p++ {
					pick(p)
				}
				runs = slices.Delete(runs, big, big+1)
			}
		}
	}
	if len(pre) > 0 {
		// Lighter nodes were taken first, and keep the CPUs the
		// heavier ones are not needed for.
		return distributeIn(r, cands, caps, nodes, slices.Clone(nodes))
	}
	return distribute(r, cands, caps, nodes)
}

// placeByCapacity is the fallback when blocks cannot meet the node limit:
// the nodes with the most room first.
func (c *cluster) placeByCapacity(r *request, cands, caps []int, chosen []bool, nodes []int, have, got int) (placement, bool) {
	// Counting sort of the free positions by capacity, largest first,
	// keeping node order among equals.
	maxCap := 0
	for pos := range cands {
		if !chosen[pos] {
			maxCap = max(maxCap, caps[pos])
		}
	}
	// Scratch reused between calls: this runs for many jobs of a pass.
	if cap(c.pbStart) < maxCap+2 {
		c.pbStart = make([]int, maxCap+2)
	}
	start := c.pbStart[:maxCap+2]
	clear(start)
	for pos := range cands {
		if !chosen[pos] {
			start[maxCap-caps[pos]+1]++
		}
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	if cap(c.pbRest) < start[len(start)-1] {
		c.pbRest = make([]int, start[len(start)-1])
	}
	rest := c.pbRest[:start[len(start)-1]]
	for pos := range cands {
		if !chosen[pos] {
			k := maxCap - caps[pos]
			rest[start[k]] = pos
			start[k]++
		}
	}
	for _, pos := range rest {
		if have >= r.minN && got >= r.tasks {
			break
		}
		if have >= r.maxN {
			return placement{}, false
		}
		nodes = append(nodes, pos)
		have++
		got += caps[pos]
	}
	if have < r.minN || got < r.tasks {
		return placement{}, false
	}
	slices.Sort(nodes)
	return distribute(r, cands, caps, nodes)
}

// takeFrom is how many nodes from the start of a block meet the needs
// within room nodes, or -1.
func takeFrom(rn run, caps []int, needNodes, needTasks, room int) int {
	if rn.hi-rn.lo < needNodes || rn.cap < needTasks {
		return -1
	}
	k, sum := 0, 0
	for p := rn.lo; p < rn.hi; p++ {
		if k >= needNodes && sum >= needTasks {
			break
		}
		k++
		sum += caps[p]
	}
	if k > room || k < needNodes || sum < needTasks {
		return -1
	}
	return k
}

func (c *cluster) runs(cands, caps []int, chosen []bool) []run {
	out := c.runBuf[:0]
	defer func() { c.runBuf = out[:0] }()
	cur := run{lo: -1}
	for pos, ni := range cands {
		if chosen[pos] {
			if cur.lo >= 0 {
				cur.hi = pos
				out = append(out, cur)
				cur = run{lo: -1}
			}
			continue
		}
		if cur.lo >= 0 && ni != cands[pos-1]+1 {
			cur.hi = pos
			out = append(out, cur)
			cur = run{lo: -1}
		}
		if cur.lo < 0 {
			cur = run{lo: pos}
		}
		cur.cap += caps[pos]
	}
	if cur.lo >= 0 {
		cur.hi = len(cands)
		out = append(out, cur)
	}
	return out
}

// distribute gives each chosen node its tasks: ntpn each, else one each
// and the rest packed in node order (cons_tres's block distribution).
func distribute(r *request, cands, caps []int, chosenPos []int) (placement, bool) {
	return distributeIn(r, cands, caps, chosenPos, nil)
}

// distributeIn is distribute for nodes chosen in the order given
// (positions, as _eval_nodes added them: by weight, required ones
// first): the CPUs each node keeps for the job (_cpus_to_use) are
// counted in that order, so the first node taken gets what later ones
// need not, whatever its index. nil order is required nodes first, then
// node order.
func distributeIn(r *request, cands, caps []int, chosenPos, order []int) (placement, bool) {
	slices.Sort(chosenPos)
	if r.unit > 0 {
		return distributeCPUs(r, cands, caps, chosenPos, order)
	}
	pl := placement{nodes: make([]int, len(chosenPos)), tasks: make([]int, len(chosenPos))}
	left := r.tasks
	for i, pos := range chosenPos {
		pl.nodes[i] = cands[pos]
		if r.ntpn > 0 {
			// ntpn each; the last node may get fewer (-n 5
			// --ntasks-per-node=2 runs 2+2+1).
			pl.tasks[i] = min(r.ntpn, left)
			left -= pl.tasks[i]
			continue
		}
		if left > 0 {
			pl.tasks[i] = 1
			left--
		}
	}
	if r.ntpn == 0 && order != nil {
		for _, pos := range order {
			i, ok := slices.BinarySearch(chosenPos, pos)
			if !ok || left == 0 {
				continue
			}
			add := min(caps[pos]-pl.tasks[i], left)
			pl.tasks[i] += add
			left -= add
		}
	} else if r.ntpn == 0 {
		// Required nodes fill first: cons_tres counts their CPUs before
		// it picks others, which get only what is left (_cpus_to_use);
		// -w n2 -n 3 with two CPUs free on n2 runs two tasks there.
		for _, req := range []bool{true, false} {
			for i, pos := range chosenPos {
				if left == 0 || (len(r.reqList) > 0 && slices.Contains(r.reqList, cands[pos])) != req {
					continue
				}
				add := min(caps[pos]-pl.tasks[i], left)
				pl.tasks[i] += add
				left -= add
			}
		}
	}
	if left > 0 || len(pl.nodes) < r.minN || len(pl.nodes) > r.maxN {
		return placement{}, false
	}
	return pl, true
}
