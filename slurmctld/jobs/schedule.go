package jobs

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// maxTasksPerPass bounds how many tasks of one array a pass may start
// (each is a pending entry in the snapshot).
const maxTasksPerPass = 128

// Usage is what the jobs hold on one node (the controller's Node.AllocCPUs,
// AllocMem, RunJobs, CompletingJobs).
type Usage struct {
	CPUs uint32
	// Cores is how many distinct cores the jobs' core bitmaps hold, and
	// LooseCPUs the CPUs of jobs without a core list: the node reports
	// whole cores allocated (cons_tres counts its core bitmap), which
	// CPUs alone does not tell under CR_CPU.
	Cores, LooseCPUs uint32
	// Whole: a job holding cores here has the whole node (--exclusive,
	// --core-spec): cons_tres marks every core of the node in its row
	// bitmap then, whatever cores the job's own bitmap has.
	Whole          bool
	MemMB          uint64
	RunJobs        int
	CompletingJobs int
}

// NodeUsage returns the usage of every node of an n-node table, as
// cons_tres accounts it. A job suspended by scontrol (or one that ended
// while suspended) holds its memory but not its cores, and does not count
// as running on the node (slurmctld's _suspend_job_nodes and
// job_res_rm_job with the "resume" action, cores only). Cores held by
// more than one job (shared, or given back to a resumed job that others
// took meanwhile) count once, as the union of the jobs' core bitmaps.
func (m *Manager) NodeUsage(n int) []Usage {
	m.notePendingHolders()
	all := m.holders
	if VerifyNodeUsage {
		all = m.jobs
	}
	u := make([]Usage, n)
	held := make([][]uint64, n)
	for id, j := range all {
		if !j.holdsResources() || m.jobs[id] != j {
			if !VerifyNodeUsage {
				delete(m.holders, id)
			}
			continue
		}
		if VerifyNodeUsage && m.holders[id] != j {
			panic(fmt.Sprintf("jobs: %s holds nodes (state %#x) but is not among the holders", jobIDString(j), j.State))
		}
		cores := !j.coresReleased()
		for k, i := range j.NodeIdx {
			if i < 0 || i >= n {
				continue
			}
			switch {
			case j.Base() == msg.JobRunning:
				u[i].RunJobs++
			case j.Running(): // suspended
			case contains(j.Completing, j.Nodes[k]):
				u[i].CompletingJobs++
			default:
				continue
			}
			u[i].MemMB += j.NodeMem[k]
			if cores {
				u[i].CPUs += newCPUs(&held[i], j, k)
				if k >= len(j.NodeCores) || len(j.NodeCores[k]) == 0 {
					u[i].LooseCPUs += j.NodeCPUs[k]
				} else if j.Shared == 0 {
					u[i].Whole = true
				}
			}
		}
	}
	for i := range u {
		for _, w := range held[i] {
			u[i].Cores += uint32(bits.OnesCount64(w))
		}
	}
	return u
}

// VerifyNodeUsage makes NodeUsage walk every job and panic on one that
// holds nodes but is not among the holders: set by tests.
var VerifyNodeUsage bool

// newCPUs marks the cores job j holds on its k-th node in held (a bitmap
// of core ids) and returns the CPUs they add that no other job's cores
// already counted.
func newCPUs(held *[]uint64, j *Job, k int) uint32 {
	if k >= len(j.NodeCores) || len(j.NodeCores[k]) == 0 {
		return j.NodeCPUs[k]
	}
	fresh := 0
	for _, c := range j.NodeCores[k] {
		w, bit := int(c/64), uint64(1)<<(c%64)
		for len(*held) <= w {
			*held = append(*held, 0)
		}
		if (*held)[w]&bit == 0 {
			(*held)[w] |= bit
			fresh++
		}
	}
	return j.NodeCPUs[k] * uint32(fresh) / uint32(len(j.NodeCores[k]))
}

// coresReleased reports a job whose cores went back to the scheduler
// while it keeps its nodes: suspended, or ended while suspended (its end
// time is then its suspend time, as slurmctld sets it; the job record has
// no other mark of it, so a job resumed and ended within the same second
// also counts here).
func (j *Job) coresReleased() bool {
	if j.Priority != 0 {
		// Suspended by the gang logic: cons_tres keeps its cores.
		return false
	}
	switch {
	case j.Base() == msg.JobSuspended:
		return true
	case j.Finished():
		return j.SuspendTime != 0 && j.EndTime == j.SuspendTime && j.IsCompleting()
	}
	return false
}

