package munge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeMunged serves a unix socket with a scripted handler, recording the
// retry counter of every request it reads.
type fakeMunged struct {
	path    string
	ln      net.Listener
	mu      sync.Mutex
	retries []uint8
	wg      sync.WaitGroup
}

func startFake(t *testing.T, handle func(c net.Conn, typ uint8, body []byte)) *fakeMunged {
	t.Helper()
	dir, err := os.MkdirTemp("", "fakemunge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeMunged{path: filepath.Join(dir, "sock")}
	f.ln, err = net.Listen("unix", f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.ln.Close(); f.wg.Wait() })
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := f.ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				var h [hdrLen]byte
				if _, err := io.ReadFull(c, h[:]); err != nil {
					return
				}
				typ, n, err := parseHeader(h[:])
				if err != nil {
					return
				}
				body := make([]byte, n)
				if _, err := io.ReadFull(c, body); err != nil {
					return
				}
				f.mu.Lock()
				f.retries = append(f.retries, h[6])
				f.mu.Unlock()
				handle(c, typ, body)
			}()
		}
	}()
	return f
}

func (f *fakeMunged) seen() []uint8 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint8(nil), f.retries...)
}

func reply(c net.Conn, typ uint8, body []byte) {
	_, _ = c.Write(append(appendHeader(nil, typ, 0, len(body)), body...))
}

func TestFakeDecodeSuccess(t *testing.T) {
	want := sampleDecRsp()
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		if typ != msgDecReq || !bytes.Equal(body[4:], []byte("MUNGE:abc:\x00")) {
			reply(c, msgDecRsp, buildDecRsp(decRsp{status: CodeSnafu}, 0))
			return
		}
		reply(c, msgDecRsp, buildDecRsp(want, 4))
	})
	cl := &Client{Socket: f.path}
	cred, err := cl.Decode(context.Background(), "MUNGE:abc:")
	if err != nil {
		t.Fatal(err)
	}
	if cred.UID != 1000 || cred.GID != 100 || cred.Origin.String() != "10.1.2.3" || cred.TTL != 300*time.Second ||
		!bytes.Equal(cred.Payload, want.data) || cred.Encoded.Unix() != 1700000000 || cred.UIDRestrict != UIDAny {
		t.Fatalf("credential %+v", cred)
	}
}

func TestFakeRetriesCountUpOnTransportFailure(t *testing.T) {
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		_, _ = c.Write([]byte{1, 2, 3}) // truncated header, then close
	})
	cl := &Client{Socket: f.path, SocketRetries: -1, AttemptDelay: time.Millisecond}
	_, err := cl.Decode(context.Background(), "MUNGE:abc:")
	if !errors.Is(err, ErrSocket) {
		t.Fatalf("err = %v, want ErrSocket", err)
	}
	if got := f.seen(); !bytes.Equal(got, []byte{0, 1, 2, 3, 4}) {
		t.Fatalf("retry counters %v, want 0..4 (libmunge's 5 attempts)", got)
	}
}

func TestFakeSocketRetriesLikeSlurm(t *testing.T) {
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		reply(c, msgEncRsp, buildEncRsp(CodeSocket, "Exceeded maximum number of attempts", ""))
	})
	cl := &Client{Socket: f.path, SocketRetries: 3, SocketRetryDelay: time.Millisecond}
	_, err := cl.Encode(context.Background(), nil)
	if !errors.Is(err, ErrSocket) {
		t.Fatalf("err = %v", err)
	}
	// munged's verdict is not retried by the transaction loop, only by the
	// outer Slurm loop: 1 + 3 calls, each with retry counter 0.
	if got := f.seen(); !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Fatalf("requests %v", got)
	}
}

func TestFakeVerdictNotRetried(t *testing.T) {
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		reply(c, msgDecRsp, buildDecRsp(decRsp{status: CodeBadCred, errStr: "Invalid credential format", uid: UIDAny, gid: GIDAny}, 0))
	})
	cl := &Client{Socket: f.path}
	cred, err := cl.Decode(context.Background(), "junk")
	if !errors.Is(err, ErrBadCred) || cred != nil {
		t.Fatalf("cred %v err %v", cred, err)
	}
	if n := len(f.seen()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestFakeOversizedReplyNotRead(t *testing.T) {
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		_, _ = c.Write(appendHeader(nil, msgDecRsp, 0, 0x7fffffff))
		time.Sleep(50 * time.Millisecond)
	})
	cl := &Client{Socket: f.path, MaxReplyLen: 1 << 16}
	_, err := cl.Decode(context.Background(), "MUNGE:x:")
	if !errors.Is(err, ErrBadLength) {
		t.Fatalf("err = %v, want ErrBadLength", err)
	}
	if n := len(f.seen()); n != 1 {
		t.Fatalf("%d requests, want 1 (bad length is final)", n)
	}
}

