package bcast

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// User is the identity a transfer's file is opened and finished with.
type User struct {
	UID, GID uint32
	Groups   []uint32
}

// ErrIdentity reports that a thread could not take the user's identity.
var ErrIdentity = errors.New("cannot take the user's file system identity")

// asUser runs f on a fresh OS thread whose file system identity is u's:
// supplementary groups, fsgid and fsuid set with raw per-thread system
// calls (the libc and Go wrappers apply them to every thread). A root
// thread that takes another fsuid loses its file capabilities
// (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_CHOWN...), so f gets exactly the
// user's access: paths are resolved, files created, modes and times set
// with the user's rights.
//
// The thread stays locked and exits with the goroutine, so its identity
// never serves anything else; but the runtime cannot end the process's
// main thread and parks it instead, so the thread's own identity is put
// back (and checked) before the goroutine ends, whichever thread it is.
// Changing fsuid also makes the process non-dumpable (no core, no
// /proc/self/... access for root tools); that is put back afterwards when
// the process was dumpable before its first identity change.
//
// When this process already is u (a non-root slurmd running its own
// user's transfer) f runs without any change.
func asUser(u User, f func() error) error {
	if uint32(os.Geteuid()) == u.UID && uint32(os.Getegid()) == u.GID && os.Geteuid() != 0 {
		return f()
	}
	dumpableOnce.Do(func() {
		d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		wasDumpable = err == nil && d == 1
	})
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread dies with this goroutine (or,
		// the main thread, is parked with its identity put back).
		own, err := threadIdentity()
		if err != nil {
			done <- err
			return
		}
		err = setIdentity(u)
		if err == nil {
			err = f()
		}
		// f's result stands (an opened descriptor must reach its
		// caller): should putting the identity back fail, the thread
		// still exits locked, which ends it unless it is the main one.
		_ = setIdentity(own)
		done <- err
	}()
	err := <-done
	if wasDumpable {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	return err
}

var (
	dumpableOnce sync.Once
	wasDumpable  bool
)

// threadIdentity is the calling thread's fsuid, fsgid and groups.
func threadIdentity() (User, error) {
	gids, err := threadGroups()
	if err != nil {
		return User{}, err
	}
	// An invalid id leaves fsuid/fsgid unchanged and returns them.
	uid, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
	gid, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
	return User{UID: uint32(uid), GID: uint32(gid), Groups: gids}, nil
}

// threadGroups is the calling thread's supplementary groups.
func threadGroups() ([]uint32, error) {
	n, _, e := unix.RawSyscall(unix.SYS_GETGROUPS, 0, 0, 0)
	if e != 0 {
		return nil, fmt.Errorf("%w: getgroups: %v", ErrIdentity, e)
	}
	gids := make([]uint32, n)
	if n > 0 {
		m, _, e := unix.RawSyscall(unix.SYS_GETGROUPS, n, uintptr(unsafe.Pointer(&gids[0])), 0)
		if e != 0 {
			return nil, fmt.Errorf("%w: getgroups: %v", ErrIdentity, e)
		}
		gids = gids[:m]
	}
	return gids, nil
}

// setIdentity gives the calling thread u's groups, fsgid and fsuid, in an
// order that works both ways: groups and fsgid first need CAP_SETGID (kept
// with euid 0 whatever the fsuid), fsuid last.
func setIdentity(u User) error {
	var p unsafe.Pointer
	gids := make([]uint32, len(u.Groups))
	copy(gids, u.Groups)
	if len(gids) > 0 {
		p = unsafe.Pointer(&gids[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(gids)), uintptr(p), 0); e != 0 {
		return fmt.Errorf("%w: setgroups: %v", ErrIdentity, e)
	}
	runtime.KeepAlive(gids)
	// The kernel keeps groups sorted.
	slices.Sort(gids)
	if now, err := threadGroups(); err != nil || !slices.Equal(now, gids) {
		return fmt.Errorf("%w: groups are %v, want %v (%v)", ErrIdentity, now, gids, err)
	}
	unix.RawSyscall(unix.SYS_SETFSGID, uintptr(u.GID), 0, 0)
	unix.RawSyscall(unix.SYS_SETFSUID, uintptr(u.UID), 0, 0)
	// setfsuid/setfsgid report the previous value, never an error: ask
	// again (an invalid id leaves it unchanged) and compare.
	if g, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0); uint32(g) != u.GID {
		return fmt.Errorf("%w: fsgid is %d, want %d", ErrIdentity, uint32(g), u.GID)
	}
	if id, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0); uint32(id) != u.UID {
		return fmt.Errorf("%w: fsuid is %d, want %d", ErrIdentity, uint32(id), u.UID)
	}
	return nil
}
