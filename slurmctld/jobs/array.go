package jobs

import (
	"sort"
	"strconv"
	"strings"
)

// parseArray parses --array ("0-15:4,20,30-31%2") into its task ids
// (ascending) and the throttle, as _valid_array_inx: ids must be below
// MaxArraySize, a step must be positive, and "%N" applies to the whole
// request.
func parseArray(spec string, maxSize uint32) (tasks []uint32, throttle uint32, ok bool) {
	if maxSize == 0 {
		return nil, 0, false
	}
	s := spec
	if i := strings.IndexByte(s, '%'); i >= 0 {
		n, err := strconv.ParseUint(s[i+1:], 10, 32)
		if err != nil {
			return nil, 0, false
		}
		throttle = uint32(n)
		s = s[:i]
	}
	set := map[uint32]bool{}
	for _, tok := range strings.Split(s, ",") {
		if tok == "" {
			return nil, 0, false
		}
		step := uint64(1)
		if i := strings.IndexByte(tok, ':'); i >= 0 {
			n, err := strconv.ParseUint(tok[i+1:], 10, 32)
			if err != nil || n == 0 {
				return nil, 0, false
			}
			step, tok = n, tok[:i]
		}
		lo, hi := tok, tok
		if i := strings.IndexByte(tok, '-'); i >= 0 {
			lo, hi = tok[:i], tok[i+1:]
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil || a > b || b >= uint64(maxSize) {
			return nil, 0, false
		}
		for v := a; v <= b; v += step {
			set[uint32(v)] = true
		}
	}
	for v := range set {
		tasks = append(tasks, v)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i] < tasks[j] })
	return tasks, throttle, len(tasks) > 0
}

// rangeString writes ids (ascending) as Slurm's ranged form "0-3,7,9-10".
func rangeString(ids []uint32) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(ids[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(ids[j]), 10))
		}
		i = j + 1
	}
	return b.String()
}

// hexTasks is array_task_str as the controller packs it: the hex bitmap of
// pending task ids ("0x..."), bit i = task i, as bit_fmt_hexmask writes it.
func hexTasks(ids []uint32) string {
	if len(ids) == 0 {
		return ""
	}
	top := ids[len(ids)-1]
	ndig := int(top/4) + 1
	digits := make([]byte, ndig)
	for _, id := range ids {
		digits[ndig-1-int(id/4)] |= 1 << (id % 4)
	}
	const hex = "0123456789ABCDEF"
	for i := range digits {
		digits[i] = hex[digits[i]]
	}
	return "0x" + string(digits)
}

// arrayRunning counts the tasks of array arrayID that hold resources (the
// throttle counts them) and, separately, all tasks not finished.
func (m *Manager) arrayRunning(arrayID uint32) int {
	n := 0
	for _, j := range m.jobs {
		if j.ArrayJobID == arrayID && j.ArrayTaskID != NoVal && j.Running() {
			n++
		}
	}
	return n
}

// splitTask takes the lowest pending task off meta and returns the job
// record that runs it: a new record with a new id, or meta itself for the
// last task (as Slurm's job_array_split / job_array_post_sched). A split
// that leaves one task pending makes meta that task's record
// (lastPending).
func (m *Manager) splitTask(meta *Job, now int64) (*Job, bool) {
	a := meta.Array
	task := a.Pending[0]
	if len(a.Pending) == 1 {
		meta.Array.Pending = nil
		meta.ArrayTaskID = task
		return meta, true
	}
	id, ok := m.allocID()
	if !ok {
		return nil, false
	}
	t := *meta
	t.ID = id
	t.ArrayTaskID = task
	t.Array, t.ArrayExit = nil, nil
	t.Steps = nil
	if meta.Dependency != nil {
		// Each record decides its terms on its own (aftercorr).
		d := *meta.Dependency
		d.Items = append([]DepItem(nil), d.Items...)
		t.Dependency = &d
	}
	a.Pending = append([]uint32(nil), a.Pending[1:]...)
	lastPending(meta)
	m.insert(&t)
	m.pending = append(m.pending, record{kind: recSubmit, job: &t})
	m.touch(meta, now)
	return &t, true
}

// lastPending is job_array_split's rule for a meta record left with one
// pending task: the record becomes that task's own (ArrayTaskID set, no
// pending set, so no task string), keeping its throttle. squeue then
// shows "<id>_<task>" and the task is no longer a range to merge into.
// A meta record that gets down to one task otherwise (submitted so, or
// its other tasks cancelled) keeps its pending set, as Slurm does.
func lastPending(meta *Job) {
	if a := meta.Array; a != nil && len(a.Pending) == 1 {
		meta.ArrayTaskID = a.Pending[0]
		a.Pending = nil
	}
}
