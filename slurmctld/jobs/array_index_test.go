package jobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// TestArrayIndexFollowsTable: the index names exactly the table's
// records of each array, through splits, purges and a snapshot reload.
func TestArrayIndexFollowsTable(t *testing.T) {
	m := newTestManager(nil)
	cl := testCluster()
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-5")
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	check := func(when string) {
		t.Helper()
		var want, got []uint32
		for _, j := range m.Jobs() {
			if j.ArrayJobID == meta {
				want = append(want, j.ID)
			}
		}
		for o := range m.arrayRecords(meta) {
			got = append(got, o.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: index %v, table %v", when, got, want)
		}
	}
	check("after the split")
	for _, j := range m.Jobs() {
		if j.Running() {
			finishJob(t, m, cl, j.ID, 0, t0+1)
		}
	}
	if _, err := m.Tick(cl, t0+1000); err != nil { // past MinJobAge: purged
		t.Fatal(err)
	}
	check("after the purge")
	var b strings.Builder
	if err := m.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if err := m.LoadSnapshot(0, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	check("after a reload")
}
