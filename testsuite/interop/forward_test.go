package interop

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// pingSlurmd is RESPONSE_PING_SLURMD's body (22.05 _pack_ping_slurmd_resp):
// u32 cpu_load, u64 free_mem.
type pingSlurmd struct {
	CPULoad uint32
	FreeMem uint64
}

func forwardCodec() *codec.Codec {
	g := codec.DefaultRegistry()
	g.Register(msgtype.RESPONSE_PING_SLURMD, codec.BodyCodec{
		Decode: func(r *pack.Reader, _ codec.Version) (any, error) {
			b := pingSlurmd{CPULoad: r.U32(), FreeMem: r.U64()}
			return b, r.Err()
		},
		Encode: func(w *pack.Writer, _ codec.Version, body any) error {
			b, ok := body.(pingSlurmd)
			if !ok {
				return fmt.Errorf("RESPONSE_PING_SLURMD body %T", body)
			}
			w.U32(b.CPULoad)
			w.U64(b.FreeMem)
			return nil
		},
	})
	return &codec.Codec{Bodies: g}
}

// goNode is a goslurm slurmd stand-in listed in the real slurm.conf: it
// relays with forward.Forwarder and answers every request with
// RESPONSE_PING_SLURMD, recording the headers that reach it.
type goNode struct {
	name string
	ln   net.Listener
	mu   sync.Mutex
	hdrs []codec.Header
}

func (g *goNode) port() int { return g.ln.Addr().(*net.TCPAddr).Port }

func (g *goNode) headers() []codec.Header {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]codec.Header(nil), g.hdrs...)
}

func (g *goNode) serve(ctx context.Context, fw *forward.Forwarder, signer auth.Authenticator, cd *codec.Codec) {
	for {
		conn, err := g.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			f, err := wire.ReadFrame(conn, cd, 0)
			if err != nil {
				return
			}
			g.mu.Lock()
			g.hdrs = append(g.hdrs, f.Header)
			g.mu.Unlock()
			ta := conn.RemoteAddr().(*net.TCPAddr)
			p := fw.Forward(ctx, &f, codec.AddrIPv4([4]byte(ta.IP.To4()), uint16(ta.Port)))
			// The credential is not decoded here: the real slurmd
			// nodes share this munged, and a munge credential
			// decodes once.
			w := pack.NewWriter(nil)
			w.U32(7)
			w.U64(1234)
			reply := codec.NewFrame(msgtype.RESPONSE_PING_SLURMD, codec.AuthBlob{}, w.Bytes())
			p.Attach(&reply)
			if err := signer.Sign(ctx, &reply, auth.UIDAny); err != nil {
				return
			}
			_ = wire.WriteFrame(conn, cd, &reply)
		}()
	}
}

