package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testPTY opens a pseudo-terminal pair for a test.
func testPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

func TestWinsizeMessage(t *testing.T) {
	for _, tc := range []struct {
		rows, cols uint16
		want       []byte
	}{
		{24, 80, []byte{0, 80, 0, 24}},
		{50, 300, []byte{1, 44, 0, 50}},
	} {
		if got := winsizeMessage(tc.rows, tc.cols); !bytes.Equal(got, tc.want) {
			t.Errorf("winsizeMessage(%d, %d) = %v, want %v", tc.rows, tc.cols, got, tc.want)
		}
	}
}

func TestCRLFWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"srun: error: x\n", "srun: error: x\r\n"},
		{"a\nb\n", "a\r\nb\r\n"},
		{"no newline", "no newline"},
	} {
		var b bytes.Buffer
		n, err := crlfWriter{&b}.Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || b.String() != tc.want {
			t.Errorf("crlfWriter(%q) = %q, %d, %v", tc.in, b.String(), n, err)
		}
	}
}

func TestErrnoText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{unix.ENOTTY, "Inappropriate ioctl for device"},
		{&os.PathError{Op: "x", Path: "y", Err: unix.EBADF}, "Bad file descriptor"},
		{errors.New("plain"), "plain"},
	} {
		if got := errnoText(tc.err); got != tc.want {
			t.Errorf("errnoText(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestStartPTYNoTerminal: without a terminal on stdout srun drops --pty.
func TestStartPTYNoTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, out := range []io.Writer{&bytes.Buffer{}, f} {
		_, err := startPTY(bytes.NewReader(nil), out)
		var te *ttyError
		if !errors.As(err, &te) || !errors.Is(te.err, unix.ENOTTY) {
			t.Errorf("startPTY(%T) = %v, want ENOTTY", out, err)
		}
	}
}

// TestStartPTY: the size comes from stdout's terminal, stdin's goes raw
// and is restored, and a SIGWINCH sends the new size to whoever connected
// to the pty port.
func TestStartPTY(t *testing.T) {
	master, slave := testPTY(t)
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 31, Col: 97}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if before.Lflag&unix.ICANON == 0 {
		t.Fatal("a new terminal should start canonical")
	}
	p, err := startPTY(slave, slave)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			p.close()
		}
	}()
	if p.rows != 31 || p.cols != 97 {
		t.Errorf("size %d:%d, want 31:97", p.rows, p.cols)
	}
	raw, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if raw.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 || raw.Oflag&unix.OPOST != 0 || raw.Cc[unix.VMIN] != 1 {
		t.Errorf("stdin not raw: %+v", raw)
	}

	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p.port()))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	// The session is not this terminal's: signal ourselves, until the
	// serving side has taken the connection and answers.
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			got <- nil
			return
		}
		got <- b
	}()
	var msg []byte
	for msg == nil {
		syscall.Kill(os.Getpid(), syscall.SIGWINCH)
		select {
		case msg = <-got:
			if msg == nil {
				t.Fatal("pty port closed without a size")
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !bytes.Equal(msg, []byte{0, 120, 0, 40}) {
		t.Errorf("pty port got %v, want 120 columns 40 rows", msg)
	}
	p.close()
	closed = true
	after, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if after.Lflag != before.Lflag || after.Oflag != before.Oflag || after.Iflag != before.Iflag {
		t.Errorf("terminal not restored: %+v, was %+v", after, before)
	}
}
