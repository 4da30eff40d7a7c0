package launch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
)

// io_hdr types (src/common/io_hdr.h).
const (
	ioStdin    = 0
	ioStdout   = 1
	ioStderr   = 2
	ioAllStdin = 3
	ioConnTest = 4

	ioHdrLen   = 10
	ioMaxMsg   = 1024 // MAX_MSG_LEN: stdin is sent in pieces this size
	ioAllTasks = 0xffff
)

// ioServer is srun's side of the step's stdio stream (client_io_handler):
// one connection per node from slurmstepd, authenticated by the init
// message's copy of the credential signature; stdout and stderr frames are
// written out (with --label, per line with "<rank>: "), stdin is sent to
// every node (or to the node of one task), and the stream is done when each
// node has sent EOF for every stream it announced or closed.
type ioServer struct {
	ln     net.Listener
	key    []byte
	nnodes uint32
	label  bool
	width  int
	// labelOffset is added to a task's id in its label: a het step
	// component's first het-wide rank.
	labelOffset uint32
	out         [3]io.Writer // by io_hdr type: stdout, stderr

	stdin     io.Reader
	stdinTask int      // -1: every task (ALLSTDIN)
	taskNode  []uint32 // node index of each global task

	mu       sync.Mutex
	wmu      sync.Mutex
	conns    []net.Conn
	left     []int  // streams still open per node (-1: not connected yet)
	failed   []bool // node will never connect (launch failed)
	partial  map[[2]uint32][]byte
	done     chan struct{}
	isDone   bool
	ready    chan struct{}
	isReady  bool
	aborting bool
}

func newIOServer(key []byte, nnodes, ntasks uint32, label bool, stdout, stderr io.Writer, stdin io.Reader, stdinTask int, taskNode []uint32) (*ioServer, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, err
	}
	s := &ioServer{ln: ln, key: key, nnodes: nnodes, label: label, width: labelWidth(ntasks),
		stdin: stdin, stdinTask: stdinTask, taskNode: taskNode,
		conns: make([]net.Conn, nnodes), left: make([]int, nnodes), failed: make([]bool, nnodes),
		partial: map[[2]uint32][]byte{}, done: make(chan struct{}), ready: make(chan struct{})}
	s.out[ioStdout], s.out[ioStderr] = stdout, stderr
	for i := range s.left {
		s.left[i] = -1
	}
	go s.accept()
	return s, nil
}

// labelWidth is the digits of the highest task rank (step_io.c _wid).
func labelWidth(n uint32) int {
	w := 1
	for n--; n >= 10; n /= 10 {
		w++
	}
	return w
}

func (s *ioServer) port() uint16 { return uint16(s.ln.Addr().(*net.TCPAddr).Port) }

func (s *ioServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serve(c)
	}
}

func (s *ioServer) serve(c net.Conn) {
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		c.Close()
		return
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > jobcred.MaxIOInitLen {
		c.Close()
		return
	}
	buf := make([]byte, 4+size)
	copy(buf, n[:])
	if _, err := io.ReadFull(c, buf[4:]); err != nil {
		c.Close()
		return
	}
	m, err := jobcred.ParseIOInit(buf)
	if err == nil {
		err = m.Validate(s.key, s.nnodes)
	}
	if err != nil {
		c.Close()
		return
	}
	node := m.NodeID
	s.mu.Lock()
	if s.conns[node] != nil || s.aborting {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conns[node] = c
	s.left[node] = int(m.StdoutObjs + m.StderrObjs)
	s.checkLocked()
	s.mu.Unlock()
	s.read(node, c)
}

// read copies one node's frames out until its streams end.
func (s *ioServer) read(node uint32, c net.Conn) {
	defer func() {
		s.mu.Lock()
		s.left[node] = 0
		s.checkLocked()
		s.mu.Unlock()
	}()
	var h [ioHdrLen]byte
	for {
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		typ := binary.BigEndian.Uint16(h[0:])
		gtid := uint32(binary.BigEndian.Uint16(h[2:]))
		length := binary.BigEndian.Uint32(h[6:])
		if length > 1<<20 {
			return
		}
		data := make([]byte, length)
		if _, err := io.ReadFull(c, data); err != nil {
			return
		}
		switch typ {
		case ioStdout, ioStderr:
			if length == 0 {
				s.flush(typ, gtid)
				s.mu.Lock()
				s.left[node]--
				end := s.left[node] <= 0
				s.checkLocked()
				s.mu.Unlock()
				if end {
					return
				}
				continue
			}
			s.write(typ, gtid, data)
		case ioConnTest:
			// A liveness probe answered in kind.
			s.wmu.Lock()
			c.Write(h[:])
			s.wmu.Unlock()
		}
	}
}

func (s *ioServer) write(typ uint16, gtid uint32, data []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := s.out[typ]
	if !s.label {
		w.Write(data)
		return
	}
	k := [2]uint32{uint32(typ), gtid}
	buf := append(s.partial[k], data...)
	var b bytes.Buffer
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(&b, "%*d: ", s.width, gtid+s.labelOffset)
		b.Write(buf[:i+1])
		buf = buf[i+1:]
	}
	if len(buf) > 0 {
		s.partial[k] = append([]byte(nil), buf...)
	} else {
		delete(s.partial, k)
	}
	w.Write(b.Bytes())
}

