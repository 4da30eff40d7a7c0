package pcap

import (
	"fmt"
	"slices"
)

// Instruction is one classic BPF instruction, laid out as Linux's struct
// sock_filter (and BSD's struct bpf_insn).
type Instruction struct {
	Op     uint16
	Jt, Jf uint8
	K      uint32
}

// Classic BPF opcode parts used by PortFilter.
const (
	bpfLD   = 0x00
	bpfLDX  = 0x01
	bpfALU  = 0x04
	bpfJMP  = 0x05
	bpfRET  = 0x06
	bpfW    = 0x00
	bpfH    = 0x08
	bpfB    = 0x10
	bpfIMM  = 0x00
	bpfABS  = 0x20
	bpfIND  = 0x40
	bpfMSH  = 0xa0
	bpfAND  = 0x50
	bpfJA   = 0x00
	bpfJEQ  = 0x10
	bpfJGT  = 0x20
	bpfJGE  = 0x30
	bpfJSET = 0x40
	bpfK    = 0x00
)

// PortRange is an inclusive range of TCP ports.
type PortRange struct{ First, Last uint16 }

func (r PortRange) String() string {
	if r.First == r.Last {
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// MergePorts sorts ranges and merges those that overlap or touch.
func MergePorts(rs []PortRange) []PortRange {
	rs = slices.Clone(rs)
	for i, r := range rs {
		if r.First > r.Last {
			rs[i] = PortRange{r.Last, r.First}
		}
	}
	slices.SortFunc(rs, func(a, b PortRange) int { return int(a.First) - int(b.First) })
	var out []PortRange
	for _, r := range rs {
		if n := len(out); n > 0 && uint32(r.First) <= uint32(out[n-1].Last)+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// PortFilter returns a classic BPF program that accepts (up to snap bytes
// of) TCP segments over IPv4 or IPv6 with either port in ports, and drops
// everything else, as tcpdump's "tcp port A or tcp portrange B-C" would.
// linkLen is the length of the link header before the IP header: 14 for
// Ethernet framing (the EtherType is checked), 0 when the socket delivers
// network packets (the IP version is checked). IPv4 fragments other than
// the first and IPv6 packets with extension headers are dropped, as
// DecodeTCP cannot use them.
func PortFilter(linkLen uint32, ports []PortRange, snap uint32) ([]Instruction, error) {
	ports = MergePorts(ports)
	if len(ports) == 0 {
		return nil, fmt.Errorf("bpf: no ports")
	}
	L := linkLen
	// Jumps are assembled with symbolic targets, resolved below.
	type ins struct {
		Instruction
		jt, jf string // "" = next instruction
		label  string
	}
	var p []ins
	add := func(op uint16, k uint32, jt, jf string) {
		p = append(p, ins{Instruction: Instruction{Op: op, K: k}, jt: jt, jf: jf})
	}
	label := func(name string) { p = append(p, ins{label: name}) }
	switch L {
	case 0:
		add(bpfLD|bpfB|bpfABS, 0, "", "")
		add(bpfALU|bpfAND|bpfK, 0xf0, "", "")
		add(bpfJMP|bpfJEQ|bpfK, 0x40, "ipv4", "")
		add(bpfJMP|bpfJEQ|bpfK, 0x60, "ipv6", "drop")
	case 14:
		add(bpfLD|bpfH|bpfABS, 12, "", "")
		add(bpfJMP|bpfJEQ|bpfK, 0x0800, "ipv4", "")
		add(bpfJMP|bpfJEQ|bpfK, 0x86dd, "ipv6", "drop")
	default:
		return nil, fmt.Errorf("bpf: link header of %d bytes", L)
	}
	label("ipv4")
	add(bpfLD|bpfB|bpfABS, L+9, "", "")
	add(bpfJMP|bpfJEQ|bpfK, 6, "", "drop")
	add(bpfLD|bpfH|bpfABS, L+6, "", "")
	add(bpfJMP|bpfJSET|bpfK, 0x1fff, "drop", "")
	add(bpfLDX|bpfB|bpfMSH, L, "", "") // X = IP header length
	add(bpfJMP|bpfJA, 0, "ports", "")
	label("ipv6")
	add(bpfLD|bpfB|bpfABS, L+6, "", "")
	add(bpfJMP|bpfJEQ|bpfK, 6, "", "drop")
	add(bpfLDX|bpfW|bpfIMM, 40, "", "")
	label("ports")
	for _, off := range []uint32{0, 2} { // source, then destination port
		add(bpfLD|bpfH|bpfIND, L+off, "", "")
		for _, r := range ports {
			if r.First == r.Last {
				add(bpfJMP|bpfJEQ|bpfK, uint32(r.First), "accept", "")
				continue
			}
			add(bpfJMP|bpfJGE|bpfK, uint32(r.First), "", "+1") // below: skip the next test
			add(bpfJMP|bpfJGT|bpfK, uint32(r.Last), "", "accept")
		}
	}
	label("drop")
	add(bpfRET|bpfK, 0, "", "")
	label("accept")
	add(bpfRET|bpfK, snap, "", "")

	// Resolve labels to instruction indexes.
	at := map[string]int{}
	var code []ins
	for _, in := range p {
		if in.label != "" {
			at[in.label] = len(code)
			continue
		}
		code = append(code, in)
	}
	out := make([]Instruction, len(code))
	for i, in := range code {
		out[i] = in.Instruction
		rel := func(target string) (int, error) {
			switch target {
			case "":
				return 0, nil
			case "+1":
				return 1, nil
			}
			d := at[target] - i - 1
			if d < 0 || (in.Op != bpfJMP|bpfJA && d > 255) {
				return 0, fmt.Errorf("bpf: too many port ranges (%d) for one program", len(ports))
			}
			return d, nil
		}
		jt, err := rel(in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := rel(in.jf)
		if err != nil {
			return nil, err
		}
		if in.Op == bpfJMP|bpfJA {
			out[i].K = uint32(jt)
			continue
		}
		out[i].Jt, out[i].Jf = uint8(jt), uint8(jf)
	}
	return out, nil
}
