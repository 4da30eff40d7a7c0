package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// preemptCluster: testCluster's four 16-CPU nodes with partitions low
// (tier 1, lowMode) and high (tier 2), preempt/partition_prio on.
func preemptCluster(lowMode sched.PreemptMode) *Cluster {
	cl := testCluster()
	cl.Config.Preempt = sched.PreemptConfig{Enabled: true, Mode: sched.PreemptCancel, ReorderCount: 1}
	low := cl.Partitions[0]
	low.Name, low.Default, low.PriorityTier, low.PreemptMode = "low", true, 1, lowMode
	high := cl.Partitions[0]
	high.Name, high.Default, high.PriorityTier, high.PreemptMode = "high", false, 2, sched.PreemptCancel
	cl.Partitions = []sched.Partition{low, high}
	return cl
}

// wholeNode is a batch job of 16 tasks (a whole node) in partition p.
func wholeNode(p string) *msg.JobDesc {
	d := batchDesc(alice)
	d.Partition = msg.Str(p)
	d.NumTasks = 16
	d.MaxNodes = 1
	return d
}

// kills are the nodes each job is sent msgType to.
func kills(acts []Action, t msgtype.Type) map[uint32][]string {
	out := map[uint32][]string{}
	for _, a := range acts {
		if nm, ok := a.(NodeMessage); ok && nm.MsgType == t {
			out[nm.JobID] = append(out[nm.JobID], nm.Nodes...)
		}
	}
	return out
}

// TestPreemptLifecycle: four low jobs fill the nodes; a high job has the
// first of them preempted (cancelled, or requeued), waits while it cleans
// up (no further job is preempted for it meanwhile), then starts on its
// node.
func TestPreemptLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode sched.PreemptMode
	}{{"cancel", sched.PreemptCancel}, {"requeue", sched.PreemptRequeue}} {
		t.Run(tc.name, func(t *testing.T) {
			cl := preemptCluster(tc.mode)
			jr := &MemJournal{}
			m := newTestManager(jr)
			var low []uint32
			for range 4 {
				low = append(low, mustSubmit(t, m, cl, wholeNode("low"), alice, t0))
			}
			mustSchedule(t, m, cl, t0)
			for _, id := range low {
				if !m.Job(id).Running() {
					t.Fatalf("low job %d not running", id)
				}
			}
			victim := m.Job(low[0])
			node := victim.Nodes[0]
			hi := mustSubmit(t, m, cl, wholeNode("high"), alice, t0+10)
			acts := mustSchedule(t, m, cl, t0+10)
			k := kills(acts, msgtype.REQUEST_KILL_PREEMPTED)
			if len(k) != 1 || len(k[low[0]]) != 1 || k[low[0]][0] != node {
				t.Fatalf("kills %v, want job %d on %s", k, low[0], node)
			}
			h := m.Job(hi)
			if !h.Pending() || h.Reason != ReasonResources || h.PreemptStart != t0+10 {
				t.Fatalf("preemptor: state %#x reason %d preempt start %d", h.State, h.Reason, h.PreemptStart)
			}
			switch tc.mode {
			case sched.PreemptCancel:
				if victim.Base() != msg.JobPreempted || !victim.IsCompleting() || victim.PreemptTime != t0+10 {
					t.Fatalf("victim: state %#x preempt time %d", victim.State, victim.PreemptTime)
				}
				if ji := m.Info(victim, cl, len(cl.Nodes), 0, t0+10); ji.PreemptableTime != victim.StartTime || ji.PreemptTime != t0+10 {
					t.Fatalf("victim info: preemptable %d preempt %d", ji.PreemptableTime, ji.PreemptTime)
				}
			case sched.PreemptRequeue:
				// Its begin time is pushed once its nodes are clean
				// (batch_requeue_fini).
				if !victim.Pending() || !victim.IsCompleting() || victim.RestartCnt != 1 || victim.BeginTime != 0 {
					t.Fatalf("victim: state %#x restarts %d begin %d", victim.State, victim.RestartCnt, victim.BeginTime)
				}
			}
			// While the victim cleans up, a pass preempts nothing more.
			acts = mustSchedule(t, m, cl, t0+11)
			if k := kills(acts, msgtype.REQUEST_KILL_PREEMPTED); len(k) != 0 {
				t.Fatalf("second pass kills %v", k)
			}
			for _, id := range low[1:] {
				if !m.Job(id).Running() {
					t.Fatalf("low job %d not running", id)
				}
			}
			if _, err := m.EpilogComplete(low[0], node, root, t0+12); err != nil {
				t.Fatal(err)
			}
			mustSchedule(t, m, cl, t0+12)
			if !h.Running() || h.Nodes[0] != node {
				t.Fatalf("preemptor: state %#x nodes %v", h.State, h.Nodes)
			}
			if ji := m.Info(h, cl, len(cl.Nodes), 0, t0+12); ji.PreemptableTime != t0+12 || ji.PreemptTime != 0 {
				t.Fatalf("preemptor info: preemptable %d preempt %d", ji.PreemptableTime, ji.PreemptTime)
			}
			if tc.mode == sched.PreemptRequeue {
				ji := m.Info(victim, cl, len(cl.Nodes), 0, t0+12)
				if ji.NumNodes != 1 || ji.MaxNodes != 0 || ji.EligibleTime != t0+12+credLifetime || ji.PreemptableTime != 0 {
					t.Fatalf("requeued victim info: nodes %d-%d eligible %d preemptable %d",
						ji.NumNodes, ji.MaxNodes, ji.EligibleTime, ji.PreemptableTime)
				}
			}
			if got := replay(t, jr.Records); tableJSON(t, got) != tableJSON(t, m) {
				t.Fatalf("replayed table differs:\n%s\n%s", tableJSON(t, got), tableJSON(t, m))
			}
		})
	}
}

// TestPreemptNoRequeue: REQUEUE of a job that cannot be requeued
// (--no-requeue) ends it PREEMPTED, as slurm_job_preempt falls back on
// the kill.
func TestPreemptNoRequeue(t *testing.T) {
	cl := preemptCluster(sched.PreemptRequeue)
	m := newTestManager(&MemJournal{})
	var low []uint32
	for range 4 {
		d := wholeNode("low")
		d.Requeue = 0
		low = append(low, mustSubmit(t, m, cl, d, alice, t0))
	}
	mustSchedule(t, m, cl, t0)
	mustSubmit(t, m, cl, wholeNode("high"), alice, t0+10)
	mustSchedule(t, m, cl, t0+10)
	if v := m.Job(low[0]); v.Base() != msg.JobPreempted || v.RestartCnt != 0 {
		t.Fatalf("victim: state %#x restarts %d", v.State, v.RestartCnt)
	}
}
