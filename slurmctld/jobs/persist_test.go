package jobs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// replay builds a fresh manager from journal records, as Open does.
func replay(t interface{ Fatalf(string, ...any) }, recs []state.Record) *Manager {
	m := newTestManager(nil)
	for i, r := range recs {
		if err := m.ApplyRecord(uint64(i+1), r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return m
}

// workload drives a manager through every kind of transition.
func workload(t *testing.T, m *Manager, cl *Cluster) {
	now := t0
	a := mustSubmit(t, m, cl, batchDesc(alice), alice, now)
	d := batchDesc(bob)
	d.ArrayInx = msg.Str("0-5%2")
	arr := mustSubmit(t, m, cl, d, bob, now)
	d = batchDesc(alice)
	d.Dependency = msg.Str("afterok:" + itoa(a))
	dep := mustSubmit(t, m, cl, d, alice, now)
	mustSchedule(t, m, cl, now+1)
	finishJob(t, m, cl, a, 0, now+2)
	mustSchedule(t, m, cl, now+3)
	m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: arr, StepID: NoVal, StepHetComp: NoVal}, Signal: 9}, bob, cl, now+4)
	u := msg.NewJobDesc()
	u.JobID, u.TimeLimit = dep, 5
	m.Update(u, alice, cl, now+5)
	m.Tick(cl, now+400)
	m.Tick(cl, now+1000)
}

func TestReplayAfterCrash(t *testing.T) {
	cl := testCluster()
	j := &MemJournal{}
	m := newTestManager(j)
	workload(t, m, cl)
	got := replay(t, j.Records)
	if a, b := tableJSON(t, m), tableJSON(t, got); a != b {
		t.Fatalf("replayed table differs:\n%s\n%s", a, b)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	workload(t, m, cl)
	mustSubmit(t, m, cl, batchDesc(alice), alice, t0+2000)
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	if err := n.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	if a, b := tableJSON(t, m), tableJSON(t, n); a != b {
		t.Fatalf("snapshot differs:\n%s\n%s", a, b)
	}
	if n.Job(m.Jobs()[len(m.Jobs())-1].ID).Payload == nil {
		t.Fatal("payload lost")
	}
}

// With the real store: journal, snapshot half way, more changes, reopen.
func TestStateStoreRecovery(t *testing.T) {
	dir := t.TempDir()
	cl := testCluster()
	m := newTestManager(nil)
	st, err := state.Open(dir, state.Options{}, m)
	if err != nil {
		t.Fatal(err)
	}
	m.journal = StoreJournal(st)
	ctx := context.Background()
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	if err := st.Snapshot(ctx, st.LastSeq(), m.WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	r, out, err := m.Submit(batchDesc(bob), bob, cl, t0+1)
	if err != nil || out.Wait(ctx) != nil {
		t.Fatal(err)
	}
	finishJob(t, m, cl, id, 256, t0+2)
	want := tableJSON(t, m)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	st2, err := state.Open(dir, state.Options{}, n)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	n.Recovered(t0 + 3)
	n.SetJournal(StoreJournal(st2))
	n.lastUpdate = m.lastUpdate
	if got := tableJSON(t, n); got != want {
		t.Fatalf("recovered table differs:\n%s\n%s", want, got)
	}
	if s, err := n.BatchScript(r.JobID, 0); err != nil || s == "" {
		t.Fatalf("script lost: %q %v", s, err)
	}
	// New ids continue after the recovered ones.
	if id2 := mustSubmit(t, n, cl, batchDesc(alice), alice, t0+4); id2 <= r.JobID {
		t.Fatalf("id %d after %d", id2, r.JobID)
	}
}

// Properties over random operation sequences: ids are unique and in range,
// a job is in exactly one base state, a running job holds nodes and a
// pending one holds none, every acknowledged job survives a replay, and
// the replayed table equals the live one.
func TestPropertiesRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cl := testCluster()
		j := &MemJournal{}
		m := newTestManager(j)
		m.cfg.MinJobAge = 0 // keep everything: "survives" is then checkable
		callers := []Caller{root, alice, bob}
		now := t0
		acked := map[uint32]bool{}
		for step := 0; step < 60; step++ {
			now += int64(rapid.IntRange(0, 90).Draw(rt, "dt"))
			c := callers[rapid.IntRange(0, 2).Draw(rt, "caller")]
			ids := m.Jobs()
			pick := func() uint32 {
				if len(ids) == 0 {
					return 1
				}
				return ids[rapid.IntRange(0, len(ids)-1).Draw(rt, "job")].ID
			}
			switch rapid.IntRange(0, 7).Draw(rt, "op") {
			case 0, 1:
				d := batchDesc(c)
				d.MinNodes = uint32(rapid.IntRange(1, 3).Draw(rt, "nodes"))
				d.TimeLimit = uint32(rapid.IntRange(1, 5).Draw(rt, "limit"))
				if rapid.Bool().Draw(rt, "array") {
					d.ArrayInx = msg.Str("0-7%3")
				}
				if len(ids) > 0 && rapid.Bool().Draw(rt, "dep") {
					d.Dependency = msg.Str([]string{"afterok:", "afterany:", "afternotok:", "after:"}[rapid.IntRange(0, 3).Draw(rt, "dt")] + itoa(pick()))
				}
				if r, _, err := m.Submit(d, c, cl, now); err == nil {
					acked[r.JobID] = true
				}
			case 2:
				m.Schedule(cl, now, rapid.Bool().Draw(rt, "bf"))
			case 3:
				m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: pick(), StepID: NoVal, StepHetComp: NoVal}, Signal: 9}, c, cl, now)
			case 4:
				id := pick()
				if jj := m.Job(id); jj != nil && jj.Running() {
					rc := uint32(rapid.SampledFrom([]int{0, 256, 9}).Draw(rt, "rc"))
					m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, JobRC: rc, NodeName: msg.Str(jj.BatchHost)}, root, cl, now)
				}
			case 5:
				id := pick()
				if jj := m.Job(id); jj != nil {
					for _, n := range append([]string(nil), jj.Completing...) {
						m.EpilogComplete(id, n, root, now)
					}
				}
			case 6:
				m.Tick(cl, now)
			case 7:
				u := msg.NewJobDesc()
				u.JobID = pick()
				u.Priority = []uint32{0, Infinite}[rapid.IntRange(0, 1).Draw(rt, "hold")]
				m.Update(u, c, cl, now)
			}
			checkInvariants(rt, m)
		}
		got := replay(rt, j.Records)
		for id := range acked {
			if got.Job(id) == nil {
				rt.Fatalf("acknowledged job %d lost in replay", id)
			}
		}
		var a, b bytes.Buffer
		m.WriteSnapshot(&a)
		got.lastUpdate = m.lastUpdate
		got.WriteSnapshot(&b)
		if a.String() != b.String() {
			rt.Fatalf("replay differs")
		}
	})
}

