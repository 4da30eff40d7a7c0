package jobs

import (
	"log/slog"
	"slices"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Jobs started on nodes that power saving turned off (select_nodes'
// POWER_UP_NODE): the job is RUNNING but CONFIGURING until its nodes
// are back; the batch script and the PrologFlags=Alloc prolog wait for
// them. The controller's power saving wakes the nodes.

// powerUpHold marks j CONFIGURING with POWER_UP_NODE when one of its
// nodes is powered down or powering up, and reports it.
func (m *Manager) powerUpHold(j *Job, cl *Cluster) bool {
	for _, i := range j.NodeIdx {
		if i >= 0 && i < len(cl.Nodes) && cl.Nodes[i].State&sched.NodePoweredDown != 0 {
			j.State |= msg.JobConfiguring | msg.JobPowerUpNode
			return true
		}
	}
	return false
}

// nodesReady is test_job_nodes_ready for a job waiting for power up:
// none of its nodes is powered down or powering up.
func nodesReady(j *Job, cl *Cluster) bool {
	for _, i := range j.NodeIdx {
		if i >= 0 && i < len(cl.Nodes) && cl.Nodes[i].State&sched.NodePoweredDown != 0 {
			return false
		}
	}
	return true
}

// PowerUpReady is job_time_limit's end of configuration for the jobs
// whose nodes came back (and whose PrologSlurmctld ended): job_config_fini
// resets their start time (the time spent powering up does not count),
// then the PrologFlags=Alloc prolog and the batch script are launched.
func (m *Manager) PowerUpReady(cl *Cluster, now int64) (Outcome, error) {
	// Called every tick: look at the job table in ID order only when a
	// job is ready, which is rare (and never with power saving off).
	isReady := func(j *Job) bool {
		return j.State&msg.JobPowerUpNode != 0 && j.State&msg.JobConfiguring != 0 && j.Running() &&
			!m.hooks.prolog[j.ID] && nodesReady(j, cl)
	}
	var ready []uint32
	for id, j := range m.jobs {
		if isReady(j) {
			ready = append(ready, id)
		}
	}
	if len(ready) == 0 {
		return m.finish(nil)
	}
	slices.Sort(ready)
	var actions []Action
	for _, id := range ready {
		j := m.jobs[id]
		if j == nil || !isReady(j) { // an earlier one (a het job's leader) may have started it
			continue
		}
		m.logf(slog.LevelInfo, "job_time_limit: Configuration for %s complete", jobIDString(j))
		m.logf(slog.LevelInfo, "Resetting %s start time for node power up", jobIDString(j))
		j.State &^= msg.JobConfiguring | msg.JobPowerUpNode
		j.StartTime = now
		j.EndTime = now + m.limitSeconds(j, cl)
		m.touch(j, now)
		actions = append(actions, m.launchProlog(j, cl, now)...)
		if j.HetJobID != 0 {
			actions = append(actions, m.hetStarted(j, cl, now)...)
		} else if j.Batch {
			actions = append(actions, LaunchBatch{JobID: j.ID, Node: j.BatchHost, Msg: m.batchLaunch(j, cl, now)})
		}
	}
	return m.finish(actions)
}

// skipPoweredDown drops from the nodes a job ending now waits on those
// that are powered down or powering up: they are sent the kill but
// deallocate_nodes expects no epilog complete from them, so a job
// cancelled while waiting for power up is not left COMPLETING. It
// reports whether a node was dropped.
func skipPoweredDown(j *Job, cl *Cluster) bool {
	if cl == nil || len(j.Completing) == 0 {
		return false
	}
	down := map[string]bool{}
	for k, i := range j.NodeIdx {
		if k < len(j.Nodes) && i >= 0 && i < len(cl.Nodes) && cl.Nodes[i].State&sched.NodePoweredDown != 0 {
			down[j.Nodes[k]] = true
		}
	}
	if len(down) == 0 {
		return false
	}
	kept := j.Completing[:0]
	for _, n := range j.Completing {
		if !down[n] {
			kept = append(kept, n)
		}
	}
	j.Completing = kept
	if len(kept) == 0 {
		j.Completing = nil
	}
	return true
}
