package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/gres"
)

// Alloc sid markers scontrol sends with priority 0 (uhold) or INFINITE.
const allocSIDUserHold = 0x00000002

// jobMemSet is JOB_MEM_SET: the job's memory limit was given explicitly.
const jobMemSet uint64 = 1 << 23

// Update handles REQUEST_UPDATE_JOB (scontrol update job, hold, uhold,
// release): owner or root/SlurmUser, with the rules of _update_job for
// what a user may change.
func (m *Manager) Update(d *msg.JobDesc, c Caller, cl *Cluster, now int64) (Outcome, error) {
	if id, tasks, ok, err := arrayTaskSpec(strOf(d.JobIDStr)); ok {
		if err != nil {
			return Outcome{}, err
		}
		return m.updateArrayTasks(id, tasks, d, c, cl, now)
	}
	ts, het, err := m.hetTargets(strOf(d.JobIDStr))
	if !het {
		ts, err = m.resolve(strOf(d.JobIDStr), d.JobID)
	}
	if err != nil {
		return Outcome{}, err
	}
	var firstErr error
	var actions []Action
	for _, t := range ts {
		if t.task != NoVal && t.job.IsArrayMeta() {
			// A pending task of an array: the meta record holds its fields.
			t.task = NoVal
		}
		if err := m.update(t.job, d, c, cl, now, &actions); err != nil {
			firstErr = keepFirst(firstErr, err)
		}
		m.touch(t.job, now)
	}
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	return out, firstErr
}

// updateOne applies one update to one record in _update_job's order: a
// field refused ends the update, the fields before it stay changed. It has
// nowhere to put messages to nodes, so it refuses to shrink a running job.
func (m *Manager) updateOne(j *Job, d *msg.JobDesc, c Caller, cl *Cluster, now int64) error {
	return m.update(j, d, c, cl, now, nil)
}

