package msg

// The kill family (reference protocol-daemon.md §2.5-2.7): REQUEST_TERMINATE_JOB,
// REQUEST_KILL_TIMELIMIT, REQUEST_KILL_PREEMPTED and REQUEST_ABORT_JOB share
// kill_job_msg_t; MESSAGE_EPILOG_COMPLETE answers them; REQUEST_SIGNAL_TASKS
// and REQUEST_TERMINATE_TASKS share signal_tasks_msg_t.

import (
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
)

// KillJob is kill_job_msg_t, protocol 22.05. Cred is optional (u8 flag, then
// the unsigned credential packed at the message version, with no
// cred_version in front); slurmctld's has step_id NO_VAL. StepID.StepID is
// NO_VAL for the whole job. Time is the credential revocation time.
type KillJob struct {
	Cred          *jobcred.Credential
	Details       NullString
	DerivedEC     uint32
	ExitCode      uint32
	JobGres       []GresJobAlloc
	StepID        StepID
	HetJobID      uint32
	JobState      uint32
	JobUID        uint32
	JobGID        uint32
	Nodes         NullString
	SelectJobinfo SelectPlugin
	SpankJobEnv   []NullString
	StartTime     int64
	Time          int64
	WorkDir       NullString
}

func walkKillJob(w fieldWalker, v codec.Version, b *KillJob) {
	hasCred := b.Cred != nil
	walkFlag8(w, &hasCred, "credential")
	if hasCred {
		walkCred(w, &b.Cred, uint16(v))
	}
	w.str(&b.Details)
	w.u32(&b.DerivedEC)
	w.u32(&b.ExitCode)
	walkGresJobAlloc(w, &b.JobGres)
	walkStepID(w, &b.StepID)
	w.u32(&b.HetJobID)
	w.u32(&b.JobState)
	w.u32(&b.JobUID)
	w.u32(&b.JobGID)
	w.str(&b.Nodes)
	walkSelectJobinfo(w, &b.SelectJobinfo)
	walkStrArray(w, &b.SpankJobEnv)
	w.time(&b.StartTime)
	w.time(&b.Time)
	w.str(&b.WorkDir)
}

// EpilogComplete is MESSAGE_EPILOG_COMPLETE (one-way, slurmd -> slurmctld):
// ReturnCode 0 or ESLURMD_EPILOG_FAILED.
type EpilogComplete struct {
	JobID      uint32
	ReturnCode uint32
	NodeName   NullString
}

func walkEpilogComplete(w fieldWalker, _ codec.Version, b *EpilogComplete) {
	w.u32(&b.JobID)
	w.u32(&b.ReturnCode)
	w.str(&b.NodeName)
}

// SignalTasks is signal_tasks_msg_t, the body of REQUEST_SIGNAL_TASKS and
// REQUEST_TERMINATE_TASKS. Flags are the KillJob* / KillStepsOnly /
// KillFullJob bits of JobStepKillRequest.
type SignalTasks struct {
	StepID StepID
	Flags  uint16
	Signal uint16
}

func walkSignalTasks(w fieldWalker, _ codec.Version, b *SignalTasks) {
	walkStepID(w, &b.StepID)
	w.u16(&b.Flags)
	w.u16(&b.Signal)
}
