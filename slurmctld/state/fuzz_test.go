package state

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeSegment feeds arbitrary bytes to the segment decoder: it must not
// panic or over-allocate, and what it accepts must be exactly what the encoder
// writes at the offsets it reports, with consecutive seqs.
func FuzzDecodeSegment(f *testing.F) {
	seg := appendHeader(nil, segMagic, 1)
	for i := 0; i < 3; i++ {
		seg = appendFrame(seg, uint64(i+1), rec(i))
	}
	f.Add(seg, false)
	f.Add(seg[:len(seg)-5], true)
	bad := bytes.Clone(seg)
	bad[headerSize+frameHeader+1] ^= 1
	f.Add(bad, true)
	if b, err := os.ReadFile(filepath.Join("testdata", "v1", segmentName(1))); err == nil {
		f.Add(b, false)
	}
	huge := bytes.Clone(seg)
	binary.LittleEndian.PutUint32(huge[headerSize:], 0xfffffff0)
	f.Add(huge, false)
	f.Fuzz(func(t *testing.T, b []byte, skip bool) {
		h, recs, dmg, err := decodeSegment(b, 1<<16, skip)
		if err != nil {
			if recs != nil || dmg != nil {
				t.Fatal("records returned with a bad header")
			}
			return
		}
		prev := uint64(0)
		for i, r := range recs {
			if i == 0 && !skip && r.seq != h.seq {
				t.Fatalf("first seq %d, header says %d", r.seq, h.seq)
			}
			if i > 0 && r.seq <= prev {
				t.Fatalf("seq %d after %d", r.seq, prev)
			}
			prev = r.seq
			enc := appendFrame(nil, r.seq, r.rec)
			if r.off+len(enc) > len(b) || !bytes.Equal(b[r.off:r.off+len(enc)], enc) {
				t.Fatalf("record at %d does not re-encode to the input", r.off)
			}
		}
		if !skip && len(dmg) > 1 {
			t.Fatalf("%d damage reports without skip", len(dmg))
		}
	})
}

// FuzzCheckSnapshot: arbitrary snapshot files are checked without panics, and
// an accepted one has a payload and blobs within the file.
func FuzzCheckSnapshot(f *testing.F) {
	var buf bytes.Buffer
	buf.Write(appendHeader(nil, snapMagic, 3))
	content := []byte("state")
	content = binary.LittleEndian.AppendUint64(content, 2) // blob seq 2
	content = binary.LittleEndian.AppendUint32(content, 4)
	content = append(content, "blob"...)
	content = binary.LittleEndian.AppendUint64(content, 16)
	buf.Write(content)
	t := binary.LittleEndian.AppendUint64(nil, uint64(len(content)))
	t = binary.LittleEndian.AppendUint32(t, crc32c(content))
	buf.Write(append(t, snapEnd...))
	f.Add(buf.Bytes())
	for _, v := range []string{"v1", "v2"} {
		if b, err := os.ReadFile(filepath.Join("testdata", v, snapshotName(3))); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, sec, blobs, err := checkSnapshot(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		got, err := io.ReadAll(sec)
		if err != nil || len(got) > len(b)-headerSize-snapTrailer {
			t.Fatalf("payload %d bytes (%v) of a %d-byte file", len(got), err, len(b))
		}
		for _, bl := range blobs {
			if bl.off < headerSize+int64(len(got)) || bl.off+int64(bl.n) > int64(len(b)-snapTrailer) {
				t.Fatalf("blob %d at %d+%d outside the content of a %d-byte file", bl.seq, bl.off, bl.n, len(b))
			}
		}
	})
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
