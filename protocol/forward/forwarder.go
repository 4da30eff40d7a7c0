package forward

import (
	"context"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Forwarder is the interior-node side of a tree: what a slurmd does with a
// frame whose header has forward.cnt > 0. Resolve is required. A Forwarder
// is safe for concurrent use.
type Forwarder struct {
	// Resolve maps node names to addresses.
	Resolve Resolver
	// Codec decodes the sub-heads' replies and must know every reply type
	// (nil means codec.Default).
	Codec *codec.Codec
	// MessageTimeout is slurm.conf's MessageTimeout; 0 means 10 s. It is
	// the forward timeout when the header carries 0.
	MessageTimeout time.Duration
	// TCPTimeout is slurm.conf's TCPTimeout, the connect timeout; 0
	// means 2 s.
	TCPTimeout time.Duration
	// TreeWidth is slurm.conf's TreeWidth, used when the header carries
	// 0 and in the reply-wait formula; 0 means DefaultTreeWidth.
	TreeWidth int
	// MaxConns bounds the connections open at once; 0 means
	// DefaultMaxConns, negative means no bound.
	MaxConns int
	// Dial opens connections; nil means a net.Dialer.
	Dial DialFunc
}

// Pending is a forward in progress.
type Pending struct {
	t     *tree
	nodes []string
	done  chan struct{}
	items []codec.RetItem
}

// Forward starts relaying f, as received (auth section and body are sent
// byte for byte; call it before verifying the credential, as slurmd does),
// to the nodes in f.Header.Forward. peer is the address f came from: the
// relayed headers carry f's orig_addr, or peer when f has none. With no
// forward list it returns a Pending with nothing to wait for.
//
// The sub-heads get the same version, flags, msg_type and body_length, a
// forward list and, as a 22.05 slurmd sends them, forward.timeout 0 and
// forward.tree_width 0.
func (fw *Forwarder) Forward(ctx context.Context, f *codec.Frame, peer codec.Addr) *Pending {
	p := &Pending{done: make(chan struct{})}
	h := f.Header
	if h.Forward.Count == 0 {
		close(p.done)
		return p
	}
	msgTimeout := fw.MessageTimeout
	if msgTimeout <= 0 {
		msgTimeout = DefaultMessageTimeout
	}
	confWidth := fw.TreeWidth
	if confWidth <= 0 {
		confWidth = DefaultTreeWidth
	}
	splitWidth := int(h.Forward.TreeWidth)
	if splitWidth == 0 {
		splitWidth = confWidth
	}
	fwd := time.Duration(h.Forward.Timeout) * time.Millisecond
	if fwd <= 0 {
		fwd = msgTimeout
	}
	cd := fw.Codec
	if cd == nil {
		cd = codec.Default
	}
	orig := h.OrigAddr
	if orig.IsZero() {
		orig = peer
	}
	auth := f.Auth
	auth.Raw = append([]byte(nil), f.Auth.Raw...)
	t := &tree{
		resolve:      fw.Resolve,
		dial:         fw.Dial,
		codec:        cd,
		msgTimeout:   msgTimeout,
		tcpTimeout:   tcpTimeout(fw.TCPTimeout),
		timeoutWidth: confWidth,
		sem:          maxConns(fw.MaxConns),
		hdr: codec.Header{
			Version:    h.Version,
			Flags:      h.Flags,
			Reserved:   h.Reserved,
			MsgType:    h.MsgType,
			BodyLength: h.BodyLength,
			OrigAddr:   orig,
		},
		body: append([]byte(nil), f.Body...),
		auth: auth,
	}
	p.t = t
	nodes, err := UniqHosts(h.Forward.Nodes)
	if err != nil || len(nodes) == 0 {
		// Slurm would wait forever for forward.cnt answers here; report
		// the list as unusable instead.
		p.items = []codec.RetItem{failed(h.Forward.Nodes, slurmerr.SLURM_UNKNOWN_FORWARD_ADDR)}
		close(p.done)
		return p
	}
	p.nodes = nodes
	t.start(ctx, Split(nodes, splitWidth), fwd)
	go func() {
		p.items = t.wait(nodes)
		close(p.done)
	}()
	return p
}

// Nodes returns the forwarded nodes (sorted, de-duplicated).
func (p *Pending) Nodes() []string { return p.nodes }

// Wait blocks until every forwarded node has answered, failed or timed out
// (forward_wait) and returns one ret_list entry per node, in Nodes order.
func (p *Pending) Wait() []codec.RetItem {
	<-p.done
	return p.items
}

// Done is closed when Wait would not block.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Attach waits and sets reply's ret_list to the forwarded nodes' entries:
// the reply a slurmd sends for itself then carries its sub-tree.
func (p *Pending) Attach(reply *codec.Frame) {
	reply.Header.RetList = p.Wait()
}
