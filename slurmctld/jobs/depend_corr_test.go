package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

func TestDependencyTimeAndArrays(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"after:5+3", "after:5+3(unfulfilled)"},
		{"after:5+3:6", "after:5+3(unfulfilled),after:6+3(unfulfilled)"},
		{"afterok:5_*", "afterok:5_*(unfulfilled)"},
		{"aftercorr:5", "aftercorr:5(unfulfilled)"},
	} {
		d, ok := parseDependency(tc.in)
		if !ok || d.String() != tc.out {
			t.Errorf("%s: ok %v %q, want %q", tc.in, ok, d.String(), tc.out)
		}
	}
	for _, bad := range []string{"after:5+0", "after:5+x", "afterfoo:5", "after:5+-1"} {
		if _, ok := parseDependency(bad); ok {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestAfterCorrespond(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-2")
	a := mustSubmit(t, m, cl, d, alice, t0)
	d = batchDesc(alice)
	d.ArrayInx = msg.Str("1-3")
	d.Dependency = msg.Str("aftercorr:" + itoa32(a))
	b := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	// Every pass splits one task of b off to decide it on its own.
	var bs []*Job
	for _, j := range m.Jobs() {
		if j.ArrayJobID == b && !j.IsArrayMeta() {
			bs = append(bs, j)
		}
	}
	if len(bs) != 1 || bs[0].ArrayTaskID != 1 || !bs[0].Pending() {
		t.Fatalf("after one pass: %d split tasks of b", len(bs))
	}
	if bs[0].Dependency.Items[0].State != depUnfulfilled {
		t.Fatalf("b_1 dependency %s", bs[0].Dependency)
	}
}
