package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
)

// Dependency types (slurm.h SLURM_DEPEND_*), the ones implemented.
const (
	DepAfter      = "after"
	DepAfterAny   = "afterany"
	DepAfterOK    = "afterok"
	DepAfterNotOK = "afternotok"
	DepAfterCorr  = "aftercorr"
	DepSingleton  = "singleton"
)

// Dependency is a parsed --dependency.
type Dependency struct {
	Or    bool // "?" separated: any one satisfies
	Items []DepItem
}

// DepItem is one "type:job" term. Task is NoVal for a job, Infinite for
// every task of an array ("_*", or an array's id: shown so).
type DepItem struct {
	Type  string
	JobID uint32
	Task  uint32
	// Time is "+minutes" in seconds: after waits that long past the
	// start of its job (the other types show it and ignore it).
	Time uint32 `json:",omitempty"`
	// State: 0 unfulfilled, 1 fulfilled, 2 failed (can never be met).
	State uint8
}

const (
	depUnfulfilled uint8 = 0
	depFulfilled   uint8 = 1
	depFailed      uint8 = 2
)

// parseDependency reads Slurm's syntax: terms separated by ',' (all) or
// '?' (any, not mixed), each "type:id[_task][+minutes][:id...]" or
// "singleton". As real slurmctld parses it, a "+minutes" holds for the
// ids after it in the term too. afterburstbuffer and expand are not
// implemented and are refused (ESLURM_DEPENDENCY) rather than ignored.
func parseDependency(s string) (*Dependency, bool) {
	if s == "" {
		return nil, true
	}
	d := &Dependency{}
	sep := ","
	if strings.Contains(s, "?") {
		if strings.Contains(s, ",") {
			return nil, false
		}
		d.Or, sep = true, "?"
	}
	for _, term := range strings.Split(s, sep) {
		if term == DepSingleton {
			d.Items = append(d.Items, DepItem{Type: DepSingleton, Task: NoVal})
			continue
		}
		parts := strings.Split(term, ":")
		typ := parts[0]
		if len(parts) == 1 {
			// A bare job id means afterany.
			typ, parts = DepAfterAny, []string{DepAfterAny, parts[0]}
		}
		switch typ {
		case DepAfter, DepAfterAny, DepAfterOK, DepAfterNotOK, DepAfterCorr:
		default:
			return nil, false
		}
		var secs uint32
		for _, id := range parts[1:] {
			if i := strings.IndexByte(id, '+'); i >= 0 {
				mins, err := strconv.ParseUint(id[i+1:], 10, 31)
				if err != nil || mins == 0 || mins > 1<<31/60 {
					return nil, false
				}
				id, secs = id[:i], uint32(mins)*60
			}
			item := DepItem{Type: typ, Task: NoVal, Time: secs}
			js := id
			if i := strings.IndexByte(id, '_'); i >= 0 {
				js = id[:i]
				item.Task = Infinite
				if id[i+1:] != "*" {
					t, err := strconv.ParseUint(id[i+1:], 10, 32)
					if err != nil {
						return nil, false
					}
					item.Task = uint32(t)
				}
			}
			v, err := strconv.ParseUint(js, 10, 32)
			if err != nil || v == 0 {
				return nil, false
			}
			item.JobID = uint32(v)
			d.Items = append(d.Items, item)
		}
	}
	return d, len(d.Items) > 0
}

// String is the dependency as squeue and scontrol show it:
// "afterok:12(unfulfilled),afterany:13_2(failed)"; fulfilled terms of an
// AND list are dropped, as Slurm removes them.
func (d *Dependency) String() string {
	if d == nil {
		return ""
	}
	var b strings.Builder
	sep := ","
	if d.Or {
		sep = "?"
	}
	for _, it := range d.Items {
		if !d.Or && it.State == depFulfilled {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(it.Type)
		if it.Type != DepSingleton {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(uint64(it.JobID), 10))
			switch it.Task {
			case NoVal:
			case Infinite:
				b.WriteString("_*")
			default:
				b.WriteByte('_')
				b.WriteString(strconv.FormatUint(uint64(it.Task), 10))
			}
			if it.Time != 0 {
				b.WriteByte('+')
				b.WriteString(strconv.FormatUint(uint64(it.Time/60), 10))
			}
		}
		switch it.State {
		case depUnfulfilled:
			b.WriteString("(unfulfilled)")
		case depFailed:
			b.WriteString("(failed)")
		case depFulfilled:
			b.WriteString("(fulfilled)")
		}
	}
	return b.String()
}

