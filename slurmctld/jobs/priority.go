package jobs

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// Priority is priority/multifactor wired to the job table: it recomputes
// pending jobs' priorities (at submit, on changes and every
// PriorityCalcPeriod) and, with the fair-share tracker, charges running
// jobs' billing-seconds (TRESBillingWeights applied) to their user and
// account as Slurm's decay thread does. Without a Priority the manager
// keeps priority/basic.
//
// Like the Manager, it is not safe for concurrent use: every call happens
// under the controller's lock.
type Priority struct {
	cfg   priority.Config
	mf    *priority.Multifactor
	usage *priority.Usage // nil: no fair-share tracking (no accounting)

	// computed is the value this engine last gave each pending job; a job
	// whose priority differs was given one elsewhere (priority/basic at
	// submit or release, a nice change) and is recomputed.
	computed map[uint32]uint32
	// lastRan is Slurm's g_last_ran: the time of the last decay pass, up
	// to which running jobs have been charged. 0 before the first one.
	lastRan int64
	// ended holds jobs charged for the end of their run (id -> the start
	// time of that run), so they are charged once.
	ended map[uint32]int64
	dirty bool           // usage changed since State
	loc   *time.Location // calendar of PriorityUsageResetPeriod

	// arrays holds the priority_array of the pending jobs submitted to
	// several partitions: their priority in each, in the order Slurm
	// keeps them (PriorityTier, highest first).
	arrays map[uint32][]PartitionPriority

	// OnArray, when set, is called with each priority_array computed
	// (slurmctld logs them with DebugFlags=Priority).
	OnArray func(j *Job, a []PartitionPriority)
}

// PartitionPriority is one element of a job's priority_array.
type PartitionPriority struct {
	Partition string
	Priority  uint32
}

// NewPriority returns priority/multifactor for cfg. With track set, a
// fair-share usage tracker is kept and the age and fair-share weights
// apply; without it both weights are zero, as Slurm 22.05 does without
// slurmdbd. st, when not nil, is the tracker's saved state.
func NewPriority(cfg priority.Config, track bool, st *PriorityState) (*Priority, error) {
	p := &Priority{computed: map[uint32]uint32{}, ended: map[uint32]int64{}, arrays: map[uint32][]PartitionPriority{}}
	if !track {
		cfg.WeightAge, cfg.WeightFairshare = 0, 0
	}
	p.cfg = cfg
	if track {
		p.usage = priority.NewUsage(cfg)
		if st != nil {
			u, err := priority.RestoreUsage(cfg, st.Usage)
			if err != nil {
				return nil, err
			}
			p.usage = u
			p.lastRan = st.LastRan
			for id, start := range st.Ended {
				p.ended[id] = start
			}
		}
	}
	p.mf = priority.NewMultifactor(cfg, priority.Cluster{}, nil)
	if p.usage != nil {
		p.mf.FairShare = p.usage
	}
	return p, nil
}

// Config is the configuration in force (age and fair-share weights zero
// without the tracker).
func (p *Priority) Config() priority.Config { return p.cfg }

// Tracking reports whether fair-share usage is tracked.
func (p *Priority) Tracking() bool { return p.usage != nil }

// Reconfigure applies a configuration read again. The usage is kept; a
// new half-life, reset period or fair-share algorithm applies from now.
func (p *Priority) Reconfigure(cfg priority.Config) error {
	if p.usage == nil {
		cfg.WeightAge, cfg.WeightFairshare = 0, 0
	} else {
		u, err := priority.RestoreUsage(cfg, p.usage.State())
		if err != nil {
			return err
		}
		if p.loc != nil {
			u.SetLocation(p.loc)
		}
		p.usage = u
		p.mf.FairShare = u
	}
	p.cfg = cfg
	p.mf.Config = cfg
	return nil
}

// PriorityState is what the tracker needs after a restart (Slurm's
// assoc_usage and priority_last_decay_ran files).
type PriorityState struct {
	LastRan int64
	Ended   map[uint32]int64
	Usage   priority.UsageState
}

// State returns the tracker's state (nil without a tracker) and clears
// the changed mark.
func (p *Priority) State() *PriorityState {
	if p.usage == nil {
		return nil
	}
	p.dirty = false
	st := &PriorityState{LastRan: p.lastRan, Usage: p.usage.State(), Ended: map[uint32]int64{}}
	for id, s := range p.ended {
		st.Ended[id] = s
	}
	return st
}

