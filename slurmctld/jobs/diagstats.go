package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// DiagCounters are the job table's running totals for sdiag, counted since
// the Manager was made (never reset: the controller keeps the value at its
// last reset and shows the difference).
type DiagCounters struct {
	// Submitted counts jobs job_allocate created: an array counts its
	// task count, as slurmctld adds array_recs->task_cnt.
	Submitted uint64
	// Started counts allocations (select_nodes): each array task, and a
	// requeued job again each time it starts.
	Started uint64
	// Backfilled counts the starts the backfill pass made.
	Backfilled uint64
}

// DiagCounters returns the running totals.
func (m *Manager) DiagCounters() DiagCounters { return m.diag }

// LastPass returns the sdiag figures of the last scheduling pass
// (Schedule, or the pass an allocation request ran).
func (m *Manager) LastPass() sched.PassStats { return m.lastPass }

// countSubmit adds a job just registered to the submitted total.
func (m *Manager) countSubmit(j *Job) {
	if j.Array != nil && len(j.Array.Pending) > 0 {
		m.diag.Submitted += uint64(len(j.Array.Pending))
		return
	}
	m.diag.Submitted++
}

// StateCounts are sdiag's job state counts: pending jobs (an array's meta
// record counts the tasks it still holds) and running ones.
func (m *Manager) StateCounts() (pending, running uint32) {
	for _, j := range m.jobs {
		switch {
		case j.Pending():
			if j.Array != nil && len(j.Array.Pending) > 0 {
				pending += uint32(len(j.Array.Pending))
			} else {
				pending++
			}
		case j.Base() == msg.JobRunning:
			running++
		}
	}
	return pending, running
}

// BatchFailure reports a REQUEST_COMPLETE_BATCH_SCRIPT slurm_rc that
// slurmctld counts as a failed job: the codes that drain the node.
func BatchFailure(slurmRC uint32) bool { return !benignSlurmRC[slurmRC] }
