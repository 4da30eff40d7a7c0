package jobs

import (
	"context"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

func nsList(l []string) []msg.NullString {
	if len(l) == 0 {
		return nil
	}
	out := make([]msg.NullString, len(l))
	for i, s := range l {
		out[i] = msg.Str(s)
	}
	return out
}

// cpuGroups run-length encodes the CPUs per allocated node.
func cpuGroups(cpus []uint32) ([]uint16, []uint32) {
	var vals []uint16
	var reps []uint32
	for _, c := range cpus {
		if n := len(vals); n > 0 && vals[n-1] == uint16(c) {
			reps[n-1]++
			continue
		}
		vals = append(vals, uint16(c))
		reps = append(reps, 1)
	}
	return vals, reps
}

func or16(v, unset, def uint16) uint16 {
	if v == unset {
		return def
	}
	return v
}

// batchLaunch builds REQUEST_BATCH_JOB_LAUNCH as job_scheduler.c's
// _build_launch_job_msg fills it (checked against the capture of real
// 22.05 slurmctld in testsuite/captures): no user name or gids (slurmd
// looks them up), the unsigned batch credential, the environment as
// submitted (slurmd adds the SLURM_* variables).
func (m *Manager) batchLaunch(j *Job, cl *Cluster, now int64) *msg.BatchJobLaunch {
	vals, reps := cpuGroups(j.NodeCPUs)
	b := &msg.BatchJobLaunch{
		JobID: j.ID, UID: j.UserID, GID: j.GroupID, Partition: ns(j.Partition),
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID,
		AcctgFreq: ns(j.AcctgFreq), Container: ns(j.Container),
		CPUBindType: or16(j.CPUBindType, NoVal16, 0), CPUsPerTask: or16(j.CPUsPerTask, NoVal16, 1),
		RestartCnt: j.RestartCnt, CPUsPerNode: vals, CPUCountReps: reps,
		CPUBind: ns(j.CPUBind), Nodes: ns(j.nodeList()), WorkDir: ns(j.WorkDir), AliasList: ns(j.AliasList),
		StdErr: ns(j.StdErr), StdIn: ns(j.StdIn), StdOut: ns(j.StdOut),
		SelectJobinfo: m.cfg.Select, Account: ns(j.Account), QOS: ns(j.QOS),
		ResvName: ns(j.Reservation), Profile: j.Profile, TresBind: ns(j.TresBind), TresFreq: ns(j.TresFreq),
	}
	if j.ArrayJobID == 0 {
		b.ArrayTaskID = NoVal
	}
	if j.NumTasks != NoVal {
		b.NTasks = j.NumTasks
	}
	if j.PnMinMemory != NoVal64 {
		b.PnMinMemory = j.PnMinMemory
		b.JobMem = j.PnMinMemory
	}
	if j.Overcommit != 0xfe {
		b.Overcommit = j.Overcommit
	}
	b.OpenMode = j.OpenMode
	// A payload that cannot be read (state damaged and skipped with -i)
	// leaves the script out: slurmd refuses the launch and the job fails
	// as with any launch failure.
	if p, err := m.payload(j); err == nil && p != nil {
		b.Script = msg.Str(p.Script)
		b.Environment = nsList(p.Env)
		b.SpankJobEnv = nsList(p.SpankJobEnv)
		b.Argv = nsList(p.Argv)
	}
	body := m.credBody(j, cl, now)
	body.StepID = jobcred.StepID{JobID: j.ID, StepID: jobcred.StepBatch, StepHetComp: NoVal}
	body.StepHostlist = cns(j.BatchHost)
	body.StepCoreBitmap = m.coreBitmap(j, cl, 0, 1)
	body.JobMem = memGroups(j.NodeMem)
	cred, err := jobcred.Create(context.Background(), body, jobcred.Version2205, nil, unix(now))
	if err == nil {
		b.Cred = cred
	}
	return b
}

func memGroups(mem []uint64) []jobcred.MemGroup {
	var out []jobcred.MemGroup
	for _, v := range mem {
		if n := len(out); n > 0 && out[n-1].MB == v {
			out[n-1].Reps++
			continue
		}
		out = append(out, jobcred.MemGroup{MB: v, Reps: 1})
	}
	return out
}

// credBody fills the job part of a credential (uid, passwd, cores, cpus,
// host list); the caller sets the step fields.
func (m *Manager) credBody(j *Job, cl *Cluster, now int64) jobcred.Body {
	b := jobcred.Body{
		UID: j.UserID, GID: j.GroupID, JobCoreSpec: NoVal16,
		JobAccount: cns(j.Account), JobComment: cns(j.Comment), JobPartition: cns(j.Partition),
		JobReservation: cns(j.Reservation), JobRestartCnt: j.RestartCnt,
		JobStdErr: cns(j.StdErr), JobStdIn: cns(j.StdIn), JobStdOut: cns(j.StdOut),
		JobNHosts: uint32(len(j.Nodes)), JobHostlist: cns(j.nodeList()),
	}
	if j.Features != "" {
		b.JobConstraints = cns(j.Features)
	}
	if j.NumTasks != NoVal {
		b.JobNTasks = j.NumTasks
	}
	if u, ok := m.user(j.UserID); ok {
		b.PwName, b.PwGecos, b.PwDir, b.PwShell = jobcred.Str(u.Name), jobcred.Str(u.Gecos), jobcred.Str(u.Dir), jobcred.Str(u.Shell)
		b.GIDs = u.Groups
	}
	if len(b.GIDs) == 0 {
		b.GIDs = []uint32{j.GroupID}
	}
	b.JobCoreBitmap = m.coreBitmap(j, cl, 0, len(j.Nodes))
	b.JobGres = m.jobGresRecs(j, cl)
	for _, i := range j.NodeIdx {
		if i < 0 || i >= len(cl.Nodes) {
			continue
		}
		n := cl.Nodes[i]
		g := jobcred.SocketGroup{CoresPerSocket: n.CoresPerSocket, SocketsPerNode: n.Sockets, RepCount: 1}
		if k := len(b.SocketGroups); k > 0 && b.SocketGroups[k-1].CoresPerSocket == g.CoresPerSocket &&
			b.SocketGroups[k-1].SocketsPerNode == g.SocketsPerNode {
			b.SocketGroups[k-1].RepCount++
			continue
		}
		b.SocketGroups = append(b.SocketGroups, g)
	}
	for _, c := range j.NodeCPUs {
		if k := len(b.CPUGroups); k > 0 && b.CPUGroups[k-1].CPUs == uint16(c) {
			b.CPUGroups[k-1].Reps++
			continue
		}
		b.CPUGroups = append(b.CPUGroups, jobcred.CPUGroup{CPUs: uint16(c), Reps: 1})
	}
	return b
}

// coreBitmap marks the job's cores on job nodes [from, to) over the cores
// of all job nodes, node by node (job_core_bitmap / step_core_bitmap).
func (m *Manager) coreBitmap(j *Job, cl *Cluster, from, to int) *jobcred.Bitmap {
	total := 0
	offs := make([]int, len(j.NodeIdx))
	for k, i := range j.NodeIdx {
		offs[k] = total
		if i >= 0 && i < len(cl.Nodes) {
			total += cl.Nodes[i].Cores()
		}
	}
	if total == 0 {
		return nil
	}
	bm := jobcred.NewBitmap(uint32(total))
	for k := from; k < to && k < len(j.NodeIdx); k++ {
		cores := j.NodeCores[k]
		i := j.NodeIdx[k]
		if len(cores) == 0 && i >= 0 && i < len(cl.Nodes) {
			// Whole-node allocation (select/linear): every core.
			for c := 0; c < cl.Nodes[i].Cores(); c++ {
				bm.Set(offs[k] + c)
			}
			continue
		}
		for _, c := range cores {
			if offs[k]+int(c) < total {
				bm.Set(offs[k] + int(c))
			}
		}
	}
	return bm
}

// killJob builds REQUEST_TERMINATE_JOB / REQUEST_KILL_TIMELIMIT's body as
// create_kill_job_msg does.
func (m *Manager) killJob(j *Job, cl *Cluster, now int64) *msg.KillJob {
	body := m.credBody(j, cl, now)
	body.StepID = jobcred.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal}
	j.revokedAt = max(j.revokedAt, now)
	k := &msg.KillJob{
		Details: ns(j.StateDesc), DerivedEC: j.DerivedEC, ExitCode: j.ExitCode,
		StepID:   msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal},
		JobState: j.State, JobUID: j.UserID, JobGID: j.GroupID, Nodes: ns(j.nodeList()),
		SelectJobinfo: m.cfg.Select, StartTime: j.StartTime, Time: now, WorkDir: ns(j.WorkDir),
		JobGres: m.jobGresInfo(j, cl),
	}
	if j.Payload != nil {
		k.SpankJobEnv = nsList(j.Payload.SpankJobEnv)
	} else if j.HasSpankEnv {
		if p, err := m.payload(j); err == nil && p != nil {
			k.SpankJobEnv = nsList(p.SpankJobEnv)
		}
	}
	if cred, err := jobcred.Create(context.Background(), body, jobcred.Version2205, nil, unix(now)); err == nil {
		k.Cred = cred
	}
	return k
}

