package bench

// Ping round trips over loopback: how many REQUEST_PING -> RESPONSE_SLURM_RC
// exchanges per second one sequential client gets, with goslurm's client
// (protocol/client: connect, sign, send, receive, verify the reply, close)
// against
//
//   - a real Slurm 22.05 slurmctld, auth/munge;
//   - an in-process goslurm responder (protocol/wire + codec, verify the
//     request, sign RESPONSE_SLURM_RC rc 0 for the sender), auth/munge
//     through the same munged as the real controller;
//   - the same responder with goslurm's built-in auth (credential/slurmauth,
//     a generated key, tokens minted and verified in process);
//
// and, for reference, the real `scontrol ping` run as a whole process per
// iteration. Each reports ns/op and the derived msgs/s (round trips per
// second). Nothing here asserts on speed.

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// BenchmarkPingMunge: auth/munge, real slurmctld vs the goslurm responder,
// one private munged for both; then the real `scontrol ping` process.
func BenchmarkPingMunge(b *testing.B) {
	c := realslurm.Start(b, realslurm.Options{Nodes: 1})
	m := &auth.Munge{Client: c.Munge.Client()}
	ours := startPingResponder(b, m, nil)

	for _, srv := range []struct {
		name, addr string
		r          *pingResponder
	}{
		{"slurmctld-22.05", c.CtldAddr(), nil},
		{"goslurm", ours.addr, ours},
	} {
		b.Run(srv.name, func(b *testing.B) {
			benchPing(b, &client.Client{
				Controllers:  []string{srv.addr},
				Auth:         m,
				SlurmUserUID: c.SlurmUserUID,
				Sweeps:       1,
			}, srv.r)
		})
	}

	b.Run("scontrol-ping-process/slurm-22.05", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			out, err := c.Command(ctx, "scontrol", "ping").CombinedOutput()
			cancel()
			if err != nil || !strings.Contains(string(out), "is UP") {
				b.Fatalf("scontrol ping: %v: %s", err, out)
			}
		}
		reportRate(b)
	})
}

// BenchmarkPingSlurmAuth: goslurm's built-in auth, client and responder in
// this process (real Slurm 22.05 has no such plugin, so there is no real
// counterpart). Needs no external binaries.
func BenchmarkPingSlurmAuth(b *testing.B) {
	key, err := slurmauth.GenerateKey(filepath.Join(b.TempDir(), slurmauth.KeyFileName))
	if err != nil {
		b.Fatal(err)
	}
	a := &slurmauth.Slurm{Key: key, Cluster: "benchcluster"}
	cdc := &codec.Codec{Bodies: codec.DefaultRegistry(), AcceptAuthSlurm: true}
	ours := startPingResponder(b, a, cdc)
	b.Run("goslurm", func(b *testing.B) {
		benchPing(b, &client.Client{
			Controllers:  []string{ours.addr},
			Auth:         a,
			SlurmUserUID: uint32(os.Getuid()),
			Sweeps:       1,
			Codec:        cdc,
		}, ours)
	})
}

// benchPing runs sequential client.Ping round trips.
func benchPing(b *testing.B, cl *client.Client, r *pingResponder) {
	ctx := context.Background()
	if err := cl.Ping(ctx, 0); err != nil { // warm up, and fail early
		b.Fatalf("ping %s: %v%s", cl.Controllers[0], err, r.lastErr())
	}
	for b.Loop() {
		if err := cl.Ping(ctx, 0); err != nil {
			b.Fatalf("ping %s: %v%s", cl.Controllers[0], err, r.lastErr())
		}
	}
	reportRate(b)
}

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "msgs/s")
	}
}

// pingResponder is a minimal test-only controller: one message per
// connection, as Slurm's clients send them; REQUEST_PING is answered with
// RESPONSE_SLURM_RC rc 0, signed for the sender's uid with the request's hash
// type and protocol version; anything else gets SLURM_UNEXPECTED_MSG_ERROR; a
// frame that does not verify is dropped without a reply (as slurmctld does).
type pingResponder struct {
	addr string
	a    auth.Authenticator
	c    *codec.Codec
	err  atomic.Pointer[error]
}

func startPingResponder(tb testing.TB, a auth.Authenticator, c *codec.Codec) *pingResponder {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r := &pingResponder{addr: ln.Addr().String(), a: a, c: c}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				if err := r.serve(ctx, conn); err != nil {
					r.err.Store(&err)
				}
			})
		}
	})
	tb.Cleanup(func() {
		cancel()
		ln.Close()
		wg.Wait()
	})
	return r
}

func (r *pingResponder) serve(ctx context.Context, conn net.Conn) error {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req, err := wire.ReadFrame(conn, r.c, 0)
	if err != nil {
		return err
	}
	id, err := r.a.Verify(ctx, &req)
	if err != nil {
		return err
	}
	rc := uint32(slurmerr.SLURM_SUCCESS)
	if req.Header.MsgType != msgtype.REQUEST_PING {
		rc = slurmerr.SLURM_UNEXPECTED_MSG_ERROR
	}
	w := pack.NewWriter(make([]byte, 0, 4))
	w.U32(rc)
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, w.Bytes())
	reply.Header.Version = req.Header.Version
	if err := r.a.SignHash(ctx, &reply, id.UID, id.Hash); err != nil {
		return err
	}
	return wire.WriteFrame(conn, r.c, &reply)
}

// lastErr describes the responder's last failure, for a benchmark's fatal
// message ("" for none or for the real controller).
func (r *pingResponder) lastErr() string {
	if r == nil {
		return ""
	}
	if p := r.err.Load(); p != nil && !errors.Is(*p, context.Canceled) {
		return " (responder: " + (*p).Error() + ")"
	}
	return ""
}
