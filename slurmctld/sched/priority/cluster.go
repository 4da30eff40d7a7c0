package priority

import (
	"github.com/goslurm/goslurm/conf"
)

// ClusterFromConf derives the node and CPU totals and the largest
// partition PriorityJobFactor from slurm.conf, using the configured node
// sizes (slurmctld uses what nodes register once they have). QOS and
// association maxima are left 0: they come from the caller's QOS table.
func ClusterFromConf(c *conf.Config) Cluster {
	cl := Cluster{MaxPartitionJobFactor: 1}
	for _, n := range c.Nodes {
		cl.Nodes++
		if n.Line >= 0 && n.Line < len(c.NodeLines) {
			cl.CPUs += uint32(conf.NodeCPUsFromConfig(c.NodeLines[n.Line]).CPUs)
		}
	}
	for _, p := range c.Partitions {
		cl.MaxPartitionJobFactor = max(cl.MaxPartitionJobFactor, p.PriorityJobFactor)
	}
	return cl
}

// PartitionFromConf gives the multifactor view of partition p: its job
// factor, MaxTime, and TRES totals over its nodes (cpu, mem in MB, node,
// and gres/NAME plus gres/NAME:TYPE for typed GRES), the denominators of
// the TRES factors.
func PartitionFromConf(c *conf.Config, p *conf.Partition) Partition {
	out := Partition{JobFactor: p.PriorityJobFactor, MaxTime: uint32(p.MaxTime), TRES: map[string]uint64{}}
	for _, name := range p.NodeNames {
		i, ok := c.NodeIndex[name]
		if !ok || c.Nodes[i].Line < 0 || c.Nodes[i].Line >= len(c.NodeLines) {
			continue
		}
		nl := c.NodeLines[c.Nodes[i].Line]
		out.TRES["node"]++
		out.TRES["cpu"] += uint64(conf.NodeCPUsFromConfig(nl).CPUs)
		out.TRES["mem"] += uint64(nl.RealMemory)
		for _, g := range nl.Gres {
			out.TRES[TRESKey("gres", g.Name)] += g.Count
			if g.Type != "" {
				out.TRES[TRESKey("gres", g.Name+":"+g.Type)] += g.Count
			}
		}
	}
	return out
}