// allocation builds RESPONSE_RESOURCE_ALLOCATION (proc_req.c build_alloc_msg).
func (m *Manager) allocation(j *Job) *msg.Allocation {
	a := &msg.Allocation{Account: ns(j.Account), JobID: j.ID, Partition: ns(j.Partition),
		QOS: ns(j.QOS), ResvName: ns(j.Reservation), SelectJobinfo: m.cfg.Select,
		NtasksPerBoard: j.NTasksPerBoard, NtasksPerCore: j.NTasksPerCore, NtasksPerTres: j.NTasksPerTres,
		NtasksPerSocket: j.NTasksPerSocket}
	if !j.Running() {
		if j.Partition == "" {
			a.Partition = ns(joinPartitions(j.Partitions))
		}
		return a
	}
	a.NodeCnt = uint32(len(j.Nodes))
	a.NodeList = ns(j.nodeList())
	a.BatchHost = ns(j.BatchHost)
	a.AliasList = ns(j.AliasList)
	a.CPUsPerNode, a.CPUCountReps = cpuGroups(j.NodeCPUs)
	if j.PnMinMemory != NoVal64 && j.PnMinMemory != 0 {
		a.PnMinMemory = j.PnMinMemory
	}
	return a
}

func unix(now int64) time.Time { return time.Unix(now, 0) }

func hostlistOf(names []string) string { return hostlist.Compress(names) }
