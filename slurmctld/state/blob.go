package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
)

// Blobs are records the caller reads back by seq long after they were
// journaled: a batch job's script and environment, which only a launch or
// `scontrol write batch_script` needs, so the caller keeps the seq instead
// of the bytes (real slurmctld keeps them in files for the same reason).
// The record types that are blobs are the Loader's to say (BlobLoader).
// A blob stays where its frame was written, in its journal segment; a
// snapshot copies the live ones (BlobRefs) into its blob section so the
// segments it covers can go, and from then on they are read from the
// snapshot. The store keeps 24 bytes per blob in memory.

// BlobLoader is a Loader some of whose record types are blobs.
type BlobLoader interface {
	Loader
	// BlobType reports whether records of type typ are blobs.
	BlobType(typ uint16) bool
}

// ErrNoBlob: no blob with that seq (never written, or dropped by a
// snapshot that did not reference it, or lost to damage under -i).
var ErrNoBlob = errors.New("state: no such blob")

// Where a blob's data is.
const (
	inMemory   uint8 = iota // submitted, not written yet: unwritten holds it
	inSegment               // in the journal segment that holds its seq
	inSnapshot              // in the current snapshot's blob section
)

// blobLoc is one blob; the store keeps them sorted by seq.
type blobLoc struct {
	seq   uint64
	off   int64 // of the data in its file
	n     uint32
	where uint8
}

// blobRefs is the caller's latest word on which blobs are live.
type blobRefs struct {
	set  bool
	seq  uint64   // the state they are of
	refs []uint64 // sorted
}

// BlobRefs declares the blobs the caller's state as of seq references
// (typically LastSeq read under the lock under which the caller encodes
// its snapshot). The next Snapshot at seq copies only these of the blobs
// it covers and drops the others; a Snapshot at another seq keeps every
// blob.
func (s *Store) BlobRefs(seq uint64, refs []uint64) {
	r := slices.Clone(refs)
	slices.Sort(r)
	s.mu.Lock()
	s.refs = blobRefs{set: true, seq: seq, refs: r}
	s.mu.Unlock()
}

// Blob returns the data of the blob record seq. It is safe to call at any
// time, the data read from disk once it is written.
func (s *Store) Blob(seq uint64) ([]byte, error) {
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	i, ok := s.findBlob(seq)
	if !ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: seq %d", ErrNoBlob, seq)
	}
	loc := s.blobs[i]
	s.mu.Unlock()
	return s.readBlob(loc)
}

// readBlob reads the blob at loc. s.fmu held for reading.
func (s *Store) readBlob(loc blobLoc) ([]byte, error) {
	return s.readBlobInto(nil, loc)
}

// readBlobInto is readBlob reusing buf's memory when it is large enough.
func (s *Store) readBlobInto(buf []byte, loc blobLoc) ([]byte, error) {
	s.mu.Lock()
	if loc.where == inMemory {
		data, ok := s.unwritten[loc.seq]
		if !ok { // written since loc was taken: look again
			if i, found := s.findBlob(loc.seq); found && s.blobs[i].where != inMemory {
				loc = s.blobs[i]
			}
		} else {
			data = slices.Clone(data)
			s.mu.Unlock()
			return data, nil
		}
	}
	if loc.where == inMemory {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: seq %d", ErrNoBlob, loc.seq)
	}
	f, err := s.blobFile(loc)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return readBlobAt(buf, f, loc)
}

func readBlobAt(buf []byte, f *os.File, loc blobLoc) ([]byte, error) {
	b := slices.Grow(buf[:0], int(loc.n))[:loc.n]
	if _, err := f.ReadAt(b, loc.off); err != nil {
		return nil, fmt.Errorf("state: read blob %d from %s: %w", loc.seq, f.Name(), err)
	}
	return b, nil
}

// findBlob: s.mu held.
func (s *Store) findBlob(seq uint64) (int, bool) {
	i := sort.Search(len(s.blobs), func(i int) bool { return s.blobs[i].seq >= seq })
	return i, i < len(s.blobs) && s.blobs[i].seq == seq
}

