package sched

import "slices"

// GPUs over the job (--gpus=N, tres_per_job): cons_tres's _eval_nodes
// keeps adding nodes until, besides the node and CPU counts, the free
// GPUs of the nodes taken reach N (gres_sched_add / gres_sched_test), so
// a job without -N spreads over as many nodes as its GPUs need. A node
// qualifies with one free GPU (_build_sock_gres_basic's minimum). Once
// the nodes are chosen, gres_select_filter_select_and_set gives them
// GPUs in node order, each what it has free but at most what is left
// less one for every node after it (_get_job_cnt, _set_job_bits1): 2+1
// for --gpus=3 on two 2-GPU nodes. Any other GRES counted over the job
// (Job.JobGres) goes the same way; "GPUs" below stands for it.

// gpuAt says whose GPU counts placeGPUs sees: free now (the zero value),
// every GPU of the node (could the job ever run), or what is free from
// a backfill bucket on (gpuAtBucket + bucket).
const (
	gpuAtNow    int32 = 0
	gpuAtTotal  int32 = -1
	gpuAtBucket int32 = 1
)

// gpuAvail is how many of the request's job-level GPUs node ni offers.
func (c *cluster) gpuAvail(r *request, ni int) uint64 {
	if c.gpuAt == gpuAtTotal {
		return c.gresTotal(ni, r.gpuName, r.gpuType)
	}
	f := c.gresFree(ni, r.gpuName, r.gpuType)
	if c.gpuAt < gpuAtBucket {
		return f
	}
	b := c.gpuAt - gpuAtBucket
	for k := range c.rel[ni] {
		rl := &c.rel[ni][k]
		if rl.b > b {
			break
		}
		if rl.gres < 0 {
			continue
		}
		for _, ga := range c.relGres[rl.gres] {
			sl := &c.gres[ni][ga.slot]
			if sl.name == r.gpuName && (r.gpuType == "" || sl.typ == r.gpuType) {
				f += ga.count
			}
		}
	}
	return f
}

// noteGresRelease marks the bucket from which GRES a job holds until end
// are free. A node's capacity for a --gpus job counts one free GPU, so
// the backfill sweep would not see more of them coming free: it tries
// such a job again at these buckets.
func (c *cluster) noteGresRelease(end int64) {
	if c.res <= 0 {
		return
	}
	b := int(min((end-c.now+c.res-1)/c.res, int64(c.nb)))
	if b < 0 {
		return
	}
	for len(c.gresRelB) <= b {
		c.gresRelB = append(c.gresRelB, false)
	}
	c.gresRelB[b] = true
}

// gresReleasedAt reports whether GRES come free at bucket b.
func (c *cluster) gresReleasedAt(b int32) bool {
	return int(b) < len(c.gresRelB) && c.gresRelB[b]
}

// gpuSet is a block of consecutive candidates of one weight (a consec
// set of _eval_nodes).
type gpuSet struct {
	lo, hi int // candidate positions [lo, hi)
	req    int // position of its first required node, -1 = none
	nodes  int // nodes not yet taken
	caps   int
	gpus   uint64
	weight uint32
}

