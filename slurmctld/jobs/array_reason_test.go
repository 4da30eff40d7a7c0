package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// arrayDesc is a one-CPU batch array ("1-3%2"), held when held is set.
func arrayDesc(spec string, held bool) *msg.JobDesc {
	d := batchDesc(alice)
	d.ArrayInx = msg.Str(spec)
	d.NumTasks, d.MinNodes = 1, 1
	if held {
		d.Priority = 0
	}
	return d
}

// arrayUpdate is `scontrol update JobId=<sjob> Comment=...` as root.
func arrayUpdate(t *testing.T, m *Manager, cl *Cluster, sjob string, now int64) {
	t.Helper()
	d := msg.NewJobDesc()
	d.JobIDStr = msg.Str(sjob)
	d.Comment = msg.Str("split")
	if _, err := m.Update(d, root, cl, now); err != nil {
		t.Fatalf("update %s: %v", sjob, err)
	}
}

// arrayKill is `scancel <sjob>`.
func arrayKill(t *testing.T, m *Manager, cl *Cluster, sjob string, now int64) {
	t.Helper()
	_, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal},
		SJobID: msg.Str(sjob), Signal: 9, Flags: msg.KillJobArray}, alice, cl, now)
	if err != nil {
		t.Fatalf("scancel %s: %v", sjob, err)
	}
}

// The array's own record once some of its tasks are split off: with one
// task left it is that task's record (job_array_split), shown by its task
// id; otherwise it keeps the pending range. Tasks cancelled while pending
// leave the range without a split, so a last one stays a range.
func TestArraySplitLastPendingTask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     string
		held     bool
		ops      func(t *testing.T, m *Manager, cl *Cluster, id uint32)
		taskID   uint32 // ArrayTaskId the meta record shows
		taskStr  string // its task string ("" for none)
		throttle uint32
		reason   uint16
		gone     int // tasks cancelled, with no record
	}{
		{name: "started up to the throttle", spec: "1-3%2",
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				if n := len(launches(mustSchedule(t, m, cl, t0+1))); n != 2 {
					t.Fatalf("%d tasks started, want 2", n)
				}
			}, taskID: 3, throttle: 2, reason: ReasonArrayTaskLimit},
		{name: "updated one task at a time", spec: "1-3", held: true,
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				arrayUpdate(t, m, cl, itoa(id)+"_1", t0+1)
				if j := m.Job(id); !j.IsArrayMeta() {
					t.Fatalf("two tasks left: meta record %+v", j.Array)
				}
				arrayUpdate(t, m, cl, itoa(id)+"_2", t0+2)
			}, taskID: 3, reason: ReasonHeldUser},
		{name: "two updated at once, the one left not named", spec: "1-3%2", held: true,
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				arrayUpdate(t, m, cl, itoa(id)+"_[2-3]", t0+1)
			}, taskID: 1, throttle: 2, reason: ReasonHeldUser},
		{name: "two of four updated", spec: "1-4", held: true,
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				arrayUpdate(t, m, cl, itoa(id)+"_[1-2]", t0+1)
			}, taskID: NoVal, taskStr: "0x18", reason: ReasonHeldUser},
		{name: "every pending task updated", spec: "1-3", held: true,
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				arrayUpdate(t, m, cl, itoa(id)+"_[1-3]", t0+1)
			}, taskID: NoVal, taskStr: "0xE", reason: ReasonHeldUser},
		{name: "cancelled down to one", spec: "1-3", held: true,
			ops: func(t *testing.T, m *Manager, cl *Cluster, id uint32) {
				arrayKill(t, m, cl, itoa(id)+"_1", t0+1)
				arrayKill(t, m, cl, itoa(id)+"_2", t0+2)
			}, taskID: NoVal, taskStr: "0x8", reason: ReasonHeldUser, gone: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			jr := &MemJournal{}
			m := newTestManager(jr)
			id := mustSubmit(t, m, cl, arrayDesc(tc.spec, tc.held), alice, t0)
			tc.ops(t, m, cl, id)
			// The journal has the records as they are now.
			if got := replay(t, jr.Records); tableJSON(t, got) != tableJSON(t, m) {
				t.Fatalf("replayed table differs:\n%s\n%s", tableJSON(t, got), tableJSON(t, m))
			}
			j := m.Job(id)
			ji := m.Info(j, cl, len(cl.Nodes), 0, t0+10)
			if !j.Pending() || ji.ArrayJobID != id || ji.ArrayTaskID != tc.taskID || ji.ArrayTaskStr.Value != tc.taskStr ||
				ji.ArrayTaskStr.Valid != (tc.taskStr != "") || ji.ArrayMaxTasks != tc.throttle || ji.StateReason != tc.reason {
				t.Fatalf("meta record: state %#x array %d task %d %+v throttle %d reason %d", j.State,
					ji.ArrayJobID, ji.ArrayTaskID, ji.ArrayTaskStr, ji.ArrayMaxTasks, ji.StateReason)
			}
			// Every task has one record, but the ones cancelled.
			seen := map[uint32]int{}
			for _, r := range m.Jobs() {
				if r.IsArrayMeta() {
					for _, task := range r.Array.Pending {
						seen[task]++
					}
				} else if r.ArrayJobID == id {
					seen[r.ArrayTaskID]++
				}
			}
			tasks, _, _ := parseArray(tc.spec, 1001)
			gone := 0
			for _, task := range tasks {
				switch seen[task] {
				case 0:
					gone++
				case 1:
				default:
					t.Errorf("task %d: %d records", task, seen[task])
				}
			}
			if gone != tc.gone {
				t.Errorf("%d tasks without a record, want %d", gone, tc.gone)
			}
		})
	}
}

