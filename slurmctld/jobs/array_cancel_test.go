package jobs

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// killStr sends REQUEST_KILL_JOB for an id string, as scancel does.
func killStr(m *Manager, cl *Cluster, c Caller, sjob string, sig uint16, now int64) (Outcome, error) {
	return m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal},
		SJobID: msg.Str(sjob), Signal: sig}, c, cl, now)
}

// arrayRecords are the records of array id.
func arrayRecords(m *Manager, id uint32) []*Job {
	var out []*Job
	for _, j := range m.Jobs() {
		if j.ArrayJobID == id {
			out = append(out, j)
		}
	}
	return out
}

// heldArray submits a held array "1-4" for alice.
func heldArray(t *testing.T, m *Manager, cl *Cluster) uint32 {
	t.Helper()
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-4")
	d.Priority = 0
	return mustSubmit(t, m, cl, d, alice, t0)
}

// Cancelling a whole pending array ("123" or "123_*") cancels its meta
// record in place: one record, CANCELLED, still naming tasks 1-4 (real
// squeue shows 123_[1-4] CANCELLED); no task gets a record of its own.
func TestArrayCancelWholeInPlace(t *testing.T) {
	for _, suffix := range []string{"", "_*"} {
		t.Run("id"+suffix, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			id := heldArray(t, m, cl)
			if _, err := killStr(m, cl, alice, itoa(id)+suffix, 9, t0+1); err != nil {
				t.Fatal(err)
			}
			recs := arrayRecords(m, id)
			if len(recs) != 1 {
				t.Fatalf("%d records, want the meta record alone", len(recs))
			}
			j := recs[0]
			if j.ID != id || j.Base() != msg.JobCancelled || j.IsCompleting() || j.ArrayTaskID != NoVal ||
				!slices.Equal(j.Array.Pending, []uint32{1, 2, 3, 4}) || j.EndTime != t0+1 || j.StartTime != t0+1 {
				t.Fatalf("meta record %+v %+v", j, j.Array)
			}
			ji := m.Info(j, cl, 4, 0, t0+1)
			if ji.ArrayTaskStr.Value != "0x1E" || ji.ArrayTaskID != NoVal || ji.JobState != msg.JobCancelled {
				t.Fatalf("job info: tasks %q task id %d state %#x", ji.ArrayTaskStr.Value, ji.ArrayTaskID, ji.JobState)
			}
			// The scheduler leaves it alone.
			if acts := mustSchedule(t, m, cl, t0+2); len(launches(acts)) != 0 || len(m.Jobs()) != 1 {
				t.Fatalf("scheduled %+v", acts)
			}
		})
	}
}

// What a cancelled meta record answers afterwards, as job_str_signal and
// find_job_array_rec have it: the whole array and a task of its range
// are done; a task never in it, or another user, are refused.
func TestArrayCancelledMetaAnswers(t *testing.T) {
	tests := []struct {
		name   string
		caller Caller
		sjob   string // %s: the array id
		sig    uint16
		want   int
	}{
		{"whole again", alice, "", 9, slurmerr.ESLURM_ALREADY_DONE},
		{"whole again, _*", alice, "_*", 9, slurmerr.ESLURM_ALREADY_DONE},
		{"signal", alice, "", 10, slurmerr.ESLURM_ALREADY_DONE},
		{"task in range", alice, "_2", 9, slurmerr.ESLURM_ALREADY_DONE},
		{"tasks in range", alice, "_[1-3]", 9, slurmerr.ESLURM_ALREADY_DONE},
		{"task never in it", alice, "_7", 9, slurmerr.ESLURM_INVALID_JOB_ID},
		{"other user", bob, "", 9, slurmerr.ESLURM_ACCESS_DENIED},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			id := heldArray(t, m, cl)
			if _, err := killStr(m, cl, alice, itoa(id), 9, t0+1); err != nil {
				t.Fatal(err)
			}
			before := tableJSON(t, m)
			_, err := killStr(m, cl, tc.caller, itoa(id)+tc.sjob, tc.sig, t0+2)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if after := tableJSON(t, m); after != before {
				t.Fatalf("the table changed:\n%s\n%s", before, after)
			}
		})
	}
}

