package bcast

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// legacyBlocks splits an lz4 legacy-format file (lz4 -l: magic, then
// blocks of u32 little-endian length + raw LZ4 block data, 8 MiB of
// input each) into its raw blocks, the format sbcast -C sends.
func legacyBlocks(t *testing.T, data []byte) [][]byte {
	t.Helper()
	if len(data) < 4 || binary.LittleEndian.Uint32(data) != 0x184C2102 {
		t.Fatal("not an lz4 legacy file")
	}
	var out [][]byte
	for p := data[4:]; len(p) > 0; {
		n := int(binary.LittleEndian.Uint32(p))
		out = append(out, p[4:4+n])
		p = p[4+n:]
	}
	return out
}

// The vectors in testdata were made by Debian's lz4 1.9.4 (lz4 -l), the
// library sbcast 22.05 links: each is one block of its original.
func TestDecompressLZ4Vectors(t *testing.T) {
	zeros := append(make([]byte, 70000), bytes.Repeat([]byte("abc"), 1000)...)
	for _, name := range []string{"text", "zeros", "random", "short"} {
		t.Run(name, func(t *testing.T) {
			want := zeros
			if name != "zeros" {
				var err error
				if want, err = os.ReadFile(filepath.Join("testdata", name)); err != nil {
					t.Fatal(err)
				}
			}
			comp, err := os.ReadFile(filepath.Join("testdata", name+".lz4legacy"))
			if err != nil {
				t.Fatal(err)
			}
			blocks := legacyBlocks(t, comp)
			if len(blocks) != 1 {
				t.Fatalf("%d blocks", len(blocks))
			}
			got, err := DecompressLZ4(blocks[0], len(want))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes differ from the original", len(got))
			}
			// Announced length wrong either way: refused, as real's
			// uncomp_len check.
			for _, n := range []int{len(want) - 1, len(want) + 1} {
				if _, err := DecompressLZ4(blocks[0], n); !errors.Is(err, ErrLZ4) {
					t.Errorf("length %d: %v", n, err)
				}
			}
			// Every truncation fails cleanly.
			for cut := 0; cut < len(blocks[0]); cut += 1 + len(blocks[0])/50 {
				if _, err := DecompressLZ4(blocks[0][:cut], len(want)); err == nil {
					t.Errorf("truncated to %d bytes: accepted", cut)
				}
			}
		})
	}
}

func TestDecompressLZ4Malformed(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
		n    int
	}{
		{"empty input", nil, 0},
		{"literal run longer than input", []byte{0x50, 'a', 'b'}, 5},
		{"literal run longer than output", []byte{0x30, 'a', 'b', 'c'}, 2},
		{"offset zero", []byte{0x14, 'a', 0, 0}, 10},
		{"offset before the start", []byte{0x14, 'a', 2, 0}, 10},
		{"match past the end", []byte{0x14, 'a', 1, 0, 0x00}, 4},
		{"truncated offset", []byte{0x14, 'a', 1}, 10},
		{"truncated length extension", []byte{0xf0, 255, 255}, 1000},
		{"negative length", []byte{0x00}, -1},
		{"over LZ4's ratio", []byte{0xf0, 255, 255, 255}, 255*4 + 17},
	} {
		if _, err := DecompressLZ4(c.src, c.n); !errors.Is(err, ErrLZ4) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// An overlapping match (offset 1) repeats the last byte.
	got, err := DecompressLZ4([]byte{0x16, 'a', 1, 0, 0x10, 'b'}, 12)
	if err != nil || string(got) != "aaaaaaaaaaab" {
		t.Errorf("overlap: %q %v", got, err)
	}
}

func FuzzDecompressLZ4(f *testing.F) {
	f.Add([]byte{0x16, 'a', 1, 0, 0x10, 'b'}, uint16(12))
	f.Add([]byte{0xf0, 255, 10}, uint16(300))
	f.Fuzz(func(t *testing.T, src []byte, n uint16) {
		out, err := DecompressLZ4(src, int(n))
		if err == nil && len(out) != int(n) {
			t.Fatalf("accepted with %d bytes, want %d", len(out), n)
		}
	})
}
