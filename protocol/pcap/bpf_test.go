package pcap

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// runBPF interprets the classic BPF instructions PortFilter emits, with
// Linux's rules for loads past the end (the packet is dropped).
func runBPF(t *testing.T, prog []Instruction, pkt []byte) uint32 {
	t.Helper()
	var a, x uint32
	load := func(off uint32, size int) (uint32, bool) {
		if uint64(off)+uint64(size) > uint64(len(pkt)) {
			return 0, false
		}
		switch size {
		case 1:
			return uint32(pkt[off]), true
		case 2:
			return uint32(binary.BigEndian.Uint16(pkt[off:])), true
		}
		return binary.BigEndian.Uint32(pkt[off:]), true
	}
	size := func(op uint16) int {
		switch op & 0x18 {
		case bpfB:
			return 1
		case bpfH:
			return 2
		}
		return 4
	}
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		var ok = true
		switch cls := in.Op & 0x07; {
		case cls == bpfLD && in.Op&0xe0 == bpfABS:
			a, ok = load(in.K, size(in.Op))
		case cls == bpfLD && in.Op&0xe0 == bpfIND:
			a, ok = load(x+in.K, size(in.Op))
		case in.Op == bpfLDX|bpfB|bpfMSH:
			var b uint32
			b, ok = load(in.K, 1)
			x = (b & 0xf) * 4
		case in.Op == bpfLDX|bpfW|bpfIMM:
			x = in.K
		case in.Op == bpfALU|bpfAND|bpfK:
			a &= in.K
		case in.Op == bpfJMP|bpfJA:
			pc += int(in.K)
		case cls == bpfJMP:
			var cond bool
			switch in.Op & 0xf0 {
			case bpfJEQ:
				cond = a == in.K
			case bpfJGT:
				cond = a > in.K
			case bpfJGE:
				cond = a >= in.K
			case bpfJSET:
				cond = a&in.K != 0
			default:
				t.Fatalf("pc %d: jump %#x", pc, in.Op)
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case in.Op == bpfRET|bpfK:
			return in.K
		default:
			t.Fatalf("pc %d: opcode %#x", pc, in.Op)
		}
		if !ok {
			return 0
		}
	}
	t.Fatal("fell off the end of the program")
	return 0
}

func TestPortFilter(t *testing.T) {
	ports := []PortRange{{6817, 6819}, {40000, 40000}, {60001, 60010}, {6818, 6818}}
	c4 := netip.MustParseAddr("10.0.0.1")
	s4 := netip.MustParseAddr("10.0.0.2")
	c6 := netip.MustParseAddr("fd00::1")
	s6 := netip.MustParseAddr("fd00::2")
	ap := netip.AddrPortFrom
	udp := func(pkt []byte, ipOff int) []byte { pkt[ipOff+9] = 17; return pkt }
	fragment := func(pkt []byte, ipOff int) []byte { pkt[ipOff+7] = 8; return pkt } // offset 64 bytes
	options := func(pkt []byte, ipOff int) []byte {
		// An IPv4 header with 4 bytes of options: ports move by 4.
		out := append([]byte(nil), pkt[:ipOff+20]...)
		out = append(out, 1, 1, 1, 0)
		out = append(out, pkt[ipOff+20:]...)
		out[ipOff] = 0x46
		return out
	}
	cases := []struct {
		name     string
		src, dst netip.AddrPort
		mangle   func([]byte, int) []byte
		want     bool
	}{
		{"v4 dst in range", ap(c4, 51000), ap(s4, 6817), nil, true},
		{"v4 src in range", ap(s4, 6819), ap(c4, 51000), nil, true},
		{"v4 single port", ap(c4, 40000), ap(s4, 51000), nil, true},
		{"v4 range end", ap(c4, 50000), ap(s4, 60010), nil, true},
		{"v4 below range", ap(c4, 50000), ap(s4, 6816), nil, false},
		{"v4 above range", ap(c4, 50000), ap(s4, 6820), nil, false},
		{"v4 between", ap(c4, 60000), ap(s4, 60011), nil, false},
		{"v4 udp", ap(c4, 51000), ap(s4, 6817), udp, false},
		{"v4 fragment", ap(c4, 51000), ap(s4, 6817), fragment, false},
		{"v4 options", ap(c4, 51000), ap(s4, 6818), options, true},
		{"v4 options other port", ap(c4, 51000), ap(s4, 22), options, false},
		{"v6 dst", ap(c6, 51000), ap(s6, 6818), nil, true},
		{"v6 src", ap(s6, 60005), ap(c6, 51000), nil, true},
		{"v6 other", ap(c6, 51000), ap(s6, 22), nil, false},
	}
	for _, link := range []uint32{LinkEthernet, LinkRaw} {
		linkLen, ipOff := uint32(14), 14
		if link == LinkRaw {
			linkLen, ipOff = 0, 0
		}
		prog, err := PortFilter(linkLen, ports, 65535)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			pkt := tcpPacket(link, c.src, c.dst, 1, TCPAck, []byte("payload"))
			if c.mangle != nil {
				pkt = c.mangle(pkt, ipOff)
			}
			got := runBPF(t, prog, pkt) != 0
			if got != c.want {
				t.Errorf("link %d, %s: accepted %v, want %v", link, c.name, got, c.want)
			}
		}
		// Not IP, and short packets, are dropped.
		arp := make([]byte, 42)
		binary.BigEndian.PutUint16(arp[12:], 0x0806)
		for _, pkt := range [][]byte{arp, arp[:5], nil} {
			if runBPF(t, prog, pkt) != 0 {
				t.Errorf("link %d: accepted % x", link, pkt)
			}
		}
	}
	if n := runBPF(t, mustFilter(t, 14, []PortRange{{1, 1}}, 1234), tcpPacket(LinkEthernet, netip.MustParseAddrPort("1.1.1.1:1"), netip.MustParseAddrPort("1.1.1.2:2"), 1, 0, nil)); n != 1234 {
		t.Errorf("accept returns %d, want the snap length", n)
	}
}

func mustFilter(t *testing.T, linkLen uint32, ports []PortRange, snap uint32) []Instruction {
	t.Helper()
	p, err := PortFilter(linkLen, ports, snap)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPortFilterLimits(t *testing.T) {
	if _, err := PortFilter(14, nil, 1); err == nil {
		t.Error("no ports: no error")
	}
	if _, err := PortFilter(4, []PortRange{{1, 1}}, 1); err == nil {
		t.Error("link header of 4 bytes: no error")
	}
	var many []PortRange
	for p := uint16(1000); p < 1400; p += 2 {
		many = append(many, PortRange{p, p})
	}
	if _, err := PortFilter(14, many, 1); err == nil {
		t.Error("200 ports: no error (jumps cannot reach)")
	}
	if _, err := PortFilter(14, many[:100], 1); err != nil {
		t.Errorf("100 ports: %v", err)
	}
}

func TestMergePorts(t *testing.T) {
	got := MergePorts([]PortRange{{10, 12}, {1, 1}, {13, 13}, {20, 15}, {2, 2}, {5, 5}})
	want := []PortRange{{1, 2}, {5, 5}, {10, 13}, {15, 20}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}
