package jobcred

import (
	"fmt"
	"math/bits"

	"github.com/goslurm/goslurm/protocol/pack"
)

// Bitmap is a fixed-size bit string as Slurm packs it with pack_bit_str_hex
// (core and GRES allocation bitmaps). A nil *Bitmap is Slurm's NULL bitmap.
type Bitmap struct {
	n uint32
	w []uint64
}

// NewBitmap returns an all-clear bitmap of n bits.
func NewBitmap(n uint32) *Bitmap {
	return &Bitmap{n: n, w: make([]uint64, (uint64(n)+63)/64)}
}

// BitmapOf returns a bitmap of n bits with the given bits set; it panics on
// an index out of range (a programming error).
func BitmapOf(n uint32, set ...int) *Bitmap {
	b := NewBitmap(n)
	for _, i := range set {
		b.Set(i)
	}
	return b
}

// Len returns the number of bits.
func (b *Bitmap) Len() int { return int(b.n) }

// Set sets bit i.
func (b *Bitmap) Set(i int) {
	if i < 0 || uint64(i) >= uint64(b.n) {
		panic(fmt.Sprintf("jobcred: bit %d out of range [0,%d)", i, b.n))
	}
	b.w[i/64] |= 1 << (uint(i) % 64)
}

// Test reports whether bit i is set; out-of-range bits read as clear.
func (b *Bitmap) Test(i int) bool {
	if b == nil || i < 0 || uint64(i) >= uint64(b.n) {
		return false
	}
	return b.w[i/64]&(1<<(uint(i)%64)) != 0
}

// Count returns the number of set bits.
func (b *Bitmap) Count() int {
	c := 0
	for _, w := range b.w {
		c += bits.OnesCount64(w)
	}
	return c
}

// CountRange returns the number of set bits in [lo, hi).
func (b *Bitmap) CountRange(lo, hi int) int {
	c := 0
	for i := max(lo, 0); i < hi && i < int(b.n); i++ {
		if b.Test(i) {
			c++
		}
	}
	return c
}

// Equal reports whether a and b have the same size and bits.
func (b *Bitmap) Equal(o *Bitmap) bool {
	if b == nil || o == nil {
		return b == o
	}
	if b.n != o.n {
		return false
	}
	for i := range b.w {
		if b.w[i] != o.w[i] {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789ABCDEF"

// Hex returns Slurm's bit_fmt_hexmask form: "0x" then ceil(n/4) upper-case
// digits, most significant first ("0x0" for an empty bitmap).
func (b *Bitmap) Hex() string {
	if b.n == 0 {
		return "0x0"
	}
	nd := (int(b.n) + 3) / 4
	out := make([]byte, 2+nd)
	out[0], out[1] = '0', 'x'
	for d := 0; d < nd; d++ {
		bit := d * 4
		v := (b.w[bit/64] >> (uint(bit) % 64)) & 0xf
		out[len(out)-1-d] = hexDigits[v]
	}
	return string(out)
}

// parseHexBitmap is the strict inverse of Hex: the text must be exactly what
// Hex produces for some bitmap of n bits, so re-packing gives the same bytes.
// The text bounds the allocation.
func parseHexBitmap(n uint32, s string) (*Bitmap, error) {
	if n == 0 {
		if s != "0x0" {
			return nil, fmt.Errorf("%w: empty bitmap packed as %q", ErrMalformed, s)
		}
		return NewBitmap(0), nil
	}
	nd := (uint64(n) + 3) / 4
	if len(s) < 2 || s[0] != '0' || s[1] != 'x' || uint64(len(s)-2) != nd {
		return nil, fmt.Errorf("%w: %d-bit bitmap packed as %d characters", ErrMalformed, n, len(s))
	}
	b := NewBitmap(n)
	for d := uint64(0); d < nd; d++ {
		c := s[len(s)-1-int(d)]
		var v uint64
		switch {
		case c >= '0' && c <= '9':
			v = uint64(c - '0')
		case c >= 'A' && c <= 'F':
			v = uint64(c-'A') + 10
		default:
			return nil, fmt.Errorf("%w: bitmap digit %q", ErrMalformed, c)
		}
		bit := d * 4
		if bit+4 > uint64(n) && v>>(uint64(n)-bit) != 0 {
			return nil, fmt.Errorf("%w: bitmap sets bits past its size %d", ErrMalformed, n)
		}
		b.w[bit/64] |= v << (bit % 64)
	}
	return b, nil
}

// packBitmap writes pack_bit_str_hex: NO_VAL for nil, else u32 size and the
// hex text as a packmem that includes the NUL.
func packBitmap(w *pack.Writer, b *Bitmap) {
	if b == nil {
		w.U32(pack.NoVal)
		return
	}
	w.U32(b.n)
	w.Str(b.Hex())
}

func unpackBitmap(r *pack.Reader) *Bitmap {
	n := r.U32()
	if r.Err() != nil || n == pack.NoVal {
		return nil
	}
	s, ok := r.OptStr()
	if r.Err() != nil {
		return nil
	}
	if !ok {
		r.Fail(fmt.Errorf("%w: bitmap of %d bits without text", ErrMalformed, n))
		return nil
	}
	b, err := parseHexBitmap(n, s)
	if err != nil {
		r.Fail(err)
		return nil
	}
	return b
}
