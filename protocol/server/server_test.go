package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// fakeAuth is auth/none with a verdict: the uid travels in the frame and
// uid 666 is refused, so tests need no munged.
type fakeAuth struct{}

func (fakeAuth) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return fakeAuth{}.SignHash(ctx, f, rUID, authhash.Default)
}

func (fakeAuth) SignHash(_ context.Context, f *codec.Frame, rUID uint32, _ authhash.Type) error {
	f.Auth = codec.NoneAuth(0, 0, fmt.Sprint(rUID))
	return nil
}

func (fakeAuth) Verify(_ context.Context, f *codec.Frame) (auth.Identity, error) {
	if f.Auth.PluginID != codec.AuthNone {
		return auth.Identity{}, slurmerr.Error{Code: slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET}
	}
	if f.Auth.UID == 666 {
		return auth.Identity{}, fmt.Errorf("bad key: %w", slurmerr.Error{Code: slurmerr.ESLURM_AUTH_CRED_INVALID})
	}
	return auth.Identity{UID: f.Auth.UID, GID: f.Auth.GID}, nil
}

func testCodec() *codec.Codec { return &codec.Codec{Bodies: msg.Registry()} }

type testServer struct {
	s    *Server
	addr string
}

func start(t *testing.T, h Handler, fw *forward.Forwarder) *testServer {
	t.Helper()
	ln, err := Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Auth: fakeAuth{}, Handler: h, Codec: testCodec(), Forwarder: fw, Timeout: 5 * time.Second, MaxConns: 4,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return &testServer{s: s, addr: ln.Addr().String()}
}

