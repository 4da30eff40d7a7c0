package jobs

import (
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// descUnavailPrefix starts the state description of a job waiting for
// nodes that are down, drained or otherwise out of use; the nodes follow
// as one sorted host range ("ReqNodeNotAvail, UnavailableNodes:n[2-3]").
const descUnavailPrefix = "ReqNodeNotAvail, UnavailableNodes:"

// DescTooFewUp is the state description (reason Resources) of a job that
// asks for more nodes than its partition has in use now.
const DescTooFewUp = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"

// unavailPending gives p, a pass's verdict on pending job j, the state
// description real slurmctld shows for ReqNodeNotAvail:
//
//   - a job that names no nodes and asks for more nodes than the
//     partition has usable waits for Resources with DescTooFewUp (the
//     scheduler's node count test comes before node selection);
//   - otherwise the description lists the partition's unusable nodes
//     (future nodes left out), only those among the job's required nodes
//     when it names some; the excluded nodes are not taken out. With none
//     left it is DescMayBeReserved;
//   - a job that names nodes and already waits for them keeps the list it
//     has: Slurm does not test it again until they are all back.
//
// Verdicts that carry a description of their own are left as they are.
func unavailPending(cl *Cluster, j *Job, p sched.Pending) sched.Pending {
	if p.Reason != sched.ReasonReqNodeNotAvail || p.Desc != "" || cl == nil {
		return p
	}
	part := unavailPartition(cl, j, p)
	if part == nil {
		return p
	}
	req := nodeIdxs(cl, j.ReqNodes)
	if len(req) == 0 && j.MinNodes > uint32(usableCount(cl, part)) {
		p.Reason, p.Desc = sched.ReasonResources, DescTooFewUp
		return p
	}
	if len(req) > 0 && j.Reason == uint16(sched.ReasonReqNodeNotAvail) &&
		strings.HasPrefix(j.StateDesc, descUnavailPrefix) {
		p.Desc = j.StateDesc
		return p
	}
	p.Desc = unavailDesc(cl, part, req)
	return p
}

// unavailDesc is the description naming the unusable nodes of part (of
// req only, when not empty).
func unavailDesc(cl *Cluster, part *sched.Partition, req []int) string {
	want := map[int]bool{}
	for _, ni := range req {
		want[ni] = true
	}
	var names []string
	for _, ni := range part.Nodes {
		if ni < 0 || ni >= len(cl.Nodes) || (len(req) > 0 && !want[ni]) {
			continue
		}
		st := cl.Nodes[ni].State
		if st.Usable() || st&sched.NodeFuture != 0 {
			continue
		}
		names = append(names, cl.Nodes[ni].Name)
	}
	if len(names) == 0 {
		return sched.DescMayBeReserved
	}
	return descUnavailPrefix + hostlist.CompressSorted(names)
}

// usableCount is how many nodes of part are in use now.
func usableCount(cl *Cluster, part *sched.Partition) int {
	n := 0
	for _, ni := range part.Nodes {
		if ni >= 0 && ni < len(cl.Nodes) && cl.Nodes[ni].State.Usable() {
			n++
		}
	}
	return n
}

// unavailPartition is the partition the verdict is about: the pass's, or
// the first of the job's that exists, the default one for a job naming
// none.
func unavailPartition(cl *Cluster, j *Job, p sched.Pending) *sched.Partition {
	if p.Partition != "" {
		if pt := cl.partition(p.Partition); pt != nil {
			return pt
		}
	}
	if j.Partition == "" {
		for i := range cl.Partitions {
			if cl.Partitions[i].Default {
				return &cl.Partitions[i]
			}
		}
	}
	for _, name := range strings.Split(j.Partition, ",") {
		if pt := cl.partition(name); pt != nil {
			return pt
		}
	}
	return nil
}

// isUnavailDesc reports whether desc is one unavailPending sets, to be
// cleared when the job's reason moves on.
func isUnavailDesc(desc string) bool {
	return strings.HasPrefix(desc, descUnavailPrefix) || desc == DescTooFewUp
}
