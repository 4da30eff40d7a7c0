// Package pack implements Slurm's pack primitives: the big-endian, unaligned
// encoding of integers, times, doubles, strings, memory blocks and arrays that
// every Slurm message body is built from.
//
// Writer appends; Reader consumes with a sticky error, so a decoder can read a
// whole record and check Err once. Every length read from the wire is checked
// against the bytes that remain before anything is allocated, so a hostile
// length cannot make the reader allocate more than the message it was given.
package pack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Sentinel values shared by every Slurm message (slurm.h).
const (
	NoVal8      uint8  = 0xfe
	Infinite8   uint8  = 0xff
	NoVal16     uint16 = 0xfffe
	Infinite16  uint16 = 0xffff
	NoVal       uint32 = 0xfffffffe
	Infinite    uint32 = 0xffffffff
	NoVal64     uint64 = 0xfffffffffffffffe
	Infinite64  uint64 = 0xffffffffffffffff
	NoConsume64 uint64 = 0xfffffffffffffffd
)

// MaxMemLen is Slurm's MAX_PACK_MEM_LEN: no single string, memory block or
// array may claim more than 1 GiB.
const MaxMemLen = 1 << 30

// floatMult is Slurm's FLOAT_MULT: doubles travel as the IEEE bits of v*1e6.
const floatMult = 1000000

// ErrShort reports a read past the end of the data; ErrTooLong a length over
// MaxMemLen or over what remains; ErrNoNul a string whose last byte is not NUL.
var (
	ErrShort   = errors.New("pack: unexpected end of data")
	ErrTooLong = errors.New("pack: length exceeds limit")
	ErrNoNul   = errors.New("pack: string not NUL-terminated")
)

// Writer builds a packed body. The zero value is ready to use.
type Writer struct {
	buf []byte
}

// Bytes returns the packed bytes. The slice aliases the writer's storage.
func (w *Writer) Bytes() []byte { return w.buf }

// Len returns the number of bytes packed so far.
func (w *Writer) Len() int { return len(w.buf) }

// U8 packs one byte (pack8).
func (w *Writer) U8(v uint8) { w.buf = append(w.buf, v) }

// Bool packs a bool as one byte, 0 or 1 (packbool).
func (w *Writer) Bool(v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

// U16 packs a big-endian uint16 (pack16).
func (w *Writer) U16(v uint16) { w.buf = binary.BigEndian.AppendUint16(w.buf, v) }

// U32 packs a big-endian uint32 (pack32).
func (w *Writer) U32(v uint32) { w.buf = binary.BigEndian.AppendUint32(w.buf, v) }

// U64 packs a big-endian uint64 (pack64).
func (w *Writer) U64(v uint64) { w.buf = binary.BigEndian.AppendUint64(w.buf, v) }

// Time packs a Unix time as a signed 64-bit integer (pack_time).
func (w *Writer) Time(unix int64) { w.U64(uint64(unix)) }

// Double packs v the way packdouble does: the IEEE-754 bits of v*1e6.
func (w *Writer) Double(v float64) { w.U64(math.Float64bits(v * floatMult)) }

// Mem packs a length-prefixed block of raw bytes (packmem).
func (w *Writer) Mem(p []byte) {
	w.U32(uint32(len(p)))
	w.buf = append(w.buf, p...)
}

// Str packs a string with its terminating NUL counted in the length (packstr).
// Use NullStr for a NULL pointer, which Slurm distinguishes from "".
func (w *Writer) Str(s string) {
	w.U32(uint32(len(s) + 1))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, 0)
}

// NullStr packs a NULL string: a zero length and nothing else (packnull).
func (w *Writer) NullStr() { w.U32(0) }

// OptStr packs s, or NULL when ok is false.
func (w *Writer) OptStr(s string, ok bool) {
	if ok {
		w.Str(s)
	} else {
		w.NullStr()
	}
}

// StrArray packs a count followed by that many strings (packstr_array).
func (w *Writer) StrArray(a []string) {
	w.U32(uint32(len(a)))
	for _, s := range a {
		w.Str(s)
	}
}