func checkInvariants(t *rapid.T, m *Manager) {
	tasks := map[[2]uint32]uint32{}
	perNode := map[int]uint32{}
	for _, j := range m.Jobs() {
		if j.ID < m.cfg.FirstJobID || j.ID >= m.cfg.MaxJobID {
			t.Fatalf("job id %d out of range", j.ID)
		}
		if b := j.Base(); b > msg.JobOOM {
			t.Fatalf("job %d base state %d", j.ID, b)
		}
		if j.Running() && len(j.Nodes) == 0 {
			t.Fatalf("running job %d without nodes", j.ID)
		}
		if j.Pending() && !j.IsCompleting() && len(j.Nodes) != 0 {
			t.Fatalf("pending job %d holds nodes", j.ID)
		}
		if j.ArrayJobID != 0 && j.ArrayTaskID != NoVal {
			k := [2]uint32{j.ArrayJobID, j.ArrayTaskID}
			if other, dup := tasks[k]; dup {
				t.Fatalf("array task %v in jobs %d and %d", k, other, j.ID)
			}
			tasks[k] = j.ID
		}
		if j.IsArrayMeta() {
			for _, task := range j.Array.Pending {
				k := [2]uint32{j.ArrayJobID, task}
				if other, dup := tasks[k]; dup {
					t.Fatalf("array task %v pending in %d and in job %d", k, j.ID, other)
				}
				tasks[k] = j.ID
			}
		}
		if j.Running() {
			for k, i := range j.NodeIdx {
				perNode[i] += j.NodeCPUs[k]
			}
		}
		if j.ArrayJobID != 0 && j.ArrayJobID == j.ID && j.Array != nil && j.Array.MaxTasks > 0 {
			if run := m.arrayRunning(j.ID); uint32(run) > j.Array.MaxTasks {
				t.Fatalf("array %d runs %d tasks, throttle %d", j.ID, run, j.Array.MaxTasks)
			}
		}
	}
	for i, c := range perNode {
		if c > 16 {
			t.Fatalf("node %d has %d CPUs allocated", i, c)
		}
	}
}

