package sched

import "slices"

// GRES bound to cores (gres.conf Cores=). cons_tres counts a node's free
// bound devices by socket, each at the first socket holding one of its
// cores (_build_sock_gres_by_topo; a record near every socket, or bound
// to none, is near any). gres_select_filter_sock_core then walks the
// sockets, most free cores first, marking sockets as required until the
// devices seen reach what the node must give; a first attempt
// (choose_nodes' first _eval_nodes) keeps only the required sockets'
// cores, and clears the cores of sockets without free devices first. If
// the job does not fit that way, the second attempt keeps every socket
// but trims the unrequired ones first. --gres-flags=enforce-binding
// keeps only the required sockets' cores on every attempt, so a job
// needing more cores than its devices' sockets have is refused.
// _set_node_bits then gives the job one device on each socket it has
// cores on, then more on those sockets, then devices elsewhere.

// coreSet is the free cores of a node by socket.
type coreSet struct {
	per, socks int
	free       []bool
	cnt        []int // free cores a socket
	n          int
}

func newCoreSet(free []bool, socks, per int) *coreSet {
	cs := &coreSet{per: per, socks: socks, free: slices.Clone(free), cnt: make([]int, socks)}
	for k, ok := range cs.free {
		if ok && k/per < socks {
			cs.cnt[k/per]++
			cs.n++
		}
	}
	return cs
}

// clearTop clears socket s's highest free core; false when it has none.
func (cs *coreSet) clearTop(s int) bool {
	for k := s*cs.per + cs.per - 1; k >= s*cs.per; k-- {
		if cs.free[k] {
			cs.free[k] = false
			cs.cnt[s]--
			cs.n--
			return true
		}
	}
	return false
}

// bySocket sorts socket indices by free cores, most first, keeping
// socket order among equals.
func (cs *coreSet) bySocket() []int {
	order := make([]int, cs.socks)
	for s := range order {
		order[s] = s
	}
	slices.SortStableFunc(order, func(a, b int) int { return cs.cnt[b] - cs.cnt[a] })
	return order
}

// bindNeed is one GRES request of the job on a node with bound devices:
// the node's free devices of it by socket and near any socket, and how
// many the node must give.
type bindNeed struct {
	bySock []uint64
	any    uint64
	count  uint64
	// perNode: count is the job's per-node request, which the node must
	// have; a share of --gpus only needs one device.
	perNode bool
}

// recSocket is the socket a GresBind record counts at: the first with
// one of its cores (with enforce, the first of those with a free core),
// -1 for a record near every socket or bound to none.
func recSocket(b *GresBind, cs *coreSet, enforce bool) int {
	if b.Cores == nil {
		return -1
	}
	on := make([]bool, cs.socks)
	all := true
	for _, k := range b.Cores {
		if s := int(k) / cs.per; s < cs.socks {
			on[s] = true
		}
	}
	for _, ok := range on {
		all = all && ok
	}
	if all {
		return -1
	}
	for s, ok := range on {
		if ok && (!enforce || cs.cnt[s] > 0) {
			return s
		}
	}
	return -2 // on no usable socket
}

// bindNeeds are the job's requests with bound devices on node ni; counts
// overrides a request's count by its position in r.gres (a --gpus share).
func (c *cluster) bindNeeds(r *request, ni int, cs *coreSet, total bool, counts map[int]uint64) []bindNeed {
	nd := &c.nodes[ni]
	if len(nd.GresBind) == 0 || len(r.gres) == 0 {
		return nil
	}
	var out []bindNeed
	for k, g := range r.gres {
		need := bindNeed{bySock: make([]uint64, cs.socks), count: g.Count, perNode: true}
		if n, ok := counts[k]; ok {
			need.count, need.perNode = n, false
		}
		bound := false
		for bi := range nd.GresBind {
			b := &nd.GresBind[bi]
			if b.Name != g.Name || (g.Type != "" && b.Type != g.Type) {
				continue
			}
			bound = bound || b.Cores != nil
			free := b.Count
			if !total {
				free = c.bindLeft(ni, bi)
			}
			if free == 0 {
				continue
			}
			switch s := recSocket(b, cs, r.job.GresEnforceBind); {
			case s == -1:
				need.any += free
			case s >= 0:
				need.bySock[s] += free
			}
		}
		if bound && need.count > 0 {
			out = append(out, need)
		}
	}
	return out
}