// U16Array packs a count followed by that many uint16 (pack16_array).
func (w *Writer) U16Array(a []uint16) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U16(v)
	}
}

// U32Array packs a count followed by that many uint32 (pack32_array).
func (w *Writer) U32Array(a []uint32) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U32(v)
	}
}

// U64Array packs a count followed by that many uint64 (pack64_array).
func (w *Writer) U64Array(a []uint64) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U64(v)
	}
}

// Reader decodes a packed body. After the first error every further read
// returns a zero value and Err reports that first error.
type Reader struct {
	data []byte
	off  int
	err  error

	// shared, when set, is a string copy of data that strings are cut
	// from (see NewSharedReader).
	shared string
}

// NewReader returns a reader over data. The reader does not copy data; byte
// slices it returns are copies (except Unread's), strings are independent
// of data.
func NewReader(data []byte) *Reader { return &Reader{data: data} }

// NewSharedReader is NewReader for a large reply read once: it copies data
// into one string and every string it returns is a substring of it, so
// that decoding 10,000 job records costs one allocation for their
// strings instead of one per string. A single retained string keeps the
// whole copy alive, so a long-lived process that keeps a few strings of a
// big body should use NewReader.
func NewSharedReader(data []byte) *Reader { return &Reader{data: data, shared: string(data)} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining returns how many bytes are left unread.
func (r *Reader) Remaining() int { return len(r.data) - r.off }

// Offset returns how many bytes have been read.
func (r *Reader) Offset() int { return r.off }

// Fail records err as the reader's error unless one is already recorded.
// Decoders use it for semantic errors (a bad flag value, say) so the first
// problem is the one reported.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Done reports an error if bytes remain unread: a body must be consumed
// exactly, trailing bytes are a framing error.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.data) {
		r.err = fmt.Errorf("pack: %d trailing bytes after message body", len(r.data)-r.off)
	}
	return r.err
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.data)-r.off {
		r.err = fmt.Errorf("%w: need %d bytes at offset %d, have %d", ErrShort, n, r.off, len(r.data)-r.off)
		return nil
	}
	p := r.data[r.off : r.off+n]
	r.off += n
	return p
}

// U8 reads one byte.
func (r *Reader) U8() uint8 {
	p := r.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

// Bool reads a packbool byte; any non-zero value is true, as in Slurm.
func (r *Reader) Bool() bool { return r.U8() != 0 }

// U16 reads a big-endian uint16.
func (r *Reader) U16() uint16 {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint16(p)
}

// U32 reads a big-endian uint32.
func (r *Reader) U32() uint32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint32(p)
}

// U64 reads a big-endian uint64.
func (r *Reader) U64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

// Time reads a pack_time value as Unix seconds.
func (r *Reader) Time() int64 { return int64(r.U64()) }

// Double reads a packdouble value.
func (r *Reader) Double() float64 { return math.Float64frombits(r.U64()) / floatMult }

// length reads a u32 length and checks it against the limit and against what
// remains, given that each counted element needs at least minSize bytes.
func (r *Reader) length(minSize int) int {
	n := r.U32()
	if r.err != nil {
		return 0
	}
	if n > MaxMemLen {
		r.err = fmt.Errorf("%w: %d > %d", ErrTooLong, n, MaxMemLen)
		return 0
	}
	if minSize > 0 && int(n) > r.Remaining()/minSize {
		r.err = fmt.Errorf("%w: %d elements of at least %d bytes, %d bytes remain", ErrTooLong, n, minSize, r.Remaining())
		return 0
	}
	return int(n)
}

