// Package pcap reads classic pcap files (tcpdump -w) and reassembles the TCP
// connections in them, then splits each connection into Slurm units: RPC
// frames, and the srun I/O streams that follow an I/O init message. It is the
// reading half of slurmdump and what the capture tests use.
//
// For live capture (package live), Streamer reassembles incrementally with
// bounded memory, PortFilter builds the kernel's BPF port filter and Writer
// writes what was captured as a pcap file.
//
// Link types: Ethernet (1), BSD loopback (0, 108), raw IP (12, 14, 101) and
// Linux cooked capture v1 (113) and v2 (276); IPv4 and IPv6. pcapng is not
// read.
package pcap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Link types understood by IPPayload.
const (
	LinkNull     uint32 = 0
	LinkEthernet uint32 = 1
	LinkRaw12    uint32 = 12
	LinkRaw14    uint32 = 14
	LinkRaw      uint32 = 101
	LinkLoop     uint32 = 108
	LinkSLL      uint32 = 113
	LinkSLL2     uint32 = 276
)

// ErrFormat reports a file that is not a classic pcap file.
var ErrFormat = errors.New("pcap: not a classic pcap file")

// maxSnap bounds one record, whatever the file header claims.
const maxSnap = 1 << 18

// Packet is one captured record.
type Packet struct {
	Time     time.Time
	LinkType uint32
	Data     []byte // captured bytes (may be shorter than OrigLen)
	OrigLen  uint32
}

// Reader reads records from a classic pcap stream.
type Reader struct {
	r        io.Reader
	order    binary.ByteOrder
	nano     bool
	linkType uint32
	hdr      [16]byte
}

// NewReader reads the file header.
func NewReader(r io.Reader) (*Reader, error) {
	var gh [24]byte
	if _, err := io.ReadFull(r, gh[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	pr := &Reader{r: r}
	switch m := binary.LittleEndian.Uint32(gh[:4]); m {
	case 0xa1b2c3d4:
		pr.order = binary.LittleEndian
	case 0xa1b23c4d:
		pr.order, pr.nano = binary.LittleEndian, true
	case 0xd4c3b2a1:
		pr.order = binary.BigEndian
	case 0x4d3cb2a1:
		pr.order, pr.nano = binary.BigEndian, true
	default:
		return nil, fmt.Errorf("%w: magic %08x", ErrFormat, m)
	}
	pr.linkType = pr.order.Uint32(gh[20:24]) & 0x0fffffff // upper bits: FCS info
	return pr, nil
}

// LinkType returns the file's link type.
func (pr *Reader) LinkType() uint32 { return pr.linkType }

// Next returns the next record, or io.EOF after the last one. A record cut
// short by the end of the file is io.ErrUnexpectedEOF.
func (pr *Reader) Next() (Packet, error) {
	if _, err := io.ReadFull(pr.r, pr.hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return Packet{}, err
		}
		return Packet{}, err // io.EOF
	}
	sec := pr.order.Uint32(pr.hdr[0:4])
	frac := pr.order.Uint32(pr.hdr[4:8])
	incl := pr.order.Uint32(pr.hdr[8:12])
	orig := pr.order.Uint32(pr.hdr[12:16])
	if incl > maxSnap {
		return Packet{}, fmt.Errorf("%w: record of %d bytes", ErrFormat, incl)
	}
	data := make([]byte, incl)
	if _, err := io.ReadFull(pr.r, data); err != nil {
		return Packet{}, io.ErrUnexpectedEOF
	}
	ns := int64(frac) * 1000
	if pr.nano {
		ns = int64(frac)
	}
	return Packet{Time: time.Unix(int64(sec), ns).UTC(), LinkType: pr.linkType, Data: data, OrigLen: orig}, nil
}
