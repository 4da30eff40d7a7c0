package codec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/pack"
)

// Address families as Slurm packs them (Linux values).
const (
	AFUnspec uint16 = 0
	AFInet   uint16 = 2
	AFInet6  uint16 = 10
)

// Addr is a slurm_addr_t as packed by slurm_pack_addr.
//
// Wire trap: Slurm pushes the already network-ordered sin_addr and sin_port
// through pack32/pack16 again, so on the little-endian hosts Slurm runs on
// the IPv4 address bytes and every port appear byte-reversed on the wire:
// 127.0.0.1:47512 travels as 01 00 00 7f, 98 b9. Addr holds the real values;
// the codec does the reversal. The IPv6 address travels in order (a
// 16-byte packmem), its port reversed.
type Addr struct {
	// Family is AFUnspec (nothing else on the wire), AFInet or AFInet6. Any
	// other value is carried as a bare family, as Slurm does.
	Family uint16
	// IP in network order; AFInet uses the first 4 bytes.
	IP [16]byte
	// Port in host order (6817).
	Port uint16
}

// AddrIPv4 returns an AF_INET address.
func AddrIPv4(ip [4]byte, port uint16) Addr {
	a := Addr{Family: AFInet, Port: port}
	copy(a.IP[:], ip[:])
	return a
}

// AddrIPv6 returns an AF_INET6 address.
func AddrIPv6(ip [16]byte, port uint16) Addr {
	return Addr{Family: AFInet6, IP: ip, Port: port}
}

// IsZero reports whether a is the unspecified address Slurm sends when a
// header has no origin.
func (a Addr) IsZero() bool { return a == Addr{} }

// String formats a as host:port ("127.0.0.1:6817", "[::1]:6818"), "none"
// for AF_UNSPEC, "family(N)" for other families.
func (a Addr) String() string {
	switch a.Family {
	case AFUnspec:
		return "none"
	case AFInet:
		return fmt.Sprintf("%d.%d.%d.%d:%d", a.IP[0], a.IP[1], a.IP[2], a.IP[3], a.Port)
	case AFInet6:
		return "[" + formatIPv6(a.IP) + "]:" + strconv.Itoa(int(a.Port))
	}
	return fmt.Sprintf("family(%d)", a.Family)
}

// formatIPv6 writes the RFC 5952 text form (longest run of two or more zero
// groups compressed to "::"; no embedded IPv4 form).
func formatIPv6(ip [16]byte) string {
	var g [8]uint16
	for i := range g {
		g[i] = uint16(ip[2*i])<<8 | uint16(ip[2*i+1])
	}
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if g[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && g[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == best {
			b.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != best+bestLen {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(g[i]), 16))
	}
	return b.String()
}

func swap16(v uint16) uint16 { return v<<8 | v>>8 }

// appendAddr packs a as slurm_pack_addr does on a little-endian host.
func appendAddr(w *pack.Writer, a Addr) error {
	w.U16(a.Family)
	switch a.Family {
	case AFInet:
		for _, b := range a.IP[4:] {
			if b != 0 {
				return encErr("AF_INET address with more than 4 bytes")
			}
		}
		w.Raw([]byte{a.IP[3], a.IP[2], a.IP[1], a.IP[0]})
		w.U16(swap16(a.Port))
	case AFInet6:
		w.Mem(a.IP[:])
		w.U16(swap16(a.Port))
	default:
		if a.IP != ([16]byte{}) || a.Port != 0 {
			return encErr("address family %d carries no address on the wire", a.Family)
		}
	}
	return nil
}

// readAddr unpacks a slurm_addr. Errors are left in r.
func readAddr(r *pack.Reader) Addr {
	var a Addr
	a.Family = r.U16()
	switch a.Family {
	case AFInet:
		v := r.U32()
		a.IP[0], a.IP[1], a.IP[2], a.IP[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		a.Port = swap16(r.U16())
	case AFInet6:
		n := r.Count(1)
		if r.Err() == nil && n != 16 {
			r.Fail(fmt.Errorf("AF_INET6 address of %d bytes, want 16", n))
		}
		for i := 0; i < 16 && r.Err() == nil; i++ {
			a.IP[i] = r.U8()
		}
		a.Port = swap16(r.U16())
	}
	if r.Err() != nil {
		return Addr{}
	}
	return a
}
