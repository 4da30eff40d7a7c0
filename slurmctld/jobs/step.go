package jobs

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// StepGrant is a created step whose credential is still to be signed.
// The controller calls Sign outside its lock (a munge signer talks to
// munged) and replies RESPONSE_JOB_STEP_CREATE with the result.
type StepGrant struct {
	Body jobcred.Body
	Resp *msg.StepCreateResponse
}

// Sign signs the step credential (CTime = now) and returns the response.
func (g *StepGrant) Sign(ctx context.Context, s jobcred.Signer, now time.Time) (*msg.StepCreateResponse, error) {
	cred, err := jobcred.Create(ctx, g.Body, jobcred.Version2205, s, now)
	if err != nil {
		return nil, err
	}
	r := *g.Resp
	r.Cred = cred
	return &r, nil
}

// CreateStep handles REQUEST_JOB_STEP_CREATE: a step on the first
// min_nodes nodes of the job (or the nodes asked for), tasks laid out
// in blocks.
func (m *Manager) CreateStep(req *msg.StepCreateRequest, c Caller, cl *Cluster, now int64) (*StepGrant, Outcome, error) {
	// _slurm_rpc_job_step_create: only root may ask for a step as
	// another user, and step_create only as the job's owner (so not
	// even root in its own name, nor SlurmUser, in a user's job).
	if c.UID != 0 && c.UID != req.UserID {
		m.logf(slog.LevelError, "Security violation, JOB_STEP_CREATE RPC from uid=%d to run as uid %d", c.UID, req.UserID)
		return nil, Outcome{}, serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	j := m.jobs[req.StepID.JobID]
	if j == nil {
		return nil, Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if req.UserID != j.UserID {
		return nil, Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	if err := duplicateStep(j, req); err != nil {
		return nil, Outcome{}, err
	}
	switch {
	case j.Base() == msg.JobSuspended:
		return nil, Outcome{}, serr(slurmerr.ESLURM_DISABLED) // srun waits for the resume
	case j.Pending():
		return nil, Outcome{}, serr(slurmerr.ESLURM_JOB_PENDING)
	case j.Finished() || j.IsCompleting():
		return nil, Outcome{}, serr(slurmerr.ESLURM_ALREADY_DONE)
	case m.prologCtldRunning(j):
		return nil, Outcome{}, serr(slurmerr.ESLURM_PROLOG_RUNNING) // srun tries again
	}
	if req.NumTasks == 0 {
		return nil, Outcome{}, serr(slurmerr.ESLURM_BAD_TASK_COUNT)
	}
	if j.NextStepID >= m.cfg.MaxStepCount {
		return nil, Outcome{}, serr(slurmerr.ESLURM_STEP_LIMIT)
	}
	stepReqs := stepGresReqs(j, req)
	if err := stepGresValid(j, stepReqs, req.MinNodes); err != nil {
		return nil, Outcome{}, err
	}
	// CPUs, cores and memory the job's other steps hold are not this
	// step's: with too few left it waits (srun retries when woken).
	if j.NextStepID == 0 && !firstStepNodesUp(j, cl) {
		// _pick_step_nodes: the job's first step waits for nodes being
		// powered up (or not responding) to answer.
		j.addWaiter(req, now)
		return nil, Outcome{}, serr(slurmerr.ESLURM_NODES_BUSY)
	}
	spec := m.specOf(j, cl, req, req.NumTasks)
	use := m.use(j, cl)
	ranks, code := m.pickStepNodes(j, cl, req, spec, use)
	if code != 0 {
		if code == slurmerr.ESLURM_NODES_BUSY {
			j.addWaiter(req, now)
		}
		return nil, Outcome{}, serr(code)
	}
	stepGres, code := pickStepGres(j, stepReqs, ranks, req.Flags&ssfOverlapForce != 0)
	if code != 0 {
		if code == slurmerr.ESLURM_NODES_BUSY {
			j.addWaiter(req, now)
		}
		return nil, Outcome{}, serr(code)
	}
	// Without a task count: one a CPU asked for, else one a node.
	tasks := uint32(len(ranks))
	switch {
	case req.NumTasks != NoVal:
		tasks = req.NumTasks
	case req.CPUCount != NoVal && req.Flags&ssfOvercommit == 0:
		tasks = req.CPUCount
	}
	if tasks < uint32(len(ranks)) {
		return nil, Outcome{}, serr(slurmerr.ESLURM_BAD_TASK_COUNT)
	}
	if j.NextStepID >= msg.StepIDMaxNormal {
		// _create_step_record keeps the ids above for special steps.
		m.logf(slog.LevelInfo, "JobId=%d has reached step id limit", j.ID)
		return nil, Outcome{}, serr(slurmerr.ESLURMD_TOOMANYSTEPS)
	}
	id := m.newStepID(j, req, now)
	st := &Step{ID: id, Name: strOf(req.Name), Tasks: tasks, TimeLimit: req.TimeLimit,
		StartTime: now, Host: strOf(req.Host), Port: req.Port, SrunPID: req.SrunPID, TaskDist: req.TaskDist, Gres: stepGres,
		NoKill: req.Flags&ssfNoKill != 0}
	if req.StepID.StepHetComp != NoVal {
		st.HetStep, st.HetComp = true, req.StepID.StepHetComp
	}
	if stepLimited(req.TimeLimit) && m.cfg.EnforcePartLimits != EnforceNo {
		// step_create checks this after the step got its id: the id is
		// used up.
		if p := cl.partition(j.Partition); p != nil && req.TimeLimit > p.MaxTime {
			m.touch(j, now) // the next step id is journaled with the next record
			return nil, Outcome{}, serr(slurmerr.ESLURM_INVALID_TIME_LIMIT)
		}
	}
	var stepMem []uint64
	for _, k := range ranks {
		st.Nodes = append(st.Nodes, j.Nodes[k])
		st.NodeIdx = append(st.NodeIdx, j.NodeIdx[k])
		stepMem = append(stepMem, j.NodeMem[k])
	}
	st.Done = make([]bool, len(ranks))
	j.Steps = append(j.Steps, st)
	m.touch(j, now)

	// Block layout: the first tasks%nodes nodes get one task more.
	dist := req.TaskDist
	if dist == NoVal || dist&distStateBase == distUnknown {
		dist = distBlock // srun's default ("unknown") is laid out as block
	}
	st.TaskDist = dist
	layout := &msg.StepLayout{NodeList: ns(hostlist.Compress(st.Nodes)), StartProtocolVer: protoOr(j.ProtocolVersion),
		TaskCnt: tasks, TaskDist: dist}
	counts := m.blockCounts(j, cl, req, spec, use, ranks, tasks)
	next := uint32(0)
	for k := range ranks {
		cnt := tasks / uint32(len(ranks))
		if uint32(k) < tasks%uint32(len(ranks)) {
			cnt++
		}
		if counts != nil {
			cnt = counts[k]
		}
		ids := make([]uint32, cnt)
		for i := range ids {
			ids[i] = next
			next++
		}
		layout.TIDs = append(layout.TIDs, ids)
	}

	perNode := make([]uint32, len(ranks))
	for k, ids := range layout.TIDs {
		perNode[k] = uint32(len(ids))
	}
	st.Alloc = m.allocStep(j, cl, req, spec, use, ranks, perNode)
	for _, c := range st.Alloc.CPUs {
		st.CPUs += c
	}
	if cl.Config.MemoryConsumable {
		stepMem = st.Alloc.Mem
	}

	body := m.credBody(j, cl, now)
	body.StepID = jobcred.StepID{JobID: j.ID, StepID: st.ID, StepHetComp: st.hetComp()}
	body.StepHostlist = cns(layout.NodeList.Value)
	body.StepCoreBitmap = m.stepCoreBitmap(j, cl, st.Alloc)
	body.JobMem = memGroups(j.NodeMem)
	body.StepMem = memGroups(stepMem)
	body.StepGres = m.stepGresRecs(j, st, cl)
	resp := &msg.StepCreateResponse{JobStepID: st.ID, Layout: layout, SelectJobinfo: m.cfg.Select,
		SwitchJobinfo: msg.SwitchNone, UseProtocolVer: protoOr(j.ProtocolVersion)}
	if j.CPUBindType != NoVal16 {
		resp.DefCPUBindType = uint32(j.CPUBindType)
	}
	var actions []Action
	if prologRunning(j) && j.Running() {
		// The first step finds the nodes up before the tick does
		// (PowerUpReady): it ends the configuration itself.
		actions = m.stepConfigFini(j, cl, now)
	}
	out, err := m.finish(actions)
	if err != nil {
		return nil, out, err
	}
	return &StepGrant{Body: body, Resp: resp}, out, nil
}

// firstStepNodesUp is _pick_step_nodes' test for a job's first step:
// none of its nodes is powered down, powering up, FUTURE or not
// responding.
func firstStepNodesUp(j *Job, cl *Cluster) bool {
	for _, i := range j.NodeIdx {
		if nodeState(cl, i)&(sched.NodePoweredDown|sched.NodeFuture|sched.NodeNoRespond) != 0 {
			return false
		}
	}
	return true
}

// stepConfigFini is job_config_fini called from _pick_step_nodes: the
// job leaves CONFIGURING (a powered-up one gets its start time reset and
// its CLOUD addresses) and the PrologFlags=Alloc prolog is sent; unlike
// job_time_limit's, no batch script is launched here.
func (m *Manager) stepConfigFini(j *Job, cl *Cluster, now int64) []Action {
	m.logf(slog.LevelInfo, "_pick_step_nodes: Configuration for %s is complete", jobIDString(j))
	j.State &^= msg.JobConfiguring
	if j.State&msg.JobPowerUpNode != 0 {
		m.powerUpFini(j, cl, now)
	} else {
		if delta := now - j.StartTime; delta != 0 && m.timeLimit(j, cl) != Infinite {
			j.EndTime = now + m.limitSeconds(j, cl)
		}
		m.refreshAlias(j, cl, now)
		m.touch(j, now)
	}
	return m.launchProlog(j, cl, now)
}

// Task distributions (task_dist_states).
const (
	distBlock     uint32 = 0x0002
	distUnknown   uint32 = 0x2000
	distStateBase uint32 = 0xffff
)

// ssfOvercommit is SSF_OVERCOMMIT: the step may have more tasks than CPUs.
const ssfOvercommit uint32 = 1 << 2

// blockCounts is how many tasks of a block-distributed step each of its
// nodes gets, as step_layout_create and _task_layout_block count them:
// each node offers its job CPUs not held by the job's other steps
// (unless --overlap) and not short of memory (--mem-per-cpu) over the
// step's CPUs per task (at least one), and the tasks go round the nodes
// while a node has room, then round all nodes. Under CR_CPU -n 5 on
// 4+1 CPUs runs 4+1 tasks, where an even split would give 3+2; -n5 on
// 2+2+2 CPUs with one CPU of the first node held runs 1+2+2. nil for
// other distributions.
func (m *Manager) blockCounts(j *Job, cl *Cluster, req *msg.StepCreateRequest, s stepSpec, u jobUse, ranks []int, tasks uint32) []uint32 {
	if req.TaskDist != NoVal && req.TaskDist&distStateBase != distBlock && req.TaskDist&distStateBase != distUnknown {
		return nil
	}
	if len(ranks) == 0 {
		return nil // no node to place on (the loop below would not end)
	}
	cpt := uint32(1)
	if req.CPUCount != NoVal && req.CPUCount > 0 && tasks > 0 && req.CPUCount%tasks == 0 {
		cpt = max(req.CPUCount/tasks, 1)
		// _calc_cpus_per_task: one CPU a task unless the job's nodes hold
		// every task with that many.
		fit := uint32(0)
		for _, c := range j.NodeCPUs {
			if c < cpt {
				fit = 0
				break
			}
			fit += c / cpt
		}
		if fit < tasks {
			cpt = 1
		}
	}
	room := make([]uint32, len(ranks))
	for i, k := range ranks {
		if k >= len(j.NodeCPUs) {
			return nil
		}
		cpus, used := j.NodeCPUs[k], uint32(0)
		if !s.overlap && k < len(u.cpus) {
			used = u.cpus[k]
		}
		if req.ThreadsPerCore == 1 && k < len(j.NodeIdx) && j.NodeIdx[k] >= 0 && j.NodeIdx[k] < len(cl.Nodes) {
			// One thread a core (_use_one_thread_per_core).
			tpc := uint32(max(cl.Nodes[j.NodeIdx[k]].ThreadsPerCore, 1))
			cpus, used = cpus/tpc, used/tpc
		}
		cpus -= min(used, cpus)
		if s.memResv && s.mem&memPerCPU != 0 && k < len(j.NodeMem) {
			free := j.NodeMem[k]
			if k < len(u.mem) {
				free -= min(u.mem[k], free)
			}
			cpus = min(cpus, uint32(free/max(s.mem&^memPerCPU, 1)))
		}
		room[i] = max(cpus/cpt, 1)
	}
	counts := make([]uint32, len(ranks))
	over := false
	for round, placed := uint32(0), uint32(0); placed < tasks; round++ {
		more := false
		for i := range ranks {
			if placed == tasks {
				break
			}
			if round < room[i] || over {
				counts[i]++
				placed++
				more = more || round+1 < room[i]
			}
		}
		over = over || !more
	}
	return counts
}

func protoOr(v uint16) uint16 {
	if v == 0 {
		return jobcred.Version2205
	}
	return v
}

// reported says whether a node of the step reported its end: until one
// does, the step has no exit code (NO_VAL).
func (s *Step) reported() bool {
	return slices.Contains(s.Done, true)
}

// foldStepExit is _internal_step_complete's part for a step that goes:
// the derived exit code is the highest of the job's srun steps (an OOM
// kill wins), over all its runs (a requeue keeps it). A step that never
// reported counts as NO_VAL, which is higher than any exit status.
func (j *Job) foldStepExit(st *Step) {
	if st.ID == msg.StepIDBatch || st.ID == msg.StepIDExtern {
		return
	}
	rc := st.ExitRC
	if !st.reported() && !st.OOMKill {
		rc = NoVal
	}
	if rc == sigOOM || rc > j.DerivedEC {
		j.DerivedEC = rc
	}
}

// deleteSteps is cleanup_completing's delete_step_records: the steps still
// recorded once the job's nodes are clean never reported their end on
// every node (a node failed, or the job ended under them); each counts
// in the derived exit code with what it has.
func (j *Job) deleteSteps() {
	for _, st := range j.Steps {
		j.foldStepExit(st)
	}
	j.Steps = nil
}

func indexOf(l []string, s string) int {
	for i, v := range l {
		if v == s {
			return i
		}
	}
	return -1
}

func (j *Job) step(id uint32) (int, *Step) {
	for i, s := range j.Steps {
		if s.ID == id {
			return i, s
		}
	}
	return -1, nil
}

// StepComplete handles REQUEST_STEP_COMPLETE: node ranks RangeFirst..
// RangeLast of the step are done; the step goes when all are.
func (m *Manager) StepComplete(req *msg.StepComplete, c Caller, now int64) (Outcome, error) {
	j := m.jobs[req.StepID.JobID]
	if j == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if j.State == msg.JobPending {
		// A requeued job still completing (PENDING|COMPLETING) takes
		// its killed steps' ends; a plain pending one has no step.
		return Outcome{}, serr(slurmerr.ESLURM_JOB_PENDING)
	}
	if !m.mayAct(c.UID, j) {
		return Outcome{}, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	i, st := j.stepOf(req.StepID)
	if st == nil {
		return Outcome{}, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if req.RangeFirst > req.RangeLast || int(req.RangeLast) >= len(st.Done) {
		return Outcome{}, serr(int(22)) // EINVAL
	}
	// The step's code is the first report's, then the highest, an OOM
	// kill winning (_step_partial_comp).
	if !st.reported() || req.StepRC == sigOOM || req.StepRC > st.ExitRC {
		st.ExitRC = req.StepRC
	}
	for r := req.RangeFirst; r <= req.RangeLast; r++ {
		st.Done[r] = true
	}
	all := true
	for _, d := range st.Done {
		all = all && d
	}
	var wake []Action
	if all {
		j.foldStepExit(st)
		// Its CPUs, cores and memory are free again: waiting sruns try
		// again.
		j.Steps = append(j.Steps[:i], j.Steps[i+1:]...)
		wake = m.wakeWaiters(j, now)
	}
	m.touch(j, now)
	return m.finish(wake)
}

// signalStep signals one step's tasks on its nodes (scancel ID.STEP), as
// job_step_signal: REQUEST_SIGNAL_TASKS with the signal unchanged, SIGKILL
// included (REQUEST_TERMINATE_TASKS is kept for steps lost on a failed or
// rebooted node). A SIGKILL also tells the step's srun that the step is
// complete (srun_step_complete), so srun does not wait on tasks that the
// node will no longer report. Slurm records the killer's uid on the step
// for accounting only; goslurm keeps no accounting records of steps.
// KILL_OOM (slurmd's cancel over the job's memory limit) sets the
// step's exit code to SIG_OOM.
func (m *Manager) signalStep(j *Job, key msg.StepID, sig, flags uint16) ([]Action, error) {
	if j.Finished() {
		return nil, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	if j.Base() != msg.JobRunning {
		// Pending and suspended jobs alike: their steps cannot be signalled.
		return nil, serr(slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE)
	}
	key.JobID = j.ID
	var out []Action
	found := false
	for _, st := range j.Steps {
		if !st.matches(key) {
			continue
		}
		found = true
		if flags&msg.KillOOM != 0 {
			st.ExitRC, st.OOMKill = sigOOM, true
			// Journaled for a restart; real changes no update time.
			m.pending = append(m.pending, record{kind: recUpdate, job: j})
		}
		id := st.sid(j.ID)
		if sig == sigKill && st.Host != "" && st.Port != 0 {
			out = append(out, SrunMessage{JobID: j.ID, Host: st.Host, Port: st.Port, UID: j.UserID,
				ProtocolVersion: protoOr(j.ProtocolVersion), MsgType: msgtype.SRUN_JOB_COMPLETE,
				Msg: &msg.SrunJobCompleteMsg{StepID: id}})
		}
		out = append(out, NodeMessage{JobID: j.ID, Nodes: append([]string(nil), st.Nodes...), MsgType: msgtype.REQUEST_SIGNAL_TASKS,
			Msg: &msg.SignalTasks{StepID: id, Signal: sig}})
		if !st.HetStep {
			break // job_step_signal stops at the first step that is no het step component
		}
	}
	if !found {
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	return out, nil
}
