package jobs

import (
	"slices"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// register gives a validated job its id, priority and first reason and
// puts it in the table.
func (m *Manager) register(j *Job, now int64) error {
	id, ok := m.allocID()
	if !ok {
		return serr(slurmerr.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY)
	}
	j.ID = id
	if j.Array != nil {
		j.ArrayJobID = id
	}
	switch {
	case j.Hold == HoldUser:
		j.Priority, j.Reason = 0, ReasonHeldUser
	case j.Hold == HoldAdmin:
		j.Priority, j.Reason = 0, ReasonHeldAdmin
	case !j.AdminPrio:
		j.Priority = m.prio.Assign(int32(j.Nice - niceOff))
	}
	if j.Hold != HoldNone || j.Dependency != nil {
		j.Bitflags |= jobDependent
	} else if j.BeginTime <= now && j.Reason != ReasonWaitResv {
		j.EligibleTime = now
	}
	if j.Reason == ReasonNone {
		j.Reason = ReasonPriority
		if j.BeginTime > now {
			j.Reason = ReasonBeginTime
		} else if j.Dependency != nil {
			j.Reason = ReasonDependency
		}
	}
	j.LastEval = now
	m.insert(j)
	m.countSubmit(j)
	m.lastUpdate = now
	m.pending = append(m.pending, record{kind: recSubmit, job: j})
	return nil
}

// Submit handles REQUEST_SUBMIT_BATCH_JOB. The reply is sent after
// Outcome.Wait. The job starts at the next Schedule call (the controller
// runs one right after a submit, as job_allocate tries at once).
func (m *Manager) Submit(d *msg.JobDesc, c Caller, cl *Cluster, now int64) (*msg.SubmitResponse, Outcome, error) {
	j, err := m.build(d, c, cl, kindBatch, now)
	if err != nil {
		return m.refused(err)
	}
	if err := m.register(j, now); err != nil {
		return nil, Outcome{}, err
	}
	m.submitLicenseReason(j, cl)
	out, err := m.finish(nil)
	if err != nil {
		return nil, out, err
	}
	return &msg.SubmitResponse{JobID: j.ID, StepID: msg.StepIDBatch}, out, nil
}

// Allocate handles REQUEST_RESOURCE_ALLOCATION (salloc, srun outside an
// allocation): the job is created and a scheduling pass runs at once. The
// reply is the allocation (NodeCnt 0 while pending: the grant is pushed to
// alloc_resp_port later, as a SrunMessage action of a later Schedule). With
// --immediate a job that cannot start now fails.
func (m *Manager) Allocate(d *msg.JobDesc, c Caller, cl *Cluster, now int64) (*msg.Allocation, Outcome, error) {
	j, err := m.build(d, c, cl, kindAlloc, now)
	if err != nil {
		_, out, err := m.refused(err)
		return nil, out, err
	}
	queuedRC := queuedCode(j)
	if err := m.register(j, now); err != nil {
		return nil, Outcome{}, err
	}
	m.submitLicenseReason(j, cl)
	if d.Immediate != 0 {
		var acts []Action
		if rc := m.immediateRefusal(j, cl, now, &acts); rc != 0 {
			// job_allocate fails the job before it looks for nodes.
			m.failImmediate(j, now, &acts)
			out, err := m.finish(acts)
			if err != nil {
				return nil, out, err
			}
			return nil, out, serr(rc)
		}
	}
	actions := m.schedule(cl, now, false)
	// The grant of this job travels in the reply, not as a push.
	kept := actions[:0]
	for _, a := range actions {
		if s, ok := a.(SrunMessage); ok && s.JobID == j.ID && s.MsgType == msgtype.RESPONSE_RESOURCE_ALLOCATION {
			continue
		}
		kept = append(kept, a)
	}
	var rcErr error
	if d.Immediate != 0 && !j.Running() {
		rcErr = serr(slurmerr.ESLURM_CAN_NOT_START_IMMEDIATELY)
		if j.Reason == ReasonResources || j.Reason == ReasonPriority {
			rcErr = serr(slurmerr.ESLURM_NODES_BUSY)
		}
		m.failImmediate(j, now, &kept)
	}
	out, err := m.finish(kept)
	if err != nil {
		return nil, out, err
	}
	if rcErr != nil {
		return nil, out, rcErr
	}
	a := m.allocation(j)
	if !j.Running() {
		// The reply of a queued job carries what job_allocate returned
		// for it; srun and salloc print it before they wait.
		a.ErrorCode = uint32(queuedRC)
	}
	return a, out, nil
}

// refused closes a refused submission: a record build kept (FAILED,
// keepRefused) is journaled before the error goes back.
func (m *Manager) refused(err error) (*msg.SubmitResponse, Outcome, error) {
	out, ferr := m.finish(nil)
	if ferr != nil {
		return nil, out, ferr
	}
	return nil, out, err
}

// failImmediate ends an --immediate job that cannot start now, as
// job_allocate: FAILED, exit code 1, reason BadConstraints, started and
// ended now, then job_completion_logger (FAIL mail, the jobcomp record,
// SRUN_JOB_COMPLETE to the srun or salloc).
func (m *Manager) failImmediate(j *Job, now int64, actions *[]Action) {
	j.setBase(msg.JobFailed)
	j.Reason = uint16(sched.ReasonBadConstraints)
	j.StateDesc = ""
	j.StartTime, j.EndTime, j.ExitCode = now, now, 1
	m.touch(j, now)
	m.ended(j, false, false, now)
	if j.OtherPort != 0 {
		*actions = append(*actions, srunJobComplete(j))
	}
}

// immediateRefusal is job_allocate's test of an --immediate job before
// it looks for nodes (0: go on): ESLURM_DEPENDENCY when the job may not
// run yet (held, dependency, --begin, reservation not active, licenses
// not free), ESLURM_NOT_TOP_PRIORITY when another pending job that
// could run comes first. Not done: ESLURM_FRAGMENTATION (a job completing
// within CompleteWait) and ESLURM_DEFER (SchedulerParameters=defer); the
// manager's Config carries neither setting.
func (m *Manager) immediateRefusal(j *Job, cl *Cluster, now int64, actions *[]Action) int {
	if !m.independent(j, cl, now, actions) ||
		j.Licenses != "" && m.clusterLicenses(cl, true).Test(j) != LicensesFree {
		return slurmerr.ESLURM_DEPENDENCY
	}
	if !m.topPriority(j, cl, now) {
		return slurmerr.ESLURM_NOT_TOP_PRIORITY
	}
	return 0
}

// topPriority is _top_priority: no other pending job that could run now
// comes before j (outranks). The answer does not depend on the order the
// jobs are looked at, so the cheap tests come first: a job that does not
// outrank j is dismissed before its dependencies and array throttle are
// evaluated (couldRun), and the throttle's running counts are taken once
// for all arrays (arrayGate) rather than by a scan of the table per array. An
// --immediate job that ranks first then costs one pass over the table.
func (m *Manager) topPriority(j *Job, cl *Cluster, now int64) bool {
	if j.Priority == 0 {
		return false
	}
	gate := m.newArrayGate()
	for _, o := range m.jobs {
		if o == j || !o.Pending() || o.IsCompleting() || !runnableReason(o.Reason) || !outranks(o, j, cl) {
			continue
		}
		if m.couldRun(o, now, gate) {
			return false
		}
	}
	return true
}

// outranks is _top_priority's comparison of another pending job o with
// j. Two jobs outside reservations (or in the same one) are compared by
// priority alone, whatever their partitions; a job in a reservation is
// not compared with one outside; jobs in two different reservations are
// compared within a partition by priority and across overlapping
// partitions by PriorityTier, then priority.
func outranks(o, j *Job, cl *Cluster) bool {
	switch {
	case o.Reservation == j.Reservation:
		return o.Priority > j.Priority
	case o.Reservation == "" || j.Reservation == "":
		return false
	}
	pj, po := cl.partition(firstPart(j)), cl.partition(firstPart(o))
	switch {
	case pj == nil || po == nil:
		return false
	case pj == po:
		return o.Priority > j.Priority
	case !overlap(pj.Nodes, po.Nodes):
		return false
	}
	return po.PriorityTier > pj.PriorityTier || po.PriorityTier == pj.PriorityTier && o.Priority > j.Priority
}

// runnableReason: a pending job with one of these reasons waits for a
// limit, a partition or an administrator, not for resources
// (acct_policy_job_runnable_state, misc_policy_job_runnable_state,
// part_policy_job_runnable_state, and the reasons job_independent stops
// at).
func runnableReason(r uint16) bool {
	switch {
	case r >= 40 && r <= 70, // WAIT_QOS_GRP_CPU .. WAIT_ASSOC_MAX_SUB_JOB
		r >= 4 && r <= 7,   // WAIT_PART_NODE_LIMIT .. WAIT_PART_INACTIVE
		r >= 11 && r <= 13, // WAIT_ASSOC_JOB_LIMIT .. WAIT_ASSOC_TIME_LIMIT
		r >= 27 && r <= 30, // FAIL_ACCOUNT, FAIL_QOS, WAIT_QOS_THRES, WAIT_QOS_JOB_LIMIT
		r == 32,            // WAIT_QOS_TIME_LIMIT
		r == 15,            // WAIT_NODE_NOT_AVAIL
		r == 75,            // FAIL_BURST_BUFFER_OP
		r == 198,           // WAIT_RESV_DELETED
		r == ReasonHeldAdmin, r == ReasonHeldUser, r == ReasonMaxRequeue, r == ReasonDepInvalid:
		return false
	}
	return true
}

// couldRun is job_independent for another pending job, without changing
// it: not held, its dependency satisfied, past its --begin, its array
// under its throttle (gate: the arrays' running counts, taken once).
func (m *Manager) couldRun(o *Job, now int64, gate *arrayGate) bool {
	if o.Hold != HoldNone || o.BeginTime > now {
		return false
	}
	if o.Dependency != nil {
		c := *o
		d := *o.Dependency
		d.Items = slices.Clone(d.Items)
		c.Dependency = &d
		if wait, failed := m.evalDependency(&c, now); wait || failed {
			return false
		}
	}
	// Every record of a throttled array waits on the throttle: its meta
	// record, tasks split off it while pending, and the meta record
	// turned into its last pending task.
	return !gate.throttled(o)
}

func firstPart(j *Job) string {
	if j.Partition != "" {
		return j.Partition
	}
	if len(j.Partitions) > 0 {
		return j.Partitions[0]
	}
	return ""
}

func overlap(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// queuedCode is the code job_allocate returns for an allocation it
// queues, from the reason the submission checks gave (0 for none):
// _select_nodes_parts' error when no partition could take the job as
// configured or is up, ESLURM_JOB_HELD for a held job. Busy resources
// give 0, as job_allocate clears ESLURM_NODES_BUSY.
func queuedCode(j *Job) int {
	switch {
	case j.Hold != HoldNone:
		return slurmerr.ESLURM_JOB_HELD
	case j.Reason == uint16(sched.ReasonPartConfig):
		return slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
	case j.Reason == uint16(sched.ReasonPartDown):
		return slurmerr.ESLURM_PARTITION_DOWN
	}
	return 0
}

// WillRun handles REQUEST_JOB_WILL_RUN (sbatch/srun --test-only): when and
// where the job would start, without creating it.
func (m *Manager) WillRun(d *msg.JobDesc, c Caller, cl *Cluster, now int64) (*msg.WillRunResponse, error) {
	j, err := m.build(d, c, cl, kindWillRun, now)
	if err != nil {
		return nil, err
	}
	snap, _, _ := m.snapshot(cl, now, true)
	const probe = synthBase - 1
	sj := m.schedJob(j, cl)
	sj.JobID = probe
	sj.Priority = Infinite // as if first in line, as job_start_data does
	snap.Pending = []sched.Job{sj}
	snap.Config.Backfill = true
	plan := sched.Schedule(snap)
	resp := &msg.WillRunResponse{JobID: m.nextID}
	for _, st := range plan.Starts {
		if st.JobID != probe {
			continue
		}
		var names []string
		for _, na := range st.Alloc.Nodes {
			names = append(names, cl.Nodes[na.Node].Name)
			resp.ProcCnt += na.CPUs
		}
		j.Nodes = names
		resp.NodeList, resp.PartName, resp.StartTime = ns(j.nodeList()), ns(st.Partition), now
		return resp, nil
	}
	for _, p := range plan.Pending {
		if p.JobID == probe && p.StartTime != 0 {
			resp.StartTime, resp.PartName = p.StartTime, ns(p.Partition)
			return resp, nil
		}
	}
	return nil, serr(slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
}

// Ready bits of RESPONSE_JOB_READY.
const (
	ReadyNodeState   = 0x01
	ReadyJobState    = 0x02
	ReadyPrologState = 0x04
)

// JobReady handles REQUEST_JOB_READY (srun/salloc polling, job_node_ready):
// the job runs, its PrologSlurmctld is not running (a job CONFIGURING
// only while its nodes power up is prolog-ready), and its nodes are up
// (select_p_job_ready: none powered down or still powering up). A ready
// job whose CLOUD node addresses were not known yet gets them now.
func (m *Manager) JobReady(id uint32, cl *Cluster, now int64) (uint32, Outcome, error) {
	j := m.jobs[id]
	if j == nil {
		return 0, Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	rc := uint32(ReadyPrologState)
	if m.prologCtldRunning(j) {
		rc = 0
	}
	if j.Running() {
		rc |= ReadyNodeState | ReadyJobState
		for _, i := range j.NodeIdx {
			if nodeState(cl, i)&sched.NodePoweredDown != 0 {
				rc &^= ReadyNodeState
				break
			}
		}
	}
	if rc == ReadyNodeState|ReadyJobState|ReadyPrologState {
		m.refreshAlias(j, cl, now)
	}
	out, err := m.finish(nil)
	return rc, out, err
}

// RefreshAlias is job_alloc_info's refresh of a "TBD" alias list: once
// the job's nodes are up and its PrologSlurmctld is done, the CLOUD
// nodes' addresses go in.
func (m *Manager) RefreshAlias(id uint32, cl *Cluster, now int64) (Outcome, error) {
	if j := m.jobs[id]; j != nil && !j.Pending() && !j.Finished() && !m.prologCtldRunning(j) {
		m.refreshAlias(j, cl, now)
	}
	return m.finish(nil)
}

func (m *Manager) refreshAlias(j *Job, cl *Cluster, now int64) {
	if j.AliasList == "TBD" && cl != nil && nodesReady(j, cl) {
		j.AliasList = aliasList(j, cl)
		m.touch(j, now)
	}
}
