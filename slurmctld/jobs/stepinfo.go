package jobs

import (
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// StepInfo handles REQUEST_JOB_STEP_INFO: the steps of running jobs (the
// batch step of a batch job included, as "ID.batch"), filtered by job id
// and step id (NO_VAL = all). A job id matches a job or its array job id,
// as step_mgr.c's _pack_job_steps does (so scontrol's job id 0 matches
// every job that is not an array task). ok is false when the table has
// jobs but none matched and no step was found (reply
// ESLURM_INVALID_JOB_ID).
func (m *Manager) StepInfo(id msg.StepID, cl *Cluster, nodeCount int, now int64) (*msg.StepInfoMsg, bool) {
	out := &msg.StepInfoMsg{LastUpdate: now}
	valid := false
	for _, j := range m.Jobs() {
		if id.JobID != NoVal && j.ID != id.JobID && j.ArrayJobID != id.JobID {
			continue
		}
		valid = true
		if !j.Running() {
			continue
		}
		if j.Batch && j.BatchHost != "" && (id.StepID == NoVal || id.StepID == msg.StepIDBatch) {
			out.Steps = append(out.Steps, m.stepRecord(j, &Step{ID: msg.StepIDBatch, Name: "batch",
				Nodes: []string{j.BatchHost}, NodeIdx: j.NodeIdx[:1], Tasks: 1, StartTime: j.StartTime,
				TimeLimit: NoVal}, cl, nodeCount, now))
		}
		if id.StepID == NoVal {
			for _, st := range j.Steps {
				out.Steps = append(out.Steps, m.stepRecord(j, st, cl, nodeCount, now))
			}
		} else if _, st := j.stepOf(id); st != nil {
			// One step, as find_step_record: N.S without a component is
			// a het step's first component.
			out.Steps = append(out.Steps, m.stepRecord(j, st, cl, nodeCount, now))
		}
	}
	if len(m.jobs) > 0 && !valid && len(out.Steps) == 0 {
		return out, false
	}
	return out, true
}

func (m *Manager) stepRecord(j *Job, st *Step, cl *Cluster, nodeCount int, now int64) msg.StepInfo {
	limit := st.TimeLimit
	if limit == NoVal || limit == 0 {
		// step_create (and build_batch_step) record a step without a
		// limit of its own as INFINITE, and that is what they pack.
		limit = Infinite
	}
	si := msg.StepInfo{
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID,
		StepID: st.sid(j.ID), UserID: j.UserID,
		NumCPUs: st.CPUs, CPUFreqMin: NoVal, CPUFreqMax: NoVal, CPUFreqGov: NoVal, NumTasks: st.Tasks,
		TaskDist: st.TaskDist, TimeLimit: limit, State: msg.JobRunning, SrunPID: st.SrunPID,
		StartTime: st.StartTime, RunTime: now - st.StartTime, Cluster: ns(m.cfg.ClusterName),
		Partition: ns(j.Partition), SrunHost: ns(st.Host), Nodes: ns(hostlist.Compress(st.Nodes)),
		Name: ns(st.Name), NodeInx: msg.NullBitmap, SelectJobinfo: m.cfg.Select,
		StartProtocolVer: protoOr(j.ProtocolVersion),
	}
	if j.ArrayJobID == 0 {
		si.ArrayTaskID = NoVal
	}
	if st.TimedOut {
		si.State = msg.JobTimeout
	}
	if len(st.NodeIdx) > 0 && nodeCount > 0 {
		si.NodeInx = msg.BitmapOf(nodeCount, st.NodeIdx...)
	}
	if st.ID == msg.StepIDBatch || st.ID == msg.StepIDExtern {
		// build_batch_step and build_extern_step leave the step's
		// cpu_count at 0 and set its TRES without the formatted string
		// _pack_ctld_job_step_info sends: scontrol shows CPUs=0
		// TRES=(null).
		si.NumCPUs = 0
		return si
	}
	tres := "cpu=" + itoa32(st.CPUs)
	// step_set_alloc_tres always names the memory, 0 included.
	if mem := st.allocMem(); mem != 0 {
		tres += ",mem=" + memStr(mem)
	} else {
		tres += ",mem=0"
	}
	si.TresAllocStr = ns(tres + ",node=" + itoa32(uint32(len(st.Nodes))))
	return si
}

func itoa32(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// AllocationInfo handles REQUEST_JOB_ALLOCATION_INFO and
// REQUEST_HET_JOB_ALLOC_INFO (srun inside an allocation): the running
// job's allocation, for its owner or root/SlurmUser.
func (m *Manager) AllocationInfo(id uint32, c Caller) (*msg.Allocation, error) {
	j := m.jobs[id]
	if j == nil {
		return nil, serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(c.UID, j) {
		return nil, serr(slurmerr.ESLURM_ACCESS_DENIED)
	}
	switch {
	case j.Pending():
		return nil, serr(slurmerr.ESLURM_JOB_PENDING)
	case !j.Running():
		return nil, serr(slurmerr.ESLURM_ALREADY_DONE)
	}
	return m.allocation(j), nil
}
