package ctld

import "github.com/goslurm/goslurm/protocol/msg"

// setPlanned is what sched/backfill does with NODE_STATE_PLANNED around a
// pass: the flag leaves every node the previous pass marked, and goes on
// the nodes this pass planned for pending jobs' expected starts. Called
// under the write lock, after the pass's jobs started.
func (c *Controller) setPlanned(planned []int, now int64) {
	// Jobs this pass started must count: refresh the nodes' states first.
	c.syncUsage(now)
	if markPlanned(c.nodes, planned) {
		c.lastNodeUpdate = now
	}
}

// markPlanned flags the planned nodes and unflags the others, reporting
// whether any node changed. An allocated node is left out (the flag is
// for IDLE nodes; a partly used node is ALLOCATED inside slurmctld, and
// sinfo reports it MIXED). Nothing else sets or clears the flag, so a
// node keeps it until the next backfill pass, even if a job started there
// meanwhile (MIXED- in sinfo's compact form), as in Slurm.
func markPlanned(nodes []*Node, planned []int) bool {
	want := make(map[int]bool, len(planned))
	for _, i := range planned {
		if i >= 0 && i < len(nodes) && !nodes[i].IsAllocated() {
			want[i] = true
		}
	}
	changed := false
	for i, n := range nodes {
		if had := n.State&msg.NodeStatePlanned != 0; had != want[i] {
			n.State ^= msg.NodeStatePlanned
			changed = true
		}
	}
	return changed
}
