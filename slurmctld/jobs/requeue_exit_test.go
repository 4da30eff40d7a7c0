package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// A job requeued after it ended keeps its exit code while it pends
// again (select_nodes clears it at the next start) and its derived exit
// code for good; scontrol release clears the exit code.
func TestRequeueKeepsExitCodes(t *testing.T) {
	cl := testCluster()
	m := newTestManager(&MemJournal{})
	d := batchDesc(alice)
	d.Requeue = 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	// An srun step that exited 4, then the script exits 3.
	j.Steps = append(j.Steps, &Step{ID: 0, Nodes: []string{j.BatchHost}, Done: []bool{false}})
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal},
		StepRC: 4 << 8}, root, t0+1); err != nil {
		t.Fatal(err)
	}
	finishJob(t, m, cl, id, 3<<8, t0+2)
	if j.ExitCode != 3<<8 || j.DerivedEC != 4<<8 {
		t.Fatalf("ended: exit %#x derived %#x", j.ExitCode, j.DerivedEC)
	}
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, root, cl, t0+3); err != nil {
		t.Fatal(err)
	}
	ji := m.Info(j, cl, len(cl.Nodes), 0, t0+3)
	if !j.Pending() || ji.ExitCode != 3<<8 || ji.DerivedEC != 4<<8 {
		t.Fatalf("pending again: state %#x exit %#x derived %#x", j.State, ji.ExitCode, ji.DerivedEC)
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = id, t0+4
	if _, err := m.Update(u, root, cl, t0+4); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, m, cl, t0+4)
	if !j.Running() || j.ExitCode != 0 || j.DerivedEC != 4<<8 {
		t.Fatalf("started again: state %#x exit %#x derived %#x", j.State, j.ExitCode, j.DerivedEC)
	}
	finishJob(t, m, cl, id, 0, t0+5)
	if j.Base() != msg.JobComplete || j.ExitCode != 0 || j.DerivedEC != 4<<8 {
		t.Fatalf("second end: state %#x exit %#x derived %#x", j.State, j.ExitCode, j.DerivedEC)
	}
}

// An array whose task was killed by a signal, then requeued and run
// again successfully, still reports the signal in its summary: the exit
// range counts every run that ended (min/max_exit_code), and survives a
// restart of the controller.
func TestRequeueArrayTaskKeepsExitRange(t *testing.T) {
	jr := &MemJournal{}
	m := newTestManager(jr)
	m.cfg.Hooks = HookConfig{MailProg: "/bin/mail"}
	cl := testCluster()
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-2")
	d.MailType = MailEnd | MailFail
	d.Requeue = 1
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	var task1 *Job
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta && j.ArrayTaskID == 1 {
			task1 = j
		}
	}
	finishJob(t, m, cl, task1.ID, 10, t0+1) // SIGUSR1
	finishJob(t, m, cl, meta, 0, t0+2)
	subjects := func() []string {
		var out []string
		for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
			out = append(out, s.Argv[2])
		}
		return out
	}
	const first = "Slurm Array Summary Job_id=1_* (1) Name=job Ended, Mixed, MaxSignal [10]"
	if got := subjects(); len(got) != 1 || got[0] != first {
		t.Fatalf("first summary %q", got)
	}
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: task1.ID}, root, cl, t0+3); err != nil {
		t.Fatal(err)
	}
	if got := subjects(); len(got) != 0 {
		t.Fatalf("mails at the requeue: %q", got)
	}
	m2 := replay(t, jr.Records)
	if tableJSON(t, m2) != tableJSON(t, m) {
		t.Fatalf("replayed table differs:\n%s\n%s", tableJSON(t, m2), tableJSON(t, m))
	}
	u := msg.NewJobDesc()
	u.JobID, u.BeginTime = task1.ID, t0+4
	if _, err := m.Update(u, root, cl, t0+4); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, m, cl, t0+4)
	if !task1.Running() {
		t.Fatalf("task 1 not restarted: %#x", task1.State)
	}
	finishJob(t, m, cl, task1.ID, 0, t0+5)
	const again = "Slurm Array Summary Job_id=1_* (1) Name=job Ended, Mixed, MaxSignal [10], with requeued tasks"
	if got := subjects(); len(got) != 1 || got[0] != again {
		t.Fatalf("second summary %q, want %q", got, again)
	}
}
