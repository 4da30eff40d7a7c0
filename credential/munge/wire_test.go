package munge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"runtime"
	"testing"
)

// buildDecRsp packs a decode reply body the way munged does.
func buildDecRsp(p decRsp, addrLen int) []byte {
	var b []byte
	b = append(b, uint8(p.status))
	if p.errStr != "" {
		b = append(b, uint8(len(p.errStr)+1))
		b = append(b, p.errStr...)
		b = append(b, 0)
	} else {
		b = append(b, 0)
	}
	b = append(b, uint8(p.cipher), uint8(p.mac), uint8(p.zip))
	if p.realm != "" {
		b = append(b, uint8(len(p.realm)+1))
		b = append(b, p.realm...)
		b = append(b, 0)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, p.ttl)
	b = append(b, uint8(addrLen))
	if addrLen == 4 {
		a := p.addr.As4()
		b = append(b, a[:]...)
	} else {
		b = append(b, make([]byte, addrLen)...)
	}
	for _, v := range []uint32{p.encodeTime, p.decodeTime, p.uid, p.gid, p.ruid, p.rgid, uint32(len(p.data))} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return append(b, p.data...)
}

func buildEncRsp(status Code, errStr, cred string) []byte {
	b := []byte{uint8(status)}
	if errStr != "" {
		b = append(b, uint8(len(errStr)+1))
		b = append(b, errStr...)
		b = append(b, 0)
	} else {
		b = append(b, 0)
	}
	if cred != "" {
		b = binary.BigEndian.AppendUint32(b, uint32(len(cred)+1))
		b = append(b, cred...)
		b = append(b, 0)
	} else {
		b = binary.BigEndian.AppendUint32(b, 0)
	}
	return b
}

func sampleDecRsp() decRsp {
	return decRsp{
		status: CodeSuccess, cipher: CipherAES128, mac: MACSHA256, zip: ZipNone,
		ttl: 300, addr: netip.MustParseAddr("10.1.2.3"), encodeTime: 1700000000, decodeTime: 1700000001,
		uid: 1000, gid: 100, ruid: UIDAny, rgid: GIDAny, data: []byte{2, 0xaa, 0xbb},
	}
}

func TestMarshalEncReqLayout(t *testing.T) {
	req := encReq{cipher: CipherDefault, mac: MACDefault, zip: ZipDefault, ttl: 7, uid: 42, gid: GIDAny}
	got := marshalEncReq(req, []byte("hi"), 3)
	want := []byte{
		0x00, 0x60, 0x6D, 0x4B, 4, msgEncReq, 3, 0, 0, 0, 22, // header, body 22 bytes
		1, 1, 1, 0, // cipher mac zip realm_len
		0, 0, 0, 7, // ttl
		0, 0, 0, 42, // uid restriction
		0xff, 0xff, 0xff, 0xff, // gid restriction
		0, 0, 0, 2, 'h', 'i',
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encode request\n got %x\nwant %x", got, want)
	}
}

func TestMarshalDecReqLayout(t *testing.T) {
	got := marshalDecReq("MUNGE:x:", 0)
	want := append([]byte{0x00, 0x60, 0x6D, 0x4B, 4, msgDecReq, 0, 0, 0, 0, 13, 0, 0, 0, 9}, "MUNGE:x:\x00"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("decode request\n got %x\nwant %x", got, want)
	}
}

func TestParseDecRspRoundTrip(t *testing.T) {
	in := sampleDecRsp()
	in.errStr = "Expired credential"
	in.status = CodeCredExpired
	in.realm = "r"
	got, err := parseDecRsp(buildDecRsp(in, 4))
	if err != nil {
		t.Fatal(err)
	}
	if got.status != in.status || got.errStr != in.errStr || got.realm != "r" || got.addr != in.addr ||
		got.ttl != 300 || got.uid != 1000 || got.gid != 100 || got.ruid != UIDAny || !bytes.Equal(got.data, in.data) ||
		got.encodeTime != in.encodeTime || got.decodeTime != in.decodeTime || got.cipher != CipherAES128 {
		t.Fatalf("round trip mismatch: %+v", got)
	}
}

func TestParseDecRspRejects(t *testing.T) {
	good := buildDecRsp(sampleDecRsp(), 4)
	for i := 0; i < len(good); i++ {
		if _, err := parseDecRsp(good[:i]); !errors.Is(err, ErrMalformedReply) {
			t.Fatalf("truncated to %d bytes: err = %v", i, err)
		}
	}
	if _, err := parseDecRsp(append(good, 0)); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("trailing byte: err = %v", err)
	}
	if _, err := parseDecRsp(buildDecRsp(sampleDecRsp(), 5)); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("addr_len 5: err = %v", err)
	}
	// A data length far beyond the body must fail without allocating it.
	huge := buildDecRsp(sampleDecRsp(), 0)
	binary.BigEndian.PutUint32(huge[len(huge)-7:], 0xFFFFFFF0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		_, _ = parseDecRsp(huge)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("10 parses of a hostile length allocated %d bytes", n)
	}
}

