package pcap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// pcapFile builds a classic pcap stream in memory.
type pcapFile struct {
	buf   bytes.Buffer
	link  uint32
	order binary.ByteOrder
	t     time.Time
}

func newPcap(link uint32, order binary.ByteOrder) *pcapFile {
	p := &pcapFile{link: link, order: order, t: time.Unix(1700000000, 0)}
	var gh [24]byte
	order.PutUint32(gh[0:], 0xa1b2c3d4)
	order.PutUint16(gh[4:], 2)
	order.PutUint16(gh[6:], 4)
	order.PutUint32(gh[16:], 65535)
	order.PutUint32(gh[20:], link)
	p.buf.Write(gh[:])
	return p
}

func (p *pcapFile) record(frame []byte) {
	p.t = p.t.Add(time.Millisecond)
	var rh [16]byte
	p.order.PutUint32(rh[0:], uint32(p.t.Unix()))
	p.order.PutUint32(rh[4:], uint32(p.t.Nanosecond()/1000))
	p.order.PutUint32(rh[8:], uint32(len(frame)))
	p.order.PutUint32(rh[12:], uint32(len(frame)))
	p.buf.Write(rh[:])
	p.buf.Write(frame)
}

func tcpPacket(link uint32, src, dst netip.AddrPort, seq uint32, flags uint8, payload []byte) []byte {
	tcp := make([]byte, 20, 20+len(payload))
	binary.BigEndian.PutUint16(tcp[0:], src.Port())
	binary.BigEndian.PutUint16(tcp[2:], dst.Port())
	binary.BigEndian.PutUint32(tcp[4:], seq)
	tcp[12] = 5 << 4
	tcp[13] = flags
	tcp = append(tcp, payload...)
	var ip []byte
	var et uint16
	if src.Addr().Is4() {
		et = 0x0800
		ip = make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(tcp)))
		ip[8], ip[9] = 64, 6
		s, d := src.Addr().As4(), dst.Addr().As4()
		copy(ip[12:], s[:])
		copy(ip[16:], d[:])
	} else {
		et = 0x86dd
		ip = make([]byte, 40)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(len(tcp)))
		ip[6], ip[7] = 6, 64
		s, d := src.Addr().As16(), dst.Addr().As16()
		copy(ip[8:], s[:])
		copy(ip[24:], d[:])
	}
	ip = append(ip, tcp...)
	switch link {
	case LinkEthernet:
		eth := make([]byte, 14)
		binary.BigEndian.PutUint16(eth[12:], et)
		return append(eth, ip...)
	case LinkSLL:
		sll := make([]byte, 16)
		binary.BigEndian.PutUint16(sll[14:], et)
		return append(sll, ip...)
	case LinkSLL2:
		sll := make([]byte, 20)
		binary.BigEndian.PutUint16(sll[0:], et)
		return append(sll, ip...)
	case LinkNull:
		fam := []byte{2, 0, 0, 0}
		if et == 0x86dd {
			fam = []byte{10, 0, 0, 0}
		}
		return append(fam, ip...)
	}
	return ip
}