// Changed reports usage charged, decayed or reset since the last State.
func (p *Priority) Changed() bool { return p.usage != nil && p.dirty }

// Unsaved marks the usage changed again (the State taken could not be
// saved).
func (p *Priority) Unsaved() { p.dirty = p.usage != nil }

// SetLocation sets the time zone of the DAILY..YEARLY usage resets
// (Slurm uses the controller's local time; the default is UTC).
func (p *Priority) SetLocation(loc *time.Location) {
	p.loc = loc
	if p.usage != nil {
		p.usage.SetLocation(loc)
	}
}

// LastRan is the time of the last decay pass (0 before the first).
func (p *Priority) LastRan() int64 { return p.lastRan }

// Associations lists the tracker's associations (nil without one).
func (p *Priority) Associations() []priority.Assoc {
	if p.usage == nil {
		return nil
	}
	return p.usage.Associations()
}

// SetPriority installs priority/multifactor (nil: back to priority/basic
// for jobs submitted from now on).
func (m *Manager) SetPriority(p *Priority) { m.mf = p }

// Priority returns the installed priority/multifactor, nil for
// priority/basic.
func (m *Manager) Priority() *Priority { return m.mf }

// UpdatePriorities recomputes the priority of the pending jobs whose
// priority was not set by priority/multifactor (new, released, nice
// changed, requeued), or of every pending job with all set (after a job
// update, whose fields may change any factor). Held jobs stay 0 and
// operator-set priorities are left alone. It returns how many changed.
// Priorities are not journaled: they are recomputed after a restart.
func (m *Manager) UpdatePriorities(cl *Cluster, now int64, all bool) int {
	p := m.Priority()
	if p == nil {
		return 0
	}
	p.chargeEnded(m, now)
	return m.reprioritize(p, cl, now, all)
}

// PriorityDecay is one pass of Slurm's decay thread at now: running jobs
// are charged for their CPU-seconds since the last pass, the usage is
// reset and decayed, and every pending job's priority recomputed. It
// returns how many priorities changed.
func (m *Manager) PriorityDecay(cl *Cluster, now int64) int {
	p := m.Priority()
	if p == nil {
		return 0
	}
	if p.usage != nil {
		p.chargeEnded(m, now)
		p.usage.Decay(now)
		if p.lastRan != 0 && now > p.lastRan {
			for _, j := range m.Jobs() {
				if j.Running() && j.StartTime != 0 {
					m.charge(p, j, max(j.StartTime, p.lastRan), now, now)
				}
			}
		}
		p.pruneEnded(m)
		p.dirty = true
	}
	if now > p.lastRan {
		p.lastRan = now
	}
	return m.reprioritize(p, cl, now, true)
}

// chargeEnded charges jobs that ended since the last pass for the part
// of their run after it, once (priority_p_job_end).
func (p *Priority) chargeEnded(m *Manager, now int64) {
	if p.usage == nil {
		return
	}
	for _, j := range m.Jobs() {
		if !j.Finished() || j.StartTime == 0 || j.EndTime == 0 || j.TotalCPUs == 0 {
			continue
		}
		if s, ok := p.ended[j.ID]; ok && s == j.StartTime {
			continue
		}
		if p.lastRan == 0 || j.EndTime <= p.lastRan {
			// Ended before usage was tracked, or charged by the passes
			// it ran through.
			continue
		}
		p.ended[j.ID] = j.StartTime
		m.charge(p, j, max(j.StartTime, p.lastRan), min(j.EndTime, now), p.lastRan)
		p.dirty = true
	}
}

// pruneEnded forgets end charges no later pass can meet again.
func (p *Priority) pruneEnded(m *Manager) {
	for id, start := range p.ended {
		j := m.jobs[id]
		if j == nil || j.StartTime != start || !j.Finished() {
			delete(p.ended, id)
		}
	}
}

