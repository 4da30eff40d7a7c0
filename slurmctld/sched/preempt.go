package sched

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/bits-and-blooms/bitset"

	"github.com/goslurm/goslurm/conf"
)

// Preemption by partition priority tier (PreemptType=preempt/partition_prio):
// a pending job that cannot start now may have running jobs of partitions
// of a lower PriorityTier, sharing nodes with its own partition, preempted
// (cancelled or requeued by the controller) so that it starts once their
// nodes are clean. Which ones follows select/cons_tres's _run_now: the
// candidates in preemption order are taken away one after the other until
// the job fits, the order is reworked to need fewer or smaller jobs, and the
// jobs taken away that hold nodes the job would get are preempted.
// SUSPEND candidates are never taken away, as _run_now skips them when the
// mode is not REQUEUE or CANCEL: with GANG a job runs on top of them
// instead (gang.go).

// PreemptMode is Slurm's preempt mode bit set (PREEMPT_MODE_*).
type PreemptMode uint16

const (
	PreemptOff     PreemptMode = 0x0000
	PreemptSuspend PreemptMode = 0x0001
	PreemptRequeue PreemptMode = 0x0002
	PreemptCancel  PreemptMode = 0x0008
	PreemptWithin  PreemptMode = 0x4000
	PreemptGang    PreemptMode = 0x8000
)

// PreemptConfig is the cluster's preemption setting.
type PreemptConfig struct {
	// Enabled is PreemptType=preempt/partition_prio with a PreemptMode
	// other than OFF: the main pass then looks for preemptees.
	// preempt/qos needs QOS records from an accounting database, which
	// goslurm does not have: it preempts nothing.
	Enabled bool
	// Mode is the cluster's PreemptMode, GANG left out.
	Mode PreemptMode
	// Gang is GANG in the cluster's PreemptMode: a job may start on
	// cores of lower tier jobs, which the controller then suspends
	// (gang.go).
	Gang bool
	// TimeSlice is SchedulerTimeSlice in seconds: how often gang
	// scheduling rotates the jobs sharing resources.
	TimeSlice int64
	// ExemptTime is PreemptExemptTime in seconds: a job that started
	// less than that long ago is not preempted.
	ExemptTime int64
	// YoungestFirst is preempt_youngest_first: candidates by start time,
	// latest first, instead of by tier and size.
	YoungestFirst bool
	// StrictOrder is preempt_strict_order: the reordering moves the job
	// whose removal made room to the front and leaves the others as
	// they are.
	StrictOrder bool
	// ReorderCount is preempt_reorder_count (1).
	ReorderCount int
}

// ParsePreemptMode reads a PreemptMode list (OFF or CLUSTER, CANCEL,
// REQUEUE, SUSPEND or ON, GANG, WITHIN); ok is false on an unknown word.
func ParsePreemptMode(l conf.List) (m PreemptMode, ok bool) {
	for _, s := range l {
		switch strings.ToUpper(s) {
		case "OFF", "CLUSTER":
		case "SUSPEND", "ON":
			m |= PreemptSuspend
		case "REQUEUE":
			m |= PreemptRequeue
		case "CANCEL":
			m |= PreemptCancel
		case "WITHIN":
			m |= PreemptWithin
		case "GANG":
			m |= PreemptGang
		default:
			return m, false
		}
	}
	return m, true
}

func preemptConfigFromConf(c *conf.Config) PreemptConfig {
	mode, _ := ParsePreemptMode(c.PreemptMode)
	pc := PreemptConfig{Mode: mode &^ PreemptGang, ExemptTime: int64(c.PreemptExemptTime), ReorderCount: 1}
	pc.Enabled = c.PreemptType == "preempt/partition_prio" && mode != PreemptOff
	pc.Gang = mode&PreemptGang != 0
	pc.TimeSlice = int64(c.SchedulerTimeSlice)
	for _, o := range c.SchedulerParameters {
		switch strings.ToLower(o.Name) {
		case "preempt_youngest_first":
			pc.YoungestFirst = true
		case "preempt_strict_order":
			pc.StrictOrder = true
		case "preempt_reorder_count":
			if v, err := strconv.Atoi(strings.TrimSpace(o.Value)); err == nil && v >= 0 {
				pc.ReorderCount = v
			}
		}
	}
	return pc
}

