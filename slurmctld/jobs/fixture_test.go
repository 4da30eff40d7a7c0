package jobs

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/state"
)

var update = flag.Bool("update", false, "rewrite the current-format testdata fixtures")

// checkGolden compares the table a fixture loads to with the one frozen
// beside it (FIXTURE.table.json, minus its extension). The fixtures hold
// the records of a fixed workload as the code of their day wrote them;
// what today's code makes of the same workload may differ (a whole-array
// cancel no longer splits tasks off), so the table is frozen with them.
// The golden is decoded into today's Job and encoded again: a field added
// to Job since (zero on both sides) is not a difference. rewrite (-update,
// current-format fixtures only) writes the golden first.
func checkGolden(t *testing.T, fixture string, got *Manager, rewrite bool) {
	t.Helper()
	file := strings.TrimSuffix(fixture, fixture[strings.LastIndexByte(fixture, '.'):]) + ".table.json"
	have := tableJSON(t, got)
	if rewrite {
		if err := os.WriteFile(file, []byte(have+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Next uint32
		Jobs []*Job
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	want, err := json.Marshal(golden)
	if err != nil {
		t.Fatal(err)
	}
	if have != string(want) {
		t.Fatalf("%s loads to a different table than %s:\n%s\n%s", fixture, file, have, want)
	}
}

// The journal record format of version 1 stays readable: testdata holds
// the records of a fixed workload as written when the format was made
// (payloads inside the submit records).
func TestJournalFixtureV1(t *testing.T) {
	const file = "testdata/journal-v1.json"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []state.Record
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, file, replay(t, recs), false)
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
	checkGolden(t, file, got, *update)
	inlinePayloads(t, got, recs)
	for _, jb := range got.Jobs() {
		if jb.Batch && (jb.Payload == nil || jb.Payload.Script == "") {
			t.Fatalf("job %d: payload lost", jb.ID)
		}
	}
}
