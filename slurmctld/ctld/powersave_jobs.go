package ctld

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// schedPowerState is what power saving adds to a node's scheduling
// state. POWERING_DOWN nodes take no job until their SuspendTimeout is
// over, nor idle ones asked to power down (a busy one keeps taking jobs
// until it is idle, as avail_node_bitmap); POWERED_DOWN and POWERING_UP
// ones take jobs, which wait CONFIGURING for them (sched.NodePoweredDown
// tells the job manager). The unavailable ones are NodeDrain, not
// NodeDown: they are not DOWN, so scontrol resume of a job stays allowed.
func schedPowerState(n *Node) sched.NodeState {
	var s sched.NodeState
	if n.Has(msg.NodeStatePoweringDown) ||
		(n.Has(msg.NodeStatePowerDown) && !n.Has(msg.NodeStatePoweredDown) && n.IsIdle()) {
		s |= sched.NodeDrain
	}
	if n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringUp) {
		s |= sched.NodePoweredDown
	}
	return s
}

// powerDownWeight is the weight _build_node_list gives powered-down
// nodes (node_features_g_reboot_weight without a node features plugin:
// INFINITE-1), so that jobs go to nodes that are up when they can.
const powerDownWeight = 0xfffffffe

// schedPowerWeight is the node's scheduling weight: its own, or
// powerDownWeight while it is powered down or powering down.
func schedPowerWeight(n *Node) uint32 {
	if poweredDownish(n) {
		return powerDownWeight
	}
	return n.Weight
}
