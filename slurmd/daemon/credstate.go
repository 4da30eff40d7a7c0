package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
)

// CredStateFile is the file in SlurmdSpoolDir holding the credential
// state (Slurm's cred_state; ours is JSON, not Slurm's packed format).
const CredStateFile = "cred_state"

// credState is slurmd's credential state kept across restarts: a
// jobcred.Verifier (the checks and the in-memory replay and revocation
// lists) plus a persisted mirror of what it accepted and revoked. On start
// the revocations are replayed into a fresh Verifier and the accepted
// credentials are kept in the mirror, so a credential used before a
// restart is still refused as replayed until it expires.
//
// Every change is written to disk (write new, fsync, rename, fsync dir)
// before the request that caused it is answered.
type credState struct {
	v      *jobcred.Verifier
	clock  func() time.Time
	window int64
	path   string

	mu   sync.Mutex
	seen map[seenKey]int64 // accepted launch credentials -> expiration
	jobs map[uint32]*jobRec
}

type seenKey struct {
	Job, Step, Het uint32
	CTime          int64
}

type jobRec struct {
	Revoked    int64 `json:"revoked"`       // revocation time, 0 = none
	Start      int64 `json:"start"`         // the job's start time at revocation
	Expiration int64 `json:"expiration"`    // 0 = purge timer not started
	Seen       bool  `json:"seen,omitzero"` // a launch was accepted
}

type stateFile struct {
	Version int               `json:"version"`
	Seen    []seenEntry       `json:"seen"`
	Jobs    map[uint32]jobRec `json:"jobs"`
}

type seenEntry struct {
	seenKey
	Expires int64 `json:"expires"`
}

const stateVersion = 1

func newCredState(sigs jobcred.SignatureVerifier, clock func() time.Time, window time.Duration, spool string) (*credState, error) {
	v, err := jobcred.NewVerifier(jobcred.Config{Signatures: sigs, Clock: clock, ExpirationWindow: window})
	if err != nil {
		return nil, err
	}
	cs := &credState{v: v, clock: clock, window: int64(window / time.Second),
		seen: map[seenKey]int64{}, jobs: map[uint32]*jobRec{}}
	if spool != "" {
		cs.path = filepath.Join(spool, CredStateFile)
	}
	return cs, nil
}