// charge adds the job's billing-seconds over [from, to] as
// _apply_new_usage does: the run's billable TRES (its partition's
// TRESBillingWeights applied to what it holds, its CPUs without weights)
// times the seconds, decayed over those seconds, added to the usage as
// it stands at time at (the tracker's clock: the last Decay).
func (m *Manager) charge(p *Priority, j *Job, from, to, at int64) {
	if to <= from || j.TotalCPUs == 0 {
		return
	}
	bill := m.billable(j)
	d := float64(to - from)
	f := 1.0
	if p.cfg.DecayHalfLife != 0 {
		f = math.Pow(priority.DecayFactor(p.cfg.DecayHalfLife), d)
	}
	p.usage.Charge(j.UserName, j.Account, bill*d*f, at)
}

// UpdateJobPriorities gives the listed jobs their priority (the job a
// submission or allocation just created, the jobs an update named):
// cheaper than UpdatePriorities with a large queue. With force, a job
// whose priority was computed here already is recomputed too (an update
// may have changed any factor), as update_job's set_job_prio. A user
// first seen here changes every user's fair-share factor, so then every
// pending job is recomputed.
func (m *Manager) UpdateJobPriorities(cl *Cluster, now int64, force bool, ids ...uint32) int {
	p := m.Priority()
	if p == nil {
		return 0
	}
	var jobs []*Job
	for _, id := range ids {
		j := m.jobs[id]
		if j == nil {
			continue
		}
		if p.ensure(j) {
			return m.reprioritize(p, cl, now, true)
		}
		jobs = append(jobs, j)
	}
	r := p.newRun(cl)
	changed := 0
	for _, j := range jobs {
		if m.prioritize(p, r, j, cl, now, force) {
			changed++
		}
	}
	if changed > 0 {
		m.lastUpdate = now
	}
	return changed
}

// JobIDs lists the records a job id string and id name (as
// REQUEST_UPDATE_JOB and scancel give them; an array names its meta
// record and its started tasks); nil when they name none.
func (m *Manager) JobIDs(jobIDStr string, id uint32) []uint32 {
	ts, err := m.resolve(jobIDStr, id)
	if err != nil {
		return nil
	}
	var out []uint32
	for _, t := range ts {
		out = append(out, t.job.ID)
	}
	return out
}

// ensure creates j's association in the tracker; it reports whether it
// was new (and fair-share weighs).
func (p *Priority) ensure(j *Job) bool {
	if p.usage == nil || p.cfg.WeightFairshare == 0 || !(j.Pending() || j.Running()) {
		return false
	}
	return p.usage.Ensure(j.UserName, j.Account)
}

// run caches what one recomputation reads of the cluster.
type run struct {
	parts map[string]*priority.Partition
}

func (p *Priority) newRun(cl *Cluster) *run {
	p.mf.Cluster = clusterOf(cl)
	return &run{parts: map[string]*priority.Partition{}}
}

// reprioritize is UpdatePriorities with the engine in hand.
func (m *Manager) reprioritize(p *Priority, cl *Cluster, now int64, all bool) int {
	r := p.newRun(cl)
	changed := 0
	jobs := m.Jobs()
	// Every association first, so that a user first seen here does not
	// change the tree between two jobs' factors; a new one changes
	// everybody's factor.
	for _, j := range jobs {
		if p.ensure(j) {
			all = true
		}
	}
	for _, j := range jobs {
		if m.prioritize(p, r, j, cl, now, all) {
			changed++
		}
	}
	if all {
		for id := range p.computed {
			if m.jobs[id] == nil {
				delete(p.computed, id)
			}
		}
		for id := range p.arrays {
			if m.jobs[id] == nil {
				delete(p.arrays, id)
			}
		}
	}
	if changed > 0 {
		m.lastUpdate = now
	}
	return changed
}

// prioritize computes j's priority when it has one to compute (pending,
// or running with CALCULATE_RUNNING in a full pass; not held, not set by
// an operator) and it was not computed here already (unless all). It
// reports whether the priority changed.
func (m *Manager) prioritize(p *Priority, r *run, j *Job, cl *Cluster, now int64, all bool) bool {
	calcRunning := p.cfg.Flags&conf.PriorityCalculateRunning != 0
	eligible := j.Pending() || calcRunning && j.Running() && all
	if !eligible || j.Priority == 0 || j.Hold != HoldNone || j.AdminPrio {
		delete(p.computed, j.ID)
		delete(p.arrays, j.ID)
		return false
	}
	prev, ours := p.computed[j.ID]
	ours = ours && prev == j.Priority
	if ours && !all {
		return false
	}
	pj := m.priorityJob(j, cl, p)
	if ours {
		pj.Previous = prev // INCR_ONLY keeps the higher one
	}
	name := jobPartition(j)
	pp, ok := r.parts[name]
	if !ok {
		pp = m.prioPartition(cl, name)
		r.parts[name] = pp
	}
	v := p.mf.Priority(&pj, pp, now)
	p.computed[j.ID] = v
	m.prioritizeParts(p, r, j, &pj, pp, cl, now)
	if v == j.Priority {
		return false
	}
	j.Priority = v
	return true
}

