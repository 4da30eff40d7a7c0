package sched

import (
	"slices"
	"strings"
)

// tooManyCPUs is _part_access_check's CPU test: the job needs more CPUs
// than the partition has, or than MaxCPUsPerNode allows over all its
// nodes (the product wraps at 32 bits, as slurmctld's does).
func (c *cluster) tooManyCPUs(p *Partition, cpus uint32) bool {
	var total uint32
	if pi, ok := c.partIdx[p.Name]; ok {
		total = c.partCPUs[pi] // summed once per pass: this runs per job
	} else {
		for _, ni := range p.Nodes {
			total += uint32(c.nodes[ni].CPUs)
		}
	}
	if cpus > total {
		return true
	}
	// 0 is a partition built without the limit: none, as elsewhere here.
	return p.MaxCPUsPerNode != 0 && cpus > p.MaxCPUsPerNode*uint32(len(p.Nodes))
}

// acctPolicy is part_policy_valid_acct as select_nodes calls it: the
// reason and the state description when p's account lists keep j out.
// A job whose account is not known (AccountUnknown) never passes
// AllowAccounts and always passes DenyAccounts.
func acctPolicy(p *Partition, j *Job) (Reason, string) {
	switch {
	case len(p.AllowAccounts) > 0:
		allow := strings.Join(p.AllowAccounts, ",")
		if j.AccountUnknown {
			return ReasonAccount, "Job's account not known, so it can't use this partition (" +
				p.Name + " allows " + allow + ")"
		}
		if !slices.Contains(p.AllowAccounts, j.Account) {
			return ReasonAccount, "Job's account not permitted to use this partition (" +
				p.Name + " allows " + allow + " not " + j.Account + ")"
		}
	case len(p.DenyAccounts) > 0 && !j.AccountUnknown && slices.Contains(p.DenyAccounts, j.Account):
		return ReasonAccount, "Job's account not permitted to use this partition (" +
			p.Name + " denies " + strings.Join(p.DenyAccounts, ",") + " including " + j.Account + ")"
	}
	return ReasonNone, ""
}

// reasonDesc is the state description that goes with reason why of job j
// in partition pi ("" for none): the account lists give one.
func (c *cluster) reasonDesc(j *Job, pi int, why Reason) string {
	if why != ReasonAccount {
		return ""
	}
	_, desc := acctPolicy(&c.snap.Partitions[pi], j)
	return desc
}
