package forward

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// Resolver maps a node name to the "host:port" its slurmd listens on
// (slurm.conf NodeAddr and Port). An error makes the node a
// SLURM_UNKNOWN_FORWARD_ADDR failure.
type Resolver func(node string) (string, error)

// DialFunc opens connections; nil means a net.Dialer.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DefaultMaxConns bounds the connections one tree keeps open at once when
// MaxConns is 0. Slurm runs one thread per span (and one per node of an
// abandoned span) without a bound.
const DefaultMaxConns = 256

// failed is the ret_list entry mark_as_failed_forward makes.
func failed(node string, code int) codec.RetItem {
	return codec.RetItem{Err: int32(code), MsgType: msgtype.RESPONSE_FORWARD_FAILED, NodeName: node, Body: codec.Empty{}}
}

// noReply reports the message types Slurm counts as delivered once sent.
func noReply(t msgtype.Type) bool {
	return t == msgtype.REQUEST_SHUTDOWN || t == msgtype.REQUEST_RECONFIGURE || t == msgtype.REQUEST_REBOOT_NODES
}

// collector gathers ret_list entries from the span goroutines.
type collector struct {
	mu    sync.Mutex
	items []codec.RetItem
	wg    sync.WaitGroup
}

func (c *collector) add(items ...codec.RetItem) {
	c.mu.Lock()
	c.items = append(c.items, items...)
	c.mu.Unlock()
}

// tree is one fan-out in progress, on the root (Sender) or on an interior
// node (Forwarder).
type tree struct {
	root       bool
	resolve    Resolver
	dial       DialFunc
	codec      *codec.Codec
	msgTimeout time.Duration
	tcpTimeout time.Duration // connect timeout
	// timeoutWidth is the width in the reply-wait formula.
	timeoutWidth int
	// hdrWidth and hdrTimeout go into the forward block of the headers this
	// tree sends (an interior 22.05 slurmd sends 0 for both).
	hdrWidth   uint16
	hdrTimeout bool
	retries    int
	sem        chan struct{}
	hdr        codec.Header // Version, Flags, MsgType, BodyLength, OrigAddr
	body       []byte
	auth       codec.AuthBlob // interior: the received credential
	sign       func(ctx context.Context, f *codec.Frame) error
	verify     func(ctx context.Context, f *codec.Frame) error
	col        collector
}

// start runs span for every sub-list.
func (t *tree) start(ctx context.Context, spans [][]string, fwd time.Duration) {
	for _, s := range spans {
		t.col.wg.Add(1)
		go t.span(ctx, s, fwd)
	}
}

// abandon sends to every node of nodes directly (no forwarding), as Slurm
// does with the rest of a span whose head failed.
func (t *tree) abandon(ctx context.Context, nodes []string, fwd time.Duration) {
	if !t.root {
		// _forward_msg_internal with timeout 0: MessageTimeout.
		fwd = t.msgTimeout
	}
	for _, n := range nodes {
		t.col.wg.Add(1)
		go t.span(ctx, []string{n}, fwd)
	}
}

type stage int

const (
	stageOK stage = iota
	stageConnect
	stageSend
	stageRecv
)

