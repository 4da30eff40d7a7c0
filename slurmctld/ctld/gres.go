package ctld

import (
	"fmt"
	"sync"

	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// noteGres keeps the gres.conf records a node's slurmd registered: they
// say which GRES have device files and in which order, so jobs get them
// by index (jobs.Cluster.GresRecs); the node's Gres= is rebuilt from
// them. It returns the reason the registration is invalid for
// (gres_node_config_validate's reason_down), "" when it is not. Called
// under the write lock.
func (c *Controller) noteGres(n *Node, blob []byte) string {
	recs, err := gres.ParseRegistration(blob)
	if err != nil {
		c.log.Error(fmt.Sprintf("_slurm_rpc_node_registration node=%s: %v", n.Name, err))
		return "Could not unpack gres data"
	}
	if recs == nil {
		recs = []gres.Record{} // registered, without GRES records
	}
	n.gresRecs = recs
	c.gresChanged()
	cf := c.cfg.Conf
	if n.Gres == "" || cf == nil || n.Index >= len(cf.Nodes) || cf.Nodes[n.Index].Line >= len(cf.NodeLines) {
		return ""
	}
	var items []gres.ConfGres
	for _, g := range cf.NodeLines[cf.Nodes[n.Index].Line].Gres {
		items = append(items, gres.ConfGres{Name: g.Name, Type: g.Type, Count: g.Count})
	}
	// Real slurmd always sends its records; a registration without any
	// (a test's) is not checked.
	reason := ""
	if len(blob) > 0 {
		reason = gres.CountReason(items, recs)
	}
	n.Gres = gres.NodeString(gres.NewLayouts(items, recs, nil), int(n.Cores), int(n.Sockets))
	return reason
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

// gresUsedCache holds every node's GresUsed=, recomputed from the job
// table when a node info request needs it after a change (computing it
// scans every job, too much for every controller call).
type gresUsedCache struct {
	gen uint64 // bumped under the write lock when jobs or records change

	mu     sync.Mutex // guards the rest (node info runs under the read lock)
	cached uint64     // gen of used
	valid  bool
	used   []string
}

// gresChanged marks GresUsed stale. Called under the write lock.
func (c *Controller) gresChanged() { c.gresUsed.gen++ }

// nodeGresUsed is node n's GresUsed= now. Called under the read lock.
func (c *Controller) nodeGresUsed(n *Node) string {
	if n.Gres == "" || c.jobs == nil || c.jobs.cl == nil {
		return ""
	}
	g := &c.gresUsed
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.valid || g.cached != g.gen {
		// GresUsed reads the nodes and their registered records only.
		cl := jobs.Cluster{Nodes: c.jobs.cl.Nodes, GresRecs: c.gresRecs(nil)}
		g.used, g.cached, g.valid = c.jobs.m.GresUsed(&cl), g.gen, true
	}
	if n.Index < len(g.used) {
		return g.used[n.Index]
	}
	return ""
}