// entry maps a snapshot pending id back to its job.
type entry struct{ job *Job }

// Pass is one scheduling pass in the making: Snapshot is sched's input;
// Apply takes the Plan made from it. Both calls and the pass in between
// happen under the controller's lock (the plan is only valid for the table
// it was made from).
type Pass struct {
	Snapshot *sched.Snapshot
	cl       *Cluster
	ids      map[uint32]entry
	actions  []Action
}

// Snapshot builds the scheduler's input: the cluster view, what running
// jobs hold, and the pending jobs that are eligible now. It first updates
// every pending job's eligibility (begin time, dependencies, holds, array
// throttle) and reason (kill_invalid_depend may cancel jobs here: their
// actions come out of Apply).
func (m *Manager) Snapshot(cl *Cluster, now int64) *Pass {
	s, ids, actions := m.snapshot(cl, now, false)
	return &Pass{Snapshot: s, cl: cl, ids: ids, actions: actions}
}

// ApplyPlan carries out a plan made from p.Snapshot: started jobs become
// RUNNING (array tasks split off) with their launch actions, the others
// take the plan's reason.
func (m *Manager) ApplyPlan(p *Pass, plan *sched.Plan, now int64) (Outcome, error) {
	actions := append(p.actions, m.apply(p.cl, plan, p.ids, now)...)
	actions = append(actions, m.gang(p.cl, now)...)
	return m.finish(actions)
}

// snapshot with dry set changes nothing (a will-run query): pending jobs
// count when they are not held, past their begin time and without a
// dependency.
func (m *Manager) snapshot(cl *Cluster, now int64, dry bool) (*sched.Snapshot, map[uint32]entry, []Action) {
	if !dry {
		// priority/multifactor: jobs given a priority elsewhere since the
		// last pass (submit, release, nice, requeue) get theirs first.
		m.UpdatePriorities(cl, now, false)
	}
	s := &sched.Snapshot{Now: now, Config: cl.Config, Nodes: cl.Nodes, Partitions: cl.Partitions,
		Reservations: cl.schedReservations()}
	ids := map[uint32]entry{}
	var actions []Action
	synth := synthBase
	lic := m.licensePass(cl, dry)
	bfLic := bfLicenses(cl)
	// m.order, not m.Jobs(): a pass runs after every submit, and copying
	// the whole table each time was half of what a 10,000-job submit
	// burst allocated. Nothing below adds or removes records, so the
	// order slice stays as it is during the loop.
	m.sortOrder()
	gate := m.newArrayGate()
	bound := m.gresBound(cl)
	for _, id := range m.order {
		j := m.jobs[id]
		if j.holdsResources() && len(j.NodeIdx) > 0 {
			if a, ok := m.heldBy(j); ok {
				for k := range a.Nodes {
					if ni := a.Nodes[k].Node; bound != nil && ni >= 0 && ni < len(bound) && bound[ni] != nil && k < len(j.NodeGres) {
						a.Nodes[k].GresBind = gres.BoundHeld(bound[ni], j.NodeGres[k])
					}
				}
				s.Running = append(s.Running, a)
			}
		}
		if !j.Pending() || j.IsCompleting() {
			// A requeued job waits for its nodes to be clean
			// (_job_runnable_test1).
			continue
		}
		if dry {
			if j.Hold != HoldNone || j.BeginTime > now || j.Dependency != nil {
				continue
			}
		} else if !m.eligible(j, cl, now, &actions) || (!m.licensesReady(j, lic) && !bfLic) {
			continue
		}
		if !dry && m.deadlineMissed(j, now, &actions) {
			continue
		}
		// job_array_start_test: every record of an array (not only
		// its meta record) waits while the throttle is reached.
		copies := gate.copies(j)
		if copies == 0 {
			if !dry {
				m.setReason(j, ReasonArrayTaskLimit, now)
			}
			continue
		}
		sj := m.schedJob(j, cl)
		sj.PreemptWait = m.preemptWait(j, now)
		s.Pending = append(s.Pending, sj)
		ids[j.ID] = entry{j}
		for k := 1; k < copies; k++ {
			c := sj
			c.JobID = synth
			ids[synth] = entry{j}
			synth++
			s.Pending = append(s.Pending, c)
		}
	}
	if bfLic && !dry {
		m.addBFLicenses(s, cl, ids)
	}
	return s, ids, actions
}

