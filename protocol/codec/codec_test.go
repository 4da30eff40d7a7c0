package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Real frames captured from Slurm 22.05.8 (testsuite/captures).
func realFrame(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name + ".hex")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustEncode(t *testing.T, f *Frame) []byte {
	t.Helper()
	b, err := AppendFrame(nil, f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func roundTrip(t *testing.T, f *Frame) Frame {
	t.Helper()
	b := mustEncode(t, f)
	g, err := DecodeFrame(b)
	if err != nil {
		t.Fatalf("decode of encoded frame: %v\n%x", err, b)
	}
	again := mustEncode(t, &g)
	if !bytes.Equal(again, b) {
		t.Fatalf("re-encode differs\n got %x\nwant %x", again, b)
	}
	return g
}

func hexb(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestRealSlurmdReply(t *testing.T) {
	raw := realFrame(t, "slurmd-rc-reply")
	f, err := DecodeFrame(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Header
	if h.Version != Version2205 || h.Flags != 0 || h.MsgType != msgtype.RESPONSE_SLURM_RC || h.BodyLength != 4 {
		t.Errorf("header %+v", h)
	}
	// slurmd packs the peer address 127.0.0.1:50962 byte-reversed.
	if got := h.OrigAddr.String(); got != "127.0.0.1:50962" {
		t.Errorf("orig_addr %s", got)
	}
	if !bytes.Contains(raw[:30], hexb("0002 0100007f 12c7")) {
		t.Errorf("capture does not hold the reversed address bytes")
	}
	if f.Auth.PluginID != AuthMunge || !strings.HasPrefix(f.Auth.MungeCred, "MUNGE:") {
		t.Errorf("auth %v %q", f.Auth.PluginID, f.Auth.MungeCred)
	}
	rc, err := (ReturnCode{}), error(nil)
	if v, e := decodeReturnCode(pack.NewReader(f.Body), h.Version); e == nil {
		rc = v.(ReturnCode)
	} else {
		err = e
	}
	if err != nil || rc.RC != 0 {
		t.Errorf("rc %v %v", rc, err)
	}
	if out := mustEncode(t, &f); !bytes.Equal(out, raw) {
		t.Errorf("round trip differs")
	}
}

func TestMinimalHeaderBytes(t *testing.T) {
	// A client request: 16-byte header, auth/munge, empty body.
	f := NewFrame(msgtype.REQUEST_PING, MungeAuth("MUNGE:x:"), nil)
	b := mustEncode(t, &f)
	want := hexb("00000021" + // length
		"2600 0000 03f0 00000000 0000 0000 0000" + // 16-byte header
		"00000065 00000009 4d554e47453a783a00") // 101, "MUNGE:x:"
	if !bytes.Equal(b, want) {
		t.Fatalf("got  %x\nwant %x", b, want)
	}
	_, n, err := Default.DecodeHeader(b[4:])
	if err != nil || n != 16 {
		t.Fatalf("header len %d err %v", n, err)
	}
}

func TestAddrWireForms(t *testing.T) {
	cases := []struct {
		name string
		a    Addr
		wire string
		text string
	}{
		{"unspec", Addr{}, "0000", "none"},
		{"ipv4 reversed", AddrIPv4([4]byte{10, 1, 2, 3}, 6817), "0002 0302010a a11a", "10.1.2.3:6817"},
		{"ipv6", AddrIPv6([16]byte{0xfd, 0, 15: 1}, 6818), "000a 00000010 fd000000000000000000000000000001 a21a", "[fd00::1]:6818"},
		{"ipv6 loopback", AddrIPv6([16]byte{15: 1}, 1), "000a 00000010 00000000000000000000000000000001 0100", "[::1]:1"},
		{"other family", Addr{Family: 1}, "0001", "family(1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := pack.NewWriter(nil)
			if err := appendAddr(w, c.a); err != nil {
				t.Fatal(err)
			}
			if want := hexb(c.wire); !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("got %x want %x", w.Bytes(), want)
			}
			r := pack.NewReader(w.Bytes())
			if got := readAddr(r); got != c.a || r.Done() != nil {
				t.Fatalf("decoded %+v (%v), want %+v", got, r.Err(), c.a)
			}
			if s := c.a.String(); s != c.text {
				t.Errorf("String %q want %q", s, c.text)
			}
		})
	}
	// AF_INET6 with a 4-byte address is an unpack error in Slurm too.
	r := pack.NewReader(hexb("000a 00000004 01020304 0000"))
	if readAddr(r); r.Err() == nil {
		t.Error("short AF_INET6 accepted")
	}
	if err := appendAddr(pack.NewWriter(nil), Addr{Family: 0, Port: 1}); !errors.Is(err, ErrEncode) {
		t.Errorf("port without family: %v", err)
	}
}

func TestForwardHeader(t *testing.T) {
	f := NewFrame(msgtype.REQUEST_LAUNCH_TASKS, MungeAuth("MUNGE:c:"), []byte{1, 2, 3})
	f.Header.Forward = Forward{Count: 7, Nodes: "n[2-8]", Timeout: 20000, TreeWidth: 50}
	f.Header.OrigAddr = AddrIPv4([4]byte{192, 168, 0, 1}, 6818)
	b := mustEncode(t, &f)
	hdr := hexb("2600 0000 1771 00000003" +
		"0007 00000007 6e5b322d385d00 00004e20 0032" + // forward
		"0000" + // ret_cnt
		"0002 0100a8c0 a21a") // orig_addr reversed
	if !bytes.Equal(b[4:4+len(hdr)], hdr) {
		t.Fatalf("header\n got %x\nwant %x", b[4:4+len(hdr)], hdr)
	}
	g := roundTrip(t, &f)
	if !reflect.DeepEqual(g.Header, f.Header) {
		t.Errorf("decoded %+v\nwant %+v", g.Header, f.Header)
	}
}

func TestRetList(t *testing.T) {
	f := NewFrame(msgtype.RESPONSE_SLURM_RC, MungeAuth("MUNGE:c:"), []byte{0, 0, 0, 0})
	f.Header.RetList = []RetItem{
		{Err: 0, MsgType: msgtype.RESPONSE_SLURM_RC, NodeName: "n2", Body: ReturnCode{RC: 0}},
		{Err: 0, MsgType: msgtype.RESPONSE_SLURM_RC, NodeName: "n3", Body: ReturnCode{RC: 4002}},
		{Err: slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR, MsgType: msgtype.RESPONSE_FORWARD_FAILED, NodeName: "n4", Body: Empty{}},
		{Err: 0, MsgType: msgtype.RESPONSE_SLURM_RC_MSG, NodeName: "n5", Body: ReturnCodeMsg{RC: 1, Msg: "boom"}},
		{Err: -1, MsgType: msgtype.RESPONSE_SLURM_RC_MSG, NodeNameNull: true, Body: ReturnCodeMsg{RC: 2, MsgNull: true}},
	}
	b := mustEncode(t, &f)
	first := hexb("0000 0005" + "00000000 1f41 000000036e3200 00000000") // forward cnt 0, ret_cnt 5, entry
	if i := bytes.Index(b, first); i != 4+10 {
		t.Fatalf("first ret entry at %d in %x", i, b)
	}
	g := roundTrip(t, &f)
	if !reflect.DeepEqual(g.Header.RetList, f.Header.RetList) {
		t.Errorf("ret list\n got %+v\nwant %+v", g.Header.RetList, f.Header.RetList)
	}
	if err := g.Header.RetList[1].Body.(ReturnCode).Err(); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE}) {
		t.Errorf("rc err %v", err)
	}

	// A codec without body decoders cannot find the end of an entry.
	if _, err := (&Codec{}).DecodeFrame(b); !errors.Is(err, ErrRetBody) {
		t.Errorf("zero codec: %v", err)
	}
	// Unknown type inside the ret list.
	bad := bytes.Clone(b)
	binary.BigEndian.PutUint16(bad[4+14+4:], uint16(msgtype.REQUEST_LAUNCH_TASKS))
	if _, err := DecodeFrame(bad); !errors.Is(err, ErrRetBody) || !errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR}) {
		t.Errorf("unknown ret type: %v", err)
	}
	// A ret_cnt larger than the bytes could hold is refused before allocating.
	huge := hexb("00000000 2600 0000 1f41 00000000 0000 ffff 00000000")
	binary.BigEndian.PutUint32(huge, uint32(len(huge)-4))
	if _, err := DecodeFrame(huge); !errors.Is(err, ErrHeader) {
		t.Errorf("huge ret_cnt: %v", err)
	}
}