// priorityJob is the multifactor view of j.
func (m *Manager) priorityJob(j *Job, cl *Cluster, p *Priority) priority.Job {
	pj := priority.Job{
		SubmitTime: j.SubmitTime, EligibleTime: j.EligibleTime, Eligible: j.EligibleTime != 0,
		User: j.UserName, Account: j.Account,
		MinNodes: 1, TimeLimit: j.TimeLimit,
		Nice:       int32(int64(j.Nice) - int64(niceOff)),
		SiteFactor: int64(j.SiteFactor) - int64(niceOff),
	}
	if j.SiteFactor == 0 {
		pj.SiteFactor = 0
	}
	if j.MinNodes != NoVal && j.MinNodes != 0 {
		pj.MinNodes = j.MinNodes
	}
	// set_priority_factors: allocated CPUs once known, else the
	// requested maximum, else the minimum.
	switch {
	case j.TotalCPUs != 0:
		pj.CPUs = j.TotalCPUs
	case j.MaxCPUs != NoVal && j.MaxCPUs != 0:
		pj.CPUs = j.MaxCPUs
	case j.MinCPUs != NoVal:
		pj.CPUs = j.MinCPUs
	}
	if len(p.cfg.WeightTRES) != 0 {
		pj.TRES = m.jobTRES(j, pj, cl)
	}
	return pj
}

// jobTRES is the job's cpu, mem (MB), node and billing counts:
// allocated once running, else requested, the memory as
// job_get_tres_mem estimates it (a request of 0, or none without a
// default, is the memory of the partition's first node), billing as
// scontrol show job shows it. GRES are not counted yet.
func (m *Manager) jobTRES(j *Job, pj priority.Job, cl *Cluster) map[string]uint64 {
	t := map[string]uint64{"cpu": uint64(pj.CPUs), "node": uint64(pj.MinNodes)}
	if len(j.Nodes) > 0 {
		t["node"] = uint64(len(j.Nodes))
		var mem uint64
		for _, v := range j.NodeMem {
			mem += v
		}
		t["mem"] = mem
		t["billing"] = uint64(m.billable(j))
		return t
	}
	_, _, _, t["billing"] = m.reqTRES(j, cl)
	sp := cl.partition(jobPartition(j))
	mem := j.PnMinMemory
	if mem == NoVal64 {
		mem = defaultMem(cl, sp)
	}
	if mem == 0 && sp != nil && len(sp.Nodes) > 0 && sp.Nodes[0] >= 0 && sp.Nodes[0] < len(cl.Nodes) {
		mem = cl.Nodes[sp.Nodes[0]].RealMemory
	}
	if mem&memPerCPU != 0 {
		t["mem"] = (mem &^ memPerCPU) * uint64(pj.CPUs)
	} else {
		t["mem"] = mem * uint64(pj.MinNodes)
	}
	return t
}

// defaultMem is the memory a job without a request gets: the
// partition's DefMemPerCPU or DefMemPerNode, else the cluster's, else 0
// (the whole node), encoded as PnMinMemory.
func defaultMem(cl *Cluster, sp *sched.Partition) uint64 {
	if sp != nil {
		if sp.DefMemPerCPU != 0 {
			return sp.DefMemPerCPU | memPerCPU
		}
		if sp.DefMemPerNode != 0 {
			return sp.DefMemPerNode
		}
	}
	if cl == nil {
		return 0
	}
	if cl.Config.DefMemPerCPU != 0 {
		return cl.Config.DefMemPerCPU | memPerCPU
	}
	return cl.Config.DefMemPerNode
}

