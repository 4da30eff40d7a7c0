package jobs

// arrayTally counts the table's records per array id for one Tick, so
// that deciding whether each finished meta record may be purged does not
// scan the whole table (which made a Tick over many finished arrays
// quadratic). The counts are taken at the first meta record asked about
// and follow the records Tick purges after that; Tick adds none.
type arrayTally struct {
	m *Manager
	n map[uint32]int // array id -> records in the table, meta record included
}

// busy reports that j is the meta record of an array whose other records
// (tasks split off it) are still in the table: they name it, so it stays.
func (a *arrayTally) busy(j *Job) bool {
	if j.ArrayJobID == 0 || j.ArrayJobID != j.ID {
		return false
	}
	if a.n == nil {
		a.n = map[uint32]int{}
		for _, o := range a.m.jobs {
			if o.ArrayJobID != 0 {
				a.n[o.ArrayJobID]++
			}
		}
	}
	return a.n[j.ArrayJobID] > 1
}

// removed takes a record Tick purged off the counts.
func (a *arrayTally) removed(j *Job) {
	if a.n != nil && j.ArrayJobID != 0 {
		a.n[j.ArrayJobID]--
	}
}
