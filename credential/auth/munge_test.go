package auth_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// signed returns a frame of type mt with body, signed by a for rUID.
func signed(t *testing.T, a *auth.Munge, mt msgtype.Type, body []byte, rUID uint32) codec.Frame {
	t.Helper()
	f := codec.NewFrame(mt, codec.AuthBlob{}, body)
	if err := a.Sign(ctx(t), &f, rUID); err != nil {
		t.Fatal(err)
	}
	return f
}

func wantErr(t *testing.T, err error, sentinel error, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %q does not match %v", err, sentinel)
	}
	if got := slurmerr.Code(err); got != code {
		t.Fatalf("error %q has Slurm code %s, want %s", err, slurmerr.Name(got), slurmerr.Name(code))
	}
}

func TestSignVerify(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	body := []byte{0, 0, 0, 0, 0, 0, 0, 0}
	f := signed(t, a, msgtype.REQUEST_BUILD_INFO, body, auth.UIDAny)
	if f.Auth.PluginID != codec.AuthMunge || f.Auth.MungeCred == "" {
		t.Fatalf("auth section %+v", f.Auth)
	}
	// Through the wire encoding and back, as a receiver sees it.
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	g, err := codec.DecodeFrame(raw)
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.Verify(ctx(t), &g)
	if err != nil {
		t.Fatal(err)
	}
	if id.UID != uint32(os.Getuid()) || id.GID != uint32(os.Getgid()) {
		t.Errorf("identity %+v, want uid %d gid %d", id, os.Getuid(), os.Getgid())
	}
	if id.Hash != authhash.K12 {
		t.Errorf("hash type %v, want k12", id.Hash)
	}
	if id.Origin.String() != "127.0.0.1" {
		t.Errorf("origin %v", id.Origin)
	}
}

func TestVerifyRawOnlySection(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	f := signed(t, a, msgtype.REQUEST_PING, nil, auth.UIDAny)
	f.Auth.MungeCred = "" // only Raw, as a hand-built section would be
	if _, err := a.Verify(ctx(t), &f); err != nil {
		t.Fatal(err)
	}
}

// TestBinding: a credential is bound to its message type and body; each
// case verifies a fresh credential once, so munged's replay cache is not
// what rejects it.
func TestBinding(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	body := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	cases := []struct {
		name   string
		mutate func(f *codec.Frame)
		err    error
		code   int
	}{
		{"other msg type", func(f *codec.Frame) { f.Header.MsgType = msgtype.REQUEST_PARTITION_INFO }, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"other body", func(f *codec.Frame) { f.Body = []byte{1, 2, 3, 4, 5, 6, 7, 9} }, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"trailing byte counted", func(f *codec.Frame) {
			f.Body = append(append([]byte(nil), f.Body...), 0)
			f.Header.BodyLength++
		}, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"trailing byte not counted", func(f *codec.Frame) { f.Body = append(append([]byte(nil), f.Body...), 0) }, auth.ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"shorter body", func(f *codec.Frame) { f.Body = f.Body[:7]; f.Header.BodyLength-- }, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"auth/none section", func(f *codec.Frame) { f.Auth = codec.NoneAuth(0, 0, "localhost") }, auth.ErrPlugin, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"auth/jwt section", func(f *codec.Frame) { f.Auth = codec.JWTAuth("x.y.z", "root") }, auth.ErrPlugin, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"garbage credential", func(f *codec.Frame) { f.Auth = codec.MungeAuth("MUNGE:AAAA:") }, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := signed(t, a, msgtype.REQUEST_NODE_INFO, body, auth.UIDAny)
			tc.mutate(&f)
			_, err := a.Verify(ctx(t), &f)
			wantErr(t, err, tc.err, tc.code)
		})
	}
}

// TestTrailingByteOnWire: a frame with a byte past body_length never reaches
// Verify; the codec refuses it.
func TestTrailingByteOnWire(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	f := signed(t, a, msgtype.REQUEST_BUILD_INFO, make([]byte, 8), auth.UIDAny)
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, 0)
	raw[3]++ // length prefix counts the extra byte; body_length does not
	if _, err := codec.DecodeFrame(raw); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET}) {
		t.Fatalf("decode with trailing byte: %v", err)
	}
}

func TestReplayed(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	f := signed(t, a, msgtype.REQUEST_PING, nil, auth.UIDAny)
	if _, err := a.Verify(ctx(t), &f); err != nil {
		t.Fatal(err)
	}
	_, err := a.Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
	if !errors.Is(err, munge.ErrCredReplayed) {
		t.Fatalf("%v is not EMUNGE_CRED_REPLAYED", err)
	}
}

