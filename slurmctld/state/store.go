package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Errors callers test with errors.Is.
var (
	// ErrCorrupt: the state files are damaged somewhere other than a torn tail.
	ErrCorrupt = errors.New("state save file corrupt")
	// ErrLocked: another process holds StateSaveLocation.
	ErrLocked = errors.New("state save location locked by another process")
	// ErrInsecureDir: StateSaveLocation has an owner or mode others could abuse.
	ErrInsecureDir = errors.New("insecure state save location")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("state store closed")
)

const (
	// DefaultSegmentSize is when the journal moves on to a new segment file.
	DefaultSegmentSize = 64 << 20
	// maxSegmentFile bounds what recovery reads into memory for one segment.
	maxSegmentFile = 4 << 30
	// maxSpare is the largest batch buffer kept for reuse.
	maxSpare = 4 << 20
)

// Options tune a Store. The zero value is the production default.
type Options struct {
	// IgnoreErrors is slurmctld -i: damaged state is skipped (logged as an
	// error) instead of failing Open. Data in the damaged part is lost.
	IgnoreErrors bool
	// Logger receives recovery warnings and errors; nil means slog.Default().
	Logger *slog.Logger
	// SegmentSize is the size after which a new journal segment is started.
	SegmentSize int64
	// MaxRecordSize bounds one record's Data, when writing and when reading.
	MaxRecordSize uint32
}

// Loader receives the recovered state during Open: first the newest valid
// snapshot, if any, then every journal record after it in sequence order.
type Loader interface {
	// LoadSnapshot reads a snapshot the caller wrote; it covers records up to
	// and including seq. Its content has already been checked against its CRC.
	LoadSnapshot(seq uint64, r io.Reader) error
	// ApplyRecord replays one record. rec.Data is the caller's to keep.
	ApplyRecord(seq uint64, rec Record) error
}

// Recovery says what Open found.
type Recovery struct {
	SnapshotSeq    uint64 // seq covered by the loaded snapshot, 0 if none
	Records        int    // journal records replayed after the snapshot
	LastSeq        uint64 // highest seq recovered (snapshot or journal)
	TruncatedBytes int64  // torn tail removed from the last segment
	// Skipped lists damage passed over because of IgnoreErrors. When it is
	// not empty, take a Snapshot at LastSeq before serving: until a snapshot
	// covers it, the damage is still there for the next Open.
	Skipped []string
}

// Stats counts journal work since Open.
type Stats struct {
	Records uint64 // records made durable
	Batches uint64 // write+fdatasync rounds (group commits)
	Bytes   uint64 // journal bytes written
}

// Store is an open StateSaveLocation. Its methods are safe for concurrent use.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger
	lock *os.File

	mu           sync.Mutex
	work         *sync.Cond // signals the writer: pending or closing
	pending      []byte     // encoded frames not yet handed to the writer
	pendingFirst uint64     // seq of the first frame in pending
	spare        []byte
	cur          *commit // completes when pending is durable
	inflight     *commit // batch being written, nil if none
	nextSeq      uint64  // next seq to assign
	durableSeq   uint64
	failed       error // sticky: after a failed write or sync nothing more is written
	closing      bool
	segments     []uint64 // first seq of each segment, ascending; last is active
	snapSeq      uint64
	stats        Stats
	recovered    Recovery

	// Blobs (blob.go), under mu: where each one is, the data of those not
	// written yet, the blob frames of pending, the caller's live list.
	blobType     func(uint16) bool
	blobs        []blobLoc
	unwritten    map[uint64][]byte
	pendingBlobs []pendingBlob
	refs         blobRefs

	// fmu is held for reading while a blob is read from a file and for
	// writing while readers are closed; rmu guards the readers.
	fmu        sync.RWMutex
	rmu        sync.Mutex
	segReaders map[uint64]*os.File
	snapReader *os.File

	wmu      sync.Mutex // active segment: batches and rotation
	seg      *os.File
	segFirst uint64
	segSize  int64
	segNext  uint64 // seq after the last one written to seg

	snapMu sync.Mutex
	done   chan struct{} // closed when the writer exits
}

