// Package server is the receiving side of Slurm's protocol, as a 22.05
// daemon runs it (slurmd's _msg_engine and _service_connection, with
// slurm_receive_msg_and_forward):
//
//   - an accept loop that holds at most MaxConns connections at once (the
//     next accept waits for a free slot, as slurmd waits for a thread);
//   - one message per connection: the frame is read under a deadline and
//     decoded strictly (length bound, exact body_length, no trailing bytes);
//   - a frame with a forward list is relayed to its sub-tree through
//     protocol/forward's Forwarder before its credential is checked, and
//     the reply waits for the sub-tree and carries its ret_list;
//   - the credential is verified (auth/munge or the built-in auth/slurm,
//     whatever Authenticator is configured) and the identity comes from it
//     alone, never from the body;
//   - the body is decoded with the message type's codec and must be
//     consumed exactly;
//   - the handler for the message type runs and its reply is sent in the
//     request's protocol version, signed with the request's hash type and
//     restricted to the requester's uid (or to anyone, for SlurmUser and
//     SlurmdUser, as _resp_msg_setup does).
//
// Failures before the handler are answered as slurmd answers them:
// RESPONSE_SLURM_RC with the error code (an authentication failure, a body
// that does not unpack), except when the frame itself cannot be read, where
// there is nobody to answer.
package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// Defaults.
const (
	// DefaultMaxConns is slurmd's MAX_THREADS: connections served at once.
	DefaultMaxConns = 256
	// DefaultTimeout is MessageTimeout's default, the bound on reading a
	// request and on writing its reply.
	DefaultTimeout = 10 * time.Second
)

// levelDebug2 is Slurm's debug2 as slurmd/slurmlog maps it.
const levelDebug2 = slog.Level(-5)

// EINVAL is what slurmd answers to a message type it does not serve.
const EINVAL = 22

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Request is one received, verified and decoded message.
type Request struct {
	Header codec.Header
	// Raw is the packed body as received.
	Raw []byte
	// Body is the decoded body (nil when the codec has none for the type).
	Body any
	// Identity is the authenticated sender.
	Identity auth.Identity
	// Peer is the address the connection came from.
	Peer netip.AddrPort
	// Origin is the header's orig_addr, or Peer when the header has none
	// (the address slurmd keeps as the original sender).
	Origin codec.Addr
}

// Version is the request's protocol version, which its reply uses.
func (r *Request) Version() codec.Version { return r.Header.Version }

// Response is a handler's answer. A nil *Response sends nothing (the
// REQUEST_SHUTDOWN / REQUEST_RECONFIGURE family).
type Response struct {
	MsgType msgtype.Type
	// Body is encoded with the codec's body codec for MsgType at the
	// request's version; nil means an empty body.
	Body any
	// After, if set, runs once the reply was sent (err nil) or failed to
	// go out, on the connection's goroutine, after the connection closed.
	// slurmd registers after answering REQUEST_NODE_REGISTRATION_STATUS,
	// and reports a job's end after answering REQUEST_TERMINATE_JOB.
	After func(err error)
}

// RC returns a RESPONSE_SLURM_RC response carrying code.
func RC(code int) *Response {
	return &Response{MsgType: msgtype.RESPONSE_SLURM_RC, Body: codec.ReturnCode{RC: uint32(int32(code))}}
}

// RCMsg returns a RESPONSE_SLURM_RC_MSG response (REQUEST_LAUNCH_TASKS is
// answered with this type). An empty msg is sent as NULL, as slurmd does.
func RCMsg(code int, msg string) *Response {
	return &Response{MsgType: msgtype.RESPONSE_SLURM_RC_MSG,
		Body: codec.ReturnCodeMsg{RC: uint32(int32(code)), Msg: msg, MsgNull: msg == ""}}
}

// Handler serves one request.
type Handler interface {
	Serve(ctx context.Context, r *Request) *Response
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r *Request) *Response

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, r *Request) *Response { return f(ctx, r) }

