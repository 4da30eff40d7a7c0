package jobs

import (
	"cmp"
	"log/slog"
	"slices"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Gang preemption (PreemptMode=...,GANG; slurmctld's gang.c without its
// timeslicer). A job running on cores of a partition of a lower
// PriorityTier (the scheduler places it there, sched/gang.go) "shadows"
// the jobs of that partition holding those cores: they are suspended,
// keeping their allocation and their priority, or preempted by their
// partition's mode when that is CANCEL or REQUEUE; once no shadow covers
// a suspended job any more, it is resumed.
//
// The state is derived from the job table each time rather than kept:
// partitions from the highest tier down, the resources of the jobs that
// run in higher tiers (and of those that ended running and are still
// completing, which gang.c drops only once they are clean) are the
// shadow, and a job of the partition that overlaps the shadow is
// suspended, a suspended one that does not is resumed. Jobs of one
// partition do not shadow each other: that is the timeslicer's business
// (OverSubscribe=FORCE), which goslurm does not have.

// gangMember is one job the gang logic looks at.
type gangMember struct {
	j *Job
	// done: ended while running and still completing; it casts its
	// shadow but is neither suspended nor resumed.
	done bool
}

// gang suspends and resumes jobs as the shadows of higher tier jobs say;
// the actions are their REQUEST_SUSPEND_INT (and preemptions).
func (m *Manager) gang(cl *Cluster, now int64) []Action {
	if cl == nil || !cl.Config.Preempt.Gang {
		return nil
	}
	byPart := map[string][]gangMember{}
	for _, j := range m.jobs {
		if len(j.NodeIdx) == 0 {
			continue
		}
		switch {
		case j.Base() == msg.JobRunning:
		case j.Base() == msg.JobSuspended && j.Priority != 0:
		case j.Finished() && j.IsCompleting() && !(j.SuspendTime != 0 && j.EndTime == j.SuspendTime):
			byPart[j.Partition] = append(byPart[j.Partition], gangMember{j: j, done: true})
			continue
		default:
			// Pending, held by scontrol suspend, or gone.
			continue
		}
		byPart[j.Partition] = append(byPart[j.Partition], gangMember{j: j})
	}
	if len(byPart) == 0 {
		return nil
	}
	parts := make([]*sched.Partition, 0, len(cl.Partitions))
	for i := range cl.Partitions {
		parts = append(parts, &cl.Partitions[i])
	}
	slices.SortStableFunc(parts, func(x, y *sched.Partition) int { return cmp.Compare(y.PriorityTier, x.PriorityTier) })
	var actions []Action
	shadow := gangRow{}
	var next []*Job // this tier's running jobs, shadows of the tiers below
	for k, p := range parts {
		if k > 0 && p.PriorityTier != parts[k-1].PriorityTier {
			for _, j := range next {
				shadow.add(j)
			}
			next = next[:0]
		}
		members := byPart[p.Name]
		// Running jobs keep their place first, then the suspended ones
		// in the order they came (gang.c's job list).
		slices.SortStableFunc(members, func(x, y gangMember) int {
			xs, ys := x.j.Base() == msg.JobSuspended, y.j.Base() == msg.JobSuspended
			switch {
			case xs != ys && xs:
				return 1
			case xs != ys:
				return -1
			}
			return cmp.Or(cmp.Compare(x.j.StartTime, y.j.StartTime), cmp.Compare(x.j.ID, y.j.ID))
		})
		for _, g := range members {
			j := g.j
			fits := !shadow.overlaps(j)
			switch {
			case g.done:
				if fits {
					next = append(next, j)
				}
			case fits && j.Base() == msg.JobSuspended:
				if m.suspendOp(j, msg.ResumeJob, false, cl, now, &actions) == nil {
					m.logf(slog.LevelDebug, "gang: resuming JobId=%d", j.ID)
					next = append(next, j)
				}
			case fits:
				next = append(next, j)
			case j.Base() == msg.JobRunning:
				mode := preemptMode(j, cl)
				if !shadow.empty() && mode != sched.PreemptOff && mode != sched.PreemptSuspend {
					actions = append(actions, m.preemptNow(j, cl, now)...)
					continue
				}
				if m.suspendOp(j, msg.SuspendJob, false, cl, now, &actions) == nil {
					m.logf(slog.LevelDebug, "gang: suspending JobId=%d", j.ID)
				}
			}
		}
	}
	return actions
}

// gangRow is the resources of the shadow: per node index, the cores
// (all of the node for a job without a core list).
type gangRow map[int]*gangCores

type gangCores struct {
	all   bool
	cores []uint64
}

func (r gangRow) empty() bool { return len(r) == 0 }

// add puts job j's resources in the row.
func (r gangRow) add(j *Job) {
	for k, ni := range j.NodeIdx {
		c := r[ni]
		if c == nil {
			c = &gangCores{}
			r[ni] = c
		}
		if k >= len(j.NodeCores) || len(j.NodeCores[k]) == 0 {
			c.all = true
			continue
		}
		for _, core := range j.NodeCores[k] {
			w := int(core / 64)
			for len(c.cores) <= w {
				c.cores = append(c.cores, 0)
			}
			c.cores[w] |= 1 << (core % 64)
		}
	}
}

// overlaps reports whether job j holds a core of the row (gang.c's
// job_fits_into_cores failing, cores being the unit under cons_tres).
func (r gangRow) overlaps(j *Job) bool {
	for k, ni := range j.NodeIdx {
		c := r[ni]
		if c == nil {
			continue
		}
		if c.all || k >= len(j.NodeCores) || len(j.NodeCores[k]) == 0 {
			return true
		}
		for _, core := range j.NodeCores[k] {
			if w := int(core / 64); w < len(c.cores) && c.cores[w]&(1<<(core%64)) != 0 {
				return true
			}
		}
	}
	return false
}