// placeGPUs is place for a request with GPUs over the job.
func (c *cluster) placeGPUs(r *request, cands, caps []int) (placement, bool) {
	if len(cands) == 0 {
		return placement{}, false
	}
	gpus := make([]uint64, len(cands))
	for i, ni := range cands {
		gpus[i] = c.gpuAvail(r, ni)
	}
	pt := uint64(r.job.GPUsPerTask)
	if pt > 0 {
		// --gpus-per-task: a node runs as many tasks as its free GPUs
		// serve (gres_select_filter_sock_core's max_tasks_this_node). A
		// node they serve no task is out of the job's node map: a
		// required one fails the job, and it ends a block of
		// consecutive nodes.
		var kc, kk []int
		var kg []uint64
		for i, ni := range cands {
			per := int(min(gpus[i]/pt, uint64(caps[i])))
			if r.unit > 0 {
				per = min(per*r.unit, caps[i])
			}
			if per <= 0 {
				continue
			}
			kc, kk, kg = append(kc, ni), append(kk, per), append(kg, gpus[i])
		}
		if len(kc) == 0 {
			return placement{}, false
		}
		cands, caps, gpus = kc, kk, kg
	}
	s := gpuSearch{r: r, cands: cands, caps: slices.Clone(caps), gpus: gpus,
		chosen: make([]bool, len(cands)), remN: r.minN, remT: r.tasks, maxN: r.maxN, minN: r.minN, reqN: r.minN}
	if j := r.job; j.MaxNodes != Infinite32 && j.MaxNodes > j.MinNodes {
		s.reqN = r.maxN
	}
	if !s.run(c) {
		return placement{}, false
	}
	var pos []int
	for p, ok := range s.chosen {
		if ok {
			pos = append(pos, p)
		}
	}
	pl, ok := distributeIn(r, cands, caps, pos, s.order)
	if !ok {
		return placement{}, false
	}
	// The nodes the GPUs brought in beyond the tasks run one task each
	// (a job without -n shows as many tasks as nodes).
	for i := range pl.tasks {
		if pl.tasks[i] == 0 {
			pl.tasks[i] = 1
			if pl.cpus != nil {
				pl.cpus[i] = r.unit
			}
		}
	}
	if pt > 0 {
		pl.gpus = perTaskGPUs(r.gpuJob, pt, pl.tasks, gpus, pos)
	} else {
		pl.gpus = splitGPUs(r.gpuJob, gpus, pos)
	}
	if pl.gpus == nil {
		return placement{}, false
	}
	return pl, true
}

// perTaskGPUs gives each chosen node (pos ascending, tasks its task
// counts) its tasks times per (_set_task_bits' goal), nil when a node
// does not have them free or the total is not the job's.
func perTaskGPUs(want, per uint64, tasks []int, avail []uint64, pos []int) []uint64 {
	out := make([]uint64, len(pos))
	var total uint64
	for i, p := range pos {
		n := uint64(tasks[i])
		if n > avail[p]/per {
			return nil
		}
		out[i] = n * per
		total += out[i]
	}
	if total != want {
		return nil
	}
	return out
}

// splitGPUs gives the chosen positions (ascending) their GPUs: in order,
// what the node offers but at most what is left less one for each node
// after it. nil when the total is not reached.
func splitGPUs(want uint64, avail []uint64, pos []int) []uint64 {
	out := make([]uint64, len(pos))
	var total uint64
	for i, p := range pos {
		rest := uint64(len(pos) - i - 1)
		if want < total+rest {
			continue
		}
		out[i] = min(avail[p], want-total-rest)
		total += out[i]
	}
	if total < want {
		return nil
	}
	return out
}

type gpuSearch struct {
	r      *request
	cands  []int
	caps   []int // task capacities, zeroed as _eval_nodes clears avail_cpu_per_node
	gpus   []uint64
	chosen []bool
	order  []int // positions in the order taken

	remN, remT, maxN int
	minN, reqN       int // the job's minimum and targeted node counts
	total            uint64
}

func (s *gpuSearch) done() bool {
	return s.remN <= 0 && s.remT <= 0 && s.total >= s.r.gpuJob
}

func (s *gpuSearch) take(p int) {
	s.chosen[p] = true
	s.order = append(s.order, p)
	s.remN--
	s.maxN--
	s.remT -= s.caps[p]
	s.total += s.gpus[p]
}

// enoughNodes is _enough_nodes: with GPUs over the job rem_nodes counts
// down from the minimum, and a job that gave a range (req_nodes, its
// maximum) needs that many fewer.
func (s *gpuSearch) enoughNodes(avail int) bool {
	need := s.remN
	if s.reqN > s.minN {
		need = s.remN + s.minN - s.reqN
	}
	return avail >= need
}