// load restores the state saved by an earlier run. A missing file is an
// empty state; an unreadable one is an error (slurmd refuses to start
// rather than forget revocations), unless clear (-c) discards it.
func (cs *credState) load(clear bool) error {
	if cs.path == "" {
		return nil
	}
	if clear {
		err := os.Remove(cs.path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := readStateFile(cs.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return cs.restore(data)
}

// maxStateFile bounds the state file read at start-up.
const maxStateFile = 64 << 20

// readStateFile reads the state file without following a symbolic link,
// and refuses one that is not a regular file owned by this user (or root)
// or that group or others may write: revocations are security state.
func readStateFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o022 != 0 ||
		sys == nil || sys.Uid != uint32(os.Geteuid()) && sys.Uid != 0 {
		return nil, fmt.Errorf("%s: must be a regular file owned by this user, not writable by group or others", path)
	}
	if st.Size() > maxStateFile {
		return nil, fmt.Errorf("%s: %d bytes, over %d", path, st.Size(), maxStateFile)
	}
	return io.ReadAll(io.LimitReader(f, maxStateFile))
}

// restore loads a saved state; a state that does not decode changes
// nothing.
func (cs *credState) restore(data []byte) error {
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return fmt.Errorf("%s: %w", cs.path, err)
	}
	if sf.Version != stateVersion {
		return fmt.Errorf("%s: state version %d, want %d", cs.path, sf.Version, stateVersion)
	}
	now := cs.clock().Unix()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, e := range sf.Seen {
		if e.Expires >= now {
			cs.seen[e.seenKey] = e.Expires
		}
	}
	for id, j := range sf.Jobs {
		if j.Expiration != 0 && j.Expiration < now {
			continue
		}
		j := j
		cs.jobs[id] = &j
		if j.Seen {
			cs.v.InsertJob(id)
		}
		if j.Revoked != 0 {
			_ = cs.v.Revoke(id, time.Unix(j.Revoked, 0), time.Unix(j.Start, 0))
			if j.Expiration != 0 {
				// The purge timer restarts one window from now: later
				// than the saved one, never earlier.
				_ = cs.v.BeginExpiration(id)
			}
		}
	}
	return nil
}

// saveLocked writes the state; cs.mu is held.
func (cs *credState) saveLocked() error {
	if cs.path == "" {
		return nil
	}
	now := cs.clock().Unix()
	sf := stateFile{Version: stateVersion, Jobs: map[uint32]jobRec{}}
	for k, exp := range cs.seen {
		if exp < now {
			delete(cs.seen, k)
			continue
		}
		sf.Seen = append(sf.Seen, seenEntry{k, exp})
	}
	for id, j := range cs.jobs {
		if j.Expiration != 0 && j.Expiration < now {
			delete(cs.jobs, id)
			continue
		}
		sf.Jobs[id] = *j
	}
	data, err := json.Marshal(&sf)
	if err != nil {
		return err
	}
	return writeFileAtomic(cs.path, data, 0o600)
}

// writeFileAtomic is "write new, fsync, rename, fsync dir".
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// verifyLaunch runs jobcred's launch checks, then the persisted replay
// list, and records an accepted credential on disk.
func (cs *credState) verifyLaunch(ctx context.Context, c *jobcred.Credential, req jobcred.LaunchRequest) (*jobcred.Verified, error) {
	ok, err := cs.v.VerifyLaunch(ctx, c, req)
	if err != nil {
		return nil, err
	}
	b := &c.Body
	key := seenKey{b.StepID.JobID, b.StepID.StepID, b.StepID.StepHetComp, b.CTime}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, dup := cs.seen[key]; dup {
		// Accepted by an earlier run of this slurmd.
		cs.v.Rewind(c)
		return nil, fmt.Errorf("%w: %v created %d (before a restart)", jobcred.ErrReplayed, b.StepID, b.CTime)
	}
	cs.seen[key] = b.CTime + cs.window
	j := cs.jobs[b.StepID.JobID]
	if j == nil || j.Revoked != 0 && b.CTime > j.Revoked {
		j = &jobRec{}
		cs.jobs[b.StepID.JobID] = j
	}
	j.Seen = true
	if err := cs.saveLocked(); err != nil {
		delete(cs.seen, key)
		cs.v.Rewind(c)
		return nil, fmt.Errorf("%w: cannot save credential state: %v", jobcred.ErrInvalid, err)
	}
	return ok, nil
}

// insertJob records a batch launch (unsigned credential).
func (cs *credState) insertJob(job uint32) error {
	cs.v.InsertJob(job)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	j := cs.jobs[job]
	if j == nil {
		j = &jobRec{}
		cs.jobs[job] = j
	}
	j.Seen = true
	return cs.saveLocked()
}

// revoke is slurm_cred_revoke plus save_cred_state.
func (cs *credState) revoke(job uint32, at, start time.Time) error {
	if err := cs.v.Revoke(job, at, start); err != nil {
		return err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	j := cs.jobs[job]
	if j == nil {
		j = &jobRec{}
		cs.jobs[job] = j
	}
	j.Revoked, j.Start, j.Expiration = at.Unix(), start.Unix(), 0
	return cs.saveLocked()
}

// revoked reports whether c's job was revoked at or after c was made.
func (cs *credState) revoked(c *jobcred.Credential) bool { return cs.v.Revoked(c) }

// beginExpiration starts the purge timer of job's record (after its
// epilog); it fails when the timer already runs (the epilog ran).
func (cs *credState) beginExpiration(job uint32) error {
	if err := cs.v.BeginExpiration(job); err != nil {
		return err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	j := cs.jobs[job]
	if j == nil {
		j = &jobRec{}
		cs.jobs[job] = j
	}
	j.Expiration = cs.clock().Unix() + cs.window
	return cs.saveLocked()
}
