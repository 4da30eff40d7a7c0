package jobs

import (
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// Info converts a job record to RESPONSE_JOB_INFO's record, with the
// substitutions pack_job makes (time limit from the partition, expected
// times of pending jobs, requested partitions while pending). nodeCount is
// the size of the node table (node_inx bitmaps index it).
//
// The list cache (infocache.go) reuses a packed record while the job's
// content fingerprint and infoClusterKey are unchanged: a record must
// depend only on the job (less the fields the fingerprint skips, see
// jobHasher), the cluster's nodes and partitions (less their State), the
// cluster name and select plugin, nodeCount and showFlags, and what
// infoDeps adds (an array task's throttle, held by its meta record; the
// allocation counts rebuilt at a restart). The clock only moves a pending
// job's start and end (pendingTimes), which are patched.
func (m *Manager) Info(j *Job, cl *Cluster, nodeCount int, showFlags uint16, now int64) msg.JobInfo {
	ji := msg.JobInfo{
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, Container: ns(j.Container),
		JobID: j.ID, UserID: j.UserID, GroupID: j.GroupID,
		HetJobID: j.HetJobID, HetJobIDSet: ns(j.HetJobIDSet), HetJobOffset: j.HetJobOffset,
		Profile: j.Profile, JobState: j.State, StateReason: j.Reason, RestartCnt: j.RestartCnt,
		ShowFlags: showFlags, Deadline: j.Deadline, AllocSID: j.AllocSID,
		TimeLimit: m.timeLimit(j, cl), Nice: j.Nice,
		SubmitTime: j.SubmitTime, EligibleTime: j.EligibleTime, AccrueTime: j.EligibleTime, SiteFactor: j.SiteFactor,
		StartTime: j.StartTime, EndTime: j.EndTime, SuspendTime: j.SuspendTime, PreSusTime: j.PreSusTime,
		PreemptTime: j.PreemptTime, PreemptableTime: m.preemptableTime(j, cl),
		LastSchedEval: j.LastEval, Priority: j.Priority, Cluster: ns(m.cfg.ClusterName),
		Account: ns(j.Account), Comment: ns(j.Comment), BatchHost: ns(j.BatchHost), QOS: ns(j.QOS),
		Licenses: ns(j.Licenses), StateDesc: ns(j.StateDesc), ResvName: ns(j.Reservation),
		ExitCode: j.ExitCode, DerivedEC: j.DerivedEC, Name: ns(j.Name),
		ReqSwitch: 0, Wait4Switch: 0, AllocNode: ns(j.AllocNode), SelectJobinfo: m.cfg.Select,
		WorkDir: ns(j.WorkDir), Dependency: ns(j.Dependency.String()), Command: ns(j.Command),
		Shared:     sharedInfo(j, cl),
		CPUFreqMin: NoVal, CPUFreqMax: NoVal, CPUFreqGov: NoVal, Contiguous: or16(j.Contiguous, NoVal16, 0), CoreSpec: j.CoreSpec,
		CPUsPerTask: or16(j.CPUsPerTask, NoVal16, 1), PnMinCPUs: or16(j.PnMinCPUs, NoVal16, 1), PnMinMemory: j.PnMinMemory,
		ReqNodes: ns(j.ReqNodes), ExcNodes: ns(j.ExcNodes), SchedNodes: ns(j.schedNodes),
		StdErr: ns(j.StdErr), StdIn: ns(j.StdIn), StdOut: ns(j.StdOut), Bitflags: j.Bitflags,
		StartProtocolVer: protoOr(j.ProtocolVersion), Network: ns(j.Network), MailType: or16(j.MailType, NoVal16, 0),
		MailUser: ns(j.MailUser), TresBind: ns(j.TresBind), TresFreq: ns(j.TresFreq),
		TresPerNode: tresNS(j, clearedTresPerNode, j.TresPerNode),
		NodeInx:     msg.NullBitmap, ReqNodeInx: nodeBitmap(cl, j.ReqNodes, nodeCount),
		ExcNodeInx: nodeBitmap(cl, j.ExcNodes, nodeCount),
		MultiCore: &msg.MultiCore{BoardsPerNode: j.BoardsPerNode, SocketsPerBoard: j.SocketsPerBoard,
			SocketsPerNode: j.SocketsPerNode, CoresPerSocket: j.CoresPerSocket, ThreadsPerCore: j.ThreadsPerCore,
			NtasksPerBoard: j.NTasksPerBoard, NtasksPerSocket: j.NTasksPerSocket, NtasksPerCore: j.NTasksPerCore,
			PlaneSize: j.PlaneSize},
		BillableTres:  msg.PackDouble(float64(NoVal)),
		TimeMin:       zeroIfNoVal(j.TimeMin),
		PnMinTmpDisk:  zeroIfNoVal(j.PnMinTmpDisk),
		NtasksPerNode: or16(j.NTasksPerNode, NoVal16, 0),
		NtasksPerTres: j.NTasksPerTres,
		MaxNodes:      zeroIfNoVal(j.MaxNodes),
		MaxCPUs:       zeroIfNoVal(j.MaxCPUs),
	}
	ji.TresPerJob = tresNS(j, clearedTresPerJob, j.TresPerJob)
	ji.TresPerTask = tresNS(j, clearedTresPerTask, j.TresPerTask)
	ji.TresPerSocket = tresNS(j, clearedTresPerSocket, j.TresPerSocket)
	ji.CPUsPerTres = tresNS(j, clearedCPUsPerTres, j.CPUsPerTres)
	ji.MemPerTres = tresNS(j, clearedMemPerTres, j.MemPerTres)
	if j.Batch {
		ji.BatchFlag = 1 + j.FailRequeues
	}
	ji.ResizeTime = j.ResizeTime
	if j.Requeue {
		ji.Requeue = 1
	}
	if j.PnMinMemory == NoVal64 {
		ji.PnMinMemory = 0
	}
	// array_max_tasks: the meta record's throttle, on the meta record
	// and on every task split off it (pack_job looks the meta record up
	// by array_job_id; it keeps its array data for life).
	ji.ArrayMaxTasks = m.arrayThrottle(j)
	if j.Array != nil && len(j.Array.Pending) > 0 {
		ji.ArrayTaskStr = msg.Str(hexTasks(j.Array.Pending))
		ji.ArrayTaskID = NoVal
	}
	if j.ArrayJobID == 0 {
		ji.ArrayTaskID = NoVal
	}
	if j.Refused {
		ji.AccrueTime = 0
	}
	if j.Pending() && j.EligibleTime == 0 && j.BeginTime != 0 {
		// The record's eligible time is details->begin_time: a --begin
		// (or a requeue's delay) shows before the job is eligible, as
		// does the accrue time.
		ji.EligibleTime, ji.AccrueTime = j.BeginTime, j.BeginTime
	}
	if j.Pending() && j.Reason == ReasonArrayTaskLimit {
		// job_array_start_test clears the begin time of a record its
		// array's throttle holds back (EligibleTime=Unknown); the
		// accrue time stays.
		ji.EligibleTime = 0
	}
	switch {
	case j.Pending():
		ji.Partition = ns(joinPartitions(j.Partitions))
		if j.PartitionReq != "" {
			ji.Partition = ns(j.PartitionReq)
		}
		if names := tierOrder(j, cl); tierSorted(j, names) {
			// The priority plugin sorted the job's partitions by
			// PriorityTier; the list shows that order.
			ji.Partition = ns(strings.Join(names, ","))
		}
		ji.Features = ns(j.Features)
		ji.StartTime, ji.EndTime = pendingTimes(j, ji.TimeLimit, now)
		m.requestedCounts(j, cl, &ji)
		if j.RanNodes != 0 && !j.IsCompleting() {
			// pack_job: a requeued job shows its last run's node
			// count (total_nodes) and no maximum.
			ji.NumNodes, ji.MaxNodes = j.RanNodes, 0
		}
		if ji.NumTasks == NoVal {
			ji.NumTasks = j.MinNodes
		}
	case neverAllocated(j):
		// Ended before it got nodes (cancelled while pending): pack_job
		// shows the partition it would have run in and what it asked for.
		ji.Partition = ns(j.Partition)
		if j.Partition == "" && len(j.Partitions) > 0 {
			ji.Partition = ns(j.Partitions[0])
		}
		ji.Features = ns(j.Features)
		m.requestedCounts(j, cl, &ji)
		if ji.NumTasks == NoVal && m.allocRebuilt(j) {
			// pack_job's num_tasks falls back on the allocated
			// node count, rebuilt as 0 at the restart.
			ji.NumTasks = 0
		}
	default:
		ji.Partition = ns(j.Partition)
		ji.Features = ns(j.Features)
		ji.Nodes = ns(j.nodeList())
		if j.IsCompleting() && len(j.Completing) > 0 {
			ji.Nodes = ns(hostlistOf(j.Completing))
		}
		ji.NumNodes = uint32(len(j.Nodes))
		ji.NumCPUs = j.TotalCPUs
		ji.NumTasks = j.NumTasks
		if ji.NumTasks == NoVal {
			ji.NumTasks = uint32(len(j.Nodes))
		}
		if len(j.NodeIdx) > 0 && nodeCount > 0 {
			ji.NodeInx = msg.BitmapOf(nodeCount, j.NodeIdx...)
		}
		// Once it has nodes, pack_job gives the allocated counts and no
		// maximum.
		ji.MaxNodes, ji.MaxCPUs = 0, 0
		if showFlags&msg.ShowDetail != 0 {
			ji.JobResrcs = m.jobResources(j, cl)
		}
		ji.BillableTres = msg.PackDouble(m.billable(j))
		ji.TresReqStr = ns(m.tresReq(j, cl))
		ji.TresAllocStr = ns(m.tresAlloc(j))
		ji.GresDetailStr = gresDetail(j)
		ji.GresTotal = ns(gresTotal(j))
	}
	return ji
}

// arrayThrottle is the ArrayTaskThrottle a job's record shows: its own
// when it is an array's meta record, its meta record's when it is a task
// split off one, else 0.
func (m *Manager) arrayThrottle(j *Job) uint32 {
	if j.Array != nil {
		return j.Array.MaxTasks
	}
	if j.ArrayJobID == 0 || j.ArrayJobID == j.ID {
		return 0
	}
	if meta := m.jobs[j.ArrayJobID]; meta != nil && meta.Array != nil {
		return meta.Array.MaxTasks
	}
	return 0
}

// neverAllocated is a job that ended without ever holding nodes.
func neverAllocated(j *Job) bool {
	return !j.Pending() && !j.Running() && len(j.Nodes) == 0 && j.TotalCPUs == 0
}

// requestedCounts fills the node, CPU and task counts and the TRES a job
// asked for (num_tasks as requested: NO_VAL when not given).
func (m *Manager) requestedCounts(j *Job, cl *Cluster, ji *msg.JobInfo) {
	ji.NumNodes = m.pendingNodeCount(j, cl)
	ji.NumCPUs = j.MinCPUs
	if ji.NumCPUs == NoVal {
		ji.NumCPUs = j.MinNodes
	}
	ji.NumTasks = j.NumTasks
	ji.TresReqStr = ns(m.tresReq(j, cl))
}

// pendingTimes are a pending job's expected start and end as its record
// shows them: the backfill estimate, never in the past and not before
// --begin; the end adds the time limit. They move with the clock, so the
// list cache patches them into cached records when it sends them.
func pendingTimes(j *Job, limit uint32, now int64) (start, end int64) {
	if j.EstStart == 0 && j.StartTime != 0 && j.IsCompleting() {
		// A requeued job still completing keeps its last run's start
		// and end until batch_requeue_fini: pack_job shows now, and
		// the end not before it.
		start = max(j.StartTime, now)
		if limit != Infinite && limit != NoVal {
			end = max(j.EndTime, start+int64(limit)*60)
		}
		return start, end
	}
	start = j.EstStart
	if start != 0 && start < now {
		start = now
	}
	if j.BeginTime > now && start < j.BeginTime {
		start = j.BeginTime
	}
	if start != 0 && limit != Infinite && limit != NoVal {
		end = start + int64(limit)*60
	}
	return start, end
}

// JobInfoMsg builds RESPONSE_JOB_INFO for every job (uid filter: ^0 = all).
func (m *Manager) JobInfoMsg(cl *Cluster, nodeCount int, showFlags uint16, uid uint32, now int64) *msg.JobInfoMsg {
	out := &msg.JobInfoMsg{LastUpdate: now}
	m.sortOrder()
	out.Jobs = make([]msg.JobInfo, 0, len(m.order))
	for _, id := range m.order {
		j := m.jobs[id]
		if uid != ^uint32(0) && j.UserID != uid {
			continue
		}
		out.Jobs = append(out.Jobs, m.Info(j, cl, nodeCount, showFlags, now))
	}
	return out
}

// JobInfoSingle builds RESPONSE_JOB_INFO for REQUEST_JOB_INFO_SINGLE: the
// job, or every record of the array it names. ok is false for an unknown id
// (reply ESLURM_INVALID_JOB_ID).
func (m *Manager) JobInfoSingle(id uint32, cl *Cluster, nodeCount int, showFlags uint16, now int64) (*msg.JobInfoMsg, bool) {
	j := m.jobs[id]
	if j == nil {
		return nil, false
	}
	out := &msg.JobInfoMsg{LastUpdate: now}
	if comps := m.hetComponents(j); comps != nil {
		// A het job's leader stands for every component (_pack_het_job).
		for _, c := range comps {
			out.Jobs = append(out.Jobs, m.Info(c, cl, nodeCount, showFlags, now))
		}
		return out, true
	}
	if j.ArrayJobID != 0 && j.ArrayJobID == j.ID {
		m.sortOrder()
		for _, id := range m.order {
			if t := m.jobs[id]; t.ArrayJobID == j.ID {
				out.Jobs = append(out.Jobs, m.Info(t, cl, nodeCount, showFlags, now))
			}
		}
		return out, true
	}
	out.Jobs = append(out.Jobs, m.Info(j, cl, nodeCount, showFlags, now))
	return out, true
}

func nodeBitmap(cl *Cluster, expr string, nodeCount int) msg.HexBitmap {
	idx := nodeIdxs(cl, expr)
	if len(idx) == 0 || nodeCount == 0 {
		return msg.NullBitmap
	}
	return msg.BitmapOf(nodeCount, idx...)
}

// memStr prints MB as Slurm's TRES strings do: 4096 -> "4G", 1536 -> "1536M".
func memStr(mb uint64) string {
	switch {
	case mb != 0 && mb%(1024*1024) == 0:
		return strconv.FormatUint(mb/(1024*1024), 10) + "T"
	case mb != 0 && mb%1024 == 0:
		return strconv.FormatUint(mb/1024, 10) + "G"
	}
	return strconv.FormatUint(mb, 10) + "M"
}

// tresReq is tres_req_str: cpu, mem, node and billing as requested.
func (m *Manager) tresReq(j *Job, cl *Cluster) string {
	cpus, mem, nodes, billing := m.reqTRES(j, cl)
	s := "cpu=" + strconv.FormatUint(cpus, 10)
	if mem != 0 {
		s += ",mem=" + memStr(mem)
	}
	return s + ",node=" + strconv.FormatUint(nodes, 10) + ",billing=" + strconv.FormatUint(billing, 10)
}

// reqTRES is tres_req_cnt: the CPUs, memory (MB), nodes and billing a
// job asked for (CPUs: allocated once it has them). Memory unset means a
// whole node's (the largest of the job's partition). Billing applies the
// partition's TRESBillingWeights (the first one asked for while pending),
// truncated as Slurm stores it.
func (m *Manager) reqTRES(j *Job, cl *Cluster) (cpus, mem, nodes, billing uint64) {
	n := j.MinNodes
	if n == NoVal || n == 0 {
		n = 1
	}
	nodes = uint64(n)
	c := j.MinCPUs
	if (j.Running() || j.Finished()) && !neverAllocated(j) {
		c = j.TotalCPUs
	}
	if j.ReqCPUs != 0 {
		c = j.ReqCPUs
	}
	if c == NoVal || c == 0 {
		c = n
	}
	cpus = uint64(c)
	name := j.Partition
	if name == "" && len(j.Partitions) > 0 {
		name = j.Partitions[0]
	}
	switch {
	case j.PnMinMemory == NoVal64 || j.PnMinMemory == 0:
		if p := cl.partition(name); p != nil {
			for _, i := range p.Nodes {
				if i < len(cl.Nodes) && cl.Nodes[i].RealMemory > mem {
					mem = cl.Nodes[i].RealMemory
				}
			}
		}
		mem *= nodes
	case j.PnMinMemory&memPerCPU != 0:
		mem = (j.PnMinMemory &^ memPerCPU) * cpus
	default:
		mem = j.PnMinMemory * nodes
	}
	if j.ReqNodeCnt != 0 {
		nodes = uint64(j.ReqNodeCnt)
	}
	billing = cpus
	if w := m.weights(name); w != nil {
		billing = uint64(priority.Billing(map[string]uint64{"cpu": cpus, "mem": mem, "node": nodes}, w, m.maxTRES()))
	}
	return cpus, mem, nodes, billing
}

// tresAlloc is tres_alloc_str: what the job holds.
func (m *Manager) tresAlloc(j *Job) string {
	t := allocCounts(j)
	s := "cpu=" + strconv.FormatUint(t["cpu"], 10)
	if t["mem"] != 0 {
		s += ",mem=" + memStr(t["mem"])
	}
	return s + ",node=" + strconv.FormatUint(t["node"], 10) + ",billing=" + strconv.FormatUint(uint64(m.billable(j)), 10)
}

func zeroIfNoVal(v uint32) uint32 {
	if v == NoVal {
		return 0
	}
	return v
}

// tierSorted reports whether names, a job's partitions in PriorityTier
// order (tierOrder), differ in order from the ones it asked for.
func tierSorted(j *Job, names []string) bool {
	if len(names) < 2 {
		return false
	}
	i := 0
	for _, name := range j.Partitions {
		if i < len(names) && names[i] == name {
			i++
		} else if !slices.Contains(names[:i], name) {
			return true
		}
	}
	return false
}

// sharedInfo is the job's OverSubscribe as job info reports it: what the
// job asked for, else 1 (YES) in a partition of OverSubscribe=FORCE with a
// count above 1 (the partition decides: _pack_job_details).
func sharedInfo(j *Job, cl *Cluster) uint16 {
	if j.Shared != NoVal16 {
		return j.Shared
	}
	if p := cl.partition(j.Partition); p != nil && p.OverSubscribe == sched.OverSubscribeForce && p.MaxShare > 1 {
		return 1
	}
	return j.Shared
}
