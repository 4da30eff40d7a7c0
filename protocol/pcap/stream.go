package pcap

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
)

// Streamer is the live counterpart of Assembler + SlurmUnits: it takes
// segments one at a time, in capture order, and returns each Slurm unit as
// soon as its last byte has arrived. Bytes are dropped once their unit is
// returned, a connection is forgotten once both sides closed it, and the
// limits below bound what is held for connections that never finish.
//
// Units returned by Add, Expire and Close keep referring to bytes the
// Streamer no longer writes to, so callers may hold on to them.
type Streamer struct {
	cd   *codec.Codec
	lim  StreamLimits
	open map[[2]netip.AddrPort]*sconn
	ids  int
}

// StreamLimits bound the memory of a Streamer.
type StreamLimits struct {
	// Idle drops a connection that saw no segment for this long (default
	// 5 minutes).
	Idle time.Duration
	// MaxConns is the most connections followed at once; beyond it the
	// least recently active one is dropped (default 4096).
	MaxConns int
	// MaxBuffer is the most bytes held for one direction of a connection
	// (a frame still arriving plus segments past a hole); beyond it the
	// connection is dropped (default 64 MiB).
	MaxBuffer int
}

func (l StreamLimits) withDefaults() StreamLimits {
	if l.Idle <= 0 {
		l.Idle = 5 * time.Minute
	}
	if l.MaxConns <= 0 {
		l.MaxConns = 4096
	}
	if l.MaxBuffer <= 0 {
		l.MaxBuffer = 64 << 20
	}
	return l
}

// connection kinds, decided by the first complete unit of either direction.
const (
	kindUnknown = iota
	kindRPC
	kindIO
)

type sconn struct {
	c     *Conn
	half  [2]*shalf // ToServer, ToClient
	kind  int
	last  time.Time
	reset bool
}

// shalf is one direction, held as the contiguous bytes not yet returned as
// units plus the segments that arrived after a hole.
type shalf struct {
	h       *Half
	started bool
	next    uint32 // sequence number of the next contiguous byte
	off     int    // stream offset of buf[0]
	buf     []byte
	marks   []mark // stream offsets (not buf offsets) and capture times
	ooo     []halfSeg
	oooLen  int
	fin     bool
	finSeq  uint32
	stuck   bool // a frame that cannot be resynchronized: ignore the rest
	initSet bool // the I/O init message of this direction was looked for
}

// NewStreamer returns a Streamer that decodes frames with cd.
func NewStreamer(cd *codec.Codec, lim StreamLimits) *Streamer {
	return &Streamer{cd: cd, lim: lim.withDefaults(), open: map[[2]netip.AddrPort]*sconn{}}
}

// Open returns how many connections are being followed.
func (st *Streamer) Open() int { return len(st.open) }

// Add feeds one segment and returns the units it completed, and the
// connections it forced out.
func (st *Streamer) Add(s Segment) []Unit {
	var out []Unit
	k := key(s.Src, s.Dst)
	sc := st.open[k]
	isSyn := s.Flags&TCPSyn != 0 && s.Flags&TCPAck == 0
	if sc != nil && isSyn {
		cs := sc.half[0]
		if s.Src != sc.c.Client || !cs.h.synSeen || cs.h.isn != s.Seq+1 {
			// A new connection on the same 4-tuple: finish the old one.
			out = append(out, st.finish(sc, "")...)
			sc = nil
		}
	}
	if sc == nil {
		if len(st.open) >= st.lim.MaxConns {
			out = append(out, st.dropOldest()...)
		}
		st.ids++
		c := &Conn{ID: st.ids, Client: s.Src, Server: s.Dst, Start: s.Time}
		c.ToServer = &Half{Src: s.Src, Dst: s.Dst, built: true}
		c.ToClient = &Half{Src: s.Dst, Dst: s.Src, built: true}
		sc = &sconn{c: c, half: [2]*shalf{{h: c.ToServer}, {h: c.ToClient}}}
		st.open[k] = sc
	}
	sc.last = s.Time
	dir := 0
	if s.Src != sc.c.Client {
		dir = 1
	}
	hs := sc.half[dir]
	hs.add(s)
	if s.Flags&TCPRst != 0 {
		sc.reset = true
	}
	out = append(out, st.units(sc, hs)...)
	if hs.buffered() > st.lim.MaxBuffer {
		return append(out, st.finish(sc, fmt.Sprintf("more than %d bytes waiting in one direction", st.lim.MaxBuffer))...)
	}
	if sc.reset || (sc.half[0].done() && sc.half[1].done()) {
		out = append(out, st.finish(sc, "")...)
	}
	return out
}

