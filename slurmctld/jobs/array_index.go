package jobs

import (
	"fmt"
	"iter"
	"strings"
)

// arrayIndex holds, per job array (by its array job id), its records in
// the table: the meta record and the tasks split off it. The
// work done for one task (its mails, the environment of its hooks) then
// looks at its own array's records, not at the whole table, which over
// a large array's life was quadratic. insert and remove keep it.
type arrayIndex map[uint32]*arrayRecs

type arrayRecs struct {
	recs map[uint32]*Job // by job id
	// env caches arrayEnvSup's lines for the meta record's Spec.
	envSpec string
	env     []string
}

func (x *arrayIndex) add(j *Job) {
	if j.ArrayJobID == 0 {
		return
	}
	if *x == nil {
		*x = arrayIndex{}
	}
	r := (*x)[j.ArrayJobID]
	if r == nil {
		r = &arrayRecs{recs: map[uint32]*Job{}}
		(*x)[j.ArrayJobID] = r
	}
	r.recs[j.ID] = j
}

func (x arrayIndex) drop(j *Job) {
	r := x[j.ArrayJobID]
	if r == nil {
		return
	}
	delete(r.recs, j.ID)
	if len(r.recs) == 0 {
		delete(x, j.ArrayJobID)
	}
}

// arrayRecords yields the records of array arrayID in the table, the
// meta record included, in no particular order.
func (m *Manager) arrayRecords(arrayID uint32) iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		r := m.arrays[arrayID]
		if r == nil {
			return
		}
		for _, o := range r.recs {
			// A record whose array id changed in place is not the
			// array's any more.
			if o.ArrayJobID == arrayID && !yield(o) {
				return
			}
		}
	}
}

// arrayEnvSup is the environment the controller adds to an array's jobs
// at submission (_create_job_array's env_sup): the task count, lowest and
// highest task id and the step of --array. It is worked out once per
// array (and again only if the meta record's --array changes).
func (m *Manager) arrayEnvSup(j *Job) []string {
	meta := m.jobs[j.ArrayJobID]
	if meta == nil || meta.Array == nil || meta.Array.Spec == "" {
		return nil
	}
	r := m.arrays[j.ArrayJobID]
	if r != nil && r.env != nil && r.envSpec == meta.Array.Spec {
		return r.env
	}
	tasks, _, ok := parseArray(meta.Array.Spec, ^uint32(0))
	if !ok {
		return nil
	}
	step := 1
	if i := strings.IndexByte(meta.Array.Spec, ':'); i >= 0 {
		step = atoiPrefix(meta.Array.Spec[i+1:])
	}
	env := []string{fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", len(tasks)),
		fmt.Sprintf("SLURM_ARRAY_TASK_MIN=%d", tasks[0]),
		fmt.Sprintf("SLURM_ARRAY_TASK_MAX=%d", tasks[len(tasks)-1]),
		fmt.Sprintf("SLURM_ARRAY_TASK_STEP=%d", step)}
	if r != nil {
		r.envSpec, r.env = meta.Array.Spec, env
	}
	return env
}
