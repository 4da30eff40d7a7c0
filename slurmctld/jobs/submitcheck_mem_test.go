package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestSubmitMemPerCPUUnholdable: with memory consumable, a job whose
// --mem-per-cpu times the CPUs it needs on a node exceeds every node's
// memory is refused at submission (real 22.05's test-only select, see
// testsuite/interop/slurmctld_unholdable_test.go); without it, only the
// per-CPU figure itself has to fit a node. Nodes: 16 CPUs, 4096 MB.
func TestSubmitMemPerCPUUnholdable(t *testing.T) {
	const nodeConfig = slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
	perCPU := func(mb uint64) func(d *msg.JobDesc) {
		return func(d *msg.JobDesc) { d.PnMinMemory = mb | memPerCPU }
	}
	for _, tc := range []struct {
		name             string
		edit             []func(d *msg.JobDesc)
		consumable, none int // the code with CR_Core_Memory and with CR_Core
	}{
		{"exclusive over", []func(*msg.JobDesc){perCPU(300), func(d *msg.JobDesc) { d.Shared = 0 }}, nodeConfig, 0},
		{"exclusive fits", []func(*msg.JobDesc){perCPU(250), func(d *msg.JobDesc) { d.Shared = 0 }}, 0, 0},
		{"cpus per task over", []func(*msg.JobDesc){perCPU(300), func(d *msg.JobDesc) { d.CPUsPerTask = 16 }}, nodeConfig, 0},
		{"two tasks on one node over", []func(*msg.JobDesc){perCPU(2500), func(d *msg.JobDesc) {
			d.NumTasks, d.MinNodes, d.MaxNodes = 2, 1, 1
		}}, nodeConfig, 0},
		{"two tasks spread", []func(*msg.JobDesc){perCPU(2500), func(d *msg.JobDesc) { d.NumTasks = 2 }}, 0, 0},
		{"per cpu over a node", []func(*msg.JobDesc){perCPU(5000)}, nodeConfig, nodeConfig},
	} {
		for _, consumable := range []bool{true, false} {
			want := tc.none
			if consumable {
				want = tc.consumable
			}
			t.Run(tc.name, func(t *testing.T) {
				cl := checkCluster()
				cl.Config.MemoryConsumable = consumable
				m := newTestManager(nil)
				d := batchDesc(alice)
				for _, e := range tc.edit {
					e(d)
				}
				_, _, err := m.Submit(d, alice, cl, t0)
				if got := code(err); got != want {
					t.Fatalf("memory consumable %v: code %d (%v), want %d", consumable, got, err, want)
				}
			})
		}
	}
}

// TestSubmitCoreSpec: --core-spec is kept only with
// AllowSpecResourcesUsage (real 22.05 shows CoreSpec=* otherwise).
func TestSubmitCoreSpec(t *testing.T) {
	for _, allow := range []bool{false, true} {
		m := newTestManager(nil)
		m.cfg.AllowSpecResourcesUsage = allow
		d := batchDesc(alice)
		d.CoreSpec = 1
		r, _, err := m.Submit(d, alice, checkCluster(), t0)
		if err != nil {
			t.Fatal(err)
		}
		want := uint16(NoVal16)
		if allow {
			want = 1
		}
		if got := m.jobs[r.JobID].CoreSpec; got != want {
			t.Errorf("AllowSpecResourcesUsage=%v: CoreSpec %d, want %d", allow, got, want)
		}
	}
}
