package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// TestNodeUsageWhole: a running job holding the whole node (--exclusive)
// marks its node Whole, which the node's CPUAlloc counts as all its
// cores; a job sharing the node does not.
func TestNodeUsageWhole(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared uint16
		want   bool
	}{
		{"exclusive", 0, true},
		{"default", NoVal16, false},
		{"oversubscribe", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.MinNodes, d.MaxNodes, d.NumTasks = 1, 1, 2
			d.ReqNodes = msg.Str("n1")
			d.Shared = tc.shared
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			if !m.Job(id).Running() {
				t.Fatal("job not running")
			}
			u := m.NodeUsage(len(cl.Nodes))
			if u[0].Whole != tc.want || u[1].Whole {
				t.Errorf("Whole n1 %v, n2 %v; want %v, false", u[0].Whole, u[1].Whole, tc.want)
			}
		})
	}
}
