package jobs

import (
	"strconv"
	"testing"
)

// TestBillingWeightsBasic: with priority/basic (no Priority installed)
// the partitions' TRESBillingWeights still set the billing TRES of
// pending and running jobs, with PriorityFlags=MAX_TRES too, and a
// change of weights or flag is not hidden by cached records.
func TestBillingWeightsBasic(t *testing.T) {
	for _, tc := range []struct {
		name        string
		weights     map[string]string
		maxTRES     bool
		wantBilling uint64
	}{
		{"no weights", nil, false, 4},
		{"weights", map[string]string{"debug": "CPU=2,Mem=3G,Node=5"}, false, 19}, // 8 + 6 + 5
		{"MAX_TRES", map[string]string{"debug": "CPU=2,Mem=3G,Node=5"}, true, 8},
		{"other partition", map[string]string{"short": "CPU=9"}, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := prioCluster()
			m := newTestManager(nil)
			if err := m.SetBillingWeights(tc.weights); err != nil {
				t.Fatal(err)
			}
			m.SetBillingMaxTRES(tc.maxTRES)
			d := prioDesc(alice, 1, 4, "")
			d.PnMinMemory = 2048
			id := mustSubmit(t, m, cl, d, alice, t0)
			j := m.Job(id)
			want := "cpu=4,mem=2G,node=1,billing=" + strconv.FormatUint(tc.wantBilling, 10)
			if ji := m.Info(j, cl, len(cl.Nodes), 0, t0); ji.TresReqStr.Value != want {
				t.Errorf("pending TRES %q, want %q", ji.TresReqStr.Value, want)
			}
			mustSchedule(t, m, cl, t0)
			if !j.Running() {
				t.Fatalf("not running: %+v", j)
			}
			ji := m.Info(j, cl, len(cl.Nodes), 0, t0)
			if ji.TresAllocStr.Value != want || ji.BillableTres.Float64() != float64(tc.wantBilling) {
				t.Errorf("alloc TRES %q billable %v, want %q", ji.TresAllocStr.Value, ji.BillableTres.Float64(), want)
			}
			// Cached packed records follow a change of the flag.
			m.SetBillingMaxTRES(!tc.maxTRES)
			if got, want := gotList(t, m, cl, 0, ^uint32(0), nil, t0), wantList(t, m, cl, 0, ^uint32(0), nil, t0); string(got) != string(want) {
				t.Error("cached list differs from JobInfoMsg after MAX_TRES changed")
			}
		})
	}
}
