// Package bcast is slurmd's side of sbcast: REQUEST_FILE_BCAST, one block
// of a file at a time (Slurm 22.05's _rpc_file_bcast and its helpers in
// slurmd's req.c, extract_sbcast_cred in slurm_cred.c, the LZ4 block
// format of src/bcast/file_bcast.c).
//
// A transfer starts with block 1: the credential is verified in full, the
// file is created (or truncated with --force) with the user's identity
// and registered under (uid, job, file name); later blocks must carry the
// same credential and come in order; the last block sets the mode, owner
// and, with --preserve, the times, and closes the file. --send-libs
// creates "<file>_libs" beside the executable and shared objects go into
// it. Transfers idle for FileBcastTimeout are dropped, and so are those of
// a job that ends on the node.
package bcast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// FileBcastTimeout is how long a transfer may wait for its next block
// (FILE_BCAST_TIMEOUT).
const FileBcastTimeout = 300 * time.Second

// MaxUncompressed bounds the decoded size of one compressed block. sbcast
// (22.05) compresses at most ten times its block size (--size, 8 MiB by
// default: 80 MiB) into one block, and a message is at most 1 GiB
// (MAX_MSG_SIZE); a larger announced size is refused as a decompression
// error, before anything is allocated. Below it, DecompressLZ4 refuses a
// size over LZ4's ratio to the compressed length and allocates as it
// decodes, so memory follows the data really sent.
const MaxUncompressed = 1 << 30

// Service handles REQUEST_FILE_BCAST for one slurmd.
type Service struct {
	Node  string
	Creds *CredChecker
	// Revoked reports whether the job was revoked on this node at or
	// after ctime (credentials of a job that ended here are refused).
	Revoked func(job uint32, ctime int64) bool
	// Groups looks up the user's groups when the credential has none;
	// nil uses the system's group database.
	Groups func(name string, uid, gid uint32) []uint32
	Clock  func() time.Time
	Log    *slog.Logger

	mu      sync.Mutex
	files   map[fileKey]*transfer
	libdirs map[libKey]*libdir
}

type fileKey struct {
	uid, job uint32
	fname    string
}

type libKey struct{ uid, job, step uint32 }

type libdir struct {
	dir  string
	last time.Time
}