// Expire drops the connections idle since before now-Idle.
func (st *Streamer) Expire(now time.Time) []Unit {
	var idle []*sconn
	for _, sc := range st.open {
		if now.Sub(sc.last) > st.lim.Idle {
			idle = append(idle, sc)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].c.ID < idle[j].c.ID })
	var out []Unit
	for _, sc := range idle {
		out = append(out, st.finish(sc, fmt.Sprintf("idle for more than %v", st.lim.Idle))...)
	}
	return out
}

// Close finishes every open connection, as at the end of a capture: what is
// left of a frame is a truncated unit.
func (st *Streamer) Close() []Unit {
	all := make([]*sconn, 0, len(st.open))
	for _, sc := range st.open {
		all = append(all, sc)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].c.ID < all[j].c.ID })
	var out []Unit
	for _, sc := range all {
		out = append(out, st.finish(sc, "")...)
	}
	return out
}

func (st *Streamer) dropOldest() []Unit {
	var old *sconn
	for _, sc := range st.open {
		if old == nil || sc.last.Before(old.last) || (sc.last.Equal(old.last) && sc.c.ID < old.c.ID) {
			old = sc
		}
	}
	if old == nil {
		return nil
	}
	return st.finish(old, fmt.Sprintf("more than %d connections open (least recently active)", st.lim.MaxConns))
}

// finish forgets sc. With a reason it is a drop, reported as one
// UnitDropped; otherwise the end of the connection, where a frame cut short
// is a UnitTruncated as in a file.
func (st *Streamer) finish(sc *sconn, reason string) []Unit {
	delete(st.open, key(sc.c.Client, sc.c.Server))
	var out []Unit
	if reason != "" {
		n := 0
		for _, hs := range sc.half {
			n += hs.buffered()
		}
		out = append(out, Unit{Kind: UnitDropped, Conn: sc.c, Half: sc.c.ToServer, Time: sc.last,
			Err: fmt.Errorf("stream dropped: %s; %d bytes not decoded", reason, n)})
	} else {
		for _, hs := range sc.half {
			hs.h.gap = hs.oooLen > 0
			if len(hs.buf) > 0 && !hs.stuck {
				out = append(out, Unit{Kind: UnitTruncated, Conn: sc.c, Half: hs.h, Offset: hs.off, Time: hs.timeAt(hs.off), Raw: hs.buf})
			}
		}
	}
	for _, hs := range sc.half {
		hs.buf, hs.ooo, hs.marks, hs.oooLen = nil, nil, nil, 0
	}
	return out
}

func (hs *shalf) buffered() int { return len(hs.buf) + hs.oooLen }

// done: the FIN arrived and every byte before it.
func (hs *shalf) done() bool { return hs.fin && hs.started && hs.next == hs.finSeq }

func (hs *shalf) add(s Segment) {
	h := hs.h
	if s.Flags&TCPSyn != 0 {
		h.synSeen, h.isn = true, s.Seq+1
		hs.started, hs.next = true, s.Seq+1
	}
	if !hs.started {
		// Joined mid-connection: start at the first byte seen.
		hs.started, hs.next = true, s.Seq
	}
	if s.Flags&TCPFin != 0 {
		hs.fin, hs.finSeq = true, s.Seq+uint32(len(s.Payload))
		h.FinSeen = true
	}
	if len(s.Payload) == 0 || hs.stuck {
		return
	}
	hs.place(s.Seq, s.Time, s.Payload)
	// Segments past a hole that the new bytes filled, in sequence order.
	for len(hs.ooo) > 0 {
		sort.Slice(hs.ooo, func(i, j int) bool { return int32(hs.ooo[i].seq-hs.ooo[j].seq) < 0 })
		o := hs.ooo[0]
		if int32(o.seq-hs.next) > 0 {
			break
		}
		hs.ooo = hs.ooo[1:]
		hs.oooLen -= len(o.data)
		hs.place(o.seq, o.t, o.data)
	}
}

// place appends the part of data beyond next, or keeps data for later when
// it starts past a hole.
func (hs *shalf) place(seq uint32, t time.Time, data []byte) {
	rel := int64(int32(seq - hs.next))
	end := rel + int64(len(data))
	if end <= 0 {
		return // bytes we already have
	}
	if rel > 0 {
		hs.ooo = append(hs.ooo, halfSeg{seq: seq, t: t, data: append([]byte(nil), data...)})
		hs.oooLen += len(data)
		return
	}
	d := data[-rel:]
	hs.marks = append(hs.marks, mark{off: hs.off + len(hs.buf), t: t})
	hs.buf = append(hs.buf, d...)
	hs.next += uint32(len(d))
}

func (hs *shalf) timeAt(off int) time.Time {
	i := sort.Search(len(hs.marks), func(i int) bool { return hs.marks[i].off > off })
	if i == 0 {
		if len(hs.marks) > 0 {
			return hs.marks[0].t
		}
		return time.Time{}
	}
	return hs.marks[i-1].t
}

