package sched

import (
	"slices"
	"sort"

	"github.com/bits-and-blooms/bitset"
)

// Reservation is an advanced reservation (scontrol create reservation) as
// the passes see it: whole nodes held from Start to End. Jobs that name it
// (Job.Reservation) run only on its nodes and only inside its window; the
// other jobs keep off its nodes during the window, so a job starting now
// on such a node must end before the reservation starts, and backfill
// treats the window as a blocked interval of those nodes.
type Reservation struct {
	Name  string
	Nodes []int // node indexes
	Start int64
	End   int64
	// Maint is set for MAINT and ALL_NODES reservations: a job without
	// the reservation whose partition lies entirely inside them waits
	// with "ReqNodeNotAvail, Reserved for maintenance" (job_test_resv's
	// ESLURM_RESERVATION_MAINT).
	Maint bool
	// Flex (FLEX): its jobs may also use nodes outside it (those inside
	// first) and start before or after its window.
	Flex bool
	// Magnetic (MAGNETIC): jobs that name no reservation but may use
	// this one are tried in it first.
	Magnetic bool
	// AnyNodes (ANY_NODES, scontrol's LICENSE_ONLY): its jobs may use
	// any node no other reservation holds during their run; it may
	// hold no nodes at all (only licenses).
	AnyNodes bool
	// Cores, for a core reservation (CoreCnt=), are its cores on each
	// of its nodes (node index -> node-local core ids); nil for a
	// whole-node reservation (resvcores.go).
	Cores map[int][]uint16
	// Who may use it, for MAGNETIC (see ResvAccess).
	Users       []uint32
	UsersNot    bool
	Accounts    []string
	AccountsNot bool
	// Licenses are its Licenses=, for bf_licenses (licenses.go).
	Licenses []License
}

// ResvAccess is _valid_job_access_resv without accounting enforcement:
// the user must be on the user list (or off a "may not" list), then,
// unless only users are listed, the account on the account list (or off
// a "may not" one). Empty lists do not restrict.
func ResvAccess(users []uint32, usersNot bool, accounts []string, accountsNot bool, uid uint32, account string) bool {
	userOK := len(users) == 0 || usersNot
	if slices.Contains(users, uid) {
		userOK = !usersNot
	}
	if !userOK {
		return false
	}
	if len(users) != 0 && len(accounts) == 0 {
		return true
	}
	acctOK := len(accounts) == 0 || accountsNot
	if account != "" && slices.Contains(accounts, account) {
		acctOK = !accountsNot
	}
	return acctOK
}

// mayUse reports whether job j may use rv.
func (rv *Reservation) mayUse(j *Job) bool {
	return ResvAccess(rv.Users, rv.UsersNot, rv.Accounts, rv.AccountsNot, j.UserID, j.Account)
}

// DescReservedMaint is the state description of a job kept out by a
// maintenance reservation (Pending.Desc, reason ReqNodeNotAvail).
const DescReservedMaint = "ReqNodeNotAvail, Reserved for maintenance"

// DescMayBeReserved is the state description of a job that would fit its
// partition's nodes, but not those left when the reservations meeting its
// run are taken out (select_nodes' ESLURM_NODE_NOT_AVAIL without an
// unavailable node to name).
const DescMayBeReserved = "ReqNodeNotAvail, May be reserved for other job"

// hasReservations reports whether the pass must consider advanced
// reservations at all; without any, nothing here runs, so plans are what
// they were before reservations existed.
func hasReservations(s *Snapshot) bool {
	if len(s.Reservations) > 0 {
		return true
	}
	for i := range s.Pending {
		if s.Pending[i].Reservation != "" {
			return true
		}
	}
	return false
}

