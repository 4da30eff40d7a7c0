package jobs

import (
	"errors"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// The rules of _update_job, step by step on one pending job of alice's
// (partition "short": MaxTime 10).
func TestUpdateRules(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.Partition = msg.Str("short")
	id := mustSubmit(t, m, cl, d, alice, t0)
	for _, tc := range []struct {
		name string
		c    Caller
		edit func(d *msg.JobDesc)
		want int
	}{
		{"other user", bob, func(d *msg.JobDesc) { d.Name = msg.Str("x") }, slurmerr.ESLURM_USER_ID_MISSING},
		{"user lowers limit", alice, func(d *msg.JobDesc) { d.TimeLimit = 5 }, 0},
		{"user raises within MaxTime", alice, func(d *msg.JobDesc) { d.TimeLimit = 10 }, 0},
		{"user raises past MaxTime", alice, func(d *msg.JobDesc) { d.TimeLimit = 11 }, slurmerr.ESLURM_ACCESS_DENIED},
		{"comment", alice, func(d *msg.JobDesc) { d.Comment = msg.Str("hello world") }, 0},
		{"requeue", alice, func(d *msg.JobDesc) { d.Requeue = 0 }, 0},
		{"exclude", alice, func(d *msg.JobDesc) { d.ExcNodes = msg.Str("n4") }, 0},
		{"unknown exclude", alice, func(d *msg.JobDesc) { d.ExcNodes = msg.Str("n99") }, slurmerr.ESLURM_INVALID_NODE_NAME},
		{"unknown required", alice, func(d *msg.JobDesc) { d.ReqNodes = msg.Str("n99") }, slurmerr.ESLURM_INVALID_NODE_NAME},
		{"unknown feature", alice, func(d *msg.JobDesc) { d.Features = msg.Str("nosuch") }, slurmerr.ESLURM_INVALID_FEATURE},
		{"memory", alice, func(d *msg.JobDesc) { d.PnMinMemory = 50 }, 0},
		{"nodes raise cpus", alice, func(d *msg.JobDesc) { d.MinNodes = 2 }, 0},
		{"user lowers priority", alice, func(d *msg.JobDesc) { d.Priority = 5 }, slurmerr.ESLURM_PRIO_RESET_FAIL},
		{"user raises priority", alice, func(d *msg.JobDesc) { d.Priority = 50 }, slurmerr.ESLURM_ACCESS_DENIED},
		{"admin priority", root, func(d *msg.JobDesc) { d.Priority = 6 }, 0},
		{"nice ignored after admin priority", alice, func(d *msg.JobDesc) { d.Nice = niceOff + 10 }, 0},
		{"admin hold", root, func(d *msg.JobDesc) { d.Priority = 0 }, 0},
		{"priority of a held job", root, func(d *msg.JobDesc) { d.Priority = 7 }, slurmerr.ESLURM_JOB_HELD},
		{"user release of admin hold", alice, func(d *msg.JobDesc) { d.Priority = Infinite }, slurmerr.ESLURM_ACCESS_DENIED},
		{"admin release", root, func(d *msg.JobDesc) { d.Priority = Infinite }, 0},
	} {
		d := msg.NewJobDesc()
		d.JobID = id
		tc.edit(d)
		if _, err := m.Update(d, tc.c, cl, t0); code(err) != tc.want {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.want)
		}
	}
	j := m.Job(id)
	if j.TimeLimit != 10 || j.Comment != "hello world" || j.Requeue || j.ExcNodes != "n4" ||
		j.PnMinMemory != 50 || j.Bitflags&jobMemSet == 0 || j.MinNodes != 2 || j.MinCPUs != 2 ||
		j.Hold != HoldNone || j.Priority == 0 {
		t.Fatalf("job %+v", j)
	}
}

