package stepd

// The supervisor's unix socket, <spool>/<node>_<job>.<step>, speaks the
// subset of slurmstepd's own socket protocol (src/common/stepd_api.c) that
// slurmd needs: native-endian C ints, a version handshake, then requests.
// Keeping Slurm's framing lets tools that talk to slurmstepd sockets
// (scontrol listpids style) find our steps.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Requests (stepd_api.h step_msg_t) and states (slurmstepd_state_t).
const (
	reqSignalContainer = 4
	reqState           = 5
	reqDaemonPID       = 9
	reqStepTerminate   = 12
	reqStepUID         = 20

	StateNotRunning = 0
	StateStarting   = 1
	StateRunning    = 2
	StateEnding     = 3
)

// Pseudo-signals slurmd sends through the socket (slurm_protocol_defs.h).
const (
	SigTermKill  = 991 // SIGCONT, SIGTERM, KillWait, SIGKILL
	SigRequeued  = 993
	SigPreempted = 994
	SigTimeLimit = 996
	SigAbort     = 997
	SigNodeFail  = 998
	SigFailure   = 999
)

// KillJobBatch is the signal flag that limits a signal to the batch shell.
const KillJobBatch = 0x1

const protocolVersion = 0x2600

var ne = binary.NativeEndian

// SocketPath is Slurm's stepd socket name for a step.
func SocketPath(spool, node string, jobID, stepID uint32) string {
	return filepath.Join(spool, fmt.Sprintf("%s_%d.%d", node, jobID, stepID))
}

// parseSocketName reads job and step ids back from a socket file name of
// node; het steps (a third number) are reported with their component.
func parseSocketName(name, node string) (jobID, stepID, het uint32, ok bool) {
	rest, found := strings.CutPrefix(name, node+"_")
	if !found {
		return 0, 0, 0, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, 0, false
	}
	var ids [3]uint32
	ids[2] = NoVal
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, 0, 0, false
		}
		ids[i] = uint32(v)
	}
	return ids[0], ids[1], ids[2], true
}

func writeInts(w io.Writer, vals ...int32) error {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = ne.AppendUint32(b, uint32(v))
	}
	_, err := w.Write(b)
	return err
}

func readInt(r io.Reader) (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return int32(ne.Uint32(b[:])), nil
}

// stepConn is a client connection to one supervisor.
type stepConn struct {
	c net.Conn
}

// dialStep connects and does the version handshake.
func dialStep(path string, timeout time.Duration) (*stepConn, error) {
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(timeout))
	if err := writeInts(c, protocolVersion); err != nil {
		c.Close()
		return nil, err
	}
	v, err := readInt(c)
	if err != nil || v < 0 {
		c.Close()
		return nil, fmt.Errorf("stepd: handshake with %s failed: %v", path, err)
	}
	return &stepConn{c: c}, nil
}

func (s *stepConn) Close() error { return s.c.Close() }

func (s *stepConn) state() (int32, error) {
	if err := writeInts(s.c, reqState); err != nil {
		return 0, err
	}
	return readInt(s.c)
}

func (s *stepConn) daemonPID() (int32, error) {
	if err := writeInts(s.c, reqDaemonPID); err != nil {
		return 0, err
	}
	return readInt(s.c)
}

func (s *stepConn) uid() (uint32, error) {
	if err := writeInts(s.c, reqStepUID); err != nil {
		return 0, err
	}
	v, err := readInt(s.c)
	return uint32(v), err
}

// rcErr reads the (int rc, int errno) pair of signal and terminate.
func (s *stepConn) rcErr() error {
	rc, err := readInt(s.c)
	if err != nil {
		return err
	}
	errnum, err := readInt(s.c)
	if err != nil {
		return err
	}
	if rc == 0 {
		return nil
	}
	return rcError(errnum)
}

func (s *stepConn) signal(sig, flags int, details string, reqUID uint32) error {
	b := ne.AppendUint32(nil, reqSignalContainer)
	b = ne.AppendUint32(b, uint32(int32(sig)))
	b = ne.AppendUint32(b, uint32(int32(flags)))
	b = ne.AppendUint32(b, uint32(len(details)))
	b = append(b, details...)
	b = ne.AppendUint32(b, reqUID)
	if _, err := s.c.Write(b); err != nil {
		return err
	}
	return s.rcErr()
}

func (s *stepConn) terminate() error {
	if err := writeInts(s.c, reqStepTerminate); err != nil {
		return err
	}
	return s.rcErr()
}

// rcError turns a supervisor's errno (a Unix errno or a Slurm code) into an
// error.
func rcError(errnum int32) error {
	if errnum > 0 && errnum < 1000 {
		return syscall.Errno(errnum)
	}
	return fmt.Errorf("stepd: request failed: %w", slurmErr(int(errnum)))
}

// peerUID is the uid of the process at the other end of a unix connection.
func peerUID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

// stepHandler is what the socket server asks of a supervisor.
type stepHandler interface {
	state() int32
	owner() uint32
	authorized(uid uint32) bool // root or SlurmUser
	signal(sig, flags int, details string, fromUID uint32) (errnum int32)
	terminate(fromUID uint32) (errnum int32)
}

// listenStep creates the socket (mode 0777 like Slurm's; every request is
// checked against the caller's SO_PEERCRED uid) and removes a stale file of
// the same name first.
func listenStep(path string) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("stepd: %s is in use by a running step", path)
	}
	os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o777); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// serveStep answers requests until l is closed.
func serveStep(l *net.UnixListener, h stepHandler) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go serveConn(c, h)
	}
}

func serveConn(c *net.UnixConn, h stepHandler) {
	defer c.Close()
	uid, err := peerUID(c)
	if err != nil {
		return
	}
	if _, err := readInt(c); err != nil { // the client's version
		return
	}
	if writeInts(c, protocolVersion) != nil {
		return
	}
	for {
		req, err := readInt(c)
		if err != nil {
			return
		}
		switch req {
		case reqState:
			err = writeInts(c, h.state())
		case reqDaemonPID:
			err = writeInts(c, int32(os.Getpid()))
		case reqStepUID:
			err = writeInts(c, int32(h.owner()))
		case reqSignalContainer:
			var sig, flags, dlen int32
			if sig, err = readInt(c); err != nil {
				return
			}
			if flags, err = readInt(c); err != nil {
				return
			}
			if dlen, err = readInt(c); err != nil || dlen < 0 || dlen > 4096 {
				return
			}
			details := make([]byte, dlen)
			if _, err = io.ReadFull(c, details); err != nil {
				return
			}
			if _, err = readInt(c); err != nil { // req_uid: informational only
				return
			}
			en := h.signal(int(sig), int(flags), string(details), uid)
			err = writeRC(c, en)
		case reqStepTerminate:
			err = writeRC(c, h.terminate(uid))
		case reqStepSuspend, reqStepResume:
			err = serveSuspend(c, h, req, uid)
		default:
			return // as slurmstepd: an unknown request ends the connection
		}
		if err != nil {
			return
		}
	}
}

func writeRC(w io.Writer, errnum int32) error {
	if errnum == 0 {
		return writeInts(w, 0, 0)
	}
	return writeInts(w, -1, errnum)
}