// partPreemptMode is the mode a partition's jobs are preempted with: the
// partition's PreemptMode when given, else the cluster's, GANG left out
// (preempt/partition_prio and preempt/qos without QOS records); OFF under
// preempt/none.
func partPreemptMode(c *conf.Config, l conf.List) PreemptMode {
	if c.PreemptType == "preempt/none" || c.PreemptType == "" {
		return PreemptOff
	}
	if len(l) == 0 || c.PreemptType == "preempt/qos" {
		l = c.PreemptMode
	}
	m, _ := ParsePreemptMode(l)
	return m &^ PreemptGang
}

// Preemption names the jobs to preempt for a pending job.
type Preemption struct {
	JobID      uint32 // the preemptor
	Partition  string // the partition it is to run in
	Preemptees []uint32
}

// preemptCand is one running job that may be preempted.
type preemptCand struct {
	a    *Allocation
	key  uint32 // partition_prio's order: tier << 16 + node count
	used int    // nodes of the last placement it holds (reordering)
}

// preemptCandidates lists the running jobs j may preempt in partition pi,
// in preemption order (slurm_find_preemptable_jobs).
func (c *cluster) preemptCandidates(pi int, taken map[uint32]bool) []preemptCand {
	pc := &c.snap.Config.Preempt
	p := &c.snap.Partitions[pi]
	var out []preemptCand
	for i := range c.snap.Running {
		a := &c.snap.Running[i]
		if !a.Running || taken[a.JobID] {
			continue
		}
		qi, ok := c.partIdx[a.Partition]
		if !ok {
			continue
		}
		q := &c.snap.Partitions[qi]
		if q.PriorityTier >= p.PriorityTier || q.PreemptMode == PreemptOff {
			continue
		}
		if pc.ExemptTime > 0 && c.now < a.Start+pc.ExemptTime {
			continue
		}
		overlap := false
		for _, na := range a.Nodes {
			if na.Node >= 0 && c.partBits[pi].Test(uint(na.Node)) {
				overlap = true
				break
			}
		}
		if !overlap {
			continue
		}
		key := uint32(q.PriorityTier) << 16
		key += uint32(min(len(a.Nodes), 0xffff))
		out = append(out, preemptCand{a: a, key: key})
	}
	if pc.YoungestFirst {
		slices.SortStableFunc(out, func(x, y preemptCand) int {
			return cmp.Compare(y.a.Start, x.a.Start) // youngest first
		})
	} else {
		slices.SortStableFunc(out, func(x, y preemptCand) int {
			switch {
			case x.key < y.key:
				return -1
			case x.key > y.key:
				return 1
			}
			return 0
		})
	}
	return out
}

// removable reports a candidate _run_now may take away: its mode is
// exactly REQUEUE or CANCEL.
func (c *cluster) removable(a *Allocation) bool {
	qi, ok := c.partIdx[a.Partition]
	if !ok {
		return false
	}
	m := c.snap.Partitions[qi].PreemptMode
	return m == PreemptRequeue || m == PreemptCancel
}

// preemptFor looks for the jobs to preempt so that job j can start in
// partition pi within mask; starts are the jobs this pass started so far
// and taken the jobs already chosen for preemption in it. It returns the
// preemptees in preemption order, or nil.
func (c *cluster) preemptFor(j *Job, pi int, mask *bitset.BitSet, starts []Start, taken map[uint32]bool) []uint32 {
	cands := c.preemptCandidates(pi, taken)
	var rm []preemptCand
	for _, cd := range cands {
		if c.removable(cd.a) {
			rm = append(rm, cd)
		}
	}
	if len(rm) == 0 {
		return nil
	}
	// Nothing to hope for when the job does not fit with every
	// candidate gone.
	if _, ok := c.fitsWithout(j, pi, mask, starts, rm); !ok {
		return nil
	}
	passes := 0
	for {
		k, nodes := c.shortestPrefix(j, pi, mask, starts, rm)
		if k == 0 {
			return nil
		}
		old := passes
		passes++
		if old > c.snap.Config.Preempt.ReorderCount || len(rm) <= passes {
			return preemptees(rm[:k], nodes)
		}
		rm = reorder(rm, k, nodes, c.snap.Config.Preempt.StrictOrder)
	}
}

// shortestPrefix is the least k for which the job fits with the first k
// candidates gone, and the nodes it gets then (k is 0 when it never
// fits). Taking more jobs away never leaves less room, so the search
// halves the range.
func (c *cluster) shortestPrefix(j *Job, pi int, mask *bitset.BitSet, starts []Start, rm []preemptCand) (int, []int) {
	lo, hi := 1, len(rm)
	var best []int
	found := 0
	for lo <= hi {
		mid := (lo + hi) / 2
		if nodes, ok := c.fitsWithout(j, pi, mask, starts, rm[:mid]); ok {
			found, best = mid, nodes
			hi = mid - 1
		} else {
			lo = mid + 1
		}
	}
	return found, best
}

