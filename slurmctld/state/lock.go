package state

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Locked reports whether a store is open on dir, in this or another
// process: whether the flock(2) on LockFileName that Open takes is held.
// It takes the lock and drops it at once, so it never blocks an Open. A
// backup slurmctld asks it before taking over (the primary may be alive
// but unreachable), and a returning primary waits for the lock to be free
// before it opens (or, with -c, clears) the state. A directory without
// the lock file is not locked.
func Locked(dir string) (bool, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, slurmErrorf("Unable to open state save lock file `%s': %w", path, err)
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, slurmErrorf("Unable to lock state save lock file `%s': %w", path, err)
	}
	return false, unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
