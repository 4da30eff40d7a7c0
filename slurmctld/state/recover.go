package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// CorruptError locates damage that recovery will not pass over by itself.
type CorruptError struct {
	File   string
	Offset int64 // -1 when the whole file is concerned
	Reason string
}

func (e *CorruptError) Error() string {
	where := e.File
	if e.Offset >= 0 {
		where = fmt.Sprintf("%s at offset %d", e.File, e.Offset)
	}
	// slurmctld's advice for a bad state file, since IgnoreErrors is its -i.
	return fmt.Sprintf("Incomplete state save file %s: %s, start with '-i' to ignore this. Warning: using -i will lose the data that can't be recovered.", where, e.Reason)
}

func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// segImage is one decoded segment and what recovery decided about it.
type segImage struct {
	first    uint64
	path     string
	recs     []segRecord
	keepSize int64 // bytes to keep; < file size means a torn tail is cut
	size     int64
	remove   bool // a torn last segment with not even a valid header
	setAside bool // a bad header skipped under IgnoreErrors: renamed .corrupt
}

// recover loads the newest valid snapshot and the journal after it into l,
// truncates a torn tail, and opens the active segment. Everything is decoded
// and checked before l sees anything, so a refused recovery feeds l nothing.
func (s *Store) recover(l Loader) error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	var snaps, segs []uint64
	for _, e := range ents {
		name := e.Name()
		if n, ok := parseSeqName(name, "snapshot-", ".snap"); ok {
			snaps = append(snaps, n)
		} else if n, ok := parseSeqName(name, "journal-", ".wal"); ok {
			segs = append(segs, n)
		} else if isTemp(name) {
			// A snapshot that never got renamed: it never counted.
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("state: %w", err)
			}
		}
	}
	slices.Sort(segs)
	slices.Sort(snaps)
	slices.Reverse(snaps)

	// The newest snapshot that checks out. An older one is only of use with
	// IgnoreErrors: the journal it needs was deleted when the newer one landed.
	var snap *os.File
	var snapSec *io.SectionReader
	var snapSeq uint64
	var snapBlobs []blobLoc
	for _, seq := range snaps {
		path := filepath.Join(s.dir, snapshotName(seq))
		f, hseq, sec, blobs, err := openSnapshot(path)
		if err == nil && hseq != seq {
			f.Close()
			err = fmt.Errorf("header seq %d does not match its name", hseq)
		}
		if err != nil {
			cerr := &CorruptError{File: path, Offset: -1, Reason: err.Error()}
			if !s.opts.IgnoreErrors {
				return cerr
			}
			s.skip(cerr.File, -1, err.Error())
			// Keep it for a post-mortem, but out of the way of the next Open.
			if rerr := os.Rename(path, path+".corrupt"); rerr != nil {
				return fmt.Errorf("state: %w", rerr)
			}
			continue
		}
		snap, snapSeq, snapSec, snapBlobs = f, seq, sec, blobs
		s.recovered.SnapshotSeq = seq
		break
	}
	keepSnap := false
	defer func() {
		if snap != nil && !keepSnap {
			snap.Close()
		}
	}()

	imgs, err := s.readJournal(segs, snapSeq)
	if err != nil {
		return err
	}

	// Checks done; now feed the caller.
	if snap != nil {
		if err := l.LoadSnapshot(snapSeq, bufio.NewReaderSize(snapSec, 1<<20)); err != nil {
			return fmt.Errorf("state: loading snapshot %s: %w", snap.Name(), err)
		}
	}
	last, expect := snapSeq, snapSeq+1
	for _, img := range imgs {
		for _, r := range img.recs {
			if r.seq > last {
				last = r.seq
			}
			if r.seq < expect {
				continue
			}
			if r.seq > expect {
				// Only reachable with IgnoreErrors: readJournal refused otherwise.
				s.log.Error("state: journal records lost", "first", expect, "last", r.seq-1)
			}
			if s.blobType != nil && s.blobType(r.rec.Type) {
				snapBlobs = append(snapBlobs, blobLoc{seq: r.seq, off: int64(r.off) + frameHeader,
					n: uint32(len(r.rec.Data)), where: inSegment})
			}
			// A copy, so a record the caller keeps does not pin a whole segment.
			r.rec.Data = bytes.Clone(r.rec.Data)
			if err := l.ApplyRecord(r.seq, r.rec); err != nil {
				return fmt.Errorf("state: replaying record %d from %s: %w", r.seq, img.path, err)
			}
			s.recovered.Records++
			expect = r.seq + 1
		}
	}
	s.recovered.LastSeq = last
	s.nextSeq, s.durableSeq, s.snapSeq = last+1, last, snapSeq
	if s.blobType != nil {
		s.blobs = slices.Clip(snapBlobs)
		if snap != nil {
			keepSnap = true
			s.snapReader = snap
		}
	}
	return s.startJournal(imgs)
}