// resvPass runs before the main pass. Jobs that name a reservation are
// tried first, in priority order, on the reservation's nodes only (the
// other jobs cannot use those nodes during the window, so the order
// between the two groups does not take resources from either); they are
// then left out of the main and backfill queues. Afterwards every node of
// a reservation is marked held from the reservation's start, so jobs
// without it that would still run then do not start there now. Jobs a
// maintenance reservation shuts out get their reason here.
func (c *cluster) resvPass(out []outcome) []Start {
	s := c.snap
	c.skip = make([]bool, len(s.Pending))
	byName := make(map[string]*Reservation, len(s.Reservations))
	for i := range s.Reservations {
		byName[s.Reservations[i].Name] = &s.Reservations[i]
	}
	// The queue entries with a reservation come first (sort_job_queue2):
	// the jobs that name one, and a MAGNETIC reservation's entry for
	// every job that names none but may use it.
	type resvEntry struct {
		ji int
		rv *Reservation // set for a magnetic entry
	}
	var mine []resvEntry
	for ji := range s.Pending {
		j := &s.Pending[ji]
		if j.Reservation != "" {
			mine = append(mine, resvEntry{ji: ji})
			continue
		}
		for i := range s.Reservations {
			if rv := &s.Reservations[i]; rv.Magnetic && rv.mayUse(j) {
				mine = append(mine, resvEntry{ji: ji, rv: rv})
			}
		}
	}
	sort.SliceStable(mine, func(a, b int) bool {
		ja, jb := &s.Pending[mine[a].ji], &s.Pending[mine[b].ji]
		if ja.Priority != jb.Priority {
			return ja.Priority > jb.Priority
		}
		if ja.SubmitTime != jb.SubmitTime {
			return ja.SubmitTime < jb.SubmitTime
		}
		return ja.JobID < jb.JobID
	})
	var starts []Start
	for _, e := range mine {
		j := &s.Pending[e.ji]
		o := &out[e.ji]
		if e.rv != nil {
			// A magnetic try: the job stays in the other queues
			// unless it starts here, and its reason is theirs.
			if o.started || eligible(j, c.now) != ReasonNone || !e.rv.usableNow(c.now) {
				continue
			}
			var scratch outcome
			if st, ok := c.startInReservation(j, &scratch, e.rv); ok {
				o.started = true
				c.skip[e.ji] = true
				starts = append(starts, st)
			}
			continue
		}
		c.skip[e.ji] = true
		if r := eligible(j, c.now); r != ReasonNone {
			o.reason = r
			continue
		}
		rv := byName[j.Reservation]
		if rv == nil || !rv.usableNow(c.now) {
			// Gone, over, or not started yet (WAIT_RESERVATION);
			// the controller normally keeps such jobs out of the
			// snapshot.
			o.setReason(ReasonReservation)
			continue
		}
		if st, ok := c.startInReservation(j, o, rv); ok {
			starts = append(starts, st)
		}
	}
	for i := range s.Reservations {
		rv := &s.Reservations[i]
		if rv.End <= c.now || rv.partial() {
			continue
		}
		start := max(rv.Start, c.now)
		for _, ni := range rv.Nodes {
			if ni >= 0 && ni < len(c.resvFirst) && start < c.resvFirst[ni] {
				c.resvFirst[ni] = start
			}
		}
	}
	c.holdResvCores()
	c.maintReasons(out)
	return starts
}

// usableNow reports whether jobs may start in rv now: inside its window
// with nodes, or at any time for FLEX (job_test_resv_now).
func (rv *Reservation) usableNow(now int64) bool {
	if rv.Flex {
		return true
	}
	return now >= rv.Start && now < rv.End && (len(rv.Nodes) > 0 || rv.AnyNodes)
}

