package msg

// Completion reports to slurmctld (reference protocol-daemon.md §2.4, §2.8,
// §2.9): REQUEST_COMPLETE_BATCH_SCRIPT, REQUEST_STEP_COMPLETE,
// REQUEST_COMPLETE_PROLOG.

import "github.com/goslurm/goslurm/protocol/codec"

// CompleteBatchScript is REQUEST_COMPLETE_BATCH_SCRIPT, protocol 22.05. JobRC
// is the script's raw wait(2) status (exit 1 is 256); SlurmRC a slurmd-side
// error code. JobAcct nil is "no accounting data".
type CompleteBatchScript struct {
	JobAcct  *JobAcct
	JobID    uint32
	JobRC    uint32
	SlurmRC  uint32
	UserID   uint32
	NodeName NullString
}

func walkCompleteBatchScript(w fieldWalker, _ codec.Version, b *CompleteBatchScript) {
	walkJobAcct(w, &b.JobAcct)
	w.u32(&b.JobID)
	w.u32(&b.JobRC)
	w.u32(&b.SlurmRC)
	w.u32(&b.UserID)
	w.str(&b.NodeName)
}

// StepComplete is REQUEST_STEP_COMPLETE, protocol 22.05: node ranks
// RangeFirst..RangeLast of the step (cred step_hostlist order) are done;
// StepRC is the largest task wait status.
type StepComplete struct {
	StepID     StepID
	RangeFirst uint32
	RangeLast  uint32
	StepRC     uint32
	JobAcct    *JobAcct
}

func walkStepComplete(w fieldWalker, _ codec.Version, b *StepComplete) {
	walkStepID(w, &b.StepID)
	w.u32(&b.RangeFirst)
	w.u32(&b.RangeLast)
	w.u32(&b.StepRC)
	walkJobAcct(w, &b.JobAcct)
}

// CompleteProlog is REQUEST_COMPLETE_PROLOG, protocol 22.05 (20.11 and 21.08
// peers send no node name).
type CompleteProlog struct {
	JobID    uint32
	NodeName NullString
	PrologRC uint32
}

func walkCompleteProlog(w fieldWalker, _ codec.Version, b *CompleteProlog) {
	w.u32(&b.JobID)
	w.str(&b.NodeName)
	w.u32(&b.PrologRC)
}
