package slurmauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// UIDAny is SLURM_AUTH_UID_ANY as ruid: any verifier may accept the token.
const UIDAny uint32 = 0xFFFFFFFF

// Token contexts.
const (
	ContextAuth = "auth" // minted by a daemon holding the key, for itself
	ContextSack = "sack" // minted by the token service for a local caller
)

// MaxTokenLen bounds a token before it is parsed (a token with a 33-byte
// hash payload is about 400 bytes).
const MaxTokenLen = 16 << 10

// Claims are a token's claims, as Slurm 23.11 writes them. Identity is UID
// and GID; Payload is the decoded authhash blob.
type Claims struct {
	IssuedAt int64 // iat, Unix seconds
	Expires  int64 // exp, Unix seconds
	Version  uint16
	RUID     uint32
	Context  string
	Cluster  string // "" when the minter had no cluster name
	UID, GID uint32
	Host     string
	Payload  []byte
}

// wireClaims is the JSON form. Pointers tell a missing claim from a zero
// one; encoding/json refuses numbers that do not fit (negative, fractional
// or too large uids), which makes the token malformed.
type wireClaims struct {
	IssuedAt *int64  `json:"iat"`
	Expires  *int64  `json:"exp"`
	Version  *uint16 `json:"ver"`
	RUID     *uint32 `json:"ruid"`
	Context  *string `json:"context"`
	Cluster  *string `json:"cluster,omitempty"`
	UID      *uint32 `json:"uid"`
	GID      *uint32 `json:"gid"`
	Host     *string `json:"host"`
	Payload  *string `json:"payload,omitempty"`
	// Nonce makes every token unique. Two identical requests from one user
	// within a second (same body hash, same iat) would otherwise get the
	// same token, and the verifier's replay cache would refuse the second;
	// a munge credential has its own salt for the same reason. Verifiers
	// ignore the claim (Slurm's too: it reads only the claims it knows).
	Nonce *string `json:"jti,omitempty"`
}

// MintParams describe a token to mint.
type MintParams struct {
	Context  string // ContextAuth or ContextSack
	UID, GID uint32 // the identity the token asserts
	RUID     uint32 // UIDAny or the only uid that may accept it
	Payload  []byte // authhash blob; nil or empty for none
	Cluster  string // "" leaves the claim out
	Host     string
	Version  uint16
	Now      time.Time
	TTL      time.Duration // 0 means DefaultTTL
}

// Mint returns a signed HS256 token for p.
func (k *Key) Mint(p MintParams) (string, error) {
	if k == nil || len(k.secret) < MinKeySize {
		return "", errors.New("slurmauth: no key")
	}
	if p.Context != ContextAuth && p.Context != ContextSack {
		return "", fmt.Errorf("slurmauth: context %q", p.Context)
	}
	ttl := p.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	iat := p.Now.Unix()
	exp := iat + int64((ttl+time.Second-1)/time.Second)
	c := wireClaims{
		IssuedAt: &iat, Expires: &exp, Version: &p.Version, RUID: &p.RUID,
		Context: &p.Context, UID: &p.UID, GID: &p.GID, Host: &p.Host,
	}
	if p.Cluster != "" {
		c.Cluster = &p.Cluster
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("slurmauth: nonce: %w", err)
	}
	n := base64.RawURLEncoding.EncodeToString(nonce[:])
	c.Nonce = &n
	if len(p.Payload) > 0 {
		s := base64.StdEncoding.EncodeToString(p.Payload)
		c.Payload = &s
	}
	body, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("slurmauth: signing: %w", err)
	}
	signed := hs256Header + "." + b64.EncodeToString(body)
	return signed + "." + b64.EncodeToString(k.hs256(signed)), nil
}

// The token format is JWS compact serialisation (RFC 7515) with HS256 only:
// base64url(header) "." base64url(claims) "." base64url(HMAC-SHA256 of the
// first two parts). It is done here rather than with a JWT library, which
// would link RSA, ECDSA, x509 and math/big into every daemon for an
// algorithm we refuse anyway.

// hs256Header is base64url of {"alg":"HS256","typ":"JWT"}, the header
// libjwt (Slurm) and golang-jwt write, keys in that order.
var hs256Header = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// b64 is unpadded base64url; Strict refuses non-zero trailing bits. The
// decoder still skips \r and \n, so decodeToken first refuses any byte
// outside the alphabet: with them a captured token could be re-encoded
// into copies that verify and that the replay cache (keyed on the token
// text) would count as new.
var b64 = base64.RawURLEncoding.Strict()

// tokenByte reports the bytes a compact token may hold: base64url's
// alphabet and the segment separator.
func tokenByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

