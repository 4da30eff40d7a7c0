package pcap

import (
	"encoding/binary"
	"io"
)

// Writer writes a classic pcap stream (microsecond timestamps, little
// endian), as tcpdump -w does; Reader reads it back.
type Writer struct {
	w    io.Writer
	snap uint32
	hdr  [16]byte
}

// NewWriter writes the file header for linkType and records of at most snap
// bytes.
func NewWriter(w io.Writer, linkType, snap uint32) (*Writer, error) {
	var gh [24]byte
	binary.LittleEndian.PutUint32(gh[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(gh[4:], 2)
	binary.LittleEndian.PutUint16(gh[6:], 4)
	binary.LittleEndian.PutUint32(gh[16:], snap)
	binary.LittleEndian.PutUint32(gh[20:], linkType)
	if _, err := w.Write(gh[:]); err != nil {
		return nil, err
	}
	return &Writer{w: w, snap: snap}, nil
}

// Write writes one record; data longer than the snap length is cut.
func (pw *Writer) Write(p Packet) error {
	data := p.Data
	if uint32(len(data)) > pw.snap {
		data = data[:pw.snap]
	}
	orig := p.OrigLen
	if orig < uint32(len(data)) {
		orig = uint32(len(data))
	}
	us := p.Time.UnixMicro()
	binary.LittleEndian.PutUint32(pw.hdr[0:], uint32(us/1e6))
	binary.LittleEndian.PutUint32(pw.hdr[4:], uint32(us%1e6))
	binary.LittleEndian.PutUint32(pw.hdr[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(pw.hdr[12:], orig)
	if _, err := pw.w.Write(pw.hdr[:]); err != nil {
		return err
	}
	_, err := pw.w.Write(data)
	return err
}