// Once tasks start up to the throttle, the array's pending record shows
// JobArrayTaskLimit from that pass on (and no eligible time), not from
// the next one; the throttle holds back the record the array's own turns
// into for its last task, and tasks split off while pending, whichever
// record a pass would start them from.
func TestArrayThrottleReasonAtOnce(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, arrayDesc("1-5%2", false), alice, t0)
	if n := len(launches(mustSchedule(t, m, cl, t0+1))); n != 2 {
		t.Fatalf("first pass started %d tasks, want 2", n)
	}
	meta := m.Job(id)
	if meta.Reason != ReasonArrayTaskLimit {
		t.Fatalf("reason after the pass that reached the throttle: %d", meta.Reason)
	}
	if ji := m.Info(meta, cl, len(cl.Nodes), 0, t0+1); ji.EligibleTime != 0 || ji.AccrueTime == 0 {
		t.Fatalf("throttled record: eligible %d accrue %d", ji.EligibleTime, ji.AccrueTime)
	}
	// A pass with the throttle still reached starts nothing.
	if n := len(launches(mustSchedule(t, m, cl, t0+2))); n != 0 {
		t.Fatalf("%d tasks started over the throttle", n)
	}
	now := t0 + 3
	for round := 0; round < 10 && m.Job(id).Pending(); round++ {
		var running []uint32
		for _, r := range m.Jobs() {
			if r.ArrayJobID == id && r.Running() {
				running = append(running, r.ID)
			}
		}
		if len(running) != 2 {
			t.Fatalf("round %d: %d tasks running, want 2", round, len(running))
		}
		finishJob(t, m, cl, running[0], 0, now)
		now++
		if n := len(launches(mustSchedule(t, m, cl, now))); n != 1 {
			t.Fatalf("round %d: %d tasks started, want 1", round, n)
		}
		if j := m.Job(id); j.Pending() && j.Reason != ReasonArrayTaskLimit {
			t.Fatalf("round %d: reason %d", round, j.Reason)
		}
		now++
	}
	if j := m.Job(id); !j.Running() || j.ArrayTaskID != 5 {
		t.Fatalf("array record: state %#x task %d, want task 5 running", j.State, j.ArrayTaskID)
	}
}

// Tasks split off a throttled array while pending count against its
// throttle like the rest: a pass planning several of the array's records
// starts no more than the throttle allows.
func TestArrayThrottleSplitRecords(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, arrayDesc("0-3%1", true), alice, t0)
	arrayUpdate(t, m, cl, itoa(id)+"_0", t0+1)
	arrayUpdate(t, m, cl, itoa(id)+"_1", t0+2)
	release := msg.NewJobDesc()
	release.JobIDStr, release.Priority = msg.Str(itoa(id)), Infinite
	if _, err := m.Update(release, root, cl, t0+3); err != nil {
		t.Fatalf("release: %v", err)
	}
	now := t0 + 4
	for done := 0; done < 4; done++ {
		if n := len(launches(mustSchedule(t, m, cl, now))); n != 1 {
			t.Fatalf("pass %d: %d tasks started, want 1", done, n)
		}
		var running *Job
		for _, r := range m.Jobs() {
			switch {
			case r.ArrayJobID == id && r.Running():
				running = r
			case r.ArrayJobID == id && r.Pending() && r.Reason != ReasonArrayTaskLimit:
				t.Fatalf("pass %d: pending record %d has reason %d", done, r.ID, r.Reason)
			}
		}
		now++
		finishJob(t, m, cl, running.ID, 0, now)
		now++
	}
}
