package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// gangCluster is testCluster with partitions low (tier 1, lowMode), mid
// (tier 2, SUSPEND) and high (tier 3) over every node, and
// preempt/partition_prio with SUSPEND,GANG.
func gangCluster(lowMode sched.PreemptMode) *Cluster {
	cl := testCluster()
	cl.Config.Preempt = sched.PreemptConfig{Enabled: true, Gang: true, Mode: sched.PreemptSuspend, ReorderCount: 1}
	base := cl.Partitions[0]
	base.Default = false
	low, mid, high := base, base, base
	low.Name, low.PriorityTier, low.PreemptMode = "low", 1, lowMode
	mid.Name, mid.PriorityTier, mid.PreemptMode = "mid", 2, sched.PreemptSuspend
	high.Name, high.PriorityTier, high.PreemptMode = "high", 3, sched.PreemptSuspend
	cl.Partitions = append(cl.Partitions, low, mid, high)
	return cl
}

// gangJob submits a batch job of partition p filling node n1 (16 cores,
// 1000 MB).
func gangJob(t *testing.T, m *Manager, cl *Cluster, p string, now int64) uint32 {
	t.Helper()
	d := batchDesc(alice)
	d.PnMinMemory = 1000
	d.Partition = msg.Str(p)
	d.MinNodes, d.MaxNodes, d.NumTasks = 1, 1, 16
	d.ReqNodes = msg.Str("n1")
	d.TimeLimit = 60
	return mustSubmit(t, m, cl, d, alice, now)
}

// gangSuspendInts are the REQUEST_SUSPEND_INT of acts by job: the op,
// all of them gang's (IndfSusp 0).
func gangSuspendInts(t *testing.T, acts []Action) map[uint32]uint16 {
	t.Helper()
	out := map[uint32]uint16{}
	for _, nm := range suspendInts(acts) {
		si := nm.Msg.(*msg.SuspendInt)
		if si.IndfSusp != 0 {
			t.Errorf("job %d: IndfSusp %d", si.JobID, si.IndfSusp)
		}
		out[si.JobID] = si.Op
	}
	return out
}

// gangEnd runs a job's batch script to its end (unless it ended) and, with
// epilog, its node's epilog.
func gangEnd(t *testing.T, m *Manager, cl *Cluster, id uint32, now int64, epilog bool) {
	t.Helper()
	j := m.Job(id)
	if !j.Finished() {
		req := &msg.CompleteBatchScript{JobID: id, NodeName: msg.Str(j.BatchHost)}
		if _, err := m.CompleteBatch(req, root, cl, now); err != nil {
			t.Fatal(err)
		}
	}
	if !epilog {
		return
	}
	for _, n := range append([]string(nil), j.Completing...) {
		if _, err := m.EpilogComplete(id, n, root, now); err != nil {
			t.Fatal(err)
		}
	}
}

// A high tier job starts on the low job's cores; the low job is suspended
// by gang (it keeps its priority, its cores and its memory, its run time
// stops), stays so while the high job completes, and is resumed once the
// high job's node is clean, its end time pushed by the time it stood.
func TestGangSuspendResume(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	m := newTestManager(nil)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	hi := gangJob(t, m, cl, "high", t0+100)
	acts := mustSchedule(t, m, cl, t0+100)
	l, h := m.Job(lo), m.Job(hi)
	if h.Base() != msg.JobRunning || l.Base() != msg.JobSuspended {
		t.Fatalf("high %#x low %#x", h.State, l.State)
	}
	if got := gangSuspendInts(t, acts); len(got) != 1 || got[lo] != msg.SuspendJob {
		t.Fatalf("suspend messages %v", got)
	}
	if l.Priority == 0 || l.SuspendTime != t0+100 || l.PreSusTime != 100 {
		t.Fatalf("low: priority %d suspend %d presus %d", l.Priority, l.SuspendTime-t0, l.PreSusTime)
	}
	if u := m.NodeUsage(len(cl.Nodes))[0]; u.CPUs != 16 || u.RunJobs != 1 {
		t.Fatalf("n1: %+v", u)
	}
	// Nothing changes while the high job runs or completes.
	if got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+200)); len(got) != 0 {
		t.Fatalf("again: %v", got)
	}
	gangEnd(t, m, cl, hi, t0+300, false)
	if got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+300)); len(got) != 0 || l.Base() != msg.JobSuspended {
		t.Fatalf("high completing: %v, low %#x", got, l.State)
	}
	gangEnd(t, m, cl, hi, t0+300, true)
	if got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+310)); len(got) != 1 || got[lo] != msg.ResumeJob {
		t.Fatalf("resume messages %v", got)
	}
	if l.Base() != msg.JobRunning || l.EndTime != t0+310+3600-100 {
		t.Fatalf("low: state %#x end %d", l.State, l.EndTime-t0)
	}
}

