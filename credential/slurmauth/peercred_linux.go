package slurmauth

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the identity the kernel recorded for the other end of c
// when the connection was made (SO_PEERCRED): what the peer cannot lie
// about.
func peerCred(c *net.UnixConn) (uid, gid uint32, pid int32, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, 0, err
	}
	if serr != nil {
		return 0, 0, 0, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	return cred.Uid, cred.Gid, cred.Pid, nil
}