// eligible updates a pending job's hold, begin time and dependency state
// and reports whether it may be scheduled now.
func (m *Manager) eligible(j *Job, cl *Cluster, now int64, actions *[]Action) bool {
	ok := m.independent(j, cl, now, actions)
	if flag := j.Bitflags&jobDependent == 0; ok != flag && j.Pending() {
		j.Bitflags ^= jobDependent
		m.touch(j, now)
	}
	// The hold for a revoked credential's second is ours alone: it is
	// no dependency state.
	return ok && m.launchable(j, now)
}

func (m *Manager) independent(j *Job, cl *Cluster, now int64, actions *[]Action) bool {
	switch j.Hold {
	case HoldUser:
		m.setReason(j, ReasonHeldUser, now)
		return false
	case HoldAdmin:
		m.setReason(j, ReasonHeldAdmin, now)
		return false
	case HoldMaxRequeue:
		m.setReason(j, ReasonMaxRequeue, now)
		return false
	}
	if j.Dependency != nil {
		before := j.Dependency.String()
		wait, failed := m.evalDependency(j, now)
		if j.Dependency.String() != before {
			m.touch(j, now)
		}
		if failed {
			if m.cfg.KillInvalidDepend {
				m.cancelPending(j, now, "Job dependency can never be satisfied", actions)
				return false
			}
			m.setReason(j, ReasonDepInvalid, now)
			return false
		}
		if wait {
			m.setReason(j, ReasonDependency, now)
			return false
		}
		if !j.Dependency.Or && allFulfilled(j.Dependency) {
			j.Dependency = nil
			m.touch(j, now)
		}
	}
	if j.BeginTime > now {
		m.setReason(j, ReasonBeginTime, now)
		return false
	}
	if !m.resvReady(j, cl, now) {
		return false
	}
	if j.EligibleTime == 0 {
		j.EligibleTime = now
		m.touch(j, now)
	}
	return true
}

func allFulfilled(d *Dependency) bool {
	for _, it := range d.Items {
		if it.State != depFulfilled {
			return false
		}
	}
	return true
}

func (m *Manager) setReason(j *Job, r uint16, now int64) {
	if j.Reason != r {
		j.Reason = r
		if isUnavailDesc(j.StateDesc) {
			j.StateDesc = ""
		}
		m.touch(j, now)
	}
}

// heldBy is what j holds for the scheduler: its allocation, or for a job
// whose cores went back (coresReleased) only the memory it keeps, no
// cores, no exclusivity (nothing when that is no memory at all).
func (m *Manager) heldBy(j *Job) (sched.Allocation, bool) {
	a := m.allocationOf(j)
	if !j.coresReleased() {
		return a, true
	}
	// Out of cons_tres's partition rows: no partition's sharing rules see
	// it (Shared with every core count at zero keeps it neutral).
	a.Exclusive, a.ExclusiveUser, a.Shared, a.Partition = false, false, true, ""
	mem := false
	for k := range a.Nodes {
		a.Nodes[k].Cores, a.Nodes[k].CPUs = nil, 0
		mem = mem || a.Nodes[k].MemoryMB > 0
	}
	return a, mem
}

func (m *Manager) allocationOf(j *Job) sched.Allocation {
	a := sched.Allocation{JobID: j.ID, UserID: j.UserID, Partition: j.Partition, Start: j.StartTime, End: j.EndTime,
		Exclusive: j.Shared == 0, Shared: j.SharedCores, Running: j.preemptable()}
	for k, i := range j.NodeIdx {
		na := sched.NodeAlloc{Node: i, CPUs: j.NodeCPUs[k], MemoryMB: j.NodeMem[k], Gres: heldGres(j, k)}
		if k < len(j.NodeCores) {
			na.Cores = j.NodeCores[k]
		}
		a.Nodes = append(a.Nodes, na)
	}
	return a
}

// spreadJob is SPREAD_JOB of a job's bit flags (--spread-job).
const spreadJob = 1 << 8

