package jobs

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// inlinePayloads puts back in memory the payloads m's jobs keep in the
// journal records recs (seq i+1 = recs[i]), for comparisons with tables
// recovered from the old format.
func inlinePayloads(t *testing.T, m *Manager, recs []state.Record) {
	t.Helper()
	for _, j := range m.Jobs() {
		if j.PayloadSeq == 0 {
			continue
		}
		if j.PayloadSeq > uint64(len(recs)) {
			t.Fatalf("job %d: payload seq %d past the journal", j.ID, j.PayloadSeq)
		}
		_, p, err := decodePayload(recs[j.PayloadSeq-1].Data)
		if err != nil {
			t.Fatalf("job %d: %v", j.ID, err)
		}
		j.Payload, j.PayloadSeq = p, 0
	}
}

func openStore(t *testing.T, dir string, m *Manager) *state.Store {
	t.Helper()
	st, err := state.Open(dir, state.Options{}, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m.Recovered(t0)
	m.SetJournal(StoreJournal(st))
	return st
}

// With the state store, a batch job's payload is on disk only, and is
// read back for the launch, REQUEST_BATCH_SCRIPT and across restarts and
// snapshots; a snapshot keeps only the payloads of jobs still in the table.
func TestPayloadOnDisk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cl := testCluster()
	m := newTestManager(nil)
	st := openStore(t, dir, m)

	d := batchDesc(alice)
	d.Script = msg.Str("#!/bin/sh\necho on disk\n")
	d.SpankJobEnv = []msg.NullString{msg.Str("SPANK_X=1")}
	id := mustSubmit(t, m, cl, d, alice, t0)
	j := m.Job(id)
	if j.Payload != nil || j.PayloadSeq == 0 || !j.HasSpankEnv {
		t.Fatalf("payload in memory: %+v seq %d", j.Payload, j.PayloadSeq)
	}
	// Readable before its group commit is on disk, and after.
	if s, err := m.BatchScript(id, alice.UID); err != nil || s != "#!/bin/sh\necho on disk\n" {
		t.Fatalf("script %q, %v", s, err)
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := m.BatchScript(id, alice.UID); err != nil || s != "#!/bin/sh\necho on disk\n" {
		t.Fatalf("script %q, %v", s, err)
	}
	// An array's tasks share the meta record's payload.
	ad := batchDesc(bob)
	ad.Script = msg.Str("#!/bin/sh\necho array\n")
	ad.ArrayInx = msg.Str("0-3")
	arr := mustSubmit(t, m, cl, ad, bob, t0)
	acts := mustSchedule(t, m, cl, t0+1)
	ls := launches(acts)
	if len(ls) != 4 {
		t.Fatalf("%d launches", len(ls))
	}
	for _, l := range ls {
		want := "#!/bin/sh\necho on disk\n"
		if l.Msg.ArrayJobID == arr {
			want = "#!/bin/sh\necho array\n"
		}
		if l.Msg.Script.Value != want || len(l.Msg.Environment) != 2 {
			t.Fatalf("job %d launched with %q, %d variables", l.Msg.JobID, l.Msg.Script.Value, len(l.Msg.Environment))
		}
	}
	// The first job ends and is purged; a snapshot then drops its payload.
	finishJob(t, m, cl, id, 0, t0+2)
	out, err := m.Tick(cl, t0+1000)
	if err != nil || out.Wait(ctx) != nil || m.Job(id) != nil {
		t.Fatalf("purge: %v", err)
	}
	if err := st.Snapshot(ctx, st.LastSeq(), m.WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Blob(j.PayloadSeq); err == nil {
		t.Fatal("payload of a purged job kept by the snapshot")
	}
	held := batchDesc(alice)
	held.Priority = 0
	late := mustSubmit(t, m, cl, held, alice, t0+1001)
	want := tableJSON(t, m)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	n := newTestManager(nil)
	openStore(t, dir, n)
	n.lastUpdate = m.lastUpdate
	if got := tableJSON(t, n); got != want {
		t.Fatalf("recovered table differs:\n%s\n%s", want, got)
	}
	for _, j := range n.Jobs() {
		p, err := n.payload(j)
		if err != nil || p == nil || len(p.Env) != 2 {
			t.Fatalf("job %d: payload %+v, %v", j.ID, p, err)
		}
	}
	if s, err := n.BatchScript(late, 0); err != nil || s != "#!/bin/sh\necho hello\n" {
		t.Fatalf("script %q, %v", s, err)
	}
}

// State written before payload records existed (payloads inside the job
// records of a snapshot) still recovers, the payloads kept in memory.
func TestPayloadInlineSnapshot(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cl := testCluster()
	old := newTestManager(nil) // no payload store: payloads inline
	id := mustSubmit(t, old, cl, batchDesc(alice), alice, t0)
	var buf bytes.Buffer
	if err := old.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(dir, state.Options{}, newTestManager(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, state.Record{Type: RecJobPurge, Version: RecVersion, Data: []byte(`{"NextID":2,"Purge":999}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Snapshot(ctx, 1, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	m := newTestManager(nil)
	st = openStore(t, dir, m)
	if j := m.Job(id); j == nil || j.Payload == nil {
		t.Fatal("inline payload not recovered")
	}
	// It stays inline across a snapshot of the new format.
	if err := st.Snapshot(ctx, st.LastSeq(), m.WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	if s, err := m.BatchScript(id, 0); err != nil || s != "#!/bin/sh\necho hello\n" {
		t.Fatalf("script %q, %v", s, err)
	}
}

// Every released snapshot format of the job table stays readable:
// version 1 (JSON, payloads inline, frozen) and the current one (gob),
// which -update rewrites from the fixed workload. Each loads to the table
// frozen beside it. (Gob numbers types in the order a process first meets
// them, so the bytes are not compared: gob streams describe their types
// and still decode.)
func TestSnapshotFixtures(t *testing.T) {
	const cur = "testdata/snapshot-v2.gob"
	if *update {
		m := newTestManager(nil) // payloads inline, as version 1 had them
		workload(t, m, testCluster())
		var buf bytes.Buffer
		if err := m.WriteSnapshot(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cur, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"testdata/snapshot-v1.json", cur} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n := newTestManager(nil)
		if err := n.LoadSnapshot(1, bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		checkGolden(t, file, n, *update && file == cur)
	}
}
