package jobs

import (
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

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

// noteSchedNodes keeps the pending jobs' sched_nodes after a backfill
// pass: the nodes of each one's expected start, or none
// (_clear_job_estimates clears them all first). Only starting a job
// clears them otherwise (start): a job cancelled while pending keeps
// them, as in Slurm.
func (m *Manager) noteSchedNodes(cl *Cluster, plan *sched.Plan, ids map[uint32]entry, now int64) {
	if !plan.Backfill {
		return
	}
	want := map[*Job]string{}
	for _, p := range plan.Pending {
		e, ok := ids[p.JobID]
		if !ok || p.JobID >= synthBase || len(p.SchedNodes) == 0 {
			continue
		}
		names := make([]string, 0, len(p.SchedNodes))
		for _, i := range p.SchedNodes {
			if i >= 0 && i < len(cl.Nodes) {
				names = append(names, cl.Nodes[i].Name)
			}
		}
		want[e.job] = hostlist.Compress(names)
	}
	for _, j := range m.jobs {
		if !j.Pending() {
			continue
		}
		if v := want[j]; v != j.schedNodes {
			// Advisory like EstStart: not journaled.
			j.schedNodes = v
			m.lastUpdate = now
		}
	}
}
