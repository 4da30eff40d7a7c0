package munge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultSocket is munged's socket on Debian and most distributions.
const DefaultSocket = "/run/munge/munge.socket.2"

// Defaults mirroring libmunge (munge_defs.h) and Slurm's auth/munge plugin.
const (
	DefaultTimeout           = 2 * time.Second        // per transaction (MUNGE_SOCKET_TIMEOUT_MSECS)
	DefaultAttempts          = 5                      // per call (MUNGE_SOCKET_RETRY_ATTEMPTS)
	DefaultAttemptDelay      = 10 * time.Millisecond  // times the attempt number
	DefaultConnectAttempts   = 10                     // on ECONNREFUSED (backlog full)
	DefaultConnectRetryDelay = 50 * time.Millisecond  // times the attempt number
	DefaultSocketRetries     = 20                     // Slurm's RETRY_COUNT on EMUNGE_SOCKET
	DefaultSocketRetryDelay  = 100 * time.Millisecond // Slurm's RETRY_USEC
)

// Client talks to one munged over its unix socket. The zero value uses the
// defaults above and DefaultSocket; a Client is safe for concurrent use (each
// call opens its own connection, as libmunge does).
//
// Retries happen at two levels, as in Slurm: each call makes up to Attempts
// transactions (connect, send, receive) with the retry counter in the header
// incremented, which lets munged tolerate the replay of a credential whose
// first decode reply was lost; and if that still ends in EMUNGE_SOCKET, the
// whole call is repeated SocketRetries more times, SocketRetryDelay apart.
// A context deadline or cancellation stops both.
type Client struct {
	Socket string // munged socket path; "" = DefaultSocket

	// Zero means the default. A negative retry count or delay means none;
	// a negative Timeout means no per-transaction limit (the context's
	// deadline still applies).
	Timeout           time.Duration
	Attempts          int
	ConnectAttempts   int
	SocketRetries     int
	SocketRetryDelay  time.Duration
	AttemptDelay      time.Duration
	ConnectRetryDelay time.Duration
	MaxReplyLen       int // bound on a reply body; 0 = DefaultMaxReplyLen
}

// Credential is what munged returned for a decode.
type Credential struct {
	Payload []byte // the data munged into the credential (nil if none)
	UID     uint32 // identity of the process that encoded it
	GID     uint32
	// Origin is the encoding host's address as munged stamped it; the zero
	// Addr when munged had none.
	Origin      netip.Addr
	Encoded     time.Time     // encode time (second resolution)
	Decoded     time.Time     // munged's clock at decode
	TTL         time.Duration // the credential's time-to-live
	Cipher      Cipher
	MAC         MAC
	Zip         Zip
	Realm       string
	UIDRestrict uint32 // UIDAny if unrestricted
	GIDRestrict uint32 // GIDAny if unrestricted
}

// EncodeOption adjusts an encode request. With none, the request is what
// libmunge sends for a fresh context: munged's default cipher, MAC,
// compression and TTL, no realm, and no uid or gid restriction.
type EncodeOption func(*encReq)

// WithUIDRestriction lets only uid decode the credential (Slurm's r_uid;
// UIDAny lifts the restriction). munged refuses the credential to every other
// client, root included.
func WithUIDRestriction(uid uint32) EncodeOption { return func(r *encReq) { r.uid = uid } }

// WithGIDRestriction lets only members of gid decode the credential (GIDAny
// lifts the restriction).
func WithGIDRestriction(gid uint32) EncodeOption { return func(r *encReq) { r.gid = gid } }

// WithTTL sets the credential's time-to-live: 0 means munged's default
// (300 s unless configured), a negative value munged's maximum, anything else
// is rounded up to whole seconds. munged clamps it to its --max-ttl.
func WithTTL(d time.Duration) EncodeOption {
	return func(r *encReq) {
		switch {
		case d < 0:
			r.ttl = ttlMaximum
		case d == 0:
			r.ttl = 0
		default:
			s := (d + time.Second - 1) / time.Second
			if s >= time.Duration(ttlMaximum) {
				r.ttl = ttlMaximum
			} else {
				r.ttl = uint32(s)
			}
		}
	}
}

// WithAlgorithms requests a specific cipher, MAC and compression instead of
// munged's defaults (CipherDefault, MACDefault, ZipDefault). Slurm never
// does this; it is here for tests and tools.
func WithAlgorithms(c Cipher, m MAC, z Zip) EncodeOption {
	return func(r *encReq) { r.cipher, r.mac, r.zip = c, m, z }
}

func (c *Client) socket() string {
	if c == nil || c.Socket == "" {
		return DefaultSocket
	}
	return c.Socket
}

func pick[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	if v < 0 {
		return 0
	}
	return v
}

