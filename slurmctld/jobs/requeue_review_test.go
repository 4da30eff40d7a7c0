package jobs

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
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