// depTargets are the records a term waits for: the job itself, or every
// task of an array (meta record included while tasks are pending).
func (m *Manager) depTargets(it DepItem) []*Job {
	var out []*Job
	if it.Task == Infinite {
		it.Task = NoVal
	}
	j := m.jobs[it.JobID]
	if j != nil && it.Task == NoVal && (j.ArrayJobID == 0 || j.ArrayJobID != j.ID) {
		return []*Job{j}
	}
	arrayID := it.JobID
	if j != nil {
		arrayID = j.ArrayJobID
	}
	if it.Task != NoVal {
		for _, t := range m.jobs {
			if t.ArrayJobID == arrayID && (t.ArrayTaskID == it.Task ||
				t.IsArrayMeta() && containsTask(t.Array.Pending, it.Task)) {
				return []*Job{t}
			}
		}
		return nil
	}
	for _, t := range m.jobs {
		if t.ArrayJobID == arrayID {
			out = append(out, t)
		}
	}
	return out
}

func containsTask(ids []uint32, t uint32) bool {
	for _, v := range ids {
		if v == t {
			return true
		}
	}
	return false
}

// depOK reports a job that ended COMPLETED with exit code 0.
func depOK(j *Job) bool { return j.Base() == msg.JobComplete && j.ExitCode == 0 }

// evalItem decides one term now.
func (m *Manager) evalItem(self *Job, it DepItem, now int64) uint8 {
	if it.Type == DepSingleton {
		for _, o := range m.jobs {
			if o == self || o.UserID != self.UserID || o.Name != self.Name || o.Finished() {
				continue
			}
			if !o.Pending() || o.ID < self.ID {
				return depUnfulfilled
			}
		}
		return depFulfilled
	}
	if it.Type == DepAfterCorr {
		return m.evalCorrespond(self, it)
	}
	targets := m.depTargets(it)
	if len(targets) == 0 {
		// Purged: Slurm treats a job that is gone as done (and fine).
		return depFulfilled
	}
	state := depFulfilled
	for _, t := range targets {
		switch it.Type {
		case DepAfter:
			if t.Pending() || it.Time != 0 && (t.StartTime == 0 || now-t.StartTime < int64(it.Time)) {
				state = depUnfulfilled
			}
		case DepAfterAny:
			if !t.Finished() {
				state = depUnfulfilled
			}
		case DepAfterOK:
			if !t.Finished() {
				if state != depFailed {
					state = depUnfulfilled
				}
			} else if !depOK(t) {
				return depFailed
			}
		case DepAfterNotOK:
			if !t.Finished() {
				if state != depFailed {
					state = depUnfulfilled
				}
			} else if depOK(t) {
				return depFailed
			}
		}
	}
	return state
}

// evalDependency updates j's terms and says whether j may run (ok), must
// wait (wait), or never can (failed).
func (m *Manager) evalDependency(j *Job, now int64) (wait, failed bool) {
	d := j.Dependency
	if d == nil {
		return false, false
	}
	anyOK, allFailed := false, true
	wait = false
	for i := range d.Items {
		it := &d.Items[i]
		if it.State == depUnfulfilled || it.Type == DepSingleton {
			it.State = m.evalItem(j, *it, now)
		}
		switch it.State {
		case depFulfilled:
			anyOK = true
			allFailed = false
		case depUnfulfilled:
			allFailed = false
			wait = true
		case depFailed:
			if !d.Or {
				failed = true
			}
		}
	}
	if d.Or {
		if anyOK {
			return false, false
		}
		return !allFailed, allFailed
	}
	if failed {
		return false, true
	}
	return wait, false
}

