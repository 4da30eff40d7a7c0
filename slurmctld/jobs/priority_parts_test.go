package jobs

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// TestPriorityPartitionArray: a job submitted to several partitions gets
// a priority in each (its own is the first partition's), in
// PriorityTier order; held and operator-set jobs have none (their
// priority applies everywhere).
func TestPriorityPartitionArray(t *testing.T) {
	cl := prioCluster()
	m := newTestManager(nil)
	p := withPriority(t, m, mfConfig(), false)
	var logged []string
	p.OnArray = func(j *Job, a []PartitionPriority) {
		for _, e := range a {
			logged = append(logged, e.Partition)
		}
	}

	// Job size (1/4 + 1/64)/2 -> 13281; partition factor debug 1/4,
	// short 4/4 of 40000.
	id := mustSubmit(t, m, cl, prioDesc(root, 1, 1, "debug,short"), root, t0)
	single := mustSubmit(t, m, cl, prioDesc(root, 1, 1, "short,short"), root, t0)
	m.UpdatePriorities(cl, t0, false)
	j := m.Job(id)
	if j.Priority != 23281 {
		t.Fatalf("priority %d, want 23281 (debug's)", j.Priority)
	}
	if got := m.PartitionPriorities(j); len(got) != 2 || got[0] != 23281 || got[1] != 53281 {
		t.Errorf("PartitionPriorities = %v, want [23281 53281]", got)
	}
	if got := strings.Join(logged, ","); got != "debug,short" {
		t.Errorf("logged %q", got)
	}
	if got := m.PartitionPriorities(m.Job(single)); got != nil {
		t.Errorf("one partition named twice has an array: %v", got)
	}

	// A higher tier sorts short first, in the array and in the list the
	// job info shows.
	for i := range cl.Partitions {
		if cl.Partitions[i].Name == "short" {
			cl.Partitions[i].PriorityTier = 5
		}
	}
	m.UpdatePriorities(cl, t0+1, true)
	a := m.PartitionArray(j)
	if len(a) != 2 || a[0] != (PartitionPriority{"short", 53281}) || a[1] != (PartitionPriority{"debug", 23281}) {
		t.Errorf("PartitionArray = %v", a)
	}
	if got := m.PartitionPriorities(j); got[0] != 23281 || got[1] != 53281 {
		t.Errorf("PartitionPriorities follow j.Partitions: %v", got)
	}
	if got := m.Info(j, cl, len(cl.Nodes), 0, t0+1).Partition; !got.Valid || got.Value != "short,debug" {
		t.Errorf("info partition %+v, want short,debug", got)
	}

	// An operator's priority applies in every partition.
	d := msg.NewJobDesc()
	d.JobID, d.Priority = id, 7
	if _, err := m.Update(d, root, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	m.UpdatePriorities(cl, t0+2, true)
	if got := m.PartitionPriorities(j); got != nil || j.Priority != 7 {
		t.Errorf("operator priority: %d, array %v", j.Priority, got)
	}
}

// TestPriorityBillingWeights: a partition's TRESBillingWeights set the
// billing TRES the job info shows (requested, then allocated) and what a
// running job is charged for fair-share; MAX_TRES takes the largest
// per-node TRES.
func TestPriorityBillingWeights(t *testing.T) {
	for _, tc := range []struct {
		name        string
		maxTRES     bool
		wantBilling uint64
	}{
		{"sum", false, 4*2 + 2*3 + 1*5}, // cpu 4*2, mem 2 GB*3, node 1*5
		{"MAX_TRES", true, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mfConfig()
			cfg.WeightJobSize, cfg.WeightPartition = 0, 0
			cfg.WeightFairshare = 100000
			cfg.DecayHalfLife = 0
			if tc.maxTRES {
				cfg.Flags |= conf.PriorityMaxTRES
			}
			cl := prioCluster()
			m := newTestManager(nil)
			p := withPriority(t, m, cfg, true)
			if err := m.SetBillingWeights(map[string]string{"debug": "CPU=2,Mem=3G,Node=5"}); err != nil {
				t.Fatal(err)
			}
			m.PriorityDecay(cl, t0)

			d := prioDesc(alice, 1, 4, "")
			d.PnMinMemory = 2048
			id := mustSubmit(t, m, cl, d, alice, t0)
			j := m.Job(id)
			ji := m.Info(j, cl, len(cl.Nodes), 0, t0)
			if want := "cpu=4,mem=2G,node=1,billing=" + strconv.FormatUint(tc.wantBilling, 10); ji.TresReqStr.Value != want {
				t.Errorf("pending TRES %q, want %q", ji.TresReqStr.Value, want)
			}
			mustSchedule(t, m, cl, t0)
			if !j.Running() {
				t.Fatalf("not running: %+v", j)
			}
			ji = m.Info(j, cl, len(cl.Nodes), 0, t0)
			if want := "cpu=4,mem=2G,node=1,billing=" + strconv.FormatUint(tc.wantBilling, 10); ji.TresAllocStr.Value != want {
				t.Errorf("alloc TRES %q, want %q", ji.TresAllocStr.Value, want)
			}
			m.PriorityDecay(cl, t0+100)
			want := float64(tc.wantBilling) * 100
			if got := rawUsage(p, "alice"); math.Abs(got-want) > 1e-9*want {
				t.Errorf("usage %v, want %v (billing %d * 100 s)", got, want, tc.wantBilling)
			}
		})
	}
}

