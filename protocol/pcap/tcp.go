package pcap

import (
	"encoding/binary"
	"net/netip"
	"sort"
	"time"
)

// TCP flag bits.
const (
	TCPFin = 0x01
	TCPSyn = 0x02
	TCPRst = 0x04
	TCPAck = 0x10
)

// Segment is one TCP segment taken out of a packet.
type Segment struct {
	Time     time.Time
	Src, Dst netip.AddrPort
	Seq      uint32
	Flags    uint8
	Payload  []byte
}

// DecodeTCP extracts the TCP segment of a captured packet. ok is false for
// anything that is not TCP over IPv4/IPv6 on a known link type, and for
// truncated or malformed headers.
func DecodeTCP(p Packet) (seg Segment, ok bool) {
	ip, ethType, ok := linkPayload(p.LinkType, p.Data)
	if !ok {
		return Segment{}, false
	}
	var src, dst netip.Addr
	var tcp []byte
	switch ethType {
	case 0x0800:
		if len(ip) < 20 || ip[0]>>4 != 4 {
			return Segment{}, false
		}
		ihl := int(ip[0]&0x0f) * 4
		tot := int(binary.BigEndian.Uint16(ip[2:4]))
		if ihl < 20 || tot < ihl || tot > len(ip) || ip[9] != 6 {
			return Segment{}, false
		}
		if off := binary.BigEndian.Uint16(ip[6:8]); off&0x3fff != 0 {
			return Segment{}, false // IP fragments are not reassembled
		}
		src = netip.AddrFrom4([4]byte(ip[12:16]))
		dst = netip.AddrFrom4([4]byte(ip[16:20]))
		tcp = ip[ihl:tot]
	case 0x86dd:
		if len(ip) < 40 || ip[0]>>4 != 6 || ip[6] != 6 { // no extension headers
			return Segment{}, false
		}
		plen := int(binary.BigEndian.Uint16(ip[4:6]))
		if 40+plen > len(ip) {
			return Segment{}, false
		}
		src = netip.AddrFrom16([16]byte(ip[8:24]))
		dst = netip.AddrFrom16([16]byte(ip[24:40]))
		tcp = ip[40 : 40+plen]
	default:
		return Segment{}, false
	}
	if len(tcp) < 20 {
		return Segment{}, false
	}
	doff := int(tcp[12]>>4) * 4
	if doff < 20 || doff > len(tcp) {
		return Segment{}, false
	}
	return Segment{
		Time:    p.Time,
		Src:     netip.AddrPortFrom(src, binary.BigEndian.Uint16(tcp[0:2])),
		Dst:     netip.AddrPortFrom(dst, binary.BigEndian.Uint16(tcp[2:4])),
		Seq:     binary.BigEndian.Uint32(tcp[4:8]),
		Flags:   tcp[13],
		Payload: tcp[doff:],
	}, true
}

// linkPayload strips the link-layer header and returns the network packet
// and its EtherType.
func linkPayload(link uint32, f []byte) ([]byte, uint16, bool) {
	switch link {
	case LinkEthernet:
		if len(f) < 14 {
			return nil, 0, false
		}
		et, off := binary.BigEndian.Uint16(f[12:14]), 14
		for (et == 0x8100 || et == 0x88a8) && len(f) >= off+4 { // VLAN tags
			et, off = binary.BigEndian.Uint16(f[off+2:off+4]), off+4
		}
		return f[off:], et, true
	case LinkSLL:
		if len(f) < 16 {
			return nil, 0, false
		}
		return f[16:], binary.BigEndian.Uint16(f[14:16]), true
	case LinkSLL2:
		if len(f) < 20 {
			return nil, 0, false
		}
		return f[20:], binary.BigEndian.Uint16(f[0:2]), true
	case LinkNull, LinkLoop:
		if len(f) < 4 {
			return nil, 0, false
		}
		fam := binary.LittleEndian.Uint32(f[:4])
		if fam > 0xffff {
			fam = binary.BigEndian.Uint32(f[:4])
		}
		switch fam {
		case 2:
			return f[4:], 0x0800, true
		case 10, 24, 28, 30:
			return f[4:], 0x86dd, true
		}
		return nil, 0, false
	case LinkRaw, LinkRaw12, LinkRaw14:
		if len(f) < 1 {
			return nil, 0, false
		}
		switch f[0] >> 4 {
		case 4:
			return f, 0x0800, true
		case 6:
			return f, 0x86dd, true
		}
	}
	return nil, 0, false
}

// Half is one direction of a TCP connection.
type Half struct {
	Src, Dst netip.AddrPort
	synSeen  bool
	isn      uint32 // sequence number of the first data byte when synSeen
	first    uint32 // sequence number of the first segment seen otherwise
	haveAny  bool
	segs     []halfSeg
	FinSeen  bool

	built bool
	data  []byte
	marks []mark
	gap   bool
}

