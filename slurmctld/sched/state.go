package sched

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/bits-and-blooms/bitset"
)

// cluster is the working state of one pass: what is free now on every
// node, when running work releases resources, and the backfill
// reservations made so far. It is built from a Snapshot and only ever
// loses free resources during a pass (jobs start, reservations are added),
// which is what makes the failure caches of the backfill pass sound.
type cluster struct {
	snap  *Snapshot
	now   int64
	stats PassStats
	// bounds are the reservation boundaries (timeline buckets) of the
	// backfill pass, for PassStats.BFTable.
	bounds map[int32]struct{}
	nodes  []Node
	n      uint
	// gpuAt is whose GPU counts a placement with GPUs over the job sees;
	// gresRelB marks the backfill buckets where GRES are released
	// (gpusjob.go).
	gpuAt    int32
	gresRelB []bool

	// planned holds the nodes backfill picked for pending jobs' expected
	// starts (Plan.Planned); nil until backfill reserves something.
	planned *bitset.BitSet
	// lic is the bf_licenses timeline (licenses.go); nil when off.
	lic *licTimeline

	usable *bitset.BitSet
	// configs groups nodes of identical hardware (Slurm's node
	// configuration records): what fits an empty node of the group fits
	// all of them.
	configs []nodeConfig
	// hasFree holds the nodes with a free core and no whole-node job;
	// idle those with no job at all. They only shrink during a pass.
	hasFree  *bitset.BitSet
	idle     *bitset.BitSet
	partIdx  map[string]int
	partBits []*bitset.BitSet
	partCPUs []uint32 // CPUs of each partition's nodes (wrapping as tooManyCPUs)
	feat     *featureIndex

	coreOff  []int    // first word of a node's free-core bitmap in coreBits
	coreBits []uint64 // 1 = free core
	freeCore []int32
	freeMem  []uint64
	gres     [][]gresSlot // per node
	// bindFree is, per node with GresBind records, each record's free
	// devices now (nil when no node has such records).
	bindFree [][]uint64
	jobsOn   []int32 // allocations present on the node now
	excl     []bool  // a whole-node job holds the node
	userOn   []int64 // the one user whose jobs are on the node; noUser, mixedUsers
	exclUser []bool  // a job on the node wants its user alone there

	// Core sharing (oversubscribe.go), allocated on first use: per core
	// (coreOff*64 + core) how many sharing jobs hold it and the end of
	// the job its release is credited to; per node the sharing jobs and
	// the partition allowing sharing whose jobs are there.
	shareCnt    []uint16
	credit      []int64
	shareOn     []int32
	sharePartOn []int32

	rel     [][]release // per node, by time
	relGres [][]gresAmt // GRES of the releases that have some
	// resvFirst is the earliest backfill reservation start on a node, so
	// "can this start now" is one comparison. The reservations themselves
	// (whole nodes, as Slurm) are indexed by bucket (see timeline.go).
	resvFirst []int64
	// skip marks the pending jobs resvPass dealt with (nil without
	// advanced reservations).
	skip []bool
	// coreFuture, per node, the cores of core reservations that start
	// later (resvcores.go); nil without any.
	coreFuture  [][]futureCores
	futureNodes *bitset.BitSet // the nodes with some coreFuture

	// Preemptions planned in this pass and the jobs they take (preempt.go).
	preempts     []Preemption
	preemptTaken map[uint32]bool

	oneWeight          bool  // every node has the same weight
	scratchC, scratchK []int // candidate lists reused between jobs
	chosenBuf          []bool
	pbStart, pbRest    []int // placeByCapacity's scratch
	runBuf             []run

	// Backfill: bucket count and size, the capacity classes and the
	// reservations indexed by first bucket and by end bucket (see
	// timeline.go), and the sweep's scratch.
	nb          int
	res         int64
	maxCPUs     int  // most CPUs of any node: no task capacity exceeds it
	anyExclUser bool // some job on some node wants its user alone there
	classes     map[string]*capClass
	classList   []*capClass
	spanByK     [][]resvSpan
	spanByE     [][]resvSpan
	sweepNodes  []sweepNode
	sweepAvail  *bitset.BitSet
	hist        []int32
	gfree       []uint64
	steps       []step
	whyCache    map[whyKey]Reason

	// The block index (blockindex.go): block count, each node's longest
	// free run per block ([blk*n+node]), its reservations by end, run
	// length levels, and the searches' scratch.
	nBlk         int
	fine         bool  // fine blocks (see refineBlocks)
	searches     int   // earliest start searches so far
	blkLen       int32 // buckets per block
	maxFree      []int32
	words        int      // words of a node bitmap
	levBits      []uint64 // [blk][bitmap level] nodes by longest free run
	nBLv         int      // bitmap levels
	runStart     []int32
	nodeSpans    [][]resvSpan
	nLv          int
	lvOf         []uint8
	blkScratch   []int32
	sufBuf       []int32
	poss         []uint64 // a search's followed nodes
	failC, failK []int
	failed       bool
	fnRuns       []fnRun
	fnWit        fnWitness
	sweepFull    []uint64
	movedBuf     []blkMove
	bcur, bcap   []int32 // buildClassBlocks' cursors
}

