package jobs

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/state"
)

var update = flag.Bool("update", false, "rewrite testdata fixtures")

// The journal record format of version 1 stays readable: testdata holds
// the records of a fixed workload as written when the format was made
// (payloads inside the submit records), and replaying them must give the
// table the workload gives today.
func TestJournalFixtureV1(t *testing.T) {
	const file = "testdata/journal-v1.json"
	cl := testCluster()
	j := &MemJournal{}
	m := newTestManager(j)
	workload(t, m, cl)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []state.Record
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	got := replay(t, recs)
	inlinePayloads(t, m, j.Records)
	if a, b := tableJSON(t, m), tableJSON(t, got); a != b {
		t.Fatalf("fixture replays to a different table:\n%s\n%s", b, a)
	}
}

// The current format (payloads in records of their own) as a fixture too.
func TestJournalFixtureV2(t *testing.T) {
	const file = "testdata/journal-v2.json"
	cl := testCluster()
	j := &MemJournal{}
	m := newTestManager(j)
	workload(t, m, cl)
	if *update {
		data, err := json.MarshalIndent(j.Records, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []state.Record
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	got := replay(t, recs)
	if a, b := tableJSON(t, m), tableJSON(t, got); a != b {
		t.Fatalf("fixture replays to a different table:\n%s\n%s", b, a)
	}
	inlinePayloads(t, got, recs)
	for _, jb := range got.Jobs() {
		if jb.Batch && (jb.Payload == nil || jb.Payload.Script == "") {
			t.Fatalf("job %d: payload lost", jb.ID)
		}
	}
}