// startInReservation tries j now on rv's nodes in each of its partitions;
// a FLEX reservation's job then tries the nodes outside it too (those no
// other reservation holds during its run), as node_scheduler puts them
// after the reservation's own.
func (c *cluster) startInReservation(j *Job, o *outcome, rv *Reservation) (Start, bool) {
	mask := bitset.New(c.n)
	for _, ni := range rv.Nodes {
		if ni >= 0 && uint(ni) < c.n {
			mask.Set(uint(ni))
		}
	}
	pis := c.jobPartitions(j)
	if len(pis) == 0 {
		o.setReason(ReasonPartConfig)
		return Start{}, false
	}
	for _, pi := range pis {
		r, why := c.newRequest(j, pi)
		if why != ReasonNone {
			o.setReason(why)
			continue
		}
		try := func(m *bitset.BitSet) (placement, bool) {
			pl, ok := c.tryNow(r, m)
			if !ok && r.share {
				pl, ok = c.tryNowOver(r, m.Words())
			}
			return pl, ok
		}
		pl, ok := placement{}, false
		if c.now >= rv.Start && c.now < rv.End {
			switch {
			case rv.AnyNodes:
				pl, ok = try(c.flexMask(rv, c.now+r.duration))
			case rv.partial():
				// Placed and allocated on the reserved cores only.
				restore := c.onlyCores(rv)
				if pl, ok = try(mask); ok {
					var a Allocation
					a, ok = c.allocate(r, pl)
					restore()
					if ok {
						o.started = true
						return Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a}, true
					}
					break
				}
				restore()
			default:
				pl, ok = try(mask)
			}
		}
		if !ok && rv.Flex {
			pl, ok = try(c.flexMask(rv, c.now+r.duration))
		}
		if ok {
			if a, aok := c.allocate(r, pl); aok {
				o.started = true
				return Start{JobID: j.JobID, Partition: r.part.Name, Alloc: a}, true
			}
		}
		o.setReason(ReasonResources)
	}
	return Start{}, false
}

// flexMask is the nodes a FLEX or ANY_NODES reservation's job may use
// until end (job_test_resv): every node, its reservation's included,
// that no other reservation holds before end.
func (c *cluster) flexMask(rv *Reservation, end int64) *bitset.BitSet {
	m := bitset.New(c.n)
	m.FlipRange(0, c.n)
	for i := range c.snap.Reservations {
		o := &c.snap.Reservations[i]
		if o == rv || o.Start >= end || o.End <= c.now || o.partial() {
			continue
		}
		for _, ni := range o.Nodes {
			if ni >= 0 && uint(ni) < c.n {
				m.Clear(uint(ni))
			}
		}
	}
	return m
}

