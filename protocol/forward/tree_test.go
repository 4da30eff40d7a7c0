package forward

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// testAuth is a shared-key test authenticator: an auth/none section whose
// host name field carries sha256(key, msg type, body).
type testAuth struct{ key string }

func (a testAuth) mac(f *codec.Frame) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|", a.key, f.Header.MsgType)
	h.Write(f.Body)
	return hex.EncodeToString(h.Sum(nil))
}

func (a testAuth) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return a.SignHash(ctx, f, rUID, authhash.Default)
}

func (a testAuth) SignHash(_ context.Context, f *codec.Frame, _ uint32, _ authhash.Type) error {
	f.Auth = codec.NoneAuth(0, 0, a.mac(f))
	return nil
}

func (a testAuth) Verify(_ context.Context, f *codec.Frame) (auth.Identity, error) {
	if f.Auth.PluginID != codec.AuthNone || f.Auth.Hostname != a.mac(f) {
		return auth.Identity{}, errors.New("testAuth: bad credential")
	}
	return auth.Identity{}, nil
}

type mode int

const (
	modeOK      mode = iota
	modeDead         // connection refused
	modeHang         // reads the message, never answers, forwards nothing
	modeBadAuth      // answers with a credential that does not verify
)

// fakeNode is an in-process slurmd: it forwards with Forwarder before
// checking the credential, answers RESPONSE_SLURM_RC with rc = its index,
// and attaches its sub-tree's ret_list.
type fakeNode struct {
	name  string
	index int
	mode  mode
	addr  string
	ln    net.Listener
	hits  atomic.Int32
	mu    sync.Mutex
	hdrs  []codec.Header
	auths [][]byte
}

type fakeCluster struct {
	t     *testing.T
	auth  testAuth
	nodes map[string]*fakeNode
	fw    *Forwarder
	ctx   context.Context
}

func newCluster(t *testing.T, n int, width int, msgTimeout time.Duration, modes map[string]mode) *fakeCluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeCluster{t: t, auth: testAuth{key: "k"}, nodes: map[string]*fakeNode{}, ctx: ctx}
	// Connects get msgTimeout, not TCPTimeout's 2 s default: on a loaded
	// machine a 200-node tree's dials can take seconds to be scheduled,
	// and these tests are not about connect timeouts.
	c.fw = &Forwarder{Resolve: c.resolve, MessageTimeout: msgTimeout, TCPTimeout: msgTimeout, TreeWidth: width}
	var wg sync.WaitGroup
	byAddr := map[string]string{}
	for i := 1; i <= n; i++ {
		nd := &fakeNode{name: fmt.Sprintf("n%d", i), index: i, mode: modes[fmt.Sprintf("n%d", i)]}
		if nd.mode == modeDead {
			nd.addr = deadAddr(t)
		} else {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			nd.addr = ln.Addr().String()
			nd.ln = ln
			wg.Add(1)
			go func() { defer wg.Done(); c.serve(nd) }()
		}
		if other, dup := byAddr[nd.addr]; dup {
			t.Fatalf("%s and %s share address %s", other, nd.name, nd.addr)
		}
		byAddr[nd.addr] = nd.name
		c.nodes[nd.name] = nd
	}
	t.Cleanup(func() {
		cancel()
		for _, nd := range c.nodes {
			if nd.ln != nil {
				nd.ln.Close()
			}
		}
		wg.Wait()
	})
	return c
}

// deadAddr returns a loopback address that refuses connections for the
// rest of the test: a TCP socket bound to 127.0.0.1:0 but never listening
// (the kernel answers a SYN to it with RST, ECONNREFUSED) and kept open, so
// the port stays taken. Listening and closing, as this test once did, frees
// the port, and Linux readily hands a just-freed port to the next
// net.Listen("127.0.0.1:0") (in a quick trial, a later Listen took one of
// five closed ports in about a quarter of 50-listener rounds): a live node
// created later, or any other test's listener, then answers for the "dead"
// node, which shows up as the dead node reporting the other's rc and the
// other handling the message twice.
func deadAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in4.Port == 0 {
		t.Fatalf("bound socket name %#v", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}

func (c *fakeCluster) resolve(name string) (string, error) {
	if nd, ok := c.nodes[name]; ok {
		return nd.addr, nil
	}
	return "", fmt.Errorf("no node %q in slurm.conf", name)
}

func (c *fakeCluster) serve(nd *fakeNode) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := nd.ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			stop := context.AfterFunc(c.ctx, func() { conn.Close() })
			defer stop()
			c.handle(nd, conn)
		}()
	}
}