func (m *Manager) schedJob(j *Job, cl *Cluster) sched.Job {
	sj := sched.Job{JobID: j.ID, Priority: j.Priority, SubmitTime: j.SubmitTime, BeginTime: j.BeginTime,
		UserID: j.UserID, GroupID: j.GroupID, Account: j.Account, QOS: j.QOS,
		Partitions: j.Partitions, PartitionPriorities: m.PartitionPriorities(j), Features: j.Features, Contiguous: j.Contiguous == 1,
		TimeLimit: j.TimeLimit, TimeMin: zeroIfNoVal(j.TimeMin), Reservation: j.Reservation}
	if u, ok := m.user(j.UserID); ok {
		sj.Groups = u.Groups
	}
	if j.MinNodes != NoVal {
		sj.MinNodes = j.MinNodes
	}
	// A job without a maximum node count (max_nodes NO_VAL or 0) may
	// spread over as many nodes as its tasks need: sbatch -n8 without -N
	// on 4-CPU nodes runs on two.
	sj.MaxNodes = sched.Infinite32
	if j.MaxNodes != NoVal && j.MaxNodes != 0 {
		sj.MaxNodes = j.MaxNodes
	}
	if j.NumTasks != NoVal {
		sj.NumTasks = j.NumTasks
	}
	if j.CPUsPerTask != NoVal16 {
		sj.CPUsPerTask = j.CPUsPerTask
	}
	if j.NTasksPerNode != NoVal16 {
		sj.NTasksPerNode = j.NTasksPerNode
	}
	if j.PnMinCPUs != NoVal16 && j.PnMinCPUs > 1 {
		sj.MinCPUs = uint32(j.PnMinCPUs)
	}
	if j.NTasksPerCore != 0 && j.NTasksPerCore != NoVal16 && j.NTasksPerCore != infinite16 {
		sj.TasksPerCore = j.NTasksPerCore
	}
	if j.ThreadsPerCore != 0 && j.ThreadsPerCore != NoVal16 {
		sj.ThreadsPerCore = j.ThreadsPerCore
	}
	sj.Overcommit = j.Overcommit == 1
	sj.Spread = j.Bitflags&spreadJob != 0
	// job_limits_check's CPU count: the job's minimum CPUs, else its
	// minimum node count (as limitsCheck takes them).
	switch {
	case j.MinCPUs != NoVal:
		sj.TotalCPUs = j.MinCPUs
	case j.MinNodes != NoVal:
		sj.TotalCPUs = j.MinNodes
	}
	// No accounting database: the job's association, so its account, is
	// never known to the partitions' account lists.
	sj.AccountUnknown = true
	switch {
	case j.PnMinMemory == NoVal64:
	case j.PnMinMemory == 0:
		sj.MemAll = true
	case j.PnMinMemory&memPerCPU != 0:
		sj.MemPerCPU = j.PnMinMemory &^ memPerCPU
	default:
		sj.MemPerNode = j.PnMinMemory
	}
	switch j.Shared {
	case 0:
		sj.Share = sched.ShareExclusive
	case 1:
		sj.Share = sched.ShareOversubscribe
	case 2:
		sj.Share = sched.ShareUser
	}
	if j.CoreSpec != NoVal16 {
		// Kept only with AllowSpecResourcesUsage (submit.go).
		const coreSpecThread = 0x8000 // CORE_SPEC_THREAD
		sj.SpecSet, sj.SpecThreads, sj.SpecCount = true, j.CoreSpec&coreSpecThread != 0, j.CoreSpec&^coreSpecThread
	}
	setSchedGres(&sj, j)
	sj.ReqNodes = nodeIdxs(cl, j.ReqNodes)
	sj.ExcNodes = nodeIdxs(cl, j.ExcNodes)
	sj.HetJobID = j.HetJobID
	return sj
}

