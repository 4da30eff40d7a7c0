package jobs

import "github.com/goslurm/goslurm/slurmctld/sched"

// A pending job's record shows a node count derived from the biggest node
// of its partition (PendingNodeCount). Scanning the partition's nodes for
// every record the list cache packs again costs O(nodes) a record; the
// list cache instead takes the biggest node of every partition once, when
// the nodes or partitions change (its cluster key), and the records of the
// list being packed read them from there.

// nodeMax is the biggest CPU and core counts of a set of nodes (not
// necessarily of one node).
type nodeMax struct{ cpus, cores uint32 }

// nodeMaxima are the biggest counts of each partition, and of every node
// for a job whose partition is unknown.
type nodeMaxima struct {
	parts map[string]nodeMax
	all   nodeMax
}

func newNodeMaxima(cl *Cluster) *nodeMaxima {
	mx := &nodeMaxima{parts: make(map[string]nodeMax, len(cl.Partitions))}
	for i := range cl.Nodes {
		mx.all = mx.all.with(&cl.Nodes[i])
	}
	for i := range cl.Partitions {
		p := &cl.Partitions[i]
		if _, dup := mx.parts[p.Name]; dup {
			continue // Cluster.partition finds the first
		}
		var m nodeMax
		for _, n := range p.Nodes {
			m = m.with(&cl.Nodes[n])
		}
		mx.parts[p.Name] = m
	}
	return mx
}

func (m nodeMax) with(n *sched.Node) nodeMax {
	return nodeMax{cpus: max(m.cpus, uint32(n.CPUs)), cores: max(m.cores, uint32(n.Cores()))}
}

// of is the biggest counts in the partition PendingNodeCount reads.
func (mx *nodeMaxima) of(j *Job) nodeMax {
	name := j.Partition
	if name == "" && len(j.Partitions) > 0 {
		name = j.Partitions[0]
	}
	if m, ok := mx.parts[name]; ok {
		return m
	}
	return mx.all
}

// pendingNodeCount is PendingNodeCount, from the list cache's maxima
// while it packs a list for cl.
func (m *Manager) pendingNodeCount(j *Job, cl *Cluster) uint32 {
	if c := m.info; c != nil && c.maxima != nil && c.maxCl == cl && cl != nil {
		mx := c.maxima.of(j)
		return nodeCountWag(j, mx.cpus, mx.cores)
	}
	return m.PendingNodeCount(j, cl)
}

// nodeCountWag is pack_job's node count of a job that never had nodes
// (node_cnt_wag) given the biggest CPU and core counts of its partition:
// from the task count, by --ntasks-per-node, --cpus-per-task or
// --ntasks-per-core when given, never below the job's minimum.
func nodeCountWag(j *Job, maxCPUs, maxCores uint32) uint32 {
	minN := j.MinNodes
	if minN == NoVal {
		minN = 0
	}
	tasks := j.NumTasks
	if tasks == NoVal {
		tasks = 0
	}
	if maxCPUs == 0 || maxCores == 0 {
		return minN
	}
	var n uint32
	switch ntpc := uint32(j.NTasksPerCore); {
	case j.NTasksPerNode != NoVal16 && j.NTasksPerNode != 0:
		n = tasks / uint32(j.NTasksPerNode)
	case j.CPUsPerTask != NoVal16 && j.CPUsPerTask > 1:
		per := max(maxCPUs/uint32(j.CPUsPerTask), 1)
		n = (tasks + per - 1) / per
	case ntpc != 0 && ntpc != 0xffff:
		cores := (tasks + ntpc - 1) / ntpc
		n = (cores + maxCores - 1) / maxCores
	default:
		n = (tasks + maxCPUs - 1) / maxCPUs
	}
	return max(n, minN)
}
