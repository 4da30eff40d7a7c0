package slurmcli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// noneAuth is auth/none: the uid travels in the frame, so tests need no
// munged.
type noneAuth struct{}

func (noneAuth) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return noneAuth{}.SignHash(ctx, f, rUID, authhash.Default)
}

func (noneAuth) SignHash(_ context.Context, f *codec.Frame, _ uint32, _ authhash.Type) error {
	f.Auth = codec.NoneAuth(0, 0, "test")
	return nil
}

func (noneAuth) Verify(_ context.Context, f *codec.Frame) (auth.Identity, error) {
	return auth.Identity{UID: f.Auth.UID, GID: f.Auth.GID}, nil
}

// testConn serves h on a loopback port and returns a Conn to it.
func testConn(t *testing.T, h server.Mux) (*Conn, *bytes.Buffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server.Server{Auth: noneAuth{}, Handler: h, Codec: &codec.Codec{Bodies: msg.Registry()},
		Timeout: 5 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-done
	})
	var log bytes.Buffer
	c := &Conn{Client: &client.Client{Controllers: []string{ln.Addr().String()}, Auth: noneAuth{},
		MessageTimeout: 5 * time.Second}, Log: &log, Prog: "scontrol", Verbose: 2}
	return c, &log
}

func reply(r *server.Response) server.Handler {
	return server.HandlerFunc(func(context.Context, *server.Request) *server.Response { return r })
}

func TestRPC(t *testing.T) {
	flushed := 0
	c, log := testConn(t, server.Mux{
		msgtype.REQUEST_TOPO_INFO: reply(&server.Response{MsgType: msgtype.RESPONSE_TOPO_INFO,
			Body: &msg.TopoInfoResponse{Switches: []msg.TopoSwitch{{Name: msg.Str("s0"), Nodes: msg.Str("n[1-2]")}}}}),
		msgtype.REQUEST_SET_DEBUG_LEVEL:    reply(server.RCMsg(slurmerr.ESLURM_ACCESS_DENIED, "first line\nsecond line\n")),
		msgtype.REQUEST_SET_SCHEDLOG_LEVEL: reply(server.RC(0)),
		msgtype.REQUEST_LICENSE_INFO:       reply(server.RC(0)),
		msgtype.REQUEST_BATCH_SCRIPT:       reply(&server.Response{MsgType: msgtype.RESPONSE_JOB_READY, Body: codec.ReturnCode{}}),
	})
	c.Flush = func() { flushed++ }
	ctx := context.Background()

	v, err := c.RPC(ctx, msgtype.REQUEST_TOPO_INFO, msg.Empty{}, msgtype.RESPONSE_TOPO_INFO)
	if tr, ok := v.(msg.TopoInfoResponse); err != nil || !ok || len(tr.Switches) != 1 || tr.Switches[0].Nodes.Value != "n[1-2]" {
		t.Fatalf("topology: %#v, %v", v, err)
	}
	wantLog := "scontrol: debug:  auth/munge: init: Munge authentication plugin loaded\n" +
		"scontrol: debug:  hash/k12: init: init: KangarooTwelve hash plugin loaded\n"
	if log.String() != wantLog {
		t.Errorf("auth lines %q", log.String())
	}
	log.Reset()

	// RESPONSE_SLURM_RC_MSG: each line logged as an error, then the code.
	err = c.RPCRC(ctx, msgtype.REQUEST_SET_DEBUG_LEVEL, msg.SetDebugLevelRequest{Level: 3})
	if slurmerr.Code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Errorf("rc msg: %v", err)
	}
	if want := "scontrol: error: first line\nscontrol: error: second line\n"; log.String() != want {
		t.Errorf("rc msg log %q, want %q", log.String(), want)
	}
	if flushed == 0 {
		t.Error("stdout not flushed before logging")
	}
	log.Reset()
	if err := c.RPCRC(ctx, msgtype.REQUEST_SET_SCHEDLOG_LEVEL, msg.SetDebugLevelRequest{Level: 1}); err != nil {
		t.Errorf("rc 0: %v", err)
	}
	// A zero return code where records were expected: nil, nil from RPC,
	// an unexpected message for the load functions.
	if v, err := c.RPC(ctx, msgtype.REQUEST_LICENSE_INFO, msg.InfoRequest{}, msgtype.RESPONSE_LICENSE_INFO); v != nil || err != nil {
		t.Errorf("rc 0 for records: %#v, %v", v, err)
	}
	if _, err := c.call(ctx, msgtype.REQUEST_LICENSE_INFO, msg.InfoRequest{}, msgtype.RESPONSE_LICENSE_INFO); !errors.Is(err, client.ErrUnexpected) {
		t.Errorf("load with rc 0: %v", err)
	}
	// Another reply type.
	_, err = c.RPC(ctx, msgtype.REQUEST_BATCH_SCRIPT, msg.JobIDShowRequest{JobID: 1}, msgtype.RESPONSE_BATCH_SCRIPT)
	if slurmerr.Code(err) != slurmerr.SLURM_UNEXPECTED_MSG_ERROR {
		t.Errorf("wrong reply type: %v", err)
	}
	// A type without a codec fails before anything is sent.
	if _, err := c.RPC(ctx, msgtype.REQUEST_PERSIST_INIT, msg.Empty{}, msgtype.RESPONSE_SLURM_RC); err == nil {
		t.Error("message without a codec sent")
	}
	if log.Len() != 0 {
		t.Errorf("unexpected log %q", log.String())
	}
}
