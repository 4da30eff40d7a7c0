package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the on-disk format this package writes. Readers must keep
// accepting every released version (testdata holds fixtures of each).
// Version 2 added the snapshot's blob section; segments are unchanged.
const FormatVersion = 2

const (
	segMagic    = "GOSLJRNL"
	snapMagic   = "GOSLSNAP"
	snapEnd     = "SNAPEND\x00"
	headerSize  = 28 // segment and snapshot headers share the layout
	frameHeader = 20 // length, crc, seq, type, version
	snapTrailer = 20 // length, crc, end magic

	// DefaultMaxRecordSize bounds one record's data unless Options says otherwise.
	DefaultMaxRecordSize = 64 << 20
	// hardMaxRecordSize is the ceiling for Options.MaxRecordSize.
	hardMaxRecordSize = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one journal entry. The store never interprets Type, Version or Data.
type Record struct {
	// Type is the caller's tag for what Data holds. 0 is reserved for the store.
	Type uint16
	// Version is the caller's encoding version of Data, so old journals stay
	// readable after the caller changes its encoding.
	Version uint16
	Data    []byte
}

// fileHeader is the decoded 28-byte segment or snapshot header.
type fileHeader struct {
	version uint32
	flags   uint32
	seq     uint64 // first seq (segment) or covered seq (snapshot)
}

func appendHeader(b []byte, magic string, seq uint64) []byte {
	start := len(b)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, FormatVersion)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, seq)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

func parseHeader(b []byte, magic string) (fileHeader, error) {
	if len(b) < headerSize {
		return fileHeader{}, fmt.Errorf("header: %d bytes, want %d", len(b), headerSize)
	}
	if string(b[:8]) != magic {
		return fileHeader{}, fmt.Errorf("header: bad magic %q", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[24:28]), crc32.Checksum(b[:24], castagnoli); got != want {
		return fileHeader{}, fmt.Errorf("header: crc %08x, want %08x", got, want)
	}
	h := fileHeader{
		version: binary.LittleEndian.Uint32(b[8:12]),
		flags:   binary.LittleEndian.Uint32(b[12:16]),
		seq:     binary.LittleEndian.Uint64(b[16:24]),
	}
	if h.version == 0 || h.version > FormatVersion {
		return h, fmt.Errorf("header: format version %d, this build reads 1..%d", h.version, FormatVersion)
	}
	if h.flags != 0 {
		return h, fmt.Errorf("header: unknown flags %#x", h.flags)
	}
	return h, nil
}

// appendFrame encodes one record as seq.
func appendFrame(b []byte, seq uint64, r Record) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Data)))
	b = append(b, 0, 0, 0, 0) // crc, filled below
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint16(b, r.Type)
	b = binary.LittleEndian.AppendUint16(b, r.Version)
	b = append(b, r.Data...)
	binary.LittleEndian.PutUint32(b[start+4:], frameCRC(b[start:]))
	return b
}

// frameCRC is the checksum of a whole frame, skipping its own crc field.
func frameCRC(frame []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[:4])
	return crc32.Update(c, castagnoli, frame[8:])
}

var (
	errShort = errors.New("frame extends past end of file")
	errCRC   = errors.New("frame crc mismatch")
	errLen   = errors.New("frame length over limit")
	errSeq   = errors.New("frame out of sequence")
)

// decodeFrame reads the frame at b[0:] expecting sequence want. It bounds the
// length against max and the bytes present before looking at the data, and
// returns the frame size. Data aliases b.
func decodeFrame(b []byte, want uint64, max uint32) (Record, uint64, int, error) {
	if len(b) < frameHeader {
		return Record{}, 0, 0, errShort
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n > max {
		return Record{}, 0, 0, errLen
	}
	size := frameHeader + int(n)
	if len(b) < size {
		return Record{}, 0, 0, errShort
	}
	if binary.LittleEndian.Uint32(b[4:8]) != frameCRC(b[:size]) {
		return Record{}, 0, 0, errCRC
	}
	seq := binary.LittleEndian.Uint64(b[8:16])
	if seq != want {
		return Record{}, seq, 0, fmt.Errorf("%w: seq %d, want %d", errSeq, seq, want)
	}
	r := Record{
		Type:    binary.LittleEndian.Uint16(b[16:18]),
		Version: binary.LittleEndian.Uint16(b[18:20]),
		Data:    b[frameHeader:size:size],
	}
	return r, seq, size, nil
}

// segRecord is one decoded record and where it sits in its segment.
type segRecord struct {
	off int
	seq uint64
	rec Record
}

// segDamage describes the first bad frame of a segment.
type segDamage struct {
	off    int   // offset of the first bad byte
	err    error // why it is bad
	resync int   // offset of the next valid frame after it, or -1
}

// decodeSegment decodes a whole segment file image. It returns the header, the
// records up to the first bad frame and, if there is one, where it is and
// whether a valid frame follows (a valid frame after damage means the damage is
// not a torn tail). With skip, decoding continues after each resync point, so
// records after damaged regions are returned too.
func decodeSegment(b []byte, max uint32, skip bool) (fileHeader, []segRecord, []segDamage, error) {
	h, err := parseHeader(b, segMagic)
	if err != nil {
		return h, nil, nil, err
	}
	var recs []segRecord
	var dmg []segDamage
	off, want := headerSize, h.seq
	for off < len(b) {
		r, _, size, err := decodeFrame(b[off:], want, max)
		if err == nil {
			recs = append(recs, segRecord{off: off, seq: want, rec: r})
			off += size
			want++
			continue
		}
		d := segDamage{off: off, err: err, resync: -1}
		next, seq := resync(b, off, want, max)
		d.resync = next
		dmg = append(dmg, d)
		if next < 0 || !skip {
			break
		}
		off, want = next, seq
	}
	return h, recs, dmg, nil
}

// resync finds the first offset after the damaged frame at bad holding a valid
// frame whose seq is plausible: at least want, and no further from it than the
// number of frames (each at least frameHeader bytes) that fit between bad and
// the candidate. The seq filter keeps the scan cheap and random matches rare. It
// returns -1 if there is none.
func resync(b []byte, bad int, want uint64, max uint32) (int, uint64) {
	for off := bad + 1; off+frameHeader <= len(b); off++ {
		seq := binary.LittleEndian.Uint64(b[off+8 : off+16])
		if seq < want || seq-want > uint64(off-bad)/frameHeader {
			continue
		}
		if _, _, _, err := decodeFrame(b[off:], seq, max); err == nil {
			return off, seq
		}
	}
	return -1, 0
}