// A transfer's mu is taken either alone or before the service's mu (write
// drops a failed or finished transfer while holding it), never after: so
// the time of its last block, which Cleanup reads under the service's mu,
// is an atomic rather than guarded by mu.
type transfer struct {
	mu      sync.Mutex
	f       *os.File
	user    User
	next    uint32       // block number expected next
	written uint64       // uncompressed bytes written
	last    atomic.Int64 // Unix nanoseconds of the last block
	closed  bool
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock()
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Handle processes one block and returns the return code for
// RESPONSE_SLURM_RC: 0, ESLURMD_INVALID_JOB_CREDENTIAL, an errno from
// opening the file as the user (EEXIST without --force, EACCES...), or
// SLURM_ERROR.
func (s *Service) Handle(ctx context.Context, req *msg.FileBcast, caller Caller) int {
	cred, err := s.Creds.Check(ctx, req, caller)
	if err == nil && s.Revoked != nil && s.Revoked(req.Cred.JobID, req.Cred.Ctime) {
		err = fmt.Errorf("JobId=%d was revoked on this node", req.Cred.JobID)
	}
	if err != nil {
		switch {
		case errors.Is(err, ErrCredWrongNode):
			s.log().Error(fmt.Sprintf("Security violation: sbcast_cred from %d has bad hostset %s", caller.UID, req.Cred.Nodes.Value))
		case errors.Is(err, ErrCredWrongUser):
			s.log().Error("Security violation: " + strings.TrimPrefix(err.Error(), ErrCredWrongUser.Error()+": "))
		case errors.Is(err, ErrCredBadNodeSet):
			s.log().Error(fmt.Sprintf("Unable to parse sbcast_cred hostlist %s", req.Cred.Nodes.Value))
		case errors.Is(err, ErrCredReplayed):
			// munged's wording, which real slurmd logs here.
			s.log().Error("sbcast_cred verify: Credential replayed")
			s.log().Error(fmt.Sprintf("Security violation: Invalid sbcast_cred from uid %d", caller.UID))
		default:
			s.log().Error(fmt.Sprintf("sbcast_cred verify: %v", err))
			s.log().Error(fmt.Sprintf("Security violation: Invalid sbcast_cred from uid %d", caller.UID))
		}
		return slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL
	}
	u := User{UID: cred.UID, GID: cred.GID, Groups: cred.GIDs}
	job, step := cred.JobID, cred.StepID

	fname := req.Fname.Value
	switch {
	case fname == "":
		s.log().Error(fmt.Sprintf("sbcast: uid:%d no file name", u.UID))
		return slurmerr.SLURM_ERROR
	case req.Flags&msg.FileBcastSO != 0:
		s.mu.Lock()
		ld := s.libdirs[libKey{u.UID, job, step}]
		if ld != nil {
			ld.last = s.now()
			fname = ld.dir + "/" + fname
		}
		s.mu.Unlock()
		if ld == nil {
			s.log().Error(fmt.Sprintf("Could not find library directory for transfer from uid %d", u.UID))
			return slurmerr.SLURM_ERROR
		}
	case strings.HasSuffix(fname, "/"):
		fname += fmt.Sprintf("slurm_bcast_%d.%d_%s", job, step, s.Node)
	}
	key := fileKey{u.UID, job, fname}
	line := fmt.Sprintf("sbcast req_uid=%d job_id=%d fname=%s block_no=%d", u.UID, job, fname, req.BlockNo)
	if req.BlockNo == 1 {
		s.log().Info(line)
		if len(u.Groups) == 0 {
			u.Groups = s.groups(cred.UserName.Value, u.UID, u.GID)
		}
		if rc := s.register(key, req, u, step); rc != 0 {
			return rc
		}
	} else {
		s.log().Debug(line)
	}

	s.mu.Lock()
	t := s.files[key]
	s.mu.Unlock()
	if t == nil {
		s.log().Error(fmt.Sprintf("No registered file transfer for uid %d file `%s`.", u.UID, fname))
		return slurmerr.SLURM_ERROR
	}
	return s.write(key, t, req)
}

// register opens the file as the user (and, for an executable sent with
// its libraries, creates the _libs directory) and records the transfer,
// replacing one left behind under the same key.
func (s *Service) register(key fileKey, req *msg.FileBcast, u User, step uint32) int {
	// O_NONBLOCK: with --force the name may be a FIFO (or a device),
	// whose open would wait for a reader with a handler and a locked
	// thread held; it is refused below, and cleared for a regular file.
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if req.Flags&msg.FileBcastForce != 0 {
		flags |= unix.O_TRUNC
	} else {
		flags |= unix.O_EXCL
	}
	var fd int
	err := asUser(u, func() error {
		var err error
		fd, err = openRegular(key.fname, flags)
		return err
	})
	if err != nil {
		s.log().Error(fmt.Sprintf("Unable to open %s: %s", key.fname, errText(err)))
		return errnoOf(err)
	}
	f := os.NewFile(uintptr(fd), key.fname)
	var dir string
	if req.Flags&msg.FileBcastExe != 0 {
		dir = key.fname + "_libs"
		if err := asUser(u, func() error { return unix.Mkdir(dir, 0o700) }); err != nil {
			s.log().Error(fmt.Sprintf("Unable to create directory %s: %s", dir, errText(err)))
			f.Close()
			return errnoOf(err)
		}
	}
	now := s.now()
	t := &transfer{f: f, user: u, next: 1}
	t.last.Store(now.UnixNano())
	s.mu.Lock()
	if s.files == nil {
		s.files = map[fileKey]*transfer{}
		s.libdirs = map[libKey]*libdir{}
	}
	old := s.files[key]
	s.files[key] = t
	if dir != "" {
		s.libdirs[libKey{u.UID, key.job, step}] = &libdir{dir: dir, last: now}
	}
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	return 0
}

// openRegular opens path with flags (which include O_NONBLOCK) and keeps
// it only when it is a regular file, clearing O_NONBLOCK. Anything else
// is refused with ENXIO, the errno the kernel itself gives to a
// non-blocking open of a FIFO without a reader or of a socket (real
// slurmd has no such check: its open of a FIFO waits for a reader).
func openRegular(path string, flags int) (int, error) {
	fd, err := unix.Open(path, flags, 0o700)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, unix.ENXIO
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// write appends one block in order; the last one finishes the file.
func (s *Service) write(key fileKey, t *transfer, req *msg.FileBcast) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	fail := func(format string, args ...any) int {
		s.log().Error(fmt.Sprintf(format, args...))
		s.drop(key, t)
		return slurmerr.SLURM_ERROR
	}
	if t.closed {
		return fail("No registered file transfer for uid %d file `%s`.", key.uid, key.fname)
	}
	if req.BlockNo != t.next || req.BlockOffset != t.written {
		return fail("sbcast: uid:%d block %d at offset %d of `%s` out of order: expected block %d at offset %d",
			key.uid, req.BlockNo, req.BlockOffset, key.fname, t.next, t.written)
	}
	data, err := decompress(req)
	if err != nil {
		s.log().Error(err.Error())
		return fail("sbcast: data decompression error for UID %d, file %s", key.uid, key.fname)
	}
	if _, err := t.f.Write(data); err != nil {
		return fail("sbcast: uid:%d can't write `%s`: %s", key.uid, key.fname, errText(err))
	}
	t.next++
	t.written += uint64(len(data))
	t.last.Store(s.now().UnixNano())
	if req.Flags&msg.FileBcastLastBlock == 0 {
		return 0
	}
	s.finish(key, t, req)
	s.drop(key, t)
	return 0
}

// finish sets the mode, owner and times, with the user's identity (so a
// file the user does not own keeps its owner: real slurmd chowns it as
// root). Failures are logged, not returned, as in slurmd.
func (s *Service) finish(key fileKey, t *transfer, req *msg.FileBcast) {
	fd := int(t.f.Fd())
	_ = asUser(t.user, func() error {
		if err := unix.Fchmod(fd, uint32(req.Modes)&0o777); err != nil {
			s.log().Error(fmt.Sprintf("sbcast: uid:%d can't chmod `%s`: %s", key.uid, key.fname, errText(err)))
		}
		if err := unix.Fchown(fd, int(t.user.UID), int(t.user.GID)); err != nil {
			s.log().Error(fmt.Sprintf("sbcast: uid:%d gid:%d can't chown `%s`: %s", key.uid, t.user.GID, key.fname, errText(err)))
		}
		if req.Atime != 0 {
			tv := []unix.Timeval{{Sec: req.Atime}, {Sec: req.Mtime}}
			if err := unix.Futimes(fd, tv); err != nil {
				s.log().Error(fmt.Sprintf("sbcast: uid:%d can't utime `%s`: %s", key.uid, key.fname, errText(err)))
			}
		}
		return nil
	})
}

// drop forgets t (if it still is the transfer under key) and closes it.
func (s *Service) drop(key fileKey, t *transfer) {
	s.mu.Lock()
	if s.files[key] == t {
		delete(s.files, key)
	}
	s.mu.Unlock()
	t.closeLocked()
}

func (t *transfer) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeLocked()
}

