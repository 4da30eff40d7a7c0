package stepd

// srun --pty (LAUNCH_PTY): task 0 of the step runs on a pseudo-terminal,
// as slurmstepd does it (io.c, mgr.c). The task gets the slave as stdin,
// stdout and stderr, its own session and the slave as its controlling
// terminal (login_tty); the supervisor keeps the master, whose output goes
// to srun as the task's stdout stream (no separate stderr stream: the
// terminal merges them), and writes srun's stdin to it. The other tasks of
// the step read and write /dev/null. The window size starts from
// SLURM_PTY_WIN_ROW/COL and follows srun's SIGWINCH: the supervisor
// connects to srun's SLURM_PTY_PORT, where each change arrives as four
// bytes (columns, rows; big-endian), sets it on the master with TIOCSWINSZ
// and sends the task SIGWINCH.

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"

	"golang.org/x/sys/unix"
)

// launchPTY is LAUNCH_PTY.
const launchPTY = 0x04

// ptyPair is an open pseudo-terminal.
type ptyPair struct {
	master *os.File // non-blocking, through the runtime poller
	slave  *os.File
}

// openPTY is openpty(3) without cgo: /dev/ptmx, unlockpt, the slave by
// number. As root the slave is handed to uid, group tty, mode 0620, as
// grantpt does for a pty the user opened (slurmstepd opens it with the
// user's effective uid for that reason).
func openPTY(uid uint32) (*ptyPair, error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*ptyPair, error) {
		unix.Close(mfd)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlockpt", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		return fail("ptsname", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+name, err)
	}
	if os.Geteuid() == 0 {
		gid := -1
		if g, err := user.LookupGroup("tty"); err == nil {
			gid, _ = strconv.Atoi(g.Gid)
		}
		if err := unix.Fchown(sfd, int(uid), gid); err != nil {
			unix.Close(sfd)
			return fail("chown "+name, err)
		}
		if err := unix.Fchmod(sfd, 0o620); err != nil {
			unix.Close(sfd)
			return fail("chmod "+name, err)
		}
	}
	if err := unix.SetNonblock(mfd, true); err != nil {
		unix.Close(sfd)
		return fail("master non-blocking", err)
	}
	return &ptyPair{master: os.NewFile(uintptr(mfd), "/dev/ptmx"), slave: os.NewFile(uintptr(sfd), name)}, nil
}

// setWinsize applies a window size to the terminal.
func (p *ptyPair) setWinsize(rows, cols uint16) error {
	var err error
	ctlErr := withFd(p.master, func(fd int) {
		err = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	if ctlErr != nil {
		return ctlErr
	}
	return err
}

func withFd(f *os.File, fn func(fd int)) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) })
}

// dupMaster is a second handle on the master: srun's stdin is written to
// it, and it is closed at stdin's EOF while the output side stays open (a
// terminal has no end of input but the user's ^D).
func (p *ptyPair) dupMaster() (*os.File, error) {
	var nfd int
	var err error
	if cerr := withFd(p.master, func(fd int) { nfd, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "/dev/ptmx"), nil
}

// ptyTaskAttr makes the started helper login_tty's child: a session of its
// own with the slave (its descriptor 0) as controlling terminal, instead
// of the step's usual process group.
func ptyTaskAttr(c *exec.Cmd) {
	c.SysProcAttr.Setpgid = false
	c.SysProcAttr.Setsid = true
	c.SysProcAttr.Setctty = true
	c.SysProcAttr.Ctty = 0
}

// ptyInitialSize reads SLURM_PTY_WIN_ROW and SLURM_PTY_WIN_COL.
func ptyInitialSize(env Env) (rows, cols uint16, ok bool) {
	r, rok := env.Get("SLURM_PTY_WIN_ROW")
	c, cok := env.Get("SLURM_PTY_WIN_COL")
	if !rok || !cok {
		return 0, 0, false
	}
	rn, err1 := strconv.ParseUint(r, 10, 16)
	cn, err2 := strconv.ParseUint(c, 10, 16)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint16(rn), uint16(cn), true
}

// readWinsize reads one message of the pty port: columns then rows.
func readWinsize(r io.Reader) (rows, cols uint16, err error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, err
	}
	return binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint16(b[0:]), nil
}

