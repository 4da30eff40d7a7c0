package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func checkRecords(t *testing.T, l *memLoader, from, to int) {
	t.Helper()
	if len(l.recs) != to-from+1 {
		t.Fatalf("recovered %d records (%v), want %d..%d", len(l.recs), l.seqs, from, to)
	}
	for i, r := range l.recs {
		want := rec(from + i - 1)
		if l.seqs[i] != uint64(from+i) || r.Type != want.Type || r.Version != want.Version || !bytes.Equal(r.Data, want.Data) {
			t.Fatalf("record %d: seq %d %+v, want seq %d %+v", i, l.seqs[i], r, from+i, want)
		}
	}
}

func TestAppendReopen(t *testing.T) {
	dir := stateDir(t)
	s, l := mustOpen(t, dir, quietOpts(t))
	if l.hasSnap || len(l.recs) != 0 || s.LastSeq() != 0 {
		t.Fatalf("fresh dir recovered something: %+v", l)
	}
	appendN(t, s, 0, 10)
	seq, err := s.Append(context.Background(), rec(10), rec(11))
	if err != nil || seq != 12 {
		t.Fatalf("multi-record Append: seq %d err %v", seq, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, l = mustOpen(t, dir, quietOpts(t))
	defer s.Close()
	checkRecords(t, l, 1, 12)
	if got := s.Recovered(); got.Records != 12 || got.LastSeq != 12 || got.TruncatedBytes != 0 {
		t.Fatalf("Recovered %+v", got)
	}
	if seq, err := s.Append(context.Background(), rec(12)); err != nil || seq != 13 {
		t.Fatalf("append after reopen: %d %v", seq, err)
	}
}

func TestSubmitErrors(t *testing.T) {
	s, _ := mustOpen(t, stateDir(t), Options{MaxRecordSize: 8})
	tests := []struct {
		name string
		recs []Record
	}{
		{"none", nil},
		{"reserved type", []Record{{Type: 0}}},
		{"too big", []Record{{Type: 1, Data: make([]byte, 9)}}},
	}
	for _, tc := range tests {
		if _, err := s.Submit(tc.recs...); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), Record{Type: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

// TestGroupCommit holds the writer inside its first batch so that the next
// submissions are known to be queued together: they must share one sync.
func TestGroupCommit(t *testing.T) {
	s, _ := mustOpen(t, stateDir(t), Options{})
	defer s.Close()
	s.wmu.Lock()
	t1, err := s.Submit(rec(0))
	if err != nil {
		t.Fatal(err)
	}
	for { // until the writer has taken the first batch
		s.mu.Lock()
		taken := s.inflight != nil
		s.mu.Unlock()
		if taken {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	var tickets []Ticket
	for i := 1; i <= 20; i++ {
		tk, err := s.Submit(rec(i))
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	s.wmu.Unlock()
	for _, tk := range append(tickets, t1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tk.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.Batches != 2 || st.Records != 21 {
		t.Fatalf("stats %+v, want 21 records in 2 batches", st)
	}
	if s.DurableSeq() != 21 {
		t.Fatalf("durable %d", s.DurableSeq())
	}
}

// TestConcurrentAppend checks ordering and completeness under -race.
func TestConcurrentAppend(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{SegmentSize: 2048})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[uint64]string{}
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				data := fmt.Sprintf("g%d-%d", g, i)
				seq, err := s.Append(context.Background(), Record{Type: 1, Data: []byte(data)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[seq] = data
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("stats %+v", s.Stats())
	s.Close()
	s, l := mustOpen(t, dir, Options{})
	defer s.Close()
	if len(l.recs) != 400 || len(acked) != 400 {
		t.Fatalf("recovered %d, acked %d", len(l.recs), len(acked))
	}
	for i, seq := range l.seqs {
		if seq != uint64(i+1) || string(l.recs[i].Data) != acked[seq] {
			t.Fatalf("record %d: seq %d %q, acked %q", i, seq, l.recs[i].Data, acked[seq])
		}
	}
}

// writeJournal makes a single-segment journal of n records and returns the
// segment path and the end offset of each frame.
func writeJournal(t *testing.T, n int) (string, string, []int64) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{})
	appendN(t, s, 0, n)
	s.Close()
	path := filepath.Join(dir, segmentName(1))
	ends := []int64{headerSize}
	for i := 0; i < n; i++ {
		ends = append(ends, ends[i]+int64(frameHeader+len(rec(i).Data)))
	}
	if st, err := os.Stat(path); err != nil || st.Size() != ends[n] {
		t.Fatalf("segment: %v, size %d want %d", err, st.Size(), ends[n])
	}
	return dir, path, ends
}

// TestTornTailEveryOffset cuts the journal at every byte: recovery keeps the
// whole records before the cut, drops the partial one with a warning, and the
// journal goes on with the next seq.
func TestTornTailEveryOffset(t *testing.T) {
	const n = 4
	src, path, ends := writeJournal(t, n)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for cut := int64(0); cut < int64(len(full)); cut++ {
		dir := filepath.Join(t.TempDir(), "s")
		copyDir(t, src, dir)
		if err := os.Truncate(filepath.Join(dir, segmentName(1)), cut); err != nil {
			t.Fatal(err)
		}
		whole := 0
		for whole < n && ends[whole+1] <= cut {
			whole++
		}
		s, l := mustOpen(t, dir, Options{Logger: quietOpts(t).Logger})
		checkRecords(t, l, 1, whole)
		wantCut := cut - ends[whole]
		if cut < headerSize {
			wantCut = cut
		}
		if got := s.Recovered().TruncatedBytes; got != wantCut {
			t.Fatalf("cut %d: truncated %d bytes, want %d", cut, got, wantCut)
		}
		seq, err := s.Append(context.Background(), rec(whole))
		if err != nil || seq != uint64(whole+1) {
			t.Fatalf("cut %d: append after recovery: seq %d err %v", cut, seq, err)
		}
		s.Close()
		s, l = mustOpen(t, dir, Options{})
		checkRecords(t, l, 1, whole+1)
		s.Close()
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x5a
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCorruption(t *testing.T) {
	const n = 5
	tests := []struct {
		name      string
		at        func(ends []int64) int64
		wantErr   bool  // without IgnoreErrors
		keep      []int // record numbers (1-based) recovered without / with IgnoreErrors
		keepIgnor []int
	}{
		{"middle record data", func(e []int64) int64 { return e[1] + frameHeader + 2 }, true, nil, []int{1, 3, 4, 5}},
		{"middle record length", func(e []int64) int64 { return e[2] }, true, nil, []int{1, 2, 4, 5}},
		{"first record crc", func(e []int64) int64 { return e[0] + 4 }, true, nil, []int{2, 3, 4, 5}},
		{"segment header", func(e []int64) int64 { return 3 }, true, nil, nil},
		// The last record with a bad CRC is indistinguishable from a torn write.
		{"last record", func(e []int64) int64 { return e[4] + frameHeader }, false, []int{1, 2, 3, 4}, []int{1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, path, ends := writeJournal(t, n)
			flipByte(t, path, tc.at(ends))
			for _, ignore := range []bool{false, true} {
				dir := filepath.Join(t.TempDir(), "s")
				copyDir(t, src, dir)
				opts := quietOpts(t)
				opts.IgnoreErrors = ignore
				l := &memLoader{}
				s, err := Open(dir, opts, l)
				if !ignore && tc.wantErr {
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "start with '-i'") {
						t.Fatalf("err %v, want ErrCorrupt", err)
					}
					if len(l.calls) != 0 {
						t.Fatalf("refused recovery fed the loader %v", l.calls)
					}
					continue
				}
				if err != nil {
					t.Fatalf("ignore=%v: %v", ignore, err)
				}
				want := tc.keep
				if ignore {
					want = tc.keepIgnor
				}
				var got []int
				for i, r := range l.recs {
					got = append(got, int(l.seqs[i]))
					if !bytes.Equal(r.Data, rec(int(l.seqs[i])-1).Data) {
						t.Fatalf("record %d content %q", l.seqs[i], r.Data)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("ignore=%v: recovered %v, want %v", ignore, got, want)
				}
				if ignore && tc.wantErr && len(s.Recovered().Skipped) == 0 {
					t.Fatal("damage skipped without being reported")
				}
				// The documented follow-up: a snapshot makes the damage go away.
				if err := s.Snapshot(context.Background(), s.LastSeq(), func(w io.Writer) error { return nil }); err != nil {
					t.Fatal(err)
				}
				s.Close()
				s, _ = mustOpen(t, dir, Options{})
				s.Close()
			}
		})
	}
}

// TestCorruptNonLastSegment: a cut or bad tail in any segment but the last is
// not a torn write (later segments were written after it was synced).
func TestCorruptNonLastSegment(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{SegmentSize: 100})
	appendN(t, s, 0, 12)
	s.Close()
	segs := listNames(t, dir, "journal-")
	if len(segs) < 3 {
		t.Fatalf("want several segments, have %v", segs)
	}
	p := filepath.Join(dir, segs[0])
	st, _ := os.Stat(p)
	if err := os.Truncate(p, st.Size()-3); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, quietOpts(t), &memLoader{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
	// A missing segment is a sequence gap.
	dir2 := filepath.Join(t.TempDir(), "s")
	copyDir(t, dir, dir2)
	os.Remove(filepath.Join(dir2, segs[0]))
	if _, err := Open(dir2, quietOpts(t), &memLoader{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err %v, want missing records", err)
	}
}

func snapWriter(payload string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, payload); return err }
}

func TestSnapshotCompactionAndOrder(t *testing.T) {
	dir := stateDir(t)
	ctx := context.Background()
	s, _ := mustOpen(t, dir, Options{SegmentSize: 100})
	appendN(t, s, 0, 20)
	if n := len(listNames(t, dir, "journal-")); n < 3 {
		t.Fatalf("only %d segments before snapshot", n)
	}
	if err := s.Snapshot(ctx, 30, snapWriter("x")); err == nil {
		t.Fatal("snapshot beyond the last record accepted")
	}
	if err := s.Snapshot(ctx, 20, snapWriter("state@20")); err != nil {
		t.Fatal(err)
	}
	if segs := listNames(t, dir, "journal-"); len(segs) != 1 || segs[0] != segmentName(21) {
		t.Fatalf("segments after snapshot: %v", segs)
	}
	appendN(t, s, 20, 5)
	if err := s.Snapshot(ctx, 10, snapWriter("old")); err == nil {
		t.Fatal("snapshot older than the current one accepted")
	}
	// A snapshot below the last record keeps the segment holding the rest.
	tk, _ := s.Submit(rec(25))
	if err := s.Snapshot(ctx, 23, snapWriter("state@23")); err != nil {
		t.Fatal(err)
	}
	if err := tk.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if snaps := listNames(t, dir, "snapshot-"); len(snaps) != 1 || snaps[0] != snapshotName(23) {
		t.Fatalf("snapshots: %v", snaps)
	}
	s.Close()
	s, l := mustOpen(t, dir, Options{})
	defer s.Close()
	if string(l.snap) != "state@23" || l.snapSeq != 23 {
		t.Fatalf("snapshot %q @%d", l.snap, l.snapSeq)
	}
	if want := "[snap@23 rec@24 rec@25 rec@26]"; fmt.Sprint(l.calls) != want {
		t.Fatalf("recovery order %v, want %s", l.calls, want)
	}
	if s.LastSeq() != 26 {
		t.Fatalf("LastSeq %d", s.LastSeq())
	}
}

// TestInterruptedCompaction: a crash after the snapshot rename but before the
// old segments went leaves both; recovery skips what the snapshot covers and
// finishes the deletion. A leftover .tmp snapshot is removed.
func TestInterruptedCompaction(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{})
	appendN(t, s, 0, 6)
	s.Close()
	saved := filepath.Join(t.TempDir(), "saved")
	copyDir(t, dir, saved)
	s, _ = mustOpen(t, dir, Options{})
	if err := s.Snapshot(context.Background(), 6, snapWriter("six")); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 6, 2)
	s.Close()
	old, _ := os.ReadFile(filepath.Join(saved, segmentName(1)))
	os.WriteFile(filepath.Join(dir, segmentName(1)), old, 0o600)
	os.WriteFile(filepath.Join(dir, snapshotName(9)+".tmp"), []byte("partial"), 0o600)
	s, l := mustOpen(t, dir, Options{})
	defer s.Close()
	if want := "[snap@6 rec@7 rec@8]"; fmt.Sprint(l.calls) != want {
		t.Fatalf("recovery %v, want %s", l.calls, want)
	}
	if segs := listNames(t, dir, "journal-"); len(segs) != 1 {
		t.Fatalf("segments left: %v", segs)
	}
	if tmp := listNames(t, dir, "snapshot-"); len(tmp) != 1 {
		t.Fatalf("snapshot files: %v", tmp)
	}
}

func TestCorruptSnapshot(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{})
	appendN(t, s, 0, 3)
	if err := s.Snapshot(context.Background(), 3, snapWriter("three records")); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 3, 2)
	s.Close()
	flipByte(t, filepath.Join(dir, snapshotName(3)), headerSize+1)
	if _, err := Open(dir, quietOpts(t), &memLoader{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
	opts := quietOpts(t)
	opts.IgnoreErrors = true
	s, l := mustOpen(t, dir, opts)
	defer s.Close()
	// Records 4 and 5 survive; 1..3 went with the snapshot.
	if l.hasSnap || fmt.Sprint(l.seqs) != "[4 5]" || len(s.Recovered().Skipped) == 0 {
		t.Fatalf("recovered %v snap %v skipped %v", l.seqs, l.hasSnap, s.Recovered().Skipped)
	}
	if c := listNames(t, dir, "snapshot-"); len(c) != 1 || !strings.HasSuffix(c[0], ".corrupt") {
		t.Fatalf("corrupt snapshot not set aside: %v", c)
	}
}

func TestLock(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{})
	_, err := Open(dir, Options{}, &memLoader{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "Unable to lock state save lock file") {
		t.Fatalf("second open: %v", err)
	}
	s.Close()
	s, _ = mustOpen(t, dir, Options{})
	s.Close()
}

func TestDirChecks(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name  string
		setup func(p string) error
		want  error // nil: opens
		text  string
	}{
		{"missing is created", func(string) error { return nil }, nil, ""},
		{"0700", func(p string) error { return os.Mkdir(p, 0o700) }, nil, ""},
		{"0755", func(p string) error { return os.Mkdir(p, 0o755) }, nil, ""},
		{"group writable", func(p string) error { os.Mkdir(p, 0o700); return os.Chmod(p, 0o770) }, ErrInsecureDir, "group or world writable"},
		{"world writable", func(p string) error { os.Mkdir(p, 0o700); return os.Chmod(p, 0o707) }, ErrInsecureDir, "group or world writable"},
		{"file", func(p string) error { return os.WriteFile(p, nil, 0o600) }, nil, "Not a directory!"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(base, fmt.Sprint(i))
			if err := tc.setup(p); err != nil {
				t.Fatal(err)
			}
			s, err := Open(p, Options{}, &memLoader{})
			if tc.want == nil && tc.text == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err %v, want %v %q", err, tc.want, tc.text)
			}
		})
	}
}

func TestSnapshotWriteError(t *testing.T) {
	dir := stateDir(t)
	s, _ := mustOpen(t, dir, Options{})
	defer s.Close()
	appendN(t, s, 0, 2)
	boom := errors.New("encoder failed")
	err := s.Snapshot(context.Background(), 2, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if left := listNames(t, dir, "snapshot-"); len(left) != 0 {
		t.Fatalf("failed snapshot left %v", left)
	}
	appendN(t, s, 2, 1)
	if err := s.Sync(context.Background()); err != nil || s.DurableSeq() != 3 {
		t.Fatalf("after failed snapshot: %v, durable %d", err, s.DurableSeq())
	}
}