// fitsWithout tests whether job j could start now in partition pi were the
// jobs of gone not running (a what-if state of the pass: the snapshot's
// running jobs less those, plus the pass's starts), and returns the nodes
// it would get.
func (c *cluster) fitsWithout(j *Job, pi int, mask *bitset.BitSet, starts []Start, gone []preemptCand) ([]int, bool) {
	out := make(map[uint32]bool, len(gone))
	for _, g := range gone {
		out[g.a.JobID] = true
	}
	s := *c.snap
	s.Pending = nil
	s.Running = make([]Allocation, 0, len(c.snap.Running)+len(starts))
	for _, a := range c.snap.Running {
		if !out[a.JobID] {
			s.Running = append(s.Running, a)
		}
	}
	for _, st := range starts {
		s.Running = append(s.Running, st.Alloc)
	}
	w := newCluster(&s)
	// Nodes of advanced reservations (and backfill's) stay out of reach.
	copy(w.resvFirst, c.resvFirst)
	r, why := w.newRequest(j, pi)
	if why != ReasonNone {
		return nil, false
	}
	pl, ok := w.tryNow(r, mask)
	if !ok && r.share {
		pl, ok = w.tryNowOver(r, mask.Words())
	}
	if !ok {
		return nil, false
	}
	return pl.nodes, true
}

// reorder reworks the candidate order after the job fitted with the first
// k gone (_run_now): the k-th first, then the others of the prefix by how
// many of the job's nodes they hold, most first, then the rest as they
// were; under preempt_strict_order only the k-th moves to the front.
func reorder(rm []preemptCand, k int, nodes []int, strict bool) []preemptCand {
	out := make([]preemptCand, 0, len(rm))
	out = append(out, rm[k-1])
	if strict {
		out = append(out, rm[:k-1]...)
		return append(out, rm[k:]...)
	}
	on := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		on[n] = true
	}
	rest := make([]preemptCand, 0, len(rm)-1)
	for i, cd := range rm {
		if i == k-1 {
			continue
		}
		cd.used = 0
		if i < k-1 {
			for _, na := range cd.a.Nodes {
				if on[na.Node] {
					cd.used++
				}
			}
		}
		rest = append(rest, cd)
	}
	slices.SortStableFunc(rest, func(x, y preemptCand) int { return y.used - x.used })
	return append(out, rest...)
}

// preemptees are the jobs of the prefix holding nodes the job gets.
func preemptees(prefix []preemptCand, nodes []int) []uint32 {
	on := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		on[n] = true
	}
	var out []uint32
	for _, cd := range prefix {
		for _, na := range cd.a.Nodes {
			if on[na.Node] {
				out = append(out, cd.a.JobID)
				break
			}
		}
	}
	return out
}

// preempt plans the preemption that lets job j start in partition pi, if
// preemption is on and some lower tier jobs make room (the main pass calls
// it for a job that waits for resources). It reports whether it did.
func (c *cluster) preempt(j *Job, pi int, mask *bitset.BitSet, starts []Start) bool {
	if !c.mayPreemptFor(j) {
		return false
	}
	ids := c.preemptFor(j, pi, mask, starts, c.preemptTaken)
	if len(ids) == 0 {
		return false
	}
	if c.preemptTaken == nil {
		c.preemptTaken = map[uint32]bool{}
	}
	for _, id := range ids {
		c.preemptTaken[id] = true
	}
	c.preempts = append(c.preempts, Preemption{JobID: j.JobID, Partition: c.snap.Partitions[pi].Name, Preemptees: ids})
	return true
}

// mayPreemptFor reports whether a preemption search for j may run: with
// preemption on, not while jobs preempted for it a moment ago are still
// going (PreemptWait), and once a job a pass.
func (c *cluster) mayPreemptFor(j *Job) bool {
	if !c.snap.Config.Preempt.Enabled || j.PreemptWait {
		return false
	}
	for _, p := range c.preempts {
		if p.JobID == j.JobID {
			return false
		}
	}
	return true
}

// preemptBackfill is the backfill pass's preemption: a job that cannot
// start now may have lower tier jobs preempted, as backfill.c's will-run
// test counts preemptable jobs gone and then starts the job through
// select_nodes, which preempts them. The nodes backfill reserved for
// jobs ahead of it stay out of reach. The job gets no reservation then.
func (c *cluster) preemptBackfill(j *Job, pi int, starts []Start) bool {
	return c.preempt(j, pi, c.usable, starts)
}