// TestAcceptReplayed decodes one credential twice, as two slurmd sharing a
// munged do with a forwarded message: the replay verdict is accepted, the
// other checks still apply.
func TestAcceptReplayed(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client(), AcceptReplayed: true}
	f := signed(t, a, msgtype.REQUEST_PING, nil, auth.UIDAny)
	for i := range 2 {
		id, err := a.Verify(ctx(t), &f)
		if err != nil {
			t.Fatalf("decode %d: %v", i+1, err)
		}
		if id.UID != uint32(os.Getuid()) {
			t.Fatalf("decode %d: identity %+v", i+1, id)
		}
	}
	// A changed body still fails the hash check on a replayed credential.
	g := f
	g.Body = []byte{1}
	g.Header.BodyLength = 1
	_, err := a.Verify(ctx(t), &g)
	wantErr(t, err, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	// Another key is still refused.
	other := mungetest.Start(t, mungetest.Options{})
	b := &auth.Munge{Client: other.Client(), AcceptReplayed: true}
	_, err = b.Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
}

func TestExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a credential to expire")
	}
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client(), TTL: time.Second}
	f := signed(t, a, msgtype.REQUEST_PING, nil, auth.UIDAny)
	time.Sleep(2100 * time.Millisecond)
	_, err := a.Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
	if !errors.Is(err, munge.ErrCredExpired) {
		t.Fatalf("%v is not EMUNGE_CRED_EXPIRED", err)
	}
}

func TestOtherKey(t *testing.T) {
	signer := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	verifier := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	f := signed(t, signer, msgtype.REQUEST_PING, nil, auth.UIDAny)
	_, err := verifier.Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
	if !errors.Is(err, munge.ErrCredInvalid) {
		t.Fatalf("%v is not EMUNGE_CRED_INVALID", err)
	}
}

// TestUIDRestriction: a credential for another uid cannot be decoded here,
// not even by root.
func TestUIDRestriction(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	a := &auth.Munge{Client: md.Client()}
	other := uint32(os.Getuid()) + 4242
	f := signed(t, a, msgtype.REQUEST_PING, nil, other)
	_, err := a.Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
	if !errors.Is(err, munge.ErrCredUnauthorized) {
		t.Fatalf("%v is not EMUNGE_CRED_UNAUTHORIZED", err)
	}
	// Restricted to our own uid: fine.
	f = signed(t, a, msgtype.REQUEST_PING, nil, uint32(os.Getuid()))
	if _, err := a.Verify(ctx(t), &f); err != nil {
		t.Fatal(err)
	}
}

func TestHashPolicy(t *testing.T) {
	md := mungetest.Start(t, mungetest.Options{})
	cl := md.Client()
	body := []byte{9, 9}

	// Hash type NONE: accepted unless block_zero_hash.
	none := &auth.Munge{Client: cl, Hash: authhash.None}
	f := signed(t, none, msgtype.REQUEST_PING, body, auth.UIDAny)
	id, err := (&auth.Munge{Client: cl}).Verify(ctx(t), &f)
	if err != nil || id.Hash != authhash.None {
		t.Fatalf("none hash: %+v, %v", id, err)
	}
	f = signed(t, none, msgtype.REQUEST_PING, body, auth.UIDAny)
	_, err = (&auth.Munge{Client: cl, Policy: authhash.Policy{BlockZeroHash: true}}).Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	f = signed(t, none, msgtype.REQUEST_PING, body, auth.UIDAny)
	f.Header.MsgType = msgtype.REQUEST_RECONFIGURE
	_, err = (&auth.Munge{Client: cl}).Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)

	// No payload at all: accepted unless block_null_hash.
	empty := func() codec.Frame {
		cred, err := cl.Encode(ctx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return codec.NewFrame(msgtype.REQUEST_PING, codec.MungeAuth(cred), body)
	}
	f = empty()
	if id, err := (&auth.Munge{Client: cl}).Verify(ctx(t), &f); err != nil || id.Hash != authhash.Default {
		t.Fatalf("empty payload: %+v, %v", id, err)
	}
	f = empty()
	_, err = (&auth.Munge{Client: cl, Policy: authhash.Policy{BlockNullHash: true}}).Verify(ctx(t), &f)
	wantErr(t, err, auth.ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
}

func TestSignErrors(t *testing.T) {
	a := &auth.Munge{Client: &munge.Client{Socket: "/nonexistent/munge.socket", SocketRetries: -1}}
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	wantErr(t, a.Sign(ctx(t), &f, auth.UIDAny), auth.ErrSign, slurmerr.ESLURM_AUTH_CRED_INVALID)

	f.Header.BodyLength = 3
	wantErr(t, a.Sign(ctx(t), &f, auth.UIDAny), auth.ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
}