// update is updateOne; shrinking a running job appends the messages to
// its released nodes to actions.
func (m *Manager) update(j *Job, d *msg.JobDesc, c Caller, cl *Cluster, now int64, actions *[]Action) error {
	priv := m.privileged(c.UID)
	if ai := strOf(d.ArrayInx); ai != "" && j.Array != nil {
		v, err := strconv.ParseInt(ai, 10, 32)
		if err != nil || v < 0 {
			return serr(slurmerr.ESLURM_BAD_TASK_COUNT)
		}
		j.Array.MaxTasks = uint32(v)
		if j.Finished() {
			return nil
		}
	}
	if j.Finished() {
		return serr(slurmerr.ESLURM_JOB_FINISHED)
	}
	if d.AdminComment.Valid && !priv {
		return serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	if !m.mayAct(c.UID, j) {
		return serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	if err := m.updatePartition(j, d, c, cl); err != nil {
		return err
	}
	if err := m.updateReqNodes(j, d, cl, now, actions); err != nil {
		return err
	}
	if d.MinNodes != NoVal && d.MinNodes != Infinite && j.Running() && d.MinNodes > uint32(len(j.Nodes)) {
		// Growing a running job needs SchedulerParameters=permit_job_expansion.
		return serr(slurmerr.ESLURM_NOT_SUPPORTED)
	}
	if lic := strOf(d.Licenses); d.Licenses.Valid && lic != j.Licenses {
		if !j.Pending() && !priv && lic != "" {
			return serr(slurmerr.ESLURM_ACCESS_DENIED)
		}
		j.Licenses = lic
	}
	if d.ExcNodes.Valid && strOf(d.ExcNodes) != j.ExcNodes {
		en := strOf(d.ExcNodes)
		switch {
		case !j.Pending():
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		case en != "" && !knownNodes(cl, en):
			return serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		j.ExcNodes = en
	}
	if d.Comment.Valid {
		j.Comment = strOf(d.Comment)
	}
	gresSet, err := m.updateGres(j, d)
	if err != nil {
		return err
	}
	if err := m.updateCounts(j, d, cl, now, actions); err != nil {
		return err
	}
	if err := m.updateTimeLimit(j, d, priv, cl, now); err != nil {
		return err
	}
	if d.Requeue != NoVal16 {
		j.Requeue = d.Requeue != 0
	}
	if err := m.updatePriority(j, d, priv); err != nil {
		return err
	}
	if d.Nice != NoVal && d.Nice != j.Nice {
		switch {
		case j.AdminPrio && j.Priority != 0:
			// A priority set by an administrator stays; nice is ignored.
		case priv || d.Nice >= niceOff:
			if j.Priority != 0 && !j.AdminPrio {
				j.Priority = uint32(max(int64(j.Priority)+int64(j.Nice)-int64(d.Nice), 2))
			}
			j.Nice = d.Nice
		default:
			return serr(slurmerr.ESLURM_ACCESS_DENIED)
		}
	}
	if d.PnMinMemory != NoVal64 && d.PnMinMemory != j.PnMinMemory {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		mem := d.PnMinMemory
		if mem == memPerCPU {
			mem = 0 // --mem-per-cpu=0 is --mem=0
		}
		j.PnMinMemory = mem
		j.Bitflags |= jobMemSet
	}
	if d.SocketsPerNode != NoVal16 {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		j.SocketsPerNode = d.SocketsPerNode
	}
	if d.Features.Valid && strOf(d.Features) != j.Features {
		f := strOf(d.Features)
		switch {
		case !j.Pending():
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		case f != "":
			if rc := checkFeatures(normalizeFeatures(f), cl.Nodes); rc != 0 {
				return serr(rc)
			}
		}
		j.Features = f
	}
	if gresSet {
		storeGres(j, d)
	}
	if d.Name.Valid {
		j.Name = d.Name.Value
	}
	if err := updateTasksPer(j, d, priv); err != nil {
		return err
	}
	if ds := strOf(d.Dependency); d.Dependency.Valid {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		dep, ok := parseDependency(ds)
		if !ok || !m.validDependency(dep, j.ID) {
			return serr(slurmerr.ESLURM_DEPENDENCY)
		}
		j.Dependency = dep
	}
	if d.BeginTime != 0 {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		j.BeginTime = d.BeginTime
		j.EligibleTime = 0
	}
	return nil
}

func (m *Manager) updatePartition(j *Job, d *msg.JobDesc, c Caller, cl *Cluster) error {
	p := strOf(d.Partition)
	if p == "" || p == j.Partition && j.PartitionReq == "" {
		return nil
	}
	if !j.Pending() {
		return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
	}
	var names []string
	for _, name := range strings.Split(p, ",") {
		pp := cl.partition(name)
		if pp == nil {
			return serr(slurmerr.ESLURM_INVALID_PARTITION_NAME)
		}
		if rc := m.partAccess(pp, j, nil, c.UID, nil); rc == slurmerr.ESLURM_ACCESS_DENIED ||
			rc == slurmerr.ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP {
			return serr(rc)
		}
		names = append(names, name)
	}
	j.PartitionReq, j.Partitions = p, names
	return nil
}

// updateReqNodes: a pending job's required nodes must all exist; for a
// running (or suspended) job the field shrinks it to those nodes, which
// must be some of its own and keep its batch host.
func (m *Manager) updateReqNodes(j *Job, d *msg.JobDesc, cl *Cluster, now int64, actions *[]Action) error {
	if !d.ReqNodes.Valid {
		return nil
	}
	rn := strOf(d.ReqNodes)
	if j.Running() {
		if m.cfg.DisableJobShrink {
			return serr(slurmerr.ESLURM_NOT_SUPPORTED)
		}
		names, err := hostlist.Expand(rn)
		if rn == "" || err != nil || !knownNodes(cl, rn) {
			return serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		keep := map[string]bool{}
		for _, n := range names {
			if indexOf(j.Nodes, n) < 0 {
				return serr(slurmerr.ESLURM_INVALID_NODE_NAME)
			}
			keep[n] = true
		}
		if j.Batch && j.BatchHost != "" && !keep[j.BatchHost] {
			return serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		var drop []int
		for k, n := range j.Nodes {
			if !keep[n] {
				drop = append(drop, k)
			}
		}
		if len(drop) == 0 {
			// Slurm goes through the resize all the same.
			m.preResize(j, now)
			m.touch(j, now)
		}
		return m.shrink(j, drop, cl, now, actions)
	}
	if !j.Pending() {
		return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
	}
	if rn != "" && !knownNodes(cl, rn) {
		return serr(slurmerr.ESLURM_INVALID_NODE_NAME)
	}
	j.ReqNodes = rn
	return nil
}

// knownNodes is whether expr is a valid host list of configured nodes.
func knownNodes(cl *Cluster, expr string) bool {
	names, err := hostlist.Expand(expr)
	if err != nil || len(names) == 0 {
		return false
	}
	for _, n := range names {
		if cl.nodeIndex(n) < 0 {
			return false
		}
	}
	return true
}

// updateCounts changes the CPU, node and task counts of a pending job; a
// larger node count raises the CPU count to what its tasks need, as
// _update_job does before it applies the counts.
func (m *Manager) updateCounts(j *Job, d *msg.JobDesc, cl *Cluster, now int64, actions *[]Action) error {
	minCPUs := d.MinCPUs
	if d.MinNodes != NoVal && d.MinNodes != Infinite && j.Pending() {
		tasks := d.NumTasks
		if tasks == NoVal {
			tasks = j.NumTasks
		}
		if tasks == NoVal || tasks == 0 || tasks < d.MinNodes {
			tasks = d.MinNodes
		}
		cpt := uint32(or16(j.CPUsPerTask, NoVal16, 1))
		if d.CPUsPerTask != NoVal16 {
			cpt = uint32(d.CPUsPerTask)
		}
		pn := uint32(or16(j.PnMinCPUs, NoVal16, 1))
		if d.PnMinCPUs != NoVal16 {
			pn = uint32(d.PnMinCPUs)
		}
		need := max(tasks*cpt, pn*d.MinNodes)
		cur := minCPUs
		if cur == NoVal {
			cur = j.MinCPUs
		}
		if cur == NoVal {
			cur = j.MinNodes
		}
		if need > cur {
			minCPUs = need
		}
		if j.NumTasks != NoVal && j.NumTasks < d.MinNodes && d.NumTasks == NoVal {
			j.NumTasks = d.MinNodes
		}
	}
	if minCPUs != NoVal || d.MaxCPUs != NoVal {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		lo, hi := j.MinCPUs, j.MaxCPUs
		if minCPUs != NoVal {
			if minCPUs < 1 {
				return serr(slurmerr.ESLURM_INVALID_CPU_COUNT)
			}
			lo = minCPUs
		}
		if d.MaxCPUs != NoVal {
			hi = d.MaxCPUs
		}
		if hi != NoVal && hi != 0 && lo != NoVal && hi < lo {
			return serr(slurmerr.ESLURM_INVALID_CPU_COUNT)
		}
		j.MinCPUs, j.MaxCPUs = lo, hi
	}
	if d.PnMinCPUs != NoVal16 && d.PnMinCPUs != 0 {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		j.PnMinCPUs = d.PnMinCPUs
	}
	if d.CPUsPerTask != NoVal16 {
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		j.CPUsPerTask = d.CPUsPerTask
	}
	if d.MinNodes != NoVal && d.MinNodes != Infinite || d.MaxNodes != NoVal {
		if j.Running() {
			if d.MaxNodes != NoVal {
				return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
			}
			return m.shrinkTo(j, d.MinNodes, cl, now, actions)
		}
		if !j.Pending() {
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		}
		lo, hi := j.MinNodes, j.MaxNodes
		if d.MinNodes != NoVal && d.MinNodes != Infinite {
			lo = d.MinNodes
		}
		if d.MaxNodes != NoVal {
			hi = d.MaxNodes
		}
		if lo < 1 || hi != NoVal && hi != 0 && lo > hi {
			return serr(slurmerr.ESLURM_INVALID_NODE_COUNT)
		}
		j.MinNodes, j.MaxNodes = lo, hi
	}
	if d.NumTasks != NoVal {
		switch {
		case !j.Pending():
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		case d.NumTasks < 1:
			return serr(slurmerr.ESLURM_BAD_TASK_COUNT)
		}
		j.NumTasks = d.NumTasks
	}
	return nil
}

// updateTimeLimit: an administrator sets any limit; a user may lower it,
// or raise a pending job's up to its partition's MaxTime.
func (m *Manager) updateTimeLimit(j *Job, d *msg.JobDesc, priv bool, cl *Cluster, now int64) error {
	if d.TimeLimit == NoVal || d.TimeLimit == j.TimeLimit {
		return nil
	}
	partMax := uint32(0)
	if p := cl.partition(m.partitionOf(j)); p != nil {
		partMax = p.MaxTime
	}
	switch {
	case priv || j.TimeLimit > d.TimeLimit:
		if j.TimeMin != NoVal && d.TimeLimit < j.TimeMin {
			return serr(slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT)
		}
		j.TimeLimit = d.TimeLimit
		if j.Running() {
			j.EndTime = j.StartTime + m.limitSeconds(j, cl)
			if j.EndTime < now {
				j.EndTime = now
			}
		}
	case j.Pending() && partMax >= d.TimeLimit:
		j.TimeLimit = d.TimeLimit
	default:
		return serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	return nil
}

// partitionOf is the partition a job runs in, or the first it asked for.
func (m *Manager) partitionOf(j *Job) string {
	if j.Partition != "" || len(j.Partitions) == 0 {
		return j.Partition
	}
	return j.Partitions[0]
}

// updatePriority holds, releases or sets the priority as _update_job
// does: priority 0 is the hold (of a running job too), only INFINITE
// (release) changes a held job, and a user may only lower a priority.
func (m *Manager) updatePriority(j *Job, d *msg.JobDesc, priv bool) error {
	if d.Priority == NoVal {
		return nil
	}
	hold := func() {
		j.Priority = 0
		if priv && d.AllocSID != allocSIDUserHold {
			j.Hold, j.Reason = HoldAdmin, ReasonHeldAdmin
		} else {
			j.Hold, j.Reason = HoldUser, ReasonHeldUser
		}
		j.StateDesc = ""
	}
	switch {
	case j.Priority == d.Priority:
		if j.Priority == 0 && priv {
			hold() // switch between a user and an admin hold
		}
	case j.Priority == 0 && d.Priority == Infinite && (priv || j.Hold != HoldAdmin && j.Hold != HoldMaxRequeue):
		m.release(j)
	case j.Priority == 0 && d.Priority != Infinite:
		return serr(slurmerr.ESLURM_JOB_HELD)
	case priv || j.Priority > d.Priority:
		if d.Priority != 0 {
			j.Nice = niceOff
		}
		switch d.Priority {
		case Infinite:
			j.AdminPrio = false
			j.Priority = m.prio.Assign(int32(j.Nice - niceOff))
		case 0:
			hold()
		default:
			j.Priority = d.Priority
			if !priv {
				return serr(slurmerr.ESLURM_PRIO_RESET_FAIL)
			}
			j.AdminPrio = true
		}
	case j.Priority != 0 && d.Priority == Infinite:
		// Already released.
	default:
		return serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	return nil
}

// release ends a hold (_release_job_rec). A REQUEUE_HOLD state flag (set
// by failureRequeue) stays until the job starts, as in Slurm.
func (m *Manager) release(j *Job) {
	j.Hold = HoldNone
	j.State &^= msg.JobSpecialExit
	j.StateDesc = ""
	j.AdminPrio = false
	j.ExitCode = 0
	j.Priority = m.prio.Assign(int32(j.Nice - niceOff))
	j.Reason = ReasonPriority
	if j.HetJobID != 0 {
		// WAIT_NO_REASON, as _release_job_rec leaves it: only backfill
		// gives a het job its next reason.
		j.Reason = ReasonNone
	}
}

// jobResized is JOB_RESIZED (bit_flags): the job lost nodes while it had
// steps, whose node lists no longer match the job's.
const jobResized uint64 = 1 << 24

// shrinkTo is NumNodes=n for a running or suspended job (_update_job): the
// batch host stays, then the job's other nodes in node table order up to
// n; the rest are released. Growing was refused before (no
// permit_job_expansion).
func (m *Manager) shrinkTo(j *Job, n uint32, cl *Cluster, now int64, actions *[]Action) error {
	switch {
	case n == 0 || n > uint32(len(j.Nodes)):
		return serr(slurmerr.ESLURM_INVALID_NODE_COUNT)
	case n == uint32(len(j.Nodes)):
		return nil // no change in node count
	case m.cfg.DisableJobShrink:
		return serr(slurmerr.ESLURM_NOT_SUPPORTED)
	}
	kept := uint32(0)
	if j.BatchHost != "" && indexOf(j.Nodes, j.BatchHost) >= 0 {
		kept = 1
	}
	var drop []int
	for k, name := range j.Nodes {
		if kept > 0 && name == j.BatchHost {
			continue
		}
		if kept++; kept > n {
			drop = append(drop, k)
		}
	}
	if err := m.shrink(j, drop, cl, now, actions); err != nil {
		return err
	}
	j.ReqNodeCnt = n // the request's node count is the update's
	return nil
}

// shrink releases nodes drop (indexes into j.Nodes) of a running job, as
// _update_job does: REQUEST_ABORT_JOB to those nodes (for the job as it
// was, RESIZING), then for every step on one of them the node counts as
// done (exit code 9) and its tasks there get SIGKILL
// (kill_step_on_node); the nodes leave the job's allocation
// (excise_node_from_job), so the scheduler can give them to other jobs at
// once; the job's CPU count becomes that of the nodes it keeps.
func (m *Manager) shrink(j *Job, drop []int, cl *Cluster, now int64, actions *[]Action) error {
	if len(drop) == 0 {
		return nil
	}
	if actions == nil {
		// updateOne's callers (array task updates) cannot send messages.
		return serr(slurmerr.ESLURM_NOT_SUPPORTED)
	}
	m.preResize(j, now)
	gone := make([]string, len(drop))
	for i, k := range drop {
		gone[i] = j.Nodes[k]
	}
	k := m.killJob(j, cl, now)
	k.JobState |= msg.JobResizing
	k.Nodes = ns(hostlist.Compress(gone))
	*actions = append(*actions, NodeMessage{JobID: j.ID, Nodes: gone, MsgType: msgtype.REQUEST_ABORT_JOB, Msg: k})
	for _, node := range gone {
		*actions = append(*actions, m.killStepsOnNode(j, node, false)...)
	}
	j.resized(drop, now)
	m.touch(j, now)
	return nil
}

// killStepsOnNode is kill_step_on_node: every step of j on node counts
// as done there with exit code 9 (_step_partial_comp) and gets SIGKILL
// there. When the node failed, a step that did not ask to survive that
// (srun --no-kill, SSF_NO_KILL) gets it on all its nodes instead
// (signal_step_tasks), so that it ends.
func (m *Manager) killStepsOnNode(j *Job, node string, nodeFail bool) []Action {
	var actions []Action
	for _, st := range append([]*Step(nil), j.Steps...) {
		r := indexOf(st.Nodes, node)
		if r < 0 || r >= len(st.Done) || st.Done[r] {
			continue
		}
		st.Done[r] = true
		st.ExitRC = max(st.ExitRC, uint32(sigKill))
		to := []string{node}
		if nodeFail && !st.NoKill {
			to = append([]string(nil), st.Nodes...)
		}
		actions = append(actions, NodeMessage{JobID: j.ID, Nodes: to, MsgType: msgtype.REQUEST_TERMINATE_TASKS,
			Msg: &msg.SignalTasks{StepID: st.sid(j.ID), Signal: sigKill}})
		if allDone(st.Done) {
			// Real keeps it (_kill_step_on_node does not finish it)
			// until cleanup_completing counts it; its code counts
			// the same now.
			j.foldStepExit(st)
			j.removeStep(st)
		}
	}
	return actions
}

// preResize is job_pre_resize_acctg: the job as it ran up to now goes to
// the completion log as a RESIZING record, with all its nodes, and what
// it runs from now on is timed from now. Slurm sets resize_time before it
// writes that record, so the record starts and ends now.
func (m *Manager) preResize(j *Job, now int64) {
	if j.ReqCPUs == 0 {
		j.ReqCPUs = j.TotalCPUs // what it asked for stays as it was
	}
	j.ResizeTime = now
	j.State |= msg.JobResizing
	m.jobComp(j)
	j.State &^= msg.JobResizing
}

// resized is excise_node_from_job and job_post_resize_acctg for nodes
// drop (indexes into j.Nodes): the job's CPU count becomes that of the
// nodes it keeps, and steps it still has are flagged (JOB_RESIZED).
func (j *Job) resized(drop []int, now int64) {
	j.excise(drop)
	j.ResizeTime = now
	j.TotalCPUs = 0
	for _, c := range j.NodeCPUs {
		j.TotalCPUs += c
	}
	if len(j.Steps) > 0 {
		j.Bitflags |= jobResized
	}
}

// excise drops nodes drop (indexes into j.Nodes) from the job's
// allocation. The per-node slices are rebuilt, not edited in place: copies
// of them may be in use elsewhere.
func (j *Job) excise(drop []int) {
	out := map[int]bool{}
	for _, k := range drop {
		out[k] = true
	}
	var nodes []string
	var idx []int
	var cpus []uint32
	var mem []uint64
	var cores [][]uint16
	var gr [][]gres.Alloc
	for k := range j.Nodes {
		if out[k] {
			continue
		}
		nodes = append(nodes, j.Nodes[k])
		if k < len(j.NodeIdx) {
			idx = append(idx, j.NodeIdx[k])
		}
		if k < len(j.NodeCPUs) {
			cpus = append(cpus, j.NodeCPUs[k])
		}
		if k < len(j.NodeMem) {
			mem = append(mem, j.NodeMem[k])
		}
		if k < len(j.NodeCores) {
			cores = append(cores, j.NodeCores[k])
		}
		if k < len(j.NodeGres) {
			gr = append(gr, j.NodeGres[k])
		}
	}
	// A step's ranks follow its nodes to their new places; one on a node
	// gone is -1 (the step still lists the node, as real's step keeps
	// its bitmap).
	newRank := make([]int, len(j.Nodes))
	kept := 0
	for k := range j.Nodes {
		newRank[k] = -1
		if !out[k] {
			newRank[k] = kept
			kept++
		}
	}
	for _, st := range j.Steps {
		st.Gres = keptGres(st.Gres, out)
		if st.Alloc != nil {
			a := *st.Alloc
			a.Ranks = make([]int, len(st.Alloc.Ranks))
			for i, k := range st.Alloc.Ranks {
				a.Ranks[i] = -1
				if k >= 0 && k < len(newRank) {
					a.Ranks[i] = newRank[k]
				}
			}
			st.Alloc = &a
		}
	}
	j.Nodes, j.NodeIdx, j.NodeCPUs, j.NodeMem, j.NodeCores, j.NodeGres = nodes, idx, cpus, mem, cores, gr
}

func allDone(done []bool) bool {
	for _, d := range done {
		if !d {
			return false
		}
	}
	return true
}

// updateGres is _update_job's GRES check (scontrol update TresPerJob=,
// TresPerNode=, TresPerSocket=, TresPerTask=, CpusPerTres=, MemPerTres=;
// "" clears one): a pending job's requests are checked with the counts
// real passes (the stored task and node counts as its job record keeps
// them, 0 when never given; sockets per node and tasks per GPU from the
// request only), and what the check implies goes into d as if the
// update had asked for it, so the ordinary handlers (with their
// permission checks) apply it. It reports whether the strings are to be
// stored (storeGres, later in _update_job's order).
func (m *Manager) updateGres(j *Job, d *msg.JobDesc) (bool, error) {
	given := false
	for _, f := range gresFields(j, d) {
		given = given || f.in.Valid
	}
	if !given {
		return false, nil
	}
	if !j.Pending() {
		return false, serr(slurmerr.ESLURM_JOB_NOT_PENDING)
	}
	// The job record's values: real keeps 0 for a count never given.
	stored32 := func(v uint32) uint32 {
		if v == NoVal {
			return 0
		}
		return v
	}
	stored16 := func(v uint16) uint16 { return or16(v, NoVal16, 0) }
	t := *j
	t.NumTasks = pick32(d.NumTasks, stored32(j.NumTasks))
	t.MinNodes = pick32(d.MinNodes, stored32(j.MinNodes))
	t.MaxNodes = pick32(d.MaxNodes, stored32(j.MaxNodes))
	t.NTasksPerNode = pick16(d.NtasksPerNode, stored16(j.NTasksPerNode))
	origPerSocket := NoVal16
	t.NTasksPerSocket = d.NtasksPerSocket
	if t.NTasksPerSocket == NoVal16 && j.NTasksPerSocket != infinite16 && j.NTasksPerSocket != NoVal16 {
		t.NTasksPerSocket, origPerSocket = j.NTasksPerSocket, j.NTasksPerSocket
	}
	t.SocketsPerNode = d.SocketsPerNode
	t.NTasksPerTres = or16(d.NtasksPerTres, NoVal16, 0)
	t.CPUsPerTask = pick16(d.CPUsPerTask, j.CPUsPerTask)
	for _, f := range gresFields(&t, d) {
		if f.in.Valid {
			*f.cur = f.in.Value
		}
	}
	if !m.gresNamesValid(&t) ||
		memPerTresWithoutGPU(d.MemPerTres.Value, d.TresPerJob.Value, d.TresPerNode.Value, d.TresPerSocket.Value, d.TresPerTask.Value) ||
		!gresTestCounts(&t) {
		return false, serr(slurmerr.ESLURM_INVALID_GRES)
	}
	if gresTypeMixed(&t) {
		return false, serr(slurmerr.ESLURM_INVALID_GRES_TYPE)
	}
	// Unchanged counts are left to the job as real's NO_VAL marks them.
	d.NumTasks = changed32(t.NumTasks, stored32(j.NumTasks))
	d.MinNodes = changed32(t.MinNodes, stored32(j.MinNodes))
	d.MaxNodes = changed32(t.MaxNodes, stored32(j.MaxNodes))
	d.NtasksPerNode = changed16(t.NTasksPerNode, stored16(j.NTasksPerNode))
	d.NtasksPerSocket = changed16(t.NTasksPerSocket, origPerSocket)
	d.SocketsPerNode = t.SocketsPerNode
	d.CPUsPerTask = changed16(t.CPUsPerTask, j.CPUsPerTask)
	return true, nil
}

// storeGres takes the GRES strings of an update updateGres accepted.
func storeGres(j *Job, d *msg.JobDesc) {
	for i, f := range gresFields(j, d) {
		if f.in.Valid {
			*f.cur = f.in.Value
			j.TresCleared &^= 1 << i
			if f.in.Value == "" {
				j.TresCleared |= 1 << i
			}
		}
	}
}

type gresField struct {
	in  msg.NullString
	cur *string
}

// gresFields pairs an update's GRES strings with j's, in the order of
// Job.TresCleared's bits.
func gresFields(j *Job, d *msg.JobDesc) []gresField {
	return []gresField{{d.CPUsPerTres, &j.CPUsPerTres}, {d.TresPerJob, &j.TresPerJob}, {d.TresPerNode, &j.TresPerNode},
		{d.TresPerSocket, &j.TresPerSocket}, {d.TresPerTask, &j.TresPerTask}, {d.MemPerTres, &j.MemPerTres}}
}

func pick32(v, def uint32) uint32 {
	if v == NoVal {
		return def
	}
	return v
}

func pick16(v, def uint16) uint16 {
	if v == NoVal16 {
		return def
	}
	return v
}

func changed32(v, old uint32) uint32 {
	if v == old {
		return NoVal
	}
	return v
}

func changed16(v, old uint16) uint16 {
	if v == old {
		return NoVal16
	}
	return v
}

// updateTasksPer is _update_job's ntasks_per_node and ntasks_per_socket
// handlers (TasksPerNode=, or implied by a GRES update): a pending job's,
// by an operator only.
func updateTasksPer(j *Job, d *msg.JobDesc, priv bool) error {
	for _, f := range []struct {
		in  uint16
		cur *uint16
	}{{d.NtasksPerNode, &j.NTasksPerNode}, {d.NtasksPerSocket, &j.NTasksPerSocket}} {
		switch {
		case f.in == NoVal16:
		case !j.Pending():
			return serr(slurmerr.ESLURM_JOB_NOT_PENDING)
		case !priv:
			return serr(slurmerr.ESLURM_ACCESS_DENIED)
		default:
			*f.cur = f.in
		}
	}
	return nil
}

// Bits of Job.TresCleared, in updateGres' field order.
const (
	clearedCPUsPerTres = 1 << iota
	clearedTresPerJob
	clearedTresPerNode
	clearedTresPerSocket
	clearedTresPerTask
	clearedMemPerTres
)

// tresNS is a GRES request string as job info carries it: NULL when
// unset, an empty string when an update cleared it.
func tresNS(j *Job, bit uint8, s string) msg.NullString {
	if s == "" && j.TresCleared&bit != 0 {
		return msg.NullString{Valid: true}
	}
	return ns(s)
}
