//go:build !linux

package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/protocol/pcap"
)

// ErrPermission is wrapped by Open when the caller may not capture.
var ErrPermission = errors.New("needs CAP_NET_RAW")

// Handle is an open capture; live capture needs Linux's AF_PACKET.
type Handle struct{}

// Open fails: live capture is only implemented with Linux's AF_PACKET.
func Open(iface string, snap int) (*Handle, error) {
	return nil, fmt.Errorf("cannot capture on %s: live capture needs Linux (AF_PACKET)", iface)
}

func (h *Handle) LinkType() uint32                   { return 0 }
func (h *Handle) LinkHeaderLen() uint32              { return 0 }
func (h *Handle) SetFilter([]pcap.Instruction) error { return errors.New("unsupported") }
func (h *Handle) Start() error                       { return errors.New("unsupported") }
func (h *Handle) Read(time.Duration) (pcap.Packet, bool, error) {
	return pcap.Packet{}, false, errors.New("unsupported")
}
func (h *Handle) Stats() (uint64, uint64) { return 0, 0 }
func (h *Handle) Close() error            { return nil }
