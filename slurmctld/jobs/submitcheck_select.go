package jobs

import (
	"slices"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"

	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Whether a new job could ever run, as _select_nodes_parts decides at
// submission: job_limits_check against each partition, then (when the
// limits pass) the configuration part of select_nodes: account lists,
// holds, nodes whose CPUs, memory and socket layout fit, required nodes
// among those, node counts. Whether nodes are free now is the
// scheduler's business, as are feature counts.

// limitsCheck is job_limits_check: the reason p makes the job wait, or
// ReasonNone.
func (m *Manager) limitsCheck(cl *Cluster, p *sched.Partition, j *Job) sched.Reason {
	a := accessReq{userID: j.UserID, minCPUs: j.MinCPUs, minNodes: j.MinNodes, maxNodes: j.MaxNodes,
		timeLimit: j.TimeLimit, acct: j.Account, allocNode: j.AllocNode}
	if a.maxNodes == 0 {
		a.maxNodes = NoVal
	}
	if a.minCPUs == NoVal {
		a.minCPUs = a.minNodes
	}
	switch rc := m.partAccessCheck(cl, p, a, j.UserID, nil, j.GroupID); rc {
	case 0:
	case slurmerr.ESLURM_INVALID_TIME_LIMIT, slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT:
		return sched.ReasonPartTimeLimit
	case slurmerr.ESLURM_INVALID_NODE_COUNT:
		return sched.ReasonPartNodeLimit
	default:
		return sched.ReasonPartConfig
	}
	switch p.State {
	case sched.PartDown:
		return sched.ReasonPartDown
	case sched.PartInactive:
		return sched.ReasonPartInactive
	}
	return sched.ReasonNone
}

// selectTest is the part of select_nodes that needs no free resources:
// 0 when the job could run in p, else the code and the message for the
// user (kept across partitions as slurmctld keeps its err_msg).
func (m *Manager) selectTest(cl *Cluster, p *sched.Partition, j *Job, reqIdx, excIdx []int, userMsg *string) int {
	if desc, rc := acctPolicy(p, ""); rc != 0 {
		// part_policy_valid_acct gives the job its reason and text.
		j.Reason, j.StateDesc = uint16(sched.ReasonAccount), desc
		return slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
	}
	if j.Hold != HoldNone {
		return slurmerr.ESLURM_JOB_HELD
	}
	pnCPUs := uint32(j.PnMinCPUs)
	if j.PnMinCPUs == NoVal16 || j.PnMinCPUs == 0 {
		pnCPUs = 1
	}
	mem := uint64(0)
	if j.PnMinMemory != NoVal64 {
		mem = j.PnMinMemory &^ memPerCPU
	}
	// A node is usable when in p, not excluded and big enough; the
	// message is the last refusal's, as slurmctld's err_msg per node
	// configuration.
	fits := func(i int) string {
		n := &cl.Nodes[i]
		switch {
		case pnCPUs > uint32(n.CPUs):
			return "CPU count per node can not be satisfied"
		case mem > n.RealMemory:
			return "Memory specification can not be satisfied"
		case !fits16(j.SocketsPerNode, n.Sockets) || !fits16(j.CoresPerSocket, n.CoresPerSocket) ||
			!fits16(j.ThreadsPerCore, n.ThreadsPerCore):
			return "Socket, core and/or thread specification can not be satisfied"
		}
		return ""
	}
	var usable []int
	gres := schedGres(j)
	for _, i := range p.Nodes {
		if slices.Contains(excIdx, i) || !gresFits(&cl.Nodes[i], gres) {
			continue
		}
		if why := fits(i); why != "" {
			*userMsg = why
		} else {
			usable = append(usable, i)
		}
	}
	if len(usable) == 0 {
		return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
	}
	if len(reqIdx) > 0 {
		// Excluded and required nodes never overlap (overlapCheck).
		if !subset(reqIdx, p.Nodes) {
			return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		}
		for _, i := range reqIdx {
			if fits(i) != "" || !gresFits(&cl.Nodes[i], gres) {
				return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
			}
		}
	}
	// get_node_cnts
	minN := max(j.MinNodes, p.MinNodes)
	maxN := p.MaxNodes
	if j.MaxNodes != 0 && j.MaxNodes != NoVal {
		maxN = min(j.MaxNodes, p.MaxNodes)
		if uint32(len(reqIdx)) > j.MaxNodes {
			return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		}
	}
	if maxN < minN || minN > uint32(len(p.Nodes)) {
		// select_nodes takes this for too many nodes asked and says so
		// in the job's reason, which stays when another partition of
		// the job passes.
		j.Reason, j.StateDesc = uint16(sched.ReasonPartNodeLimit), ""
		return slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
	}
	// Fewer usable nodes than the job needs, or too few CPUs on as many
	// of them as it may have: it could never run here.
	if uint32(len(usable)) < minN || !cpusFit(cl, j, usable, maxN) {
		return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
	}
	if j.Bitflags&gresEnforceBind != 0 {
		// Which cores the GPUs are bound to, as registered now.
		m.gresBound(cl)
	}
	if testOnlyNeeded(cl, j, usable) && !cl.empty.FitsEmpty(&sched.Snapshot{Config: cl.Config, Nodes: cl.Nodes,
		Partitions: cl.Partitions}, ptr(m.schedJob(j, cl)), p.Name) {
		return slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
	}
	return 0
}

func ptr[T any](v T) *T { return &v }

// testOnlyNeeded reports whether the checks above may have missed that
// no node could ever hold the job, so that cons_tres' test-only pass (the
// scheduler's own test) has to decide: a usable node has specialized
// cores, or memory is consumable and a node keeps some for the system
// (MemSpecLimit) or the job's --mem-per-cpu times the node's CPUs is more
// than its memory (the CPUs the memory covers are what count then; an
// --exclusive job needs the memory of all of them). Otherwise the test
// is skipped to keep submission cheap. A job with --gpus is always
// tested, and one with --gres-flags=enforce-binding where GRES are bound
// to cores (it may need more cores than its GRES' sockets have).
func testOnlyNeeded(cl *Cluster, j *Job, usable []int) bool {
	if _, n, _ := jobGPUs(j); n > 0 {
		// GPUs over the job: whether nodes enough hold them.
		return true
	}
	enforce := j.Bitflags&gresEnforceBind != 0
	consumable := cl.Config.MemoryConsumable
	perCPU := consumable && j.PnMinMemory != NoVal64 && j.PnMinMemory&memPerCPU != 0
	mem := j.PnMinMemory &^ memPerCPU
	for _, i := range usable {
		n := &cl.Nodes[i]
		if len(n.SpecCores) > 0 || consumable && n.MemSpec > 0 || enforce && len(n.GresBind) > 0 ||
			perCPU && mem*uint64(n.CPUs) > n.RealMemory {
			return true
		}
	}
	return false
}

// fits16: an unset (NO_VAL16) per-node request fits any node.
func fits16(want, have uint16) bool { return want == NoVal16 || want <= have }

// queueable reports whether a code from trySelect means "queue the job"
// (true) rather than "refuse it".
func queueable(rc int) bool {
	switch rc {
	case 0, slurmerr.ESLURM_NODES_BUSY, slurmerr.ESLURM_JOB_HELD, slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE,
		slurmerr.ESLURM_PARTITION_DOWN:
		return true
	}
	return false
}

// trySelect is _select_nodes_parts at submission: the outcome over the
// job's partitions (tried by PriorityTier, highest first). A refusal
// (per job_allocate) is returned as an error; a queued job gets the
// first reason slurmctld gives it.
func (m *Manager) trySelect(cl *Cluster, j *Job, parts []*sched.Partition, reqIdx, excIdx []int, testOnly bool) error {
	enforce := m.cfg.EnforcePartLimits
	var userMsg string
	rc := slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
	if len(parts) == 1 {
		p := parts[0]
		switch lr := m.limitsCheck(cl, p, j); lr {
		case sched.ReasonNone:
			rc = m.selectTest(cl, p, j, reqIdx, excIdx, &userMsg)
		case sched.ReasonPartDown:
			if rc = m.selectTest(cl, p, j, reqIdx, excIdx, &userMsg); rc == 0 {
				rc = slurmerr.ESLURM_PARTITION_DOWN
			}
		}
	} else {
		sorted := slices.Clone(parts)
		slices.SortStableFunc(sorted, func(a, b *sched.Partition) int { return int(b.PriorityTier) - int(a.PriorityTier) })
		best := -1
		lr := sched.ReasonNone
		for _, p := range sorted {
			lr = m.limitsCheck(cl, p, j)
			if lr != sched.ReasonNone && enforce == EnforceAny {
				continue
			}
			if lr != sched.ReasonNone && enforce == EnforceAll {
				if lr != sched.ReasonPartDown {
					best = slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
					break
				}
				best = slurmerr.ESLURM_PARTITION_DOWN
			}
			rc = m.selectTest(cl, p, j, reqIdx, excIdx, &userMsg)
			if rc == 0 && lr == sched.ReasonPartDown {
				rc = slurmerr.ESLURM_PARTITION_DOWN
			}
			if rc == slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE && enforce == EnforceAll {
				best = rc
				break
			}
			if rc != slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE &&
				rc != slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE {
				best = rc
				if enforce != EnforceAll || !testOnly && lr == sched.ReasonNone {
					break
				}
			}
		}
		if best != -1 {
			rc = best
		} else if lr == sched.ReasonPartDown {
			rc = slurmerr.ESLURM_PARTITION_DOWN
		}
	}
	switch rc {
	case slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE:
		if enforce != EnforceNo {
			return &RejectError{Code: rc, Msg: userMsg}
		}
		j.Reason = uint16(sched.ReasonPartConfig)
	case slurmerr.ESLURM_PARTITION_DOWN:
		j.Reason = uint16(sched.ReasonPartDown)
	}
	if !queueable(rc) {
		return &RejectError{Code: rc, Msg: userMsg}
	}
	return nil
}

// overlapCheck: the excluded nodes (indexes) must not include a required
// one.
func overlapCheck(cl *Cluster, exc string, reqIdx []int) ([]int, error) {
	if exc == "" {
		return nil, nil
	}
	names, err := hostlist.Expand(exc)
	if err != nil {
		return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
	}
	var idx []int
	for _, n := range names {
		i := cl.nodeIndex(n)
		if i < 0 {
			return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		if slices.Contains(reqIdx, i) {
			return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// lateReject: slurmctld refuses these after the job record exists, so
// the refused job used up a job id (the next job's id shows it).
func (m *Manager) lateReject(k kind, err error) error {
	if k != kindWillRun {
		m.allocID()
	}
	return err
}

// lateChecks are the checks slurmctld makes once the job record exists:
// the constraint (build_feature_list), then, except for --test-only,
// whether the job could ever run (_select_nodes_parts). _job_create
// purges the record of a bad constraint; job_allocate keeps the record of
// a job the select test refuses, FAILED (keepRefused).
func (m *Manager) lateChecks(cl *Cluster, j *Job, parts []*sched.Partition, reqIdx, excIdx []int, k kind, now int64) error {
	setPnMinCPUs(j)
	if j.Features != "" {
		j.Features = normalizeFeatures(j.Features)
		if rc := checkFeatures(j.Features, cl.Nodes); rc != 0 {
			return m.lateReject(k, serr(rc))
		}
	}
	if k == kindWillRun {
		return nil
	}
	if err := m.trySelect(cl, j, parts, reqIdx, excIdx, k == kindBatch); err != nil {
		if rerr := m.keepRefused(j, now); rerr != nil {
			return rerr
		}
		return err
	}
	return nil
}

// keepRefused is job_allocate's answer to a fundamental flaw in the
// request found by the select test: the record it made stays, FAILED
// with reason BadConstraints and exit code 1, started and ended now, its
// end logged (job_completion_logger: mail, jobcomp) and counted as
// submitted, until MinJobAge purges it. The submitter still gets the
// error. The caller journals it (finish) before the reply.
func (m *Manager) keepRefused(j *Job, now int64) error {
	if err := m.register(j, now); err != nil {
		return err
	}
	j.setBase(msg.JobFailed)
	j.Reason, j.StateDesc = uint16(sched.ReasonBadConstraints), ""
	j.StartTime, j.EndTime, j.ExitCode = now, now, 1
	j.Refused = true
	if j.Array != nil {
		// job_allocate does not test an array for independence (which
		// sets the eligible time) before the select test.
		j.EligibleTime = 0
	}
	m.touch(j, now)
	m.ended(j, false, false, now)
	return nil
}

// setPnMinCPUs gives the job record its CPUs per node at least, as
// _copy_job_desc_to_job_record does: --ntasks-per-node tasks of
// --cpus-per-task CPUs each (without -O, for more than one task), and
// never fewer than one task's CPUs. scontrol shows it as MinCPUsNode.
func setPnMinCPUs(j *Job) {
	pn := uint16(1)
	if j.PnMinCPUs != NoVal16 && j.PnMinCPUs != 0 {
		pn = j.PnMinCPUs
	}
	cpt := uint16(1)
	if j.CPUsPerTask != NoVal16 && j.CPUsPerTask != 0 {
		cpt = j.CPUsPerTask
	}
	tasks := j.NumTasks
	if tasks == NoVal && j.NTasksPerNode != NoVal16 && j.MinNodes != NoVal {
		// validate_job_create_req's task count for --ntasks-per-node
		// without -n.
		tasks = uint32(j.NTasksPerNode) * j.MinNodes
	}
	if j.NTasksPerNode != NoVal16 && j.NTasksPerNode != 0 && j.Overcommit != 1 &&
		tasks != NoVal && tasks > 1 {
		pn = max(pn, cpt*j.NTasksPerNode)
	}
	if j.PnMinCPUs != NoVal16 || pn > 1 || cpt > 1 {
		j.PnMinCPUs = max(pn, cpt)
	}
}

// cpusFit reports whether the job's CPUs (tasks times CPUs per task,
// unless -O) fit the biggest of the nodes it may use, as many as it may
// have: the CPU count test of select_nodes' test-only pass.
func cpusFit(cl *Cluster, j *Job, usable []int, maxN uint32) bool {
	tasks := j.NumTasks
	if tasks == NoVal && j.NTasksPerNode != NoVal16 && j.MinNodes != NoVal {
		tasks = uint32(j.NTasksPerNode) * j.MinNodes
	}
	if j.Overcommit == 1 || tasks == NoVal || tasks == 0 {
		return true
	}
	cpt := uint64(1)
	if j.CPUsPerTask != NoVal16 && j.CPUsPerTask != 0 {
		cpt = uint64(j.CPUsPerTask)
	}
	cpus := make([]int, 0, len(usable))
	for _, i := range usable {
		cpus = append(cpus, int(cl.Nodes[i].CPUs))
	}
	slices.Sort(cpus)
	var sum uint64
	for k := len(cpus) - 1; k >= 0 && uint32(len(cpus)-1-k) < maxN; k-- {
		sum += uint64(cpus[k])
	}
	return sum >= uint64(tasks)*cpt
}
