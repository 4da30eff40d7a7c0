package state

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/v<FormatVersion> from this build")

// fixtureRecords are what the fixture journal holds, record i having seq i+1.
// Blobs (type blobTestType): seq 2 is referenced when the snapshot at 3 is
// taken and moves into it, seq 3 is not and goes, seq 8 stays in the journal.
var fixtureRecords = []Record{
	{Type: 1, Version: 1, Data: []byte("job 1001 submitted")},
	{Type: blobTestType, Version: 1, Data: []byte("#!/bin/sh\necho job 1001\n")},
	{Type: blobTestType, Version: 1, Data: []byte("#!/bin/sh\necho job 1002, purged\n")},
	{Type: 3, Version: 7, Data: []byte{0, 1, 2, 0xff}},
	{Type: 1, Version: 1, Data: []byte("job 1001 completed")},
	{Type: 0xffff, Version: 0xffff, Data: []byte("last of segment two")},
	{Type: 1, Version: 2, Data: nil},
	{Type: blobTestType, Version: 1, Data: []byte("#!/bin/sh\necho job 1003\n")},
	{Type: 2, Version: 1, Data: []byte("node n1 drained")},
}

const fixtureSnapshot = "fixture snapshot at seq 3\nwith two lines\n"

// writeFixture builds the fixture state: records 1..5 in the first segment, a
// snapshot at 3 (so the first segment straddles it and stays), records 6..9
// in the segment the snapshot started.
func writeFixture(t *testing.T, dir string) {
	s, _ := mustOpen(t, dir, Options{})
	ctx := context.Background()
	for _, r := range fixtureRecords[:5] {
		if _, err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	write := func(w io.Writer) error {
		s.BlobRefs(3, []uint64{2})
		return snapWriter(fixtureSnapshot)(w)
	}
	if err := s.Snapshot(ctx, 3, write); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, fixtureRecords[5:]...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, LockFileName))
}

// describe renders what recovery fed a loader and the blobs the store
// holds, for expected.txt.
func describe(s *Store, l *memLoader) string {
	var b strings.Builder
	if l.hasSnap {
		fmt.Fprintf(&b, "snapshot %d %q\n", l.snapSeq, l.snap)
	}
	for i, r := range l.recs {
		fmt.Fprintf(&b, "record %d type=%d version=%d data=%q\n", l.seqs[i], r.Type, r.Version, r.Data)
	}
	for seq := uint64(1); seq <= s.LastSeq(); seq++ {
		if data, err := s.Blob(seq); err == nil {
			fmt.Fprintf(&b, "blob %d data=%q\n", seq, data)
		}
	}
	return b.String()
}

// TestFixtures reads every released format in testdata: a format change must
// keep reading all of them. Each directory's expected.txt says what recovery
// must produce.
func TestFixtures(t *testing.T) {
	cur := filepath.Join("testdata", fmt.Sprintf("v%d", FormatVersion))
	if *update {
		tmp := stateDir(t)
		writeFixture(t, tmp)
		os.RemoveAll(cur)
		copyDir(t, tmp, cur)
		s, l := mustOpen(t, tmp, Options{})
		desc := describe(s, l)
		s.Close()
		if err := os.WriteFile(filepath.Join(cur, "expected.txt"), []byte(desc), 0o644); err != nil {
			t.Fatal(err)
		}
		// Ordinary modes for the repository; tests copy into a private dir.
		os.Chmod(cur, 0o755)
		names, _ := filepath.Glob(filepath.Join(cur, "*"))
		for _, n := range names {
			os.Chmod(n, 0o644)
		}
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "v*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures in testdata (%v); run go test -run TestFixtures -update", err)
	}
	for _, fx := range dirs {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(fx, "expected.txt"))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "s")
			copyDir(t, fx, dir)
			os.Remove(filepath.Join(dir, "expected.txt"))
			s, l := mustOpen(t, dir, Options{})
			defer s.Close()
			if got := describe(s, l); got != string(want) {
				t.Fatalf("recovered:\n%s\nwant:\n%s", got, want)
			}
			if r := s.Recovered(); r.TruncatedBytes != 0 || len(r.Skipped) != 0 {
				t.Fatalf("fixture needed repair: %+v", r)
			}
			// The journal goes on from an old-format state.
			if _, err := s.Append(context.Background(), Record{Type: 1, Data: []byte("after upgrade")}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// This build still writes the current fixture byte for byte; if not, the
	// format changed: bump FormatVersion and add a fixture, keep the old one.
	t.Run("writer", func(t *testing.T) {
		tmp := stateDir(t)
		writeFixture(t, tmp)
		ents, err := os.ReadDir(cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() == "expected.txt" {
				continue
			}
			want, _ := os.ReadFile(filepath.Join(cur, e.Name()))
			got, err := os.ReadFile(filepath.Join(tmp, e.Name()))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the fixture of format %d (%v)", e.Name(), FormatVersion, err)
			}
		}
	})
}
