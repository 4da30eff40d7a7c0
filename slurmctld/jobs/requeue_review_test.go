package jobs

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// twoTasks returns the records of tasks 1 and 2 of array meta.
func twoTasks(m *Manager, meta uint32) (task1, task2 *Job) {
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta && j.ArrayTaskID == 1 {
			task1 = j
		}
		if j.ArrayJobID == meta && j.ArrayTaskID == 2 {
			task2 = j
		}
	}
	return task1, task2
}

// requeueAndRestart requeues a running task, lets its nodes be clean and
// starts it again at now+1.
func requeueAndRestart(t *testing.T, m *Manager, cl *Cluster, j *Job, now int64) {
	t.Helper()
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: j.ID}, root, cl, now); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		m.EpilogComplete(j.ID, n, root, now)
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = j.ID, now+1
	if _, err := m.Update(u, root, cl, now+1); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, m, cl, now+1)
	if !j.Running() {
		t.Fatalf("job %d not restarted", j.ID)
	}
}

// _job_array_comp counts a requeue in tot_comp_tasks without folding a
// status: a requeue counted before any task ended leaves min_exit_code at
// its initial 0 (real: "Failed, Mixed, ExitCode [0-1]" when both tasks
// then exit 1). A task end counted first sets both to its status.
func TestArrayExitRangeCountsRequeues(t *testing.T) {
	for _, tc := range []struct {
		name       string
		endFirst   bool // task 2 ends before task 1 is requeued
		lo, hi     uint32
		subjectEnd string
	}{
		{"requeue first", false, 0, 1 << 8, "Failed, Mixed, ExitCode [0-1], with requeued tasks"},
		{"end first", true, 1 << 8, 1 << 8, "Failed, FAILED, ExitCode [1-1], with requeued tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(&MemJournal{})
			m.cfg.Hooks = HookConfig{MailProg: "/bin/mail"}
			cl := testCluster()
			d := batchDesc(alice)
			d.ArrayInx = msg.Str("1-2")
			d.MailType = MailEnd | MailFail
			d.Requeue = 1
			meta := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			task1, task2 := twoTasks(m, meta)
			if tc.endFirst {
				finishJob(t, m, cl, task2.ID, 1<<8, t0+1)
			}
			requeueAndRestart(t, m, cl, task1, t0+1)
			m.TakeScripts(cl)
			if !tc.endFirst {
				finishJob(t, m, cl, task2.ID, 1<<8, t0+3)
			}
			finishJob(t, m, cl, task1.ID, 1<<8, t0+4)
			mails := scriptsOf(m.TakeScripts(cl), ScriptMail)
			if len(mails) != 1 {
				t.Fatalf("%d mails, want the summary", len(mails))
			}
			if lo, hi := m.arrayExitRange(meta); lo != tc.lo || hi != tc.hi {
				t.Errorf("range %#x-%#x, want %#x-%#x", lo, hi, tc.lo, tc.hi)
			}
			if want := "Slurm Array Summary Job_id=" + itoa(meta) + "_* (" + itoa(meta) + ") Name=" + m.Job(meta).Name + " Failed, " + tc.subjectEnd[len("Failed, "):]; mails[0].Argv[2] != want {
				t.Errorf("subject %q, want %q", mails[0].Argv[2], want)
			}
			if a := m.Job(meta).ArrayExit; a == nil || a.Comp != 3 {
				t.Errorf("ArrayExit %+v, want 3 counted (2 ends, 1 requeue)", a)
			}
		})
	}
}

