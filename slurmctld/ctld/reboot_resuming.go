package ctld

import "github.com/goslurm/goslurm/protocol/msg"

// A node rebooting with nextstate=resume is in 22.05's rs_node_bitmap
// (Node.resuming): the scheduler counts it as up, so a job that needs it
// waits for Resources rather than for a node that is not available, but
// starts nothing on it until it is back (sched.NodeResuming). The node
// joins the bitmap when scontrol reboot asks for exactly nextstate=resume
// (before ASAP adds UNDRAIN to the next state), and leaves it when it
// returns to service, its reboot times out, or scontrol update changes
// its state (cancel_reboot included).
//
// When the controller starts (or reconfigures) the bitmap is built again
// from the node records instead: every node with a reboot requested or
// issued whose next state has the RESUME bit. NO_VAL has that bit too, so
// after a restart a plain reboot, or ASAP without a next state, counts as
// well, as in 22.05.

// resumingAtBuild is _build_bitmaps' rule for rs_node_bitmap.
func resumingAtBuild(n *Node) bool {
	return n.State&(msg.NodeStateRebootRequested|msg.NodeStateRebootIssued) != 0 &&
		n.NextState&^msg.NodeStateBase&msg.NodeResume != 0
}
