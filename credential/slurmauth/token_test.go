package slurmauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

var t0 = time.Unix(1_700_000_000, 0)

func testKey(t testing.TB) *Key {
	t.Helper()
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(i * 7)
	}
	k, err := NewKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func otherKey(t testing.TB) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{0x5a}, 64))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mintParams() MintParams {
	payload, _ := authhash.Compute(authhash.K12, 2007, []byte("body"))
	return MintParams{
		Context: ContextAuth, UID: 1000, GID: 1001, RUID: UIDAny, Payload: payload,
		Cluster: "demo", Host: "node1", Version: 0x2600, Now: t0,
	}
}

func verifyParams() VerifyParams {
	return VerifyParams{Now: t0.Add(10 * time.Second), DecoderUID: 0, Cluster: "demo"}
}

func mustMint(t testing.TB, k *Key, p MintParams) string {
	t.Helper()
	tok, err := k.Mint(p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func wantCred(t *testing.T, err error, cause error) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v", cause)
	}
	if !errors.Is(err, ErrCredInvalid) || !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_AUTH_CRED_INVALID}) {
		t.Fatalf("error %q is not ErrCredInvalid/ESLURM_AUTH_CRED_INVALID", err)
	}
	if cause != nil && !errors.Is(err, cause) {
		t.Fatalf("error %q, want cause %v", err, cause)
	}
}

func TestMintParse(t *testing.T) {
	k := testKey(t)
	p := mintParams()
	c, err := k.Parse(mustMint(t, k, p), verifyParams())
	if err != nil {
		t.Fatal(err)
	}
	want := Claims{
		IssuedAt: t0.Unix(), Expires: t0.Unix() + 60, Version: 0x2600, RUID: UIDAny,
		Context: ContextAuth, Cluster: "demo", UID: 1000, GID: 1001, Host: "node1", Payload: p.Payload,
	}
	if !claimsEqual(*c, want) {
		t.Fatalf("claims\n got %+v\nwant %+v", *c, want)
	}
}

func claimsEqual(a, b Claims) bool {
	return bytes.Equal(a.Payload, b.Payload) && a.IssuedAt == b.IssuedAt && a.Expires == b.Expires &&
		a.Version == b.Version && a.RUID == b.RUID && a.Context == b.Context && a.Cluster == b.Cluster &&
		a.UID == b.UID && a.GID == b.GID && a.Host == b.Host
}

