package launch

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

func TestLabelWidth(t *testing.T) {
	for _, c := range []struct {
		n    uint32
		want int
	}{{1, 1}, {10, 1}, {11, 2}, {100, 2}, {101, 3}} {
		if got := labelWidth(c.n); got != c.want {
			t.Errorf("labelWidth(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestRangeAndCounts(t *testing.T) {
	for _, c := range []struct {
		ids  []uint32
		want string
	}{{[]uint32{0}, "0"}, {[]uint32{1, 0}, "0-1"}, {[]uint32{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"}} {
		if got := rangeString(c.ids); got != c.want {
			t.Errorf("rangeString(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
	for _, c := range []struct {
		counts []uint32
		want   string
	}{{[]uint32{1}, "1"}, {[]uint32{1, 1}, "1(x2)"}, {[]uint32{2, 2, 2, 1}, "2(x3),1"}, {[]uint32{1, 2, 1}, "1,2,1"}} {
		if got := CompressCounts(c.counts); got != c.want {
			t.Errorf("CompressCounts(%v) = %q, want %q", c.counts, got, c.want)
		}
	}
}

// wait statuses as the kernel builds them.
func exited(code int) uint32           { return uint32(code << 8) }
func killed(sig syscall.Signal) uint32 { return uint32(sig) }

func TestGlobalRC(t *testing.T) {
	for _, c := range []struct {
		name     string
		statuses []uint32
		want     int
	}{
		{"all zero", []uint32{exited(0), exited(0)}, 0},
		{"highest exit code", []uint32{exited(2), exited(7), exited(3)}, 7},
		{"signal beats exit code", []uint32{exited(9), killed(syscall.SIGKILL)}, 137},
		{"highest signal", []uint32{killed(syscall.SIGKILL), killed(syscall.SIGTERM)}, 143},
		{"exit after signal", []uint32{killed(syscall.SIGINT), exited(100)}, 130},
		{"oom", []uint32{exited(3), sigOOM}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Step{}
			for _, st := range c.statuses {
				s.noteRCLocked(st)
			}
			if got := ExitCode(s.globalRC); got != c.want {
				t.Errorf("exit code %d, want %d", got, c.want)
			}
		})
	}
}

func TestTaskExitMessages(t *testing.T) {
	var errb bytes.Buffer
	s := &Step{ctl: &Ctl{Log: &jobopt.Log{Prog: "srun", W: &errb}}, JobID: 7, NTasks: 4,
		Nodes: []string{"n1", "n2"}, TIDs: [][]uint32{{0, 1}, {2, 3}}, state: make([]taskState, 4),
		allExited: make(chan struct{})}
	id := msg.StepID{JobID: 7, StepID: 0, StepHetComp: pack.NoVal}
	s.taskExit(msg.TaskExit{ReturnCode: exited(0), TaskIDs: []uint32{0}, StepID: id})
	s.taskExit(msg.TaskExit{ReturnCode: exited(2), TaskIDs: []uint32{1, 2}, StepID: id})
	s.taskExit(msg.TaskExit{ReturnCode: killed(syscall.SIGSEGV) | 0x80, TaskIDs: []uint32{3}, StepID: id})
	want := "srun: error: n[1-2]: tasks 1-2: Exited with exit code 2\n" +
		"srun: error: n2: task 3: Segmentation fault (core dumped)\n"
	if errb.String() != want {
		t.Errorf("messages:\n%s\nwant:\n%s", errb.String(), want)
	}
	select {
	case <-s.allExited:
	default:
		t.Error("all tasks exited but the step is not done")
	}
	if got := ExitCode(s.globalRC); got != 128+int(syscall.SIGSEGV) {
		t.Errorf("exit code %d", got)
	}
}

// fakeStepd plays one node's slurmstepd on the I/O stream.
func fakeStepd(t *testing.T, port uint16, key []byte, node uint32, frames [][]byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		t.Fatal(err)
	}
	var w pack.Writer
	jobcred.AppendIOInit(&w, &jobcred.IOInit{Version: 0x2600, NodeID: node, StdoutObjs: 1, StderrObjs: 1, IOKey: key})
	if _, err := c.Write(w.Bytes()); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		c.Write(f)
	}
	return c
}

func frame(typ, gtid uint16, data string) []byte {
	var h [ioHdrLen]byte
	binary.BigEndian.PutUint16(h[0:], typ)
	binary.BigEndian.PutUint16(h[2:], gtid)
	binary.BigEndian.PutUint16(h[4:], 0)
	binary.BigEndian.PutUint32(h[6:], uint32(len(data)))
	return append(h[:], data...)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestIOServerLabelsStdinAndEOF(t *testing.T) {
	key := []byte("MUNGE:key\x00")
	var out, errb syncBuf
	srv, err := newIOServer(key, 2, 12, true, &out, &errb, strings.NewReader("input\n"), -1, []uint32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.close()

	// A connection with the wrong key is dropped and does not count.
	bad := fakeStepd(t, srv.port(), []byte("MUNGE:other\x00"), 0, nil)
	io.ReadAll(bad)
	bad.Close()

	c0 := fakeStepd(t, srv.port(), key, 0, [][]byte{frame(ioStdout, 0, "a"), frame(ioStdout, 0, "b\nc\n"), frame(ioStderr, 0, "oops\n")})
	defer c0.Close()
	c1 := fakeStepd(t, srv.port(), key, 1, [][]byte{frame(ioStdout, 11, "last"), frame(ioStdout, 11, "")})
	defer c1.Close()

	// Once both nodes are connected stdin goes to every node as ALLSTDIN,
	// then EOF.
	for _, c := range []net.Conn{c0, c1} {
		got := make([]byte, 2*ioHdrLen+len("input\n"))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		want := append(frame(ioAllStdin, ioAllTasks, "input\n"), frame(ioAllStdin, ioAllTasks, "")...)
		binary.BigEndian.PutUint16(want[4:], ioAllTasks)
		binary.BigEndian.PutUint16(want[ioHdrLen+6+4:], ioAllTasks)
		if !bytes.Equal(got, want) {
			t.Errorf("stdin frames %x, want %x", got, want)
		}
	}
	select {
	case <-srv.done:
		t.Fatal("done before every stream sent EOF")
	default:
	}
	c0.Write(frame(ioStdout, 0, ""))
	c0.Write(frame(ioStderr, 0, ""))
	c1.Write(frame(ioStderr, 11, ""))
	<-srv.done
	if want := " 0: ab\n 0: c\n11: last"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if want := " 0: oops\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
}

// TestTaskExitAfterReply: the last MESSAGE_TASK_EXIT finishes the step
// only once its answer went out, so srun does not close the listener
// under an answer being signed (slurmstepd then got EOF and retried,
// holding the step open).
func TestTaskExitAfterReply(t *testing.T) {
	var errb bytes.Buffer
	s := &Step{ctl: &Ctl{Log: &jobopt.Log{Prog: "srun", W: &errb}}, JobID: 7, NTasks: 1,
		Nodes: []string{"n1"}, TIDs: [][]uint32{{0}}, state: make([]taskState, 1),
		allExited: make(chan struct{})}
	id := msg.StepID{JobID: 7, StepID: 0, StepHetComp: pack.NoVal}
	r := s.handleReport(msgtype.MESSAGE_TASK_EXIT, msg.TaskExit{ReturnCode: exited(0), TaskIDs: []uint32{0}, StepID: id})
	if r == nil || r.MsgType != msgtype.RESPONSE_SLURM_RC || r.After == nil {
		t.Fatalf("answer %+v: want RESPONSE_SLURM_RC with an After hook", r)
	}
	select {
	case <-s.allExited:
		t.Fatal("step done before the answer was sent")
	default:
	}
	r.After(nil)
	select {
	case <-s.allExited:
	default:
		t.Error("step not done after the answer was sent")
	}
}

// TestListenerAcceptsAuthSlurm: with auth/slurm, the listener's codec
// takes the auth/slurm sections slurmctld and slurmstepd send.
func TestListenerAcceptsAuthSlurm(t *testing.T) {
	for _, tc := range []struct {
		a    auth.Authenticator
		want bool
	}{{&auth.Munge{}, false}, {&slurmauth.Slurm{}, true}} {
		l, err := Listen(tc.a, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := l.srv.Codec.AcceptAuthSlurm
		l.Close()
		if got != tc.want {
			t.Errorf("%T: AcceptAuthSlurm %v, want %v", tc.a, got, tc.want)
		}
	}
}

// TestSenderAcceptsAuthSlurm: the launch and signal fan-out reads slurmd's
// replies, signed with auth/slurm on such a cluster.
func TestSenderAcceptsAuthSlurm(t *testing.T) {
	for _, authType := range []string{"auth/munge", "auth/slurm"} {
		s := &Step{ctl: &Ctl{Conn: &slurmcli.Conn{Conf: &conf.Config{AuthType: authType}, Client: &client.Client{}}}}
		cd := s.sender().Codec
		if cd == nil || cd.AcceptAuthSlurm != (authType == "auth/slurm") {
			t.Errorf("%s: codec %+v", authType, cd)
		}
	}
}