func (t *transfer) closeLocked() {
	if !t.closed {
		t.closed = true
		t.f.Close()
	}
}

func decompress(req *msg.FileBcast) ([]byte, error) {
	switch req.Compress {
	case msg.CompressOff:
		return req.Block, nil
	case msg.CompressLZ4:
		if len(req.Block) == 0 {
			return nil, nil
		}
		if req.UncompLen > MaxUncompressed {
			return nil, fmt.Errorf("%w: uncomp_len %d over %d", ErrLZ4, req.UncompLen, MaxUncompressed)
		}
		return DecompressLZ4(req.Block, int(req.UncompLen))
	}
	return nil, fmt.Errorf("bcast_decompress_data: compression type %d not supported", req.Compress)
}

// Cleanup drops transfers and library directories idle for longer than
// FileBcastTimeout, and expired credential records (slurmd does this on
// each ping and health check).
func (s *Service) Cleanup() {
	now := s.now()
	var stale []*transfer
	s.mu.Lock()
	for k, t := range s.files {
		if t.idleSince().Add(FileBcastTimeout).Before(now) {
			s.log().Error(fmt.Sprintf("Removing stalled file_bcast transfer from uid %d to file `%s`", k.uid, k.fname))
			delete(s.files, k)
			stale = append(stale, t)
		}
	}
	for k, l := range s.libdirs {
		if l.last.Add(FileBcastTimeout).Before(now) {
			s.log().Debug(fmt.Sprintf("Removing stale library directory reference for uid %d for `%s`", k.uid, l.dir))
			delete(s.libdirs, k)
		}
	}
	s.mu.Unlock()
	for _, t := range stale {
		t.close()
	}
	if s.Creds != nil {
		s.Creds.Purge()
	}
}