// Mem reads a length-prefixed block of raw bytes; the result is a copy.
func (r *Reader) Mem() []byte {
	n := r.length(1)
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// OptStr reads a packed string. ok is false for a NULL string. A non-NULL
// string must end in NUL (Slurm 25.11 enforces this; a correct 22.05 peer
// always sends it), so that re-encoding reproduces the same bytes.
func (r *Reader) OptStr() (s string, ok bool) {
	n := r.length(1)
	if r.err != nil || n == 0 {
		return "", false
	}
	p := r.take(n)
	if p == nil {
		return "", false
	}
	if p[n-1] != 0 {
		r.Fail(fmt.Errorf("%w at offset %d", ErrNoNul, r.off-n))
		return "", false
	}
	if r.shared != "" {
		return r.shared[r.off-n : r.off-1], true
	}
	return string(p[:n-1]), true
}

// Str reads a packed string; NULL reads as "".
func (r *Reader) Str() string {
	s, _ := r.OptStr()
	return s
}

// StrArray reads a packstr_array. A zero count yields nil, as Slurm yields a
// NULL array.
func (r *Reader) StrArray() []string {
	n := r.length(4)
	if r.err != nil || n == 0 {
		return nil
	}
	a := make([]string, n)
	for i := range a {
		a[i] = r.Str()
	}
	if r.err != nil {
		return nil
	}
	return a
}

// U16Array reads a pack16_array.
func (r *Reader) U16Array() []uint16 {
	n := r.length(2)
	if r.err != nil || n == 0 {
		return nil
	}
	a := make([]uint16, n)
	for i := range a {
		a[i] = r.U16()
	}
	return a
}

// U32Array reads a pack32_array.
func (r *Reader) U32Array() []uint32 {
	n := r.length(4)
	if r.err != nil || n == 0 {
		return nil
	}
	a := make([]uint32, n)
	for i := range a {
		a[i] = r.U32()
	}
	return a
}

// U64Array reads a pack64_array.
func (r *Reader) U64Array() []uint64 {
	n := r.length(8)
	if r.err != nil || n == 0 {
		return nil
	}
	a := make([]uint64, n)
	for i := range a {
		a[i] = r.U64()
	}
	return a
}

// Count reads a u32 element count for a caller-decoded list whose records are
// at least minSize bytes each, bounded like every other length.
func (r *Reader) Count(minSize int) int { return r.length(minSize) }

// ListCount reads the count that starts a slurm_pack_list. NO_VAL means no
// list at all (present is false); otherwise the count is bounded like Count.
func (r *Reader) ListCount(minSize int) (n int, present bool) {
	if r.err != nil {
		return 0, false
	}
	if r.Remaining() >= 4 && binary.BigEndian.Uint32(r.data[r.off:]) == NoVal {
		r.off += 4
		return 0, false
	}
	n = r.length(minSize)
	return n, r.err == nil
}

// ListCount writes the count that starts a slurm_pack_list; a nil list
// (present false) is written as NO_VAL.
func (w *Writer) ListCount(n int, present bool) {
	if !present {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(n))
}

// NewWriter returns a writer that appends to buf, so a caller can pack into a
// buffer it already holds (a frame being assembled, say).
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf} }

// Raw appends p as is, with no length prefix: for pre-packed parts such as a
// forwarded auth section or a message body.
func (w *Writer) Raw(p []byte) { w.buf = append(w.buf, p...) }

// Raw reads the next n bytes as they are, with no length prefix (the
// counterpart of Writer.Raw): for a length the caller read and bounded
// itself. The result is a copy; n past what remains is ErrShort.
func (r *Reader) Raw(n int) []byte {
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// Rest reads every byte not yet read and returns a copy of them, so Done
// succeeds afterwards: for a part whose end only the rest of the data
// marks (an embedded record another decoder takes over). It returns an
// empty, non-nil slice at the end of the data, and nil after an error.
func (r *Reader) Rest() []byte {
	if r.err != nil {
		return nil
	}
	return append([]byte{}, r.take(r.Remaining())...)
}

// Unread returns the bytes not yet read without consuming them. Unlike
// every other method the result aliases the reader's input: it is for a
// caller that hands the tail on without copying (a frame's body, say),
// and must not be modified. It is nil after an error.
func (r *Reader) Unread() []byte {
	if r.err != nil {
		return nil
	}
	return r.data[r.off:len(r.data):len(r.data)]
}