// filterSockets is the socket part of gres_select_filter_sock_core for
// needs: it marks the required sockets in req and, on a first attempt
// or with enforce, clears the cores of the others (and, on a first
// attempt, of sockets without free devices, down to minCores). It
// reports false when the node cannot give a need.
func filterSockets(cs *coreSet, needs []bindNeed, req []bool, first, enforce bool, minCores int) bool {
	for _, nd := range needs {
		total := nd.any
		enough := false
		for _, s := range cs.bySocket() {
			if nd.any+nd.bySock[s] == 0 && first && cs.n > minCores {
				for cs.n > minCores && cs.clearTop(s) {
				}
			}
			if (enforce || first) && cs.cnt[s] == 0 {
				continue
			}
			total += nd.bySock[s]
			if !enough {
				req[s] = true
			}
			if nd.any == 0 && total >= nd.count {
				enough = true
			}
		}
		if total == 0 || (nd.perNode && total < nd.count) {
			return false
		}
		if enforce || first {
			for s := range req {
				if !req[s] {
					for cs.clearTop(s) {
					}
				}
			}
		}
	}
	return true
}

// pickBound chooses which of node ni's GresBind records the job's count
// devices of name and type come from, given the job's cores
// (_set_node_bits): one near any socket and one on each socket of the
// job's cores, then more of those, then the other sockets' in socket
// order. It adds them to held (by record) and returns what is left.
func (c *cluster) pickBound(ni int, name, typ string, count uint64, cores []uint16, held []uint64) uint64 {
	nd := &c.nodes[ni]
	per, socks := int(nd.CoresPerSocket), int(nd.Sockets)
	if per == 0 || socks == 0 {
		return count
	}
	cs := newCoreSet(make([]bool, socks*per), socks, per)
	used := make([]bool, socks)
	for _, k := range cores {
		if s := int(k) / per; s < socks {
			used[s] = true
		}
	}
	sockOf := make([]int, len(nd.GresBind))
	for bi := range nd.GresBind {
		sockOf[bi] = recSocket(&nd.GresBind[bi], cs, false)
	}
	left := func(bi int) uint64 { return c.bindLeft(ni, bi) - min(held[bi], c.bindLeft(ni, bi)) }
	takeFrom := func(s int, most uint64) {
		for bi := range nd.GresBind {
			b := &nd.GresBind[bi]
			if count == 0 || most == 0 {
				return
			}
			if sockOf[bi] != s || b.Name != name || (typ != "" && b.Type != typ) || left(bi) == 0 {
				continue
			}
			t := min(left(bi), count, most)
			held[bi] += t
			count -= t
			most -= t
		}
	}
	for s := -1; s < socks; s++ {
		if s < 0 || used[s] {
			takeFrom(s, 1)
		}
	}
	for s := -1; s < socks; s++ {
		if s < 0 || used[s] {
			takeFrom(s, count)
		}
	}
	for s := range socks {
		if !used[s] {
			takeFrom(s, count)
		}
	}
	return count
}

// enforcedCores is how many cores of node ni a job with
// --gres-flags=enforce-binding may use: those of the sockets its
// devices need (all cores free and every device, for total), -1 when
// nothing limits them, 0 when the node cannot give the devices.
func (c *cluster) enforcedCores(r *request, ni int, total bool) int {
	nd := &c.nodes[ni]
	per, socks := int(nd.CoresPerSocket), int(nd.Sockets)
	if !r.job.GresEnforceBind || len(nd.GresBind) == 0 || per == 0 || socks == 0 {
		return -1
	}
	var free []bool
	if total {
		free = make([]bool, nd.Cores())
		for k := range free {
			free[k] = !slices.Contains(nd.SpecCores, uint16(k))
		}
	} else {
		free = c.freeCores(ni, nil)
	}
	cs := newCoreSet(free, socks, per)
	var counts map[int]uint64
	if r.gpuJob > 0 {
		// --gpus: the per-node limit is the job's count, not the
		// slot's per-node minimum (gres_select_filter_sock_core takes
		// gres_per_job when there is no gres_per_node).
		counts = map[int]uint64{r.gpuSlot: r.gpuJob}
	}
	needs := c.bindNeeds(r, ni, cs, total, counts)
	if len(needs) == 0 {
		return -1
	}
	if !filterSockets(cs, needs, make([]bool, socks), false, true, 0) {
		return 0
	}
	return cs.n
}

// bindLeft is record bi of node ni's free devices now (none when the
// state was built before the node had records).
func (c *cluster) bindLeft(ni, bi int) uint64 {
	if ni < len(c.bindFree) && bi < len(c.bindFree[ni]) {
		return c.bindFree[ni][bi]
	}
	return 0
}