// TestRealSlurmdForwarding sends REQUEST_PING through goslurm's forward
// package into real 22.05 slurmd trees: real slurmd forwards to real
// slurmd and aggregates, real slurmd forwards to goslurm's Forwarder and
// back, and goslurm's Forwarder forwards to real slurmd.
func TestRealSlurmdForwarding(t *testing.T) {
	cd := forwardCodec()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	goNodes := map[string]*goNode{}
	var extra []string
	for _, name := range []string{"a1", "p1", "p2"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		g := &goNode{name: name, ln: ln}
		goNodes[name] = g
		extra = append(extra, fmt.Sprintf("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=1000 State=UNKNOWN", name, g.port()))
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 3, ExtraConf: extra})
	addrs := map[string]string{}
	for _, n := range c.Nodes {
		addrs[n.Name] = "127.0.0.1:" + strconv.Itoa(n.Port)
	}
	for name, g := range goNodes {
		addrs[name] = g.ln.Addr().String()
	}
	resolve := func(name string) (string, error) {
		if a, ok := addrs[name]; ok {
			return a, nil
		}
		return "", fmt.Errorf("node %q not in slurm.conf", name)
	}
	munge := &auth.Munge{Client: c.Munge.Client()}
	fw := &forward.Forwarder{Resolve: resolve, Codec: cd}
	for _, g := range goNodes {
		go g.serve(ctx, fw, munge, cd)
	}
	// dials counts the root's connections: one per span head proves the
	// real slurmd aggregated its span (no fallback to direct sends).
	var dials atomic.Int32
	s := &forward.Sender{Resolve: resolve, Auth: munge, Codec: cd, ConnectRetries: -1,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}

	send := func(t *testing.T, nodes []string, width uint16) []forward.Result {
		t.Helper()
		start := time.Now()
		dials.Store(0)
		res, err := s.Send(ctx, nodes, forward.Request{MsgType: msgtype.REQUEST_PING, RUID: auth.UIDAny, TreeWidth: width})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			t.Logf("  %v (%T %+v)", r, r.Body, r.Body)
		}
		t.Logf("%v width %d: %d results in %v, %d connection(s) from the root", nodes, width, len(res), time.Since(start).Round(time.Millisecond), dials.Load())
		return res
	}
	wantPing := func(t *testing.T, r forward.Result) {
		t.Helper()
		if r.Failed() || r.MsgType != msgtype.RESPONSE_PING_SLURMD || r.Err != 0 {
			t.Errorf("%v: want RESPONSE_PING_SLURMD", r)
		}
		if _, ok := r.Body.(pingSlurmd); !ok {
			t.Errorf("%s: body %T", r.Node, r.Body)
		}
	}

	for _, w := range []uint16{1, 2, 0} {
		t.Run(fmt.Sprintf("real tree width %d", w), func(t *testing.T) {
			res := send(t, []string{"n1", "n2", "n3"}, w)
			if len(res) != 3 {
				t.Fatalf("%d results", len(res))
			}
			// Width 1 and 2 put all three nodes in one span (set_span):
			// n1 answers for n2 and n3. Width 0 (= 50) sends to each.
			wantDials := int32(1)
			if w == 0 {
				wantDials = 3
			}
			if got := dials.Load(); got != wantDials {
				t.Errorf("root opened %d connections, want %d", got, wantDials)
			}
			for i, r := range res {
				if r.Node != "n"+strconv.Itoa(i+1) {
					t.Errorf("result %d for %s", i, r.Node)
				}
				wantPing(t, r)
			}
		})
	}

	t.Run("unknown node at the root", func(t *testing.T) {
		// "ghost" sorts first and heads its own span: our resolver
		// fails it, the others are unaffected.
		res := send(t, []string{"n1", "n2", "n3", "ghost"}, 0)
		for _, r := range res {
			if r.Node == "ghost" {
				if !r.Failed() || r.Err != slurmerr.SLURM_UNKNOWN_FORWARD_ADDR {
					t.Errorf("%v: want SLURM_UNKNOWN_FORWARD_ADDR", r)
				}
				continue
			}
			wantPing(t, r)
		}
	})

	t.Run("unknown node inside a real slurmd's forward list", func(t *testing.T) {
		// Width 1: n1 heads everything and its forward list holds
		// "zz9", which is not in slurm.conf: the real slurmd must
		// report it (SLURM_UNKNOWN_FORWARD_ADDR) and still answer for
		// the rest.
		addrs["zz9"] = "127.0.0.1:1" // resolvable for us, not for slurmd
		defer delete(addrs, "zz9")
		res := send(t, []string{"n1", "n2", "n3", "zz9"}, 1)
		for _, r := range res {
			if r.Node == "zz9" {
				if !r.Failed() {
					t.Errorf("%v: want a forward failure", r)
				}
				t.Logf("real slurmd reported the unknown node with err %d (%s)", r.Err, slurmerr.Name(r.Err))
				continue
			}
			wantPing(t, r)
		}
	})

	t.Run("real slurmd relays through a goslurm node", func(t *testing.T) {
		// Width 1, nodes n3 p1 p2: root -> n3 (real) -> p1 (ours,
		// forward list p2) -> p2 (ours); replies back up through n3.
		p1Before := len(goNodes["p1"].headers())
		res := send(t, []string{"n3", "p1", "p2"}, 1)
		for _, r := range res {
			wantPing(t, r)
		}
		hdrs := goNodes["p1"].headers()[p1Before:]
		var got *codec.Header
		for i := range hdrs {
			if hdrs[i].MsgType == msgtype.REQUEST_PING && hdrs[i].Forward.Count > 0 {
				got = &hdrs[i]
			}
		}
		if got == nil {
			t.Fatalf("p1 never got a forwarded REQUEST_PING: %+v", hdrs)
		}
		t.Logf("header real slurmd n3 sent to p1: forward %+v orig_addr %v flags %#x", got.Forward, got.OrigAddr, got.Flags)
		if got.Forward.Count != 1 || got.Forward.Nodes != "p2" {
			t.Errorf("forward list %+v, want p2", got.Forward)
		}
		if got.Forward.Timeout != 0 || got.Forward.TreeWidth != 0 {
			t.Errorf("real slurmd sent forward.timeout %d tree_width %d; the package assumes 0 and 0", got.Forward.Timeout, got.Forward.TreeWidth)
		}
		if got.OrigAddr.Family != codec.AFInet || got.OrigAddr.IP[0] != 127 {
			t.Errorf("orig_addr %v, want the root's address", got.OrigAddr)
		}
	})

	t.Run("goslurm node relays to real slurmd", func(t *testing.T) {
		// Width 1, nodes a1 n1 n2: root -> a1 (ours) -> n1 (real,
		// forward list n2) -> n2 (real).
		res := send(t, []string{"a1", "n1", "n2"}, 1)
		for _, r := range res {
			wantPing(t, r)
		}
	})

	t.Run("dead goslurm node in a real tree", func(t *testing.T) {
		// p2's listener closed: n1 (real, width 1 -> n2 -> n3 and p2)
		// reports it as a failed forward.
		goNodes["p2"].ln.Close()
		res := send(t, []string{"n1", "n2", "n3", "p2"}, 1)
		for _, r := range res {
			if r.Node == "p2" {
				if !r.Failed() {
					t.Errorf("%v: want a forward failure", r)
				}
				t.Logf("real slurmd reported the dead node with err %d (%s)", r.Err, slurmerr.Name(r.Err))
				continue
			}
			wantPing(t, r)
		}
	})
}
