package stepd

// The stdio stream of an srun step (protocol-daemon.md §4.4): the
// supervisor connects to srun's I/O port, sends the io init (keyed with the
// credential signature), then STDOUT/STDERR frames of at most 1024 bytes
// per task, a zero-length frame at each stream's end, and takes stdin
// frames the other way.

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/pack"
)

// I/O frame types (io_hdr.h).
const (
	ioStdin    = 0
	ioStdout   = 1
	ioStderr   = 2
	ioAllStdin = 3
	ioConnTest = 4

	ioHeaderLen  = 10
	ioMaxPayload = 1024
)

type ioHeader struct {
	typ, gtid, ltid uint16
	length          uint32
}

func appendIOHeader(b []byte, h ioHeader) []byte {
	b = binary.BigEndian.AppendUint16(b, h.typ)
	b = binary.BigEndian.AppendUint16(b, h.gtid)
	b = binary.BigEndian.AppendUint16(b, h.ltid)
	return binary.BigEndian.AppendUint32(b, h.length)
}

func readIOHeader(r io.Reader) (ioHeader, error) {
	var b [ioHeaderLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return ioHeader{}, err
	}
	return ioHeader{binary.BigEndian.Uint16(b[0:]), binary.BigEndian.Uint16(b[2:]),
		binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint32(b[6:])}, nil
}

// srunIO is one connection to srun carrying the streams of this node's
// tasks.
type srunIO struct {
	conn net.Conn
	wmu  sync.Mutex
	wg   sync.WaitGroup // output pumps
}

// dialSrunIO connects and sends the io init.
func dialSrunIO(addr string, nodeID, stdoutObjs, stderrObjs uint32, key []byte) (*srunIO, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	var w pack.Writer
	jobcred.AppendIOInit(&w, &jobcred.IOInit{Version: protocolVersion, NodeID: nodeID,
		StdoutObjs: stdoutObjs, StderrObjs: stderrObjs, IOKey: key})
	if _, err := c.Write(w.Bytes()); err != nil {
		c.Close()
		return nil, err
	}
	return &srunIO{conn: c}, nil
}

func (s *srunIO) writeFrame(h ioHeader, data []byte) error {
	b := appendIOHeader(make([]byte, 0, ioHeaderLen+len(data)), h)
	b = append(b, data...)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.conn.Write(b)
	return err
}

// pump copies one task stream to srun and ends it with an EOF frame. If srun
// goes away the task's output is drained and dropped, so the task never
// blocks on a full pipe.
func (s *srunIO) pump(r *os.File, typ uint16, gtid, ltid uint32) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer r.Close()
		buf := make([]byte, ioMaxPayload)
		dead := false
		for {
			n, err := r.Read(buf)
			if n > 0 && !dead {
				if s.writeFrame(ioHeader{typ, uint16(gtid), uint16(ltid), uint32(n)}, buf[:n]) != nil {
					dead = true
				}
			}
			if err != nil {
				break
			}
		}
		if !dead {
			s.writeFrame(ioHeader{typ, uint16(gtid), uint16(ltid), 0}, nil)
		}
	}()
}

// stdinLoop reads srun's frames: stdin for one task (by global id) or all
// of them, EOF closing the task's stdin, and connection tests answered in
// kind. stdins maps global task id to the write end of the task's stdin.
func (s *srunIO) stdinLoop(stdins map[uint32]*os.File) {
	closeIn := func(f *os.File) {
		if f != nil {
			f.Close()
		}
	}
	buf := make([]byte, ioMaxPayload)
	for {
		h, err := readIOHeader(s.conn)
		if err != nil {
			break
		}
		if h.length > ioMaxPayload {
			break
		}
		data := buf[:h.length]
		if _, err := io.ReadFull(s.conn, data); err != nil {
			break
		}
		switch h.typ {
		case ioConnTest:
			s.writeFrame(ioHeader{typ: ioConnTest, gtid: 0xffff, ltid: 0xffff}, nil)
		case ioAllStdin, ioStdin:
			for gtid, f := range stdins {
				if h.typ == ioStdin && uint32(h.gtid) != gtid {
					continue
				}
				if h.length == 0 {
					closeIn(f)
					stdins[gtid] = nil
				} else if f != nil {
					f.Write(data)
				}
			}
		}
	}
	for gtid, f := range stdins {
		closeIn(f)
		stdins[gtid] = nil
	}
}

// finish waits for every output stream to have sent its EOF, then closes
// the connection (which also ends stdinLoop).
func (s *srunIO) finish() {
	s.wg.Wait()
	if tc, ok := s.conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	s.conn.Close()
}

var errNoIOPort = errors.New("stepd: launch request has no I/O port")
