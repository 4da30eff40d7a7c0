package jobs

import (
	"math"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// TestPriorityFactorsList: which jobs REQUEST_PRIORITY_FACTORS lists
// (pending, eligible, not held; one record per partition for a job in
// several) and how the job, user and partition filters select them.
func TestPriorityFactorsList(t *testing.T) {
	cl := prioCluster()
	m := newTestManager(nil)
	cfg := mfConfig()
	cfg.WeightTRES = map[string]float64{"cpu": 1000}
	withPriority(t, m, cfg, false)

	a := mustSubmit(t, m, cl, prioDesc(root, 1, 1, ""), root, t0)
	b := mustSubmit(t, m, cl, prioDesc(alice, 2, 4, "short"), alice, t0)
	c := mustSubmit(t, m, cl, prioDesc(alice, 1, 2, "debug,short"), alice, t0)
	dh := prioDesc(root, 1, 1, "")
	dh.Priority = 0
	mustSubmit(t, m, cl, dh, root, t0) // held: not listed
	df := prioDesc(root, 1, 1, "")
	df.BeginTime = t0 + 3600
	mustSubmit(t, m, cl, df, root, t0) // begins later: not listed
	op := mustSubmit(t, m, cl, prioDesc(bob, 1, 1, ""), bob, t0)
	m.UpdatePriorities(cl, t0, false)
	d := msg.NewJobDesc()
	d.JobID, d.Priority = op, 4242
	if _, err := m.Update(d, root, cl, t0); err != nil {
		t.Fatal(err)
	}
	m.UpdatePriorities(cl, t0, false)

	type rec struct {
		id   uint32
		part string
	}
	tres := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	list := func(q FactorsQuery) []rec {
		var out []rec
		for _, f := range m.PriorityFactors(cl, t0+5, tres, q) {
			out = append(out, rec{f.JobID, f.Partition})
		}
		return out
	}
	all := []rec{{a, "debug"}, {b, "short"}, {c, "debug"}, {c, "short"}, {op, "debug"}}
	for _, tc := range []struct {
		name string
		q    FactorsQuery
		want []rec
	}{
		{"all", FactorsQuery{}, all},
		{"jobs", FactorsQuery{JobIDs: []uint32{b, c, 999}}, []rec{{b, "short"}, {c, "debug"}, {c, "short"}}},
		{"no job", FactorsQuery{JobIDs: []uint32{}}, nil},
		{"user", FactorsQuery{UIDs: []uint32{alice.UID}}, []rec{{b, "short"}, {c, "debug"}, {c, "short"}}},
		{"partition", FactorsQuery{Partitions: []string{"short"}}, []rec{{b, "short"}, {c, "short"}}},
		{"unknown partition", FactorsQuery{Partitions: []string{"nosuch"}}, nil},
		{"visible", FactorsQuery{Visible: func(j *Job) bool { return j.UserID == bob.UID }}, []rec{{op, "debug"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := list(tc.q); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

	// The records add up to the priorities (sprio's PRIORITY column).
	for _, f := range m.PriorityFactors(cl, t0+5, tres, FactorsQuery{}) {
		j := m.Job(f.JobID)
		if f.Direct != 0 {
			if f.Direct != float64(j.Priority) || f.JobID != op {
				t.Errorf("job %d: direct %v, priority %d", f.JobID, f.Direct, j.Priority)
			}
			continue
		}
		sum := f.Age + f.Assoc + f.FairShare + f.JobSize + f.Detail.Partition + f.QOS +
			float64(int64(f.Site)-int64(niceOff)) - float64(int64(f.Nice)-int64(niceOff))
		for _, v := range f.TRES {
			sum += v
		}
		want := j.Priority
		for _, e := range m.PartitionArray(j) {
			if e.Partition == f.Partition {
				want = e.Priority
			}
		}
		if uint32(math.Floor(sum)) != want {
			t.Errorf("job %d in %s: factors sum to %v, priority %d", f.JobID, f.Partition, sum, want)
		}
		if len(f.TRES) != len(tres) || f.TRES[0] == 0 {
			t.Errorf("job %d: TRES factors %v", f.JobID, f.TRES)
		}
	}
	if w := m.TRESWeights(tres); len(w) != len(tres) || w[0] != 1000 || w[1] != 0 {
		t.Errorf("TRES weights %v", w)
	}

	// priority/basic lists nothing.
	m2 := newTestManager(nil)
	mustSubmit(t, m2, cl, prioDesc(root, 1, 1, ""), root, t0)
	if l := m2.PriorityFactors(cl, t0, tres, FactorsQuery{}); l != nil {
		t.Errorf("basic: %v", l)
	}
}