// Encode asks munged for a credential carrying payload, restricted as opts
// says, and returns its text ("MUNGE:...:").
func (c *Client) Encode(ctx context.Context, payload []byte, opts ...EncodeOption) (string, error) {
	req := encReq{cipher: CipherDefault, mac: MACDefault, zip: ZipDefault, uid: UIDAny, gid: GIDAny}
	for _, o := range opts {
		o(&req)
	}
	if 20+len(payload) > MaxRequestLen {
		return "", &Error{Code: CodeBadLength, Message: fmt.Sprintf("payload of %d bytes exceeds munged's request limit", len(payload))}
	}
	var cred string
	err := c.call(ctx, func(retry uint8) []byte { return marshalEncReq(req, payload, retry) }, msgEncRsp,
		func(body []byte) error {
			p, err := parseEncRsp(body)
			if err != nil {
				return &Error{Code: CodeSocket, Message: "failed to unpack encode reply", Err: err}
			}
			if p.status != CodeSuccess {
				return &Error{Code: p.status, Message: p.errStr}
			}
			if p.cred == "" {
				return &Error{Code: CodeSnafu, Message: "munged returned an empty credential"}
			}
			cred = p.cred
			return nil
		})
	return cred, err
}

// Decode asks munged to validate cred and returns what it carries.
//
// On success the error is nil. When munged verified the credential but
// rejected it as expired, rewound or replayed (see Decoded), both a
// *Credential and the error are returned, so callers can log who sent it;
// such a credential must not be trusted. For every other failure the
// *Credential is nil.
func (c *Client) Decode(ctx context.Context, cred string) (*Credential, error) {
	if cred == "" {
		return nil, &Error{Code: CodeBadArg, Message: "no credential specified"}
	}
	if strings.IndexByte(cred, 0) >= 0 {
		return nil, &Error{Code: CodeBadArg, Message: "credential contains a NUL byte"}
	}
	if 4+len(cred)+1 > MaxRequestLen {
		return nil, &Error{Code: CodeBadLength, Message: fmt.Sprintf("credential of %d bytes exceeds munged's request limit", len(cred))}
	}
	var out *Credential
	err := c.call(ctx, func(retry uint8) []byte { return marshalDecReq(cred, retry) }, msgDecRsp,
		func(body []byte) error {
			p, err := parseDecRsp(body)
			if err != nil {
				return &Error{Code: CodeSocket, Message: "failed to unpack decode reply", Err: err}
			}
			out = nil
			if p.status == CodeSuccess || Decoded(&Error{Code: p.status}) {
				out = p.credential()
			}
			if p.status != CodeSuccess {
				return &Error{Code: p.status, Message: p.errStr}
			}
			return nil
		})
	if err != nil && !Decoded(err) {
		out = nil
	}
	return out, err
}

func (p *decRsp) credential() *Credential {
	c := &Credential{
		UID:         p.uid,
		GID:         p.gid,
		Origin:      p.addr,
		Encoded:     time.Unix(int64(p.encodeTime), 0),
		Decoded:     time.Unix(int64(p.decodeTime), 0),
		TTL:         time.Duration(p.ttl) * time.Second,
		Cipher:      p.cipher,
		MAC:         p.mac,
		Zip:         p.zip,
		Realm:       p.realm,
		UIDRestrict: p.ruid,
		GIDRestrict: p.rgid,
	}
	if len(p.data) > 0 {
		c.Payload = append([]byte(nil), p.data...)
	}
	return c
}

// call runs one request with Slurm's outer retry on EMUNGE_SOCKET.
func (c *Client) call(ctx context.Context, req func(retry uint8) []byte, rspType uint8, handle func([]byte) error) error {
	retries := DefaultSocketRetries
	delay := DefaultSocketRetryDelay
	if c != nil {
		retries = pick(c.SocketRetries, DefaultSocketRetries)
		delay = pick(c.SocketRetryDelay, DefaultSocketRetryDelay)
	}
	for i := 0; ; i++ {
		err := c.xfer(ctx, req, rspType, handle)
		if err == nil || !errors.Is(err, ErrSocket) || i >= retries || ctx.Err() != nil {
			return err
		}
		if serr := sleep(ctx, delay); serr != nil {
			return err
		}
	}
}

// xfer is libmunge's transaction loop: up to Attempts tries, each on a fresh
// connection, the header's retry counter telling munged which try it is.
// Transport failures are retried; munged's own verdicts are not.
func (c *Client) xfer(ctx context.Context, req func(retry uint8) []byte, rspType uint8, handle func([]byte) error) error {
	attempts, delay := DefaultAttempts, DefaultAttemptDelay
	if c != nil {
		attempts = pick(c.Attempts, DefaultAttempts)
		delay = pick(c.AttemptDelay, DefaultAttemptDelay)
	}
	attempts = max(attempts, 1)
	var err error
	for i := 1; ; i++ {
		var body []byte
		body, err = c.transact(ctx, req(uint8(min(i-1, 255))), rspType)
		if err == nil {
			return handle(body)
		}
		var me *Error
		if errors.As(err, &me) && me.Code == CodeBadLength {
			return err
		}
		if errors.Is(err, errDial) || i >= attempts || ctx.Err() != nil {
			// libmunge gives up at once when it cannot connect; the
			// outer (Slurm) loop retries that.
			return err
		}
		if serr := sleep(ctx, time.Duration(i)*delay); serr != nil {
			return err
		}
	}
}

var errDial = errors.New("cannot connect to munged")

