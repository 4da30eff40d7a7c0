package daemon

import (
	"context"
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
// state (Slurm's cred_state; ours is jobcred's versioned state format,
// jobcred.Verifier.ExportState, not Slurm's layout).
const CredStateFile = "cred_state"

// credState is slurmd's credential state kept across restarts: a
// jobcred.Verifier (the launch checks, the replay cache and the revocation
// records) whose state is saved after every change and imported on start,
// so a credential used before a restart is still refused as replayed until
// it expires, and a revocation is not forgotten.
//
// Every change is written to disk (write new, fsync, rename, fsync dir)
// before the request that caused it is answered.
type credState struct {
	v    *jobcred.Verifier
	path string

	// mu serialises saves. Each save exports the state as it is when the
	// save starts, so a later write always carries every change an earlier
	// one did: the file never goes back to an older state.
	mu sync.Mutex
}

func newCredState(sigs jobcred.SignatureVerifier, clock func() time.Time, window time.Duration, spool string) (*credState, error) {
	v, err := jobcred.NewVerifier(jobcred.Config{Signatures: sigs, Clock: clock, ExpirationWindow: window})
	if err != nil {
		return nil, err
	}
	cs := &credState{v: v}
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
	if err := cs.v.ImportState(data); err != nil {
		return fmt.Errorf("%s: %w", cs.path, err)
	}
	return nil
}

// save writes the verifier's state.
func (cs *credState) save() error {
	if cs.path == "" {
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return writeFileAtomic(cs.path, cs.v.ExportState(), 0o600)
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

// verifyLaunch runs jobcred's launch checks and records an accepted
// credential on disk; one that cannot be recorded is refused.
func (cs *credState) verifyLaunch(ctx context.Context, c *jobcred.Credential, req jobcred.LaunchRequest) (*jobcred.Verified, error) {
	ok, err := cs.v.VerifyLaunch(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if err := cs.save(); err != nil {
		cs.v.Rewind(c)
		return nil, fmt.Errorf("%w: cannot save credential state: %v", jobcred.ErrInvalid, err)
	}
	return ok, nil
}

// insertJob records a batch launch (unsigned credential).
func (cs *credState) insertJob(job uint32) error {
	cs.v.InsertJob(job)
	return cs.save()
}

// revoke is slurm_cred_revoke plus save_cred_state. A revocation that
// cannot be saved still holds in memory.
func (cs *credState) revoke(job uint32, at, start time.Time) error {
	if err := cs.v.Revoke(job, at, start); err != nil {
		return err
	}
	return cs.save()
}

// revoked reports whether c's job was revoked at or after c was made.
func (cs *credState) revoked(c *jobcred.Credential) bool { return cs.v.Revoked(c) }

// beginExpiration starts the purge timer of job's record (after its
// epilog); it fails when the timer already runs (the epilog ran).
func (cs *credState) beginExpiration(job uint32) error {
	if err := cs.v.BeginExpiration(job); err != nil {
		return err
	}
	return cs.save()
}
