package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

func blobRec(i int) Record {
	return Record{Type: blobTestType, Version: 1, Data: []byte(fmt.Sprintf("#!/bin/sh\necho blob %d\n", i))}
}

func wantBlob(t *testing.T, s *Store, seq uint64, i int) {
	t.Helper()
	got, err := s.Blob(seq)
	if err != nil {
		t.Fatalf("Blob(%d): %v", seq, err)
	}
	if want := blobRec(i).Data; string(got) != string(want) {
		t.Fatalf("Blob(%d) = %q, want %q", seq, got, want)
	}
}

// A blob is readable from submission on: from memory, from its segment,
// from the snapshot that copied it, and after a reopen from either.
func TestBlobLifecycle(t *testing.T) {
	dir := stateDir(t)
	ctx := context.Background()
	s, _ := mustOpen(t, dir, Options{SegmentSize: 200})
	// seqs: 1 record, 2 blob, 3 record, 4 blob, 5 blob
	tk, err := s.Submit(rec(0), blobRec(2), rec(1), blobRec(4), blobRec(5))
	if err != nil {
		t.Fatal(err)
	}
	wantBlob(t, s, 2, 2) // maybe still in memory
	if err := tk.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wantBlob(t, s, 4, 4)
	if _, err := s.Blob(3); !errors.Is(err, ErrNoBlob) {
		t.Fatalf("Blob of a plain record: %v", err)
	}
	appendN(t, s, 10, 20) // several segments
	// Snapshot at 5 referencing 2 and 5: 4 goes.
	write := func(w io.Writer) error {
		s.BlobRefs(5, []uint64{5, 2})
		return snapWriter("five")(w)
	}
	if err := s.Snapshot(ctx, 5, write); err != nil {
		t.Fatal(err)
	}
	wantBlob(t, s, 2, 2)
	wantBlob(t, s, 5, 5)
	if _, err := s.Blob(4); !errors.Is(err, ErrNoBlob) {
		t.Fatalf("unreferenced blob kept: %v", err)
	}
	seq, err := s.Append(ctx, blobRec(7))
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 30, 20)
	// A snapshot whose refs were declared for another seq keeps everything.
	last := s.LastSeq()
	s.BlobRefs(last-1, nil)
	if err := s.Snapshot(ctx, last, snapWriter("last")); err != nil {
		t.Fatal(err)
	}
	wantBlob(t, s, seq, 7)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(2); err == nil {
		t.Fatal("Blob after Close succeeded")
	}

	s, l := mustOpen(t, dir, Options{SegmentSize: 200})
	if string(l.snap) != "last" {
		t.Fatalf("snapshot %q", l.snap)
	}
	wantBlob(t, s, 2, 2)
	wantBlob(t, s, 5, 5)
	wantBlob(t, s, seq, 7)
	// One more in the journal after the snapshot, across a reopen.
	seq2, err := s.Append(ctx, blobRec(9))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, l = mustOpen(t, dir, Options{SegmentSize: 200})
	defer s.Close()
	if len(l.recs) != 1 || l.seqs[0] != seq2 {
		t.Fatalf("replayed %v", l.seqs)
	}
	wantBlob(t, s, seq2, 9)
	wantBlob(t, s, 2, 2)
}

// Readers and snapshots at the same time (run with -race).
func TestBlobConcurrentSnapshots(t *testing.T) {
	dir := stateDir(t)
	ctx := context.Background()
	s, _ := mustOpen(t, dir, Options{SegmentSize: 300})
	defer s.Close()
	var mu sync.Mutex // the caller's lock: LastSeq and refs together
	live := map[uint64]int{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Under the caller's lock, as the controller reads them.
				mu.Lock()
				for q, i := range live {
					got, err := s.Blob(q)
					if err != nil || string(got) != string(blobRec(i).Data) {
						t.Errorf("Blob(%d) = %q, %v", q, got, err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 200; i++ {
		mu.Lock()
		tk, err := s.Submit(blobRec(i))
		if err != nil {
			mu.Unlock()
			t.Fatal(err)
		}
		live[tk.Seq()] = i
		if i%3 == 0 {
			for q := range live {
				delete(live, q) // a purge: one blob less
				break
			}
		}
		mu.Unlock()
		if err := tk.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if i%25 == 24 {
			mu.Lock()
			seq := s.LastSeq()
			var refs []uint64
			for q := range live {
				refs = append(refs, q)
			}
			s.BlobRefs(seq, refs)
			mu.Unlock()
			if err := s.Snapshot(ctx, seq, snapWriter("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	for q, i := range live {
		wantBlob(t, s, q, i)
	}
}