func (c *fakeCluster) handle(nd *fakeNode, conn net.Conn) {
	f, err := wire.ReadFrame(conn, nil, 0)
	if err != nil {
		// Not a failure by itself: a sender closes without sending
		// when its context is cancelled, or the test ends before this
		// goroutine read what was sent. check() catches a live node
		// that did not get the message.
		c.t.Logf("%s: read: %v", nd.name, err)
		return
	}
	nd.hits.Add(1)
	nd.mu.Lock()
	nd.hdrs = append(nd.hdrs, f.Header)
	nd.auths = append(nd.auths, append([]byte(nil), f.Auth.Raw...))
	nd.mu.Unlock()
	if nd.mode == modeHang {
		<-c.ctx.Done()
		return
	}
	ta := conn.RemoteAddr().(*net.TCPAddr)
	peer := codec.AddrIPv4([4]byte(ta.IP.To4()), uint16(ta.Port))
	p := c.fw.Forward(c.ctx, &f, peer) // before checking the credential
	if _, err := c.auth.Verify(c.ctx, &f); err != nil {
		c.t.Errorf("%s: %v", nd.name, err)
	}
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, byte(nd.index)})
	p.Attach(&reply)
	_ = c.auth.Sign(c.ctx, &reply, 0)
	if nd.mode == modeBadAuth {
		reply.Auth = codec.NoneAuth(0, 0, "forged")
	}
	if err := wire.WriteFrame(conn, nil, &reply); err != nil {
		c.t.Errorf("%s: write: %v", nd.name, err)
	}
}

func (c *fakeCluster) sender(msgTimeout time.Duration) *Sender {
	return &Sender{Resolve: c.resolve, Auth: c.auth, MessageTimeout: msgTimeout, TCPTimeout: msgTimeout, ConnectRetries: -1}
}

// check verifies one result per requested node: failures exactly where
// wantFail says (with that error), success with rc = index elsewhere, and
// every live node handled the message exactly once.
func (c *fakeCluster) check(res []Result, want []string, wantFail map[string]int) {
	t := c.t
	t.Helper()
	if len(res) != len(want) {
		t.Fatalf("%d results for %d nodes", len(res), len(want))
	}
	for i, r := range res {
		if r.Node != want[i] {
			t.Fatalf("result %d is for %q, want %q", i, r.Node, want[i])
		}
		if code, bad := wantFail[r.Node]; bad {
			if !r.Failed() || r.Err != code {
				t.Errorf("%v: want forward failure %s", r, slurmerr.Name(code))
			}
			continue
		}
		nd := c.nodes[r.Node]
		if r.Failed() || r.MsgType != msgtype.RESPONSE_SLURM_RC || r.RC() != nd.index {
			t.Errorf("%v: want RESPONSE_SLURM_RC rc=%d", r, nd.index)
		}
		if h := nd.hits.Load(); h != 1 {
			t.Errorf("%s handled the message %d times", nd.name, h)
		}
	}
}

func ping(width uint16) Request {
	return Request{MsgType: msgtype.REQUEST_PING, RUID: auth.UIDAny, TreeWidth: width}
}

// TestTreeShapes sends to 1, 2, 50 and 200 nodes with widths 1, 2, 3, 50
// (the nodes' own TreeWidth equal to the request's, so deeper hops split
// the same way).
func TestTreeShapes(t *testing.T) {
	for _, n := range []int{1, 2, 50, 200} {
		for _, w := range []int{1, 2, 3, 50} {
			t.Run(fmt.Sprintf("%dnodes/width%d", n, w), func(t *testing.T) {
				t.Parallel()
				c := newCluster(t, n, w, 5*time.Second, nil)
				res, err := c.sender(5*time.Second).Send(context.Background(), names(n), ping(uint16(w)))
				if err != nil {
					t.Fatal(err)
				}
				c.check(res, uniq(names(n)), nil)
				// The root contacted exactly the span heads.
				heads := 0
				for _, nd := range c.nodes {
					nd.mu.Lock()
					if len(nd.hdrs) == 1 && nd.hdrs[0].OrigAddr.IsZero() {
						heads++
					}
					nd.mu.Unlock()
				}
				if want := len(Split(uniq(names(n)), w)); heads != want {
					t.Errorf("%d nodes got the message from the root, want %d span heads", heads, want)
				}
			})
		}
	}
}

