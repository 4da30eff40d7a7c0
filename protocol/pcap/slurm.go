package pcap

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
)

// UnitKind says what a Unit of a Slurm connection is.
type UnitKind int

const (
	// UnitRPC is a Slurm RPC frame; Frame is set.
	UnitRPC UnitKind = iota
	// UnitIOInit is the message that opens an srun I/O stream; IOInit is set.
	UnitIOInit
	// UnitIO is one io_hdr frame of an I/O stream; IO is set.
	UnitIO
	// UnitBad is a length-prefixed frame that does not decode; Err is set.
	UnitBad
	// UnitTruncated is the tail of a stream that ends inside a frame (the
	// capture stopped or lost a segment).
	UnitTruncated
	// UnitDropped is a connection a Streamer gave up on (idle too long, too
	// many connections open, too many bytes waiting); Err says why and how
	// many bytes were left undecoded. Conn and Half (ToServer) are set.
	UnitDropped
)

func (k UnitKind) String() string {
	switch k {
	case UnitRPC:
		return "rpc"
	case UnitIOInit:
		return "io-init"
	case UnitIO:
		return "io"
	case UnitBad:
		return "bad"
	case UnitTruncated:
		return "truncated"
	case UnitDropped:
		return "dropped"
	}
	return fmt.Sprintf("UnitKind(%d)", int(k))
}

// IOInit is the first message slurmstepd sends on an srun I/O connection
// (io_init_msg): u32 length, u16 version, u32 nodeid, u32 stdout_objs,
// u32 stderr_objs, packmem io_key.
type IOInit struct {
	Version    codec.Version
	NodeID     uint32
	StdoutObjs uint32
	StderrObjs uint32
	IOKey      []byte
}

// IOHeader is an io_hdr: u16 type, u16 gtaskid, u16 ltaskid, u32 length,
// followed by length bytes of data. Length 0 is EOF for that stream.
type IOHeader struct {
	Type    uint16 // 0 stdin, 1 stdout, 2 stderr, 3 all-stdin, 4 connection test
	GTaskID uint16
	LTaskID uint16
	Data    []byte
}

// IO stream types (SLURM_IO_*).
const (
	IOStdin          = 0
	IOStdout         = 1
	IOStderr         = 2
	IOAllStdin       = 3
	IOConnectionTest = 4
)

// Unit is one Slurm message (or I/O record) of one direction of a
// connection.
type Unit struct {
	Kind   UnitKind
	Conn   *Conn
	Half   *Half
	Offset int       // offset in the direction's byte stream
	Time   time.Time // capture time of the unit's first byte
	Raw    []byte    // the bytes on the wire, length prefix included
	Frame  codec.Frame
	IOInit IOInit
	IO     IOHeader
	Err    error
}

// parseIOInit recognizes an I/O init message at the start of data.
func parseIOInit(data []byte) (IOInit, int, bool) {
	if len(data) < 22 {
		return IOInit{}, 0, false
	}
	n := binary.BigEndian.Uint32(data)
	v := codec.Version(binary.BigEndian.Uint16(data[4:]))
	klen := binary.BigEndian.Uint32(data[18:])
	if !v.Supported() || uint64(n) != 18+uint64(klen) || uint64(len(data)) < 4+uint64(n) {
		return IOInit{}, 0, false
	}
	return IOInit{
		Version:    v,
		NodeID:     binary.BigEndian.Uint32(data[6:]),
		StdoutObjs: binary.BigEndian.Uint32(data[10:]),
		StderrObjs: binary.BigEndian.Uint32(data[14:]),
		IOKey:      data[22 : 22+klen],
	}, int(4 + n), true
}

// isIOConn reports whether c is an srun I/O connection: one direction
// starts with an I/O init message that does not decode as an RPC.
func isIOConn(c *Conn, cd *codec.Codec) bool {
	for _, h := range []*Half{c.ToServer, c.ToClient} {
		d := h.Data()
		if _, n, ok := parseIOInit(d); ok {
			if _, err := cd.DecodeFrame(d[:n]); err != nil {
				return true
			}
		}
	}
	return false
}

// SlurmUnits splits both directions of c into units, in stream order (all of
// ToServer, then all of ToClient). An I/O connection yields its init message
// and io_hdr records instead of RPC frames.
func SlurmUnits(c *Conn, cd *codec.Codec) []Unit {
	io := isIOConn(c, cd)
	var out []Unit
	for _, h := range []*Half{c.ToServer, c.ToClient} {
		if io {
			out = append(out, splitIO(c, h)...)
		} else {
			out = append(out, splitRPC(c, h, cd)...)
		}
	}
	return out
}

func splitRPC(c *Conn, h *Half, cd *codec.Codec) []Unit {
	d := h.Data()
	var out []Unit
	for off := 0; off < len(d); {
		u := Unit{Conn: c, Half: h, Offset: off, Time: h.TimeAt(off)}
		if len(d)-off < 4 {
			u.Kind, u.Raw = UnitTruncated, d[off:]
			return append(out, u)
		}
		n := binary.BigEndian.Uint32(d[off:])
		if err := cd.CheckLength(n); err != nil {
			u.Kind, u.Raw, u.Err = UnitBad, d[off:], err
			return append(out, u) // cannot resynchronize
		}
		if uint64(len(d)-off-4) < uint64(n) {
			u.Kind, u.Raw = UnitTruncated, d[off:]
			return append(out, u)
		}
		u.Raw = d[off : off+4+int(n)]
		f, err := cd.DecodeFrame(u.Raw)
		if err != nil {
			u.Kind, u.Err = UnitBad, err
		} else {
			u.Kind, u.Frame = UnitRPC, f
		}
		out = append(out, u)
		off += 4 + int(n)
	}
	return out
}

func splitIO(c *Conn, h *Half) []Unit {
	d := h.Data()
	var out []Unit
	off := 0
	if ini, n, ok := parseIOInit(d); ok {
		out = append(out, Unit{Kind: UnitIOInit, Conn: c, Half: h, Time: h.TimeAt(0), Raw: d[:n], IOInit: ini})
		off = n
	}
	for off < len(d) {
		u := Unit{Conn: c, Half: h, Offset: off, Time: h.TimeAt(off)}
		if len(d)-off < 10 {
			u.Kind, u.Raw = UnitTruncated, d[off:]
			return append(out, u)
		}
		n := binary.BigEndian.Uint32(d[off+6:])
		if uint64(len(d)-off-10) < uint64(n) {
			u.Kind, u.Raw = UnitTruncated, d[off:]
			return append(out, u)
		}
		u.Kind = UnitIO
		u.Raw = d[off : off+10+int(n)]
		u.IO = IOHeader{
			Type:    binary.BigEndian.Uint16(d[off:]),
			GTaskID: binary.BigEndian.Uint16(d[off+2:]),
			LTaskID: binary.BigEndian.Uint16(d[off+4:]),
			Data:    u.Raw[10:],
		}
		out = append(out, u)
		off += 10 + int(n)
	}
	return out
}

// ReadConns reads a whole pcap stream and returns its TCP connections.
func ReadConns(r io.Reader) ([]*Conn, error) {
	pr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	as := NewAssembler()
	for {
		p, err := pr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return as.Conns(), err
		}
		if s, ok := DecodeTCP(p); ok {
			as.Add(s)
		}
	}
	return as.Conns(), nil
}