// readJournal decodes every segment, decides what is a torn tail (cut) and
// what is corruption (refused unless IgnoreErrors), and applies the cuts.
func (s *Store) readJournal(segs []uint64, snapSeq uint64) ([]*segImage, error) {
	var imgs []*segImage
	expect := snapSeq + 1 // next seq the caller must see
	for i, first := range segs {
		lastSeg := i == len(segs)-1
		img, err := s.readSegment(first, lastSeg)
		if err != nil {
			return nil, err
		}
		for _, r := range img.recs {
			if r.seq < expect {
				continue
			}
			if r.seq > expect {
				cerr := &CorruptError{File: img.path, Offset: int64(r.off),
					Reason: fmt.Sprintf("journal records %d..%d missing", expect, r.seq-1)}
				if !s.opts.IgnoreErrors {
					return nil, cerr
				}
				s.skip(img.path, int64(r.off), cerr.Reason)
			}
			expect = r.seq + 1
		}
		imgs = append(imgs, img)
	}
	// Cuts only after everything checked out, so a refused Open changes nothing.
	for _, img := range imgs {
		switch {
		case img.remove:
			s.log.Warn("state: removing torn journal segment", "file", img.path, "bytes", img.size)
			if err := os.Remove(img.path); err != nil {
				return nil, fmt.Errorf("state: %w", err)
			}
			s.recovered.TruncatedBytes += img.size
		case img.setAside:
			if err := os.Rename(img.path, img.path+".corrupt"); err != nil {
				return nil, fmt.Errorf("state: %w", err)
			}
		case img.keepSize < img.size:
			s.log.Warn("state: truncating torn journal tail", "file", img.path,
				"offset", img.keepSize, "bytes", img.size-img.keepSize)
			if err := truncateSync(img.path, img.keepSize); err != nil {
				return nil, err
			}
			s.recovered.TruncatedBytes += img.size - img.keepSize
		}
	}
	return imgs, nil
}

// readSegment decodes one segment. Damage with no valid frame after it in the
// last segment is a torn tail: a crash during a write leaves exactly that, and
// no record in it was acknowledged since its sync had not returned.
func (s *Store) readSegment(first uint64, lastSeg bool) (*segImage, error) {
	path := filepath.Join(s.dir, segmentName(first))
	b, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	img := &segImage{first: first, path: path, size: int64(len(b)), keepSize: int64(len(b))}
	h, recs, dmg, err := decodeSegment(b, s.opts.MaxRecordSize, s.opts.IgnoreErrors)
	if err != nil {
		// A header is synced before any record is written to the segment,
		// so a bad header with no valid frame after it is a torn creation.
		if next, _ := resync(b, headerSize-1, first, s.opts.MaxRecordSize); lastSeg && next < 0 {
			img.remove = true
			return img, nil
		}
		cerr := &CorruptError{File: path, Offset: 0, Reason: err.Error()}
		if !s.opts.IgnoreErrors {
			return nil, cerr
		}
		s.skip(path, 0, err.Error())
		img.setAside = true
		return img, nil
	}
	if h.seq != first {
		cerr := &CorruptError{File: path, Offset: 0, Reason: fmt.Sprintf("header seq %d does not match its name", h.seq)}
		if !s.opts.IgnoreErrors {
			return nil, cerr
		}
		s.skip(path, 0, cerr.Reason)
		return img, nil
	}
	img.recs = recs
	for _, d := range dmg {
		if lastSeg && d.resync < 0 {
			img.keepSize = int64(d.off)
			break
		}
		reason := d.err.Error()
		if d.resync >= 0 {
			reason += fmt.Sprintf(", valid records resume at offset %d", d.resync)
		}
		cerr := &CorruptError{File: path, Offset: int64(d.off), Reason: reason}
		if !s.opts.IgnoreErrors {
			return nil, cerr
		}
		s.skip(path, int64(d.off), reason)
		if d.resync < 0 && lastSeg {
			img.keepSize = int64(d.off)
		}
	}
	return img, nil
}

func (s *Store) skip(file string, off int64, reason string) {
	s.log.Error("state: skipping damaged state (IgnoreErrors)", "file", file, "offset", off, "reason", reason)
	s.recovered.Skipped = append(s.recovered.Skipped, fmt.Sprintf("%s@%d: %s", file, off, reason))
}

// startJournal opens the last segment for appending when it ends exactly at
// the recovered state, or starts a new one.
func (s *Store) startJournal(imgs []*segImage) error {
	for _, img := range imgs {
		if !img.remove && !img.setAside {
			s.segments = append(s.segments, img.first)
		}
	}
	if n := len(imgs); n > 0 && !imgs[n-1].remove && !imgs[n-1].setAside {
		img := imgs[n-1]
		end := img.first
		if k := len(img.recs); k > 0 {
			end = img.recs[k-1].seq + 1
		}
		if end == s.nextSeq && len(s.recovered.Skipped) == 0 {
			f, err := os.OpenFile(img.path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("state: %w", err)
			}
			s.seg, s.segFirst, s.segSize, s.segNext = f, img.first, img.keepSize, end
			s.dropCovered()
			return nil
		}
	}
	f, size, err := s.createSegment(s.nextSeq)
	if err != nil {
		return err
	}
	s.seg, s.segFirst, s.segSize, s.segNext = f, s.nextSeq, size, s.nextSeq
	s.segments = append(s.segments, s.nextSeq)
	s.dropCovered()
	return nil
}

// dropCovered finishes a compaction a crash interrupted: segments the
// snapshot covers, and snapshots older than it.
func (s *Store) dropCovered() {
	if s.snapSeq > 0 || len(s.segments) > 1 {
		s.compact(s.snapSeq)
	}
}

func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if st.Size() > maxSegmentFile {
		return nil, &CorruptError{File: path, Offset: -1, Reason: fmt.Sprintf("segment of %d bytes over %d", st.Size(), int64(maxSegmentFile))}
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return b, nil
}

func truncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("state: fsync %s: %w", path, err)
	}
	return f.Close()
}