func rpcFrame(t *testing.T, ty msgtype.Type, body []byte) []byte {
	t.Helper()
	f := codec.NewFrame(ty, codec.MungeAuth("MUNGE:AwQFAAtest:"), body)
	b, err := codec.AppendFrame(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	cli = netip.MustParseAddrPort("127.0.0.1:40000")
	srv = netip.MustParseAddrPort("127.0.0.1:6817")
)

func readAll(t *testing.T, b []byte) []*Conn {
	t.Helper()
	conns, err := ReadConns(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return conns
}

// A request split over 4 segments (length, header, auth, body as Slurm
// writes them), delivered out of order with a retransmission; a reply
// whose two frames share one segment.
func TestReassembly(t *testing.T) {
	for _, link := range []uint32{LinkEthernet, LinkSLL, LinkSLL2, LinkNull, LinkRaw} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			req := rpcFrame(t, msgtype.REQUEST_JOB_INFO, bytes.Repeat([]byte{7}, 14))
			rep1 := rpcFrame(t, msgtype.RESPONSE_SLURM_RC, []byte{0, 0, 0, 0})
			rep2 := rpcFrame(t, msgtype.RESPONSE_SLURM_RC, []byte{0, 0, 7, 0xe1})
			p := newPcap(link, order)
			const isnC, isnS = 1000, 0xfffffff0 // server ISN wraps
			p.record(tcpPacket(link, cli, srv, isnC, TCPSyn, nil))
			p.record(tcpPacket(link, srv, cli, isnS, TCPSyn|TCPAck, nil))
			cuts := []int{0, 4, 20, 20 + 4 + 4 + 18, len(req)}
			segs := [][2]int{{cuts[0], cuts[1]}, {cuts[2], cuts[3]}, {cuts[1], cuts[2]}, {cuts[1], cuts[2]}, {cuts[3], cuts[4]}}
			for _, s := range segs { // out of order, with a duplicate
				p.record(tcpPacket(link, cli, srv, isnC+1+uint32(s[0]), TCPAck, req[s[0]:s[1]]))
			}
			both := append(bytes.Clone(rep1), rep2...)
			p.record(tcpPacket(link, srv, cli, isnS+1, TCPAck, both[:3]))
			p.record(tcpPacket(link, srv, cli, isnS+1+3, TCPAck, both[3:]))
			p.record(tcpPacket(link, cli, srv, isnC+1+uint32(len(req)), TCPFin|TCPAck, nil))

			conns := readAll(t, p.buf.Bytes())
			if len(conns) != 1 {
				t.Fatalf("link %d: %d conns", link, len(conns))
			}
			c := conns[0]
			if c.Client != cli || c.Server != srv {
				t.Errorf("endpoints %v %v", c.Client, c.Server)
			}
			if !bytes.Equal(c.ToServer.Data(), req) || !bytes.Equal(c.ToClient.Data(), both) {
				t.Fatalf("link %d: reassembled bytes differ", link)
			}
			units := SlurmUnits(c, codec.Default)
			if len(units) != 3 || units[0].Kind != UnitRPC || units[1].Kind != UnitRPC || units[2].Kind != UnitRPC {
				t.Fatalf("units %+v", units)
			}
			if units[2].Frame.Header.MsgType != msgtype.RESPONSE_SLURM_RC || !bytes.Equal(units[2].Raw, rep2) {
				t.Errorf("second reply unit wrong")
			}
			if units[0].Time.IsZero() || c.ToServer.Gap() {
				t.Errorf("time %v gap %v", units[0].Time, c.ToServer.Gap())
			}
		}
	}
}

func TestNoSynAndHole(t *testing.T) {
	req := rpcFrame(t, msgtype.REQUEST_PING, nil)
	p := newPcap(LinkEthernet, binary.LittleEndian)
	// Capture started mid-connection, second segment arrives first.
	p.record(tcpPacket(LinkEthernet, cli, srv, 5000+10, TCPAck, req[10:]))
	p.record(tcpPacket(LinkEthernet, cli, srv, 5000, TCPAck, req[:10]))
	conns := readAll(t, p.buf.Bytes())
	if len(conns) != 1 || !bytes.Equal(conns[0].ToServer.Data(), req) {
		t.Fatalf("no-SYN reassembly failed")
	}

	// A lost segment: data stops at the hole, the unit is truncated.
	p = newPcap(LinkEthernet, binary.LittleEndian)
	p.record(tcpPacket(LinkEthernet, cli, srv, 99, TCPSyn, nil))
	p.record(tcpPacket(LinkEthernet, cli, srv, 100, TCPAck, req[:10]))
	p.record(tcpPacket(LinkEthernet, cli, srv, 100+20, TCPAck, req[20:]))
	c := readAll(t, p.buf.Bytes())[0]
	if !c.ToServer.Gap() || len(c.ToServer.Data()) != 10 {
		t.Fatalf("hole not detected")
	}
	if u := SlurmUnits(c, codec.Default); len(u) != 1 || u[0].Kind != UnitTruncated {
		t.Fatalf("units %+v", u)
	}
}

func TestPortReuseIPv6AndBadFrame(t *testing.T) {
	a := netip.MustParseAddrPort("[fd00::1]:40000")
	b := netip.MustParseAddrPort("[fd00::2]:6818")
	req := rpcFrame(t, msgtype.REQUEST_PING, nil)
	bad := bytes.Clone(req)
	binary.BigEndian.PutUint16(bad[4:], 0x2900) // a 24.05 header
	p := newPcap(LinkEthernet, binary.LittleEndian)
	p.record(tcpPacket(LinkEthernet, a, b, 10, TCPSyn, nil))
	p.record(tcpPacket(LinkEthernet, a, b, 11, TCPAck, req))
	p.record(tcpPacket(LinkEthernet, a, b, 11+uint32(len(req)), TCPFin|TCPAck, nil))
	p.record(tcpPacket(LinkEthernet, a, b, 900, TCPSyn, nil)) // same 4-tuple, new connection
	p.record(tcpPacket(LinkEthernet, a, b, 901, TCPAck, bad))
	conns := readAll(t, p.buf.Bytes())
	if len(conns) != 2 {
		t.Fatalf("%d conns, want 2", len(conns))
	}
	if u := SlurmUnits(conns[0], codec.Default); len(u) != 1 || u[0].Kind != UnitRPC {
		t.Fatalf("first conn %+v", u)
	}
	u := SlurmUnits(conns[1], codec.Default)
	if len(u) != 1 || u[0].Kind != UnitBad || !errors.Is(u[0].Err, codec.ErrVersion) {
		t.Fatalf("second conn %+v", u)
	}
}

