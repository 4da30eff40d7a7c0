package jobs

import (
	"cmp"
	"log/slog"
	"slices"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Gang scheduling (PreemptMode=...,GANG; slurmctld's gang.c). A job
// running on cores of a partition of a lower PriorityTier (the scheduler
// places it there, sched/gang.go) "shadows" the jobs of that partition
// holding those cores: they are suspended, keeping their allocation and
// their priority, or preempted by their partition's mode when that is
// CANCEL or REQUEUE; once no shadow covers a suspended job any more, it is
// resumed. Jobs of one partition sharing cores (OverSubscribe=FORCE) take
// turns: one runs, the others are suspended, and every SchedulerTimeSlice
// seconds the timeslicer moves the running ones to the back of the
// partition's list and lets the next ones run.
//
// Partitions are looked at from the highest tier down: the jobs that run
// in higher tiers (and those that ended running and are still completing,
// which gang.c drops only once they are clean) are the shadow of the
// lower ones. In a partition the jobs are taken in the order of its list,
// first those in the active row, then the suspended ones: a job that
// overlaps the shadow or a job taken before it is suspended, a suspended
// one that does not is resumed. The lists are rebuilt from the job table
// after a restart (gs_init: running and gang-suspended jobs by start).

// gangState is what gang.c keeps between events: each partition's jobs in
// the order they joined it, and which of them the last timeslice put in
// the active row.
type gangState struct {
	// on: GANG was in PreemptMode at the last round.
	on    bool
	parts map[string][]gangEntry
	// lastSlice is when the timeslicer last ran (0: not started).
	lastSlice int64
}

type gangEntry struct {
	id uint32
	// sliced: put in the active row by a timeslice (GS_ACTIVE), not just
	// left running (GS_FILLER); the next timeslice moves it to the back.
	sliced bool
}

// gangMember is one job the gang logic looks at.
type gangMember struct {
	j *Job
	// done: ended while running and still completing; it casts its
	// shadow but is neither suspended nor resumed.
	done bool
}

// gang brings the jobs in line with the shadows and the partitions' lists
// (gang.c's _update_all_active_rows, after a job started or ended); the
// actions are their REQUEST_SUSPEND_INT (and preemptions).
func (m *Manager) gang(cl *Cluster, now int64) []Action {
	if cl == nil {
		return nil
	}
	if !cl.Config.Preempt.Gang {
		if !m.gangs.on {
			return nil
		}
		return m.gangWake(cl, now)
	}
	m.gangs.on = true
	return m.gangRun(cl, now, false)
}

// gangWake is gs_wake_jobs: GANG left PreemptMode (reconfigured), so the
// jobs gang suspended are resumed and its lists dropped.
func (m *Manager) gangWake(cl *Cluster, now int64) []Action {
	var actions []Action
	for _, j := range m.Jobs() {
		// gang.c leaves het jobs alone (het_job_id checks).
		if j.Base() == msg.JobSuspended && j.Priority != 0 && j.HetJobID == 0 {
			m.logf(slog.LevelInfo, "gang waking preempted JobId=%d", j.ID)
			_ = m.suspendOp(j, msg.ResumeJob, false, cl, now, &actions)
		}
	}
	m.gangs = gangState{}
	return actions
}

// gangTick is the timeslicer, called every second: every TimeSlice
// seconds the partitions with jobs suspended take their turn.
func (m *Manager) gangTick(cl *Cluster, now int64) []Action {
	if cl == nil || !cl.Config.Preempt.Gang {
		return nil
	}
	g := &m.gangs
	if g.lastSlice == 0 {
		g.lastSlice = now
		return nil
	}
	if now < g.lastSlice+max(cl.Config.Preempt.TimeSlice, 5) {
		return nil
	}
	g.lastSlice = now
	return m.gangRun(cl, now, true)
}

// gangRun is one round over the partitions; with cycle, a timeslice.
func (m *Manager) gangRun(cl *Cluster, now int64, cycle bool) []Action {
	members := m.gangMembers()
	m.gangSync(members)
	parts := make([]*sched.Partition, 0, len(cl.Partitions))
	for i := range cl.Partitions {
		parts = append(parts, &cl.Partitions[i])
	}
	slices.SortStableFunc(parts, func(x, y *sched.Partition) int { return cmp.Compare(y.PriorityTier, x.PriorityTier) })
	r := &gangRound{m: m, cl: cl, now: now, shadow: gangRow{}}
	for k, p := range parts {
		if k > 0 && p.PriorityTier != parts[k-1].PriorityTier {
			for _, j := range r.next {
				r.shadow.add(j)
			}
			r.shadows += len(r.next)
			r.next = r.next[:0]
		}
		list := m.gangs.parts[p.Name]
		if len(list) == 0 {
			continue
		}
		if cycle && r.anySuspended(list, members) {
			r.cycle(list, members)
		} else {
			r.update(list, members)
		}
	}
	return r.actions
}

// gangMembers are the jobs gang scheduling holds, by id: running ones,
// those it suspended, and those that ended running and still complete.
func (m *Manager) gangMembers() map[uint32]gangMember {
	out := map[uint32]gangMember{}
	for _, j := range m.jobs {
		// gang.c keeps het jobs out of its lists (het_job_id checks in
		// gs_job_start, gs_job_fini, _scan_slurm_job_list).
		if len(j.NodeIdx) == 0 || j.HetJobID != 0 {
			continue
		}
		switch {
		case j.Base() == msg.JobRunning:
			out[j.ID] = gangMember{j: j}
		case j.Base() == msg.JobSuspended && j.Priority != 0:
			out[j.ID] = gangMember{j: j}
		case j.Finished() && j.IsCompleting() && !(j.SuspendTime != 0 && j.EndTime == j.SuspendTime):
			out[j.ID] = gangMember{j: j, done: true}
		}
	}
	return out
}

// gangSync drops from the lists the jobs gang no longer holds and appends
// the new ones (gs_job_start, by start time).
func (m *Manager) gangSync(members map[uint32]gangMember) {
	g := &m.gangs
	if g.parts == nil {
		g.parts = map[string][]gangEntry{}
	}
	known := make(map[uint32]bool, len(members))
	for name, list := range g.parts {
		kept := list[:0]
		for _, e := range list {
			if mb, ok := members[e.id]; ok && mb.j.Partition == name {
				kept = append(kept, e)
				known[e.id] = true
			}
		}
		if len(kept) == 0 {
			delete(g.parts, name)
			continue
		}
		g.parts[name] = kept
	}
	var added []*Job
	for id, mb := range members {
		if !known[id] {
			added = append(added, mb.j)
		}
	}
	slices.SortFunc(added, func(x, y *Job) int {
		return cmp.Or(cmp.Compare(x.StartTime, y.StartTime), cmp.Compare(x.ID, y.ID))
	})
	for _, j := range added {
		g.parts[j.Partition] = append(g.parts[j.Partition], gangEntry{id: j.ID})
	}
}

// gangRound is one pass over the partitions.
type gangRound struct {
	m       *Manager
	cl      *Cluster
	now     int64
	shadow  gangRow // what higher tiers run
	shadows int     // how many jobs cast it
	next    []*Job  // what this tier runs: shadows of the tiers below
	actions []Action
}

func (r *gangRound) anySuspended(list []gangEntry, members map[uint32]gangMember) bool {
	for _, e := range list {
		if members[e.id].j.Base() == msg.JobSuspended {
			return true
		}
	}
	return false
}

// update is _update_active_row: the jobs of the active row keep their
// place if they still fit (the timeslice's first, then the others), then
// suspended ones that fit are resumed.
func (r *gangRound) update(list []gangEntry, members map[uint32]gangMember) {
	row := r.shadow.clone()
	for pass := range 3 {
		for i := range list {
			e := &list[i]
			mb := members[e.id]
			susp := mb.j.Base() == msg.JobSuspended
			switch pass {
			case 0:
				if !e.sliced || susp {
					continue
				}
			case 1:
				if e.sliced || susp {
					continue
				}
			case 2:
				if !susp {
					continue
				}
			}
			fits := !row.overlaps(mb.j)
			switch {
			case fits && susp:
				if !r.resume(mb.j) {
					continue
				}
				e.sliced = false
			case fits:
			case mb.done:
				continue
			default:
				r.suspend(mb.j)
				e.sliced = false
				continue
			}
			row.add(mb.j)
			r.next = append(r.next, mb.j)
		}
	}
}

// cycle is _cycle_job_list: the jobs the last timeslice ran go to the
// back of the list, the active row is filled anew in list order, and the
// jobs left out are suspended, those taken in resumed.
func (r *gangRound) cycle(list []gangEntry, members map[uint32]gangMember) {
	order := make([]gangEntry, 0, len(list))
	for _, e := range list {
		if !e.sliced {
			order = append(order, e)
		}
	}
	for _, e := range list {
		if e.sliced {
			order = append(order, gangEntry{id: e.id})
		}
	}
	copy(list, order)
	row := r.shadow.clone()
	for i := range list {
		list[i].sliced = false
		if j := members[list[i].id].j; !row.overlaps(j) {
			row.add(j)
			list[i].sliced = true
		}
	}
	for i := range list {
		mb := members[list[i].id]
		if !list[i].sliced && mb.j.Base() == msg.JobRunning {
			r.suspend(mb.j)
		}
	}
	for i := range list {
		mb := members[list[i].id]
		if list[i].sliced && mb.j.Base() == msg.JobSuspended && !r.resume(mb.j) {
			list[i].sliced = false
		}
		if list[i].sliced {
			r.next = append(r.next, mb.j)
		}
	}
}

// suspend takes a running job out of the active row: suspended, or
// preempted when its partition's mode says so and a shadow is what
// pushed it out.
func (r *gangRound) suspend(j *Job) {
	mode := preemptMode(j, r.cl)
	if r.shadows > 0 && mode != sched.PreemptOff && mode != sched.PreemptSuspend {
		// _preempt_job_dequeue's job_signal and job_requeue leave
		// the preempt time alone.
		was := j.PreemptTime
		r.actions = append(r.actions, r.m.preemptNow(j, r.cl, r.now)...)
		j.PreemptTime = was
		return
	}
	if r.m.suspendOp(j, msg.SuspendJob, false, r.cl, r.now, &r.actions) == nil {
		r.m.logf(slog.LevelDebug, "gang: suspending JobId=%d", j.ID)
	}
}

// resume resumes a job gang suspended; false if it cannot be (a node of
// it is DOWN).
func (r *gangRound) resume(j *Job) bool {
	if r.m.suspendOp(j, msg.ResumeJob, false, r.cl, r.now, &r.actions) != nil {
		return false
	}
	r.m.logf(slog.LevelDebug, "gang: resuming JobId=%d", j.ID)
	return true
}

// gangRow is the resources of the shadow: per node index, the cores
// (all of the node for a job without a core list).
type gangRow map[int]*gangCores

type gangCores struct {
	all   bool
	cores []uint64
}

func (r gangRow) clone() gangRow {
	out := make(gangRow, len(r))
	for ni, c := range r {
		out[ni] = &gangCores{all: c.all, cores: slices.Clone(c.cores)}
	}
	return out
}

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