// A job of a CANCEL partition under the high job is preempted (ended
// PREEMPTED, no preempt time: gang.c kills it with job_signal), not
// suspended.
func TestGangCancelMode(t *testing.T) {
	cl := gangCluster(sched.PreemptCancel)
	m := newTestManager(nil)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	hi := gangJob(t, m, cl, "high", t0+100)
	acts := mustSchedule(t, m, cl, t0+100)
	if m.Job(hi).Base() != msg.JobRunning || m.Job(lo).Base() != msg.JobPreempted || m.Job(lo).PreemptTime != 0 {
		t.Fatalf("high %#x low %#x preempt time %d", m.Job(hi).State, m.Job(lo).State, m.Job(lo).PreemptTime)
	}
	if got := gangSuspendInts(t, acts); len(got) != 0 {
		t.Fatalf("suspend messages %v", got)
	}
}

// Three tiers: the high job suspends the mid one, whose own shadow on the
// low job goes, but the high job's covers the low job as well. scontrol
// suspend of the high job takes it out of gang: the mid job resumes (and
// shadows the low one again); when the mid job ends the low one resumes.
func TestGangTiers(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	m := newTestManager(nil)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	mid := gangJob(t, m, cl, "mid", t0+10)
	mustSchedule(t, m, cl, t0+10)
	if m.Job(lo).Base() != msg.JobSuspended || m.Job(mid).Base() != msg.JobRunning {
		t.Fatal("mid over low")
	}
	hi := gangJob(t, m, cl, "high", t0+20)
	got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+20))
	if len(got) != 1 || got[mid] != msg.SuspendJob || m.Job(lo).Base() != msg.JobSuspended {
		t.Fatalf("high over mid: %v", got)
	}
	// The admin suspends the high job: it leaves gang and its cores go
	// back; the mid job resumes and shadows the low one again.
	if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(hi)), root, cl, t0+30); err != nil {
		t.Fatal(err)
	}
	got = gangSuspendInts(t, mustSchedule(t, m, cl, t0+31))
	if len(got) != 1 || got[mid] != msg.ResumeJob || m.Job(lo).Base() != msg.JobSuspended {
		t.Fatalf("high held: %v", got)
	}
	gangEnd(t, m, cl, mid, t0+40, true)
	got = gangSuspendInts(t, mustSchedule(t, m, cl, t0+41))
	if len(got) != 1 || got[lo] != msg.ResumeJob {
		t.Fatalf("mid gone: %v", got)
	}
}

// Without GANG nothing is suspended by the scheduler: the high job waits.
func TestGangOff(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	cl.Config.Preempt.Gang = false
	m := newTestManager(nil)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	hi := gangJob(t, m, cl, "high", t0+100)
	mustSchedule(t, m, cl, t0+100)
	if m.Job(hi).Base() != msg.JobPending || m.Job(lo).Base() != msg.JobRunning {
		t.Fatalf("high %#x low %#x", m.Job(hi).State, m.Job(lo).State)
	}
}

// OverSubscribe=FORCE:2 with PreemptMode=GANG (preempt/none): two jobs on
// the same cores take turns, one timeslice each; a third job on other
// cores runs throughout.
func TestGangTimeslice(t *testing.T) {
	cl := testCluster()
	cl.Config.Preempt = sched.PreemptConfig{Gang: true, TimeSlice: 30}
	force := cl.Partitions[0]
	force.Name, force.Default, force.OverSubscribe, force.MaxShare = "force", false, sched.OverSubscribeForce, 2
	force.PreemptMode = sched.PreemptOff
	cl.Partitions = append(cl.Partitions, force)
	m := newTestManager(nil)
	a := gangJob(t, m, cl, "force", t0)
	mustSchedule(t, m, cl, t0)
	m.Tick(cl, t0) // the timeslicer starts
	b := gangJob(t, m, cl, "force", t0+1)
	got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+1))
	if m.Job(b).Base() != msg.JobSuspended || m.Job(a).Base() != msg.JobRunning || len(got) != 1 {
		t.Fatalf("b on a's cores: a %#x b %#x, %v", m.Job(a).State, m.Job(b).State, got)
	}
	d := batchDesc(alice)
	d.Partition, d.ReqNodes, d.PnMinMemory = msg.Str("force"), msg.Str("n2"), 1000
	c := mustSubmit(t, m, cl, d, alice, t0+2)
	mustSchedule(t, m, cl, t0+2)
	turns := []struct {
		at       int64
		run, sus uint32
	}{
		// The first timeslice finds a a filler (left running when b
		// came), not put in the row by a timeslice: it stays in place.
		{t0 + 30, a, b},
		{t0 + 59, a, b},
		{t0 + 60, b, a},
		{t0 + 89, b, a},
		{t0 + 90, a, b},
		{t0 + 120, b, a},
	}
	for _, tu := range turns {
		out, err := m.Tick(cl, tu.at)
		if err != nil {
			t.Fatal(err)
		}
		gangSuspendInts(t, out.Actions)
		if m.Job(tu.run).Base() != msg.JobRunning || m.Job(tu.sus).Base() != msg.JobSuspended || m.Job(c).Base() != msg.JobRunning {
			t.Fatalf("at +%d: a %#x b %#x c %#x", tu.at-t0, m.Job(a).State, m.Job(b).State, m.Job(c).State)
		}
	}
	// a ends while suspended: b goes on alone.
	gangEnd(t, m, cl, a, t0+130, true)
	mustSchedule(t, m, cl, t0+130)
	if out, _ := m.Tick(cl, t0+150); len(gangSuspendInts(t, out.Actions)) != 0 || m.Job(b).Base() != msg.JobRunning {
		t.Fatalf("b alone: %#x", m.Job(b).State)
	}
}

