package codec

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

func newTestWriter() *pack.Writer { return pack.NewWriter(nil) }

func BenchmarkDecodeFrame(b *testing.B) {
	raw := realFrame(b, "kill-job-request")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFrame(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeFrame(b *testing.B) {
	raw := realFrame(b, "kill-job-request")
	f, err := DecodeFrame(raw)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(raw))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendFrame(buf[:0], &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFrameRetList(b *testing.B) {
	fr := NewFrame(msgtype.RESPONSE_SLURM_RC, MungeAuth("MUNGE:c:"), []byte{0, 0, 0, 0})
	for i := 0; i < 64; i++ {
		fr.Header.RetList = append(fr.Header.RetList, RetItem{MsgType: msgtype.RESPONSE_SLURM_RC, NodeName: "node0001", Body: ReturnCode{}})
	}
	raw, err := AppendFrame(nil, &fr)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFrame(raw); err != nil {
			b.Fatal(err)
		}
	}
}
