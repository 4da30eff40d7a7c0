package pack

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestWireForms(t *testing.T) {
	cases := []struct {
		name  string
		write func(w *Writer)
		want  []byte
	}{
		{"u8", func(w *Writer) { w.U8(0xab) }, []byte{0xab}},
		{"bool true", func(w *Writer) { w.Bool(true) }, []byte{1}},
		{"bool false", func(w *Writer) { w.Bool(false) }, []byte{0}},
		{"u16", func(w *Writer) { w.U16(0x2600) }, []byte{0x26, 0x00}},
		{"u32", func(w *Writer) { w.U32(0x01020304) }, []byte{1, 2, 3, 4}},
		{"u64", func(w *Writer) { w.U64(NoVal64) }, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{"time negative", func(w *Writer) { w.Time(-1) }, bytes.Repeat([]byte{0xff}, 8)},
		{"str", func(w *Writer) { w.Str("ab") }, []byte{0, 0, 0, 3, 'a', 'b', 0}},
		{"empty str", func(w *Writer) { w.Str("") }, []byte{0, 0, 0, 1, 0}},
		{"null str", func(w *Writer) { w.NullStr() }, []byte{0, 0, 0, 0}},
		{"mem", func(w *Writer) { w.Mem([]byte{9, 8}) }, []byte{0, 0, 0, 2, 9, 8}},
		{"str array", func(w *Writer) { w.StrArray([]string{"x"}) }, []byte{0, 0, 0, 1, 0, 0, 0, 2, 'x', 0}},
		{"u16 array", func(w *Writer) { w.U16Array([]uint16{1, 2}) }, []byte{0, 0, 0, 2, 0, 1, 0, 2}},
		{"absent list", func(w *Writer) { w.ListCount(0, false) }, []byte{0xff, 0xff, 0xff, 0xfe}},
		// packdouble sends the bits of v*1e6: 1.5 -> 1500000.0.
		{"double", func(w *Writer) { w.Double(1.5) }, func() []byte {
			var w Writer
			w.U64(math.Float64bits(1500000))
			return w.Bytes()
		}()},
	}
	for _, c := range cases {
		var w Writer
		c.write(&w)
		if !bytes.Equal(w.Bytes(), c.want) {
			t.Errorf("%s: got % x, want % x", c.name, w.Bytes(), c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	var w Writer
	w.U8(7)
	w.Bool(true)
	w.U16(NoVal16)
	w.U32(Infinite)
	w.U64(1 << 40)
	w.Time(1700000000)
	w.Double(0.25)
	w.Mem([]byte("raw"))
	w.Str("hello")
	w.Str("")
	w.NullStr()
	w.StrArray([]string{"a", "", "c"})
	w.U32Array([]uint32{5, 6})
	w.U64Array(nil)
	w.ListCount(2, true)
	w.ListCount(0, false)

	r := NewReader(w.Bytes())
	if r.U8() != 7 || !r.Bool() || r.U16() != NoVal16 || r.U32() != Infinite || r.U64() != 1<<40 {
		t.Fatal("integers did not round-trip")
	}
	if r.Time() != 1700000000 {
		t.Fatal("time did not round-trip")
	}
	if d := r.Double(); d != 0.25 {
		t.Fatalf("double = %v", d)
	}
	if m := r.Mem(); string(m) != "raw" {
		t.Fatalf("mem = %q", m)
	}
	if s, ok := r.OptStr(); s != "hello" || !ok {
		t.Fatalf("str = %q %v", s, ok)
	}
	if s, ok := r.OptStr(); s != "" || !ok {
		t.Fatalf("empty str = %q %v", s, ok)
	}
	if s, ok := r.OptStr(); s != "" || ok {
		t.Fatalf("null str = %q %v", s, ok)
	}
	if a := r.StrArray(); len(a) != 3 || a[0] != "a" || a[1] != "" || a[2] != "c" {
		t.Fatalf("str array = %q", a)
	}
	if a := r.U32Array(); len(a) != 2 || a[0] != 5 || a[1] != 6 {
		t.Fatalf("u32 array = %v", a)
	}
	if a := r.U64Array(); a != nil {
		t.Fatalf("empty u64 array = %v", a)
	}
	if n, ok := r.ListCount(1); n != 2 || !ok {
		t.Fatalf("list count = %d %v", n, ok)
	}
	if n, ok := r.ListCount(1); n != 0 || ok {
		t.Fatalf("absent list = %d %v", n, ok)
	}
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestReaderRejects(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		read func(r *Reader)
		want error
	}{
		{"short u32", []byte{0, 0, 1}, func(r *Reader) { r.U32() }, ErrShort},
		{"string longer than data", []byte{0, 0, 0, 9, 'a', 0}, func(r *Reader) { r.Str() }, ErrTooLong},
		{"string over 1 GiB", []byte{0x40, 0, 0, 1}, func(r *Reader) { r.Str() }, ErrTooLong},
		{"string without NUL", []byte{0, 0, 0, 2, 'a', 'b'}, func(r *Reader) { r.Str() }, ErrNoNul},
		// A count of 2^20 four-byte elements in a 4-byte body must fail before
		// allocating, not after.
		{"array count over data", []byte{0, 0x10, 0, 0, 0, 0, 0, 0}, func(r *Reader) { r.U32Array() }, ErrTooLong},
		{"str array count over data", []byte{0, 0, 0, 2, 0, 0, 0, 0}, func(r *Reader) { r.StrArray() }, ErrTooLong},
	}
	for _, c := range cases {
		r := NewReader(c.data)
		c.read(r)
		if !errors.Is(r.Err(), c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, r.Err(), c.want)
		}
	}
}

func TestStickyErrorAndTrailingBytes(t *testing.T) {
	r := NewReader([]byte{1})
	if r.U16() != 0 || r.Err() == nil {
		t.Fatal("short read not reported")
	}
	first := r.Err()
	if r.U8() != 0 || r.Err() != first {
		t.Fatal("error is not sticky")
	}

	r = NewReader([]byte{1, 2})
	r.U8()
	if err := r.Done(); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestRawRestUnread(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5}
	r := NewReader(data)
	if got := r.Raw(2); !bytes.Equal(got, []byte{1, 2}) {
		t.Fatalf("Raw(2) = %v", got)
	}
	un := r.Unread()
	if !bytes.Equal(un, []byte{3, 4, 5}) || r.Offset() != 2 {
		t.Fatalf("Unread = %v at offset %d", un, r.Offset())
	}
	if &un[0] != &data[2] || cap(un) != 3 {
		t.Error("Unread does not alias the input up to its end")
	}
	rest := r.Rest()
	if !bytes.Equal(rest, []byte{3, 4, 5}) || r.Remaining() != 0 || r.Done() != nil {
		t.Fatalf("Rest = %v, %d remain, Done %v", rest, r.Remaining(), r.Done())
	}
	rest[0] = 9
	if data[2] != 3 {
		t.Error("Rest aliases the input")
	}
	if got := r.Rest(); got == nil || len(got) != 0 {
		t.Errorf("Rest at the end = %#v, want empty", got)
	}

	cases := []struct {
		name string
		read func(r *Reader) []byte
	}{
		{"Raw past the end", func(r *Reader) []byte { return r.Raw(2) }},
		{"Raw negative", func(r *Reader) []byte { return r.Raw(-1) }},
		{"Rest after an error", func(r *Reader) []byte { r.Raw(2); return r.Rest() }},
		{"Unread after an error", func(r *Reader) []byte { r.Raw(2); return r.Unread() }},
	}
	for _, c := range cases {
		r := NewReader([]byte{7})
		if got := c.read(r); got != nil || !errors.Is(r.Err(), ErrShort) {
			t.Errorf("%s: %v, err %v", c.name, got, r.Err())
		}
	}
}

func FuzzReader(f *testing.F) {
	var w Writer
	w.Str("seed")
	w.StrArray([]string{"a", "b"})
	w.U32Array([]uint32{1})
	f.Add(w.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data)
		for r.Err() == nil && r.Remaining() > 0 {
			switch r.U8() % 8 {
			case 0:
				r.Str()
			case 1:
				r.StrArray()
			case 2:
				r.U32Array()
			case 3:
				r.Mem()
			case 4:
				r.ListCount(8)
			case 5:
				r.U64Array()
			case 6:
				r.Raw(int(r.U8()))
			case 7:
				r.Rest()
			}
		}
		if r.Offset() > len(data) {
			t.Fatalf("offset %d past data %d", r.Offset(), len(data))
		}
	})
}

// A shared reader returns the same values as a plain one, and its strings
// do not change when the body it read from is reused.
func TestSharedReader(t *testing.T) {
	var w Writer
	w.Str("alpha")
	w.OptStr("", false)
	w.Str("")
	w.StrArray([]string{"x", "yz"})
	w.U32(7)
	body := w.Bytes()
	read := func(r *Reader) []any {
		return []any{r.Str(), r.Str(), r.Str(), r.StrArray(), r.U32(), r.Done()}
	}
	plain := read(NewReader(body))
	shared := read(NewSharedReader(body))
	if !reflect.DeepEqual(plain, shared) {
		t.Fatalf("shared reader read %q, plain %q", shared, plain)
	}
	clear(body)
	if shared[0] != "alpha" || !reflect.DeepEqual(shared[3], []string{"x", "yz"}) {
		t.Errorf("shared strings changed with the body: %q", shared)
	}
	if _, ok := NewSharedReader([]byte{0, 0, 0, 2, 'a', 'b'}).OptStr(); ok {
		t.Error("string without NUL accepted")
	}
}