// A pending meta record refuses a signal other than SIGKILL as a pending
// job does, and keeps its tasks; a user other than the owner is refused
// before anything changes.
func TestArrayWholeSignalPending(t *testing.T) {
	tests := []struct {
		name   string
		caller Caller
		sig    uint16
		want   int
	}{
		{"SIGUSR1", alice, 10, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"other user", bob, 9, slurmerr.ESLURM_ACCESS_DENIED},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			id := heldArray(t, m, cl)
			before := tableJSON(t, m)
			if _, err := killStr(m, cl, tc.caller, itoa(id), tc.sig, t0+1); code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if after := tableJSON(t, m); after != before {
				t.Fatalf("the table changed:\n%s\n%s", before, after)
			}
		})
	}
}

// runningArray submits "0-3%2" for alice and starts two tasks (0 and 1,
// records of their own); 2 and 3 stay in the meta record.
func runningArray(t *testing.T, m *Manager, cl *Cluster) (meta uint32, running []uint32) {
	t.Helper()
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-3%2")
	meta = mustSubmit(t, m, cl, d, alice, t0)
	for _, l := range launches(mustSchedule(t, m, cl, t0)) {
		running = append(running, l.JobID)
	}
	if len(running) != 2 || !slices.Equal(m.Job(meta).Array.Pending, []uint32{2, 3}) {
		t.Fatalf("started %v, meta %+v", running, m.Job(meta).Array)
	}
	return meta, running
}

// With tasks split off, the whole array's cancel ends each running task
// in its own record (terminated on its node) and the meta record in
// place with the tasks that never started.
func TestArrayCancelWholeWithRunningTasks(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	meta, running := runningArray(t, m, cl)
	out, err := killStr(m, cl, alice, itoa(meta), 9, t0+5)
	if err != nil {
		t.Fatal(err)
	}
	if len(arrayRecords(m, meta)) != 3 {
		t.Fatalf("%d records, want the meta record and the two started tasks", len(arrayRecords(m, meta)))
	}
	j := m.Job(meta)
	if j.Base() != msg.JobCancelled || !slices.Equal(j.Array.Pending, []uint32{2, 3}) {
		t.Fatalf("meta state %#x tasks %v", j.State, j.Array.Pending)
	}
	terminated := map[uint32]bool{}
	for _, a := range out.Actions {
		if nm, ok := a.(NodeMessage); ok && nm.MsgType == msgtype.REQUEST_TERMINATE_JOB {
			terminated[nm.JobID] = true
		}
	}
	for _, id := range running {
		if r := m.Job(id); r.Base() != msg.JobCancelled || !r.IsCompleting() || !terminated[id] {
			t.Fatalf("task job %d: state %#x, terminated %v", id, r.State, terminated[id])
		}
	}
	if acts := mustSchedule(t, m, cl, t0+6); len(launches(acts)) != 0 {
		t.Fatalf("a task of the cancelled array started: %+v", acts)
	}
}