// TestTokenShape: the header and claim names and JSON types Slurm 23.11
// writes with libjwt.
func TestTokenShape(t *testing.T) {
	k := testKey(t)
	p := mintParams()
	p.TTL = 90 * time.Second
	tok := mustMint(t, k, p)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	var hdr, claims map[string]any
	for i, v := range []*map[string]any{&hdr, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	if hdr["alg"] != "HS256" || hdr["typ"] != "JWT" || len(hdr) != 2 {
		t.Errorf("header %v", hdr)
	}
	nums := map[string]string{"iat": "1700000000", "exp": "1700000090", "ver": "9728", "ruid": "4294967295", "uid": "1000", "gid": "1001"}
	for name, v := range nums {
		if n, ok := claims[name].(json.Number); !ok || n.String() != v {
			t.Errorf("claim %s = %#v, want number %s", name, claims[name], v)
		}
	}
	strs := map[string]string{"context": "auth", "cluster": "demo", "host": "node1",
		"payload": base64.StdEncoding.EncodeToString(p.Payload)}
	for name, v := range strs {
		if claims[name] != v {
			t.Errorf("claim %s = %#v, want %q", name, claims[name], v)
		}
	}
	// jti: the per-token nonce, 16 random bytes in unpadded base64url.
	if jti, ok := claims["jti"].(string); !ok || len(jti) != 22 {
		t.Errorf("claim jti = %#v, want a 22-character nonce", claims["jti"])
	}
	if len(claims) != len(nums)+len(strs)+1 {
		t.Errorf("claims %v", claims)
	}
	// No cluster name, no payload: the claims are left out.
	p.Cluster, p.Payload = "", nil
	c, err := k.Parse(mustMint(t, k, p), VerifyParams{Now: t0})
	if err != nil || c.Cluster != "" || c.Payload != nil {
		t.Fatalf("claims %+v, %v", c, err)
	}
}

// forge builds a token with an arbitrary header and claims and a signature
// from sign (nil: empty signature).
func forge(t *testing.T, header, claims any, sign func(string) []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	s := enc(header) + "." + enc(claims)
	var sig []byte
	if sign != nil {
		sig = sign(s)
	}
	return s + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func claimsMap(t *testing.T, k *Key, p MintParams) map[string]any {
	t.Helper()
	tok := mustMint(t, k, p)
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// hmacWith signs with k's secret and h, computed here independently of
// the code under test.
func hmacWith(k *Key, h func() hash.Hash) func(string) []byte {
	return func(s string) []byte {
		m := hmac.New(h, k.secret)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
}

func hs256(k *Key) func(string) []byte { return hmacWith(k, sha256.New) }

func TestParseRejects(t *testing.T) {
	k := testKey(t)
	good := mustMint(t, k, mintParams())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(p *MintParams)) string {
		p := mintParams()
		f(&p)
		return mustMint(t, k, p)
	}
	edit := func(f func(m map[string]any)) string {
		m := claimsMap(t, k, mintParams())
		f(m)
		return forge(t, map[string]string{"alg": "HS256", "typ": "JWT"}, m, hs256(k))
	}
	hdr := func(alg string) map[string]string { return map[string]string{"alg": alg, "typ": "JWT"} }
	claims := claimsMap(t, k, mintParams())
	rs256 := forge(t, hdr("RS256"), claims, func(s string) []byte {
		d := sha256.Sum256([]byte(s))
		sig, err := rsa.SignPKCS1v15(rand.Reader, rsaKey, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	})
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	es256 := forge(t, hdr("ES256"), claims, func(s string) []byte {
		d := sha256.Sum256([]byte(s))
		sig, err := ecdsa.SignASN1(rand.Reader, ecKey, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	})
	// The same token with its signature re-encoded: padded, or with
	// non-zero trailing bits (the last character of 43 carries 2 spare
	// bits).
	sigPart := parts(good)[2]
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	spare := []byte(sigPart)
	spare[len(spare)-1] = alphabet[strings.IndexByte(alphabet, spare[len(spare)-1])^1]
	if b, err := base64.RawURLEncoding.DecodeString(string(spare)); err != nil || len(sigPart) != 43 {
		t.Fatalf("lenient decode of the spare-bit signature: %v (%d chars)", err, len(sigPart))
	} else if want, _ := base64.RawURLEncoding.DecodeString(sigPart); !bytes.Equal(b, want) {
		t.Fatal("spare-bit signature decodes to other bytes")
	}
	parts := parts(good)
	flipped := []byte(parts[2])
	if flipped[3] == 'A' {
		flipped[3] = 'B'
	} else {
		flipped[3] = 'A'
	}
	cases := []struct {
		name  string
		tok   string
		v     func(v *VerifyParams)
		cause error
	}{
		{"forged signature", parts[0] + "." + parts[1] + "." + string(flipped), nil, ErrSignature},
		{"signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(with(func(p *MintParams) { p.UID = 0 }), ".")[2], nil, ErrSignature},
		{"claims edited to uid 0", parts[0] + "." + strings.Split(with(func(p *MintParams) { p.UID = 0 }), ".")[1] + "." + parts[2], nil, ErrSignature},
		{"alg none, empty signature", forge(t, map[string]string{"alg": "none", "typ": "JWT"}, claimsMap(t, k, mintParams()), nil), nil, ErrSignature},
		{"alg none, library form", forge(t, hdr("none"), claims, nil), nil, ErrSignature},
		{"alg none with a valid HS256 signature", forge(t, hdr("none"), claims, hs256(k)), nil, ErrSignature},
		{"alg missing", forge(t, map[string]string{"typ": "JWT"}, claims, hs256(k)), nil, ErrSignature},
		{"alg a number", forge(t, map[string]any{"alg": 256}, claims, hs256(k)), nil, ErrSignature},
		{"alg HS256 with a space", forge(t, hdr("HS256 "), claims, hs256(k)), nil, ErrSignature},
		{"alg None, HS256 signature", forge(t, map[string]string{"alg": "None"}, claimsMap(t, k, mintParams()), hs256(k)), nil, ErrSignature},
		{"alg hs256 lower case", forge(t, map[string]string{"alg": "hs256"}, claimsMap(t, k, mintParams()), hs256(k)), nil, ErrSignature},
		{"no signature part", parts[0] + "." + parts[1], nil, ErrMalformed},
		{"HS384 with the key", forge(t, hdr("HS384"), claims, hmacWith(k, sha512.New384)), nil, ErrSignature},
		{"HS512 with the key", forge(t, hdr("HS512"), claims, hmacWith(k, sha512.New)), nil, ErrSignature},
		{"HS256 header, HS512 signature", forge(t, hdr("HS256"), claims, hmacWith(k, sha512.New)), nil, ErrSignature},
		{"RS256", rs256, nil, ErrSignature},
		{"ES256", es256, nil, ErrSignature},
		{"empty signature", parts[0] + "." + parts[1] + ".", nil, ErrSignature},
		{"truncated signature", parts[0] + "." + parts[1] + "." + sigPart[:40], nil, ErrSignature},
		{"signature with padding", good + "=", nil, ErrMalformed},
		{"signature with spare bits set", parts[0] + "." + parts[1] + "." + string(spare), nil, ErrMalformed},
		{"four segments", good + ".x", nil, ErrMalformed},
		// The base64 decoder skips newlines: a copy with one must not
		// verify (the replay cache keys on the token text).
		{"newline in the signature", parts[0] + "." + parts[1] + "." + sigPart[:20] + "\n" + sigPart[20:], nil, ErrMalformed},
		{"carriage return in the claims", parts[0] + "." + parts[1][:10] + "\r" + parts[1][10:] + "." + parts[2], nil, ErrMalformed},
		{"header not JSON", base64.RawURLEncoding.EncodeToString([]byte("alg")) + "." + parts[1] + "." + parts[2], nil, ErrMalformed},
		{"claims not JSON", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte("{")) + "." + parts[2], nil, ErrMalformed},
		{"claims in standard base64", parts[0] + "." + base64.StdEncoding.EncodeToString(mustJSON(t, claims)) + "." + parts[2], nil, ErrMalformed},
		{"wrong key", mustMint(t, otherKey(t), mintParams()), nil, ErrSignature},
		{"expired", good, func(v *VerifyParams) { v.Now = t0.Add(61 * time.Second) }, ErrExpired},
		{"expired a second ago", good, func(v *VerifyParams) { v.Now = t0.Add(60*time.Second + time.Second) }, ErrExpired},
		{"expired long ago", good, func(v *VerifyParams) { v.Now = t0.Add(24 * time.Hour) }, ErrExpired},
		{"ruid other uid", with(func(p *MintParams) { p.RUID = 1000 }), nil, ErrRUID},
		{"ruid root, verifier 1000", with(func(p *MintParams) { p.RUID = 0 }), func(v *VerifyParams) { v.DecoderUID = 1000 }, ErrRUID},
		{"wrong cluster", with(func(p *MintParams) { p.Cluster = "other" }), nil, ErrCluster},
		{"no cluster claim", with(func(p *MintParams) { p.Cluster = "" }), nil, ErrCluster},
		{"context other", edit(func(m map[string]any) { m["context"] = "cred" }), nil, ErrContext},
		{"no uid", edit(func(m map[string]any) { delete(m, "uid") }), nil, ErrClaims},
		{"no gid", edit(func(m map[string]any) { delete(m, "gid") }), nil, ErrClaims},
		{"no host", edit(func(m map[string]any) { delete(m, "host") }), nil, ErrClaims},
		{"no exp", edit(func(m map[string]any) { delete(m, "exp") }), nil, ErrClaims},
		{"no ruid", edit(func(m map[string]any) { delete(m, "ruid") }), nil, ErrClaims},
		{"no context", edit(func(m map[string]any) { delete(m, "context") }), nil, ErrClaims},
		{"uid negative", edit(func(m map[string]any) { m["uid"] = -1 }), nil, ErrMalformed},
		{"uid too big", edit(func(m map[string]any) { m["uid"] = 1 << 32 }), nil, ErrMalformed},
		{"uid string", edit(func(m map[string]any) { m["uid"] = "0" }), nil, ErrMalformed},
		{"uid fraction", edit(func(m map[string]any) { m["uid"] = 0.5 }), nil, ErrMalformed},
		{"exp string", edit(func(m map[string]any) { m["exp"] = "99999999999" }), nil, ErrMalformed},
		{"payload not base64", edit(func(m map[string]any) { m["payload"] = "!!" }), nil, ErrClaims},
		{"too long", strings.Repeat("a", MaxTokenLen+1), nil, ErrMalformed},
		{"empty", "", nil, ErrMalformed},
		{"garbage", "x.y.z", nil, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := verifyParams()
			if tc.v != nil {
				tc.v(&v)
			}
			c, err := k.Parse(tc.tok, v)
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			wantCred(t, err, tc.cause)
		})
	}
}

func TestParseAccepts(t *testing.T) {
	k := testKey(t)
	cases := []struct {
		name string
		p    func(p *MintParams)
		v    func(v *VerifyParams)
	}{
		{"at exp exactly", nil, func(v *VerifyParams) { v.Now = t0.Add(60 * time.Second) }},
		{"ruid equals verifier", func(p *MintParams) { p.RUID = 1000 }, func(v *VerifyParams) { v.DecoderUID = 1000 }},
		{"context sack", func(p *MintParams) { p.Context = ContextSack }, nil},
		{"verifier without cluster", func(p *MintParams) { p.Cluster = "x" }, func(v *VerifyParams) { v.Cluster = "" }},
		{"ttl 300", func(p *MintParams) { p.TTL = 300 * time.Second }, func(v *VerifyParams) { v.Now = t0.Add(299 * time.Second) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, v := mintParams(), verifyParams()
			if tc.p != nil {
				tc.p(&p)
			}
			if tc.v != nil {
				tc.v(&v)
			}
			if _, err := k.Parse(mustMint(t, k, p), v); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMintRefuses(t *testing.T) {
	k := testKey(t)
	p := mintParams()
	p.Context = "cred"
	if _, err := k.Mint(p); err == nil {
		t.Fatal("minted context cred")
	}
	var nilKey *Key
	if _, err := nilKey.Mint(mintParams()); err == nil {
		t.Fatal("minted without a key")
	}
	if _, err := nilKey.Parse("a.b.c", verifyParams()); err == nil {
		t.Fatal("parsed without a key")
	}
}

// Two tokens minted from identical parameters in the same second differ,
// so a replay cache accepts both (identical requests do happen: two
// `squeue` runs in one second).
func TestMintUnique(t *testing.T) {
	k := testKey(t)
	a, b := mustMint(t, k, mintParams()), mustMint(t, k, mintParams())
	if a == b {
		t.Fatal("two mints of the same parameters gave the same token")
	}
}

func parts(tok string) []string { return strings.Split(tok, ".") }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A token signed here with an HMAC computed independently, and Mint's own
// signature checked the same way: the implementation is plain HS256 JWS.
func TestIndependentHS256(t *testing.T) {
	k := testKey(t)
	tok := forge(t, map[string]string{"alg": "HS256", "typ": "JWT"}, claimsMap(t, k, mintParams()), hs256(k))
	if _, err := k.Parse(tok, verifyParams()); err != nil {
		t.Fatalf("hand-signed token: %v", err)
	}
	p := parts(mustMint(t, k, mintParams()))
	sig, err := base64.RawURLEncoding.DecodeString(p[2])
	if err != nil || !hmac.Equal(sig, hs256(k)(p[0]+"."+p[1])) {
		t.Fatalf("minted signature is not HMAC-SHA256 of the signed part: %v", err)
	}
}

// RFC 7515 appendix A.1 (HS256): its key verifies its signature, so the
// token fails only on our claims; with one signature bit changed, it fails
// on the signature.
func TestRFC7515HS256(t *testing.T) {
	secret, err := base64.RawURLEncoding.DecodeString("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	const tok = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9" +
		".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ" +
		".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	v := VerifyParams{Now: time.Unix(1300819380, 0)}
	_, err = k.Parse(tok, v)
	wantCred(t, err, ErrClaims)
	_, err = k.Parse(strings.Replace(tok, ".dBjf", ".dBjg", 1), v)
	wantCred(t, err, ErrSignature)
}