func (k *Key) hs256(signed string) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// decodeToken splits token and decodes its header, claims and signature.
// A token that does not parse is ErrMalformed; a header whose alg is not
// exactly "HS256" is ErrSignature (alg none, other HMACs, RSA, ECDSA are
// refused by name before any key is involved). It returns the signed part
// (header "." claims) and the signature; verifying it is the caller's.
func decodeToken(token string, wc *wireClaims) (signed string, sig []byte, err error) {
	if len(token) > MaxTokenLen {
		return "", nil, credErr(ErrMalformed, "token of %d bytes, at most %d", len(token), MaxTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if !tokenByte(token[i]) {
			return "", nil, credErr(ErrMalformed, "byte %#x at %d is not base64url", token[i], i)
		}
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", nil, credErr(ErrMalformed, "token of %d segments, want 3", len(parts))
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return "", nil, credErr(ErrMalformed, "header: %v", err)
	}
	var hdr map[string]any
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return "", nil, credErr(ErrMalformed, "header: %v", err)
	}
	cb, err := b64.DecodeString(parts[1])
	if err != nil {
		return "", nil, credErr(ErrMalformed, "claims: %v", err)
	}
	// encoding/json refuses a claim of the wrong JSON type or out of its
	// Go type's range (see wireClaims).
	if err := json.Unmarshal(cb, wc); err != nil {
		return "", nil, credErr(ErrMalformed, "claims: %v", err)
	}
	if alg, ok := hdr["alg"].(string); !ok || alg != "HS256" {
		return "", nil, credErr(ErrSignature, "alg %v", hdr["alg"])
	}
	sig, err = b64.DecodeString(parts[2])
	if err != nil {
		return "", nil, credErr(ErrMalformed, "signature: %v", err)
	}
	return token[:len(parts[0])+1+len(parts[1])], sig, nil
}

// VerifyParams are what a verifier checks a token against.
type VerifyParams struct {
	Now time.Time
	// DecoderUID is the verifier's uid: ruid must be UIDAny or this.
	DecoderUID uint32
	// Cluster is the verifier's ClusterName; when set, the token's cluster
	// claim must be present and equal.
	Cluster string
}

// Parse verifies token as Slurm's verify_internal does, with two additions
// (the cluster check and strict claim typing): HS256 with k only, exp not
// before v.Now, ruid UIDAny or v.DecoderUID, context auth or sack, iat,
// uid, gid and host present, payload (if any) valid base64. The message
// hash in the payload is the frame verifier's business (Slurm.Verify).
// Errors wrap ErrCredInvalid and a cause (ErrSignature, ErrExpired, ...).
func (k *Key) Parse(token string, v VerifyParams) (*Claims, error) {
	if k == nil || len(k.secret) < MinKeySize {
		return nil, credErr(errors.New("no key"), "verify")
	}
	var wc wireClaims
	signed, sig, err := decodeToken(token, &wc)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(sig, k.hs256(signed)) {
		return nil, credErr(ErrSignature, "signature does not match")
	}
	return checkClaims(&wc, v, true)
}

// parseUnverified decodes a token's claims without checking the signature:
// for a client after sack has verified the token for it.
func parseUnverified(token string, v VerifyParams) (*Claims, error) {
	var wc wireClaims
	if _, _, err := decodeToken(token, &wc); err != nil {
		return nil, err
	}
	return checkClaims(&wc, v, true)
}

func checkClaims(wc *wireClaims, v VerifyParams, checkRUID bool) (*Claims, error) {
	if wc.IssuedAt == nil || wc.Expires == nil || wc.RUID == nil || wc.Context == nil ||
		wc.UID == nil || wc.GID == nil || wc.Host == nil {
		return nil, credErr(ErrClaims, "iat, exp, ruid, context, uid, gid and host are required")
	}
	c := &Claims{
		IssuedAt: *wc.IssuedAt, Expires: *wc.Expires, RUID: *wc.RUID, Context: *wc.Context,
		UID: *wc.UID, GID: *wc.GID, Host: *wc.Host,
	}
	if wc.Version != nil {
		c.Version = *wc.Version
	}
	if wc.Cluster != nil {
		c.Cluster = *wc.Cluster
	}
	if now := v.Now.Unix(); c.Expires < now {
		return nil, credErr(ErrExpired, "expired at %d, now %d", c.Expires, now)
	}
	if checkRUID && c.RUID != UIDAny && c.RUID != v.DecoderUID {
		return nil, credErr(ErrRUID, "ruid %d, verifier uid %d", c.RUID, v.DecoderUID)
	}
	if c.Context != ContextAuth && c.Context != ContextSack {
		return nil, credErr(ErrContext, "context %q", c.Context)
	}
	if v.Cluster != "" && (wc.Cluster == nil || c.Cluster != v.Cluster) {
		return nil, credErr(ErrCluster, "token cluster %q, ours %q", c.Cluster, v.Cluster)
	}
	if wc.Payload != nil {
		p, err := base64.StdEncoding.Strict().DecodeString(*wc.Payload)
		if err != nil {
			return nil, credErr(ErrClaims, "payload: %v", err)
		}
		c.Payload = p
	}
	return c, nil
}

// shortHostname is Slurm's xshort_hostname: the host name up to the first
// dot.
func shortHostname(h string) string {
	if i := strings.IndexByte(h, '.'); i >= 0 {
		return h[:i]
	}
	return h
}
