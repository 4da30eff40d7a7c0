package stepd

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// noticeLine is the "*** ... ***" line slurmstepd's signal handler prints
// for entity ("STEP 5.0 ON n1", "JOB 5 ON n1") when sig ends it, or "" for
// signals that print nothing.
func noticeLine(sig int, entity string, now time.Time) string {
	at := now.Format("2006-01-02T15:04:05")
	switch sig {
	case SigTimeLimit:
		return fmt.Sprintf("*** %s CANCELLED AT %s DUE TO TIME LIMIT ***", entity, at)
	case SigPreempted:
		return fmt.Sprintf("*** %s CANCELLED AT %s DUE TO PREEMPTION ***", entity, at)
	case SigNodeFail:
		return fmt.Sprintf("*** %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***", entity, at)
	case SigRequeued:
		return fmt.Sprintf("*** %s CANCELLED AT %s DUE TO JOB REQUEUE ***", entity, at)
	case SigFailure:
		return fmt.Sprintf("*** %s FAILED (non-zero exit code or other failure mode) ***", entity)
	case int(unix.SIGTERM), int(unix.SIGKILL), SigTermKill:
		return fmt.Sprintf("*** %s CANCELLED AT %s ***", entity, at)
	}
	return ""
}

// stepEntity is how slurmstepd names a task step in its notices: job id,
// "+component" for a heterogeneous step, ".step".
func (ts *taskStep) stepEntity() string {
	id := ts.req.StepID
	s := fmt.Sprintf("STEP %d", id.JobID)
	if id.StepHetComp != NoVal {
		s += fmt.Sprintf("+%d", id.StepHetComp)
	}
	return fmt.Sprintf("%s.%d ON %s", s, id.StepID, ts.cfg.NodeName)
}

// announce writes the step's notice once, as slurmstepd does on the
// node a step's kill messages target (node 0): through local task 0's
// stderr, so srun shows it as that task's output. Caller holds mu.
func (ts *taskStep) announce(sig int, details string) {
	if ts.msgSent || ts.nodeID != 0 || ts.st >= StateEnding || ts.msgErr == nil {
		return
	}
	line := noticeLine(sig, ts.stepEntity(), time.Now())
	if line == "" {
		return
	}
	ts.msgSent = true
	prefix := "slurmstepd-" + ts.cfg.NodeName + ": error: "
	text := prefix + line + "\n"
	if details != "" {
		text += prefix + "*** REASON: " + details + " ***\n"
	}
	// A pipe write this small does not block: the stream pump drains it.
	if _, err := ts.msgErr.WriteString(text); err != nil {
		ts.log.Error("cannot write step notice", "err", err)
	}
}