const (
	noUser     int64 = -1
	mixedUsers int64 = -2
)

type gresSlot struct {
	name, typ string
	total     uint64
	free      uint64
}

type gresAmt struct {
	slot  int32
	count uint64
}

type release struct {
	at    int64
	b     int32 // backfill bucket from which the resources are free
	cores int32
	mem   uint64
	gres  int32 // index in cluster.relGres, -1 = none
	// whole is set when the released job held the node exclusively
	// (possibly for a user): the node's sharing restriction ends here.
	whole, user bool
	// memOnly: the job held memory (and GRES) but no cores, as a
	// suspended one does; it does not count as a job on the node.
	memOnly bool
}

func newCluster(s *Snapshot) *cluster {
	n := uint(len(s.Nodes))
	c := &cluster{
		snap:      s,
		now:       s.Now,
		nodes:     s.Nodes,
		n:         n,
		usable:    bitset.New(n),
		hasFree:   bitset.New(n),
		idle:      bitset.New(n),
		partIdx:   make(map[string]int, len(s.Partitions)),
		feat:      newFeatureIndex(s.Nodes),
		coreOff:   make([]int, n+1),
		freeCore:  make([]int32, n),
		freeMem:   make([]uint64, n),
		gres:      make([][]gresSlot, n),
		jobsOn:    make([]int32, n),
		excl:      make([]bool, n),
		userOn:    make([]int64, n),
		exclUser:  make([]bool, n),
		rel:       make([][]release, n),
		resvFirst: make([]int64, n),
		whyCache:  map[whyKey]Reason{},
		classes:   map[string]*capClass{},
	}
	// Backfill time steps: start times are now + k*bf_resolution within
	// bf_window.
	c.res = max(s.Config.BF.Resolution, 1)
	c.nb = int(max(s.Config.BF.Window, c.res)/c.res) + 1
	c.spanByK = make([][]resvSpan, c.nb)
	c.spanByE = make([][]resvSpan, c.nb)
	words := 0
	for i := range s.Nodes {
		c.coreOff[i] = words
		words += (s.Nodes[i].Cores() + 63) / 64
	}
	c.coreOff[n] = words
	c.coreBits = make([]uint64, words)
	for i := range s.Nodes {
		nd := &s.Nodes[i]
		if nd.State.Usable() {
			c.usable.Set(uint(i))
		}
		c.hasFree.Set(uint(i))
		c.idle.Set(uint(i))
		cores := nd.Cores()
		for k := 0; k < cores; k++ {
			c.coreBits[c.coreOff[i]+k/64] |= 1 << (k % 64)
		}
		c.freeCore[i] = int32(cores)
		for _, k := range nd.SpecCores {
			if w, bit := c.coreOff[i]+int(k)/64, uint64(1)<<(k%64); int(k) < cores && c.coreBits[w]&bit != 0 {
				c.coreBits[w] &^= bit
				c.freeCore[i]--
			}
		}
		c.maxCPUs = max(c.maxCPUs, cores*max(int(nd.ThreadsPerCore), 1))
		c.freeMem[i] = nd.AvailMem()
		if len(nd.Gres) > 0 {
			c.gres[i] = make([]gresSlot, len(nd.Gres))
			for k, g := range nd.Gres {
				c.gres[i][k] = gresSlot{name: g.Name, typ: g.Type, total: g.Count, free: g.Count}
			}
		}
		if len(nd.GresBind) > 0 {
			if c.bindFree == nil {
				c.bindFree = make([][]uint64, n)
			}
			c.bindFree[i] = make([]uint64, len(nd.GresBind))
			for k, b := range nd.GresBind {
				c.bindFree[i][k] = b.Count
			}
		}
		c.userOn[i] = noUser
		c.resvFirst[i] = math.MaxInt64
	}
	c.buildConfigs()
	c.oneWeight = true
	for i := range s.Nodes {
		c.oneWeight = c.oneWeight && s.Nodes[i].Weight == s.Nodes[0].Weight
	}
	c.partBits = make([]*bitset.BitSet, len(s.Partitions))
	c.partCPUs = make([]uint32, len(s.Partitions))
	for pi := range s.Partitions {
		p := &s.Partitions[pi]
		c.partIdx[p.Name] = pi
		b := bitset.New(n)
		for _, ni := range p.Nodes {
			if ni >= 0 && uint(ni) < n {
				b.Set(uint(ni))
				c.partCPUs[pi] += uint32(c.nodes[ni].CPUs)
			}
		}
		c.partBits[pi] = b
	}
	for i := range s.Running {
		c.applyRunning(&s.Running[i])
	}
	for i := range s.Nodes {
		if s.Nodes[i].State&NodeResuming != 0 && c.usable.Test(uint(i)) {
			c.holdResuming(i)
		}
	}
	// Sort each node's releases and pack them into one array, so the
	// backfill search reads them in node order from contiguous memory.
	total := 0
	for i := range c.rel {
		r := c.rel[i]
		total += len(r)
		if len(r) > 1 {
			sort.Slice(r, func(a, b int) bool { return r[a].at < r[b].at })
		}
	}
	flat := make([]release, 0, total)
	for i := range c.rel {
		off := len(flat)
		flat = append(flat, c.rel[i]...)
		// Full capacity: a later append copies the node's list out.
		c.rel[i] = flat[off:len(flat):len(flat)]
	}
	return c
}

