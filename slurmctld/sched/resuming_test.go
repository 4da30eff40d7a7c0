package sched

import (
	"slices"
	"testing"
)

// TestResumingNode: a node rebooting with nextstate=resume (22.05's
// rs_node_bitmap) counts as up for a job's reason whatever its other
// flags, so a job that needs it waits for Resources, but no job starts on
// it; a job that fits elsewhere starts there. Without NodeResuming the
// same node makes the job wait with ReqNodeNotAvail.
func TestResumingNode(t *testing.T) {
	const rebooting = NodeDown | NodeNoRespond
	for _, tc := range []struct {
		name     string
		state    NodeState
		backfill bool
		job      Job
		want     Reason // ReasonNone: starts, on the nodes in on
		on       []int
	}{
		{"required, resuming", rebooting | NodeResuming, false, mkJob(1, reqNodes(1)), ReasonResources, nil},
		{"required, resuming, backfill", rebooting | NodeResuming, true, mkJob(1, reqNodes(1)), ReasonResources, nil},
		{"required, drained ASAP and resuming", NodeDrain | NodeResuming, false, mkJob(1, reqNodes(1)), ReasonResources, nil},
		{"required, down", rebooting, false, mkJob(1, reqNodes(1)), ReasonReqNodeNotAvail, nil},
		{"every node, resuming", rebooting | NodeResuming, false, mkJob(1, nodesN(2, 2)), ReasonResources, nil},
		{"every node, resuming, backfill", rebooting | NodeResuming, true, mkJob(1, nodesN(2, 2)), ReasonResources, nil},
		{"every node, down", rebooting, false, mkJob(1, nodesN(2, 2)), ReasonReqNodeNotAvail, nil},
		// Node 0 resuming (its state swapped below): the job goes to
		// node 1.
		{"idle and resuming: not on the resuming node", NodeResuming, false, mkJob(1), ReasonNone, []int{1}},
		{"idle and resuming, backfill", NodeResuming, true, mkJob(1), ReasonNone, []int{1}},
		{"resuming but in the future", NodeFuture | NodeResuming, false, mkJob(1, nodesN(2, 2)), ReasonReqNodeNotAvail, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(2, 8, 8000))
			s.Config.Backfill = tc.backfill
			s.Nodes[1].State = tc.state
			if tc.on != nil {
				s.Nodes[0].State, s.Nodes[1].State = tc.state, NodeUp
			}
			s.Pending = []Job{tc.job}
			p := Schedule(s)
			if tc.want != ReasonNone {
				mustPend(t, p, 1, tc.want)
				return
			}
			if got := nodesOf(mustStart(t, p, 1)); !slices.Equal(got, tc.on) {
				t.Errorf("started on %v, want %v", got, tc.on)
			}
		})
	}
}

// TestResumingNodeBackfillStart: backfill plans a job that needs a
// resuming node to start on it at the next step (22.05: a second later),
// unless other nodes it needs are busy longer.
func TestResumingNodeBackfillStart(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Config.Backfill = true
	s.Nodes[1].State = NodeDown | NodeResuming
	s.Running = []Allocation{running(99, s.Now+3600, 8, 0)}
	s.Pending = []Job{mkJob(1, nodesN(2, 2), limit(60))}
	p := Schedule(s)
	pd := mustPend(t, p, 1, ReasonResources)
	// Node 0 is busy for an hour: the job's start is then, not at the
	// resuming node's next second.
	if pd.StartTime != s.Now+3600 {
		t.Errorf("expected start %d, want %d", pd.StartTime, s.Now+3600)
	}
	s.Running = nil
	p = Schedule(s)
	pd = mustPend(t, p, 1, ReasonResources)
	if pd.StartTime <= s.Now || pd.StartTime > s.Now+s.Config.BF.Resolution {
		t.Errorf("expected start %d, want within a resolution step of %d", pd.StartTime, s.Now)
	}
}