func TestParseEncRsp(t *testing.T) {
	p, err := parseEncRsp(buildEncRsp(CodeSuccess, "", "MUNGE:abc:"))
	if err != nil || p.cred != "MUNGE:abc:" || p.status != CodeSuccess {
		t.Fatalf("got %+v, %v", p, err)
	}
	p, err = parseEncRsp(buildEncRsp(CodeBadCipher, "Invalid cipher type 9", ""))
	if err != nil || p.status != CodeBadCipher || p.errStr != "Invalid cipher type 9" {
		t.Fatalf("got %+v, %v", p, err)
	}
	if _, err := parseEncRsp([]byte{0, 5, 'a'}); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("short error string: %v", err)
	}
}

func TestParseHeader(t *testing.T) {
	h := appendHeader(nil, msgDecRsp, 0, 77)
	typ, n, err := parseHeader(h)
	if err != nil || typ != msgDecRsp || n != 77 {
		t.Fatalf("got %d %d %v", typ, n, err)
	}
	bad := append([]byte(nil), h...)
	bad[0] = 1
	if _, _, err := parseHeader(bad); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("bad magic: %v", err)
	}
	bad = append([]byte(nil), h...)
	bad[4] = 3
	if _, _, err := parseHeader(bad); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("bad version: %v", err)
	}
}

func TestErrorIs(t *testing.T) {
	err := error(&Error{Code: CodeCredExpired, Message: "Expired credential"})
	if !errors.Is(err, ErrCredExpired) || errors.Is(err, ErrCredReplayed) {
		t.Fatal("errors.Is does not match on code")
	}
	wrapped := &Error{Code: CodeSocket, Message: "x", Err: ErrMalformedReply}
	if !errors.Is(wrapped, ErrSocket) || !errors.Is(wrapped, ErrMalformedReply) {
		t.Fatal("wrapped cause lost")
	}
	if CodeOf(wrapped) != CodeSocket || CodeOf(nil) != CodeSuccess || CodeOf(errors.New("x")) != CodeSnafu {
		t.Fatal("CodeOf")
	}
	if !Decoded(err) || Decoded(wrapped) {
		t.Fatal("Decoded")
	}
	if s := err.Error(); s != "munge: Expired credential (EMUNGE_CRED_EXPIRED)" {
		t.Fatalf("Error() = %q", s)
	}
}

// FuzzParseDecRsp: no panics; a successful parse consumed exactly the input
// and its slices alias it (nothing is allocated from hostile lengths).
func FuzzParseDecRsp(f *testing.F) {
	f.Add(buildDecRsp(sampleDecRsp(), 4))
	f.Add(buildDecRsp(sampleDecRsp(), 0))
	e := sampleDecRsp()
	e.status, e.errStr, e.realm = CodeCredReplayed, "Replayed credential", "realm"
	f.Add(buildDecRsp(e, 4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseDecRsp(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedReply) {
				t.Fatalf("error not ErrMalformedReply: %v", err)
			}
			return
		}
		if len(p.data) > len(b) || len(p.errStr) > 255 || len(p.realm) > 255 {
			t.Fatalf("field larger than input")
		}
		if p.addr.IsValid() && !p.addr.Is4() && !p.addr.Is6() {
			t.Fatalf("bad addr")
		}
	})
}

func FuzzParseEncRsp(f *testing.F) {
	f.Add(buildEncRsp(CodeSuccess, "", "MUNGE:AwQFAAA=:"))
	f.Add(buildEncRsp(CodeBadMAC, "Invalid MAC type 0", ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseEncRsp(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedReply) {
				t.Fatalf("error not ErrMalformedReply: %v", err)
			}
			return
		}
		if len(p.cred) > len(b) {
			t.Fatalf("credential larger than input")
		}
	})
}

// FuzzReadReply feeds a whole reply stream (header + body) through the
// reader the client uses: the body allocation is bounded by the limit, not
// by the length the peer claims.
func FuzzReadReply(f *testing.F) {
	body := buildDecRsp(sampleDecRsp(), 4)
	f.Add(append(appendHeader(nil, msgDecRsp, 0, len(body)), body...))
	f.Add(appendHeader(nil, msgDecRsp, 0, 0x7fffffff))
	f.Add(appendHeader(nil, msgAuthFDReq, 0, 4))
	const limit = 4096
	f.Fuzz(func(t *testing.T, b []byte) {
		se := func(what string, err error) error { return &Error{Code: CodeSocket, Message: what, Err: err} }
		got, err := readReply(bytes.NewReader(b), msgDecRsp, limit, se)
		if err != nil {
			if CodeOf(err) != CodeSocket && CodeOf(err) != CodeBadLength {
				t.Fatalf("unexpected code %v", err)
			}
			return
		}
		if len(got) > limit || len(got) > len(b) {
			t.Fatalf("body of %d bytes from %d input bytes", len(got), len(b))
		}
		if _, err := parseDecRsp(got); err != nil && !errors.Is(err, ErrMalformedReply) {
			t.Fatal(err)
		}
	})
}