func TestVersions(t *testing.T) {
	for _, v := range []Version{Version2011, Version2108, Version2205} {
		f := NewFrame(msgtype.REQUEST_PING, MungeAuth("MUNGE:c:"), nil)
		f.Header.Version = v
		b := mustEncode(t, &f)
		wantLen := 16
		if v != Version2205 {
			wantLen = 18 // the extra u16 of 20.11/21.08
		}
		if _, n, err := Default.DecodeHeader(b[4:]); err != nil || n != wantLen {
			t.Errorf("%v: header len %d err %v", v, n, err)
		}
		roundTrip(t, &f)
	}
	old := NewFrame(msgtype.REQUEST_PING, MungeAuth("MUNGE:c:"), nil)
	old.Header.Version, old.Header.Reserved = Version2108, 7
	roundTrip(t, &old)
	old.Header.Version = Version2205
	if _, err := AppendFrame(nil, &old); !errors.Is(err, ErrEncode) {
		t.Errorf("reserved at 22.05: %v", err)
	}

	good := mustEncode(t, &Frame{Header: Header{Version: Current, MsgType: msgtype.REQUEST_PING}, Auth: MungeAuth("MUNGE:c:")})
	for _, v := range []uint16{0x2300, 0x2601, 0x2700, 0x2900, 0x2c00, 0} {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint16(b[4:], v)
		_, err := DecodeFrame(b)
		code, text := slurmerr.SLURM_PROTOCOL_VERSION_ERROR, "Incompatible versions of client and server code"
		if v < 0x2400 {
			code, text = slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, "Message receive failure"
		}
		if !errors.Is(err, ErrVersion) || !errors.Is(err, slurmerr.Error{Code: code}) {
			t.Errorf("version %#x: %v", v, err)
		}
		var se slurmerr.Error
		if !errors.As(err, &se) || se.Error() != text {
			t.Errorf("version %#x: message %q", v, se.Error())
		}
		f := Frame{Header: Header{Version: Version(v)}, Auth: MungeAuth("x")}
		if _, err := AppendFrame(nil, &f); !errors.Is(err, ErrVersion) {
			t.Errorf("encode version %#x: %v", v, err)
		}
	}
}

