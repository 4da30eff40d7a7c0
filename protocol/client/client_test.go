package client_test

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// fakeCtld answers each connection with handle's reply, signed by signer
// with the request's hash type (nil reply: close without answering).
type fakeCtld struct {
	ln      net.Listener
	verify  *auth.Munge
	signer  *auth.Munge
	handle  func(req codec.Frame, id auth.Identity) *codec.Frame
	reqs    chan codec.Frame
	authErr chan error
}

func startFake(t *testing.T, verify, signer *auth.Munge, handle func(codec.Frame, auth.Identity) *codec.Frame) *fakeCtld {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &fakeCtld{ln: ln, verify: verify, signer: signer, handle: handle,
		reqs: make(chan codec.Frame, 16), authErr: make(chan error, 16)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *fakeCtld) serve(conn net.Conn) {
	defer conn.Close()
	ctx := context.Background()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	req, err := wire.ReadFrame(conn, nil, 0)
	if err != nil {
		return
	}
	id, err := s.verify.Verify(ctx, &req)
	s.reqs <- req
	s.authErr <- err
	if err != nil {
		return
	}
	reply := s.handle(req, id)
	if reply == nil {
		return
	}
	if err := s.signer.SignHash(ctx, reply, auth.UIDAny, id.Hash); err != nil {
		return
	}
	_ = wire.WriteFrame(conn, nil, reply)
}

func rcFrame(rc uint32) *codec.Frame {
	w := pack.NewWriter(nil)
	w.U32(rc)
	f := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, w.Bytes())
	return &f
}

func setup(t *testing.T) (*auth.Munge, *auth.Munge) {
	good := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	other := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	return good, other
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestPingAndRC(t *testing.T) {
	good, _ := setup(t)
	uid := uint32(os.Getuid())
	s := startFake(t, good, good, func(req codec.Frame, id auth.Identity) *codec.Frame {
		if req.Header.MsgType == msgtype.REQUEST_RECONFIGURE {
			return rcFrame(uint32(slurmerr.ESLURM_USER_ID_MISSING))
		}
		return rcFrame(0)
	})
	c := &client.Client{Controllers: []string{s.ln.Addr().String()}, Auth: good, SlurmUserUID: uid}
	ctx := context.Background()
	if err := c.Ping(ctx, 0); err != nil {
		t.Fatal(err)
	}
	req := <-s.reqs
	if req.Header.Version != codec.Version2205 || len(req.Body) != 0 || req.Header.Flags != 0 {
		t.Errorf("ping request header %+v", req.Header)
	}
	err := c.CallRC(ctx, msgtype.REQUEST_RECONFIGURE, nil)
	if !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_USER_ID_MISSING}) {
		t.Fatalf("CallRC: %v", err)
	}
}

func TestFailover(t *testing.T) {
	good, _ := setup(t)
	s := startFake(t, good, good, func(codec.Frame, auth.Identity) *codec.Frame { return rcFrame(0) })
	c := &client.Client{Controllers: []string{closedAddr(t), s.ln.Addr().String()}, Auth: good}
	r, err := c.Call(context.Background(), msgtype.REQUEST_PING, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Controller != 1 {
		t.Errorf("answered by controller %d, want the backup (1)", r.Controller)
	}
}

func TestNoController(t *testing.T) {
	good, _ := setup(t)
	c := &client.Client{Controllers: []string{closedAddr(t)}, Auth: good, Sweeps: 2, SweepDelay: 10 * time.Millisecond}
	_, err := c.Call(context.Background(), msgtype.REQUEST_PING, nil)
	if !errors.Is(err, client.ErrConnect) || slurmerr.Code(err) != slurmerr.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR {
		t.Fatalf("%v", err)
	}
	if err := c.Ping(context.Background(), 3); !errors.Is(err, client.ErrConnect) {
		t.Fatalf("ping to a missing controller: %v", err)
	}
}

func TestReplyChecks(t *testing.T) {
	good, other := setup(t)
	ctx := context.Background()
	cases := []struct {
		name   string
		signer *auth.Munge
		handle func(codec.Frame, auth.Identity) *codec.Frame
		err    error
		code   int
	}{
		{"reply signed with another key", other, func(codec.Frame, auth.Identity) *codec.Frame { return rcFrame(0) },
			client.ErrReplyAuth, slurmerr.SLURM_PROTOCOL_AUTHENTICATION_ERROR},
		{"no reply", good, func(codec.Frame, auth.Identity) *codec.Frame { return nil },
			client.ErrReceive, slurmerr.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR},
		{"unexpected type", good, func(codec.Frame, auth.Identity) *codec.Frame {
			f := codec.NewFrame(msgtype.RESPONSE_BUILD_INFO, codec.AuthBlob{}, []byte{1})
			return &f
		}, client.ErrUnexpected, slurmerr.SLURM_UNEXPECTED_MSG_ERROR},
		{"short rc body", good, func(codec.Frame, auth.Identity) *codec.Frame {
			f := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0})
			return &f
		}, client.ErrReceive, slurmerr.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startFake(t, good, tc.signer, tc.handle)
			c := &client.Client{Controllers: []string{s.ln.Addr().String()}, Auth: good, SlurmUserUID: uint32(os.Getuid())}
			err := c.Ping(ctx, 0)
			if !errors.Is(err, tc.err) || slurmerr.Code(err) != tc.code {
				t.Fatalf("got %v (code %s), want %v / %s", err, slurmerr.Name(slurmerr.Code(err)), tc.err, slurmerr.Name(tc.code))
			}
		})
	}
}

// TestReplyHashBinding: a reply whose credential was made for another body
// is refused.
func TestReplyHashBinding(t *testing.T) {
	good, _ := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := wire.ReadFrame(conn, nil, 0); err != nil {
			return
		}
		f := rcFrame(0)
		if err := good.Sign(context.Background(), f, auth.UIDAny); err != nil {
			return
		}
		f.Body = []byte{0, 0, 0, 1} // rc 1 under a credential for rc 0
		_ = wire.WriteFrame(conn, nil, f)
	}()
	c := &client.Client{Controllers: []string{ln.Addr().String()}, Auth: good}
	err = c.CallRC(context.Background(), msgtype.REQUEST_RECONFIGURE, nil)
	if !errors.Is(err, client.ErrReplyAuth) || !errors.Is(err, auth.ErrHash) ||
		slurmerr.Code(err) != slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Fatalf("%v", err)
	}
}

func TestContextCancel(t *testing.T) {
	good, _ := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			defer conn.Close()
			time.Sleep(3 * time.Second) // never answers
		}
	}()
	c := &client.Client{Controllers: []string{ln.Addr().String()}, Auth: good}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Call(ctx, msgtype.REQUEST_PING, nil)
	if !errors.Is(err, client.ErrReceive) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}