// idleSince is the time of the last block; it takes no lock, so Cleanup
// may call it under the service's mu.
func (t *transfer) idleSince() time.Time {
	return time.Unix(0, t.last.Load())
}

// JobEnded drops the transfers and library directories of a job whose
// epilog runs on this node.
func (s *Service) JobEnded(job uint32) {
	var gone []*transfer
	s.mu.Lock()
	for k, t := range s.files {
		if k.job == job {
			s.log().Debug(fmt.Sprintf("Removing file_bcast transfer from JobId=%d to file `%s`", job, k.fname))
			delete(s.files, k)
			gone = append(gone, t)
		}
	}
	for k, l := range s.libdirs {
		if k.job == job {
			s.log().Debug(fmt.Sprintf("Removing library directory reference for JobId=%d for `%s`", job, l.dir))
			delete(s.libdirs, k)
		}
	}
	s.mu.Unlock()
	for _, t := range gone {
		t.close()
	}
	if s.Creds != nil {
		s.Creds.JobEnded(job)
	}
}

// LibDir is the library directory a step's executable was sent with
// (--send-libs), for the step's LD_LIBRARY_PATH.
func (s *Service) LibDir(uid, job, step uint32) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.libdirs[libKey{uid, job, step}]
	if l == nil {
		return "", false
	}
	return l.dir, true
}

// Transfers is the number of open transfers.
func (s *Service) Transfers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

// groups is group_cache_lookup: the user's groups from the system's
// database, or the primary group alone when the user is unknown.
func (s *Service) groups(name string, uid, gid uint32) []uint32 {
	if s.Groups != nil {
		return s.Groups(name, uid, gid)
	}
	var u *user.User
	var err error
	if name != "" {
		u, err = user.Lookup(name)
	}
	if u == nil || err != nil {
		u, err = user.LookupId(strconv.FormatUint(uint64(uid), 10))
	}
	out := []uint32{gid}
	if err != nil {
		return out
	}
	ids, err := u.GroupIds()
	if err != nil {
		return out
	}
	for _, id := range ids {
		if g, err := strconv.ParseUint(id, 10, 32); err == nil && uint32(g) != gid {
			out = append(out, uint32(g))
		}
	}
	return out
}

func errnoOf(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return slurmerr.SLURM_ERROR
}

// errText is strerror's wording for an errno (Go's table has the same
// texts, starting lower case).
func errText(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		t := e.Error()
		if t != "" {
			t = strings.ToUpper(t[:1]) + t[1:]
		}
		return t
	}
	return err.Error()
}
