package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestUnavailableNodesDesc: a pending job kept out by drained or down
// nodes names them in its state description as real slurmctld does, and
// the text follows the nodes.
func TestUnavailableNodesDesc(t *testing.T) {
	type sub struct {
		req, exc string
		nodes    uint32
	}
	tests := []struct {
		name   string
		down   []int // node indexes DOWN, then DRAIN for drain
		drain  []int
		job    sub
		reason sched.Reason
		desc   string
	}{
		{"required drained node", nil, []int{1}, sub{req: "n2", nodes: 1},
			sched.ReasonReqNodeNotAvail, "ReqNodeNotAvail, UnavailableNodes:n2"},
		{"required nodes, one down", []int{2}, nil, sub{req: "n[1,3]", nodes: 2},
			sched.ReasonReqNodeNotAvail, "ReqNodeNotAvail, UnavailableNodes:n3"},
		{"excluded nodes still listed", []int{2, 3}, []int{1}, sub{exc: "n1", nodes: 2},
			sched.ReasonResources, DescTooFewUp},
		{"excluded, enough up in the partition", []int{2}, []int{1}, sub{exc: "n1,n4", nodes: 2},
			sched.ReasonReqNodeNotAvail, "ReqNodeNotAvail, UnavailableNodes:n[2-3]"},
		{"more nodes than are up", []int{3}, nil, sub{nodes: 4},
			sched.ReasonResources, DescTooFewUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := testCluster()
			for _, i := range tt.down {
				cl.Nodes[i].State |= sched.NodeDown
			}
			for _, i := range tt.drain {
				cl.Nodes[i].State |= sched.NodeDrain
			}
			m := newTestManager(nil)
			d := batchDesc(root)
			d.MinNodes = tt.job.nodes
			if tt.job.req != "" {
				d.ReqNodes = msg.Str(tt.job.req)
			}
			if tt.job.exc != "" {
				d.ExcNodes = msg.Str(tt.job.exc)
			}
			id := mustSubmit(t, m, cl, d, root, t0)
			mustSchedule(t, m, cl, t0+1)
			j := m.Job(id)
			if !j.Pending() || j.Reason != uint16(tt.reason) || j.StateDesc != tt.desc {
				t.Fatalf("job: pending %v reason %d desc %q, want reason %d desc %q",
					j.Pending(), j.Reason, j.StateDesc, tt.reason, tt.desc)
			}
		})
	}
}

// TestUnavailableNodesDescFollows: the list of a job that names no nodes
// is made again at every pass; that of a job naming nodes stays until
// they are all back (Slurm does not test it before); the description goes
// when the job starts or waits for something else.
func TestUnavailableNodesDescFollows(t *testing.T) {
	cl := testCluster()
	cl.Nodes[1].State |= sched.NodeDrain
	cl.Nodes[2].State |= sched.NodeDown
	cl.Nodes[3].State |= sched.NodeDown
	m := newTestManager(nil)
	d := batchDesc(root)
	d.ReqNodes = msg.Str("n[2-3]")
	d.MinNodes = 2
	req := mustSubmit(t, m, cl, d, root, t0)
	d = batchDesc(root)
	d.ExcNodes = msg.Str("n1")
	d.MinNodes = 1
	anyNode := mustSubmit(t, m, cl, d, root, t0)
	mustSchedule(t, m, cl, t0+1)
	check := func(id uint32, desc string) {
		t.Helper()
		if got := m.Job(id).StateDesc; got != desc {
			t.Errorf("job %d: desc %q, want %q", id, got, desc)
		}
	}
	check(req, "ReqNodeNotAvail, UnavailableNodes:n[2-3]")
	check(anyNode, "ReqNodeNotAvail, UnavailableNodes:n[2-4]")
	cl.Nodes[2].State &^= sched.NodeDown
	mustSchedule(t, m, cl, t0+2)
	check(req, "ReqNodeNotAvail, UnavailableNodes:n[2-3]")
	if j := m.Job(anyNode); j.Pending() || j.StateDesc != "" {
		t.Errorf("job %d: pending %v desc %q, want started without description", anyNode, j.Pending(), j.StateDesc)
	}
	// Both back: n3 is busy now, the job waits for Resources and the
	// list goes with the reason.
	cl.Nodes[1].State &^= sched.NodeDrain
	mustSchedule(t, m, cl, t0+3)
	if j := m.Job(req); j.Reason == uint16(sched.ReasonReqNodeNotAvail) || j.StateDesc != "" {
		t.Errorf("job %d: reason %d desc %q, want another reason without description", req, j.Reason, j.StateDesc)
	}
}