// flush writes a task's unterminated last line at its EOF.
func (s *ioServer) flush(typ uint16, gtid uint32) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	k := [2]uint32{uint32(typ), gtid}
	if rest := s.partial[k]; len(rest) > 0 {
		fmt.Fprintf(s.out[typ], "%*d: %s", s.width, gtid+s.labelOffset, rest)
	}
	delete(s.partial, k)
}

// nodeFailed records that a node will not connect (its launch failed).
func (s *ioServer) nodeFailed(node int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[node] == nil {
		s.failed[node] = true
		s.left[node] = 0
	}
	s.checkLocked()
}

func (s *ioServer) checkLocked() {
	all := true
	connected := true
	for i := range s.left {
		if s.left[i] != 0 {
			all = false
		}
		if s.conns[i] == nil && !s.failed[i] {
			connected = false
		}
	}
	if connected && !s.isReady {
		s.isReady = true
		close(s.ready)
		go s.forwardStdin()
	}
	if all && connected && !s.isDone {
		s.isDone = true
		close(s.done)
	}
}

// forwardStdin starts once every node is connected, as srun reads its
// stdin only then.
func (s *ioServer) forwardStdin() {
	if s.stdin == nil {
		// Input comes from a file on the node: slurmstepd expects
		// nothing from srun, not even an EOF.
		return
	}
	buf := make([]byte, ioMaxMsg)
	for {
		n, err := s.stdin.Read(buf)
		if n > 0 {
			s.sendStdin(buf[:n])
		}
		if err != nil {
			s.sendStdin(nil)
			return
		}
	}
}

// sendStdin sends one stdin frame (nil data: EOF).
func (s *ioServer) sendStdin(data []byte) {
	var h [ioHdrLen]byte
	typ, gtid := uint16(ioAllStdin), uint16(ioAllTasks)
	target := -1
	if s.stdinTask >= 0 {
		typ, gtid = ioStdin, uint16(s.stdinTask)
		if s.stdinTask < len(s.taskNode) {
			target = int(s.taskNode[s.stdinTask])
		}
	}
	binary.BigEndian.PutUint16(h[0:], typ)
	binary.BigEndian.PutUint16(h[2:], gtid)
	binary.BigEndian.PutUint16(h[4:], ioAllTasks)
	binary.BigEndian.PutUint32(h[6:], uint32(len(data)))
	frame := append(h[:], data...)
	s.mu.Lock()
	conns := append([]net.Conn(nil), s.conns...)
	s.mu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for i, c := range conns {
		if c == nil || (target >= 0 && i != target) {
			continue
		}
		c.Write(frame)
	}
}

// abort stops waiting for the stream (client_io_handler_abort): nodes
// that never connected are given up, and connected ones get a moment to
// deliver what is already on its way (slurmstepd writes its "CANCELLED"
// line before the tasks die) before their readers stop.
func (s *ioServer) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborting = true
	for i, c := range s.conns {
		if c == nil {
			s.failed[i] = true
			s.left[i] = 0
			continue
		}
		c.SetReadDeadline(time.Now().Add(ioDrainTime))
	}
	s.checkLocked()
}

// ioDrainTime bounds reading a connection after an abort.
const ioDrainTime = 300 * time.Millisecond

func (s *ioServer) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for k, rest := range s.partial {
		if len(rest) > 0 {
			fmt.Fprintf(s.out[k[0]], "%*d: %s", s.width, k[1]+s.labelOffset, rest)
		}
	}
	s.partial = map[[2]uint32][]byte{}
}
