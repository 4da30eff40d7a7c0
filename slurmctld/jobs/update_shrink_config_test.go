package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// SchedulerParameters=disable_job_shrink refuses to shrink a running job
// (permit_job_shrink); a shrink records ResizeTime (resize_time), and so
// does a ReqNodeList naming all the job's nodes, which Slurm runs through
// its resize all the same.
func TestShrinkConfigAndResizeTime(t *testing.T) {
	tests := []struct {
		name     string
		disable  bool
		numNodes uint32
		reqNodes string
		want     int
		resized  bool
	}{
		{"NumNodes", false, 1, "", 0, true},
		{"ReqNodeList", false, NoVal, "n1", 0, true},
		{"ReqNodeList, same nodes", false, NoVal, "n[1-2]", 0, true},
		{"NumNodes, same count", false, 2, "", 0, false},
		{"NumNodes, disabled", true, 1, "", slurmerr.ESLURM_NOT_SUPPORTED, false},
		{"ReqNodeList, disabled", true, NoVal, "n1", slurmerr.ESLURM_NOT_SUPPORTED, false},
		{"NumNodes=0, disabled", true, 0, "", slurmerr.ESLURM_INVALID_NODE_COUNT, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			m.cfg.DisableJobShrink = tc.disable
			j := startBatch(t, m, cl, 2)
			d := msg.NewJobDesc()
			d.JobID, d.MinNodes = j.ID, tc.numNodes
			if tc.reqNodes != "" {
				d.ReqNodes = msg.Str(tc.reqNodes)
			}
			if _, err := m.Update(d, alice, cl, t0+10); code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if got := j.ResizeTime == t0+10; got != tc.resized {
				t.Fatalf("ResizeTime %d", j.ResizeTime)
			}
			if ji := m.Info(j, cl, len(cl.Nodes), 0, t0+11); ji.ResizeTime != j.ResizeTime {
				t.Fatalf("info ResizeTime %d", ji.ResizeTime)
			}
		})
	}
}