// dialPTYPort connects to srun's SLURM_PTY_PORT on host.
func dialPTYPort(host string, env Env) (net.Conn, error) {
	port, ok := env.Get("SLURM_PTY_PORT")
	if !ok {
		return nil, fmt.Errorf("SLURM_PTY_PORT env var not set")
	}
	return net.Dial("tcp", net.JoinHostPort(host, port))
}

// windowManager applies srun's window size changes until the connection
// ends or the task is gone.
func windowManager(conn net.Conn, p *ptyPair, pid int, log *slog.Logger) {
	for {
		rows, cols, err := readWinsize(conn)
		if err != nil {
			return
		}
		log.Debug(fmt.Sprintf("new pty size %d:%d", rows, cols))
		if err := p.setWinsize(rows, cols); err != nil {
			log.Error(fmt.Sprintf("ioctl(TIOCSWINSZ): %v", err))
		}
		if err := unix.Kill(pid, unix.SIGWINCH); err == unix.ESRCH {
			return
		}
	}
}

// startPTYTask starts local task i of a pty step: global task 0 on a new
// terminal, any other task on /dev/null.
func (ts *taskStep) startPTYTask(i int, gtid uint32, in *helperInit, sio *srunIO, stdins map[uint32]*os.File, env Env) (*exec.Cmd, error) {
	start := func(c *exec.Cmd) error { return ts.trk.start(c, uint32(i)) }
	if gtid != 0 {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("open /dev/null: %w", err)
		}
		defer null.Close()
		cmd, stderr, err := startHelper(in, start, null, null, null)
		if err != nil {
			return nil, err
		}
		stderr.Close()
		return cmd, nil
	}
	p, err := openPTY(in.UID)
	if err != nil {
		return nil, fmt.Errorf("stdin openpty: %w", err)
	}
	defer p.slave.Close()
	if rows, cols, ok := ptyInitialSize(env); ok {
		ts.log.Debug(fmt.Sprintf("init pty size %d:%d", rows, cols))
		if err := p.setWinsize(rows, cols); err != nil {
			ts.log.Error(fmt.Sprintf("ioctl(TIOCSWINSZ): %v", err))
		}
	} else {
		ts.log.Error("SLURM_PTY_WIN_ROW/SLURM_PTY_WIN_COL env vars not set")
	}
	conn, err := dialPTYPort(ts.srun.String(), env)
	if err != nil {
		// The task still runs on its terminal, only without resizes.
		ts.log.Error(fmt.Sprintf("pty connection to srun: %v", err))
	}
	stdinW, err := p.dupMaster()
	if err != nil {
		p.master.Close()
		if conn != nil {
			conn.Close()
		}
		return nil, err
	}
	cmd, stderr, err := startHelper(in, func(c *exec.Cmd) error {
		ptyTaskAttr(c)
		return start(c)
	}, p.slave, p.slave, p.slave)
	if err != nil {
		p.master.Close()
		stdinW.Close()
		if conn != nil {
			conn.Close()
		}
		return nil, err
	}
	stderr.Close()
	if sio != nil {
		stdins[gtid] = stdinW
		sio.pump(p.master, ioStdout, gtid, uint32(i))
	} else {
		// No stream to srun: the terminal's output is read and dropped
		// so the task never blocks on it.
		stdinW.Close()
		go func() {
			io.Copy(io.Discard, p.master)
			p.master.Close()
		}()
	}
	if conn != nil {
		ts.ptyConn = conn
		go windowManager(conn, p, cmd.Process.Pid, ts.log)
	}
	return cmd, nil
}
