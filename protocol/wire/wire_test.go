package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func frame(t *testing.T) codec.Frame {
	return codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.MungeAuth("MUNGE:x:"), []byte{0, 0, 0, 0})
}

func TestWriteReadFrame(t *testing.T) {
	var buf bytes.Buffer
	f := frame(t)
	for i := 0; i < 3; i++ {
		if err := WriteFrame(&buf, nil, &f); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		g, err := ReadFrame(&buf, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if g.Header.MsgType != msgtype.RESPONSE_SLURM_RC || g.Auth.MungeCred != "MUNGE:x:" {
			t.Errorf("frame %+v", g)
		}
	}
	if _, err := ReadFrame(&buf, nil, 0); err != io.EOF {
		t.Errorf("clean end: %v", err)
	}
}

func TestReadLimits(t *testing.T) {
	// A peer announcing 1 GiB + 1 is refused before anything is allocated.
	_, err := ReadRaw(bytes.NewReader([]byte{0x40, 0, 0, 1}), 0)
	if !errors.Is(err, codec.ErrMsgSize) || !errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_PROTOCOL_INSANE_MSG_LENGTH}) {
		t.Errorf("insane length: %v", err)
	}
	var buf bytes.Buffer
	f := frame(t)
	WriteFrame(&buf, nil, &f)
	if _, err := ReadRaw(bytes.NewReader(buf.Bytes()), 10); !errors.Is(err, codec.ErrMsgSize) {
		t.Errorf("max 10: %v", err)
	}
	// Announcing 512 MiB and sending 3 bytes: unexpected EOF, and the
	// buffer grown only by what arrived.
	_, err = ReadRaw(bytes.NewReader([]byte{0x20, 0, 0, 0, 1, 2, 3}), 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short frame: %v", err)
	}
	// Cut inside the prefix.
	if _, err := ReadRaw(bytes.NewReader([]byte{0, 0}), 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut prefix: %v", err)
	}
	// Large frame crossing the chunk size.
	big := codec.NewFrame(msgtype.REQUEST_SUBMIT_BATCH_JOB, codec.MungeAuth("x"), bytes.Repeat([]byte{9}, 3*chunk+17))
	buf.Reset()
	if err := WriteFrame(&buf, nil, &big); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFrame(&buf, nil, 0)
	if err != nil || !bytes.Equal(g.Body, big.Body) {
		t.Fatalf("big frame: %v", err)
	}
}

// Over a real connection a deadline set by the caller bounds the read.
func TestDeadline(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := ReadFrame(a, nil, 0)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("want timeout, got %v", err)
	}
	go func() {
		f := frame(t)
		WriteFrame(b, nil, &f)
	}()
	a.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := ReadFrame(a, nil, 0); err != nil {
		t.Errorf("read: %v", err)
	}
}