// call sends f (signed by fakeAuth as uid) and reads the reply; raw, when
// set, replaces the encoded frame.
func call(t *testing.T, addr string, f codec.Frame, uid uint32, mangle func([]byte) []byte) (codec.Frame, error) {
	t.Helper()
	f.Auth = codec.NoneAuth(uid, uid, "client")
	b, err := testCodec().AppendFrame(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	if mangle != nil {
		b = mangle(b)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	return wire.ReadFrame(conn, testCodec(), 0)
}

func rcOf(t *testing.T, f codec.Frame) int {
	t.Helper()
	if f.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
		t.Fatalf("reply %v, want RESPONSE_SLURM_RC", f.Header.MsgType)
	}
	return int(int32(binary.BigEndian.Uint32(f.Body)))
}

func pingHandler() Mux {
	return Mux{
		msgtype.REQUEST_PING: HandlerFunc(func(_ context.Context, r *Request) *Response {
			return &Response{MsgType: msgtype.RESPONSE_PING_SLURMD, Body: msg.PingSlurmdResponse{CPULoad: r.Identity.UID, FreeMem: 7}}
		}),
		msgtype.REQUEST_SHUTDOWN: HandlerFunc(func(context.Context, *Request) *Response { return nil }),
		msgtype.REQUEST_HEALTH_CHECK: HandlerFunc(func(context.Context, *Request) *Response {
			panic("handler bug")
		}),
	}
}

func TestServeDispatch(t *testing.T) {
	ts := start(t, pingHandler(), nil)
	ping := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)

	t.Run("ping answered with identity from the credential", func(t *testing.T) {
		r, err := call(t, ts.addr, ping, 42, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.MsgType != msgtype.RESPONSE_PING_SLURMD || r.Header.Version != codec.Version2205 {
			t.Fatalf("reply %v %v", r.Header.MsgType, r.Header.Version)
		}
		if got := binary.BigEndian.Uint32(r.Body); got != 42 {
			t.Errorf("handler saw uid %d", got)
		}
		// The reply is addressed to the requester and names it in
		// orig_addr, as slurmd's replies do.
		if r.Auth.Hostname != "42" {
			t.Errorf("reply restricted to %q, want 42", r.Auth.Hostname)
		}
		if r.Header.OrigAddr.Family != codec.AFInet {
			t.Errorf("orig_addr %v", r.Header.OrigAddr)
		}
	})
	t.Run("reply in the request's version", func(t *testing.T) {
		old := ping
		old.Header.Version = codec.Version2108
		r, err := call(t, ts.addr, old, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.Version != codec.Version2108 {
			t.Errorf("reply version %v", r.Header.Version)
		}
	})
	t.Run("a panicking handler costs only its request", func(t *testing.T) {
		r, err := call(t, ts.addr, codec.NewFrame(msgtype.REQUEST_HEALTH_CHECK, codec.AuthBlob{}, nil), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rc := rcOf(t, r); rc != slurmerr.SLURM_ERROR {
			t.Errorf("rc %d", rc)
		}
	})
	t.Run("unknown type is EINVAL", func(t *testing.T) {
		r, err := call(t, ts.addr, codec.NewFrame(msgtype.REQUEST_ACCT_GATHER_UPDATE, codec.AuthBlob{}, nil), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rc := rcOf(t, r); rc != EINVAL {
			t.Errorf("rc %d", rc)
		}
	})
	t.Run("bad credential", func(t *testing.T) {
		r, err := call(t, ts.addr, ping, 666, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rc := rcOf(t, r); rc != slurmerr.ESLURM_AUTH_CRED_INVALID {
			t.Errorf("rc %d", rc)
		}
		if r.Auth.Hostname != fmt.Sprint(auth.UIDAny) {
			t.Errorf("error reply restricted to %q", r.Auth.Hostname)
		}
	})
	t.Run("body that does not unpack", func(t *testing.T) {
		// REQUEST_PING has an empty body; one stray byte must fail.
		f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, []byte{0})
		r, err := call(t, ts.addr, f, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rc := rcOf(t, r); rc != slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("rc %d", rc)
		}
	})
	t.Run("trailing bytes after the frame's body are refused", func(t *testing.T) {
		_, err := call(t, ts.addr, ping, 1, func(b []byte) []byte {
			b = append(b, 0xAA)
			binary.BigEndian.PutUint32(b, uint32(len(b)-4))
			return b
		})
		if err == nil {
			t.Fatal("frame with trailing bytes was answered")
		}
	})
	t.Run("oversized length prefix is refused", func(t *testing.T) {
		_, err := call(t, ts.addr, ping, 1, func(b []byte) []byte {
			binary.BigEndian.PutUint32(b, 0x7fffffff)
			return b
		})
		if err == nil {
			t.Fatal("insane length answered")
		}
	})
	t.Run("no reply for shutdown", func(t *testing.T) {
		_, err := call(t, ts.addr, codec.NewFrame(msgtype.REQUEST_SHUTDOWN, codec.AuthBlob{}, []byte{0, 0}), 0, nil)
		if !errors.Is(err, io.EOF) {
			t.Errorf("got %v, want EOF", err)
		}
	})
}

// TestRequestInPieces: a request that arrives in several segments, one of
// them splitting the length prefix, is read whole through the buffered
// reader.
func TestRequestInPieces(t *testing.T) {
	ts := start(t, pingHandler(), nil)
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.NoneAuth(7, 7, "client"), nil)
	b, err := testCodec().AppendFrame(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetNoDelay(true)
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	for _, piece := range [][]byte{b[:2], b[2:9], b[9:]} {
		if _, err := conn.Write(piece); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // separate segments, most likely
	}
	r, err := wire.ReadFrame(conn, testCodec(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.MsgType != msgtype.RESPONSE_PING_SLURMD || binary.BigEndian.Uint32(r.Body) != 7 {
		t.Fatalf("reply %v body %x", r.Header.MsgType, r.Body)
	}
}

// TestReusedGoroutines: connections served one after another on reused
// goroutines each get their own answer (nothing of one request carries
// over to the next).
func TestReusedGoroutines(t *testing.T) {
	ts := start(t, pingHandler(), nil)
	ping := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	for uid := uint32(100); uid < 140; uid++ {
		r, err := call(t, ts.addr, ping, uid, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := binary.BigEndian.Uint32(r.Body); got != uid {
			t.Fatalf("uid %d answered as %d", uid, got)
		}
	}
}

func TestAfterRunsOnceReplySent(t *testing.T) {
	got := make(chan error, 1)
	ts := start(t, Mux{msgtype.REQUEST_PING: HandlerFunc(func(context.Context, *Request) *Response {
		r := RC(0)
		r.After = func(err error) { got <- err }
		return r
	})}, nil)
	if _, err := call(t, ts.addr, codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil), 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("After saw %v", err)
	}
}

func TestBoundedConcurrency(t *testing.T) {
	var running, peak atomic.Int32
	release := make(chan struct{})
	ts := start(t, Mux{msgtype.REQUEST_PING: HandlerFunc(func(context.Context, *Request) *Response {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		return RC(0)
	})}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := call(t, ts.addr, codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil), 1, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	// Wait until the server is saturated, then let everything finish.
	for running.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 4 {
		t.Errorf("peak concurrency %d, want MaxConns 4", p)
	}
}

// TestForwarding builds a tree of three servers: the head relays to two
// children and its reply carries their entries, one of them an
// unreachable node reported as RESPONSE_FORWARD_FAILED.
func TestForwarding(t *testing.T) {
	addrs := map[string]string{}
	var mu sync.Mutex
	resolve := func(n string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := addrs[n]; ok {
			return a, nil
		}
		return "", fmt.Errorf("unknown node %s", n)
	}
	fw := &forward.Forwarder{Resolve: resolve, Codec: testCodec(), MessageTimeout: 5 * time.Second}
	for _, n := range []string{"c1", "c2"} {
		ts := start(t, pingHandler(), fw)
		mu.Lock()
		addrs[n] = ts.addr
		mu.Unlock()
	}
	// c3 resolves to a closed port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addrs["c3"] = ln.Addr().String()
	ln.Close()
	head := start(t, pingHandler(), fw)

	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	f.Header.Forward = codec.Forward{Count: 3, Nodes: "c[1-3]", Timeout: 5000, TreeWidth: 50}
	r, err := call(t, head.addr, f, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.MsgType != msgtype.RESPONSE_PING_SLURMD {
		t.Fatalf("reply %v", r.Header.MsgType)
	}
	got := map[string]string{}
	for _, it := range r.Header.RetList {
		got[it.NodeName] = fmt.Sprintf("%v/%d", it.MsgType, it.Err)
	}
	want := map[string]string{
		"c1": "RESPONSE_PING_SLURMD/0",
		"c2": "RESPONSE_PING_SLURMD/0",
		"c3": fmt.Sprintf("RESPONSE_FORWARD_FAILED/%d", slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR),
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: %q, want %q (all: %v)", n, got[n], w, got)
		}
	}

	t.Run("no forwarder reports the list failed", func(t *testing.T) {
		solo := start(t, pingHandler(), nil)
		r, err := call(t, solo.addr, f, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Header.RetList) != 3 || r.Header.RetList[0].MsgType != msgtype.RESPONSE_FORWARD_FAILED {
			t.Errorf("ret_list %+v", r.Header.RetList)
		}
	})
}

// TestSharedMungeToleratesReplay decodes one real munge credential twice,
// as two slurmd sharing a munged do with a forwarded message.
func TestSharedMungeToleratesReplay(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	m := &SharedMunge{Munge: auth.Munge{Client: md.Client()}}
	ctx := context.Background()
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	if err := m.Sign(ctx, &f, auth.UIDAny); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := m.Verify(ctx, &f); err != nil {
			t.Fatalf("decode %d: %v", i+1, err)
		}
	}
	strict := &auth.Munge{Client: md.Client()}
	if _, err := strict.Verify(ctx, &f); err == nil {
		t.Error("auth.Munge accepted a replayed credential")
	}
	// A changed body still fails.
	f2 := f
	f2.Body = []byte{1}
	f2.Header.BodyLength = 1
	if _, err := m.Verify(ctx, &f2); err == nil || !strings.Contains(err.Error(), "hash") {
		t.Errorf("tampered body: %v", err)
	}
}
