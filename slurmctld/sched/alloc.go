package sched

import (
	"slices"
)

// allocate turns a placement into an Allocation starting now, takes its
// resources from the free state and records their release. It reports
// false, changing nothing, when a node cannot give the job the cores it
// needs (enforce-binding leaves too few).
func (c *cluster) allocate(r *request, pl placement) (Allocation, bool) {
	a := Allocation{
		JobID:         r.job.JobID,
		UserID:        r.job.UserID,
		Partition:     r.part.Name,
		Start:         c.now,
		End:           c.now + r.duration,
		Exclusive:     r.whole,
		ExclusiveUser: r.user,
		Shared:        r.share,
		Nodes:         make([]NodeAlloc, len(pl.nodes)),
	}
	for i, ni := range pl.nodes {
		nd := &c.nodes[ni]
		want := nd.EffCores()
		switch {
		case r.whole:
		case pl.cpus != nil:
			// CPUs counted: cores for the node's CPUs (the tasks' CPUs
			// are what coresFor counts, one CPU a "task").
			want = r.coresFor(nd, pl.cpus[i])
		default:
			want = r.coresFor(nd, pl.tasks[i])
		}
		var cores []uint16
		if r.over {
			cores = c.pickShared(ni, want, r.maxShare)
		} else {
			cores = make([]uint16, 0, want)
		}
		held := c.futureHeld(ni, a.End)
		var counts map[int]uint64
		if r.gpuJob > 0 && i < len(pl.gpus) {
			// What the job still needs here of its GPUs (rem_gres):
			// cons_tres's _select_cores runs on the required nodes
			// in turn, then on every other node before any is
			// added, so only required nodes count against it.
			left := r.gpuJob
			isReq := func(n int) bool { return r.req != nil && r.req.Test(uint(n)) }
			for k, g := range pl.gpus {
				if isReq(pl.nodes[k]) && (k < i || !isReq(ni)) {
					left -= min(left, g)
				}
			}
			counts = map[int]uint64{r.gpuSlot: left}
		}
		if len(r.gres) > 0 && !r.whole && !r.over {
			trim, ok := c.gresTrimmed(r, ni, held, want, counts)
			if !ok {
				return Allocation{}, false
			}
			held = append(slices.Clone(held), trim...)
		}
		if !r.over {
			avail := c.freeCores(ni, held)
			if cf := &c.snap.Config; r.whole {
				cores = takeLowest(avail, want)
			} else if cf.CPUsConsumable || (cf.CoreDistBlock && !r.job.CoreCyclic) || r.job.CoreBlock {
				// Block distribution (CR_CPU's _block_sync_core_bitmap).
				cores = blockCores(avail, int(nd.Sockets), int(nd.CoresPerSocket), want)
			} else {
				cores = cyclicCores(avail, int(nd.Sockets), int(nd.CoresPerSocket), want, r.cpt, r.threads(nd))
			}
		}
		if r.whole && r.job.SpecSet {
			cores = specJobCores(r.job, nd, cores)
		}
		cpus := uint32(len(cores)) * uint32(max(nd.ThreadsPerCore, 1))
		if r.whole && r.job.SpecSet {
			// Its effective CPUs, whatever cores the job was given
			// (cons_common counts a whole node's cpus_efctv).
			cpus = uint32(wholeCPUs(nd))
		}
		if c.snap.Config.CPUsConsumable && !r.whole && !r.over {
			cpus = min(cpus, uint32(r.usedCPUs(nd, pl, i)))
		}
		var mem uint64
		switch {
		case r.memAll:
			mem = nd.AvailMem()
		case r.memPerCPU > 0:
			// Per allocated CPU, as cons_tres counts it. A whole-node job
			// holds every CPU of the node, so its memory is the node's
			// CPUs times the per-CPU amount, not the node's memory.
			mem = r.memPerCPU * uint64(cpus)
		default:
			mem = r.memPerNode
		}
		var gres []Gres
		var bound []uint64
		if len(nd.GresBind) > 0 {
			bound = make([]uint64, len(nd.GresBind))
		}
		for k, g := range r.gres {
			left := g.Count
			if r.gpuJob > 0 && k == r.gpuSlot && i < len(pl.gpus) {
				left = pl.gpus[i]
			}
			if bound != nil {
				c.pickBound(ni, g.Name, g.Type, left, cores, bound)
			}
			for _, sl := range c.gres[ni] {
				if left == 0 {
					break
				}
				if sl.name != g.Name || (g.Type != "" && sl.typ != g.Type) || sl.free == 0 {
					continue
				}
				t := min(left, sl.free)
				left -= t
				// The slot's free count drops in take.
				gres = append(gres, Gres{Name: sl.name, Type: sl.typ, Count: t})
			}
		}
		a.Nodes[i] = NodeAlloc{Node: ni, Cores: cores, CPUs: cpus, MemoryMB: mem, Gres: gres, GresBind: bound}
	}
	c.takeLicenses(r, c.now)
	c.take(&a, a.End)
	for _, ni := range pl.nodes {
		c.sortReleases(ni)
	}
	c.refreshClasses(pl.nodes)
	return a, true
}

// usedCPUs is the CPUs the job gets on the i-th node of pl under CR_CPU:
// those its tasks use (dist_tasks_compute_c_b's count, which the core
// bitmap then covers), raised to --mincpus; under CR_Core the job gets
// every thread of its cores instead.
func (r *request) usedCPUs(nd *Node, pl placement, i int) int {
	if pl.cpus != nil {
		return max(pl.cpus[i], r.minCPUs)
	}
	return max(pl.tasks[i]*r.cpt, r.minCPUs)
}

// specJobCores is the cores of an idle node nd a whole-node job that
// named its specialized cores gets (cons_common's core_array for
// core_spec with AllowSpecResourcesUsage): with a count of 0 every core;
// else the node's specialized cores beyond the first count of them are
// the job's too, and a count above the node's own takes further cores
// off, from the last core of the last socket down. A thread count
// counts cores on nodes of one thread a core; on others the job gets
// what any job gets. cores is what any job gets.
func specJobCores(j *Job, nd *Node, cores []uint16) []uint16 {
	n := int(j.SpecCount)
	if j.SpecThreads && int(nd.CPUs) != nd.Cores() {
		return cores
	}
	all := nd.Cores()
	avail := make([]bool, all)
	for _, k := range cores {
		avail[k] = true
	}
	if n == 0 {
		for k := range avail {
			avail[k] = true
		}
	} else {
		spec := slices.Clone(nd.SpecCores)
		slices.Sort(spec)
		used := min(n, len(spec))
		for _, k := range spec[used:] {
			if int(k) < all {
				avail[k] = true
			}
		}
		rem := n - used
		per := int(nd.CoresPerSocket)
		for c := per - 1; c >= 0 && rem > 0; c-- {
			for s := int(nd.Sockets) - 1; s >= 0 && rem > 0; s-- {
				if k := c + s*per; avail[k] {
					avail[k] = false
					rem--
				}
			}
		}
	}
	out := make([]uint16, 0, all)
	for k, ok := range avail {
		if ok {
			out = append(out, uint16(k))
		}
	}
	return out
}