// TestForwardedHeader checks what a relaying node sends on: same auth
// bytes, forward.timeout 0 and tree_width 0 below the first hop, orig_addr
// set.
func TestForwardedHeader(t *testing.T) {
	c := newCluster(t, 3, 1, 5*time.Second, nil)
	res, err := c.sender(5*time.Second).Send(context.Background(), names(3), Request{
		MsgType: msgtype.REQUEST_PING, TreeWidth: 1, Timeout: 7 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	c.check(res, names(3), nil)
	h1, h2, h3 := c.nodes["n1"].hdrs[0], c.nodes["n2"].hdrs[0], c.nodes["n3"].hdrs[0]
	if h1.Forward != (codec.Forward{Count: 2, Nodes: "n[2-3]", Timeout: 7000, TreeWidth: 1}) || !h1.OrigAddr.IsZero() {
		t.Errorf("root header %+v", h1)
	}
	if h2.Forward != (codec.Forward{Count: 1, Nodes: "n3"}) || h2.OrigAddr.Family != codec.AFInet {
		t.Errorf("n1 -> n2 header %+v", h2)
	}
	if h3.Forward.Count != 0 || h3.OrigAddr != h2.OrigAddr {
		t.Errorf("n2 -> n3 header %+v (orig_addr must stay the first sender's)", h3)
	}
	a1, a3 := c.nodes["n1"].auths[0], c.nodes["n3"].auths[0]
	if string(a1) != string(a3) {
		t.Errorf("auth section changed on the way: %x vs %x", a1, a3)
	}
}

// TestDeadAndUnknownNodes: dead span heads, a dead interior sub-head, dead
// leaves and a name with no address are reported for themselves only; the
// rest answer once, and nothing waits for a timeout (refused connections
// fail at once).
func TestDeadAndUnknownNodes(t *testing.T) {
	// 50 nodes, width 3: spans n1..n18, n19..n34, n35..n50 (heads n1, n19,
	// n35). Inside n1's span (n2..n18 split by 3 on n1) n2 heads a sub-span.
	dead := []string{"n1", "n2", "n19", "n27", "n50"}
	modes := map[string]mode{}
	want := map[string]int{}
	for _, d := range dead {
		modes[d] = modeDead
		want[d] = slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR
	}
	c := newCluster(t, 50, 3, 2*time.Second, modes)
	req := append(names(50), "ghost1")
	want["ghost1"] = slurmerr.SLURM_UNKNOWN_FORWARD_ADDR
	// The sender's timeouts are far longer than the context: had anything
	// waited for a timeout instead of failing on the refusal, the context
	// would end first and the results would carry cancellations instead of
	// the codes checked below.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.sender(time.Hour).Send(ctx, req, ping(3))
	if err != nil {
		t.Fatal(err)
	}
	c.check(res, uniq(req), want)
}

// TestHungHead: a span head that accepts but never answers is reported
// with a socket timeout after ReplyTimeout, and the rest of its span gets
// the message directly (Slurm's abandoned tree).
//
// msg is also every live node's deadline to answer (the abandoned nodes'
// direct sends; n5 must answer the root 2*msg after its own msg wait for
// n6), so it must stay well above the scheduling stalls of a loaded
// machine, which reach 2-3 s on 2 cores at load ~10: at 300 ms and at 1 s,
// runs lost n2/n3 or n5 to their deadlines.
func TestHungHead(t *testing.T) {
	msg := 2 * time.Second
	c := newCluster(t, 10, 3, msg, map[string]mode{"n1": modeHang, "n6": modeHang})
	start := time.Now()
	res, err := c.sender(msg).Send(context.Background(), names(10), ping(3))
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	// n1 heads n1..n4 (cnt 3, (3+1)/3 = 1 step: msg + 2*fwd); n6 is a
	// leaf inside n5's span: n5 waits fwd for it.
	c.check(res, uniq(names(10)), map[string]int{
		"n1": slurmerr.SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT,
		"n6": slurmerr.SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT,
	})
	// The root waits ReplyTimeout for n1 (a read deadline cannot fire
	// early), then the direct sends answer at once.
	if wait := ReplyTimeout(msg, msg, 3, 3); d < wait {
		t.Errorf("took %v, less than n1's reply timeout %v", d, wait)
	}
	// Generous for a loaded machine (it takes ~3*msg), but a second
	// timeout waited in series would pass it.
	if limit := ReplyTimeout(msg, msg, 3, 3) + 3*msg; d > limit {
		t.Errorf("took %v, want at most %v", d, limit)
	}
	t.Logf("hung head and hung leaf resolved in %v", d)
}

// TestHeadBadReplyAuth: the root verifies the head's reply; a bad
// credential fails the head only, its sub-tree's results are kept.
func TestHeadBadReplyAuth(t *testing.T) {
	c := newCluster(t, 4, 1, 2*time.Second, map[string]mode{"n1": modeBadAuth})
	res, err := c.sender(2*time.Second).Send(context.Background(), names(4), ping(1))
	if err != nil {
		t.Fatal(err)
	}
	c.check(res, names(4), map[string]int{"n1": slurmerr.SLURM_PROTOCOL_AUTHENTICATION_ERROR})
}

// TestCancel: cancelling the context ends Send promptly with every open
// node failed.
func TestCancel(t *testing.T) {
	modes := map[string]mode{}
	for _, n := range names(20) {
		modes[n] = modeHang
	}
	c := newCluster(t, 20, 50, 10*time.Second, modes)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := c.sender(10*time.Second).Send(ctx, names(20), ping(0))
	if err != nil {
		t.Fatal(err)
	}
	// Well below the 10 s MessageTimeout a missed cancel waits for, with
	// room for a loaded machine.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Send returned %v after a 200 ms cancel", d)
	}
	for _, r := range res {
		if !r.Failed() {
			t.Errorf("%v after cancel", r)
		}
	}
}

// cancelConn cancels the send's context when the read deadline is about to
// be set, and lets the deadline through only after the cancel's own past
// deadline has landed: the order in which a cancel used to be undone.
type cancelConn struct {
	net.Conn
	cancel  context.CancelFunc
	expired chan struct{}
	once    sync.Once
}

func (c *cancelConn) SetDeadline(d time.Time) error {
	err := c.Conn.SetDeadline(d)
	if d.Before(time.Now()) {
		c.once.Do(func() { close(c.expired) })
	}
	return err
}

func (c *cancelConn) SetReadDeadline(d time.Time) error {
	c.cancel()
	select {
	case <-c.expired:
	case <-time.After(5 * time.Second):
	}
	return c.Conn.SetReadDeadline(d)
}

// TestCancelBeforeReadDeadline: a cancel that lands between sending and
// setting the reply deadline still ends the wait at once. (It used to be
// overwritten by the ReplyTimeout deadline: under load TestCancel then
// waited the full 10 s MessageTimeout for a hung node.)
func TestCancelBeforeReadDeadline(t *testing.T) {
	c := newCluster(t, 1, 50, 10*time.Second, map[string]mode{"n1": modeHang})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := c.sender(10 * time.Second)
	s.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cancelConn{Conn: conn, cancel: cancel, expired: make(chan struct{})}, nil
	}
	start := time.Now()
	res, err := s.Send(ctx, []string{"n1"}, ping(0))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Send returned after %v: the cancel was undone by the reply deadline", d)
	}
	if len(res) != 1 || !res[0].Failed() || res[0].Err != slurmerr.SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT {
		t.Errorf("results %v, want n1 failed with SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT", res)
	}
}

