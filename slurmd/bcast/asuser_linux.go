package bcast

import (
	"errors"
	"fmt"
	"os"
	"runtime"
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
// with the user's rights. The thread stays locked and exits with the
// goroutine, so its identity never serves anything else (the Go runtime
// starts new threads from a clean template thread once one is locked).
//
// When this process already is u (a non-root slurmd running its own
// user's transfer) f runs without any change.
func asUser(u User, f func() error) error {
	if uint32(os.Geteuid()) == u.UID && uint32(os.Getegid()) == u.GID && os.Geteuid() != 0 {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread dies with this goroutine.
		if err := takeIdentity(u); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	return <-done
}

func takeIdentity(u User) error {
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
