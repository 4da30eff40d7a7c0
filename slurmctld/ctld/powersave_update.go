package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
)

// scontrol update nodename=... state=power_down|power_up|power_down_asap|
// power_down_force, as 22.05's update_node handles them: the node is
// only marked (POWER_DOWN, POWER_UP); the power saving pass does the
// work. Refused as an invalid transition while power saving is off.

// isPowerRequest reports the states _valid_node_state_change takes as
// power work.
func isPowerRequest(st uint32) bool {
	switch st {
	case msg.NodeStatePowerDown, msg.NodeStatePowerUp,
		msg.NodeStatePowerDown | msg.NodeStatePowerUp,
		msg.NodeStatePowerDown | msg.NodeStatePoweredDown,
		msg.NodeStatePowerDown | msg.NodeStatePowerDrain:
		return true
	}
	return false
}

// setPowerState is update_node's power request for one node, with power
// saving on. Under the lock.
func (c *Controller) setPowerState(n *Node, st uint32, now int64) {
	n.NextState = noVal
	n.resuming = false
	if st&msg.NodeStatePowerDown == 0 {
		switch {
		case n.Has(msg.NodeStatePoweredDown):
			n.State |= msg.NodeStatePowerUp
			c.log.Info(fmt.Sprintf("powering up node %s", n.Name))
		case n.Has(msg.NodeStatePoweringUp):
			n.State |= msg.NodeStatePoweredDown | msg.NodeStatePowerUp
			c.log.Info(fmt.Sprintf("power up request repeating for node %s", n.Name))
		default:
			c.log.Log(context.Background(), levelVerbose, fmt.Sprintf("node %s is already powered up", n.Name))
		}
		return
	}
	if st&msg.NodeStatePowerUp != 0 && n.Has(msg.NodeStatePoweringUp) {
		// power_down with power_up: drop the power up under way.
		n.State &^= msg.NodeStatePoweringUp
		n.LastResponse = now
		return
	}
	if n.Has(msg.NodeStateRebootRequested) || n.Has(msg.NodeStateRebootIssued) {
		if n.Has(msg.NodeStateRebootIssued) && n.IsDown() {
			n.State = msg.NodeStateIdle | n.State&^msg.NodeStateBase
		}
		n.State &^= msg.NodeStateRebootRequested | msg.NodeStateRebootIssued
		n.Reason = ""
		c.log.Info(fmt.Sprintf("Canceling REBOOT on node %s", n.Name))
	}
	if n.Has(msg.NodeStatePoweringDown) {
		c.log.Info(fmt.Sprintf("ignoring power down request for node %s, already powering down", n.Name))
		return
	}
	switch {
	case st&msg.NodeStatePoweredDown != 0:
		// power_down_force: its jobs are killed (requeued when they
		// can be), by the job tick.
		if c.jobs != nil {
			c.powerKill = append(c.powerKill, n.Name)
		}
		n.State &^= msg.NodeStatePoweringUp
	case st&msg.NodeStatePowerDrain != 0:
		c.drainNode(n, "POWER_DOWN_ASAP", n.ReasonUID, now)
	}
	if n.IsDown() {
		n.State &^= msg.NodeStatePoweringUp
	}
	if n.Has(msg.NodeStatePoweredDown) {
		c.log.Info(fmt.Sprintf("power down request repeating for node %s", n.Name))
		n.State &^= msg.NodeStatePoweredDown
	} else {
		c.log.Info(fmt.Sprintf("powering down node %s", n.Name))
	}
	n.State |= msg.NodeStatePowerDown
}

// takePowerKills returns the nodes whose jobs power_down_force kills.
// Under the lock.
func (c *Controller) takePowerKills() []string {
	out := c.powerKill
	c.powerKill = nil
	return out
}
