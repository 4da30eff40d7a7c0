// Package client is the client side of one Slurm RPC to slurmctld, as a
// 22.05 command does it: connect to the first controller that answers (in
// SlurmctldHost order, sweeping again once a second), send one signed frame,
// read one reply frame on the same connection, verify the reply's auth
// credential (22.05 clients refuse a reply without a valid one), close.
//
// Backup controllers (slurm_send_recv_controller_msg): once a backup
// answered, the next calls try the backups first; a backup in standby
// answers ESLURM_IN_STANDBY_MODE, and the call is retried from the primary
// after SlurmctldTimeout/2, for up to 1.5 SlurmctldTimeout in all (the
// backup takes over within SlurmctldTimeout); ESLURM_IN_STANDBY_USE_BACKUP
// (a controller in standby asked for its configuration) sends the retry to
// the backups at once.
//
// The network and munge I/O live here; framing is protocol/codec's and
// protocol/wire's, signing credential/auth's.
package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// DefaultMessageTimeout is slurm.conf's MessageTimeout default.
const DefaultMessageTimeout = 10 * time.Second

// Client sends RPCs to slurmctld. Controllers and Auth are required; the
// rest defaults to Slurm's behaviour. A Client is safe for concurrent use.
type Client struct {
	// Controllers are the controllers' "host:port" addresses in SlurmctldHost
	// order (primary first), port = SlurmctldPort.
	Controllers []string
	// Auth signs requests and verifies replies (auth.Munge for
	// AuthType=auth/munge, slurmauth.Slurm for the built-in auth).
	Auth auth.Authenticator
	// SlurmUserUID is SlurmUser's uid: ping and shutdown credentials are
	// restricted to it.
	SlurmUserUID uint32
	// MessageTimeout bounds the send and the receive; 0 means
	// DefaultMessageTimeout.
	MessageTimeout time.Duration
	// ConnectTimeout bounds each connect attempt (slurm.conf's TCPTimeout,
	// as _slurm_connect): a controller host that is down costs this much
	// before the next controller is tried. 0 means DefaultTCPTimeout.
	ConnectTimeout time.Duration
	// Sweeps is how many times the controller list is tried before giving
	// up with SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR; 0 means Slurm's
	// choice, MessageTimeout in whole seconds.
	Sweeps int
	// SweepDelay separates sweeps; 0 means 1 s.
	SweepDelay time.Duration
	// Version is the protocol version requests carry; 0 means codec.Current
	// (22.05).
	Version codec.Version
	// Codec decodes replies; nil means codec.Default.
	Codec *codec.Codec
	// Dial opens connections; nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// SlurmctldTimeout is slurm.conf's SlurmctldTimeout, which bounds the
	// retries while a backup in standby answers; 0 means its default,
	// 120 s.
	SlurmctldTimeout time.Duration

	// useBackup is slurm_open_controller_conn's use_backup (1: the last
	// call was answered by a backup, so the primary is skipped). A plain
	// word used atomically, so that a Client can still be copied.
	useBackup uint32
}

// DefaultTCPTimeout is slurm.conf's TCPTimeout default.
const DefaultTCPTimeout = 2 * time.Second

// DefaultSlurmctldTimeout is slurm.conf's SlurmctldTimeout default.
const DefaultSlurmctldTimeout = 120 * time.Second

// Reply is a verified reply.
type Reply struct {
	Frame codec.Frame
	// Sender is the identity in the reply's credential (slurmctld's user).
	Sender auth.Identity
	// Controller is the index in Controllers that answered.
	Controller int
}

// Sentinel errors. Each also matches the Slurm code a 22.05 client reports
// (errors.Is(err, slurmerr.Error{Code: ...}); slurmerr.Code(err) gives it).
var (
	// ErrConnect: no controller accepted a connection
	// (SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR).
	ErrConnect = errors.New("client: cannot connect to slurmctld")
	// ErrSend: signing or writing the request failed
	// (SLURMCTLD_COMMUNICATIONS_SEND_ERROR).
	ErrSend = errors.New("client: cannot send to slurmctld")
	// ErrReceive: the reply did not arrive or does not parse
	// (SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR).
	ErrReceive = errors.New("client: no valid reply from slurmctld")
	// ErrReplyAuth: the reply's credential did not verify
	// (SLURM_PROTOCOL_AUTHENTICATION_ERROR, or ESLURM_PROTOCOL_INCOMPLETE_PACKET
	// when its hash does not match the reply). The auth error is wrapped.
	ErrReplyAuth = errors.New("client: reply authentication failed")
	// ErrUnexpected: the reply has a message type the call does not expect
	// (SLURM_UNEXPECTED_MSG_ERROR).
	ErrUnexpected = errors.New("client: unexpected reply message type")
)

