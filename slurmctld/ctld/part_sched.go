package ctld

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// The scheduler's view of the node and partition tables follows the
// controller's records, not slurm.conf: scontrol update changes
// partitions (limits, members, flags, state) and node features and
// weights, and later jobs must be scheduled with what is in force.

// syncConf writes the partition's flags, state and members back into its
// conf.Partition, which the scheduler's view is built from.
func (p *Partition) syncConf() {
	cp := p.Conf
	cp.Default = p.Flags&msg.PartFlagDefault != 0
	cp.Hidden = p.Flags&msg.PartFlagHidden != 0
	noRoot := p.Flags&msg.PartFlagNoRoot != 0
	cp.DisableRootJobs = &noRoot
	cp.RootOnly = p.Flags&msg.PartFlagRootOnly != 0
	cp.ReqResv = p.Flags&msg.PartFlagReqResv != 0
	cp.LLN = p.Flags&msg.PartFlagLLN != 0
	cp.ExclusiveUser = p.Flags&msg.PartFlagExclusiveUser != 0
	cp.State = partStateName(p.StateUp)
	names := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		names[i] = n.Name
	}
	cp.NodeNames = names
	p.sched = nil
}

// schedPartition builds (once per change) the scheduler's record of p.
// Called under the write lock.
func (c *Controller) schedPartition(p *Partition, lookup sched.GroupLookup) (sched.Partition, error) {
	if p.sched != nil {
		return *p.sched, nil
	}
	p.syncConf()
	cc := *c.cfg.Conf
	cc.Partitions = []*conf.Partition{p.Conf}
	cc.DownNodes = nil
	snap, err := sched.FromConf(&cc, lookup)
	if err != nil {
		return sched.Partition{}, fmt.Errorf("partition %s: %w", p.Name, err)
	}
	if len(snap.Partitions) != 1 {
		return sched.Partition{}, fmt.Errorf("partition %s: no scheduler view", p.Name)
	}
	sp := snap.Partitions[0]
	p.sched = &sp
	return sp, nil
}

// schedPartitions returns a fresh slice with the scheduler's view of every
// partition, states as they are now. Called under the write lock.
func (c *Controller) schedPartitions(lookup sched.GroupLookup) ([]sched.Partition, error) {
	out := make([]sched.Partition, len(c.parts))
	for i, p := range c.parts {
		sp, err := c.schedPartition(p, lookup)
		if err != nil {
			return nil, err
		}
		sp.State = schedPartState(p.StateUp)
		sp.Alternate = p.Conf.Alternate
		if strings.EqualFold(sp.Alternate, "none") {
			sp.Alternate = ""
		}
		sp.DisableRootJobs = p.Flags&msg.PartFlagNoRoot != 0
		sp.AllocNodes = p.Conf.AllocNodes
		if sp.AllowGIDs != nil {
			// Through the group cache, refreshed as slurmctld's
			// allow_uids (groups.go): never nil, so that the
			// members decide.
			sp.AllowUIDs = GroupMembers(strings.Join(sp.AllowGroups, ","))
		}
		out[i] = sp
	}
	return out, nil
}

// schedNodes refreshes the scheduler's node records in place: state,
// active and available features, weight, specialized cores and memory.
// It reports whether any of these but the state changed: the node
// configuration the submission test keeps (jobs.Cluster.NodesChanged).
// Called under the write lock.
func (c *Controller) schedNodes(dst []sched.Node) bool {
	changed := false
	for i, n := range c.nodes {
		d := &dst[i]
		d.State = schedNodeState(n)
		if !sameSlice(d.Features, n.schedFeatures) {
			d.Features, changed = n.schedFeatures, true
		}
		if !sameFeatures(d.AvailFeatures, n.Features) {
			d.AvailFeatures, changed = splitFeatures(n.Features), true
		}
		weight := schedPowerWeight(n) // powersave_jobs.go
		if d.Weight != weight || d.MemSpec != n.MemSpecLimit || !sameSlice(d.SpecCores, n.specCores) {
			d.Weight, d.MemSpec, d.SpecCores, changed = weight, n.MemSpecLimit, n.specCores, true
		}
	}
	return changed
}

// sameSlice reports whether a and b are the same slice (same elements in
// the same memory), not merely equal: the node records replace these
// lists when they change, never edit them, so this is enough and costs no
// comparison of elements.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameFeatures reports whether list is s split at commas, without
// allocating: the view is refreshed on every submission and the
// available features rarely change.
func sameFeatures(list []string, s string) bool {
	if s == "" {
		return len(list) == 0
	}
	for i, f := range list {
		if i > 0 {
			if s == "" || s[0] != ',' {
				return false
			}
			s = s[1:]
		}
		if !strings.HasPrefix(s, f) {
			return false
		}
		s = s[len(f):]
	}
	return len(list) > 0 && s == ""
}