// transact is one connect/send/receive on a fresh connection.
//
// A daemon makes two of these per RPC (decode the request's credential,
// encode the reply's), so the path is kept lean: no context or timer of its
// own (one connection deadline bounds it), no stat of the socket before
// connecting (only a failed connect pays for the diagnosis), and the reply
// read through a buffer that holds a typical one, so it costs one read.
// (Plain blocking sockets, which would skip the poller's epoll_ctl calls,
// were measured and cost more: every wait for munged then parks an OS
// thread instead of a goroutine.)
func (c *Client) transact(ctx context.Context, msg []byte, rspType uint8) ([]byte, error) {
	timeout := DefaultTimeout
	maxReply := DefaultMaxReplyLen
	if c != nil {
		timeout = pick(c.Timeout, DefaultTimeout)
		if c.MaxReplyLen > 0 {
			maxReply = c.MaxReplyLen
		}
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline = dl
	}
	sockErr := func(what string, err error) error {
		// The connection deadline and the context's deadline race;
		// report a timed-out transaction as the context error either
		// way.
		cerr := ctx.Err()
		if cerr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
			cerr = context.DeadlineExceeded
		}
		if cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", err, cerr)
		}
		return &Error{Code: CodeSocket, Message: what, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, sockErr("transaction not started", err)
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// Also the check that the runtime poller took the socket: without it
	// a read would fail with EAGAIN instead of waiting.
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, sockErr("cannot set a deadline on the munged connection", err)
	}
	// Close the connection if the context is cancelled mid-transfer.
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if _, err := conn.Write(msg); err != nil {
		return nil, sockErr("failed to send request to munged", err)
	}
	br := replyReaders.Get().(*bufio.Reader)
	br.Reset(conn)
	defer func() {
		br.Reset(nil)
		replyReaders.Put(br)
	}()
	return readReply(br, rspType, maxReply, sockErr)
}

// replyReaders buffer munged's replies; readReply copies the body out, so
// a reader goes back to the pool as soon as the reply is read.
var replyReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1024) }}

// readReply reads one header + body, bounding the body length before
// allocating it.
func readReply(r io.Reader, rspType uint8, maxReply int, sockErr func(string, error) error) ([]byte, error) {
	var hdr [hdrLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, sockErr("failed to receive reply header from munged", err)
	}
	typ, n, err := parseHeader(hdr[:])
	if err != nil {
		return nil, sockErr("failed to unpack reply header", err)
	}
	if typ != rspType {
		what := fmt.Sprintf("unexpected reply type %d, want %d", typ, rspType)
		if typ == msgAuthFDReq {
			what += " (munged wants fd-passing authentication, unsupported)"
		}
		return nil, sockErr(what, ErrMalformedReply)
	}
	if uint64(n) > uint64(maxReply) {
		return nil, &Error{Code: CodeBadLength, Message: fmt.Sprintf("reply of %d bytes exceeds limit of %d", n, maxReply)}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, sockErr("failed to receive reply body from munged", err)
	}
	return body, nil
}

// dial connects to munged. A unix-socket connect does not block (a full
// listen backlog is EAGAIN at once), so it needs neither the context nor a
// timer.
func (c *Client) dial(ctx context.Context) (*os.File, error) {
	path := c.socket()
	fail := func(err error) error {
		return &Error{Code: CodeSocket, Message: fmt.Sprintf("failed to connect to %q", path), Err: errors.Join(errDial, err)}
	}
	if len(path) >= 108 {
		return nil, &Error{Code: CodeOverflow, Message: fmt.Sprintf("socket path %q too long", path)}
	}
	attempts, delay := DefaultConnectAttempts, DefaultConnectRetryDelay
	if c != nil {
		attempts = pick(c.ConnectAttempts, DefaultConnectAttempts)
		delay = pick(c.ConnectRetryDelay, DefaultConnectRetryDelay)
	}
	for i := 1; ; i++ {
		conn, err := dialUnix(path)
		if err == nil {
			return conn, nil
		}
		// Say why in munge's words; only a failed connect pays for the
		// stat.
		if st, serr := os.Stat(path); serr != nil {
			return nil, fail(fmt.Errorf("%w (is munged running?)", serr))
		} else if st.Mode()&os.ModeSocket == 0 {
			return nil, fail(fmt.Errorf("%s is not a socket", path))
		}
		// A full listen backlog (EAGAIN) or munged between close and
		// listen (ECONNREFUSED) is worth another try.
		retry := errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EAGAIN)
		if !retry || i >= attempts || ctx.Err() != nil {
			return nil, fail(err)
		}
		if serr := sleep(ctx, time.Duration(i)*delay); serr != nil {
			return nil, fail(err)
		}
	}
}

// dialUnix connects a non-blocking unix stream socket to path and hands it
// to the runtime poller as an *os.File (deadlines work on it). This is
// net.DialUnix without what a munged transaction does not use: net asks the
// kernel for both socket addresses after connecting and allocates them,
// two system calls per transaction.
func dialUnix(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	sa := &syscall.SockaddrUnix{Name: path}
	for {
		err = syscall.Connect(fd, sa)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		_ = syscall.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
