package ctld

import (
	"slices"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Core reservations (CoreCnt=, select/cons_tres): a reservation that
// holds some cores of its nodes rather than the whole nodes. Its jobs run
// on those cores only; other jobs keep the nodes' other cores.

// resvNodeCores is one node of a core reservation and its reserved
// cores (node-local ids: socket * cores per socket + core). Kept by node
// name, as the nodes are, so a reordered node table keeps the right ones.
type resvNodeCores struct {
	Node  string
	Cores []uint16
}

// nodeCoreCount is a node's core count (tot_cores).
func nodeCoreCount(n *Node) int { return int(n.Sockets) * int(n.Cores) }

// coreSet is the cores of some nodes, by node name: true = taken.
type coreSet map[string][]bool

func (s coreSet) mark(n *Node, cores []uint16) {
	b := s[n.Name]
	if b == nil {
		b = make([]bool, nodeCoreCount(n))
		s[n.Name] = b
	}
	for _, k := range cores {
		if int(k) < len(b) {
			b[k] = true
		}
	}
}

// free is the cores of n not taken, in id order.
func (s coreSet) free(n *Node) []uint16 {
	b := s[n.Name]
	var out []uint16
	for k := 0; k < nodeCoreCount(n); k++ {
		if b == nil || !b[k] {
			out = append(out, uint16(k))
		}
	}
	return out
}

// pickCores is _select_nodes for a CoreCnt= request: the nodes (nodes,
// or the partition's when nil) that are up and available, minus those of
// whole-node reservations meeting the window; the cores of core
// reservations meeting it, and without IGNORE_JOBS those of running jobs
// that end after the start, are not taken. MAINT and OVERLAP requests
// fall back to the nodes and cores other reservations hold.
func (c *Controller) pickCores(part *Partition, nodes []string, nodeCnt uint32, coreCnt []uint32,
	start, end int64, flags uint64, feats []resvFeat) ([]resvNodeCores, error) {
	var cand []*Node
	if nodes != nil {
		for _, name := range nodes {
			if n := c.nodeIndex[name]; n != nil {
				cand = append(cand, n)
			}
		}
	} else {
		cand = slices.Clone(part.Nodes)
	}
	cand = slices.DeleteFunc(cand, func(n *Node) bool { return !n.Available() })
	if len(feats) > 0 {
		with, err := featureFilter(feats, cand, max(nodeCnt, 1))
		if err != nil {
			return nil, err
		}
		cand = slices.DeleteFunc(cand, func(n *Node) bool { return !with[n.Name] })
	}
	used := coreSet{}
	for _, n := range cand {
		if n.CoreSpecCnt > 0 {
			// Specialized cores are the node's last ones here (the
			// select plugin's spec_core_filter); they are never
			// reserved.
			tot := nodeCoreCount(n)
			var spec []uint16
			for k := max(tot-int(n.CoreSpecCnt), 0); k < tot; k++ {
				spec = append(spec, uint16(k))
			}
			used.mark(n, spec)
		}
	}
	if flags&resvIgnJobs == 0 && c.jobs != nil {
		for _, j := range c.jobs.m.Jobs() {
			if !j.Running() || j.EndTime < start {
				continue
			}
			for i, name := range j.Nodes {
				if n := c.nodeIndex[name]; n != nil && i < len(j.NodeCores) {
					used.mark(n, j.NodeCores[i])
				}
			}
		}
	}
	// Nodes whose every core a job holds are out (_check_job_compatibility).
	cand = slices.DeleteFunc(cand, func(n *Node) bool { return len(used.free(n)) == 0 })
	now := c.now().Unix()
	filtered := slices.Clone(cand)
	fused := coreSet{}
	for name, b := range used {
		fused[name] = slices.Clone(b)
	}
	for _, r := range c.resv.list {
		if len(r.Nodes) == 0 {
			continue
		}
		rs, re := r.relTimes(now)
		if !timeOverlap(start, end, flags, rs, re, r.Flags) {
			continue
		}
		if r.Full {
			filtered = slices.DeleteFunc(filtered, func(n *Node) bool { return slices.Contains(r.Nodes, n.Name) })
			continue
		}
		for _, rc := range r.Cores {
			if n := c.nodeIndex[rc.Node]; n != nil {
				fused.mark(n, rc.Cores)
			}
		}
	}
	pick := func(cand []*Node, used coreSet) []resvNodeCores {
		if flags&resvFirstCores != 0 {
			return firstCores(cand, used, coreCnt)
		}
		// _pick_node_cnt asks for no more nodes than there are.
		return sequentialPick(cand, used, min(nodeCnt, uint32(len(cand))), coreCnt)
	}
	if got := pick(filtered, fused); got != nil {
		return got, nil
	}
	if flags&(resvMaint|resvOverlap) != 0 {
		if got := pick(cand, used); got != nil {
			return got, nil
		}
	}
	return nil, resvErr(slurmerr.ESLURM_NODES_BUSY)
}

// sequentialPick is cons_tres' _sequential_pick for partial nodes: with
// a node count and one core count, that many cores split over the nodes
// (the first ones taking the remainder); with one core count and no node
// count, that many cores from the nodes in order; otherwise one core
// count per node, each node with enough free cores taking the next
// count. Free cores are taken lowest id first. nil when the request
// cannot be met.
func sequentialPick(cand []*Node, used coreSet, nodeCnt uint32, coreCnt []uint32) []resvNodeCores {
	// The counts given for at most as many nodes as there are decide
	// the mode; all of them must be met.
	counts := coreCnt
	lead := min(len(counts), len(cand))
	total := 0
	for _, k := range counts[:lead] {
		total += int(k)
	}
	perNode, extra, single := 0, -1, false
	switch {
	case nodeCnt > 1 && lead == 1:
		perNode = max(total/int(nodeCnt), 1)
		extra = total - perNode*int(nodeCnt)
	case nodeCnt == 0 && lead == 1:
		single = true
	}
	left := int(nodeCnt)
	next := 0
	var out []resvNodeCores
	done := false
	for _, n := range cand {
		if done {
			break
		}
		free := used.free(n)
		have := len(free)
		var want int
		switch {
		case perNode > 0:
			if have < perNode {
				continue
			}
			if have > perNode && extra > 0 {
				want = min(perNode+extra, have)
				// Slurm's own arithmetic: this grows the remainder
				// rather than shrinking it.
				extra -= want - have
			} else {
				want = perNode
			}
		case single:
			want = min(have, total)
			total -= want
		default:
			if next >= len(counts) || have < int(counts[next]) {
				continue
			}
			want = int(counts[next])
		}
		if want > 0 {
			out = append(out, resvNodeCores{Node: n.Name, Cores: slices.Clone(free[:want])})
			left--
		}
		switch {
		case perNode > 0:
			done = left <= 0
		case single:
			done = total <= 0
		default:
			next++
			done = next >= len(counts) || counts[next] == 0
		}
	}
	if !done {
		return nil
	}
	return out
}

// firstCores is cons_tres' _pick_first_cores (Flags=FIRST_CORES): one
// core count per node, taken from the lowest core ids, each of which
// must be free.
func firstCores(cand []*Node, used coreSet, coreCnt []uint32) []resvNodeCores {
	var out []resvNodeCores
	next := 0
	for _, n := range cand {
		if next >= len(coreCnt) || coreCnt[next] == 0 {
			break
		}
		want := int(coreCnt[next])
		free := used.free(n)
		if len(free) < want || (want > 0 && int(free[want-1]) != want-1) {
			continue
		}
		out = append(out, resvNodeCores{Node: n.Name, Cores: slices.Clone(free[:want])})
		next++
	}
	if next < len(coreCnt) && coreCnt[next] != 0 {
		return nil
	}
	return out
}

// createCoreResv fills r's nodes and cores for a CoreCnt= request (the
// core part of create_resv). nodes are those of Nodes=, nil without.
func (c *Controller) createCoreResv(r *resvRec, d *msg.ReservationDesc, part *Partition, nodes []string, flags uint64) (*Partition, error) {
	counts := zeroTerminated(d.CoreCnt)
	if nodes != nil && len(counts) < len(nodes) {
		// Nodes= names more nodes than CoreCnt= gives counts for.
		return nil, resvErr(slurmerr.ESLURM_INVALID_CORE_CNT)
	}
	var nodeCnt uint32
	if nodes == nil {
		for _, n := range zeroTerminated(d.NodeCnt) {
			nodeCnt += n
		}
	}
	if part == nil {
		if part = c.defaultPart(); part == nil {
			return nil, resvErr(slurmerr.ESLURM_DEFAULT_PARTITION_NOT_SET)
		}
	}
	var feats []resvFeat
	if r.Features != "" {
		var err error
		if r.Features, feats, err = c.checkResvFeatures(r.Features); err != nil {
			return nil, err
		}
	}
	picked, err := c.pickCores(part, nodes, nodeCnt, counts, r.Start, r.End, flags, feats)
	if err != nil {
		return nil, err
	}
	if len(picked) == 0 {
		return nil, resvErr(slurmerr.ESLURM_NODES_BUSY)
	}
	// Table order, as the node bitmap gives them.
	idx := c.nodeIdx()
	slices.SortFunc(picked, func(a, b resvNodeCores) int { return idx[a.Node] - idx[b.Node] })
	r.Nodes = r.Nodes[:0]
	for _, p := range picked {
		r.Nodes = append(r.Nodes, p.Node)
	}
	r.Cores, r.Full = picked, false
	return part, nil
}

// zeroTerminated is a count array up to its first zero.
func zeroTerminated(a []uint32) []uint32 {
	if i := slices.Index(a, 0); i >= 0 {
		return a[:i]
	}
	return a
}

// coreTRES is _set_tres_cnt for core reservations: the cores, and a CPU
// for every thread of them.
func (c *Controller) coreTRES(r *resvRec) (cores uint32, cpus uint64) {
	for _, rc := range r.Cores {
		cores += uint32(len(rc.Cores))
		if n := c.nodeIndex[rc.Node]; n != nil {
			cpus += uint64(len(rc.Cores)) * uint64(max(n.Threads, 1))
		}
	}
	return cores, cpus
}

// coreSpec is the reservation's per-node core lines for the info reply.
func (r *resvRec) coreSpec() []msg.ResvCoreSpec {
	if r.Full || len(r.Cores) == 0 {
		return nil
	}
	out := make([]msg.ResvCoreSpec, 0, len(r.Cores))
	for _, rc := range r.Cores {
		out = append(out, msg.ResvCoreSpec{NodeName: msg.Str(rc.Node), CoreID: msg.Str(cpuListOf(rc.Cores, 1))})
	}
	return out
}