// commit is one group commit: everyone whose records are in the batch waits on it.
type commit struct {
	done chan struct{}
	err  error
}

func newCommit() *commit { return &commit{done: make(chan struct{})} }

// Ticket is a submitted, not yet necessarily durable, group of records.
type Ticket struct {
	seq uint64
	c   *commit
}

// Seq is the sequence number of the last record of the submission.
func (t Ticket) Seq() uint64 { return t.seq }

// Wait returns once the records are on disk, or with the error that stopped
// them. A context error means the outcome is unknown: the records may still
// become durable.
func (t Ticket) Wait(ctx context.Context) error {
	if t.c == nil {
		return errors.New("state: Wait on a Ticket that Submit did not return")
	}
	select {
	case <-t.c.done:
		return t.c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open locks and checks dir, recovers its state into l and starts the journal.
func Open(dir string, opts Options, l Loader) (*Store, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.MaxRecordSize == 0 {
		opts.MaxRecordSize = DefaultMaxRecordSize
	}
	if opts.MaxRecordSize > hardMaxRecordSize {
		return nil, fmt.Errorf("state: MaxRecordSize %d over %d", opts.MaxRecordSize, hardMaxRecordSize)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	dir = filepath.Clean(dir)
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, opts: opts, log: log, lock: lock, cur: newCommit(), done: make(chan struct{})}
	s.work = sync.NewCond(&s.mu)
	if bl, ok := l.(BlobLoader); ok {
		s.blobType = bl.BlobType
	}
	if err := s.recover(l); err != nil {
		s.closeReaders()
		s.closeFiles()
		return nil, err
	}
	go s.writer()
	return s, nil
}

// Recovered reports what Open recovered.
func (s *Store) Recovered() Recovery { return s.recovered }

// Dir is the StateSaveLocation the store was opened on.
func (s *Store) Dir() string { return s.dir }

// LastSeq is the seq of the last submitted record (durable or not).
func (s *Store) LastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextSeq - 1
}

// DurableSeq is the seq of the last record known to be on disk.
func (s *Store) DurableSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durableSeq
}

// Stats reports journal counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Submit gives records consecutive seqs, in argument order, and queues them
// for the next group commit without waiting. Seqs are assigned in Submit
// call order, which is the order replay will see. The Data of a blob record
// (BlobLoader) is kept until it is written: the caller must not change it.
func (s *Store) Submit(recs ...Record) (Ticket, error) {
	if len(recs) == 0 {
		return Ticket{}, errors.New("state: Submit with no records")
	}
	for _, r := range recs {
		if r.Type == 0 {
			return Ticket{}, errors.New("state: record type 0 is reserved")
		}
		if uint64(len(r.Data)) > uint64(s.opts.MaxRecordSize) {
			return Ticket{}, fmt.Errorf("state: record of %d bytes over MaxRecordSize %d", len(r.Data), s.opts.MaxRecordSize)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return Ticket{}, ErrClosed
	}
	if s.failed != nil {
		return Ticket{}, s.failed
	}
	if len(s.pending) == 0 {
		s.pendingFirst = s.nextSeq
	}
	first := s.nextSeq
	var offs []int
	if s.blobType != nil {
		offs = make([]int, len(recs))
	}
	for i, r := range recs {
		if offs != nil {
			offs[i] = len(s.pending)
		}
		s.pending = appendFrame(s.pending, s.nextSeq, r)
		s.nextSeq++
	}
	if offs != nil {
		s.noteBlobs(recs, first, offs)
	}
	s.work.Signal()
	return Ticket{seq: s.nextSeq - 1, c: s.cur}, nil
}

// Append submits records and waits until they are on disk. It returns the seq
// of the last one.
func (s *Store) Append(ctx context.Context, recs ...Record) (uint64, error) {
	t, err := s.Submit(recs...)
	if err != nil {
		return 0, err
	}
	return t.seq, t.Wait(ctx)
}

// Sync waits until every record submitted before the call is on disk.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	c := s.cur
	if len(s.pending) == 0 {
		c = s.inflight
	}
	err := s.failed
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if c == nil {
		return nil
	}
	return Ticket{c: c}.Wait(ctx)
}