func TestIOStream(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, 40)
	var init []byte
	init = binary.BigEndian.AppendUint32(init, uint32(18+len(key)))
	init = binary.BigEndian.AppendUint16(init, 0x2600)
	init = binary.BigEndian.AppendUint32(init, 1) // nodeid
	init = binary.BigEndian.AppendUint32(init, 1)
	init = binary.BigEndian.AppendUint32(init, 1)
	init = binary.BigEndian.AppendUint32(init, uint32(len(key)))
	init = append(init, key...)
	rec := func(ty, g uint16, data string) []byte {
		b := []byte{byte(ty >> 8), byte(ty), byte(g >> 8), byte(g), 0, 0}
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		return append(b, data...)
	}
	stream := append(bytes.Clone(init), rec(IOStdout, 1, "vm\n")...)
	stream = append(stream, rec(IOStdout, 1, "")...)
	stream = append(stream, rec(IOStderr, 1, "")...)
	stepd := netip.MustParseAddrPort("127.0.0.1:47600")
	srun := netip.MustParseAddrPort("127.0.0.1:60708")
	p := newPcap(LinkEthernet, binary.LittleEndian)
	p.record(tcpPacket(LinkEthernet, stepd, srun, 1, TCPSyn, nil))
	p.record(tcpPacket(LinkEthernet, stepd, srun, 2, TCPAck, stream[:7]))
	p.record(tcpPacket(LinkEthernet, stepd, srun, 2+7, TCPAck, stream[7:]))
	p.record(tcpPacket(LinkEthernet, srun, stepd, 50, TCPSyn|TCPAck, nil))
	p.record(tcpPacket(LinkEthernet, srun, stepd, 51, TCPAck, rec(IOStdin, 0, "input")))
	c := readAll(t, p.buf.Bytes())[0]
	units := SlurmUnits(c, codec.Default)
	kinds := []UnitKind{UnitIOInit, UnitIO, UnitIO, UnitIO, UnitIO}
	if len(units) != len(kinds) {
		t.Fatalf("%d units: %+v", len(units), units)
	}
	for i, k := range kinds {
		if units[i].Kind != k {
			t.Errorf("unit %d: %v want %v", i, units[i].Kind, k)
		}
	}
	if units[0].IOInit.NodeID != 1 || !bytes.Equal(units[0].IOInit.IOKey, key) {
		t.Errorf("init %+v", units[0].IOInit)
	}
	if string(units[1].IO.Data) != "vm\n" || units[4].IO.Type != IOStdin || string(units[4].IO.Data) != "input" {
		t.Errorf("io records %+v %+v", units[1].IO, units[4].IO)
	}
}

func TestReaderErrors(t *testing.T) {
	if _, err := NewReader(bytes.NewReader([]byte("not a pcap file at all.."))); !errors.Is(err, ErrFormat) {
		t.Errorf("bad magic: %v", err)
	}
	p := newPcap(LinkEthernet, binary.LittleEndian)
	p.record(tcpPacket(LinkEthernet, cli, srv, 1, TCPSyn, nil))
	b := p.buf.Bytes()
	r, err := NewReader(bytes.NewReader(b[:len(b)-3]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.ErrUnexpectedEOF {
		t.Errorf("cut record: %v", err)
	}
	// Arbitrary garbage never panics the segment decoder.
	for i := 0; i < len(b); i++ {
		DecodeTCP(Packet{LinkType: LinkEthernet, Data: b[24+16 : 24+16+i%(len(b)-40)]})
	}
}

// FuzzReadConns: arbitrary files never panic the reader, reassembler or
// Slurm splitter.
func FuzzReadConns(f *testing.F) {
	p := newPcap(LinkEthernet, binary.LittleEndian)
	p.record(tcpPacket(LinkEthernet, cli, srv, 1, TCPSyn, nil))
	f.Add(p.buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		conns, _ := ReadConns(bytes.NewReader(data))
		for _, c := range conns {
			SlurmUnits(c, codec.Default)
		}
	})
}
