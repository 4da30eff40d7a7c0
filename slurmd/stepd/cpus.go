package stepd

import (
	"github.com/goslurm/goslurm/credential/jobcred"
)

// stepCPUs is the CPU count of a step on this node from its credential, as
// slurmd's _check_job_credential computes node_cpus: the step's cores in
// this node's slice of the core bitmap (found through the socket/core
// run-length groups in job host list order), scaled by CPUs per core
// (nodeCPUs / cores on the node). At least 1; fallback when the credential
// says nothing.
func stepCPUs(c *jobcred.Credential, node string, nodeCPUs int, fallback uint16) uint16 {
	if c == nil || c.Body.StepCoreBitmap == nil || c.Body.StepCoreBitmap.Len() == 0 {
		return fallback
	}
	idx := hostIndex(c.Body.JobHostlist.S, node)
	if idx < 0 {
		return fallback
	}
	first, last := coreSlice(c.Body.SocketGroups, idx)
	if last <= first {
		return fallback
	}
	n := c.Body.StepCoreBitmap.CountRange(first, last)
	if n == 0 {
		n = 1 // Slurm: "zero processors allocated to step"
	}
	if nodeCPUs > 0 {
		if f := nodeCPUs / (last - first); f > 1 {
			n *= f
		}
	}
	return uint16(n)
}
