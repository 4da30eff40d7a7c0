package slurmauth

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// FuzzParseToken: no input panics, and anything accepted is a token we
// minted (the fuzzer cannot forge HMAC-SHA256), with claims that pass the
// checks.
func FuzzParseToken(f *testing.F) {
	k := testKey(f)
	good := mustMint(f, k, mintParams())
	f.Add(good)
	f.Add(mustMint(f, otherKey(f), mintParams()))
	parts := strings.Split(good, ".")
	f.Add("eyJhbGciOiJub25lIn0." + parts[1] + ".")
	f.Add(parts[0] + "." + parts[1])
	f.Add("..")
	f.Add("")
	f.Add("a.b.c.d")
	minted := map[string]bool{good: true}
	v := verifyParams()
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := k.Parse(tok, v)
		if err != nil {
			if c != nil {
				t.Fatal("claims with an error")
			}
			return
		}
		if !minted[tok] {
			// Accepted but not minted by us: only a re-encoding of our
			// token's signature bits could get here, never new claims.
			if c.UID != 1000 || c.GID != 1001 || c.Cluster != "demo" {
				t.Fatalf("forged token accepted: %q -> %+v", tok, c)
			}
		}
		if c.Context != ContextAuth && c.Context != ContextSack || c.Expires < v.Now.Unix() {
			t.Fatalf("accepted bad claims %+v", c)
		}
		_, _ = parseUnverified(tok, v)
	})
}

// FuzzSackRequest: the request decoder never panics, anything it accepts is
// within bounds and re-encodes to the same bytes, and the server's own path
// (header then body) agrees with the whole-message decoder.
func FuzzSackRequest(f *testing.F) {
	f.Add(AppendSackRequest(nil, &SackRequest{Version: 0x2600, RPC: SackCreate, RUID: UIDAny, Payload: []byte{2, 1, 2, 3}}))
	f.Add(AppendSackRequest(nil, &SackRequest{Version: 0x2600, RPC: SackVerify, Token: "a.b.c"}))
	f.Add(AppendSackRequest(nil, &SackRequest{Version: 0x2800, RPC: SackCreate}))
	f.Add(hdr(0x2600, 0xFFFFFFFF, SackCreate))
	f.Add(append(hdr(0x2600, 12, SackVerify), 0, 0, 0, 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeSackRequest(b)
		_, rpc, rest, herr := ParseSackHeader(b)
		if herr == nil && (rest < 0 || rest > MaxSackRequest) {
			t.Fatalf("header rest %d", rest)
		}
		if err != nil {
			return
		}
		if herr != nil || len(b) != SackHeaderLength+rest || req.RPC != rpc {
			t.Fatalf("decoders disagree: %v %d %d", herr, rest, len(b))
		}
		if len(req.Payload) > MaxSackPayload || len(req.Token) > MaxSackRequest {
			t.Fatalf("out of bounds: %d %d", len(req.Payload), len(req.Token))
		}
		if out := AppendSackRequest(nil, &req); !bytes.Equal(out, b) {
			t.Fatalf("re-encoded\n%x\nwant\n%x", out, b)
		}
	})
}

// FuzzVerifyFrame: a frame with an arbitrary auth section and body never
// panics the verifier and is never accepted unless it is the signed one.
func FuzzVerifyFrame(f *testing.F) {
	k := testKey(f)
	c := &clock{t0}
	s := daemon(f, k, 1000, 1000, c)
	signed := signedFrame(f, s, msgtype.REQUEST_PING, []byte("ping"), UIDAny)
	f.Add(signed.Auth.Raw, []byte("ping"), uint16(msgtype.REQUEST_PING))
	f.Add([]byte{0, 0, 0, 103, 0, 0, 0, 0}, []byte{}, uint16(1008))
	f.Fuzz(func(t *testing.T, raw, body []byte, mt uint16) {
		fr := codec.Frame{
			Header: codec.Header{Version: codec.Current, MsgType: msgtype.Type(mt), BodyLength: uint32(len(body))},
			Auth:   codec.AuthBlob{PluginID: codec.AuthSlurm, Raw: raw},
			Body:   body,
		}
		id, err := s.Verify(context.Background(), &fr)
		if err != nil {
			return
		}
		if mt != uint16(msgtype.REQUEST_PING) || string(body) != "ping" || id.UID != 1000 {
			t.Fatalf("accepted %x %q %d as %+v", raw, body, mt, id)
		}
	})
}