// A crash at an arbitrary instant after the acknowledgements: the state
// directory is copied while the store is still open (nothing closed or
// flushed beyond what Wait made durable) and the copy is recovered.
func TestCrashCopyRecovery(t *testing.T) {
	dir := t.TempDir()
	cl := testCluster()
	m := newTestManager(nil)
	st, err := state.Open(dir, state.Options{}, m)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m.journal = StoreJournal(st)
	ctx := context.Background()
	var acked []uint32
	for i := 0; i < 50; i++ {
		r, out, err := m.Submit(batchDesc(alice), alice, cl, t0+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, r.JobID)
		if i == 20 {
			if err := st.Snapshot(ctx, st.LastSeq(), m.WriteSnapshot); err != nil {
				t.Fatal(err)
			}
		}
		if i%7 == 0 {
			out, _ := m.Schedule(cl, t0+int64(i), false)
			if err := out.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := tableJSON(t, m)
	crash := t.TempDir()
	copyDir(t, dir, crash)
	n := newTestManager(nil)
	st2, err := state.Open(crash, state.Options{}, n)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	n.SetJournal(StoreJournal(st2))
	for _, id := range acked {
		if n.Job(id) == nil {
			t.Fatalf("acknowledged job %d lost", id)
		}
		if s, err := n.BatchScript(id, 0); err != nil || s != "#!/bin/sh\necho hello\n" {
			t.Fatalf("job %d: script %q, %v", id, s, err)
		}
	}
	if got := tableJSON(t, n); got != want {
		t.Fatalf("recovered table differs")
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == state.LockFileName {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(to, 0o700); err != nil {
		t.Fatal(err)
	}
}

// A job cancelled while pending shows no task count (NO_VAL) until the
// controller restarts; then real slurmctld has rebuilt its allocated
// counts (0 nodes) and shows NumTasks=0, unless the job asked for a task
// count. A job pending at the restart and cancelled after keeps NO_VAL;
// dropping the packed records (a billing change) keeps what was rebuilt.
func TestNumTasksAfterRestart(t *testing.T) {
	cl := testCluster()
	jr := &MemJournal{}
	m := newTestManager(jr)
	held := batchDesc(alice)
	held.Priority = 0
	plain := mustSubmit(t, m, cl, held, alice, t0)
	withN := batchDesc(alice)
	withN.Priority, withN.NumTasks = 0, 3
	tasks := mustSubmit(t, m, cl, withN, alice, t0)
	later := mustSubmit(t, m, cl, held, alice, t0)
	for _, id := range []uint32{plain, tasks} {
		if _, err := killStr(m, cl, alice, strconv.Itoa(int(id)), 9, t0+1); err != nil {
			t.Fatal(err)
		}
	}
	numTasks := func(m *Manager, id uint32) uint32 {
		return m.Info(m.Job(id), cl, len(cl.Nodes), 0, t0+3).NumTasks
	}
	if got := numTasks(m, plain); got != NoVal {
		t.Fatalf("before the restart: NumTasks %d, want NO_VAL", got)
	}

	r := replay(t, jr.Records)
	r.Recovered(t0 + 2)
	if _, err := killStr(r, cl, alice, strconv.Itoa(int(later)), 9, t0+3); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		for _, c := range []struct {
			id   uint32
			want uint32
		}{{plain, 0}, {tasks, 3}, {later, NoVal}} {
			if got := numTasks(r, c.id); got != c.want {
				t.Errorf("%s: job %d: NumTasks %d, want %d", step, c.id, got, c.want)
			}
		}
		want := wantList(t, r, cl, msg.ShowAll, ^uint32(0), nil, t0+3)
		if got := gotList(t, r, cl, msg.ShowAll, ^uint32(0), nil, t0+3); !bytes.Equal(got, want) {
			t.Errorf("%s: cached list differs from JobInfoMsg", step)
		}
	}
	check("after the restart")
	r.info = nil
	check("packed records dropped")
}
