package state

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// memLoader records what recovery fed it, in order.
type memLoader struct {
	snapSeq uint64
	snap    []byte
	hasSnap bool
	seqs    []uint64
	recs    []Record
	calls   []string
}

func (m *memLoader) LoadSnapshot(seq uint64, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m.snapSeq, m.snap, m.hasSnap = seq, b, true
	m.calls = append(m.calls, fmt.Sprintf("snap@%d", seq))
	return nil
}

// blobTestType is the record type the tests' loader calls a blob.
const blobTestType = 4

func (m *memLoader) BlobType(typ uint16) bool { return typ == blobTestType }

func (m *memLoader) ApplyRecord(seq uint64, rec Record) error {
	m.seqs = append(m.seqs, seq)
	m.recs = append(m.recs, rec)
	m.calls = append(m.calls, fmt.Sprintf("rec@%d", seq))
	return nil
}

// quietOpts logs to the test log so warnings are visible with -v only.
func quietOpts(t testing.TB) Options {
	return Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func stateDir(t testing.TB) string {
	d := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustOpen(t testing.TB, dir string, opts Options) (*Store, *memLoader) {
	t.Helper()
	l := &memLoader{}
	s, err := Open(dir, opts, l)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, l
}

func rec(i int) Record {
	return Record{Type: uint16(1 + i%3), Version: 1, Data: []byte(fmt.Sprintf("record %d payload", i))}
}

// appendN appends records rec(from)..rec(from+n-1) one at a time.
func appendN(t testing.TB, s *Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := s.Append(context.Background(), rec(i)); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	if err := os.Mkdir(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == LockFileName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func listNames(t testing.TB, dir, prefix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}
