package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"pgregory.net/rapid"
)

// Tick purges the finished records past MinJobAge in id order, keeping a
// finished meta record while another record of its array is in the
// table, as when it scanned the table for each (the model below). Ids
// wrap, so a task may have a lower id than its meta record.
func TestTickArrayPurgeUnchanged(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newTestManager(nil)
		now := t0 + 1000
		n := rapid.IntRange(1, 25).Draw(rt, "jobs")
		ids := rapid.Permutation(idRange(1, n)).Draw(rt, "ids")
		states := []uint32{msg.JobRunning, msg.JobPending, msg.JobComplete, msg.JobComplete, msg.JobCancelled, msg.JobComplete | msg.JobCompleting}
		var metas []uint32
		for _, id := range ids {
			j := &Job{ID: id, ArrayTaskID: NoVal, State: rapid.SampledFrom(states).Draw(rt, "state")}
			if j.Finished() {
				j.EndTime = rapid.SampledFrom([]int64{t0, now - 10}).Draw(rt, "end") // past MinJobAge or not
			}
			switch k := rapid.IntRange(0, 2).Draw(rt, "kind"); {
			case k == 0 || len(metas) == 0: // a meta record
				j.ArrayJobID = id
				metas = append(metas, id)
			case k == 1: // a task of an array made earlier
				j.ArrayJobID = rapid.SampledFrom(metas).Draw(rt, "of")
				j.ArrayTaskID = id
			}
			m.insert(j)
		}
		want := tickModel(m, now)
		if _, err := m.Tick(testCluster(), now); err != nil {
			rt.Fatal(err)
		}
		var got []uint32
		for _, j := range m.Jobs() {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) {
			rt.Fatalf("left %v, want %v", got, want)
		}
	})
}

func idRange(from, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(from + i)
	}
	return out
}

// tickModel: the ids left after Tick's purge, found by scanning the
// remaining records for each finished meta record.
func tickModel(m *Manager, now int64) []uint32 {
	left := map[uint32]*Job{}
	for _, j := range m.Jobs() {
		left[j.ID] = j
	}
	for _, j := range m.Jobs() {
		if !j.Finished() || j.IsCompleting() || now-j.EndTime < m.cfg.MinJobAge {
			continue
		}
		busy := false
		if j.ArrayJobID != 0 && j.ArrayJobID == j.ID {
			for _, o := range left {
				busy = busy || o != j && o.ArrayJobID == j.ArrayJobID
			}
		}
		if !busy {
			delete(left, j.ID)
		}
	}
	var out []uint32
	for id := range left {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
