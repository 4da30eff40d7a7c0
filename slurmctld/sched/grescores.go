package sched

// gresTrimmed is the free cores of node ni a job with GRES does not get
// (held are cores it never gets anyway): cons_tres's _select_cores hands
// such a job's free cores to gres_select_filter_sock_core, which keeps
// the sockets near the GRES the job needs (gresbind.go) and, when the
// tasks the node may run are bounded, keeps only the cores those tasks
// need, taking off the highest free core of the required socket with
// the most free cores (the first of equals) until that many are left.
// On a node of 4 one-core sockets a -c 3 job gets cores 1-3, not 0-2.
// want is the cores the job takes here; never fewer are kept.
// --gpus-per-task bounds the tasks by the node's free GPUs. counts
// overrides the count of a request (by position in r.gres) with what the
// node must still give of a --gpus job. A first attempt keeps only the
// sockets of the devices; when that leaves fewer than want cores, the
// second attempt's cores are used (choose_nodes' two _eval_nodes).
// ok is false when enforce-binding leaves fewer than want cores: the
// node cannot run the job (gres_select_filter_sock_core fails it).
func (c *cluster) gresTrimmed(r *request, ni int, held []uint16, want int, counts map[int]uint64) (trim []uint16, ok bool) {
	nd := &c.nodes[ni]
	per, socks := int(nd.CoresPerSocket), int(nd.Sockets)
	if per == 0 || socks == 0 {
		return nil, true
	}
	free := c.freeCores(ni, held)
	keep := c.trimCores(r, ni, free, want, counts, true)
	if keep == nil || keep.n < want {
		if k := c.trimCores(r, ni, free, want, counts, false); k != nil {
			keep = k
		}
	}
	if keep == nil {
		return nil, true
	}
	if keep.n < want && c.enforcedCores(r, ni, false) >= 0 {
		return nil, false
	}
	var out []uint16
	for k, ok := range free {
		if ok && !keep.free[k] {
			out = append(out, uint16(k))
		}
	}
	return out, true
}

// trimCores is one attempt of gresTrimmed: the cores kept, nil when the
// node cannot run the job this way.
func (c *cluster) trimCores(r *request, ni int, free []bool, want int, counts map[int]uint64, first bool) *coreSet {
	j := r.job
	nd := &c.nodes[ni]
	cs := newCoreSet(free, int(nd.Sockets), int(nd.CoresPerSocket))
	n := cs.n
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
			return cs
		}
		if maxT < 0 || alloc < maxT {
			maxT = alloc
		}
	}
	tpc := max(int(nd.ThreadsPerCore), 1)
	minCores := (max(minT, 1)*max(cpt, 1) + tpc - 1) / tpc
	req := make([]bool, cs.socks)
	enforce := j.GresEnforceBind
	if needs := c.bindNeeds(r, ni, cs, false, counts); len(needs) > 0 {
		if !filterSockets(cs, needs, req, first, enforce, minCores) {
			return nil
		}
	} else {
		for s := range req {
			req[s] = true
		}
	}
	if j.GPUsPerTask > 0 {
		// gres_per_task: as many tasks as the node's free GPUs serve.
		byGPU := int(min(c.gresFree(ni, j.jobGresName(), j.GPUType)/uint64(j.GPUsPerTask), uint64(len(free))))
		if maxT < 0 || byGPU < maxT {
			maxT = byGPU
		}
	}
	if maxT < 0 {
		return cs
	}
	need := maxT
	if cpt > 0 {
		thr := max(r.threads(nd), 1)
		for ; maxT >= minT; maxT-- {
			need = (maxT*cpt + thr - 1) / thr
			if need <= cs.n {
				break
			}
		}
	}
	if need > cs.n {
		return nil
	}
	need = max(need, want)
	if !enforce && !first {
		for s := 0; s < cs.socks && cs.n > need; s++ {
			for !req[s] && cs.n > need && cs.clearTop(s) {
			}
		}
	}
	for cs.n > need {
		s := -1
		for k := range cs.cnt {
			if req[k] && cs.cnt[k] > 0 && (s < 0 || cs.cnt[k] > cs.cnt[s]) {
				s = k
			}
		}
		if s < 0 {
			break
		}
		cs.clearTop(s)
	}
	return cs
}