func TestBodyLengthAndTrailing(t *testing.T) {
	raw := realFrame(t, "kill-job-request")
	if _, err := DecodeFrame(raw); err != nil {
		t.Fatal(err)
	}
	for _, delta := range []int{-1, +1, -26, 1 << 20} {
		b := bytes.Clone(raw)
		bl := binary.BigEndian.Uint32(b[4+6:])
		binary.BigEndian.PutUint32(b[4+6:], uint32(int(bl)+delta))
		_, err := DecodeFrame(b)
		if !errors.Is(err, ErrBodyLength) || !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET}) {
			t.Errorf("body_length %+d: %v", delta, err)
		}
	}
	// Trailing bytes counted by the length prefix: body_length no longer
	// matches what follows the auth section.
	b := append(bytes.Clone(raw), 0xAA)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := DecodeFrame(b); !errors.Is(err, ErrBodyLength) {
		t.Errorf("trailing byte inside frame: %v", err)
	}
	// Trailing bytes beyond the length prefix.
	if _, err := DecodeFrame(append(bytes.Clone(raw), 0)); !errors.Is(err, ErrFrameLength) {
		t.Errorf("trailing byte after frame: %v", err)
	}
	// Encode refuses a body that does not match body_length.
	f, _ := DecodeFrame(raw)
	f.Body = f.Body[:len(f.Body)-1]
	if _, err := AppendFrame(nil, &f); !errors.Is(err, ErrEncode) {
		t.Errorf("encode mismatch: %v", err)
	}
}

// Every prefix of a real frame must fail cleanly: no panic, no partial frame.
func TestTruncatedEverywhere(t *testing.T) {
	for _, name := range []string{"kill-job-request", "slurmd-rc-reply"} {
		raw := realFrame(t, name)
		for i := 0; i < len(raw); i++ {
			f, err := DecodeFrame(raw[:i])
			if err == nil || !reflect.DeepEqual(f, Frame{}) {
				t.Fatalf("%s[:%d]: err %v frame %+v", name, i, err, f)
			}
			if i >= 4 {
				// Same, with the length prefix fixed up so the inner
				// decoders see the truncation.
				b := bytes.Clone(raw[:i])
				binary.BigEndian.PutUint32(b, uint32(i-4))
				if f, err := DecodeFrame(b); err == nil || !reflect.DeepEqual(f, Frame{}) {
					t.Fatalf("%s fixed[:%d]: err %v", name, i, err)
				}
				if _, _, err := Default.DecodeHeader(raw[4:i]); err == nil && i-4 < 16 {
					t.Fatalf("%s header[:%d] decoded", name, i)
				}
			}
		}
	}
}

func TestMsgSize(t *testing.T) {
	b := hexb("40000001 2600")
	_, err := DecodeFrame(b)
	if !errors.Is(err, ErrMsgSize) || !errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_PROTOCOL_INSANE_MSG_LENGTH}) {
		t.Errorf("1 GiB + 1: %v", err)
	}
	small := &Codec{Bodies: DefaultRegistry(), MaxMsgSize: 40}
	raw := realFrame(t, "kill-job-request")
	if _, err := small.DecodeFrame(raw); !errors.Is(err, ErrMsgSize) {
		t.Errorf("small limit: %v", err)
	}
	f, _ := DecodeFrame(raw)
	if _, err := small.AppendFrame(nil, &f); !errors.Is(err, ErrMsgSize) {
		t.Errorf("small limit encode: %v", err)
	}
}

