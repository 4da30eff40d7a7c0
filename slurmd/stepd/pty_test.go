package stepd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestReadWinsize(t *testing.T) {
	for _, tc := range []struct {
		in         []byte
		rows, cols uint16
		err        bool
	}{
		{in: []byte{0, 80, 0, 24}, rows: 24, cols: 80},
		{in: []byte{0x01, 0x2c, 0, 50}, rows: 50, cols: 300},
		{in: []byte{0, 80, 0}, err: true},
	} {
		rows, cols, err := readWinsize(bytes.NewReader(tc.in))
		if (err != nil) != tc.err || rows != tc.rows || cols != tc.cols {
			t.Errorf("readWinsize(%v) = %d, %d, %v; want %d, %d, err %v", tc.in, rows, cols, err, tc.rows, tc.cols, tc.err)
		}
	}
}

func TestPTYInitialSize(t *testing.T) {
	for _, tc := range []struct {
		env        Env
		rows, cols uint16
		ok         bool
	}{
		{Env{"SLURM_PTY_WIN_ROW=24", "SLURM_PTY_WIN_COL=80"}, 24, 80, true},
		{Env{"SLURM_PTY_WIN_COL=80"}, 0, 0, false},
		{Env{"SLURM_PTY_WIN_ROW=x", "SLURM_PTY_WIN_COL=80"}, 0, 0, false},
		{Env{"SLURM_PTY_WIN_ROW=70000", "SLURM_PTY_WIN_COL=80"}, 0, 0, false},
	} {
		rows, cols, ok := ptyInitialSize(tc.env)
		if rows != tc.rows || cols != tc.cols || ok != tc.ok {
			t.Errorf("ptyInitialSize(%v) = %d, %d, %v", tc.env, rows, cols, ok)
		}
	}
}