// The exit summary does not grow with requeues, and old state (a task's
// EarlierExits, no ArrayExit on the meta record) is converted on load.
func TestArrayExitOldStateConverted(t *testing.T) {
	m := newTestManager(&MemJournal{})
	cl := testCluster()
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-2")
	d.Requeue = 1
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	task1, task2 := twoTasks(m, meta)
	now := t0 + 1
	for i := 0; i < 20; i++ {
		finishJob(t, m, cl, task1.ID, 0, now)
		requeueAndRestart(t, m, cl, task1, now)
		now += 2
	}
	for _, j := range []*Job{task1, task2} {
		if j.EarlierExits != nil || j.ID != meta && j.ArrayExit != nil {
			t.Fatalf("task %d's own exit records: %v %+v", j.ArrayTaskID, j.EarlierExits, j.ArrayExit)
		}
	}
	if a := m.Job(meta).ArrayExit; a == nil || *a != (ArrayExit{Min: 0, Max: 0, Comp: 40}) {
		t.Fatalf("ArrayExit %+v", a)
	}
	finishJob(t, m, cl, task1.ID, 1<<8, now)
	finishJob(t, m, cl, task2.ID, 9, now)
	// Make it look like old state: the runs before the requeues on the
	// task, nothing on the meta record.
	m.Job(meta).ArrayExit = nil
	task1.EarlierExits = []uint32{0, 2 << 8}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(&MemJournal{})
	if err := n.LoadSnapshot(0, &buf); err != nil {
		t.Fatal(err)
	}
	n.Recovered(now + 1)
	if a := n.Job(meta).ArrayExit; a == nil || *a != (ArrayExit{Min: 0, Max: 2 << 8, Comp: 4}) {
		t.Fatalf("converted ArrayExit %+v", a)
	}
	if e := n.Job(task1.ID).EarlierExits; e != nil {
		t.Fatalf("EarlierExits %v kept", e)
	}
	if len(n.pending) == 0 {
		t.Fatal("conversion not journaled")
	}
}

// A restart that finds a requeued job's nodes clean ends its COMPLETING
// (batch_requeue_fini: new submit and begin times): that change is
// journaled, so a second restart sees the same job.
func TestRecoveredRequeueFiniJournaled(t *testing.T) {
	cl := testCluster()
	jr := &MemJournal{}
	m := newTestManager(jr)
	m.cfg.Hooks = HookConfig{EpilogSlurmctld: "/bin/epi"}
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		m.EpilogComplete(id, n, root, t0+10)
	}
	if !j.IsCompleting() {
		t.Fatal("not completing while EpilogSlurmctld runs")
	}
	jr2 := &MemJournal{}
	m2 := newTestManager(jr2)
	// EpilogSlurmctld gone from the configuration: the restart ends
	// the COMPLETING.
	for i, r := range jr.Records {
		if err := m2.ApplyRecord(uint64(i+1), r); err != nil {
			t.Fatal(err)
		}
	}
	m2.Recovered(t0 + 20)
	if _, err := m2.RestartActions(cl, t0+20); err != nil {
		t.Fatal(err)
	}
	j2 := m2.Job(id)
	if j2.IsCompleting() || j2.BeginTime != t0+20+credLifetime || j2.SubmitTime != t0+20 {
		t.Fatalf("after restart: state %#x begin %d submit %d", j2.State, j2.BeginTime, j2.SubmitTime)
	}
	m3 := replay(t, append(append([]state.Record(nil), jr.Records...), jr2.Records...))
	j3 := m3.Job(id)
	if j3.State != j2.State || j3.BeginTime != j2.BeginTime || j3.SubmitTime != j2.SubmitTime {
		t.Fatalf("journal after restart: state %#x begin %d submit %d, want %#x %d %d",
			j3.State, j3.BeginTime, j3.SubmitTime, j2.State, j2.BeginTime, j2.SubmitTime)
	}
}

// The hold for the second the kill revoked the credentials leaves the
// job's dependency flag alone: the job is eligible (real has no such
// hold), it only waits for the next second.
func TestRevokeHoldNotDependent(t *testing.T) {
	cl := testCluster()
	jr := &MemJournal{}
	m := newTestManager(jr)
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	now := t0 + 10
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, now); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		m.EpilogComplete(id, n, root, now)
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = id, now
	if _, err := m.Update(u, root, cl, now); err != nil {
		t.Fatal(err)
	}
	if ls := launches(mustSchedule(t, m, cl, now)); len(ls) != 0 {
		t.Fatalf("launched in the kill's second: %+v", ls)
	}
	if j.Bitflags&jobDependent != 0 {
		t.Error("held job flagged dependent")
	}
	if j.EligibleTime != now {
		t.Errorf("eligible time %d, want %d", j.EligibleTime, now)
	}
	if ls := launches(mustSchedule(t, m, cl, now+1)); len(ls) != 1 {
		t.Fatalf("next second: %d launches", len(ls))
	}
}

