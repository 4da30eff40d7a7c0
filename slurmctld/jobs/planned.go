package jobs

import "github.com/goslurm/goslurm/slurmctld/sched"

// notePlanned keeps the nodes a backfill pass planned for pending jobs'
// expected starts. Only backfill changes them: a main pass leaves the
// last backfill pass's set in place, and a backfill pass with nothing
// to schedule empties it, as backfill.c clears its planned nodes before
// it looks at the queue.
func (m *Manager) notePlanned(backfill bool, plan *sched.Plan) {
	if !backfill {
		return
	}
	m.planned = m.planned[:0]
	if plan != nil {
		m.planned = append(m.planned, plan.Planned...)
	}
}

// PlannedNodes returns the node indices (as in Cluster.Nodes) the last
// backfill pass planned; the controller flags the idle ones
// NODE_STATE_PLANNED. The slice is the manager's: read it under the lock.
func (m *Manager) PlannedNodes() []int { return m.planned }
