package jobs

import (
	"log/slog"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
)

const sigCont = uint16(syscall.SIGCONT)

// warnSent is WARN_SENT in a job's warn flags: --signal's warning went
// out; a requeue clears it.
const warnSent uint16 = 1 << 15

// periodicTimeout is PERIODIC_TIMEOUT, how often real slurmctld runs
// job_time_limit: the warning goes out when the job's end is within
// warn_time plus this much, so that a check every 30 s never sends it late.
const periodicTimeout = 30

// warnSignal is send_job_warn_signal for a running job with a time limit:
// sbatch/srun --signal=[{R|B}:]SIG[@TIME] sends SIGCONT, then SIG, to the
// job's steps (B: to the batch script alone) once the job's end is
// TIME + 30 s away or nearer, once per run.
func (m *Manager) warnSignal(j *Job, cl *Cluster, now int64) []Action {
	if j.WarnSignal == 0 || j.WarnFlags&warnSent != 0 || j.WarnTime == 0 ||
		m.timeLimit(j, cl) == Infinite || now+int64(j.WarnTime)+periodicTimeout < j.EndTime {
		return nil
	}
	if j.WarnFlags&msg.KillJobBatch == 0 {
		j.WarnFlags |= msg.KillStepsOnly
	}
	var out []Action
	t := target{job: j, task: NoVal}
	m.logf(slog.LevelDebug, "send_job_warn_signal: warning signal %d to JobId=%d", j.WarnSignal, j.ID)
	for _, sig := range []uint16{sigCont, j.WarnSignal} {
		// A job without a batch script (salloc) refuses B: as job_signal
		// does; the warning is marked sent all the same.
		_ = m.signalJob(t, sig, j.WarnFlags, cl, now, &out)
	}
	j.WarnFlags |= warnSent
	m.touch(j, now)
	return out
}