// span delivers the message to nodes, nodes[0] being the head
// (_fwd_tree_thread on the root, _forward_thread on a slurmd).
func (t *tree) span(ctx context.Context, nodes []string, fwd time.Duration) {
	defer t.col.wg.Done()
	for len(nodes) > 0 {
		head, rest := nodes[0], nodes[1:]
		nodes = rest
		addr, err := t.resolve(head)
		if err != nil {
			t.col.add(failed(head, slurmerr.SLURM_UNKNOWN_FORWARD_ADDR))
			continue
		}
		items, st, code := t.exchange(ctx, head, addr, rest, fwd)
		switch st {
		case stageConnect, stageSend:
			t.col.add(failed(head, code))
			t.abandon(ctx, rest, fwd)
			return
		case stageRecv:
			t.col.add(failed(head, code))
			if t.root {
				t.abandon(ctx, rest, fwd)
				return
			}
			continue // a slurmd makes the next node the head
		}
		if noReply(t.hdr.MsgType) {
			for _, n := range append([]string{head}, rest...) {
				t.col.add(codec.RetItem{NodeName: n})
			}
			return
		}
		if !t.root && len(rest) > 0 && len(items) <= 1 {
			// The head answered for itself only: a slurmd counts the
			// head as failed and retries with the next node as head.
			t.col.add(failed(head, slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR))
			continue
		}
		t.col.add(items...)
		if missing := absent(rest, items); len(missing) > 0 {
			if t.root {
				t.abandon(ctx, missing, fwd)
			} else {
				for _, m := range missing {
					t.col.add(failed(m, slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR))
				}
			}
		}
		return
	}
}

// absent returns the nodes of want that no item names.
func absent(want []string, items []codec.RetItem) []string {
	if len(want) == 0 {
		return nil
	}
	got := make(map[string]bool, len(items))
	for _, it := range items {
		got[it.NodeName] = true
	}
	var out []string
	for _, n := range want {
		if !got[n] {
			out = append(out, n)
		}
	}
	return out
}

func (t *tree) acquire(ctx context.Context) error {
	if t.sem == nil {
		return nil
	}
	select {
	case t.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *tree) release() {
	if t.sem != nil {
		<-t.sem
	}
}

// exchange sends the message to head with forward list rest and reads its
// reply: the reply's ret_list plus the head's own entry.
func (t *tree) exchange(ctx context.Context, head, addr string, rest []string, fwd time.Duration) ([]codec.RetItem, stage, int) {
	if err := t.acquire(ctx); err != nil {
		return nil, stageConnect, slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR
	}
	defer t.release()
	conn, err := t.connect(ctx, addr)
	if err != nil {
		return nil, stageConnect, slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR
	}
	defer conn.Close()
	// Cancelling ctx expires both deadlines. The write and read deadlines
	// set below would undo that if the cancel landed first (the read would
	// then wait its full ReplyTimeout), so each is re-expired when ctx is
	// already done: whichever order the two run in, a cancelled ctx ends
	// with the past deadline in place.
	expire := func() { _ = conn.SetDeadline(time.Unix(1, 0)) }
	stop := context.AfterFunc(ctx, expire)
	defer stop()
	deadline := func(set func(time.Time) error, d time.Duration) {
		_ = set(time.Now().Add(d))
		if ctx.Err() != nil {
			expire()
		}
	}

	f := codec.Frame{Header: t.hdr, Auth: t.auth, Body: t.body}
	f.Header.RetList = nil
	f.Header.Forward = codec.Forward{}
	if len(rest) > 0 {
		f.Header.Forward = codec.Forward{
			Count:     uint16(len(rest)),
			Nodes:     Ranged(rest),
			TreeWidth: t.hdrWidth,
		}
		if t.hdrTimeout {
			f.Header.Forward.Timeout = uint32(fwd / time.Millisecond)
		}
	}
	if t.sign != nil {
		if err := t.sign(ctx, &f); err != nil {
			return nil, stageSend, slurmerr.SLURM_COMMUNICATIONS_SEND_ERROR
		}
	}
	deadline(conn.SetWriteDeadline, t.msgTimeout)
	if err := wire.WriteFrame(conn, t.codec, &f); err != nil {
		return nil, stageSend, slurmerr.SLURM_COMMUNICATIONS_SEND_ERROR
	}
	if noReply(t.hdr.MsgType) {
		return nil, stageOK, 0
	}
	deadline(conn.SetReadDeadline, ReplyTimeout(t.msgTimeout, fwd, len(rest), t.timeoutWidth))
	reply, err := wire.ReadFrame(conn, t.codec, 0)
	if err != nil {
		return nil, stageRecv, recvCode(err)
	}
	items := make([]codec.RetItem, 0, len(reply.Header.RetList)+1)
	for _, it := range reply.Header.RetList {
		if it.NodeName == "" {
			it.NodeName, it.NodeNameNull = head, false
		}
		items = append(items, it)
	}
	if t.verify != nil {
		if err := t.verify(ctx, &reply); err != nil {
			// slurm_receive_msgs keeps the ret_list and reports the
			// head itself as failed.
			return append(items, failed(head, slurmerr.SLURM_PROTOCOL_AUTHENTICATION_ERROR)), stageOK, 0
		}
	}
	own := codec.RetItem{MsgType: reply.Header.MsgType, NodeName: head}
	if bc, ok := t.codec.Bodies.Lookup(reply.Header.MsgType); ok {
		r := pack.NewReader(reply.Body)
		body, err := bc.Decode(r, reply.Header.Version)
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			own = failed(head, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
		} else {
			own.Body = body
		}
	} else {
		own.Body = append([]byte(nil), reply.Body...)
	}
	return append(items, own), stageOK, 0
}

// connect dials addr, waiting TCPTimeout for the connection as
// _slurm_connect does. The root retries as slurm_send_addr_recv_msgs does,
// within a budget of t.retries steps: a refused connect is retried one
// second later and uses one step; a connect that timed out is retried at
// once (it has already waited) and uses TCPTimeout in whole seconds, at
// least one. Any other error ends it. An interior node (retries 0) tries
// once, as _forward_thread does.
func (t *tree) connect(ctx context.Context, addr string) (net.Conn, error) {
	dial := t.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	for used := 0; ; used++ {
		dctx, cancel := context.WithTimeout(ctx, t.tcpTimeout)
		conn, err := dial(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		pause := time.Duration(0)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			pause = time.Second
		case connectTimedOut(err):
			used += max(int(t.tcpTimeout/time.Second), 1) - 1
		default:
			return nil, err
		}
		if used >= t.retries {
			return nil, err
		}
		if pause > 0 {
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(pause):
			}
		}
	}
}

