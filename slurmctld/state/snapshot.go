package state

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Snapshot writes a snapshot covering every record up to and including seq:
// write must produce the caller's whole state as of seq (typically the state
// read under the caller's lock together with LastSeq). The file is written
// new, fsynced, renamed into place and the directory fsynced; only then are
// older snapshots and the journal segments it covers deleted.
func (s *Store) Snapshot(ctx context.Context, seq uint64, write func(w io.Writer) error) error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.mu.Lock()
	last, prev, closing, failed := s.nextSeq-1, s.snapSeq, s.closing, s.failed
	s.mu.Unlock()
	switch {
	case closing:
		return ErrClosed
	case failed != nil:
		return failed
	case seq > last:
		return fmt.Errorf("state: snapshot at seq %d beyond last record %d", seq, last)
	case seq < prev:
		return fmt.Errorf("state: snapshot at seq %d older than the current one at %d", seq, prev)
	}
	// The journal must hold everything up to seq before the snapshot counts.
	if err := s.Sync(ctx); err != nil {
		return err
	}
	// Start a new segment so the one holding seq can go right away.
	s.wmu.Lock()
	var err error
	if s.seg == nil {
		err = ErrClosed
	} else if s.segNext > s.segFirst {
		err = s.rotate(s.segNext)
	}
	s.wmu.Unlock()
	if err != nil {
		return err
	}

	final := filepath.Join(s.dir, snapshotName(seq))
	tmp := final + ".tmp"
	copied, err := s.writeSnapshotFile(tmp, seq, write)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	// Blobs are read from the new snapshot before the files they were in go.
	r, err := os.OpenFile(final, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	s.fmu.Lock()
	s.mu.Lock()
	s.snapSeq = seq
	s.snapshotDone(seq, copied)
	s.mu.Unlock()
	s.rmu.Lock()
	old := s.snapReader
	s.snapReader = r
	s.rmu.Unlock()
	s.fmu.Unlock()
	if old != nil {
		old.Close()
	}
	s.compact(seq)
	return nil
}

// writeSnapshotFile writes the header, the caller's payload, the blob
// section (format 2) and the trailer; it returns the copied blobs' places
// in the new file.
func (s *Store) writeSnapshotFile(path string, seq uint64, write func(w io.Writer) error) ([]blobLoc, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state: create snapshot: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.Write(appendHeader(nil, snapMagic, seq))
	cw := &countingCRC{w: bw, h: crc32.New(castagnoli)}
	if err := write(cw); err != nil {
		return nil, fmt.Errorf("state: snapshot payload: %w", err)
	}
	// The blob list is taken after write: write may declare BlobRefs.
	s.mu.Lock()
	blobs := s.snapBlobs(seq)
	s.mu.Unlock()
	copied, err := s.writeBlobSection(cw, headerSize+int64(cw.n), blobs)
	if err != nil {
		return nil, fmt.Errorf("state: snapshot blobs: %w", err)
	}
	t := binary.LittleEndian.AppendUint64(nil, cw.n)
	t = binary.LittleEndian.AppendUint32(t, cw.h.Sum32())
	t = append(t, snapEnd...)
	bw.Write(t)
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("state: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("state: fsync %s: %w", path, err)
	}
	return copied, f.Close()
}

// compact removes what the snapshot at seq made redundant: older snapshots
// and every segment, except the active one, whose records are all <= seq.
// Failures only leave extra files behind, so they are logged, not returned.
func (s *Store) compact(seq uint64) {
	s.mu.Lock()
	segs := append([]uint64(nil), s.segments...)
	s.mu.Unlock()
	var drop []uint64
	for i := 0; i+1 < len(segs); i++ {
		if segs[i+1]-1 <= seq {
			drop = append(drop, segs[i])
		}
	}
	for _, first := range drop {
		if err := os.Remove(filepath.Join(s.dir, segmentName(first))); err != nil {
			s.log.Warn("state: cannot remove journal segment", "err", err)
		}
	}
	if len(drop) > 0 {
		s.mu.Lock()
		s.segments = s.segments[len(drop):]
		s.mu.Unlock()
		s.closeSegReaders(drop)
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("state: cannot list state save location", "err", err)
		return
	}
	for _, e := range ents {
		if n, ok := parseSeqName(e.Name(), "snapshot-", ".snap"); ok && n < seq {
			if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil {
				s.log.Warn("state: cannot remove old snapshot", "err", err)
			}
		}
	}
	if err := syncDir(s.dir); err != nil {
		s.log.Warn("state: cannot sync state save location", "err", err)
	}
}

type countingCRC struct {
	w io.Writer
	h hash.Hash32
	n uint64
}

func (c *countingCRC) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += uint64(n)
	return n, err
}

// openSnapshot checks a snapshot file completely (header, trailer, payload
// CRC) and returns the file with its covered seq, the caller's payload
// section and its blobs.
func openSnapshot(path string) (*os.File, uint64, *io.SectionReader, []blobLoc, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, nil, err
	}
	seq, sec, blobs, err := checkSnapshot(f, st.Size())
	if err != nil {
		f.Close()
		return nil, 0, nil, nil, err
	}
	return f, seq, sec, blobs, nil
}

// checkSnapshot checks a snapshot image of size bytes. Format 1 is header,
// payload, trailer; format 2 puts the blob section between the payload and
// the trailer, which covers both.
func checkSnapshot(f io.ReaderAt, size int64) (uint64, *io.SectionReader, []blobLoc, error) {
	if size < headerSize+snapTrailer {
		return 0, nil, nil, fmt.Errorf("%d bytes, shorter than header and trailer", size)
	}
	var hb [headerSize]byte
	var tb [snapTrailer]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return 0, nil, nil, err
	}
	if _, err := f.ReadAt(tb[:], size-snapTrailer); err != nil {
		return 0, nil, nil, err
	}
	h, err := parseHeader(hb[:], snapMagic)
	if err != nil {
		return 0, nil, nil, err
	}
	if string(tb[12:]) != snapEnd {
		return 0, nil, nil, fmt.Errorf("trailer: bad magic %q", tb[12:])
	}
	n := binary.LittleEndian.Uint64(tb[0:8])
	if n != uint64(size-headerSize-snapTrailer) {
		return 0, nil, nil, fmt.Errorf("trailer: payload length %d, file holds %d", n, size-headerSize-snapTrailer)
	}
	sec := io.NewSectionReader(f, headerSize, int64(n))
	c := crc32.New(castagnoli)
	if _, err := io.Copy(c, sec); err != nil {
		return 0, nil, nil, err
	}
	if got, want := c.Sum32(), binary.LittleEndian.Uint32(tb[8:12]); got != want {
		return 0, nil, nil, fmt.Errorf("payload crc %08x, want %08x", got, want)
	}
	if h.version < 2 {
		return h.seq, io.NewSectionReader(f, headerSize, int64(n)), nil, nil
	}
	payload, blobs, err := parseBlobSection(f, int64(n))
	if err != nil {
		return 0, nil, nil, err
	}
	return h.seq, io.NewSectionReader(f, headerSize, payload), blobs, nil
}

func isTemp(name string) bool {
	return strings.HasPrefix(name, "snapshot-") && strings.HasSuffix(name, ".tmp")
}