func (s *gpuSearch) run(c *cluster) bool {
	r := s.r
	for _, ni := range r.reqList {
		p, ok := slices.BinarySearch(s.cands, ni)
		if !ok || s.maxN <= 0 {
			return false
		}
		s.take(p)
	}
	if len(r.reqList) > 0 {
		if s.done() {
			return true
		}
		if s.maxN <= 0 {
			return false
		}
	}
	sets := s.sets(c)
	for s.maxN > 0 {
		best := -1
		bestSuff := false
		for i := range sets {
			st := &sets[i]
			if st.nodes == 0 || (r.job.Contiguous && len(r.reqList) > 0 && st.req < 0) {
				continue
			}
			suff := st.caps >= s.remT && s.enoughNodes(st.nodes) && s.total+st.gpus >= r.gpuJob
			newBest := best < 0 || (sets[best].req < 0 && st.req >= 0) || st.weight < sets[best].weight
			if !newBest && st.weight == sets[best].weight &&
				((suff && !bestSuff) || (suff && st.caps < sets[best].caps) || (!suff && st.caps > sets[best].caps)) {
				newBest = true
			}
			if !newBest && !bestSuff && r.job.Contiguous && suff {
				newBest = true
			}
			if newBest {
				best, bestSuff = i, suff
			}
		}
		if best < 0 || (r.job.Contiguous && !bestSuff) {
			break
		}
		st := &sets[best]
		if st.req >= 0 {
			for p := st.req; p < st.hi && s.maxN > 0 && !s.done(); p++ {
				if !s.chosen[p] && s.caps[p] > 0 {
					s.take(p)
				}
			}
			for p := st.req - 1; p >= st.lo && s.maxN > 0 && !s.done(); p-- {
				if !s.chosen[p] && s.caps[p] > 0 {
					s.take(p)
				}
			}
		} else {
			if s.remN <= 1 {
				s.bestSingle(st)
			}
			for p := st.lo; p < st.hi && s.maxN > 0 && !s.done(); p++ {
				if s.chosen[p] || s.caps[p] <= 0 || (s.maxN == 1 && s.caps[p] < s.remT) {
					continue
				}
				s.take(p)
			}
		}
		if s.done() {
			return true
		}
		st.nodes, st.caps = 0, 0
	}
	return s.remT <= 0 && s.total >= r.gpuJob && s.enoughNodes(0)
}

// bestSingle keeps, of the set's nodes, only the one that holds the rest
// of the job alone with the least capacity to spare, if one does.
func (s *gpuSearch) bestSingle(st *gpuSet) {
	best := -1
	for p := st.lo; p < st.hi; p++ {
		if s.chosen[p] || s.caps[p] < s.remT || s.total+s.gpus[p] < s.r.gpuJob {
			continue
		}
		if best < 0 || s.caps[p] < s.caps[best] {
			best = p
			if s.caps[p] == s.remT {
				break
			}
		}
	}
	if best < 0 {
		return
	}
	for p := st.lo; p < st.hi; p++ {
		if p != best {
			s.caps[p] = 0
		}
	}
}

// sets splits the candidates into blocks of consecutive nodes of one
// weight (one weight is not asked of a contiguous job), counting what
// the nodes not yet taken offer.
func (s *gpuSearch) sets(c *cluster) []gpuSet {
	var out []gpuSet
	for p, ni := range s.cands {
		w := c.nodes[ni].Weight
		if len(out) == 0 || s.cands[p-1]+1 != ni || (!s.r.job.Contiguous && out[len(out)-1].weight != w) {
			out = append(out, gpuSet{lo: p, req: -1, weight: w})
		}
		st := &out[len(out)-1]
		st.hi = p + 1
		if s.chosen[p] {
			if st.req < 0 {
				st.req = p
			}
			continue
		}
		st.nodes++
		st.caps += s.caps[p]
		st.gpus += s.gpus[p]
	}
	return out
}
