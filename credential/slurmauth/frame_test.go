package slurmauth

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// daemon returns a key-holding Slurm running as uid/gid with a test clock.
func daemon(t testing.TB, k *Key, uid, gid uint32, c *clock) *Slurm {
	return &Slurm{Key: k, Cluster: "demo", Host: "ctl", Clock: c.now,
		ids: func() (uint32, uint32) { return uid, gid }}
}

func signedFrame(t testing.TB, s *Slurm, mt msgtype.Type, body []byte, rUID uint32) codec.Frame {
	t.Helper()
	f := codec.NewFrame(mt, codec.AuthBlob{}, body)
	if err := s.Sign(context.Background(), &f, rUID); err != nil {
		t.Fatal(err)
	}
	return f
}

func wantFrameErr(t *testing.T, err error, sentinel error, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %q does not match %v", err, sentinel)
	}
	if got := slurmerr.Code(err); got != code {
		t.Fatalf("error %q has code %s, want %s", err, slurmerr.Name(got), slurmerr.Name(code))
	}
}

func TestFrameRoundTrip(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	sender := daemon(t, k, 1234, 5678, c)
	recv := daemon(t, k, 0, 0, c)
	body := []byte{0, 0, 0, 0, 0, 0, 0, 1}
	f := signedFrame(t, sender, msgtype.REQUEST_NODE_INFO, body, UIDAny)

	// The section on the wire: u32 103, packstr token.
	raw := f.Auth.Raw
	if binary.BigEndian.Uint32(raw) != 103 || f.Auth.PluginID != codec.AuthSlurm {
		t.Fatalf("plugin id %d", binary.BigEndian.Uint32(raw))
	}
	n := binary.BigEndian.Uint32(raw[4:])
	if int(n) != len(raw)-8 || raw[len(raw)-1] != 0 || string(raw[8:len(raw)-1]) != f.Auth.Token {
		t.Fatalf("section %q", raw)
	}
	if strings.Count(f.Auth.Token, ".") != 2 {
		t.Fatalf("token %q", f.Auth.Token)
	}
	if _, err := f.Marshal(); err != nil {
		t.Fatal(err)
	}

	// Only Raw, as a decoder fills it.
	g := f
	g.Auth = codec.AuthBlob{PluginID: codec.AuthSlurm, Raw: f.Auth.Raw}
	id, cl, err := recv.VerifyClaims(context.Background(), &g)
	if err != nil {
		t.Fatal(err)
	}
	if id.UID != 1234 || id.GID != 5678 || id.Hash != authhash.K12 {
		t.Fatalf("identity %+v", id)
	}
	if cl.Context != ContextAuth || cl.Host != "ctl" || cl.Cluster != "demo" || cl.Version != uint16(codec.Current) {
		t.Fatalf("claims %+v", cl)
	}
}

// TestWireDecode goes through the wire decoder of a receiver that has
// auth/slurm loaded.
func TestWireDecode(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	f := signedFrame(t, daemon(t, k, 1, 1, c), msgtype.REQUEST_PING, nil, UIDAny)
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	receiver := codec.Codec{Bodies: codec.DefaultRegistry(), AcceptAuthSlurm: true}
	g, err := receiver.DecodeFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := daemon(t, k, 0, 0, c).Verify(context.Background(), &g); err != nil {
		t.Fatal(err)
	}
}