func TestFakeWrongReplyType(t *testing.T) {
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		reply(c, msgAuthFDReq, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	})
	cl := &Client{Socket: f.path, SocketRetries: -1, AttemptDelay: -1}
	_, err := cl.Decode(context.Background(), "MUNGE:x:")
	if !errors.Is(err, ErrSocket) || !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("err = %v", err)
	}
}

func TestFakeTimeout(t *testing.T) {
	block := make(chan struct{})
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) { <-block })
	t.Cleanup(func() { close(block) }) // before startFake's cleanup waits for handlers
	cl := &Client{Socket: f.path, Timeout: 50 * time.Millisecond, Attempts: 2, AttemptDelay: -1, SocketRetries: -1}
	start := time.Now()
	_, err := cl.Decode(context.Background(), "MUNGE:x:")
	if !errors.Is(err, ErrSocket) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestFakeContextCancel(t *testing.T) {
	block := make(chan struct{})
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) { <-block })
	t.Cleanup(func() { close(block) }) // before startFake's cleanup waits for handlers
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := (&Client{Socket: f.path}).Decode(ctx, "MUNGE:x:")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("cancel took %v", el)
	}
}

func TestMissingSocket(t *testing.T) {
	cl := &Client{Socket: filepath.Join(t.TempDir(), "nope"), SocketRetries: 2, SocketRetryDelay: time.Millisecond}
	_, err := cl.Encode(context.Background(), []byte("x"))
	if !errors.Is(err, ErrSocket) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestArgumentChecks(t *testing.T) {
	cl := &Client{Socket: "/nonexistent"}
	ctx := context.Background()
	if _, err := cl.Decode(ctx, ""); !errors.Is(err, ErrBadArg) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := cl.Decode(ctx, "MUNGE:\x00:"); !errors.Is(err, ErrBadArg) {
		t.Fatalf("NUL: %v", err)
	}
	if _, err := cl.Decode(ctx, strings.Repeat("A", MaxRequestLen)); !errors.Is(err, ErrBadLength) {
		t.Fatalf("long: %v", err)
	}
	if _, err := cl.Encode(ctx, make([]byte, MaxRequestLen)); !errors.Is(err, ErrBadLength) {
		t.Fatalf("long payload: %v", err)
	}
}

func TestWithTTL(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want uint32
	}{{0, 0}, {-1, ttlMaximum}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {300 * time.Second, 300}} {
		var r encReq
		WithTTL(c.d)(&r)
		if r.ttl != c.want {
			t.Errorf("WithTTL(%v) = %d, want %d", c.d, r.ttl, c.want)
		}
	}
}

// TestNotASocket: a path that exists but is no socket is reported as such
// (the connect fails first; the diagnosis comes after).
func TestNotASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cl := &Client{Socket: path, SocketRetries: -1}
	_, err := cl.Decode(context.Background(), "MUNGE:x:")
	if !errors.Is(err, ErrSocket) || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("err = %v, want EMUNGE_SOCKET saying not a socket", err)
	}
}

// TestFakeLargeReply: a reply larger than the read buffer arrives whole.
func TestFakeLargeReply(t *testing.T) {
	payload := bytes.Repeat([]byte("p"), 64<<10)
	f := startFake(t, func(c net.Conn, typ uint8, body []byte) {
		reply(c, msgDecRsp, buildDecRsp(decRsp{uid: 1, gid: 2, ruid: UIDAny, rgid: GIDAny, data: payload}, 0))
	})
	cred, err := (&Client{Socket: f.path}).Decode(context.Background(), "MUNGE:x:")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cred.Payload, payload) {
		t.Fatalf("payload of %d bytes, want %d", len(cred.Payload), len(payload))
	}
}