// TestForwarderAlone drives Forwarder directly, as our slurmd will: a
// frame with a forward list, the local reply, the aggregated ret_list.
func TestForwarderAlone(t *testing.T) {
	c := newCluster(t, 6, 2, 2*time.Second, map[string]mode{"n4": modeDead})
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	_ = c.auth.Sign(context.Background(), &f, auth.UIDAny)
	f.Header.Forward = codec.Forward{Count: 7, Nodes: "n[2-6],ghost", TreeWidth: 2}
	p := c.fw.Forward(context.Background(), &f, codec.AddrIPv4([4]byte{127, 0, 0, 1}, 999))
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, 0})
	p.Attach(&reply)
	got := map[string]codec.RetItem{}
	for _, it := range reply.Header.RetList {
		got[it.NodeName] = it
	}
	if len(got) != 6 || len(reply.Header.RetList) != 6 {
		t.Fatalf("ret_list %+v, want 6 entries", reply.Header.RetList)
	}
	for _, n := range []string{"n2", "n3", "n5", "n6"} {
		if it := got[n]; it.MsgType != msgtype.RESPONSE_SLURM_RC || it.Err != 0 {
			t.Errorf("%s: %+v", n, it)
		}
	}
	if it := got["n4"]; it.MsgType != msgtype.RESPONSE_FORWARD_FAILED || it.Err != slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR {
		t.Errorf("n4: %+v", it)
	}
	if it := got["ghost"]; it.MsgType != msgtype.RESPONSE_FORWARD_FAILED || it.Err != slurmerr.SLURM_UNKNOWN_FORWARD_ADDR {
		t.Errorf("ghost: %+v", it)
	}
	// The reply packs and decodes with its ret_list.
	_ = c.auth.Sign(context.Background(), &reply, 0)
	raw, err := codec.AppendFrame(nil, &reply)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.DecodeFrame(raw)
	if err != nil || len(back.Header.RetList) != 6 {
		t.Fatalf("round trip: %v, %d entries", err, len(back.Header.RetList))
	}
}