// After a restart (the table replayed from the journal) the gang-suspended
// job is still gang's: it keeps its priority and its cores, stays
// suspended under the high job, and resumes when that is gone.
func TestGangRestart(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	jr := &MemJournal{}
	m := newTestManager(jr)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	hi := gangJob(t, m, cl, "high", t0+100)
	mustSchedule(t, m, cl, t0+100)
	r := replay(t, jr.Records)
	r.Recovered(t0 + 200)
	if l := r.Job(lo); l.Base() != msg.JobSuspended || l.Priority == 0 {
		t.Fatalf("low after the restart: %#x priority %d", l.State, l.Priority)
	}
	if u := r.NodeUsage(len(cl.Nodes))[0]; u.CPUs != 16 || u.RunJobs != 1 {
		t.Fatalf("n1 after the restart: %+v", u)
	}
	if got := gangSuspendInts(t, mustSchedule(t, r, cl, t0+201)); len(got) != 0 {
		t.Fatalf("after the restart: %v", got)
	}
	gangEnd(t, r, cl, hi, t0+300, true)
	if got := gangSuspendInts(t, mustSchedule(t, r, cl, t0+301)); len(got) != 1 || got[lo] != msg.ResumeJob {
		t.Fatalf("high gone: %v", got)
	}
}

// GANG taken out of PreemptMode (reconfigure): the jobs gang suspended
// are resumed (gs_wake_jobs).
func TestGangWake(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	m := newTestManager(nil)
	lo := gangJob(t, m, cl, "low", t0)
	mustSchedule(t, m, cl, t0)
	gangJob(t, m, cl, "high", t0+100)
	mustSchedule(t, m, cl, t0+100)
	if m.Job(lo).Base() != msg.JobSuspended {
		t.Fatal("setup")
	}
	cl.Config.Preempt.Gang = false
	if got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+200)); len(got) != 1 || got[lo] != msg.ResumeJob {
		t.Fatalf("wake: %v", got)
	}
	if got := gangSuspendInts(t, mustSchedule(t, m, cl, t0+300)); len(got) != 0 {
		t.Fatalf("again: %v", got)
	}
}

// gang.c holds no het job: a het job in a SUSPEND partition under a
// higher tier job's start keeps running whole, never one component
// suspended and the other running.
func TestGangLeavesHetJobs(t *testing.T) {
	cl := gangCluster(sched.PreemptSuspend)
	cl.Config.Backfill = true
	m := newTestManager(nil)
	descs := hetDescs(alice, 2)
	for i, n := range []string{"n1", "n2"} {
		descs[i].ReqNodes = msg.Str(n)
		descs[i].Partition = msg.Str("low")
		descs[i].NumTasks = 16
		descs[i].MinNodes, descs[i].MaxNodes = 1, 1
		descs[i].PnMinMemory = 1000
		descs[i].TimeLimit = 60
	}
	r, _, err := m.SubmitHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	l := r.JobID
	if !m.Job(l).Running() || !m.Job(l+1).Running() {
		t.Fatalf("het job not running: %#x %#x", m.Job(l).State, m.Job(l+1).State)
	}
	gangJob(t, m, cl, "high", t0+100)
	out, err := m.Schedule(cl, t0+100, true)
	if err != nil {
		t.Fatal(err)
	}
	if s := gangSuspendInts(t, out.Actions); len(s) != 0 {
		t.Errorf("suspend messages %v, want none for the het job", s)
	}
	if !m.Job(l).Running() || !m.Job(l+1).Running() {
		t.Errorf("het job components %#x %#x, want both running", m.Job(l).State, m.Job(l+1).State)
	}
}