func nodeIdxs(cl *Cluster, expr string) []int {
	if expr == "" {
		return nil
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil
	}
	var out []int
	for _, n := range names {
		if i := cl.nodeIndex(n); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// Schedule runs one scheduling pass (the main pass, and backfill when the
// cluster's sched.Config says so and backfill is true) and applies it.
func (m *Manager) Schedule(cl *Cluster, now int64, backfill bool) (Outcome, error) {
	actions := m.schedule(cl, now, backfill)
	actions = append(actions, m.gang(cl, now)...)
	return m.finish(actions)
}

func (m *Manager) schedule(cl *Cluster, now int64, backfill bool) []Action {
	m.splitCorrespond(now)
	snap, ids, actions := m.snapshot(cl, now, false)
	if len(snap.Pending) == 0 {
		m.lastPass = sched.PassStats{}
		m.notePlanned(backfill, nil)
		m.licenseReasons(nil, ids, now)
		return actions
	}
	var plan *sched.Plan
	if backfill {
		plan = sched.Schedule(snap)
	} else {
		plan = sched.MainPass(snap)
	}
	m.lastPass = plan.Stats
	m.notePlanned(backfill, plan)
	return append(actions, m.apply(cl, plan, ids, now)...)
}

// apply carries out a plan: the started jobs become RUNNING on their
// allocation (array tasks are split off), the others get the plan's
// reason. It returns the launch actions.
func (m *Manager) apply(cl *Cluster, plan *sched.Plan, ids map[uint32]entry, now int64) []Action {
	var actions []Action
	lic := m.clusterLicenses(cl, false)
	gate := m.newArrayGate()
	for _, st := range m.hetFilterStarts(plan, ids, now) {
		e, ok := ids[st.JobID]
		// Records of one array are planned each on their own: the
		// throttle is tested again at every start.
		if !ok || !e.job.Pending() || gate.throttled(e.job) || !m.takeLicenses(e.job, lic, now) {
			continue
		}
		j := e.job
		if j.IsArrayMeta() {
			t, ok := m.splitTask(j, now)
			if !ok {
				continue
			}
			j = t
		}
		actions = append(actions, m.start(j, cl, st, now)...)
		gate.started(j)
		m.diag.Started++
		if st.Backfill {
			m.diag.Backfilled++
		}
	}
	for _, p := range plan.Pending {
		e, ok := ids[p.JobID]
		if !ok || !e.job.Pending() || p.JobID >= synthBase {
			continue
		}
		j := e.job
		p = unavailPending(cl, j, p)
		p = m.skippedReason(j, p)
		if j.Reason != uint16(p.Reason) {
			j.Reason = uint16(p.Reason)
			m.touch(j, now)
		}
		if p.Desc == "" && (isAcctDesc(j.StateDesc) || isUnavailDesc(j.StateDesc)) {
			// These descriptions go with their reason.
			j.StateDesc = ""
			m.touch(j, now)
		}
		m.setPendingDesc(j, p, now)
		if j.EstStart != p.StartTime {
			j.EstStart = p.StartTime
			m.lastUpdate = now
		}
		if p.Reason == sched.ReasonResources || p.Reason == sched.ReasonPriority {
			j.LastEval = now // tested for resources in this pass
		}
	}
	m.licenseReasons(plan, ids, now)
	gate.limitReasons(ids, now)
	m.noteSchedNodes(cl, plan, ids, now)
	return append(actions, m.preempt(cl, plan, ids, now)...)
}

// start makes j RUNNING on st's allocation.
func (m *Manager) start(j *Job, cl *Cluster, st sched.Start, now int64) []Action {
	j.setBase(msg.JobRunning)
	j.State &^= msg.JobRequeue | msg.JobRequeueHold
	j.Reason = ReasonNone
	j.StateDesc = ""
	j.Partition = st.Partition
	j.StartTime = now
	j.ExitCode = 0 // a requeued job's last run's (select_nodes)
	j.Bitflags = j.Bitflags&^jobDependent | wasRunning
	j.EstStart = 0
	j.schedNodes = ""
	j.LastEval = now
	if j.EligibleTime == 0 {
		j.EligibleTime = now
	}
	j.Nodes, j.NodeIdx, j.NodeCPUs, j.NodeMem, j.NodeCores, j.NodeGres = nil, nil, nil, nil, nil, nil
	j.TotalCPUs = 0
	for _, na := range st.Alloc.Nodes {
		j.NodeIdx = append(j.NodeIdx, na.Node)
		j.Nodes = append(j.Nodes, cl.Nodes[na.Node].Name)
		j.NodeCPUs = append(j.NodeCPUs, na.CPUs)
		mem := na.MemoryMB
		if !cl.Config.MemoryConsumable {
			// Memory is not a consumable resource: nothing is allocated
			// (job_resources memory_allocated stays 0, as in the capture).
			mem = 0
		}
		j.NodeMem = append(j.NodeMem, mem)
		j.NodeCores = append(j.NodeCores, na.Cores)
		j.TotalCPUs += na.CPUs
	}
	j.SharedCores = st.Alloc.Shared
	j.NodeGres = m.pickGres(j, cl, st.Alloc)
	m.TakeMagnetic(j, cl, now)
	if st.TimeLimit != 0 {
		// Backfill started the job with its --time-min: that is its
		// limit now, as backfill.c sets it.
		j.TimeLimit = st.TimeLimit
	}
	m.deadlineLimit(j, cl, now)
	j.EndTime = now + m.limitSeconds(j, cl)
	j.BatchHost = ""
	if len(j.Nodes) > 0 {
		j.BatchHost = j.Nodes[0]
	}
	j.Completing = nil
	j.AliasList = aliasList(j, cl) // powerup.go
	m.touch(j, now)
	powerUp := m.powerUpHold(j, cl) // powerup.go
	if m.started(j, now) || (powerUp && (j.Batch || j.HetJobID != 0)) {
		return nil // PrologSlurmctld runs first (PrologDone launches), or the nodes power up (PowerUpReady)
	}
	var prolog []Action
	if !prologRunning(j) {
		// launch_prolog waits for a running PrologSlurmctld
		// (PrologDone sends it).
		prolog = m.launchProlog(j, cl, now)
	}
	if j.HetJobID != 0 {
		return append(prolog, m.hetStarted(j, cl, now)...)
	}
	if j.Batch {
		return append(prolog, LaunchBatch{JobID: j.ID, Node: j.BatchHost, Msg: m.batchLaunch(j, cl, now)})
	}
	if j.AllocRespPort != 0 {
		return append(prolog, SrunMessage{JobID: j.ID, Host: j.RespHost, Port: j.AllocRespPort, UID: j.UserID,
			ProtocolVersion: j.ProtocolVersion, MsgType: msgtype.RESPONSE_RESOURCE_ALLOCATION,
			Msg: m.allocation(j)})
	}
	return prolog
}

// isAcctDesc reports a state description part_policy_valid_acct gives.
func isAcctDesc(desc string) bool { return strings.HasPrefix(desc, "Job's account not ") }

// timeLimit is the job's limit in minutes with the partition's MaxTime
// standing for an unset one.
func (m *Manager) timeLimit(j *Job, cl *Cluster) uint32 {
	if j.TimeLimit != NoVal {
		return j.TimeLimit
	}
	name := j.Partition
	if name == "" && len(j.Partitions) > 0 {
		name = j.Partitions[0]
	}
	if p := cl.partition(name); p != nil {
		return p.MaxTime
	}
	return Infinite
}

func (m *Manager) limitSeconds(j *Job, cl *Cluster) int64 {
	l := m.timeLimit(j, cl)
	if l == Infinite || l == NoVal {
		return sched.InfiniteRun
	}
	return int64(l) * 60
}

// nodeList is the compressed allocated node list.
func (j *Job) nodeList() string { return hostlist.Compress(j.Nodes) }

func joinPartitions(p []string) string { return strings.Join(p, ",") }

// PendingNodeCount is the node count the record of a job that never had
// nodes shows, as pack_job derives it when select_nodes left no estimate
// (node_cnt_wag): from the task count and the biggest node of the job's
// partition (by --ntasks-per-node, --cpus-per-task or
// --ntasks-per-core when given), never below the job's minimum.
func (m *Manager) PendingNodeCount(j *Job, cl *Cluster) uint32 {
	name := j.Partition
	if name == "" && len(j.Partitions) > 0 {
		name = j.Partitions[0]
	}
	var idx []int
	if p := cl.partition(name); p != nil {
		idx = p.Nodes
	} else {
		for i := range cl.Nodes {
			idx = append(idx, i)
		}
	}
	var maxCPUs, maxCores uint32
	for _, i := range idx {
		n := &cl.Nodes[i]
		maxCPUs = max(maxCPUs, uint32(n.CPUs))
		maxCores = max(maxCores, uint32(n.Cores()))
	}
	return nodeCountWag(j, maxCPUs, maxCores)
}