func TestFrameHashNone(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	s := daemon(t, k, 1, 1, c)
	s.Hash = authhash.None
	f := signedFrame(t, s, msgtype.REQUEST_PING, nil, UIDAny)
	id, err := daemon(t, k, 0, 0, c).Verify(context.Background(), &f)
	if err != nil || id.Hash != authhash.None {
		t.Fatalf("%+v %v", id, err)
	}
	r := daemon(t, k, 0, 0, c)
	r.Policy.BlockZeroHash = true
	_, err = r.Verify(context.Background(), &f)
	wantFrameErr(t, err, ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
}

func TestFrameNullHash(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	p := mintParams()
	p.Payload = nil
	p.Now = t0
	f := codec.NewFrame(msgtype.REQUEST_PING, AuthBlob(mustMint(t, k, p)), nil)
	if _, err := daemon(t, k, 0, 0, c).Verify(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	r := daemon(t, k, 0, 0, c)
	r.Policy.BlockNullHash = true
	_, err := r.Verify(context.Background(), &f)
	wantFrameErr(t, err, ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
}

// TestBinding is checklist item 1: a token is bound to its message type,
// body, length, recipient, lifetime and cluster.
func TestBinding(t *testing.T) {
	k := testKey(t)
	body := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	incomplete := slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET
	invalid := slurmerr.ESLURM_AUTH_CRED_INVALID
	cases := []struct {
		name   string
		rUID   uint32
		mutate func(f *codec.Frame, r *Slurm, c *clock)
		err    error
		code   int
	}{
		{"other msg type", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Header.MsgType = msgtype.REQUEST_PARTITION_INFO }, ErrHash, incomplete},
		{"other body", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Body = []byte{1, 2, 3, 4, 5, 6, 7, 9} }, ErrHash, incomplete},
		{"trailing byte counted", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) {
			f.Body = append(append([]byte(nil), f.Body...), 0)
			f.Header.BodyLength++
		}, ErrHash, incomplete},
		{"trailing byte not counted", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Body = append(append([]byte(nil), f.Body...), 0) }, ErrBodyLength, incomplete},
		{"shorter body", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Body = f.Body[:7]; f.Header.BodyLength-- }, ErrHash, incomplete},
		{"other recipient", 1000, nil, ErrCredInvalid, invalid},
		{"expired", UIDAny, func(_ *codec.Frame, _ *Slurm, c *clock) { c.t = c.t.Add(61 * time.Second) }, ErrCredInvalid, invalid},
		{"other cluster", UIDAny, func(_ *codec.Frame, r *Slurm, _ *clock) { r.Cluster = "other" }, ErrCredInvalid, invalid},
		{"other key", UIDAny, func(_ *codec.Frame, r *Slurm, _ *clock) { r.Key = otherKey(t) }, ErrCredInvalid, invalid},
		{"trailing byte in auth section", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) {
			f.Auth.Raw = append(append([]byte(nil), f.Auth.Raw...), 0)
		}, ErrUnpack, incomplete},
		{"null token", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) {
			f.Auth.Raw = []byte{0, 0, 0, 103, 0, 0, 0, 0}
		}, ErrUnpack, incomplete},
		{"auth/munge section", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Auth = codec.MungeAuth("MUNGE:AAAA:") }, ErrPlugin, incomplete},
		{"auth/none section", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Auth = codec.NoneAuth(0, 0, "h") }, ErrPlugin, incomplete},
		{"auth/jwt section", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Auth = codec.JWTAuth(f.Auth.Token, "root") }, ErrPlugin, incomplete},
		{"garbage token", UIDAny, func(f *codec.Frame, _ *Slurm, _ *clock) { f.Auth = AuthBlob("x.y.z") }, ErrCredInvalid, invalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t0}
			f := signedFrame(t, daemon(t, k, 1000, 1000, c), msgtype.REQUEST_NODE_INFO, body, tc.rUID)
			r := daemon(t, k, 0, 0, c)
			if tc.mutate != nil {
				tc.mutate(&f, r, c)
			}
			_, err := r.Verify(context.Background(), &f)
			wantFrameErr(t, err, tc.err, tc.code)
		})
	}
}

// TestIdentityFromTokenOnly: the claimed identity in an auth/none style
// field or the body cannot change who the sender is.
func TestIdentityFromTokenOnly(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	f := signedFrame(t, daemon(t, k, 4321, 8765, c), msgtype.REQUEST_PING, nil, UIDAny)
	f.Auth.UID, f.Auth.GID = 0, 0 // parsed fields are ignored; Raw is what counts
	id, err := daemon(t, k, 0, 0, c).Verify(context.Background(), &f)
	if err != nil || id.UID != 4321 || id.GID != 8765 {
		t.Fatalf("%+v %v", id, err)
	}
}

func TestReplayCache(t *testing.T) {
	k := testKey(t)
	c := &clock{t0}
	f := signedFrame(t, daemon(t, k, 1, 1, c), msgtype.REQUEST_PING, nil, UIDAny)
	r := daemon(t, k, 0, 0, c)
	// Without a cache an identical frame verifies again, as in Slurm 23.11.
	for range 2 {
		if _, err := r.Verify(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
	}
	r.Replay = &ReplayCache{Max: 2}
	if _, err := r.Verify(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	_, err := r.Verify(context.Background(), &f)
	wantFrameErr(t, err, ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID)
	if !errors.Is(err, ErrReplayed) {
		t.Fatal(err)
	}
	// Full of live tokens: fail closed; once they expire, room again.
	c.t = t0.Add(time.Second)
	g := signedFrame(t, daemon(t, k, 1, 1, c), msgtype.REQUEST_PING, nil, UIDAny)
	if _, err := r.Verify(context.Background(), &g); err != nil {
		t.Fatal(err)
	}
	c.t = t0.Add(2 * time.Second)
	h := signedFrame(t, daemon(t, k, 1, 1, c), msgtype.REQUEST_PING, nil, UIDAny)
	if _, err := r.Verify(context.Background(), &h); !errors.Is(err, ErrReplayed) {
		t.Fatalf("full cache: %v", err)
	}
	c.t = t0.Add(62 * time.Second)
	i := signedFrame(t, daemon(t, k, 1, 1, c), msgtype.REQUEST_PING, nil, UIDAny)
	if _, err := r.Verify(context.Background(), &i); err != nil {
		t.Fatal(err)
	}
}

func TestSignErrors(t *testing.T) {
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	err := (&Slurm{}).Sign(context.Background(), &f, UIDAny)
	wantFrameErr(t, err, ErrSign, slurmerr.ESLURM_AUTH_UNABLE_TO_SIGN)
	f.Body = []byte{1}
	err = (&Slurm{Key: testKey(t)}).Sign(context.Background(), &f, UIDAny)
	wantFrameErr(t, err, ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
}
