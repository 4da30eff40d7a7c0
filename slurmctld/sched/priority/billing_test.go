package priority

import (
	"testing"

	"github.com/goslurm/goslurm/conf"
)

func TestBilling(t *testing.T) {
	counts := map[string]uint64{"cpu": 4, "mem": 8192, "node": 2, "gres/gpu": 3, "license/foo": 2, "billing": 99}
	tests := []struct {
		name    string
		weights string
		maxTRES bool
		want    float64
	}{
		{"no weights bills CPUs", "", false, 4},
		{"sum", "CPU=1.5,Mem=0.5G,Node=3", false, 4*1.5 + 8192*0.5/1024 + 2*3},
		{"billing itself is never weighed", "CPU=1,Billing=100", false, 4},
		{"gres and license", "GRES/gpu=2,License/foo=10", false, 3*2 + 2*10},
		{"MAX_TRES: largest per-node TRES", "CPU=1,Mem=1G,Node=3", true, 8},
		{"MAX_TRES: gres is per node", "CPU=1,GRES/gpu=5", true, 15},
		{"MAX_TRES: licenses are added", "CPU=1,Mem=0.25G,License/foo=10", true, 4 + 20},
		{"empty items weigh nothing", ",,", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseBillingWeights(tt.weights)
			if err != nil {
				t.Fatal(err)
			}
			if got := Billing(counts, w, tt.maxTRES); got != tt.want {
				t.Errorf("Billing(%q, max=%v) = %v, want %v", tt.weights, tt.maxTRES, got, tt.want)
			}
		})
	}
	if _, err := ParseBillingWeights("CPU=x2"); err == nil {
		t.Error("CPU=x2 parsed")
	}
}

func TestSortedTRES(t *testing.T) {
	m := map[string]int{"gres/gpu": 1, "node": 1, "cpu": 1, "license/a": 1, "mem": 1, "billing": 1}
	got := sortedTRES(m)
	want := []string{"cpu", "mem", "node", "billing", "gres/gpu", "license/a"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestPriorityArray checks priority_array against real slurmctld's log
// for a job in partitions debug (factor 1, 4 nodes of 8 CPUs and
// 4000 MB), hi (factor 4, 2 nodes) and lo (factor 2, tier 3, 2 nodes):
// JobId=2 of TestSlurmctldPriorityPartitions, -N2 -n4 in hi,debug,lo,
// logged "lo=59500, hi=84500, debug=45375" and priority 84500.
func TestPriorityArray(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Plugin = PluginMultifactor
	cfg.WeightJobSize, cfg.WeightPartition = 100000, 50000
	cfg.WeightTRES = map[string]float64{"cpu": 3000, "mem": 2000, "node": 500}
	m := NewMultifactor(cfg, Cluster{Nodes: 4, CPUs: 32, MaxPartitionJobFactor: 4}, nil)
	part := func(factor uint16, nodes uint64) *Partition {
		return &Partition{JobFactor: factor, MaxTime: Infinite,
			TRES: map[string]uint64{"cpu": 8 * nodes, "mem": 4000 * nodes, "node": nodes}}
	}
	debug, hi, lo := part(1, 4), part(4, 2), part(2, 2)
	j := Job{MinNodes: 2, CPUs: 4, TimeLimit: NoValue,
		TRES: map[string]uint64{"cpu": 4, "mem": 8000, "node": 2}}

	if got := m.Priority(&j, hi, now); got != 84500 {
		t.Errorf("Priority in hi = %d, want 84500", got)
	}
	got := m.PriorityArray(&j, hi, []*Partition{lo, hi, debug}, nil, now)
	want := []uint32{59500, 84500, 45375}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PriorityArray = %v, want %v", got, want)
		}
	}

	// INCR_ONLY keeps higher values from before, element by element.
	m.Config.Flags |= conf.PriorityIncrOnly
	got = m.PriorityArray(&j, hi, []*Partition{lo, hi, debug}, []uint32{60000, 1, 45375}, now)
	if got[0] != 60000 || got[1] != 84500 || got[2] != 45375 {
		t.Errorf("INCR_ONLY: %v", got)
	}
	m.Config.Flags &^= conf.PriorityIncrOnly

	j.AdminPriority = 7
	if got := m.PriorityArray(&j, hi, []*Partition{lo, hi}, nil, now); got[0] != 7 || got[1] != 7 {
		t.Errorf("operator priority: %v", got)
	}
	j.AdminPriority, j.Held = 0, true
	if got := m.PriorityArray(&j, hi, []*Partition{lo, hi}, nil, now); got[0] != 0 || got[1] != 0 {
		t.Errorf("held: %v", got)
	}
}