// A requeued job keeps its start and end times while it is completing
// (batch_requeue_fini clears them): its record shows the start as now
// (pack_job's expected start of a pending job with a start time) and the
// end a time limit later; once its nodes are clean both are gone.
func TestRequeueTimesWhileCompleting(t *testing.T) {
	cl := testCluster()
	m := newTestManager(&MemJournal{})
	d := batchDesc(alice)
	d.Requeue = 1
	d.TimeLimit = 5
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	if j.StartTime != t0 || j.EndTime != t0+10 {
		t.Errorf("completing: start %d end %d, want %d %d", j.StartTime, j.EndTime, t0, t0+10)
	}
	ji := m.Info(j, cl, len(cl.Nodes), 0, t0+12)
	if ji.StartTime != t0+12 || ji.EndTime != t0+12+int64(ji.TimeLimit)*60 {
		t.Errorf("completing record: start %d end %d (limit %d), want %d", ji.StartTime, ji.EndTime, ji.TimeLimit, t0+12)
	}
	m.EpilogComplete(id, j.Completing[0], root, t0+13)
	if j.IsCompleting() || j.StartTime != 0 || j.EndTime != 0 {
		t.Errorf("after fini: state %#x start %d end %d", j.State, j.StartTime, j.EndTime)
	}
	// Then the pushed begin time is the expected start.
	if ji := m.Info(j, cl, len(cl.Nodes), 0, t0+14); ji.StartTime != j.BeginTime || ji.EndTime != j.BeginTime+300 {
		t.Errorf("after fini record: start %d end %d, begin %d", ji.StartTime, ji.EndTime, j.BeginTime)
	}
}

// A requeue keeps the job's steps until its nodes are clean: the killed
// srun step's end still reaches the derived exit code (step_partial_comp
// takes a PENDING|COMPLETING job), then cleanup_completing drops what is
// left, a step that never reported counting as NO_VAL in it
// (_internal_step_complete), and the next run numbers its steps from 0
// again.
func TestRequeueKeepsStepsUntilClean(t *testing.T) {
	cl := testCluster()
	m := newTestManager(&MemJournal{})
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	j.Steps = append(j.Steps,
		&Step{ID: 0, Nodes: []string{j.BatchHost}, Done: []bool{false}},
		&Step{ID: 1, Nodes: []string{j.BatchHost}, Done: []bool{false}})
	j.NextStepID = 2
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal},
		StepRC: 9}, root, t0+1); err != nil {
		t.Fatalf("step end after the requeue: %v", err)
	}
	if j.DerivedEC != 9 {
		t.Errorf("DerivedEC %#x, want 9 (0:9)", j.DerivedEC)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		m.EpilogComplete(id, n, root, t0+2)
	}
	if j.IsCompleting() || j.Steps != nil || j.NextStepID != 0 {
		t.Fatalf("after clean: state %#x steps %d next step %d", j.State, len(j.Steps), j.NextStepID)
	}
	if j.DerivedEC != NoVal {
		t.Errorf("DerivedEC %#x after clean, want NO_VAL from the step that never reported", j.DerivedEC)
	}
	_, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 1, StepHetComp: NoVal},
		StepRC: 15}, root, t0+2)
	if code := slurmerr.Code(err); code != slurmerr.ESLURM_JOB_PENDING {
		t.Errorf("step end of a pending job: %v, want ESLURM_JOB_PENDING", err)
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = id, t0+3
	if _, err := m.Update(u, root, cl, t0+3); err != nil {
		t.Fatal(err)
	}
	if ls := launches(mustSchedule(t, m, cl, t0+3)); len(ls) != 1 || !j.Running() {
		t.Fatalf("not restarted: %d launches", len(ls))
	}
	if j.DerivedEC != NoVal {
		t.Errorf("DerivedEC %#x after restart, want NO_VAL kept", j.DerivedEC)
	}
}