// TestOpenPTY: the pair is a terminal whose size set on the master shows
// on the slave, and bytes written to the slave come out of the master.
func TestOpenPTY(t *testing.T) {
	p, err := openPTY(uint32(os.Getuid()))
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer p.master.Close()
	defer p.slave.Close()
	if err := p.setWinsize(33, 101); err != nil {
		t.Fatal(err)
	}
	ws, err := unix.IoctlGetWinsize(int(p.slave.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row != 33 || ws.Col != 101 {
		t.Fatalf("slave winsize %+v, %v", ws, err)
	}
	if _, err := p.slave.Write([]byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := p.master.Read(buf)
	if err != nil || string(buf[:n]) != "hi\r\n" { // ONLCR
		t.Fatalf("master read %q, %v", buf[:n], err)
	}
	if os.Geteuid() == 0 {
		var st unix.Stat_t
		if err := unix.Fstat(int(p.slave.Fd()), &st); err != nil || st.Mode&0o777 != 0o620 {
			t.Errorf("slave mode %o, %v", st.Mode&0o777, err)
		}
	}
}

// ptySrun is srun's side of a pty step: the I/O port (collecting task 0's
// terminal output, sending stdin on demand) and the pty port.
type ptySrun struct {
	io, ptyPort net.Listener
	key         []byte
	init        chan *jobcred.IOInit
	ioErr       chan error
	ioDone      chan struct{}

	mu   sync.Mutex
	conn net.Conn
	out  bytes.Buffer
	errs bytes.Buffer
	pty  chan net.Conn
}

func startPTYSrun(t *testing.T, key []byte) *ptySrun {
	s := &ptySrun{key: key, init: make(chan *jobcred.IOInit, 1), ioErr: make(chan error, 2),
		ioDone: make(chan struct{}), pty: make(chan net.Conn, 1)}
	var err error
	if s.io, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if s.ptyPort, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := s.ptyPort.Accept()
		if err == nil {
			s.pty <- c
		}
	}()
	go s.serveIO()
	t.Cleanup(func() {
		s.io.Close()
		s.ptyPort.Close()
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
		}
		s.mu.Unlock()
	})
	return s
}

func (s *ptySrun) serveIO() {
	defer close(s.ioDone)
	c, err := s.io.Accept()
	if err != nil {
		return
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	var lb [4]byte
	if _, err := io.ReadFull(c, lb[:]); err != nil {
		s.ioErr <- err
		return
	}
	body := make([]byte, binary.BigEndian.Uint32(lb[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		s.ioErr <- err
		return
	}
	init, err := jobcred.ParseIOInit(append(lb[:], body...))
	if err != nil || !jobcred.CheckIOKey(s.key, init.IOKey) {
		s.ioErr <- fmt.Errorf("io init %+v: %v", init, err)
		return
	}
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
	s.init <- init
	for open := init.StdoutObjs + init.StderrObjs; open > 0; {
		h, err := readIOHeader(c)
		if err != nil {
			s.ioErr <- err
			return
		}
		data := make([]byte, h.length)
		if _, err := io.ReadFull(c, data); err != nil {
			s.ioErr <- err
			return
		}
		if h.length == 0 {
			open--
			continue
		}
		s.mu.Lock()
		if h.typ == ioStderr || h.gtid != 0 {
			fmt.Fprintf(&s.errs, "frame type %d task %d: %q\n", h.typ, h.gtid, data)
		} else {
			s.out.Write(data)
		}
		s.mu.Unlock()
	}
}

func (s *ptySrun) stdin(t *testing.T, data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := appendIOHeader(nil, ioHeader{ioAllStdin, 0xffff, 0xffff, uint32(len(data))})
	if _, err := s.conn.Write(append(b, data...)); err != nil {
		t.Fatal(err)
	}
}

func (s *ptySrun) waitOutput(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		out := s.out.String()
		s.mu.Unlock()
		if strings.Contains(out, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the terminal output within 60 s; got %q", text, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLaunchTasksPTY runs a two-task LAUNCH_PTY step: task 0 on a terminal
// of the size srun sent (resized through the pty port, with SIGWINCH),
// reading srun's stdin, its output on one stdout stream; task 1 on
// /dev/null; exit statuses as usual.
func TestLaunchTasksPTY(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req, jobID, cred := signedLaunch(t, r)
	resp := startSrun(t, r.ctld, jobcred.IOKey(cred), r.uid, "")
	srun := startPTYSrun(t, jobcred.IOKey(cred))
	req.StepID.JobID = jobID
	req.UID, req.GID = r.uid, r.gid
	req.Cred = cred
	req.NTasks = 2
	req.GlobalTaskIDs = [][]uint32{{0, 1}}
	req.RespPorts = []uint16{uint16(resp.resp.Addr().(*net.TCPAddr).Port)}
	req.IOPorts = []uint16{uint16(srun.io.Addr().(*net.TCPAddr).Port)}
	req.Cwd = msg.Str(r.work)
	req.CompleteNodelist = msg.Str("n1")
	req.Flags = msg.LaunchPTY
	req.Env = append(req.Env, msg.Str("SLURM_PTY_WIN_ROW=24"), msg.Str("SLURM_PTY_WIN_COL=80"),
		msg.Str(fmt.Sprintf("SLURM_PTY_PORT=%d", srun.ptyPort.Addr().(*net.TCPAddr).Port)))
	script := `if [ "$SLURM_PROCID" != 0 ]; then tty >/dev/null; exit $?; fi
tty; stty size; echo ready; read x; echo got-$x
trap 'stty size; exit 3' WINCH
echo waiting
while :; do sleep 0.1; done`
	req.Argv = []msg.NullString{msg.Str("sh"), msg.Str("-c"), msg.Str(script)}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.mgr.LaunchTasks(ctx, &req, auth.Identity{UID: r.uid}, codec.AddrIPv4([4]byte{127, 0, 0, 1}, 0)); err != nil {
		t.Fatalf("LaunchTasks: %v", err)
	}
	var init *jobcred.IOInit
	select {
	case init = <-srun.init:
	case err := <-srun.ioErr:
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatal("no I/O connection")
	}
	if init.StdoutObjs != 1 || init.StderrObjs != 0 {
		t.Errorf("io init streams %d stdout %d stderr, want 1 and 0", init.StdoutObjs, init.StderrObjs)
	}
	srun.waitOutput(t, "ready")
	srun.stdin(t, "hello\r")
	srun.waitOutput(t, "waiting")
	var pc net.Conn
	select {
	case pc = <-srun.pty:
	case <-time.After(60 * time.Second):
		t.Fatal("the supervisor never connected to the pty port")
	}
	defer pc.Close()
	pc.Write([]byte{0, 100, 0, 33}) // 100 columns, 33 rows

	exits := map[uint32]uint32{}
	for len(exits) < 2 {
		select {
		case m := <-resp.msgs:
			if te, ok := m.(msg.TaskExit); ok {
				for _, id := range te.TaskIDs {
					exits[id] = te.ReturnCode
				}
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("task exits %v", exits)
		}
	}
	select {
	case <-srun.ioDone:
	case err := <-srun.ioErr:
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatal("I/O stream never ended")
	}
	if exits[0] != 3<<8 || exits[1] != 1<<8 {
		t.Errorf("exit statuses %v, want 0:768 1:256", exits)
	}
	srun.mu.Lock()
	out, stray := srun.out.String(), srun.errs.String()
	srun.mu.Unlock()
	// The terminal echoes the input and ends lines with CR LF.
	for _, want := range []string{"/dev/pts/", "\r\n24 80\r\nready\r\n", "hello\r\n", "got-hello\r\nwaiting\r\n", "33 100\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
	if stray != "" {
		t.Errorf("frames other than task 0's stdout:\n%s", stray)
	}
}
