package jobs

import "github.com/goslurm/goslurm/protocol/msg"

// node_req values of job_resources (NODE_CR_*).
const (
	nodeCRAvailable = 0
	nodeCROneRow    = 1
	nodeCRReserved  = 64000
)

// jobResources is the job_resources block RESPONSE_JOB_INFO carries under
// SHOW_DETAIL for a job that holds nodes: its CPUs and memory per node, the
// node layouts run-length encoded, and its cores as one bitmap over the
// cores of all its nodes, node after node (none in use by steps here).
func (m *Manager) jobResources(j *Job, cl *Cluster) *msg.JobResources {
	if len(j.NodeIdx) == 0 || len(j.NodeCPUs) != len(j.NodeIdx) {
		return nil
	}
	r := &msg.JobResources{NCPUs: j.TotalCPUs, NodeReq: nodeCROneRow, Nodes: ns(j.nodeList())}
	switch j.Shared {
	case 0:
		r.NodeReq, r.WholeNode = nodeCRReserved, 1
	case 1:
		r.NodeReq = nodeCRAvailable
	}
	total := 0
	var cores []int
	for k, i := range j.NodeIdx {
		if i < 0 || i >= len(cl.Nodes) {
			return nil
		}
		n := &cl.Nodes[i]
		if k == 0 {
			r.ThreadsPerCore = n.ThreadsPerCore
		}
		c := uint16(j.NodeCPUs[k])
		if l := len(r.CPUArrayValue); l > 0 && r.CPUArrayValue[l-1] == c {
			r.CPUArrayReps[l-1]++
		} else {
			r.CPUArrayValue = append(r.CPUArrayValue, c)
			r.CPUArrayReps = append(r.CPUArrayReps, 1)
		}
		r.CPUs = append(r.CPUs, c)
		r.CPUsUsed = append(r.CPUsUsed, 0)
		var mem uint64
		if k < len(j.NodeMem) {
			mem = j.NodeMem[k]
		}
		r.MemoryAllocated = append(r.MemoryAllocated, mem)
		r.MemoryUsed = append(r.MemoryUsed, 0)
		if l := len(r.SocketsPerNode); l > 0 && r.SocketsPerNode[l-1] == n.Sockets && r.CoresPerSocket[l-1] == n.CoresPerSocket {
			r.SockCoreRepCount[l-1]++
		} else {
			r.SocketsPerNode = append(r.SocketsPerNode, n.Sockets)
			r.CoresPerSocket = append(r.CoresPerSocket, n.CoresPerSocket)
			r.SockCoreRepCount = append(r.SockCoreRepCount, 1)
		}
		if k < len(j.NodeCores) && len(j.NodeCores[k]) > 0 {
			for _, c := range j.NodeCores[k] {
				if int(c) < n.Cores() {
					cores = append(cores, total+int(c))
				}
			}
		} else {
			for c := 0; c < n.Cores(); c++ { // whole node
				cores = append(cores, total+c)
			}
		}
		total += n.Cores()
	}
	if total == 0 {
		return nil
	}
	r.CoreBitmap = msg.BitmapOf(total, cores...)
	r.CoreBitmapUsed = msg.BitmapOf(total)
	return r
}
