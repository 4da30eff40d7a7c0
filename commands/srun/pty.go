package main

// srun --pty, as 22.05's srun does it (srun.c, srun_pty.c): once the step
// exists, srun reads its terminal's window size from stdout (no terminal:
// an error, and the option is dropped), puts stdin's terminal in raw mode
// (restored on stdout when srun ends), opens the pty port and passes it
// and the size in SLURM_PTY_PORT, SLURM_PTY_WIN_COL and SLURM_PTY_WIN_ROW,
// and from then on ends its own messages with CR LF. The step daemon of
// task 0 connects to the pty port; each SIGWINCH then sends it the new
// size as four bytes, columns and rows, big-endian.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ptySession is srun's side of a --pty step.
type ptySession struct {
	in, out    *os.File
	saved      *unix.Termios // stdin's settings before raw mode
	ln         net.Listener
	rows, cols uint16

	mu     sync.Mutex
	conn   net.Conn
	closed bool
	winch  chan os.Signal
	done   chan struct{}
	wg     sync.WaitGroup
}

// winsize reads the terminal size of f (set_winsize).
func winsize(f *os.File) (rows, cols uint16, err error) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0, err
	}
	return ws.Row, ws.Col, nil
}

// makeRaw is cfmakeraw.
func makeRaw(t *unix.Termios) {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
}

// ttyError is a stdout without a terminal size: srun says so and carries
// on without --pty.
type ttyError struct{ err error }

func (e *ttyError) Error() string { return "ioctl(TIOCGWINSZ): " + e.err.Error() }

// startPTY sets up the terminal side of srun --pty.
func startPTY(stdin io.Reader, stdout io.Writer) (*ptySession, error) {
	out, ok := stdout.(*os.File)
	if !ok {
		return nil, &ttyError{unix.ENOTTY}
	}
	in, _ := stdin.(*os.File)
	p := &ptySession{in: in, out: out, done: make(chan struct{})}
	var err error
	if p.rows, p.cols, err = winsize(out); err != nil {
		return nil, &ttyError{err}
	}
	if in != nil {
		// As srun, a stdin that is no terminal is left alone.
		if t, err := unix.IoctlGetTermios(int(in.Fd()), unix.TCGETS); err == nil {
			saved := *t
			p.saved = &saved
			makeRaw(t)
			unix.IoctlSetTermios(int(in.Fd()), unix.TCSETS, t)
		}
	}
	p.ln, err = net.Listen("tcp", ":0")
	if err != nil {
		p.restore()
		return nil, err
	}
	p.winch = make(chan os.Signal, 4)
	signal.Notify(p.winch, syscall.SIGWINCH)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// port is SLURM_PTY_PORT.
func (p *ptySession) port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }

// serve takes the step daemon's connection, then sends it every window
// size change.
func (p *ptySession) serve() {
	defer p.wg.Done()
	c, err := p.ln.Accept()
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conn = c
	p.mu.Unlock()
	for {
		select {
		case <-p.done:
			return
		case <-p.winch:
			rows, cols, err := winsize(p.out)
			if err != nil {
				continue
			}
			if _, err := c.Write(winsizeMessage(rows, cols)); err != nil {
				return
			}
		}
	}
}

// winsizeMessage is one pty port message: columns, rows.
func winsizeMessage(rows, cols uint16) []byte {
	b := binary.BigEndian.AppendUint16(nil, cols)
	return binary.BigEndian.AppendUint16(b, rows)
}

// restore puts stdout's terminal back as stdin's was (_pty_restore).
func (p *ptySession) restore() {
	if p.saved != nil {
		unix.IoctlSetTermios(int(p.out.Fd()), unix.TCSETS, p.saved)
	}
}

// close ends the session and restores the terminal.
func (p *ptySession) close() {
	p.mu.Lock()
	p.closed = true
	if p.conn != nil {
		p.conn.Close()
	}
	p.mu.Unlock()
	signal.Stop(p.winch)
	close(p.done)
	p.ln.Close()
	p.wg.Wait()
	p.restore()
}

// crlfWriter is srun's raw logging: messages end with CR LF while the
// terminal is raw.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(b []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// errnoText is C's strerror wording for an errno.
func errnoText(err error) string {
	var en syscall.Errno
	if !errors.As(err, &en) {
		return err.Error()
	}
	s := en.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