// connectTimedOut reports a connect that gave up waiting: the kernel's
// ETIMEDOUT, or the TCPTimeout deadline of the dial's context (a net.Dialer
// reports it as an error matching context.DeadlineExceeded).
func connectTimedOut(err error) bool {
	return errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, context.DeadlineExceeded)
}

// recvCode is the Slurm error a failed reply read becomes.
func recvCode(err error) int {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return slurmerr.SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return slurmerr.SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT
	}
	if c := slurmerr.Code(err); c != 0 {
		return c
	}
	return slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR
}

// wait blocks until every span is done and returns one entry per node of
// nodes, in that order: the first successful entry for a node, else its
// first failure, else (never expected) a connection error. Entries for
// names outside nodes are dropped.
func (t *tree) wait(nodes []string) []codec.RetItem {
	t.col.wg.Wait()
	t.col.mu.Lock()
	defer t.col.mu.Unlock()
	best := make(map[string]int, len(nodes))
	for i, it := range t.col.items {
		j, seen := best[it.NodeName]
		if !seen || (t.col.items[j].MsgType == msgtype.RESPONSE_FORWARD_FAILED && it.MsgType != msgtype.RESPONSE_FORWARD_FAILED) {
			best[it.NodeName] = i
		}
	}
	out := make([]codec.RetItem, 0, len(nodes))
	for _, n := range nodes {
		if i, ok := best[n]; ok {
			out = append(out, t.col.items[i])
		} else {
			out = append(out, failed(n, slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR))
		}
	}
	return out
}

func tcpTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTCPTimeout
	}
	return d
}

func maxConns(n int) chan struct{} {
	if n < 0 {
		return nil
	}
	if n == 0 {
		n = DefaultMaxConns
	}
	return make(chan struct{}, n)
}
