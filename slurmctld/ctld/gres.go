package ctld

import (
	"fmt"

	"github.com/goslurm/goslurm/slurmctld/gres"
)

// noteGres keeps the gres.conf records a node's slurmd registered: they
// say which GRES have device files and in which order, so jobs get them
// by index (jobs.Cluster.GresRecs). Called under the write lock.
func (c *Controller) noteGres(n *Node, blob []byte) {
	recs, err := gres.ParseRegistration(blob)
	if err != nil {
		c.log.Error(fmt.Sprintf("_slurm_rpc_node_registration node=%s: %v", n.Name, err))
		return
	}
	if recs == nil {
		recs = []gres.Record{} // registered, without GRES records
	}
	n.gresRecs = recs
}

// gresRecs are the registered records of every node, node table order.
func (c *Controller) gresRecs(into [][]gres.Record) [][]gres.Record {
	if len(into) != len(c.nodes) {
		into = make([][]gres.Record, len(c.nodes))
	}
	for i, n := range c.nodes {
		into[i] = n.gresRecs
	}
	return into
}

// syncGresUsed sets every GRES node's GresUsed= from what the jobs hold.
// Called under the write lock, after syncUsage.
func (c *Controller) syncGresUsed() {
	cl := c.jobs.cl
	if cl == nil || !c.anyGres() {
		return
	}
	cl.GresRecs = c.gresRecs(cl.GresRecs)
	used := c.jobs.m.GresUsed(cl)
	for i, n := range c.nodes {
		if i < len(used) {
			n.GresUsed = used[i]
		}
	}
}

func (c *Controller) anyGres() bool {
	for _, n := range c.nodes {
		if n.Gres != "" {
			return true
		}
	}
	return false
}