// A hold reaches a running job too (real slurmctld takes it: priority 0,
// held reason), while its node count cannot change.
func TestUpdateRunning(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if !j.Running() {
		t.Fatal("not started")
	}
	d := msg.NewJobDesc()
	d.JobID, d.Priority = id, 0
	if _, err := m.Update(d, root, cl, t0); err != nil {
		t.Fatal(err)
	}
	if j.Priority != 0 || j.Reason != ReasonHeldAdmin || !j.Running() {
		t.Fatalf("hold of a running job: %#x priority %d reason %d", j.State, j.Priority, j.Reason)
	}
	d = msg.NewJobDesc()
	d.JobID, d.MinNodes = id, 2
	if _, err := m.Update(d, root, cl, t0); code(err) != slurmerr.ESLURM_NOT_SUPPORTED {
		t.Fatalf("resize: %v", err)
	}
	d = msg.NewJobDesc()
	d.JobID, d.Features = id, msg.Str("x")
	if _, err := m.Update(d, root, cl, t0); code(err) != slurmerr.ESLURM_JOB_NOT_PENDING {
		t.Fatalf("features: %v", err)
	}
}

// Array tasks named by an update: a part of the pending set is split off
// into records of its own and only those change; all of it updates the
// meta record; a task that does not exist is an array error.
func TestUpdateArrayTasks(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-4")
	d.Priority = 0
	meta := mustSubmit(t, m, cl, d, alice, t0)
	update := func(spec string, edit func(d *msg.JobDesc)) error {
		u := msg.NewJobDesc()
		u.JobIDStr = msg.Str(spec)
		edit(u)
		_, err := m.Update(u, alice, cl, t0)
		return err
	}
	if err := update(itoa(meta)+"_1-2", func(d *msg.JobDesc) { d.Name = msg.Str("two") }); err != nil {
		t.Fatal(err)
	}
	if got := m.Job(meta).Array.Pending; len(got) != 2 || got[0] != 3 || m.Job(meta).Name == "two" {
		t.Fatalf("meta pending %v name %q", got, m.Job(meta).Name)
	}
	for _, task := range []uint32{1, 2} {
		if r := m.arrayTaskRecord(meta, task); r == nil || r.Name != "two" || !r.Pending() {
			t.Fatalf("task %d: %+v", task, r)
		}
	}
	if err := update(itoa(meta)+"_[3-4]", func(d *msg.JobDesc) { d.TimeLimit = 7 }); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(meta); j.TimeLimit != 7 || len(j.Array.Pending) != 2 {
		t.Fatalf("meta %+v", j)
	}
	err := update(itoa(meta)+"_2,9", func(d *msg.JobDesc) { d.TimeLimit = 5 })
	var ae *ArrayErrors
	// Real slurmctld lists the tasks that took it too (code 0).
	if !errors.As(err, &ae) || len(ae.Entries) != 2 || ae.Entries[0].ErrorCode != 0 ||
		ae.Entries[1].ErrorCode != slurmerr.ESLURM_INVALID_JOB_ID || strOf(ae.Entries[1].JobArrayID) != itoa(meta)+"_9" {
		t.Fatalf("array errors: %v", err)
	}
	if r := m.arrayTaskRecord(meta, 2); r.TimeLimit != 5 {
		t.Fatalf("task 2 limit %d", r.TimeLimit)
	}
}

func TestTaskRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []uint32
		want string
	}{{[]uint32{9}, "9"}, {[]uint32{1, 2, 3, 5}, "1-3,5"}, {[]uint32{0, 2, 3}, "0,2-3"}} {
		if got := rangeString(tc.in); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Pending tasks cancelled by a task expression leave the meta record
// without records of their own; the last ones end the meta record.
func TestKillArrayTasks(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-4")
	d.Priority = 0
	meta := mustSubmit(t, m, cl, d, alice, t0)
	kill := func(s string) error {
		_, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal},
			SJobID: msg.Str(s), Signal: 9}, alice, cl, t0)
		return err
	}
	if err := kill(itoa(meta) + "_[3-9]"); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("range past the array: %v", err)
	}
	if n := len(m.Jobs()); n != 1 {
		t.Fatalf("%d records", n)
	}
	if err := kill(itoa(meta) + "_3"); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("second cancel: %v", err)
	}
	if err := kill(itoa(meta) + "_[1-2]"); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(meta); j.Base() != msg.JobCancelled || len(m.Jobs()) != 1 {
		t.Fatalf("meta %#x, %d records", j.State, len(m.Jobs()))
	}
}