// jobPartition is the partition a job's priority is computed for: the
// one it runs in, else the first it asked for (Slurm's part_ptr).
func jobPartition(j *Job) string {
	if j.Partition != "" {
		return j.Partition
	}
	if len(j.Partitions) > 0 {
		return j.Partitions[0]
	}
	return ""
}

// clusterOf derives the multifactor normalizers from the node and
// partition tables: node_record_count, cluster_cpus (schedulable CPUs)
// and the largest PriorityJobFactor.
func clusterOf(cl *Cluster) priority.Cluster {
	c := priority.Cluster{MaxPartitionJobFactor: 1}
	if cl == nil {
		return c
	}
	c.Nodes = uint32(len(cl.Nodes))
	for _, n := range cl.Nodes {
		c.CPUs += uint32(n.CPUs)
	}
	for _, p := range cl.Partitions {
		c.MaxPartitionJobFactor = max(c.MaxPartitionJobFactor, p.PriorityJobFactor)
	}
	return c
}

// prioPartition is the multifactor view of a partition, nil if unknown:
// its factor, MaxTime and TRES totals, billing being its
// TRESBillingWeights applied to the totals (its CPUs without weights).
func (m *Manager) prioPartition(cl *Cluster, name string) *priority.Partition {
	sp := cl.partition(name)
	if sp == nil {
		return nil
	}
	pp := &priority.Partition{JobFactor: sp.PriorityJobFactor, MaxTime: sp.MaxTime, TRES: map[string]uint64{}}
	for _, i := range sp.Nodes {
		if i < 0 || i >= len(cl.Nodes) {
			continue
		}
		n := &cl.Nodes[i]
		pp.TRES["node"]++
		pp.TRES["cpu"] += uint64(n.CPUs)
		pp.TRES["mem"] += n.RealMemory
		for _, g := range n.Gres {
			pp.TRES[priority.TRESKey("gres", g.Name)] += g.Count
			if g.Type != "" {
				pp.TRES[priority.TRESKey("gres", g.Name+":"+g.Type)] += g.Count
			}
		}
	}
	pp.TRES["billing"] = uint64(priority.Billing(pp.TRES, m.weights(name), m.maxTRES()))
	return pp
}

// prioritizeParts computes the priority_array of a pending job submitted
// to several partitions (after its own priority, pj and own being its
// view and its partition's); other jobs have none.
func (m *Manager) prioritizeParts(p *Priority, r *run, j *Job, pj *priority.Job, own *priority.Partition, cl *Cluster, now int64) {
	names := tierOrder(j, cl)
	if !j.Pending() || len(names) < 2 {
		delete(p.arrays, j.ID)
		return
	}
	parts := make([]*priority.Partition, len(names))
	for i, name := range names {
		pp, ok := r.parts[name]
		if !ok {
			pp = m.prioPartition(cl, name)
			r.parts[name] = pp
		}
		parts[i] = pp
	}
	var prev []uint32
	if old := p.arrays[j.ID]; len(old) == len(names) {
		for i, e := range old {
			if e.Partition != names[i] {
				prev = nil
				break
			}
			prev = append(prev, e.Priority)
		}
	}
	vals := p.mf.PriorityArray(pj, own, parts, prev, now)
	a := make([]PartitionPriority, len(names))
	for i, name := range names {
		a[i] = PartitionPriority{Partition: name, Priority: vals[i]}
	}
	p.arrays[j.ID] = a
	if p.OnArray != nil {
		p.OnArray(j, a)
	}
}

// tierOrder is a job's part_ptr_list: the partitions it asked for that
// exist, each once, sorted by PriorityTier (highest first, ties in the
// order given), as the priority plugin sorts them.
func tierOrder(j *Job, cl *Cluster) []string {
	type tp struct {
		name string
		tier uint16
	}
	var l []tp
	for _, name := range j.Partitions {
		sp := cl.partition(name)
		if sp == nil || slices.ContainsFunc(l, func(x tp) bool { return x.name == name }) {
			continue
		}
		l = append(l, tp{name, sp.PriorityTier})
	}
	slices.SortStableFunc(l, func(a, b tp) int { return int(b.tier) - int(a.tier) })
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = x.name
	}
	return out
}

