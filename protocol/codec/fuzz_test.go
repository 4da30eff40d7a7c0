package codec

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
)

func seedFrames(f *testing.F) {
	f.Helper()
	for _, name := range []string{"kill-job-request", "slurmd-rc-reply"} {
		f.Add(realFrame(f, name))
	}
	fw := NewFrame(msgtype.REQUEST_LAUNCH_TASKS, MungeAuth("MUNGE:c:"), []byte{1, 2, 3})
	fw.Header.Forward = Forward{Count: 3, Nodes: "n[2-4]", Timeout: 10000, TreeWidth: 50}
	fw.Header.OrigAddr = AddrIPv6([16]byte{15: 1}, 6818)
	fw.Header.RetList = []RetItem{
		{MsgType: msgtype.RESPONSE_SLURM_RC, NodeName: "n2", Body: ReturnCode{RC: 1}},
		{Err: 1001, MsgType: msgtype.RESPONSE_FORWARD_FAILED, NodeName: "n3", Body: Empty{}},
		{MsgType: msgtype.RESPONSE_SLURM_RC_MSG, NodeNameNull: true, Body: ReturnCodeMsg{RC: 2, Msg: "x"}},
	}
	old := NewFrame(msgtype.REQUEST_PING, NoneAuth(1, 2, "h"), nil)
	old.Header.Version = Version2108
	jwt := NewFrame(msgtype.RESPONSE_SLURM_RC, JWTAuth("t", "u"), []byte{0, 0, 0, 0})
	for _, fr := range []Frame{fw, old, jwt} {
		b, err := AppendFrame(nil, &fr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeFrame: decoding never panics; whatever decodes re-encodes to
// exactly the input.
func FuzzDecodeFrame(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := DecodeFrame(data)
		if err != nil {
			return
		}
		out, err := AppendFrame(nil, &fr)
		if err != nil {
			t.Fatalf("decoded frame does not encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("round trip differs\n got %x\nwant %x", out, data)
		}
	})
}

// FuzzDecodeHeader: the header alone, from arbitrary bytes; a decoded header
// re-encodes to the bytes it consumed.
func FuzzDecodeHeader(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		msg := data[4:]
		h, n, err := Default.DecodeHeader(msg)
		if err != nil {
			return
		}
		w := newTestWriter()
		if err := Default.AppendHeader(w, &h); err != nil {
			t.Fatalf("decoded header does not encode: %v", err)
		}
		if !bytes.Equal(w.Bytes(), msg[:n]) {
			t.Fatalf("header round trip differs\n got %x\nwant %x", w.Bytes(), msg[:n])
		}
	})
}
