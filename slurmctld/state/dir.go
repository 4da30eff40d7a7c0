package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// LockFileName is the file in StateSaveLocation that a running store holds an
// exclusive flock(2) on.
const LockFileName = "slurmctld.state.lock"

// checkDir creates dir if missing (0755, as slurmctld does) and refuses a
// directory that another user could write into: it must be a directory owned by
// the effective uid, with neither group nor other write permission. slurmctld
// itself only logs an error when StateSaveLocation is world writable; we refuse,
// since anyone who can write here can forge every job on restart.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("mkdir(%s): %w", dir, err)
		}
		st, err = os.Stat(dir)
	}
	if err != nil {
		return slurmErrorf("Unable to stat state save loc: %s: %w", dir, err)
	}
	if !st.IsDir() {
		return slurmErrorf("State save loc: %s: Not a directory!", dir)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("state save loc: %s: no owner information", dir)
	}
	if euid := os.Geteuid(); int(sys.Uid) != euid {
		return fmt.Errorf("%w: %s is owned by uid %d, slurmctld runs as uid %d",
			ErrInsecureDir, dir, sys.Uid, euid)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is group or world writable (mode %04o)",
			ErrInsecureDir, dir, st.Mode().Perm())
	}
	if err := unix.Access(dir, unix.R_OK|unix.W_OK|unix.X_OK); err != nil {
		return slurmErrorf("Incorrect permissions on state save loc: %s", dir)
	}
	return nil
}

// lockDir takes the StateSaveLocation lock, without waiting: a second
// controller on the same directory fails at once instead of corrupting it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, slurmErrorf("Unable to open state save lock file `%s': %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &lockedError{slurmErrorf("Unable to lock state save lock file `%s': %w (is another slurmctld using StateSaveLocation %s?)",
				path, err, dir)}
		}
		return nil, slurmErrorf("Unable to lock state save lock file `%s': %w", path, err)
	}
	// The pid is for whoever finds the lock held; the lock itself is the flock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// syncDir makes renames, creations and removals in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

func segmentName(first uint64) string { return fmt.Sprintf("journal-%020d.wal", first) }
func snapshotName(seq uint64) string  { return fmt.Sprintf("snapshot-%020d.snap", seq) }
func parseSeqName(name, prefix, suffix string) (uint64, bool) {
	if len(name) != len(prefix)+20+len(suffix) || name[:len(prefix)] != prefix ||
		name[len(name)-len(suffix):] != suffix {
		return 0, false
	}
	n, err := strconv.ParseUint(name[len(prefix):len(prefix)+20], 10, 64)
	return n, err == nil
}

// slurmErrorf keeps slurmctld's wording, capital letter included, for messages
// that admins and scripts grep for.
func slurmErrorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// lockedError is the "another controller holds the directory" failure; it
// matches ErrLocked without putting ErrLocked's text into Slurm's message.
type lockedError struct{ err error }

func (e *lockedError) Error() string        { return e.err.Error() }
func (e *lockedError) Unwrap() error        { return e.err }
func (e *lockedError) Is(target error) bool { return target == ErrLocked }
