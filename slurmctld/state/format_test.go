package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		seq  uint64
		rec  Record
	}{
		{"empty data", 1, Record{Type: 1}},
		{"small", 42, Record{Type: 7, Version: 3, Data: []byte("job 1001")}},
		{"max tag", 1<<64 - 1, Record{Type: 0xffff, Version: 0xffff, Data: []byte{0}}},
		{"64k", 9, Record{Type: 2, Data: bytes.Repeat([]byte("x"), 1<<16)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := appendFrame(nil, tc.seq, tc.rec)
			if len(b) != frameHeader+len(tc.rec.Data) {
				t.Fatalf("frame is %d bytes, want %d", len(b), frameHeader+len(tc.rec.Data))
			}
			got, seq, n, err := decodeFrame(b, tc.seq, DefaultMaxRecordSize)
			if err != nil {
				t.Fatal(err)
			}
			if seq != tc.seq || n != len(b) || got.Type != tc.rec.Type || got.Version != tc.rec.Version || !bytes.Equal(got.Data, tc.rec.Data) {
				t.Fatalf("decoded %+v seq %d size %d", got, seq, n)
			}
		})
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	good := appendFrame(nil, 5, Record{Type: 1, Data: []byte("hello")})
	tests := []struct {
		name string
		b    []byte
		want uint64
		max  uint32
		err  error
	}{
		{"empty", nil, 5, 100, errShort},
		{"header cut", good[:frameHeader-1], 5, 100, errShort},
		{"data cut", good[:len(good)-1], 5, 100, errShort},
		{"over max", good, 5, 4, errLen},
		{"wrong seq", good, 6, 100, errSeq},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := decodeFrame(tc.b, tc.want, tc.max); !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
		})
	}
	// Every single-bit flip anywhere in the frame is caught (CRC, or a length
	// that no longer fits).
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(good)
			b[i] ^= 1 << bit
			if _, _, _, err := decodeFrame(b, 5, 100); err == nil {
				t.Fatalf("flip of byte %d bit %d not detected", i, bit)
			}
		}
	}
}

func TestHeader(t *testing.T) {
	good := appendHeader(nil, segMagic, 77)
	h, err := parseHeader(good, segMagic)
	if err != nil || h.seq != 77 || h.version != FormatVersion {
		t.Fatalf("parse: %+v %v", h, err)
	}
	mut := func(f func(b []byte)) []byte { b := bytes.Clone(good); f(b); return b }
	tests := []struct {
		name string
		b    []byte
		kind string
	}{
		{"short", good[:10], "header:"},
		{"other magic", good, "bad magic"},
		{"crc", mut(func(b []byte) { b[20] ^= 1 }), "crc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			magic := segMagic
			if tc.name == "other magic" {
				magic = snapMagic
			}
			if _, err := parseHeader(tc.b, magic); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.kind)) {
				t.Fatalf("err %v, want %q", err, tc.kind)
			}
		})
	}
	// A future format version is refused, not misread.
	b := appendHeader(nil, segMagic, 1)
	b[8] = FormatVersion + 1
	b = append(b[:24], 0, 0, 0, 0)
	b = appendHeaderCRC(b)
	if _, err := parseHeader(b, segMagic); err == nil {
		t.Fatal("future version accepted")
	}
}

func appendHeaderCRC(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	return b
}

func TestDecodeSegmentResync(t *testing.T) {
	b := appendHeader(nil, segMagic, 10)
	var offs []int
	for i := 0; i < 5; i++ {
		offs = append(offs, len(b))
		b = appendFrame(b, uint64(10+i), rec(i))
	}
	b[offs[1]+frameHeader] ^= 0xff // damage record 11's data
	_, recs, dmg, err := decodeSegment(b, DefaultMaxRecordSize, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || len(dmg) != 1 || dmg[0].off != offs[1] || dmg[0].resync != offs[2] {
		t.Fatalf("recs %d dmg %+v", len(recs), dmg)
	}
	_, recs, dmg, err = decodeSegment(b, DefaultMaxRecordSize, true)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, r := range recs {
		seqs = append(seqs, r.seq)
	}
	if want := []uint64{10, 12, 13, 14}; !equalSeqs(seqs, want) || len(dmg) != 1 {
		t.Fatalf("skip: seqs %v dmg %+v", seqs, dmg)
	}
}

func equalSeqs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
