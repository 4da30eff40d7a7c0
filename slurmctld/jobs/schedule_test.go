package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// TestSuspendedJobLeavesNodeWhole: a suspended job keeps its memory but
// not its place on the node, so a whole-node (--exclusive) job whose
// memory fits next to it starts there, as in real 22.05 with
// select/cons_tres and CR_Core_Memory (checked by hand: a job suspended
// with 600 of 1000 MB, --exclusive --mem=300 runs on its node, --mem=500
// waits for Resources once another 200 MB are taken).
func TestSuspendedJobLeavesNodeWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		mem  uint64 // the exclusive job's --mem
		runs bool
	}{
		{"memory fits", 1024, true},
		{"memory does not fit", 3072, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster() // 4096 MB nodes
			cl.Config.MemoryConsumable = true
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.ReqNodes, d.PnMinMemory = msg.Str("n1"), 2048
			first := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(first)), root, cl, t0+1); err != nil {
				t.Fatal(err)
			}
			d = batchDesc(alice)
			d.ReqNodes, d.PnMinMemory, d.Shared = msg.Str("n1"), tc.mem, 0
			whole := mustSubmit(t, m, cl, d, alice, t0+2)
			mustSchedule(t, m, cl, t0+2)
			if got := m.Job(whole).Running(); got != tc.runs {
				t.Fatalf("exclusive job started: %v, want %v (reason %d)", got, tc.runs, m.Job(whole).Reason)
			}
		})
	}
}

// TestAccountDescCleared: the account lists' description given at
// submission goes when a pass gives the job another reason.
func TestAccountDescCleared(t *testing.T) {
	cl := checkCluster()
	m := newTestManager(nil)
	for i := 0; i < 4; i++ { // fill the cluster: n1..n4, 16 CPUs each
		d := batchDesc(alice)
		d.NumTasks, d.Shared = 16, 0
		mustSubmit(t, m, cl, d, alice, t0)
	}
	mustSchedule(t, m, cl, t0)
	d := batchDesc(alice)
	d.Partition = msg.Str("acct,debug")
	id := mustSubmit(t, m, cl, d, alice, t0+1)
	if j := m.Job(id); j.StateDesc == "" {
		t.Fatalf("no account description at submission (reason %d)", j.Reason)
	}
	mustSchedule(t, m, cl, t0+2)
	j := m.Job(id)
	if !j.Pending() || j.StateDesc != "" {
		t.Fatalf("after a pass: pending %v, reason %d, desc %q", j.Pending(), j.Reason, j.StateDesc)
	}
}
