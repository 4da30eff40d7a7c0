package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		n        int
		throttle uint32
		ok       bool
	}{
		{"0-99%10", 100, 10, true},
		{"1,3,5", 3, 0, true},
		{"0-15:4", 4, 0, true},
		{"0-3,2-5", 6, 0, true},
		{"7", 1, 0, true},
		{"5-1", 0, 0, false},
		{"0-1001", 0, 0, false},
		{"0-4:0", 0, 0, false},
		{"a", 0, 0, false},
		{"1%x", 0, 0, false},
		{"", 0, 0, false},
	} {
		l, th, ok := parseArray(tc.spec, 1001)
		if ok != tc.ok || len(l) != tc.n || th != tc.throttle {
			t.Errorf("%q: %v %d %v", tc.spec, l, th, ok)
		}
	}
	if s := rangeString([]uint32{0, 1, 2, 5, 7, 8}); s != "0-2,5,7-8" {
		t.Error(s)
	}
	if s := hexTasks([]uint32{0, 1, 2, 3, 8}); s != "0x10F" {
		t.Error(s)
	}
}

// A 100-task array with a %3 throttle never runs more than 3 tasks at
// once (the cluster has room for 4), runs every task once, and ends with
// the meta record as the last task.
func TestArrayThrottle(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-99%3")
	d.NumTasks, d.MinNodes = 1, 1
	meta := mustSubmit(t, m, cl, d, alice, t0)
	seen := map[uint32]bool{}
	now := t0
	throttled := 0
	for round := 0; round < 200 && len(seen) < 100; round++ {
		now++
		acts := mustSchedule(t, m, cl, now)
		for _, l := range launches(acts) {
			task := l.Msg.ArrayTaskID
			if seen[task] || l.Msg.ArrayJobID != meta {
				t.Fatalf("task %d launched twice or wrong array %d", task, l.Msg.ArrayJobID)
			}
			seen[task] = true
		}
		if run := m.arrayRunning(meta); run > 3 {
			t.Fatalf("%d tasks running", run)
		}
		// The pass that reaches the throttle sets the reason (not the
		// next one), as job_array_start_test does.
		if j := m.Job(meta); j.Pending() && m.arrayRunning(meta) == 3 {
			throttled++
			if j.Reason != ReasonArrayTaskLimit {
				t.Fatalf("round %d: meta reason %d with the throttle reached", round, j.Reason)
			}
		}
		// Finish the 3 oldest running tasks.
		n := 0
		for _, j := range m.Jobs() {
			if j.ArrayJobID == meta && j.Running() && n < 3 {
				finishJob(t, m, cl, j.ID, 0, now)
				n++
			}
		}
	}
	if len(seen) != 100 || throttled == 0 {
		t.Fatalf("%d tasks ran, %d rounds at the throttle", len(seen), throttled)
	}
	if j := m.Job(meta); j.ArrayTaskID == NoVal || j.Array.Pending != nil {
		t.Fatalf("meta %+v", j)
	}
}

func TestArrayKillTask(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-4")
	d.Priority = 0
	meta := mustSubmit(t, m, cl, d, alice, t0)
	kill := func(s string) error {
		_, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal},
			SJobID: msg.Str(s), Signal: 9, Flags: msg.KillJobArray}, alice, cl, t0)
		return err
	}
	if err := kill(itoa(meta) + "_2"); err != nil {
		t.Fatal(err)
	}
	if got := m.Job(meta).Array.Pending; len(got) != 4 || containsTask(got, 2) {
		t.Fatalf("pending %v", got)
	}
	if err := kill(itoa(meta) + "_7"); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("missing task: %v", err)
	}
	if err := kill(itoa(meta)); err != nil {
		t.Fatal(err)
	}
	for _, j := range m.Jobs() {
		if !j.Finished() {
			t.Fatalf("job %d state %#x", j.ID, j.State)
		}
	}
}

func TestDependencyChain(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	var ids []uint32
	for i := 0; i < 5; i++ {
		d := batchDesc(alice)
		d.MinNodes = 1
		if i > 0 {
			d.Dependency = msg.Str("afterok:" + itoa(ids[i-1]))
		}
		ids = append(ids, mustSubmit(t, m, cl, d, alice, t0))
	}
	now := t0
	var order []uint32
	for step := 0; step < 20 && len(order) < 5; step++ {
		now++
		for _, l := range launches(mustSchedule(t, m, cl, now)) {
			order = append(order, l.JobID)
		}
		for _, id := range ids[1:] {
			if j := m.Job(id); j.Pending() && j.Reason != ReasonDependency {
				t.Fatalf("job %d reason %d", id, j.Reason)
			}
		}
		for _, j := range m.Jobs() {
			if j.Running() {
				finishJob(t, m, cl, j.ID, 0, now)
			}
		}
	}
	for i := range ids {
		if i >= len(order) || order[i] != ids[i] {
			t.Fatalf("order %v, want %v", order, ids)
		}
	}
}

func TestDependencyNeverSatisfied(t *testing.T) {
	for _, kill := range []bool{false, true} {
		cl := testCluster()
		m := newTestManager(nil)
		m.cfg.KillInvalidDepend = kill
		first := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
		d := batchDesc(alice)
		d.Dependency = msg.Str("afterok:" + itoa(first))
		ok := mustSubmit(t, m, cl, d, alice, t0)
		d = batchDesc(alice)
		d.Dependency = msg.Str("afternotok:" + itoa(first))
		notok := mustSubmit(t, m, cl, d, alice, t0)
		d = batchDesc(alice)
		d.Dependency = msg.Str("afterany:" + itoa(first))
		anyj := mustSubmit(t, m, cl, d, alice, t0)
		mustSchedule(t, m, cl, t0)
		if m.Job(ok).Dependency.String() != "afterok:"+itoa(first)+"(unfulfilled)" {
			t.Fatal(m.Job(ok).Dependency.String())
		}
		finishJob(t, m, cl, first, 256, t0+1)
		acts := mustSchedule(t, m, cl, t0+2)
		started := map[uint32]bool{}
		for _, l := range launches(acts) {
			started[l.JobID] = true
		}
		if !started[notok] || !started[anyj] || started[ok] {
			t.Fatalf("started %v", started)
		}
		j := m.Job(ok)
		if kill {
			if j.Base() != msg.JobCancelled {
				t.Fatalf("kill_invalid_depend: %#x", j.State)
			}
		} else if !j.Pending() || j.Reason != ReasonDepInvalid || j.Dependency.String() != "afterok:"+itoa(first)+"(failed)" {
			t.Fatalf("reason %d dep %q", j.Reason, j.Dependency.String())
		}
	}
}

func TestSingleton(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	var ids []uint32
	for i := 0; i < 3; i++ {
		d := batchDesc(alice)
		d.Dependency = msg.Str("singleton")
		ids = append(ids, mustSubmit(t, m, cl, d, alice, t0))
	}
	now := t0
	for _, want := range ids {
		now++
		ls := launches(mustSchedule(t, m, cl, now))
		if len(ls) != 1 || ls[0].JobID != want {
			t.Fatalf("launches %+v, want %d", ls, want)
		}
		finishJob(t, m, cl, want, 0, now)
	}
}