// TestPriorityBillingTRESFactor: PriorityWeightTRES=billing weighs the
// job's billing over its partition's (the weights applied to the
// partition's totals).
func TestPriorityBillingTRESFactor(t *testing.T) {
	cfg := mfConfig()
	cfg.WeightJobSize, cfg.WeightPartition = 0, 0
	cfg.WeightTRES = map[string]float64{"billing": 6400}
	cl := prioCluster()
	m := newTestManager(nil)
	withPriority(t, m, cfg, false)
	// debug: 64 CPUs * 1.5 = 96 billing; the job 4 * 1.5 = 6.
	if err := m.SetBillingWeights(map[string]string{"debug": "CPU=1.5"}); err != nil {
		t.Fatal(err)
	}
	id := mustSubmit(t, m, cl, prioDesc(root, 1, 4, ""), root, t0)
	m.UpdatePriorities(cl, t0, false)
	if got, want := m.Job(id).Priority, uint32(6*6400/96); got != want {
		t.Errorf("priority %d, want %d", got, want)
	}
	if err := m.SetBillingWeights(map[string]string{"debug": "CPU=zz"}); err == nil {
		t.Error("bad weights accepted")
	}
}

// TestPriorityBillingWeightsPackedInfo: packed job records cached before
// the billing weights change are not sent again with the old billing.
func TestPriorityBillingWeightsPackedInfo(t *testing.T) {
	cl := prioCluster()
	m := newTestManager(nil)
	withPriority(t, m, mfConfig(), false)
	mustSubmit(t, m, cl, prioDesc(alice, 1, 4, ""), alice, t0)
	mustSubmit(t, m, cl, prioDesc(alice, 1, 4, ""), alice, t0)
	mustSchedule(t, m, cl, t0)
	for _, step := range []struct {
		name    string
		weights map[string]string
	}{
		{"no weights", nil},
		{"weights", map[string]string{"debug": "CPU=3"}},
		{"other weights", map[string]string{"debug": "CPU=5"}},
		{"weights removed", nil},
	} {
		if err := m.SetBillingWeights(step.weights); err != nil {
			t.Fatal(err)
		}
		want := wantList(t, m, cl, 0, ^uint32(0), nil, t0)
		for pass := range 2 {
			if got := gotList(t, m, cl, 0, ^uint32(0), nil, t0); !bytes.Equal(got, want) {
				t.Fatalf("%s, pass %d: cached list differs from JobInfoMsg", step.name, pass)
			}
		}
	}
}