// Mux dispatches by message type. A type with no entry is answered with
// RESPONSE_SLURM_RC EINVAL, as slurmd answers what it does not know.
type Mux map[msgtype.Type]Handler

// Serve dispatches r.
func (m Mux) Serve(ctx context.Context, r *Request) *Response {
	if h, ok := m[r.Header.MsgType]; ok {
		return h.Serve(ctx, r)
	}
	return RC(EINVAL)
}

// Server serves Slurm messages on listeners. Auth and Handler are
// required; the zero values of the rest are Slurm's defaults. Do not change
// the fields once Serve runs.
type Server struct {
	// Auth verifies requests and signs replies.
	Auth auth.Authenticator
	// Handler answers verified requests (usually a Mux).
	Handler Handler
	// Codec decodes frames, request bodies and the ret_list bodies of
	// forwarded replies, and encodes replies; nil means codec.Default.
	Codec *codec.Codec
	// Forwarder relays frames that carry a forward list. Nil means such
	// frames are answered for this node alone and every forwarded node is
	// reported failed (SLURM_COMMUNICATIONS_CONNECTION_ERROR), so the
	// sender learns at once instead of timing out.
	Forwarder *forward.Forwarder
	// MaxConns bounds connections served at once; 0 means DefaultMaxConns.
	MaxConns int
	// Timeout bounds reading a request and writing its reply; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// ReplyRUID picks the uid a reply's credential is restricted to;
	// nil means the requester's uid. slurmd uses auth.UIDAny for
	// SlurmUser and SlurmdUser.
	ReplyRUID func(id auth.Identity) uint32
	// Log receives errors and debug records; nil means slog.Default().
	Log *slog.Logger

	mu       sync.Mutex
	lns      map[net.Listener]struct{}
	closed   bool
	wg       sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc
	initOnce sync.Once
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.lns = map[net.Listener]struct{}{}
	})
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Server) codec() *codec.Codec {
	if s.Codec != nil {
		return s.Codec
	}
	return codec.Default
}