type halfSeg struct {
	seq  uint32
	t    time.Time
	data []byte
	n    int // arrival order
}

type mark struct {
	off int
	t   time.Time
}

func (h *Half) add(s Segment, n int) {
	if s.Flags&TCPSyn != 0 {
		h.synSeen, h.isn = true, s.Seq+1
	}
	if s.Flags&TCPFin != 0 {
		h.FinSeen = true
	}
	if !h.haveAny {
		h.haveAny, h.first = true, s.Seq
	}
	if len(s.Payload) > 0 {
		h.segs = append(h.segs, halfSeg{seq: s.Seq, t: s.Time, data: s.Payload, n: n})
		h.built = false
	}
}

func (h *Half) build() {
	if h.built {
		return
	}
	h.built, h.data, h.marks, h.gap = true, nil, nil, false
	if len(h.segs) == 0 {
		return
	}
	base := h.isn
	if !h.synSeen {
		// No SYN captured: start at the lowest sequence number, comparing in
		// serial-number arithmetic relative to the first segment seen.
		base = h.first
		for _, s := range h.segs {
			if int32(s.seq-base) < 0 {
				base = s.seq
			}
		}
	}
	type placed struct {
		off int64
		s   halfSeg
	}
	ps := make([]placed, 0, len(h.segs))
	for _, s := range h.segs {
		ps = append(ps, placed{off: int64(int32(s.seq - base)), s: s})
	}
	// By offset; at equal offsets the first arrival wins (retransmissions
	// of the same bytes are dropped below).
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].off != ps[j].off {
			return ps[i].off < ps[j].off
		}
		return ps[i].s.n < ps[j].s.n
	})
	var pos int64
	for _, p := range ps {
		end := p.off + int64(len(p.s.data))
		if end <= pos {
			continue // retransmission of bytes we have
		}
		if p.off > pos {
			h.gap = true // lost bytes: stop at the hole
			break
		}
		d := p.s.data[pos-p.off:]
		h.marks = append(h.marks, mark{off: int(pos), t: p.s.t})
		h.data = append(h.data, d...)
		pos += int64(len(d))
	}
}

// Data returns the contiguous bytes of this direction, from the first byte to
// the first hole.
func (h *Half) Data() []byte { h.build(); return h.data }

// Gap reports whether bytes are missing (the capture lost a segment), so Data
// stops early.
func (h *Half) Gap() bool { h.build(); return h.gap }

// TimeAt returns the capture time of the segment that carried byte off.
func (h *Half) TimeAt(off int) time.Time {
	h.build()
	i := sort.Search(len(h.marks), func(i int) bool { return h.marks[i].off > off })
	if i == 0 {
		if len(h.marks) > 0 {
			return h.marks[0].t
		}
		return time.Time{}
	}
	return h.marks[i-1].t
}

// Conn is one TCP connection: Client is the side that sent the SYN (or the
// first segment seen, when the SYN was not captured).
type Conn struct {
	ID       int // 1-based, in order of first appearance
	Client   netip.AddrPort
	Server   netip.AddrPort
	Start    time.Time
	ToServer *Half
	ToClient *Half
}

// Assembler groups segments into connections.
type Assembler struct {
	conns  []*Conn
	active map[[2]netip.AddrPort]*Conn
	n      int
}

// NewAssembler returns an empty assembler.
func NewAssembler() *Assembler {
	return &Assembler{active: map[[2]netip.AddrPort]*Conn{}}
}

func key(a, b netip.AddrPort) [2]netip.AddrPort {
	if a.Addr().Less(b.Addr()) || (a.Addr() == b.Addr() && a.Port() < b.Port()) {
		return [2]netip.AddrPort{a, b}
	}
	return [2]netip.AddrPort{b, a}
}

// Add feeds one segment.
func (as *Assembler) Add(s Segment) {
	as.n++
	k := key(s.Src, s.Dst)
	c := as.active[k]
	isSyn := s.Flags&TCPSyn != 0 && s.Flags&TCPAck == 0
	if c != nil && isSyn {
		// A new SYN on a known 4-tuple is a new connection, unless it is a
		// retransmission of the SYN that opened this one.
		if !(s.Src == c.Client && c.ToServer.synSeen && c.ToServer.isn == s.Seq+1) {
			c = nil
		}
	}
	if c == nil {
		c = &Conn{ID: len(as.conns) + 1, Client: s.Src, Server: s.Dst, Start: s.Time}
		c.ToServer = &Half{Src: s.Src, Dst: s.Dst}
		c.ToClient = &Half{Src: s.Dst, Dst: s.Src}
		as.conns = append(as.conns, c)
		as.active[k] = c
	}
	if s.Src == c.Client {
		c.ToServer.add(s, as.n)
	} else {
		c.ToClient.add(s, as.n)
	}
}

// Conns returns the connections in order of first appearance.
func (as *Assembler) Conns() []*Conn { return as.conns }
