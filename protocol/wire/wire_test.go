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

// countingWriter records the size of every Write call.
type countingWriter struct {
	bytes.Buffer
	writes []int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.Buffer.Write(p)
}

// WriteFrame sends AppendFrame's bytes whatever the body size: small bodies
// in one Write, large ones as head and body without copying the body.
func TestWriteFrameBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		writes int
	}{
		{"small", 4, 1},
		{"just below", copyBelow - 1, 1},
		{"large", copyBelow, 2},
		{"several MB", 5<<20 + 3, 2},
	} {
		body := make([]byte, tc.size)
		for i := range body {
			body[i] = byte(i * 7)
		}
		f := codec.NewFrame(msgtype.RESPONSE_JOB_INFO, codec.MungeAuth("MUNGE:cred:"), body)
		want, err := codec.AppendFrame(nil, &f)
		if err != nil {
			t.Fatal(err)
		}
		var w countingWriter
		if err := WriteFrame(&w, nil, &f); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%s: bytes differ from AppendFrame", tc.name)
		}
		if len(w.writes) != tc.writes {
			t.Errorf("%s: %d writes %v, want %d", tc.name, len(w.writes), w.writes, tc.writes)
		}
		if tc.size >= copyBelow && w.writes[1] != tc.size {
			t.Errorf("%s: body written as %d bytes, want %d in one piece", tc.name, w.writes[1], tc.size)
		}
		// Over TCP (writev) and over a pipe the reader gets the same frame.
		for _, pair := range []func(t *testing.T) (net.Conn, net.Conn){tcpPair, pipePair} {
			a, b := pair(t)
			errc := make(chan error, 1)
			go func() { errc <- WriteFrame(a, nil, &f) }()
			b.SetReadDeadline(time.Now().Add(60 * time.Second))
			raw, err := ReadRaw(b, 0)
			if err != nil {
				t.Fatalf("%s: read: %v", tc.name, err)
			}
			if err := <-errc; err != nil {
				t.Fatalf("%s: write: %v", tc.name, err)
			}
			if !bytes.Equal(raw, want) {
				t.Errorf("%s over %T: bytes differ from AppendFrame", tc.name, a)
			}
			a.Close()
			b.Close()
		}
	}
	// An encoding error writes nothing.
	f := codec.NewFrame(msgtype.RESPONSE_JOB_INFO, codec.MungeAuth("x"), make([]byte, copyBelow))
	f.Header.BodyLength = 1
	var w countingWriter
	if err := WriteFrame(&w, nil, &f); !errors.Is(err, codec.ErrEncode) || len(w.writes) != 0 {
		t.Errorf("bad body_length: %v, %d writes", err, len(w.writes))
	}
}

func pipePair(t *testing.T) (net.Conn, net.Conn) { return net.Pipe() }

func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	return a, b
}
