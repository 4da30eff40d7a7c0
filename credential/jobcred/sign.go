package jobcred

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"
)

// Signer signs the packed body of a credential (slurmctld's side).
type Signer interface {
	Sign(ctx context.Context, body []byte) ([]byte, error)
}

// SignatureVerifier checks that sig authenticates body and says who made it
// (slurmd's side). A failure wraps ErrBadSignature (or ErrBadSigner,
// ErrSignatureReplayed). It makes no time decision of its own beyond what its
// backend enforces; it reports the signature's validity period in SigInfo and
// Verifier applies its clock to it.
type SignatureVerifier interface {
	VerifySignature(ctx context.Context, body, sig []byte) (SigInfo, error)
}

// SigInfo is what a signature check learned.
type SigInfo struct {
	Scheme string // CredTypeMunge or CredTypeHMAC
	// UID is the signer's uid as munge authenticated it (cred/munge only).
	UID uint32
	// KeyID names the shared key that verified (CredTypeHMAC only).
	KeyID string
	// Issued and Expires bound the signature's own validity (munge's encode
	// time and TTL); zero when the scheme has none (the credential's CTime
	// and the expiration window still apply).
	Issued  time.Time
	Expires time.Time
}

// Credential schemes (the CredType values).
const (
	// CredTypeMunge is Slurm's cred/munge: the signature is a munge
	// credential whose payload is the packed body (see mungesign).
	CredTypeMunge = "cred/munge"
	// CredTypeHMAC is goslurm's own scheme for munge-free clusters: an
	// HMAC-SHA256 over the packed body with a key shared by slurmctld and
	// every slurmd. Real Slurm has no such plugin: only goslurm daemons
	// understand it, so a cluster that mixes in real slurmd must use
	// CredTypeMunge. Nothing on the wire names the scheme except the
	// signature's own prefix, HMACSignaturePrefix.
	CredTypeHMAC = "cred/goslurm_hs256"
)

// HMACSignaturePrefix starts every CredTypeHMAC signature. The whole
// signature is the text
//
//	GOSLURM-HS256:<key id>:<base64url(mac), no padding>:
//
// followed by a NUL, so that, like a munge signature, its wire form is the
// packstr of a string and it can serve as the 22.05 I/O key unchanged.
const HMACSignaturePrefix = "GOSLURM-HS256:"

// hmacContext separates credential MACs from any other use of the same key.
// The MAC is HMAC-SHA256(key, hmacContext || body).
const hmacContext = "goslurm job credential v1\x00"

// MinHMACKeyLen is the shortest shared key accepted (256 bits).
const MinHMACKeyLen = 32

// maxKeyIDLen bounds a key id.
const maxKeyIDLen = 64

// HMACKey is a shared credential key. ID names it inside signatures so keys
// can be rotated (sign with the new one, verify with both); it may be empty
// and is limited to 64 characters of [A-Za-z0-9._-].
type HMACKey struct {
	ID     string
	Secret []byte
}

func (k HMACKey) check() error {
	if len(k.Secret) < MinHMACKeyLen {
		return fmt.Errorf("jobcred: HMAC key %q is %d bytes, want at least %d", k.ID, len(k.Secret), MinHMACKeyLen)
	}
	if len(k.ID) > maxKeyIDLen {
		return fmt.Errorf("jobcred: HMAC key id of %d characters, at most %d", len(k.ID), maxKeyIDLen)
	}
	for i := 0; i < len(k.ID); i++ {
		c := k.ID[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("jobcred: HMAC key id %q: character %q not allowed", k.ID, c)
		}
	}
	return nil
}

func (k HMACKey) mac(body []byte) []byte {
	m := hmac.New(sha256.New, k.Secret)
	m.Write([]byte(hmacContext))
	m.Write(body)
	return m.Sum(nil)
}

// HMACSigner signs with one shared key (CredTypeHMAC).
type HMACSigner struct {
	key HMACKey
}

// NewHMACSigner checks the key and returns a signer using it.
func NewHMACSigner(key HMACKey) (*HMACSigner, error) {
	if err := key.check(); err != nil {
		return nil, err
	}
	return &HMACSigner{key: HMACKey{ID: key.ID, Secret: bytes.Clone(key.Secret)}}, nil
}

// Sign returns the CredTypeHMAC signature of body.
func (s *HMACSigner) Sign(_ context.Context, body []byte) ([]byte, error) {
	return s.key.signature(body), nil
}

func (k HMACKey) signature(body []byte) []byte {
	mac := k.mac(body)
	out := make([]byte, 0, len(HMACSignaturePrefix)+len(k.ID)+1+base64.RawURLEncoding.EncodedLen(len(mac))+2)
	out = append(out, HMACSignaturePrefix...)
	out = append(out, k.ID...)
	out = append(out, ':')
	out = base64.RawURLEncoding.AppendEncode(out, mac)
	out = append(out, ':', 0)
	return out
}

// HMACVerifier verifies CredTypeHMAC signatures against a set of keys
// (current and previous, during a rotation).
type HMACVerifier struct {
	keys map[string]HMACKey
}

// NewHMACVerifier checks the keys (ids must be distinct) and returns a
// verifier holding copies of them.
func NewHMACVerifier(keys ...HMACKey) (*HMACVerifier, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("jobcred: no HMAC keys")
	}
	v := &HMACVerifier{keys: map[string]HMACKey{}}
	for _, k := range keys {
		if err := k.check(); err != nil {
			return nil, err
		}
		if _, dup := v.keys[k.ID]; dup {
			return nil, fmt.Errorf("jobcred: HMAC key id %q given twice", k.ID)
		}
		v.keys[k.ID] = HMACKey{ID: k.ID, Secret: bytes.Clone(k.Secret)}
	}
	return v, nil
}

// VerifySignature checks a CredTypeHMAC signature in constant time.
func (v *HMACVerifier) VerifySignature(_ context.Context, body, sig []byte) (SigInfo, error) {
	if !bytes.HasPrefix(sig, []byte(HMACSignaturePrefix)) {
		return SigInfo{}, fmt.Errorf("%w: not a %s signature", ErrBadSignature, CredTypeHMAC)
	}
	rest := sig[len(HMACSignaturePrefix):]
	i := bytes.IndexByte(rest, ':')
	if i < 0 || i > maxKeyIDLen {
		return SigInfo{}, fmt.Errorf("%w: malformed %s signature", ErrBadSignature, CredTypeHMAC)
	}
	key, ok := v.keys[string(rest[:i])]
	if !ok {
		return SigInfo{}, fmt.Errorf("%w: unknown key id %q", ErrBadSignature, rest[:i])
	}
	if !hmac.Equal(sig, key.signature(body)) {
		return SigInfo{}, fmt.Errorf("%w: MAC mismatch (key %q)", ErrBadSignature, key.ID)
	}
	return SigInfo{Scheme: CredTypeHMAC, KeyID: key.ID}, nil
}