func (s *Server) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// Serve accepts connections on ln until Shutdown, serving them
// concurrently on goroutines that are reused from one connection to the
// next, at most MaxConns at once. It returns ErrServerClosed after
// Shutdown, or the accept error that stopped it.
func (s *Server) Serve(ln net.Listener) error {
	if s.Auth == nil || s.Handler == nil {
		return errors.New("server: Auth and Handler are required")
	}
	s.init()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()

	limit := s.MaxConns
	if limit <= 0 {
		limit = DefaultMaxConns
	}
	slots := make(chan struct{}, limit)
	// Idle connection goroutines wait here for the next connection: a
	// reused goroutine already has the stack a request needs, where a new
	// one grows its stack by copying on every connection (measured: 5-10%
	// of a small RPC's CPU). A new goroutine starts only when none waits,
	// so there are at most MaxConns serving plus the few on their way back
	// to wait; they end when Serve does.
	work := make(chan net.Conn)
	defer close(work)
	var delay time.Duration
	for {
		select {
		case slots <- struct{}{}:
		case <-s.ctx.Done():
			return ErrServerClosed
		}
		conn, err := ln.Accept()
		if err != nil {
			<-slots
			if s.ctx.Err() != nil {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Transient (EMFILE and the like surface as
				// temporary): back off as net/http does.
				delay = min(max(delay*2, 5*time.Millisecond), time.Second)
				s.log().Error(fmt.Sprintf("accept: %v; retrying in %v", err, delay))
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		select {
		case work <- conn:
		default:
			s.wg.Add(1)
			go s.worker(conn, work, slots)
		}
	}
}

// worker serves conn, then whatever Serve hands it, until Serve ends.
func (s *Server) worker(conn net.Conn, work <-chan net.Conn, slots <-chan struct{}) {
	defer s.wg.Done()
	for {
		s.serveConn(conn)
		<-slots
		var ok bool
		if conn, ok = <-work; !ok {
			return
		}
	}
}

// Listen opens a TCP listener for Serve. Unlike net.Listen it does not turn
// TCP keep-alive on for accepted connections: a connection carries one
// message under Timeout, so keep-alive probes would never be sent, yet
// arming them costs four setsockopt calls and a kernel timer per
// connection (2-4 µs of CPU). Slurm's daemons do not set it
// on their RPC connections either.
func Listen(ctx context.Context, network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(ctx, network, addr)
}

// Shutdown stops every Serve loop and waits until the connections in
// progress are done or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.mu.Lock()
	s.closed = true
	s.cancel() // before closing: Serve must see the cancel, not an accept error
	for ln := range s.lns {
		_ = ln.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeConn serves one message on conn and closes it. Serve uses it; it
// is exported for callers with their own accept loop (and for tests).
func (s *Server) ServeConn(conn net.Conn) {
	s.init()
	s.serveConn(conn)
}

func (s *Server) serveConn(conn net.Conn) {
	var after func(error)
	var sendErr error
	defer func() {
		_ = conn.Close()
		if after != nil {
			after(sendErr)
		}
	}()
	log := s.log()
	ctx := s.ctx
	cd := s.codec()
	peer := addrPort(conn.RemoteAddr())

	_ = conn.SetReadDeadline(time.Now().Add(s.timeout()))
	raw, err := readRequest(conn, cd.MaxMsgSize)
	if err != nil {
		log.Error(fmt.Sprintf("service_connection: slurm_receive_msg: %v (from %v)", err, peer))
		return
	}
	f, err := cd.DecodeMessage(raw[4:])
	if err != nil {
		// Nothing trustworthy to answer: the header did not decode.
		log.Error(fmt.Sprintf("service_connection: slurm_receive_msg: %v (from %v)", err, peer))
		return
	}
	origin := f.Header.OrigAddr
	if origin.IsZero() {
		origin = codecAddr(peer)
	}

	// Forward first, before the credential is looked at: every node of
	// the tree decodes the same credential on its own.
	var pending *forward.Pending
	var unforwarded []codec.RetItem
	if f.Header.Forward.Count > 0 {
		if s.Forwarder != nil {
			pending = s.Forwarder.Forward(ctx, &f, origin)
		} else {
			unforwarded = failAll(f.Header.Forward.Nodes)
		}
	}
	req := &Request{Header: f.Header, Raw: f.Body, Peer: peer, Origin: origin}
	if log.Enabled(ctx, levelDebug2) {
		log.Log(ctx, levelDebug2, fmt.Sprintf("Processing RPC: %v", f.Header.MsgType))
	}

	var resp *Response
	id, err := s.Auth.Verify(ctx, &f)
	authed := err == nil
	if !authed {
		log.Error(fmt.Sprintf("service_connection: %v: authentication failed from %v: %v", f.Header.MsgType, peer, err))
		resp = RC(authCode(err))
	} else {
		req.Identity = id
		resp = s.decodeAndServe(ctx, req)
	}
	if resp == nil {
		if pending != nil {
			pending.Wait()
		}
		return
	}
	after = resp.After

	reply, err := s.buildReply(req, resp)
	if err != nil {
		log.Error(fmt.Sprintf("%v: cannot encode reply %v: %v", f.Header.MsgType, resp.MsgType, err))
		reply, _ = s.buildReply(req, RC(slurmerr.SLURM_ERROR))
	}
	if pending != nil {
		pending.Attach(reply)
	} else if unforwarded != nil {
		reply.Header.RetList = unforwarded
	}
	// An unauthenticated requester is unknown: its error reply can only
	// be addressed to anyone.
	ruid := auth.UIDAny
	if authed {
		ruid = id.UID
		if s.ReplyRUID != nil {
			ruid = s.ReplyRUID(id)
		}
	}
	if err := s.Auth.SignHash(ctx, reply, ruid, id.Hash); err != nil {
		sendErr = err
		log.Error(fmt.Sprintf("%v: cannot sign reply: %v", f.Header.MsgType, err))
		return
	}
	_ = conn.SetWriteDeadline(time.Now().Add(s.timeout()))
	if err := wire.WriteFrame(conn, cd, reply); err != nil {
		sendErr = err
		log.Error(fmt.Sprintf("%v: cannot send reply to %v: %v", f.Header.MsgType, peer, err))
	}
}

// requestReaders buffer the reading of requests: a small request arrives
// in one segment, and through the buffer its length prefix and the rest cost
// one read instead of two. wire.ReadRaw copies the frame out, so a reader
// goes back to the pool once the frame is read.
var requestReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

func readRequest(conn net.Conn, max int) ([]byte, error) {
	br := requestReaders.Get().(*bufio.Reader)
	br.Reset(conn)
	raw, err := wire.ReadRaw(br, max)
	br.Reset(nil)
	requestReaders.Put(br)
	return raw, err
}

// decodeAndServe unpacks the body with the type's codec (strictly: every
// byte consumed) and runs the handler.
func (s *Server) decodeAndServe(ctx context.Context, req *Request) *Response {
	if bc, ok := lookup(s.codec(), req.Header.MsgType); ok {
		r := pack.NewReader(req.Raw)
		body, err := bc.Decode(r, req.Header.Version)
		if err == nil {
			err = r.Err()
		}
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			s.log().Error(fmt.Sprintf("%v from uid %d: body does not unpack: %v", req.Header.MsgType, req.Identity.UID, err))
			return RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
		}
		req.Body = body
	}
	return s.serveSafely(ctx, req)
}

// serveSafely runs the handler; a panicking handler costs its request (an
// error reply), not the daemon.
func (s *Server) serveSafely(ctx context.Context, req *Request) (resp *Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log().Error(fmt.Sprintf("%v from uid %d: handler panic: %v\n%s", req.Header.MsgType, req.Identity.UID, p, debug.Stack()))
			resp = RC(slurmerr.SLURM_ERROR)
		}
	}()
	return s.Handler.Serve(ctx, req)
}

// buildReply packs resp at the request's version, addressed as slurmd
// addresses replies (orig_addr = the request's origin).
func (s *Server) buildReply(req *Request, resp *Response) (*codec.Frame, error) {
	var body []byte
	if resp.Body != nil {
		bc, ok := lookup(s.codec(), resp.MsgType)
		if !ok {
			return nil, fmt.Errorf("no body codec for %v", resp.MsgType)
		}
		w := pack.NewWriter(nil)
		if err := bc.Encode(w, req.Header.Version, resp.Body); err != nil {
			return nil, err
		}
		body = w.Bytes()
	}
	f := codec.NewFrame(resp.MsgType, codec.AuthBlob{}, body)
	f.Header.Version = req.Header.Version
	f.Header.OrigAddr = req.Origin
	return &f, nil
}

func authCode(err error) int {
	if c := slurmerr.Code(err); c > 0 {
		return c
	}
	return slurmerr.ESLURM_AUTH_CRED_INVALID
}

// failAll reports every node of a forward list as unreachable.
func failAll(nodelist string) []codec.RetItem {
	nodes, err := forward.UniqHosts(nodelist)
	if err != nil {
		return nil
	}
	out := make([]codec.RetItem, len(nodes))
	for i, n := range nodes {
		out[i] = codec.RetItem{Err: int32(slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR),
			MsgType: msgtype.RESPONSE_FORWARD_FAILED, NodeName: n, Body: codec.Empty{}}
	}
	return out
}

func addrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// codecAddr converts a peer address to the slurm_addr_t slurmd records.
func codecAddr(ap netip.AddrPort) codec.Addr {
	ip := ap.Addr().Unmap()
	switch {
	case ip.Is4():
		return codec.AddrIPv4(ip.As4(), ap.Port())
	case ip.Is6():
		return codec.AddrIPv6(ip.As16(), ap.Port())
	}
	return codec.Addr{}
}

func lookup(cd *codec.Codec, t msgtype.Type) (codec.BodyCodec, bool) {
	if cd.Bodies == nil {
		return codec.BodyCodec{}, false
	}
	return cd.Bodies.Lookup(t)
}