// Other ways to name the records: REQUEST_CANCEL_JOB_STEP for the whole
// job names one record (job_signal_id: the meta record with its pending
// tasks, the running tasks go on), and a split-off task's own job id is
// no array id to job_str_signal ("Invalid job id specified", as real
// slurmctld answers scancel <its id>).
func TestArrayKillByRecordID(t *testing.T) {
	t.Run("cancel step NO_VAL of the meta record", func(t *testing.T) {
		cl := testCluster()
		m := newTestManager(nil)
		meta, running := runningArray(t, m, cl)
		_, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: meta, StepID: NoVal, StepHetComp: NoVal},
			Signal: 9}, alice, cl, t0+5)
		if err != nil {
			t.Fatal(err)
		}
		if j := m.Job(meta); j.Base() != msg.JobCancelled || !slices.Equal(j.Array.Pending, []uint32{2, 3}) {
			t.Fatalf("meta state %#x tasks %v", j.State, j.Array.Pending)
		}
		for _, id := range running {
			if !m.Job(id).Running() {
				t.Fatalf("task job %d: state %#x", id, m.Job(id).State)
			}
		}
	})
	t.Run("a task's own job id", func(t *testing.T) {
		cl := testCluster()
		m := newTestManager(nil)
		_, running := runningArray(t, m, cl)
		if _, err := killStr(m, cl, alice, itoa(running[0]), 9, t0+5); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
			t.Fatalf("err %v", err)
		}
		if !m.Job(running[0]).Running() {
			t.Fatalf("state %#x", m.Job(running[0]).State)
		}
	})
}

// The cancelled meta record, task range included, is what the journal and
// a snapshot recover.
func TestArrayCancelPersists(t *testing.T) {
	cl := testCluster()
	j := &MemJournal{}
	m := newTestManager(j)
	id := heldArray(t, m, cl)
	meta, _ := runningArray(t, m, cl)
	for _, a := range []uint32{id, meta} {
		if _, err := killStr(m, cl, alice, itoa(a), 9, t0+5); err != nil {
			t.Fatal(err)
		}
	}
	want := tableJSON(t, m)
	got := replay(t, j.Records)
	if s := tableJSON(t, got); s != want {
		t.Fatalf("journal replays to:\n%s\nwant:\n%s", s, want)
	}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	if err := n.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	if s := tableJSON(t, n); s != want {
		t.Fatalf("snapshot loads to:\n%s\nwant:\n%s", s, want)
	}
	for _, r := range []*Manager{got, n} {
		if mj := r.Job(id); mj.Base() != msg.JobCancelled || !slices.Equal(mj.Array.Pending, []uint32{1, 2, 3, 4}) {
			t.Fatalf("recovered meta state %#x tasks %v", mj.State, mj.Array.Pending)
		}
		if _, err := killStr(r, cl, alice, itoa(id)+"_2", 9, t0+6); code(err) != slurmerr.ESLURM_ALREADY_DONE {
			t.Fatalf("task of the recovered range: %v", err)
		}
	}
}

// The frozen fixtures hold the split records the whole-array cancel made
// before (its meta record ended as task 5, the split-off tasks 2-4 were
// purged later): they still load to that shape, and the records act on
// it as on ended jobs.
func TestArrayCancelOldFixtures(t *testing.T) {
	load := map[string]func(t *testing.T) *Manager{
		"testdata/journal-v1.json": func(t *testing.T) *Manager { return replayFile(t, "testdata/journal-v1.json") },
		"testdata/journal-v2.json": func(t *testing.T) *Manager { return replayFile(t, "testdata/journal-v2.json") },
		"testdata/snapshot-v1.json": func(t *testing.T) *Manager {
			return snapshotFile(t, "testdata/snapshot-v1.json")
		},
		"testdata/snapshot-v2.gob": func(t *testing.T) *Manager { return snapshotFile(t, "testdata/snapshot-v2.gob") },
	}
	for file, f := range load {
		t.Run(file, func(t *testing.T) {
			m := f(t)
			cl := testCluster()
			const arr = 2 // the workload's array "0-5%2"
			meta := m.Job(arr)
			if meta == nil || meta.ArrayTaskID != 5 || meta.Base() != msg.JobCancelled || meta.Array == nil ||
				len(meta.Array.Pending) != 0 || meta.IsArrayMeta() {
				t.Fatalf("meta record %+v", meta)
			}
			var tasks []uint32
			for _, r := range arrayRecords(m, arr) {
				tasks = append(tasks, r.ArrayTaskID)
				if r.Base() != msg.JobCancelled {
					t.Fatalf("job %d state %#x", r.ID, r.State)
				}
			}
			slices.Sort(tasks)
			if !slices.Equal(tasks, []uint32{0, 1, 5}) {
				t.Fatalf("task records %v", tasks)
			}
			if _, err := killStr(m, cl, bob, itoa(arr), 9, t0+2000); code(err) != slurmerr.ESLURM_ALREADY_DONE {
				t.Fatalf("whole array: %v", err)
			}
			if _, err := killStr(m, cl, bob, itoa(arr)+"_3", 9, t0+2000); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
				t.Fatalf("purged task: %v", err)
			}
		})
	}
}