// validDependency checks a new dependency at submit or update: it may not
// name the job itself. A job id that names no job is accepted, as
// slurmctld 22.05 does (evalItem then counts it as done). A term naming
// an array by its id stands for all its tasks, as _find_dependent_job_ptr
// makes it (shown "id_*").
func (m *Manager) validDependency(d *Dependency, self uint32) bool {
	if d == nil {
		return true
	}
	for i := range d.Items {
		it := &d.Items[i]
		if it.Type == DepSingleton {
			continue
		}
		if it.JobID == self {
			return false
		}
		if it.Task == NoVal && m.isArrayID(it.JobID) {
			it.Task = Infinite
		}
	}
	return true
}

// isArrayID reports an id that is a job array's own id (its meta record,
// or its first task's record once all are split off).
func (m *Manager) isArrayID(id uint32) bool {
	if j := m.jobs[id]; j != nil {
		return j.ArrayJobID == id && (j.ArrayTaskID != NoVal || j.Array != nil)
	}
	for _, j := range m.jobs {
		if j.ArrayJobID == id {
			return true
		}
	}
	return false
}

// evalCorrespond decides an aftercorr term: an array task waits for the
// task of the same id of the other job (it must end COMPLETED with exit
// code 0). Without such a task, and for the meta record of pending
// tasks, the other job as a whole decides; there a failure leaves the
// meta record waiting (its tasks, split off one by one by
// splitCorrespond, fail on their own).
func (m *Manager) evalCorrespond(self *Job, it DepItem) uint8 {
	if self.ArrayTaskID != NoVal && !self.IsArrayMeta() {
		if dc := m.depTargets(DepItem{JobID: it.JobID, Task: self.ArrayTaskID}); len(dc) == 1 {
			switch t := dc[0]; {
			case !t.Finished():
				return depUnfulfilled
			case depOK(t):
				return depFulfilled
			default:
				return depFailed
			}
		}
	}
	targets := m.depTargets(DepItem{JobID: it.JobID, Task: NoVal})
	state := depFulfilled
	for _, t := range targets {
		switch {
		case !t.Finished():
			return depUnfulfilled
		case !depOK(t):
			state = depFailed
		}
	}
	if state == depFailed && self.IsArrayMeta() {
		return depUnfulfilled
	}
	return state
}

// corrSplitMax is correspond_after_task_cnt's default: tasks of an array
// waiting on aftercorr are split off while fewer records of it pend.
const corrSplitMax = 10

// splitCorrespond is build_job_queue's split for aftercorr: each pending
// meta record of an array with such a dependency gives its first task a
// record of its own (one per pass), while fewer than ten records of the
// array pend, so each task's dependency is decided on its own.
func (m *Manager) splitCorrespond(now int64) {
	var metas []*Job
	m.sortOrder()
	for _, id := range m.order {
		j := m.jobs[id]
		if j.Pending() && j.IsArrayMeta() && hasCorrespond(j.Dependency) {
			metas = append(metas, j)
		}
	}
	if len(metas) == 0 {
		return
	}
	pending := map[uint32]int{}
	for _, meta := range metas {
		pending[meta.ArrayJobID] = 0
	}
	for _, j := range m.jobs {
		if _, ok := pending[j.ArrayJobID]; ok && j.ArrayJobID != 0 && j.Pending() {
			pending[j.ArrayJobID]++
		}
	}
	for _, meta := range metas {
		if pending[meta.ArrayJobID] < corrSplitMax {
			m.splitTask(meta, now)
		}
	}
}

func hasCorrespond(d *Dependency) bool {
	if d == nil {
		return false
	}
	for _, it := range d.Items {
		if it.Type == DepAfterCorr {
			return true
		}
	}
	return false
}