// applyRunning takes a running job's resources and records when they come
// back. A job past its expected end still holds them; it is assumed to end
// at the next resolution step.
func (c *cluster) applyRunning(a *Allocation) {
	end := a.End
	if end <= c.now {
		end = c.now + 1
	}
	c.take(a, end)
}

// take removes an allocation's resources from the free state and records
// their release at end.
func (c *cluster) take(a *Allocation, end int64) {
	for _, na := range a.Nodes {
		ni := na.Node
		if ni < 0 || uint(ni) >= c.n {
			continue
		}
		// A job holding no cores (suspended: cons_tres gave its cores
		// back and took it off the node's job count, keeping memory and
		// GRES) leaves the node idle for whole-node jobs and out of the
		// sharing counts.
		memOnly := len(na.Cores) == 0 && na.CPUs == 0 && !a.Exclusive
		off := c.coreOff[ni]
		var taken int32
		switch {
		case memOnly:
		case a.Shared:
			taken = c.takeShared(ni, na.Cores, end)
		default:
			for _, k := range na.Cores {
				w, bit := off+int(k)/64, uint64(1)<<(k%64)
				if w < c.coreOff[ni+1] && c.coreBits[w]&bit != 0 {
					c.coreBits[w] &^= bit
					taken++
				}
			}
			c.freeCore[ni] -= taken
		}
		if !memOnly {
			c.noteShareJob(ni, a, a.Shared)
		}
		var mem uint64
		if c.snap.Config.MemoryConsumable {
			mem = min(na.MemoryMB, c.freeMem[ni])
			c.freeMem[ni] -= mem
		}
		var ga []gresAmt
		for _, g := range na.Gres {
			left := g.Count
			for si := range c.gres[ni] {
				sl := &c.gres[ni][si]
				if left == 0 {
					break
				}
				if sl.name != g.Name || (g.Type != "" && sl.typ != g.Type) || sl.free == 0 {
					continue
				}
				t := min(left, sl.free)
				sl.free -= t
				left -= t
				ga = append(ga, gresAmt{slot: int32(si), count: t})
			}
		}
		if ni < len(c.bindFree) {
			for k, t := range na.GresBind {
				if k < len(c.bindFree[ni]) {
					c.bindFree[ni][k] -= min(t, c.bindFree[ni][k])
				}
			}
		}
		gi := int32(-1)
		if len(ga) > 0 {
			gi = int32(len(c.relGres))
			c.relGres = append(c.relGres, ga)
			c.noteGresRelease(end)
		}
		if memOnly {
			c.rel[ni] = append(c.rel[ni], release{
				at: end, b: int32(min((end-c.now+c.res-1)/c.res, int64(c.nb))), mem: mem, gres: gi, memOnly: true,
			})
			continue
		}
		c.jobsOn[ni]++
		c.idle.Clear(uint(ni))
		if c.freeCore[ni] <= 0 || a.Exclusive {
			c.hasFree.Clear(uint(ni))
		}
		if a.Exclusive {
			c.excl[ni] = true
		}
		if a.ExclusiveUser {
			c.exclUser[ni] = true
			c.anyExclUser = true
		}
		switch c.userOn[ni] {
		case noUser:
			c.userOn[ni] = int64(a.UserID)
		case int64(a.UserID):
		default:
			c.userOn[ni] = mixedUsers
		}
		c.rel[ni] = append(c.rel[ni], release{
			at: end, b: int32(min((end-c.now+c.res-1)/c.res, int64(c.nb))), cores: taken, mem: mem, gres: gi,
			whole: a.Exclusive, user: a.ExclusiveUser,
		})
	}
}