func TestAuthPlugins(t *testing.T) {
	for _, a := range []AuthBlob{
		MungeAuth("MUNGE:AwQFAA:"),
		NoneAuth(1000, 1000, "n1"),
		JWTAuth("eyJ.x.y", "alice"),
	} {
		f := NewFrame(msgtype.REQUEST_PING, a, nil)
		g := roundTrip(t, &f)
		if !reflect.DeepEqual(g.Auth, a) {
			t.Errorf("auth\n got %+v\nwant %+v", g.Auth, a)
		}
	}
	none := NoneAuth(1, 2, "h")
	if want := hexb("00000064 00000001 00000002 00000002 6800"); !bytes.Equal(none.Raw, want) {
		t.Errorf("auth/none %x", none.Raw)
	}
	// auth/slurm (103) is 23.11+: unknown to a 22.05 receiver.
	f := NewFrame(msgtype.REQUEST_PING, MungeAuth("x"), nil)
	b := mustEncode(t, &f)
	binary.BigEndian.PutUint32(b[4+16:], 103)
	if _, err := DecodeFrame(b); !errors.Is(err, ErrAuth) || !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET}) {
		t.Errorf("plugin 103: %v", err)
	}
	// A receiver with auth/slurm loaded reads its token.
	opted := Codec{Bodies: DefaultRegistry(), AcceptAuthSlurm: true}
	if g, err := opted.DecodeFrame(b); err != nil || g.Auth.PluginID != AuthSlurm || g.Auth.Token != "x" {
		t.Errorf("plugin 103 accepted: %+v, %v", g.Auth, err)
	}
	// A credential without its NUL.
	b = mustEncode(t, &f)
	b[len(b)-1] = 'y'
	if _, err := DecodeFrame(b); !errors.Is(err, ErrAuth) {
		t.Errorf("no NUL: %v", err)
	}
	// Raw must agree with PluginID.
	bad := MungeAuth("x")
	bad.PluginID = AuthNone
	f.Auth = bad
	if _, err := AppendFrame(nil, &f); !errors.Is(err, ErrEncode) {
		t.Errorf("mismatched auth: %v", err)
	}
	f.Auth = AuthBlob{}
	if _, err := AppendFrame(nil, &f); !errors.Is(err, ErrEncode) {
		t.Errorf("empty auth: %v", err)
	}
}

func TestEncodeForwardConsistency(t *testing.T) {
	f := NewFrame(msgtype.REQUEST_PING, MungeAuth("x"), nil)
	f.Header.Forward.Nodes = "n1"
	if _, err := AppendFrame(nil, &f); !errors.Is(err, ErrEncode) {
		t.Errorf("nodes without count: %v", err)
	}
	// forward.cnt > 0 with a NULL node list is refused on decode.
	b := hexb("0000001e 2600 0000 03f0 00000000 0001 00000000 00000000 0000 0000 0000 00000065 00000000")
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := DecodeFrame(b); !errors.Is(err, ErrHeader) {
		t.Errorf("NULL forward list: %v", err)
	}
}

func TestDecodedFrameAliasesInput(t *testing.T) {
	raw := realFrame(t, "kill-job-request")
	f, err := DecodeFrame(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Appending to Body must not scribble over the input.
	_ = append(f.Body, 0xff)
	_ = append(f.Auth.Raw, 0xff)
	g, err := DecodeFrame(raw)
	if err != nil || !reflect.DeepEqual(f, g) {
		t.Errorf("input changed: %v", err)
	}
}

// AppendHead followed by the body is AppendFrame's bytes, for real frames
// and after a prefix already in dst; its errors are AppendFrame's.
func TestAppendHead(t *testing.T) {
	for _, name := range []string{"kill-job-request", "slurmd-rc-reply"} {
		raw := realFrame(t, name)
		f, err := DecodeFrame(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		prefix := []byte{1, 2, 3}
		head, err := Default.AppendHead(append([]byte(nil), prefix...), &f)
		if err != nil {
			t.Fatalf("%s: head: %v", name, err)
		}
		got := append(head, f.Body...)
		if !bytes.Equal(got[:3], prefix) || !bytes.Equal(got[3:], raw) {
			t.Errorf("%s: head+body\n got %x\nwant %x", name, got[3:], raw)
		}
		small := &Codec{MaxMsgSize: len(raw) - 5}
		if _, err := small.AppendHead(nil, &f); !errors.Is(err, ErrMsgSize) {
			t.Errorf("%s: limit counts the body: %v", name, err)
		}
		f.Header.BodyLength++
		if _, err := Default.AppendHead(nil, &f); !errors.Is(err, ErrEncode) {
			t.Errorf("%s: body_length mismatch: %v", name, err)
		}
	}
}
