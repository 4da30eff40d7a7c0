// Package live captures packets from a network interface with a Linux
// AF_PACKET socket (no libpcap, no cgo), with a classic BPF program attached
// so the kernel drops what is not wanted. It needs CAP_NET_RAW.
//
// An Ethernet or loopback interface is read with its link header (link type
// pcap.LinkEthernet); any other interface, and "any", deliver network
// packets, to which Read prepends a Linux cooked header (pcap.LinkSLL), as
// tcpdump does. On loopback every packet passes the packet taps twice, once
// going out and once coming in: the outgoing copy is dropped, as libpcap
// does.
package live

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/pcap"
)

// ARPHRD_* hardware types (linux/if_arp.h).
const (
	arphrdEther    = 1
	arphrdLoopback = 772
)

// Handle is an open capture.
type Handle struct {
	fd      int
	iface   string
	ifindex int
	link    uint32
	linkLen uint32 // bytes before the IP header in what the socket delivers
	dgram   bool
	buf     []byte

	packets, drops uint64
}

// ErrPermission is wrapped by Open when the caller may not capture.
var ErrPermission = errors.New("needs CAP_NET_RAW")

// Open opens a capture on iface ("any" for all interfaces) that receives
// nothing until Start. Records are cut to snap bytes.
func Open(iface string, snap int) (*Handle, error) {
	h := &Handle{iface: iface, buf: make([]byte, snap), fd: -1}
	hatype := -1
	if iface != "any" {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return nil, fmt.Errorf("cannot capture on %s: no such device", iface)
		}
		h.ifindex = ifi.Index
		if b, err := os.ReadFile("/sys/class/net/" + iface + "/type"); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				hatype = n
			}
		}
	}
	typ := unix.SOCK_DGRAM
	h.link, h.linkLen, h.dgram = pcap.LinkSLL, 0, true
	if hatype == arphrdEther || hatype == arphrdLoopback {
		typ = unix.SOCK_RAW
		h.link, h.linkLen, h.dgram = pcap.LinkEthernet, 14, false
	}
	// Protocol 0: no packet is queued before the filter is attached and
	// Start binds the socket.
	fd, err := unix.Socket(unix.AF_PACKET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("cannot capture on %s: %v (%w)", iface, err, ErrPermission)
		}
		return nil, fmt.Errorf("cannot capture on %s: %w", iface, err)
	}
	h.fd = fd
	// A larger queue rides out bursts (a 10,000-job reply) while the
	// decoder is busy; the kernel caps it at rmem_max unless we may force.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	}
	return h, nil
}

// LinkType is the pcap link type of the packets Read returns.
func (h *Handle) LinkType() uint32 { return h.link }

// LinkHeaderLen is the length of the link header a BPF program sees before
// the IP header (pcap.PortFilter's linkLen).
func (h *Handle) LinkHeaderLen() uint32 { return h.linkLen }

// SetFilter attaches (or replaces) the socket's BPF program.
func (h *Handle) SetFilter(prog []pcap.Instruction) error {
	if len(prog) == 0 {
		return errors.New("empty BPF program")
	}
	f := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		f[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.SetsockoptSockFprog(h.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp); err != nil {
		return fmt.Errorf("cannot attach BPF filter on %s: %w", h.iface, err)
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Start binds the socket to the interface: packets flow from here on.
func (h *Handle) Start() error {
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: h.ifindex}
	if err := unix.Bind(h.fd, sa); err != nil {
		return fmt.Errorf("cannot capture on %s: %w", h.iface, err)
	}
	return nil
}

// Read waits up to timeout for a packet. ok is false when none came. The
// packet's Data is only valid until the next Read.
func (h *Handle) Read(timeout time.Duration) (p pcap.Packet, ok bool, err error) {
	for {
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(timeout/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			return pcap.Packet{}, false, nil
		}
		if err != nil {
			return pcap.Packet{}, false, fmt.Errorf("poll: %w", err)
		}
		if n == 0 {
			return pcap.Packet{}, false, nil
		}
		off := 0
		if h.dgram {
			off = 16 // room for the cooked header
		}
		n, from, err := unix.Recvfrom(h.fd, h.buf[off:], unix.MSG_TRUNC|unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return pcap.Packet{}, false, fmt.Errorf("recvfrom: %w", err)
		}
		now := time.Now().Truncate(time.Microsecond) // what a pcap record holds
		ll, _ := from.(*unix.SockaddrLinklayer)
		if ll != nil && ll.Pkttype == unix.PACKET_OUTGOING && ll.Hatype == arphrdLoopback {
			continue // the incoming copy follows
		}
		got := min(n, len(h.buf)-off)
		data := h.buf[:off+got]
		if h.dgram {
			sll(data[:16], ll)
		}
		return pcap.Packet{Time: now, LinkType: h.link, Data: data, OrigLen: uint32(off + n)}, true, nil
	}
}

// sll writes a Linux cooked (v1) header from the packet's address.
func sll(b []byte, ll *unix.SockaddrLinklayer) {
	clear(b)
	if ll == nil {
		return
	}
	b[1] = ll.Pkttype
	b[2], b[3] = byte(ll.Hatype>>8), byte(ll.Hatype)
	hl := min(int(ll.Halen), 8)
	b[5] = byte(hl)
	copy(b[6:6+hl], ll.Addr[:hl])
	// sll_protocol is in network order in the socket address.
	proto := htons(ll.Protocol)
	b[14], b[15] = byte(proto>>8), byte(proto)
}

// Stats returns the packets the socket received and those the kernel
// dropped for want of room, since Open.
func (h *Handle) Stats() (received, dropped uint64) {
	st, err := unix.GetsockoptTpacketStats(h.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err == nil {
		// The kernel counts drops in tp_packets too, and resets both.
		h.packets += uint64(st.Packets)
		h.drops += uint64(st.Drops)
	}
	return h.packets - h.drops, h.drops
}

// Close closes the socket.
func (h *Handle) Close() error {
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	return err
}
