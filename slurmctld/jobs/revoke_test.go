package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// A requeued job released at once (scontrol update StartTime=now) does
// not start in the second its kill message revoked its credentials:
// slurmd would refuse that launch ("Job credential revoked"). It starts
// the next second, with a credential of that second, and the controller
// is told to run a pass then. Other jobs start at once.
func TestRequeueNoLaunchInRevokedSecond(t *testing.T) {
	for _, tc := range []struct {
		name string
		// done: the job completed before it was requeued (its end's kill
		// message revoked), else it was running.
		done bool
	}{{"running", false}, {"completed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(&MemJournal{})
			d := batchDesc(alice)
			d.Requeue = 1
			id := mustSubmit(t, m, cl, d, alice, t0)
			if n := len(launches(mustSchedule(t, m, cl, t0))); n != 1 {
				t.Fatalf("first run: %d launches", n)
			}
			now := t0 + 10
			j := m.Job(id)
			if tc.done {
				finishJob(t, m, cl, id, 0, now)
			}
			if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, now); err != nil {
				t.Fatal(err)
			}
			for _, n := range append([]string(nil), j.Completing...) {
				if _, err := m.EpilogComplete(id, n, root, now); err != nil {
					t.Fatal(err)
				}
			}
			u := msg.NewJobDesc()
			u.JobID, u.BeginTime = id, now
			if _, err := m.Update(u, root, cl, now); err != nil {
				t.Fatal(err)
			}
			other := mustSubmit(t, m, cl, batchDesc(bob), bob, now)
			ls := launches(mustSchedule(t, m, cl, now))
			if len(ls) != 1 || ls[0].JobID != other {
				t.Fatalf("in the kill's second: launches %+v, want only job %d", ls, other)
			}
			if m.RevokeWaitOver(now) {
				t.Fatal("RevokeWaitOver true in the kill's second")
			}
			if !m.RevokeWaitOver(now+1) || m.RevokeWaitOver(now+1) {
				t.Fatal("RevokeWaitOver not true exactly once the next second")
			}
			ls = launches(mustSchedule(t, m, cl, now+1))
			if len(ls) != 1 || ls[0].JobID != id {
				t.Fatalf("next second: launches %+v, want job %d", ls, id)
			}
			if ct := ls[0].Msg.Cred.Body.CTime; ct <= now {
				t.Fatalf("credential ctime %d, revoked at %d", ct, now)
			}
		})
	}
}

// batch_requeue_fini pushes the begin time once the requeued job's nodes
// are clean: a StartTime=now given while it was still completing does
// not let it start before its credentials expire.
func TestRequeueStartTimeWhileCompletingIsPushed(t *testing.T) {
	cl := testCluster()
	m := newTestManager(&MemJournal{})
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = id, t0+10
	if _, err := m.Update(u, root, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	if ls := launches(mustSchedule(t, m, cl, t0+11)); len(ls) != 0 {
		t.Fatal("started while completing")
	}
	for _, n := range append([]string(nil), j.Completing...) {
		if _, err := m.EpilogComplete(id, n, root, t0+12); err != nil {
			t.Fatal(err)
		}
	}
	if j.BeginTime != t0+12+credLifetime || j.SubmitTime != t0+12 {
		t.Fatalf("begin %d submit %d", j.BeginTime, j.SubmitTime)
	}
	if ls := launches(mustSchedule(t, m, cl, t0+13)); len(ls) != 0 || j.Reason != ReasonBeginTime {
		t.Fatalf("launches %d reason %d", len(ls), j.Reason)
	}
}