// PartitionArray is j's priority_array: its priority in each partition
// it may run in, in PriorityTier order; nil when it has none (not
// pending in several partitions, held, operator-set priority, or
// priority/basic), when j.Priority applies in every partition.
func (m *Manager) PartitionArray(j *Job) []PartitionPriority {
	p := m.Priority()
	if p == nil {
		return nil
	}
	a := p.arrays[j.ID]
	if v, ok := p.computed[j.ID]; a == nil || !ok || v != j.Priority {
		// Its priority was set elsewhere since (hold, operator):
		// Slurm sets every element to it then.
		return nil
	}
	return a
}

// PartitionPriorities gives j's priority in each of j.Partitions (same
// order), the value the scheduler orders the job by when it considers it
// in that partition: its priority_array element, j.Priority without one.
// nil means j.Priority everywhere.
func (m *Manager) PartitionPriorities(j *Job) []uint32 {
	a := m.PartitionArray(j)
	if a == nil {
		return nil
	}
	out := make([]uint32, len(j.Partitions))
	for i, name := range j.Partitions {
		out[i] = j.Priority
		for _, e := range a {
			if e.Partition == name {
				out[i] = e.Priority
			}
		}
	}
	return out
}

// billingWeights is one partition's parsed TRESBillingWeights.
type billingWeights struct {
	str string
	w   map[string]float64 // nil: bill CPUs
}

// billingTable is what the billing TRES is computed with, whichever the
// priority plugin (Slurm's calc_job_billable_tres does not depend on it).
type billingTable struct {
	parts map[string]billingWeights // partition -> TRESBillingWeights
	// maxTRES is PriorityFlags=MAX_TRES, read from here with
	// priority/basic (priority/multifactor reads its own Config).
	maxTRES bool
}

// SetBillingWeights installs the partitions' TRESBillingWeights (name to
// the slurm.conf string; a partition not named has none), which set the
// billing TRES of jobs (scontrol show job) and, with priority/multifactor,
// what a running job is charged for fair-share. A string that does not
// parse leaves its partition without weights; the errors are returned
// joined.
func (m *Manager) SetBillingWeights(weights map[string]string) error {
	next := map[string]billingWeights{}
	changed := len(weights) != len(m.billing.parts)
	var errs []error
	for name, str := range weights {
		if old, ok := m.billing.parts[name]; ok && old.str == str {
			next[name] = old
			continue
		}
		changed = true
		w, err := priority.ParseBillingWeights(str)
		if err != nil {
			errs = append(errs, fmt.Errorf("partition %s: %w", name, err))
			w = nil
		}
		next[name] = billingWeights{str: str, w: w}
	}
	m.billing.parts = next
	if changed {
		// Packed job records show billing: drop the cached ones.
		m.info = nil
	}
	return errors.Join(errs...)
}

// SetBillingMaxTRES sets PriorityFlags=MAX_TRES for the billing TRES
// under priority/basic (priority/multifactor takes it from its Config).
func (m *Manager) SetBillingMaxTRES(on bool) {
	if m.billing.maxTRES != on {
		m.billing.maxTRES = on
		m.info = nil
	}
}

// weights is the TRESBillingWeights of partition name (nil: none).
func (m *Manager) weights(name string) map[string]float64 {
	return m.billing.parts[name].w
}

// maxTRES reports PriorityFlags=MAX_TRES.
func (m *Manager) maxTRES() bool {
	if p := m.Priority(); p != nil {
		return p.cfg.Flags&conf.PriorityMaxTRES != 0
	}
	return m.billing.maxTRES
}

// billable is calc_job_billable_tres: what a job that holds nodes is
// billed per second, its partition's weights applied to what it holds
// (its CPU count without weights); 0 before it holds anything.
func (m *Manager) billable(j *Job) float64 {
	if j.TotalCPUs == 0 {
		return 0
	}
	w := m.weights(j.Partition)
	if w == nil {
		return float64(j.TotalCPUs)
	}
	return priority.Billing(allocCounts(j), w, m.maxTRES())
}

// allocCounts is tres_alloc_cnt: the CPUs, memory (MB) and nodes a job
// holds.
func allocCounts(j *Job) map[string]uint64 {
	var mem uint64
	for _, v := range j.NodeMem {
		mem += v
	}
	return map[string]uint64{"cpu": uint64(j.TotalCPUs), "mem": mem, "node": uint64(len(j.Nodes))}
}