// consume drops the first n bytes of buf (returned as units).
func (hs *shalf) consume(n int) {
	hs.buf = hs.buf[n:]
	hs.off += n
	// Keep the last mark at or before the new start.
	i := sort.Search(len(hs.marks), func(i int) bool { return hs.marks[i].off > hs.off })
	if i > 1 {
		hs.marks = append(hs.marks[:0], hs.marks[i-1:]...)
	}
	if len(hs.buf) == 0 {
		hs.buf = nil // let the array go
	}
}

// units returns the units now complete in hs.
func (st *Streamer) units(sc *sconn, hs *shalf) []Unit {
	if hs.stuck {
		return nil
	}
	if sc.kind == kindUnknown {
		sc.kind = st.decide(hs)
		if sc.kind == kindUnknown {
			return nil
		}
		// The other direction may have been waiting for the decision.
		other := sc.half[0]
		if other == hs {
			other = sc.half[1]
		}
		return append(st.split(sc, other), st.split(sc, hs)...)
	}
	return st.split(sc, hs)
}

// decide looks at the first unit of a direction, once complete: an srun I/O
// connection starts with an I/O init message that is not an RPC frame.
func (st *Streamer) decide(hs *shalf) int {
	if hs.off != 0 || len(hs.buf) < 4 {
		return kindUnknown
	}
	n := binary.BigEndian.Uint32(hs.buf)
	if st.cd.CheckLength(n) != nil {
		return kindRPC // splitRPC reports the bad frame
	}
	if uint64(len(hs.buf)) < 4+uint64(n) {
		return kindUnknown
	}
	if _, m, ok := parseIOInit(hs.buf); ok {
		if _, err := st.cd.DecodeFrame(hs.buf[:m]); err != nil {
			return kindIO
		}
	}
	return kindRPC
}

func (st *Streamer) split(sc *sconn, hs *shalf) []Unit {
	if hs.stuck || len(hs.buf) == 0 {
		return nil
	}
	var out []Unit
	if sc.kind == kindIO {
		if !hs.initSet && hs.off == 0 {
			if ini, n, ok := parseIOInit(hs.buf); ok {
				hs.initSet = true
				out = append(out, Unit{Kind: UnitIOInit, Conn: sc.c, Half: hs.h, Time: hs.timeAt(0), Raw: hs.buf[:n:n], IOInit: ini})
				hs.consume(n)
			} else if couldBeIOInit(hs.buf) {
				return nil // wait for the rest of it
			}
		}
		hs.initSet = true
		for len(hs.buf) >= 10 {
			n := binary.BigEndian.Uint32(hs.buf[6:])
			if uint64(len(hs.buf)-10) < uint64(n) {
				break
			}
			raw := hs.buf[: 10+int(n) : 10+int(n)]
			out = append(out, Unit{Kind: UnitIO, Conn: sc.c, Half: hs.h, Offset: hs.off, Time: hs.timeAt(hs.off), Raw: raw,
				IO: IOHeader{
					Type:    binary.BigEndian.Uint16(raw),
					GTaskID: binary.BigEndian.Uint16(raw[2:]),
					LTaskID: binary.BigEndian.Uint16(raw[4:]),
					Data:    raw[10:],
				}})
			hs.consume(len(raw))
		}
		return out
	}
	for len(hs.buf) >= 4 {
		u := Unit{Conn: sc.c, Half: hs.h, Offset: hs.off, Time: hs.timeAt(hs.off)}
		n := binary.BigEndian.Uint32(hs.buf)
		if err := st.cd.CheckLength(n); err != nil {
			u.Kind, u.Raw, u.Err = UnitBad, hs.buf, err
			hs.stuck = true // cannot resynchronize: ignore the rest
			hs.buf, hs.ooo, hs.oooLen = nil, nil, 0
			return append(out, u)
		}
		if uint64(len(hs.buf)-4) < uint64(n) {
			break
		}
		u.Raw = hs.buf[: 4+int(n) : 4+int(n)]
		f, err := st.cd.DecodeFrame(u.Raw)
		if err != nil {
			u.Kind, u.Err = UnitBad, err
		} else {
			u.Kind, u.Frame = UnitRPC, f
		}
		out = append(out, u)
		hs.consume(len(u.Raw))
	}
	return out
}

// couldBeIOInit: b is the start of what may still become an I/O init
// message (an io_hdr that starts the direction has no protocol version in
// bytes 4-5).
func couldBeIOInit(b []byte) bool {
	if len(b) < 6 {
		return true
	}
	if !codec.Version(binary.BigEndian.Uint16(b[4:])).Supported() {
		return false
	}
	n := binary.BigEndian.Uint32(b)
	return n >= 18 && uint64(len(b)) < 4+uint64(n)
}