// blobFile returns the open file holding loc. s.mu and s.fmu (read) held;
// readers are opened on first use and closed by dropReaders.
func (s *Store) blobFile(loc blobLoc) (*os.File, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if loc.where == inSnapshot {
		if s.snapReader == nil {
			return nil, fmt.Errorf("%w: seq %d (no snapshot open)", ErrNoBlob, loc.seq)
		}
		return s.snapReader, nil
	}
	// The segment holding seq: the last one starting at or before it.
	i := sort.Search(len(s.segments), func(i int) bool { return s.segments[i] > loc.seq }) - 1
	if i < 0 {
		return nil, fmt.Errorf("%w: seq %d (no segment)", ErrNoBlob, loc.seq)
	}
	first := s.segments[i]
	if f := s.segReaders[first]; f != nil {
		return f, nil
	}
	f, err := os.OpenFile(filepath.Join(s.dir, segmentName(first)), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if s.segReaders == nil {
		s.segReaders = map[uint64]*os.File{}
	}
	s.segReaders[first] = f
	return f, nil
}

// noteBlobs records the blobs among recs, just queued at seqs first...,
// their frames starting at offsets off in the pending buffer. s.mu held.
func (s *Store) noteBlobs(recs []Record, first uint64, offs []int) {
	for i, r := range recs {
		if s.blobType == nil || !s.blobType(r.Type) {
			continue
		}
		seq := first + uint64(i)
		s.blobs = append(s.blobs, blobLoc{seq: seq, n: uint32(len(r.Data)), where: inMemory})
		if s.unwritten == nil {
			s.unwritten = map[uint64][]byte{}
		}
		s.unwritten[seq] = r.Data
		s.pendingBlobs = append(s.pendingBlobs, pendingBlob{seq: seq, off: offs[i]})
	}
}

// pendingBlob is a blob frame in a batch buffer.
type pendingBlob struct {
	seq uint64
	off int // of its frame in the batch
}

// blobsWritten moves a written batch's blobs to their segment. s.mu held.
func (s *Store) blobsWritten(pb []pendingBlob, at int64) {
	for _, p := range pb {
		if i, ok := s.findBlob(p.seq); ok {
			s.blobs[i].where = inSegment
			s.blobs[i].off = at + int64(p.off) + frameHeader
		}
		delete(s.unwritten, p.seq)
	}
}

// snapBlobs is the list of blobs a snapshot at seq copies. s.mu held.
func (s *Store) snapBlobs(seq uint64) []blobLoc {
	var out []blobLoc
	useRefs := s.refs.set && s.refs.seq == seq
	for _, b := range s.blobs {
		if b.seq > seq {
			break
		}
		if useRefs {
			if _, ok := slices.BinarySearch(s.refs.refs, b.seq); !ok {
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// writeBlobSection copies blobs into a snapshot being written at offset
// base (of w's first byte in the file) and returns their new locations.
// The section is, per blob: seq u64, length u32, data; then the section's
// length u64.
func (s *Store) writeBlobSection(w io.Writer, base int64, blobs []blobLoc) ([]blobLoc, error) {
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	out := make([]blobLoc, 0, len(blobs))
	var hdr [12]byte
	pos := base
	var buf []byte
	for _, b := range blobs {
		data, err := s.readBlobInto(buf, b)
		if err != nil {
			return nil, err
		}
		buf = data
		binary.LittleEndian.PutUint64(hdr[0:], b.seq)
		binary.LittleEndian.PutUint32(hdr[8:], b.n)
		if _, err := w.Write(hdr[:]); err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		out = append(out, blobLoc{seq: b.seq, off: pos + int64(len(hdr)), n: b.n, where: inSnapshot})
		pos += int64(len(hdr)) + int64(b.n)
	}
	var tail [8]byte
	binary.LittleEndian.PutUint64(tail[:], uint64(pos-base))
	if _, err := w.Write(tail[:]); err != nil {
		return nil, err
	}
	return out, nil
}

// parseBlobSection reads a v2 snapshot's content (after the header, n
// bytes, already checked against its CRC) and returns the caller's
// payload length and the blobs, with offsets in the file.
func parseBlobSection(f io.ReaderAt, n int64) (int64, []blobLoc, error) {
	if n < 8 {
		return 0, nil, fmt.Errorf("content of %d bytes has no blob section", n)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], headerSize+n-8); err != nil {
		return 0, nil, err
	}
	size := binary.LittleEndian.Uint64(tail[:])
	if size > uint64(n-8) {
		return 0, nil, fmt.Errorf("blob section of %d bytes in %d", size, n-8)
	}
	payload := n - 8 - int64(size)
	var blobs []blobLoc
	pos, end := headerSize+payload, headerSize+n-8
	var hdr [12]byte
	for pos < end {
		if end-pos < int64(len(hdr)) {
			return 0, nil, fmt.Errorf("blob header at %d cut short", pos)
		}
		if _, err := f.ReadAt(hdr[:], pos); err != nil {
			return 0, nil, err
		}
		seq := binary.LittleEndian.Uint64(hdr[0:])
		ln := binary.LittleEndian.Uint32(hdr[8:])
		pos += int64(len(hdr))
		if int64(ln) > end-pos {
			return 0, nil, fmt.Errorf("blob %d of %d bytes past the section's end", seq, ln)
		}
		if k := len(blobs); k > 0 && blobs[k-1].seq >= seq {
			return 0, nil, fmt.Errorf("blob %d after blob %d", seq, blobs[k-1].seq)
		}
		blobs = append(blobs, blobLoc{seq: seq, off: pos, n: ln, where: inSnapshot})
		pos += int64(ln)
	}
	return payload, blobs, nil
}

// snapshotDone switches the copied blobs to the new snapshot and drops the
// ones at or below seq it did not copy. s.mu held.
func (s *Store) snapshotDone(seq uint64, copied []blobLoc) {
	out := make([]blobLoc, 0, len(copied)+len(s.blobs))
	out = append(out, copied...)
	for _, b := range s.blobs {
		if b.seq > seq {
			out = append(out, b)
		}
	}
	s.blobs = slices.Clip(out)
	if s.refs.seq <= seq {
		s.refs = blobRefs{}
	}
}

// setSnapReader installs the reader of the current snapshot.
func (s *Store) setSnapReader(f *os.File) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.snapReader != nil {
		s.snapReader.Close()
	}
	s.snapReader = f
}

// closeSegReaders closes the readers of segments that were removed.
func (s *Store) closeSegReaders(firsts []uint64) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for _, first := range firsts {
		if f := s.segReaders[first]; f != nil {
			f.Close()
			delete(s.segReaders, first)
		}
	}
}

// closeReaders closes every blob reader (Close, failed Open).
func (s *Store) closeReaders() {
	s.setSnapReader(nil)
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for first, f := range s.segReaders {
		f.Close()
		delete(s.segReaders, first)
	}
}
