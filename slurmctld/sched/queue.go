package sched

import (
	"slices"
	"sort"
)

// entry is one (job, partition) pair of the queue: a job that may run in
// several partitions is queued once per partition, as in Slurm.
type entry struct {
	ji   int // index in Snapshot.Pending
	pi   int
	rank int    // position of the partition in the job's list
	prio uint32 // the job's priority in that partition
}

// outcome is what the passes decided for one pending job.
type outcome struct {
	started   bool
	reserved  bool
	tested    bool
	reason    Reason
	startTime int64
	part      string
	desc      string
	// schedNodes are the nodes of the expected start (Pending.SchedNodes).
	schedNodes []int
	// skipped: the main pass stopped before the job (licenses.go).
	skipped bool
}

// setReason keeps the most telling reason when a job is queued in several
// partitions: waiting for resources or priority wins over a limit of one
// partition.
func (o *outcome) setReason(r Reason) { o.setReasonDesc(r, "") }

// setReasonDesc is setReason with the state description that goes with
// the reason; the description follows the reason kept.
func (o *outcome) setReasonDesc(r Reason, desc string) {
	waiting := func(x Reason) bool { return x == ReasonResources || x == ReasonPriority }
	if o.reason == ReasonNone || (waiting(r) && !waiting(o.reason)) {
		o.reason, o.desc = r, desc
	}
}

// buildQueue orders the pending jobs as Slurm does: partition
// PriorityTier, then job priority, then submit time, then job id. Jobs
// that cannot be considered at all get their reason in out.
func (c *cluster) buildQueue(out []outcome) []entry {
	s := c.snap
	def := -1
	for pi := range s.Partitions {
		if s.Partitions[pi].Default {
			def = pi
			break
		}
	}
	q := make([]entry, 0, len(s.Pending))
	for ji := range s.Pending {
		j := &s.Pending[ji]
		if c.skip != nil && c.skip[ji] {
			continue // dealt with by resvPass
		}
		if r := eligible(j, c.now); r != ReasonNone {
			out[ji].reason = r
			continue
		}
		n := 0
		if len(j.Partitions) == 0 {
			if def >= 0 {
				q = append(q, entry{ji: ji, pi: def, prio: j.Priority})
				n++
			}
		}
		for rank, name := range j.Partitions {
			// A partition named twice is queued once (Slurm keeps a
			// job's partition list without duplicates).
			if pi, ok := c.partIdx[name]; ok && !slices.Contains(j.Partitions[:rank], name) {
				prio := j.Priority
				if rank < len(j.PartitionPriorities) {
					prio = j.PartitionPriorities[rank]
				}
				q = append(q, entry{ji: ji, pi: pi, rank: rank, prio: prio})
				n++
			}
		}
		if n == 0 {
			out[ji].reason = ReasonPartConfig
		}
	}
	sort.Slice(q, func(a, b int) bool {
		ea, eb := &q[a], &q[b]
		ta, tb := s.Partitions[ea.pi].PriorityTier, s.Partitions[eb.pi].PriorityTier
		if ta != tb {
			return ta > tb
		}
		if ea.prio != eb.prio {
			return ea.prio > eb.prio
		}
		ja, jb := &s.Pending[ea.ji], &s.Pending[eb.ji]
		if ja.SubmitTime != jb.SubmitTime {
			return ja.SubmitTime < jb.SubmitTime
		}
		if ja.JobID != jb.JobID {
			return ja.JobID < jb.JobID
		}
		return ea.rank < eb.rank
	})
	return q
}

// plan turns the outcomes into a Plan; pending jobs keep the snapshot's
// order.
func (c *cluster) plan(starts []Start, out []outcome) *Plan {
	p := &Plan{Starts: starts, Preemptions: c.preempts}
	for ji := range c.snap.Pending {
		o := &out[ji]
		if o.started {
			continue
		}
		r := o.reason
		if r == ReasonNone {
			r = ReasonPriority
		}
		p.Pending = append(p.Pending, Pending{
			JobID:      c.snap.Pending[ji].JobID,
			Reason:     r,
			StartTime:  o.startTime,
			Partition:  o.part,
			Desc:       o.desc,
			SchedNodes: o.schedNodes,
			Skipped:    o.skipped && o.reason == ReasonNone,
		})
	}
	if c.planned != nil {
		for i, ok := c.planned.NextSet(0); ok; i, ok = c.planned.NextSet(i + 1) {
			p.Planned = append(p.Planned, int(i))
		}
	}
	return p
}