func replayFile(t *testing.T, file string) *Manager {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []state.Record
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	return replay(t, recs)
}

func snapshotFile(t *testing.T, file string) *Manager {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestManager(nil)
	if err := m.LoadSnapshot(1, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return m
}

// Cancelling a pending array's tasks by id: a task taken out of the
// meta record's set only counts in the array's exit tally; when the
// last pending one goes, the meta record ends CANCELLED as a whole-array
// cancel ends it (job_completion_logger): one jobcomp record and the END
// mail, the same record a "scancel ID" of the same array writes.
func TestArrayCancelTasksCompletionLogger(t *testing.T) {
	setup := func() (*Manager, *Cluster, uint32) {
		m := hookManager(HookConfig{MailProg: "/bin/mail", JobCompType: "jobcomp/filetxt", JobCompLoc: "/var/log/jc",
			GroupName: func(gid uint32) string { return map[uint32]string{1000: "alice"}[gid] }})
		cl := testCluster()
		d := batchDesc(alice)
		d.ArrayInx = msg.Str("1-3")
		d.Priority = 0
		d.MailType = MailEnd
		return m, cl, mustSubmit(t, m, cl, d, alice, t0)
	}
	m, cl, id := setup()
	if _, err := killStr(m, cl, alice, itoa(id)+"_2", 9, t0+1); err != nil {
		t.Fatal(err)
	}
	meta := m.Job(id)
	if ss := m.TakeScripts(cl); len(ss) != 0 || !meta.Pending() || !slices.Equal(meta.Array.Pending, []uint32{1, 3}) {
		t.Fatalf("after one task: scripts %+v, meta %#x %v", ss, meta.State, meta.Array.Pending)
	}
	if a := meta.ArrayExit; a == nil || a.Comp != 1 || a.Max != 9 {
		t.Fatalf("exit tally %+v after one task", a)
	}
	if _, err := killStr(m, cl, alice, itoa(id)+"_[1,3]", 9, t0+2); err != nil {
		t.Fatal(err)
	}
	if meta.Base() != msg.JobCancelled || meta.IsCompleting() || len(meta.Array.Pending) != 0 ||
		meta.StartTime != t0+2 || meta.EndTime != t0+2 {
		t.Fatalf("meta %+v %+v", meta, meta.Array)
	}
	if a := meta.ArrayExit; a.Comp != 2 {
		t.Fatalf("exit tally %+v, want 2 counts", a)
	}
	ss := m.TakeScripts(cl)
	jc, mail := scriptsOf(ss, ScriptJobCompFile), scriptsOf(ss, ScriptMail)
	if len(jc) != 1 || len(mail) != 1 || !strings.Contains(mail[0].Argv[2], "Ended") {
		t.Fatalf("records %+v, mails %+v", jc, mail)
	}

	w, wcl, wid := setup()
	if _, err := killStr(w, wcl, alice, itoa(wid), 9, t0+2); err != nil {
		t.Fatal(err)
	}
	wjc := scriptsOf(w.TakeScripts(wcl), ScriptJobCompFile)
	if len(wjc) != 1 || wjc[0].Line != jc[0].Line {
		t.Errorf("record\n got %q\nwant %+v (scancel ID)", jc[0].Line, wjc)
	}
	if !strings.Contains(jc[0].Line, " JobState=CANCELLED ") {
		t.Errorf("record %q", jc[0].Line)
	}
}
