package jobs

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"unsafe"
)

// contentHasher fingerprints a value by content: its bytes, every
// string's text, the elements of slices and what pointers point to,
// recursively. The list cache compares fingerprints to tell whether a job
// changed since its record was packed, without a hook at every place that
// writes a job field (there are many, in several files) and without a
// shadow copy of each job (a thousand bytes a job).
//
// The plan of reads is built once per type with reflect; hashing then reads
// memory through unsafe pointers. A value's own bytes are taken whole
// (headers of strings and slices included, so lengths are in), then the
// bytes they point to. Pointer words are part of the bytes: a string set
// again to equal text at another address changes the fingerprint, which
// only costs packing that record again. Named top-level fields can be
// skipped (fields the record does not depend on, or that the cache patches
// in at send time). A type holding a map, interface, func, channel or
// unsafe pointer has no plan: the caller then does not cache at all.
type contentHasher struct {
	t    reflect.Type
	plan *hashPlan
	seed maphash.Seed
}

// hashPlan reads one type: byte ranges of the value itself, then the
// fields that lead elsewhere.
type hashPlan struct {
	size  uintptr
	spans []span
	ops   []hashOp
}

type span struct{ off, size uintptr }

type opKind uint8

const (
	opString opKind = iota
	opSlice
	opPointer
)

type hashOp struct {
	kind opKind
	off  uintptr
	elem *hashPlan // slice element or pointee
}

// newContentHasher plans t (a struct type), leaving out its top-level
// fields named in skip. Every name must exist: a renamed field must not
// quietly re-enter the fingerprint or drop out of it.
func newContentHasher(t reflect.Type, skip ...string) (*contentHasher, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("jobs: content hash of %v, want a struct", t)
	}
	skipped := map[string]bool{}
	for _, name := range skip {
		if _, ok := t.FieldByName(name); !ok {
			return nil, fmt.Errorf("jobs: content hash: %v has no field %s", t, name)
		}
		skipped[name] = true
	}
	p := &hashPlan{size: t.Size()}
	var at uintptr // start of the current span
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if skipped[f.Name] {
			if f.Offset > at {
				p.spans = append(p.spans, span{at, f.Offset - at})
			}
			at = f.Offset + f.Type.Size()
			continue
		}
		if err := p.addOps(f.Type, f.Offset, 0); err != nil {
			return nil, fmt.Errorf("jobs: content hash of %v.%s: %w", t, f.Name, err)
		}
	}
	if t.Size() > at {
		p.spans = append(p.spans, span{at, t.Size() - at})
	}
	return &contentHasher{t: t, plan: p, seed: maphash.MakeSeed()}, nil
}

// planOf plans a whole value of type t (slice elements, pointees).
func planOf(t reflect.Type, depth int) (*hashPlan, error) {
	p := &hashPlan{size: t.Size()}
	if t.Size() > 0 {
		p.spans = []span{{0, t.Size()}}
	}
	if err := p.addOps(t, 0, depth); err != nil {
		return nil, err
	}
	return p, nil
}

// addOps adds the reads that leave a value of type t at off.
func (p *hashPlan) addOps(t reflect.Type, off uintptr, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%v nests too deep", t)
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
	case reflect.String:
		p.ops = append(p.ops, hashOp{kind: opString, off: off})
	case reflect.Array:
		for i := 0; i < t.Len(); i++ {
			if err := p.addOps(t.Elem(), off+uintptr(i)*t.Elem().Size(), depth); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if err := p.addOps(t.Field(i).Type, off+t.Field(i).Offset, depth); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Pointer:
		elem, err := planOf(t.Elem(), depth+1)
		if err != nil {
			return err
		}
		k := opSlice
		if t.Kind() == reflect.Pointer {
			k = opPointer
		}
		p.ops = append(p.ops, hashOp{kind: k, off: off, elem: elem})
	default:
		return fmt.Errorf("%v (%v) has no content plan", t, t.Kind())
	}
	return nil
}

// sumOf fingerprints *v; h must have been planned for T. buf is scratch
// space, returned for reuse: the content is laid out there and hashed in
// one call, which is several times faster than feeding a maphash.Hash
// field by field.
func sumOf[T any](h *contentHasher, v *T, buf []byte) (uint64, []byte) {
	if reflect.TypeFor[T]() != h.t {
		panic(fmt.Sprintf("jobs: content hash planned for %v used on %v", h.t, reflect.TypeFor[T]()))
	}
	buf = h.plan.appendTo(buf[:0], unsafe.Pointer(v))
	return maphash.Bytes(h.seed, buf), buf
}

func (p *hashPlan) appendTo(buf []byte, base unsafe.Pointer) []byte {
	for _, s := range p.spans {
		buf = append(buf, unsafe.Slice((*byte)(unsafe.Add(base, s.off)), s.size)...)
	}
	for _, op := range p.ops {
		at := unsafe.Add(base, op.off)
		switch op.kind {
		case opString:
			buf = append(buf, *(*string)(at)...)
		case opSlice:
			hdr := *(*[]byte)(at) // only the data pointer and length are read
			n := len(hdr)
			if n == 0 {
				continue
			}
			data := unsafe.Pointer(unsafe.SliceData(hdr))
			if len(op.elem.ops) == 0 {
				buf = append(buf, unsafe.Slice((*byte)(data), uintptr(n)*op.elem.size)...)
				continue
			}
			for i := 0; i < n; i++ {
				buf = op.elem.appendTo(buf, unsafe.Add(data, uintptr(i)*op.elem.size))
			}
		case opPointer:
			if q := *(*unsafe.Pointer)(at); q != nil {
				buf = op.elem.appendTo(buf, q)
			}
		}
	}
	return buf
}
