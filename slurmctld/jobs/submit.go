package jobs

import (
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

func serr(code int) error { return slurmerr.Error{Code: code} }

// kind of submission.
type kind uint8

const (
	kindBatch   kind = iota // REQUEST_SUBMIT_BATCH_JOB
	kindAlloc               // REQUEST_RESOURCE_ALLOCATION (salloc, srun)
	kindWillRun             // REQUEST_JOB_WILL_RUN (--test-only)
)

// identity applies _valid_id: unset ids are the caller's; only root and
// SlurmUser may submit for someone else.
func (m *Manager) identity(d *msg.JobDesc, c Caller) (uid, gid uint32, err error) {
	uid, gid = d.UserID, d.GroupID
	if uid == NoVal {
		uid = c.UID
	}
	if gid == NoVal {
		gid = c.GID
	}
	if m.privileged(c.UID) {
		return uid, gid, nil
	}
	if uid != c.UID {
		return 0, 0, serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	if gid != c.GID {
		return 0, 0, serr(slurmerr.ESLURM_GROUP_ID_MISSING)
	}
	return uid, gid, nil
}

// build validates a job description and returns the new record (not yet
// in the table, no id). It follows job_mgr.c's _job_create and
// _valid_job_part: partition choice and access, node list vs counts, time
// limit default, limits per EnforcePartLimits.
func (m *Manager) build(d *msg.JobDesc, c Caller, cl *Cluster, kind kind, now int64) (*Job, error) {
	uid, gid, err := m.identity(d, c)
	if err != nil {
		return nil, err
	}
	if kind == kindBatch {
		if !d.Script.Valid || d.Script.Value == "" {
			return nil, serr(slurmerr.ESLURM_JOB_SCRIPT_MISSING)
		}
		if len(d.Environment) == 0 {
			return nil, serr(slurmerr.ESLURM_ENVIRONMENT_MISSING)
		}
	}
	if m.cfg.MaxJobCount != 0 && uint32(len(m.jobs)) >= m.cfg.MaxJobCount && kind != kindWillRun {
		return nil, serr(int(syscall.EAGAIN))
	}
	j := &Job{
		ArrayTaskID: NoVal, Name: strOf(d.Name), UserID: uid, GroupID: gid,
		Account: strOf(d.Account), QOS: strOf(d.QOS), Comment: strOf(d.Comment),
		AllocNode: strOf(d.AllocNode), AllocSID: d.AllocSID,
		SubmitTime: now, TimeLimit: d.TimeLimit, TimeMin: d.TimeMin, Deadline: d.Deadline,
		MinNodes: d.MinNodes, MaxNodes: d.MaxNodes, MinCPUs: d.MinCPUs, MaxCPUs: d.MaxCPUs,
		NumTasks: d.NumTasks, CPUsPerTask: d.CPUsPerTask, NTasksPerNode: d.NtasksPerNode,
		PnMinCPUs: d.PnMinCPUs, PnMinMemory: d.PnMinMemory, PnMinTmpDisk: d.PnMinTmpDisk,
		Shared: d.Shared, Contiguous: d.Contiguous, Features: strOf(d.Features),
		Requeue: d.Requeue == 1, Overcommit: d.Overcommit, OpenMode: d.OpenMode,
		CPUBindType: d.CPUBindType, CPUBind: strOf(d.CPUBind), CoreSpec: d.CoreSpec,
		Profile: d.Profile, AcctgFreq: strOf(d.AcctgFreq), Container: strOf(d.Container),
		Network: strOf(d.Network), Reservation: strOf(d.Reservation), Licenses: strOf(d.Licenses),
		MailType: d.MailType, MailUser: strOf(d.MailUser), TresBind: strOf(d.TresBind),
		WarnSignal: d.WarnSignal, WarnTime: d.WarnTime, WarnFlags: d.WarnFlags &^ warnSent,
		TresFreq: strOf(d.TresFreq), TresPerNode: strOf(d.TresPerNode), TresPerJob: strOf(d.TresPerJob), TresPerTask: strOf(d.TresPerTask),
		CPUsPerTres: strOf(d.CPUsPerTres), MemPerTres: strOf(d.MemPerTres), Bitflags: d.Bitflags,
		KillOnNodeFail: d.KillOnNodeFail != 0,
		Batch:          kind == kindBatch, WorkDir: strOf(d.WorkDir), StdIn: strOf(d.StdIn),
		StdOut: strOf(d.StdOut), StdErr: strOf(d.StdErr), SubmitLine: strOf(d.SubmitLine),
		RespHost: strOf(d.RespHost), AllocRespPort: d.AllocRespPort, OtherPort: d.OtherPort,
		ProtocolVersion: c.ProtocolVersion, BeginTime: d.BeginTime, Nice: d.Nice,
	}
	if !m.cfg.AllowSpecResourcesUsage {
		j.CoreSpec = NoVal16
	} else if j.CoreSpec != NoVal16 {
		// A job naming its specialized cores has whole nodes.
		j.Shared = 0
	}
	if u, ok := m.user(uid); ok {
		j.UserName = u.Name
		if j.MailUser == "" {
			j.MailUser = m.mailUser("", u.Name, uid) // the submitting user by default (with MailDomain)
		}
	}
	j.NTasksPerBoard, j.NTasksPerCore = or16(d.NtasksPerBoard, NoVal16, 0), or16(d.NtasksPerCore, NoVal16, infinite16)
	j.NTasksPerSocket, j.NTasksPerTres = or16(d.NtasksPerSocket, NoVal16, infinite16), or16(d.NtasksPerTres, NoVal16, 0)
	if j.RespHost == "" {
		j.RespHost = c.Host
	}
	// The authenticated host wins over what the request says, as
	// slurmctld's _set_hostname replaces alloc_node with the auth host.
	if c.HostName != "" {
		j.AllocNode = c.HostName
	} else if j.AllocNode == "" {
		j.AllocNode = c.Host
	}
	j.SiteFactor = d.SiteFactor
	if j.SiteFactor == NoVal {
		j.SiteFactor = niceOff
	}
	j.BoardsPerNode, j.SocketsPerBoard = d.BoardsPerNode, d.SocketsPerBoard
	j.SocketsPerNode, j.CoresPerSocket, j.ThreadsPerCore = d.SocketsPerNode, d.CoresPerSocket, d.ThreadsPerCore
	j.PlaneSize = or16(d.PlaneSize, NoVal16, 0)
	if d.TaskDist != NoVal {
		j.TaskDist = d.TaskDist
	}
	j.TresPerSocket = strOf(d.TresPerSocket)
	if j.PartitionReq = strOf(d.Partition); j.PartitionReq == "" {
		j.Bitflags |= partAssigned
	}
	if j.Nice == NoVal {
		j.Nice = niceOff
	} else if j.Nice < niceOff && !m.privileged(c.UID) {
		return nil, serr(slurmerr.ESLURM_INVALID_NICE)
	}
	if d.Requeue == NoVal16 {
		j.Requeue = true // JobRequeue=1 is the default
	}
	if d.PnMinMemory != NoVal64 {
		// _job_create marks a memory limit the user gave (--mem,
		// --mem-per-cpu) so a default never overrides it later.
		j.Bitflags |= jobMemSet
	}
	if len(d.Argv) > 0 {
		args := make([]string, len(d.Argv))
		for i, a := range d.Argv {
			args[i] = a.Value
		}
		j.Command = strings.Join(args, " ")
	}
	if kind == kindBatch {
		p := &Payload{Script: d.Script.Value}
		for _, e := range d.Environment {
			p.Env = append(p.Env, e.Value)
		}
		for _, e := range d.SpankJobEnv {
			p.SpankJobEnv = append(p.SpankJobEnv, e.Value)
		}
		j.HasSpankEnv = len(p.SpankJobEnv) > 0
		for _, a := range d.Argv {
			p.Argv = append(p.Argv, a.Value)
		}
		j.Payload = p
	}

	// Partitions.
	var parts []*sched.Partition
	if j.PartitionReq == "" {
		// A reservation's partition comes before the default one
		// (_get_job_parts).
		if p := cl.resvPartition(j.Reservation); p != nil {
			parts = append(parts, p)
		}
		for i := range cl.Partitions {
			if len(parts) == 0 && cl.Partitions[i].Default {
				parts = append(parts, &cl.Partitions[i])
				break
			}
		}
		if len(parts) == 0 {
			return nil, serr(slurmerr.ESLURM_DEFAULT_PARTITION_NOT_SET)
		}
	} else {
		for _, name := range strings.Split(j.PartitionReq, ",") {
			p := cl.partition(name)
			if p == nil {
				// _get_job_parts sends the first unknown name with
				// the code; sbatch and srun print it first.
				return nil, &RejectError{Code: slurmerr.ESLURM_INVALID_PARTITION_NAME,
					Msg: "invalid partition specified: " + name}
			}
			parts = append(parts, p)
		}
	}
	// Partitions that take no jobs are replaced by their alternates.
	multi := len(parts) > 1
	parts, changed, rc := submitParts(cl, parts)
	if rc != 0 {
		return nil, serr(rc)
	}
	for _, p := range parts {
		j.Partitions = append(j.Partitions, p.Name)
	}
	if changed && j.PartitionReq != "" {
		j.PartitionReq = strings.Join(j.Partitions, ",")
	}

	// Node list vs counts.
	var reqIdx []int
	if rn := strOf(d.ReqNodes); rn != "" {
		names, err := hostlist.Expand(rn)
		if err != nil {
			return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		seen := map[int]bool{}
		for _, n := range names {
			i := cl.nodeIndex(n)
			if i < 0 {
				return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
			}
			if !seen[i] {
				seen[i] = true
				reqIdx = append(reqIdx, i)
			}
		}
		cnt := uint32(len(reqIdx))
		if j.MinNodes == NoVal || cnt > j.MinNodes {
			j.MinNodes = cnt
		}
		if j.MinCPUs == NoVal || cnt > j.MinCPUs {
			j.MinCPUs = cnt
		}
		if j.MaxNodes != NoVal && j.MaxNodes != 0 && j.MinNodes > j.MaxNodes {
			return nil, serr(slurmerr.ESLURM_INVALID_NODE_COUNT)
		}
		j.ReqNodes = rn
	}
	if en := strOf(d.ExcNodes); en != "" {
		names, err := hostlist.Expand(en)
		if err != nil {
			return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		for _, n := range names {
			if cl.nodeIndex(n) < 0 {
				return nil, serr(slurmerr.ESLURM_INVALID_NODE_NAME)
			}
		}
		j.ExcNodes = en
	}
	if j.MinNodes != NoVal && j.MaxNodes != NoVal && j.MaxNodes != 0 && j.MinNodes > j.MaxNodes {
		return nil, serr(slurmerr.ESLURM_INVALID_NODE_COUNT)
	}

	// Access and limits per partition (_valid_job_part): submitcheck.go.
	var groups []uint32
	if u, ok := m.user(uid); ok {
		groups = u.Groups
	}
	if rc := m.validJobPart(cl, j, parts, multi, reqIdx, c.UID, groups, kind == kindBatch && strOf(d.ArrayInx) == "", now); rc != 0 {
		return nil, serr(rc)
	}
	excIdx, err := overlapCheck(cl, j.ExcNodes, reqIdx)
	if err != nil {
		return nil, err
	}
	if err := validLicenses(j.Licenses, cl.Licenses, cl.Config.AllowZeroLic); err != nil {
		return nil, err
	}
	// _job_create checks the GRES requests after the partition has set
	// the node counts (_valid_job_part) and the licenses, so a
	// partition's MinNodes counts against --gpus.
	if !m.gresNamesValid(j) || memPerTresWithoutGPU(j.MemPerTres, j.TresPerJob, j.TresPerNode, j.TresPerSocket, j.TresPerTask) ||
		!gresTestCounts(j) {
		return nil, serr(slurmerr.ESLURM_INVALID_GRES)
	}
	if gresTypeMixed(j) {
		return nil, serr(slurmerr.ESLURM_INVALID_GRES_TYPE)
	}

	// Array (checked before the job record and its id exist).
	if spec := strOf(d.ArrayInx); spec != "" {
		if kind != kindBatch {
			return nil, serr(slurmerr.ESLURM_INVALID_ARRAY)
		}
		tasks, throttle, ok := parseArray(spec, m.cfg.MaxArraySize)
		if !ok {
			return nil, serr(slurmerr.ESLURM_INVALID_ARRAY)
		}
		j.Array = &ArrayInfo{Pending: tasks, MaxTasks: throttle, Spec: spec}
	}

	// Dependency.
	if ds := strOf(d.Dependency); ds != "" {
		dep, ok := parseDependency(ds)
		// _job_create tests it once the record has its id: a job may
		// not depend on itself.
		if !ok || !m.validDependency(dep, m.peekID()) {
			return nil, m.lateReject(kind, serr(slurmerr.ESLURM_DEPENDENCY))
		}
		j.Dependency = dep
	}

	// --reservation (validate_job_resv): _job_create tests it once the
	// record has its id, after the dependency and the constraint (the
	// constraint is tested later here, in lateChecks), so a refused
	// reservation uses up a job id. A reservation not open yet keeps the
	// job from being eligible (job_independent).
	if err := cl.checkReservation(j); err != nil {
		return nil, m.lateReject(kind, err)
	}
	if !cl.resvOpen(j, now) {
		j.Reason = ReasonWaitResv
	}

	// Hold and priority.
	switch {
	case d.Priority == 0:
		// sbatch -H: a user hold whoever submits (the capture's root
		// submission shows JobHeldUser), with its reason from the start as
		// job_allocate sets it: no scheduling pass needs to run for it.
		j.Hold = HoldUser
		j.Reason = ReasonHeldUser
	case d.Priority != NoVal && m.privileged(c.UID):
		j.Priority, j.AdminPrio = d.Priority, true
	}
	// Constraint, then whether the job could ever run: submitcheck*.go.
	if err := m.lateChecks(cl, j, parts, reqIdx, excIdx, kind, now); err != nil {
		return nil, err
	}
	deadlineTimeMin(j)
	internJob(j)
	return j, nil
}
