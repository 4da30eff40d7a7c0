package forward

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Sender is the root of a forwarding tree: what slurmctld's agent and srun
// do with slurm_send_recv_msgs. Resolve and Auth are required. A Sender is
// safe for concurrent use.
type Sender struct {
	// Resolve maps node names to addresses.
	Resolve Resolver
	// Auth signs each request (a fresh credential per head, as
	// slurm_send_node_msg makes one per send) and verifies each head's
	// reply (slurm_receive_msgs does; a reply that fails is reported as
	// the head's failure with SLURM_PROTOCOL_AUTHENTICATION_ERROR, its
	// ret_list is kept).
	Auth auth.Authenticator
	// Codec decodes replies; its Bodies must know every reply type the
	// message can get (ret_list entries cannot be skipped otherwise).
	// nil means codec.Default.
	Codec *codec.Codec
	// MessageTimeout is slurm.conf's MessageTimeout; 0 means 10 s.
	MessageTimeout time.Duration
	// TCPTimeout is slurm.conf's TCPTimeout, the connect timeout; 0
	// means 2 s.
	TCPTimeout time.Duration
	// TreeWidth is slurm.conf's TreeWidth, used when a Request has none;
	// 0 means DefaultTreeWidth.
	TreeWidth int
	// ConnectRetries is the retry budget for connecting to a head, in
	// seconds as slurm_send_addr_recv_msgs counts them: a refused connect
	// is retried one second later and uses 1; a timed-out connect is
	// retried at once and uses TCPTimeout's whole seconds (at least 1).
	// 0 means Slurm's MIN(MessageTimeout s, 10), negative means no retry.
	ConnectRetries int
	// MaxConns bounds the connections open at once; 0 means
	// DefaultMaxConns, negative means no bound.
	MaxConns int
	// Dial opens connections; nil means a net.Dialer.
	Dial DialFunc
}

// Request is one message to send to many nodes.
type Request struct {
	MsgType msgtype.Type
	Body    []byte
	// Version is the protocol version; 0 means codec.Current.
	Version codec.Version
	Flags   codec.Flags
	// RUID restricts the credential (auth.UIDAny, or SlurmUser's uid).
	RUID uint32
	// TreeWidth is the header's forward.tree_width and the width of the
	// first split; 0 leaves the header field 0 (as slurmctld sends it:
	// every slurmd then uses its own TreeWidth) and splits by the
	// Sender's TreeWidth.
	TreeWidth uint16
	// Timeout is the forward timeout sent in headers; 0 means
	// MessageTimeout.
	Timeout time.Duration
}

// Result is one node's outcome.
type Result struct {
	Node string
	// MsgType is the node's reply type, RESPONSE_FORWARD_FAILED when the
	// message or its reply did not get through, or 0 for messages that
	// get no reply (REQUEST_SHUTDOWN, REQUEST_RECONFIGURE,
	// REQUEST_REBOOT_NODES) once sent.
	MsgType msgtype.Type
	// Err is the ret_list error: 0, or the Slurm error of a failed
	// forward (SLURM_COMMUNICATIONS_CONNECTION_ERROR,
	// SLURM_UNKNOWN_FORWARD_ADDR, SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT, ...).
	Err int
	// Body is the decoded reply body (codec.ReturnCode for
	// RESPONSE_SLURM_RC), or the raw bytes when Codec has no body codec
	// for MsgType.
	Body any
}

// Failed reports whether the message did not reach the node.
func (r Result) Failed() bool { return r.MsgType == msgtype.RESPONSE_FORWARD_FAILED }

// RC is slurm_get_return_code's view of the result: Err for a failed
// forward, the return code of RESPONSE_SLURM_RC and RESPONSE_SLURM_RC_MSG,
// 0 otherwise.
func (r Result) RC() int {
	if r.Failed() {
		return r.Err
	}
	switch b := r.Body.(type) {
	case codec.ReturnCode:
		return int(int32(b.RC))
	case codec.ReturnCodeMsg:
		return int(int32(b.RC))
	}
	return 0
}

func (r Result) String() string {
	if r.Failed() {
		return fmt.Sprintf("%s: forward failed (err %d)", r.Node, r.Err)
	}
	return fmt.Sprintf("%s: %v rc=%d", r.Node, r.MsgType, r.RC())
}

// ErrNoNodes: the request names no node.
var ErrNoNodes = errors.New("forward: no nodes to send to")

// Send delivers req to nodes (sorted and de-duplicated as Slurm does) and
// returns one Result per node, in that order. It returns when every span
// has answered, failed or timed out, or ctx is done (the nodes still open
// then fail). The error is for unusable arguments only; node failures are
// Results.
func (s *Sender) Send(ctx context.Context, nodes []string, req Request) ([]Result, error) {
	if s.Resolve == nil || s.Auth == nil {
		return nil, errors.New("forward: Sender needs Resolve and Auth")
	}
	nodes = uniq(nodes)
	if len(nodes) == 0 {
		return nil, ErrNoNodes
	}
	msgTimeout := s.MessageTimeout
	if msgTimeout <= 0 {
		msgTimeout = DefaultMessageTimeout
	}
	width := int(req.TreeWidth)
	if width == 0 {
		width = s.TreeWidth
	}
	if width <= 0 {
		width = DefaultTreeWidth
	}
	fwd := req.Timeout
	if fwd <= 0 {
		fwd = msgTimeout
	}
	retries := s.ConnectRetries
	if retries == 0 {
		retries = connectRetries(msgTimeout)
	}
	version := req.Version
	if version == 0 {
		version = codec.Current
	}
	cd := s.Codec
	if cd == nil {
		cd = codec.Default
	}
	t := &tree{
		root:         true,
		resolve:      s.Resolve,
		dial:         s.Dial,
		codec:        cd,
		msgTimeout:   msgTimeout,
		tcpTimeout:   tcpTimeout(s.TCPTimeout),
		timeoutWidth: width,
		hdrWidth:     req.TreeWidth,
		hdrTimeout:   true,
		retries:      max(retries, 0),
		sem:          maxConns(s.MaxConns),
		hdr: codec.Header{
			Version:    version,
			Flags:      req.Flags,
			MsgType:    req.MsgType,
			BodyLength: uint32(len(req.Body)),
		},
		body: req.Body,
		sign: func(ctx context.Context, f *codec.Frame) error {
			return s.Auth.Sign(ctx, f, req.RUID)
		},
		verify: func(ctx context.Context, f *codec.Frame) error {
			_, err := s.Auth.Verify(ctx, f)
			return err
		},
	}
	t.start(ctx, Split(nodes, width), fwd)
	items := t.wait(nodes)
	out := make([]Result, len(items))
	for i, it := range items {
		out[i] = Result{Node: it.NodeName, MsgType: it.MsgType, Err: int(it.Err), Body: it.Body}
	}
	return out, nil
}