// Close writes what is pending, stops the journal and releases the lock.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closing = true
	s.work.Signal()
	s.mu.Unlock()
	<-s.done
	s.snapMu.Lock() // let a running Snapshot finish
	defer s.snapMu.Unlock()
	s.mu.Lock()
	err := s.failed
	s.mu.Unlock()
	s.closeReaders()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if cerr := s.closeFiles(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) closeFiles() error {
	var err error
	if s.seg != nil {
		err = s.seg.Close()
		s.seg = nil
	}
	if s.lock != nil {
		_ = unix.Flock(int(s.lock.Fd()), unix.LOCK_UN)
		if cerr := s.lock.Close(); err == nil {
			err = cerr
		}
		s.lock = nil
	}
	return err
}

// writer is the single goroutine that writes and syncs batches. While it syncs
// one batch, Submit fills the next, so concurrent appenders share a sync.
func (s *Store) writer() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.pending) == 0 && !s.closing {
			s.work.Wait()
		}
		if len(s.pending) == 0 {
			s.mu.Unlock()
			return
		}
		buf, c := s.pending, s.cur
		first, last := s.pendingFirst, s.nextSeq-1
		pb := s.pendingBlobs
		s.pending, s.spare, s.pendingBlobs = s.spare[:0], nil, nil
		s.cur, s.inflight = newCommit(), c
		err := s.failed
		s.mu.Unlock()

		var at int64
		if err == nil {
			s.wmu.Lock()
			at, err = s.writeBatch(buf, first, last)
			s.wmu.Unlock()
		}

		s.mu.Lock()
		if err != nil && s.failed == nil {
			s.failed = err
			s.log.Error("state: journal write failed, no further changes can be saved", "dir", s.dir, "err", err)
		}
		if err == nil {
			s.blobsWritten(pb, at)
			s.durableSeq = last
			s.stats.Records += last - first + 1
			s.stats.Batches++
			s.stats.Bytes += uint64(len(buf))
		}
		if cap(buf) <= maxSpare {
			s.spare = buf[:0]
		}
		s.inflight = nil
		s.mu.Unlock()
		c.err = err
		close(c.done)
	}
}

// writeBatch appends encoded frames first..last to the active segment and
// syncs them; it returns the offset in the segment buf was written at. The
// caller holds wmu.
func (s *Store) writeBatch(buf []byte, first, last uint64) (int64, error) {
	if s.seg == nil {
		return 0, ErrClosed
	}
	if s.segSize >= s.opts.SegmentSize && s.segNext > s.segFirst {
		if err := s.rotate(first); err != nil {
			return 0, err
		}
	}
	at := s.segSize
	n, err := s.seg.Write(buf)
	s.segSize += int64(n)
	if err != nil {
		return 0, fmt.Errorf("state: write %s: %w", s.seg.Name(), err)
	}
	// fdatasync also flushes the size change an append makes.
	if err := unix.Fdatasync(int(s.seg.Fd())); err != nil {
		return 0, fmt.Errorf("state: fdatasync %s: %w", s.seg.Name(), err)
	}
	s.segNext = last + 1
	return at, nil
}

// rotate closes the active segment and starts one whose first record is
// first. The caller holds wmu.
func (s *Store) rotate(first uint64) error {
	f, size, err := s.createSegment(first)
	if err != nil {
		return err
	}
	if s.seg != nil {
		s.seg.Close()
	}
	s.seg, s.segFirst, s.segSize, s.segNext = f, first, size, first
	s.mu.Lock()
	s.segments = append(s.segments, first)
	s.mu.Unlock()
	return nil
}

// createSegment makes a new segment file whose header is durable before any
// record is written to it.
func (s *Store) createSegment(first uint64) (*os.File, int64, error) {
	path := filepath.Join(s.dir, segmentName(first))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("state: create journal segment: %w", err)
	}
	h := appendHeader(nil, segMagic, first)
	if _, err := f.Write(h); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("state: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("state: fsync %s: %w", path, err)
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, int64(len(h)), nil
}