// sortReleases keeps a node's release list sorted after a start in the pass.
func (c *cluster) sortReleases(ni int) {
	r := c.rel[ni]
	for i := len(r) - 1; i > 0 && r[i].at < r[i-1].at; i-- {
		r[i], r[i-1] = r[i-1], r[i]
	}
}

// reserve blocks nodes for new work during [start, end), as a backfill
// reservation does in Slurm (whole nodes).
func (c *cluster) reserve(nodes []int, start, end int64) {
	for _, ni := range nodes {
		if start < c.resvFirst[ni] {
			c.resvFirst[ni] = start
		}
	}
	// Reservations start on bucket boundaries (see earliestAlt).
	first, last := int32((start-c.now)/c.res), int32(min((end-c.now+c.res-1)/c.res, int64(c.nb)))
	c.noteBounds(first, last)
	c.addSpans(nodes, first, last)
}

// noteBounds counts the timeline records a reservation adds, as Slurm's
// node_space table grows by the start and end it splits (an end at the
// window's edge splits nothing).
func (c *cluster) noteBounds(first, last int32) {
	if c.bounds == nil {
		c.bounds = map[int32]struct{}{}
	}
	if first > 0 {
		c.bounds[first] = struct{}{}
	}
	if int(last) < c.nb {
		c.bounds[last] = struct{}{}
	}
}

// gresFree is what a node has free of a (name, type) GRES; an empty type
// matches every type.
func (c *cluster) gresFree(ni int, name, typ string) uint64 {
	var f uint64
	for _, sl := range c.gres[ni] {
		if sl.name == name && (typ == "" || sl.typ == typ) {
			f += sl.free
		}
	}
	return f
}

func (c *cluster) gresTotal(ni int, name, typ string) uint64 {
	var f uint64
	for _, sl := range c.gres[ni] {
		if sl.name == name && (typ == "" || sl.typ == typ) {
			f += sl.total
		}
	}
	return f
}

type nodeConfig struct {
	rep  int // a node of the group
	bits *bitset.BitSet
}

func (c *cluster) buildConfigs() {
	index := map[string]int{}
	var key strings.Builder
	for i := range c.nodes {
		nd := &c.nodes[i]
		key.Reset()
		fmt.Fprintf(&key, "%d/%d/%d/%d/%d/%d/%v", nd.Sockets, nd.CoresPerSocket, nd.ThreadsPerCore, nd.CPUs, nd.RealMemory,
			nd.MemSpec, nd.SpecCores)
		for _, g := range nd.Gres {
			fmt.Fprintf(&key, "/%s:%s:%d", g.Name, g.Type, g.Count)
		}
		k, ok := index[key.String()]
		if !ok {
			k = len(c.configs)
			index[key.String()] = k
			c.configs = append(c.configs, nodeConfig{rep: i, bits: bitset.New(c.n)})
		}
		c.configs[k].bits.Set(uint(i))
	}
}

// holdResuming keeps a resuming node from taking a job in this pass while
// leaving it counted as up: all of it is held as by a job ending at the
// next second. 22.05 leaves rs_node_bitmap out of the nodes it picks (and
// says the job waits for busy nodes), and its backfill plans a job that
// would start on them now to start a second later.
func (c *cluster) holdResuming(ni int) {
	nd := &c.nodes[ni]
	cores := make([]uint16, 0, nd.Cores())
	for k := range nd.Cores() {
		if !slices.Contains(nd.SpecCores, uint16(k)) {
			cores = append(cores, uint16(k))
		}
	}
	c.applyRunning(&Allocation{
		Start: c.now, End: c.now, Exclusive: true,
		Nodes: []NodeAlloc{{Node: ni, Cores: cores, CPUs: uint32(len(cores) * max(int(nd.ThreadsPerCore), 1)),
			MemoryMB: nd.AvailMem(), Gres: nd.Gres}},
	})
}