func (c *Client) timeout() time.Duration {
	if c.MessageTimeout > 0 {
		return c.MessageTimeout
	}
	return DefaultMessageTimeout
}

func (c *Client) sweeps() int {
	if c.Sweeps > 0 {
		return c.Sweeps
	}
	return max(1, int(c.timeout()/time.Second))
}

func (c *Client) dial(ctx context.Context, addr string) (net.Conn, error) {
	t := c.ConnectTimeout
	if t <= 0 {
		t = DefaultTCPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	if c.Dial != nil {
		return c.Dial(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// Call sends a request of type mt with the packed body to the controllers
// (credential for any uid, as slurm_send_recv_controller_msg) and returns
// the verified reply. A RESPONSE_SLURM_RC reply is returned as is; see
// ReturnCode and CallRC.
func (c *Client) Call(ctx context.Context, mt msgtype.Type, body []byte) (*Reply, error) {
	start := time.Now()
	for {
		r, err := c.callOnce(ctx, mt, body)
		if err != nil {
			return nil, err
		}
		rc := standbyCode(&r.Frame)
		if rc == 0 || len(c.Controllers) < 2 || time.Since(start) >= c.slurmctldTimeout()*3/2 {
			return r, nil
		}
		if rc == slurmerr.ESLURM_IN_STANDBY_MODE {
			// The primary does not answer and the backup has not taken
			// over yet.
			select {
			case <-ctx.Done():
				return r, nil
			case <-time.After(c.slurmctldTimeout() / 2):
			}
			c.setUseBackup(false)
		} else {
			// A controller in standby was asked: try the backups.
			c.setUseBackup(true)
		}
	}
}

func (c *Client) callOnce(ctx context.Context, mt msgtype.Type, body []byte) (*Reply, error) {
	conn, idx, err := c.connectAny(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	r, err := c.exchange(ctx, conn, mt, body, auth.UIDAny)
	if err != nil {
		return nil, err
	}
	r.Controller = idx
	return r, nil
}

func (c *Client) setUseBackup(b bool) {
	v := uint32(0)
	if b {
		v = 1
	}
	atomic.StoreUint32(&c.useBackup, v)
}

func (c *Client) slurmctldTimeout() time.Duration {
	if c.SlurmctldTimeout > 0 {
		return c.SlurmctldTimeout
	}
	return DefaultSlurmctldTimeout
}

// standbyCode is the return code of a RESPONSE_SLURM_RC that says the
// controller is in standby, else 0.
func standbyCode(f *codec.Frame) int {
	if f.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
		return 0
	}
	switch c := slurmerr.Code(ReturnCode(f)); c {
	case slurmerr.ESLURM_IN_STANDBY_MODE, slurmerr.ESLURM_IN_STANDBY_USE_BACKUP:
		return c
	}
	return 0
}

// CallTo sends one request to controller dest only (0 = primary), its
// credential restricted to rUID, as Slurm's _send_message_controller does
// for ping, shutdown and takeover.
func (c *Client) CallTo(ctx context.Context, dest int, mt msgtype.Type, body []byte, rUID uint32) (*Reply, error) {
	if dest < 0 || dest >= len(c.Controllers) {
		return nil, newErr(ErrConnect, slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR, nil,
			"no controller %d (%d configured)", dest, len(c.Controllers))
	}
	conn, err := c.dial(ctx, c.Controllers[dest])
	if err != nil {
		return nil, newErr(ErrConnect, slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR, err,
			"%s", c.Controllers[dest])
	}
	defer conn.Close()
	r, err := c.exchange(ctx, conn, mt, body, rUID)
	if err != nil {
		return nil, err
	}
	r.Controller = dest
	return r, nil
}

// CallRC is Call for requests answered by RESPONSE_SLURM_RC: nil for
// SLURM_SUCCESS, the return code as a slurmerr.Error otherwise.
func (c *Client) CallRC(ctx context.Context, mt msgtype.Type, body []byte) error {
	r, err := c.Call(ctx, mt, body)
	if err != nil {
		return err
	}
	return ReturnCode(&r.Frame)
}

// Ping is slurm_ping: REQUEST_PING to controller dest, restricted to
// SlurmUser, answered by RESPONSE_SLURM_RC.
func (c *Client) Ping(ctx context.Context, dest int) error {
	r, err := c.CallTo(ctx, dest, msgtype.REQUEST_PING, nil, c.SlurmUserUID)
	if err != nil {
		return err
	}
	return ReturnCode(&r.Frame)
}

// ReturnCode decodes a RESPONSE_SLURM_RC frame: nil for rc 0, otherwise a
// slurmerr.Error with the code. Any other message type gives ErrUnexpected
// (SLURM_UNEXPECTED_MSG_ERROR); a malformed body ErrReceive.
func ReturnCode(f *codec.Frame) error {
	if f.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
		return newErr(ErrUnexpected, slurmerr.SLURM_UNEXPECTED_MSG_ERROR, nil,
			"%v, want RESPONSE_SLURM_RC", f.Header.MsgType)
	}
	r := pack.NewReader(f.Body)
	rc := r.U32()
	if err := r.Done(); err != nil {
		return newErr(ErrReceive, slurmerr.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR, err,
			"RESPONSE_SLURM_RC body of %d bytes", len(f.Body))
	}
	return slurmerr.FromRC(rc)
}

// connectAny sweeps the controllers in order until one accepts.
func (c *Client) connectAny(ctx context.Context) (net.Conn, int, error) {
	if len(c.Controllers) == 0 {
		return nil, -1, newErr(ErrConnect, slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR, nil, "no controllers configured")
	}
	delay := c.SweepDelay
	if delay <= 0 {
		delay = time.Second
	}
	var errs []error
	for sweep := 0; sweep < c.sweeps(); sweep++ {
		if sweep > 0 {
			select {
			case <-ctx.Done():
				return nil, -1, newErr(ErrConnect, slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR,
					errors.Join(append(errs, ctx.Err())...), "after %d sweeps", sweep)
			case <-time.After(delay):
			}
		}
		errs = errs[:0]
		first := 0
		if atomic.LoadUint32(&c.useBackup) == 1 && len(c.Controllers) > 1 {
			first = 1
		}
		for i := first; i < len(c.Controllers); i++ {
			conn, err := c.dial(ctx, c.Controllers[i])
			if err == nil {
				c.setUseBackup(i > 0)
				return conn, i, nil
			}
			errs = append(errs, err)
		}
		c.setUseBackup(false)
	}
	return nil, -1, newErr(ErrConnect, slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR,
		errors.Join(errs...), "after %d sweeps", c.sweeps())
}

// exchange signs and sends one request on conn and reads and verifies the
// reply.
func (c *Client) exchange(ctx context.Context, conn net.Conn, mt msgtype.Type, body []byte, rUID uint32) (*Reply, error) {
	if c.Auth == nil {
		return nil, newErr(ErrSend, slurmerr.SLURMCTLD_COMMUNICATIONS_SEND_ERROR, nil, "no auth configured")
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	f := codec.NewFrame(mt, codec.AuthBlob{}, body)
	if c.Version != 0 {
		f.Header.Version = c.Version
	}
	if err := c.Auth.Sign(ctx, &f, rUID); err != nil {
		return nil, newErr(ErrSend, slurmerr.SLURMCTLD_COMMUNICATIONS_SEND_ERROR, err, "%v", mt)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(c.timeout()))
	if err := wire.WriteFrame(conn, c.Codec, &f); err != nil {
		return nil, newErr(ErrSend, slurmerr.SLURMCTLD_COMMUNICATIONS_SEND_ERROR, ctxErr(ctx, err), "%v", mt)
	}
	_ = conn.SetReadDeadline(time.Now().Add(c.timeout()))
	reply, err := wire.ReadFrame(conn, c.Codec, 0)
	if err != nil {
		return nil, newErr(ErrReceive, slurmerr.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR, ctxErr(ctx, err),
			"reply to %v", mt)
	}
	id, err := c.Auth.Verify(ctx, &reply)
	if err != nil {
		code := slurmerr.SLURM_PROTOCOL_AUTHENTICATION_ERROR
		if errors.Is(err, auth.ErrHash) || errors.Is(err, auth.ErrPlugin) || errors.Is(err, auth.ErrUnpack) {
			code = slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET
		}
		return nil, newErr(ErrReplyAuth, code, err, "%v reply to %v", reply.Header.MsgType, mt)
	}
	return &Reply{Frame: reply, Sender: id}, nil
}

func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	return err
}

// callError carries a sentinel, the Slurm code and the cause; the code comes
// first so slurmerr.Code finds it before any code inside the cause.
type callError struct {
	msg      string
	sentinel error
	code     int
	cause    error
}

func (e *callError) Error() string { return e.msg }

func (e *callError) Unwrap() []error {
	errs := []error{slurmerr.Error{Code: e.code}, e.sentinel}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

func newErr(sentinel error, code int, cause error, format string, args ...any) error {
	msg := sentinel.Error() + ": " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &callError{msg: msg, sentinel: sentinel, code: code, cause: cause}
}