// jobPartitions are the partition indexes a job is queued in, as
// buildQueue finds them.
func (c *cluster) jobPartitions(j *Job) []int {
	var pis []int
	if len(j.Partitions) == 0 {
		for pi := range c.snap.Partitions {
			if c.snap.Partitions[pi].Default {
				return []int{pi}
			}
		}
		return nil
	}
	for _, name := range j.Partitions {
		if pi, ok := c.partIdx[name]; ok && !containsInt(pis, pi) {
			pis = append(pis, pi)
		}
	}
	return pis
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// maintReasons gives "ReqNodeNotAvail, Reserved for maintenance" to the
// eligible jobs without a reservation whose every partition lies inside
// maintenance reservations overlapping the job's run from now, and keeps
// them out of the queues, as select_nodes returns early for them.
func (c *cluster) maintReasons(out []outcome) {
	s := c.snap
	var maint []*Reservation
	for i := range s.Reservations {
		if rv := &s.Reservations[i]; rv.Maint && rv.End > c.now && !rv.partial() {
			maint = append(maint, rv)
		}
	}
	if len(maint) == 0 {
		return
	}
	for ji := range s.Pending {
		j := &s.Pending[ji]
		if c.skip[ji] || j.Reservation != "" || eligible(j, c.now) != ReasonNone {
			continue
		}
		pis := c.jobPartitions(j)
		shut := len(pis) > 0
		var until int64
		for _, pi := range pis {
			r, why := c.newRequest(j, pi)
			if why != ReasonNone {
				shut = false
				break
			}
			end, in := c.partInMaint(pi, maint, c.now+r.duration)
			if !in {
				shut = false
				break
			}
			until = max(until, end)
		}
		if shut {
			// job_test_resv moves such a job to the reservation's end.
			c.skip[ji] = true
			out[ji].reason = ReasonReqNodeNotAvail
			out[ji].desc = DescReservedMaint
			out[ji].startTime = until
		}
	}
}

// partInMaint reports whether every node of partition pi is in one of the
// maintenance reservations that start before end, and when the first
// such reservation ends.
func (c *cluster) partInMaint(pi int, maint []*Reservation, end int64) (int64, bool) {
	p := &c.snap.Partitions[pi]
	if len(p.Nodes) == 0 {
		return 0, false
	}
	var until int64
	found := false
	for _, rv := range maint {
		if rv.Start >= end {
			continue
		}
		in := true
		for _, ni := range p.Nodes {
			if !containsInt(rv.Nodes, ni) {
				in = false
				break
			}
		}
		if in && (!found || rv.End < until) {
			until, found = rv.End, true
		}
	}
	return until, found
}

// resvReasons runs after the passes: a job without a reservation that
// waits for resources, but could not run even on empty nodes once the
// reservations meeting its run from now are taken out, waits
// "ReqNodeNotAvail, May be reserved for other job" instead.
func (c *cluster) resvReasons(out []outcome) {
	s := c.snap
	for ji := range s.Pending {
		j := &s.Pending[ji]
		o := &out[ji]
		if o.started || c.skip[ji] || j.Reservation != "" || o.reason != ReasonResources {
			continue
		}
		shut := true
		for _, pi := range c.jobPartitions(j) {
			r, why := c.newRequest(j, pi)
			if why != ReasonNone || c.fitsOutsideResv(r) {
				shut = false
				break
			}
		}
		if shut {
			o.reason = ReasonReqNodeNotAvail
			o.desc = DescMayBeReserved
		}
	}
}

// fitsOutsideResv reports whether r fits the nodes of its partition,
// all empty, that no reservation holds during [now, now+duration).
func (c *cluster) fitsOutsideResv(r *request) bool {
	held := bitset.New(c.n)
	end := c.now + r.duration
	for i := range c.snap.Reservations {
		rv := &c.snap.Reservations[i]
		// A core reservation holds its nodes from whole-node jobs only
		// (job_test_resv); the others fit beside it.
		if rv.Start >= end || rv.End <= c.now || rv.partial() && !r.whole {
			continue
		}
		for _, ni := range rv.Nodes {
			if ni >= 0 && uint(ni) < c.n {
				held.Set(uint(ni))
			}
		}
	}
	if held.None() {
		return true
	}
	for a := 0; a < r.altCount(); a++ {
		b := c.base(r, a)
		b.InPlaceDifference(held)
		if !r.job.Contiguous && len(r.counts) == 0 {
			if c.fitsByConfig(r, b) {
				return true
			}
			continue
		}
		var cands, caps []int
		for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
			if k := c.capacityWith(r, int(i), int32(c.nodes[i].EffCores()), c.nodes[i].AvailMem(), gresTotal); k > 0 {
				cands = append(cands, int(i))
				caps = append(caps, k)
			}
		}
		if _, ok := c.place(r, cands, caps); ok {
			return true
		}
	}
	return false
}

// resvSpans adds the reservations' windows to the backfill timeline as
// whole-node blocked intervals (after the main pass, so the block index
// is built from what the main pass left, as for backfill's own
// reservations).
func (c *cluster) resvSpans() {
	for i := range c.snap.Reservations {
		rv := &c.snap.Reservations[i]
		if rv.End <= c.now || rv.partial() {
			continue
		}
		k := (max(rv.Start, c.now) - c.now) / c.res
		if k >= int64(c.nb) {
			continue // beyond the window: only resvFirst matters
		}
		e := min((rv.End-c.now+c.res-1)/c.res, int64(c.nb))
		var nodes []int
		for _, ni := range rv.Nodes {
			if ni >= 0 && uint(ni) < c.n {
				nodes = append(nodes, ni)
			}
		}
		if len(nodes) > 0 && int64(k) < e {
			c.addSpans(nodes, int32(k), int32(e))
		}
	}
}
