package jobs

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Jobs started on nodes that power saving turned off (select_nodes'
// POWER_UP_NODE): the job is RUNNING but CONFIGURING until its nodes
// are back; the batch script and the PrologFlags=Alloc prolog wait for
// them. The controller's power saving wakes the nodes. A node already
// POWERING_UP holds a job back the same way: 22.05's reboot_job_nodes
// sets POWER_UP_NODE (and wait_all_nodes) for a job on nodes in
// power_node_bitmap or booting_node_bitmap, so such a job is CONFIGURING
// too and its start time is reset once every node is up
// (sched.NodePoweredDown stands for both states).

// nodeState is the scheduling state of node index i (zero when out of
// range).
func nodeState(cl *Cluster, i int) sched.NodeState {
	if cl == nil || i < 0 || i >= len(cl.Nodes) {
		return 0
	}
	return cl.Nodes[i].State
}

// powerUpHold marks j CONFIGURING with POWER_UP_NODE when one of its
// nodes is powered down or powering up, and reports it.
func (m *Manager) powerUpHold(j *Job, cl *Cluster) bool {
	for _, i := range j.NodeIdx {
		if nodeState(cl, i)&sched.NodePoweredDown != 0 {
			j.State |= msg.JobConfiguring | msg.JobPowerUpNode
			return true
		}
	}
	return false
}

// nodesReady is test_job_nodes_ready for a job waiting for power up
// (wait_all_nodes, which reboot_job_nodes set): none of its nodes is
// powered down or powering up.
func nodesReady(j *Job, cl *Cluster) bool {
	for _, i := range j.NodeIdx {
		if nodeState(cl, i)&sched.NodePoweredDown != 0 {
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
		j.State &^= msg.JobConfiguring
		m.powerUpFini(j, cl, now)
		actions = append(actions, m.launchProlog(j, cl, now)...)
		if j.HetJobID != 0 {
			actions = append(actions, m.hetStarted(j, cl, now)...)
		} else if j.Batch {
			actions = append(actions, LaunchBatch{JobID: j.ID, Node: j.BatchHost, Msg: m.batchLaunch(j, cl, now)})
		}
	}
	return m.finish(actions)
}

// powerUpFini is job_config_fini for a POWER_UP_NODE job: the time
// spent powering up does not count, its start time is now, and its
// CLOUD nodes' addresses are known now.
func (m *Manager) powerUpFini(j *Job, cl *Cluster, now int64) {
	m.logf(slog.LevelInfo, "Resetting %s start time for node power up", jobIDString(j))
	j.State &^= msg.JobPowerUpNode
	j.StartTime = now
	j.EndTime = now + m.limitSeconds(j, cl)
	if j.AliasList == "TBD" {
		j.AliasList = aliasList(j, cl)
	}
	m.touch(j, now)
}

// aliasList is set_job_alias_list: the CLOUD nodes of the job, each
// "name:[addr]:hostname", comma separated; "TBD" while one of them is
// powered down or powering up; "" without CLOUD nodes.
func aliasList(j *Job, cl *Cluster) string {
	if cl == nil || cl.CloudAliases == nil {
		return ""
	}
	var parts []string
	for _, i := range j.NodeIdx {
		if i < 0 || i >= len(cl.CloudAliases) || cl.CloudAliases[i] == "" {
			continue
		}
		if nodeState(cl, i)&sched.NodePoweredDown != 0 {
			return "TBD"
		}
		parts = append(parts, cl.CloudAliases[i])
	}
	return strings.Join(parts, ",")
}

// skipUnreachable drops from the nodes a job ending now waits on those
// that are DOWN, powered down or powering up (deallocate_nodes, as
// make_node_comp; not UNKNOWN or INVALID_REG nodes, as after a controller
// restart, whose epilog is still awaited): they are sent the kill but no epilog complete is
// expected from them, so a job cancelled while waiting for power up, or
// ending on a node that just went DOWN, is not left COMPLETING. It
// reports whether a node was dropped.
func skipUnreachable(j *Job, cl *Cluster) bool {
	if cl == nil || len(j.Completing) == 0 {
		return false
	}
	const gone = sched.NodeDownBase | sched.NodePoweredDown
	down := map[string]bool{}
	for k, i := range j.NodeIdx {
		if k < len(j.Nodes) && nodeState(cl, i)&gone != 0 {
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
