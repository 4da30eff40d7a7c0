// Package auth signs and verifies the auth section of Slurm frames.
//
// Munge implements auth/munge as Slurm 22.05 uses it on every message: the
// sender asks its munged for a credential whose payload is the message
// integrity hash (credential/authhash: K12 over the body, customised with the
// message type), restricted to the receiver's uid; the receiver has its own
// munged decode it, takes the sender's identity from the credential alone,
// and checks the hash against the body and message type it received.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Authenticator signs and verifies the auth section of frames: Munge for
// auth/munge, slurmauth.Slurm for the built-in auth. Callers pick one by
// AuthType.
type Authenticator interface {
	// Sign sets f.Auth for the frame's header and body, restricted to rUID.
	Sign(ctx context.Context, f *codec.Frame, rUID uint32) error
	// SignHash is Sign with an explicit hash type: a reply uses the one
	// its request came with.
	SignHash(ctx context.Context, f *codec.Frame, rUID uint32, h authhash.Type) error
	// Verify checks f.Auth against f and returns the sender's identity,
	// taken from the credential alone.
	Verify(ctx context.Context, f *codec.Frame) (Identity, error)
}

var _ Authenticator = (*Munge)(nil)

// UIDAny is SLURM_AUTH_UID_ANY: a credential anyone holding the key can
// decode. Normal client requests to slurmctld use it; ping, shutdown and
// takeover are restricted to SlurmUser's uid instead.
const UIDAny uint32 = 0xFFFFFFFF

// Sentinel errors. Each failure also matches the slurmerr.Error Slurm 22.05
// reports for it (errors.Is(err, slurmerr.Error{Code: ...})).
var (
	// ErrPlugin: the auth section is not auth/munge (a 22.05 daemon with
	// AuthType=auth/munge has no other plugin loaded and fails the unpack:
	// ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrPlugin = errors.New("auth: not an auth/munge credential")
	// ErrUnpack: the auth/munge section does not parse (ESLURM_AUTH_UNPACK,
	// reported by the receiver as ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrUnpack = errors.New("auth: malformed auth/munge section")
	// ErrCredInvalid: munged refused the credential: wrong key, expired,
	// replayed, rewound, restricted to another uid (ESLURM_AUTH_CRED_INVALID).
	// The munge error is wrapped too (errors.Is(err, munge.ErrCredExpired)).
	ErrCredInvalid = errors.New("auth: invalid munge credential")
	// ErrHash: the credential's payload does not match the message body and
	// type (ESLURM_PROTOCOL_INCOMPLETE_PACKET). authhash's cause is wrapped.
	ErrHash = errors.New("auth: message hash check failed")
	// ErrBodyLength: the frame's body is not header.body_length bytes
	// (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrBodyLength = errors.New("auth: body does not match body_length")
	// ErrSign: munged could not create a credential
	// (ESLURM_AUTH_CRED_INVALID, as Slurm's auth_munge reports it).
	ErrSign = errors.New("auth: cannot create munge credential")
)

// Munge signs and verifies frames with auth/munge. The zero value talks to
// munged's default socket with munged's default TTL and signs with K12.
// It is safe for concurrent use.
type Munge struct {
	// Client is the munged client (AuthInfo=socket=...); nil means the
	// default socket.
	Client *munge.Client
	// Codec, when set, replaces Client: munge.Local encodes and decodes
	// in process with the site's key instead of asking munged.
	Codec munge.Codec
	// TTL is AuthInfo=ttl=: 0 leaves munged's default (300 s).
	TTL time.Duration
	// Hash is the hash type requests are signed with: authhash.Default
	// (which is K12, as 22.05 sends it) or authhash.None.
	Hash authhash.Type
	// Policy is the receiver's CommunicationParameters block_null_hash and
	// block_zero_hash.
	Policy authhash.Policy
	// AcceptReplayed makes Verify accept a credential munged reports as
	// replayed, as Slurm built with --enable-multiple-slurmd does: several
	// slurmd on one host share one munged, so a forwarded message's
	// credential is decoded once by each of them and every decode after the
	// first is a replay. Key, expiry, uid restriction and the body hash are
	// still checked. Set it only where daemons share the munged: it gives up
	// munged's replay protection for this receiver.
	AcceptReplayed bool
}

// Identity is what a verified credential says about its sender.
type Identity struct {
	UID, GID uint32
	// Origin is the encoding host's IPv4 address as munged stamped it.
	Origin netip.Addr
	// Hash is the hash type the sender used; a 22.05 daemon signs its reply
	// with the same one (authhash.Default when the payload was empty).
	Hash authhash.Type
}

// Sign fills f.Auth with a fresh auth/munge credential for f's message type
// and body, restricted to rUID (UIDAny, or SlurmUser's uid for ping and
// shutdown), hashed with m.Hash.
func (m *Munge) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return m.SignHash(ctx, f, rUID, m.Hash)
}

// SignHash is Sign with an explicit hash type: a reply uses the type of the
// request it answers (Identity.Hash).
func (m *Munge) SignHash(ctx context.Context, f *codec.Frame, rUID uint32, h authhash.Type) error {
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return newErr(ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v: body_length %d, body of %d bytes", f.Header.MsgType, f.Header.BodyLength, len(f.Body))
	}
	payload, err := authhash.Compute(h, uint16(f.Header.MsgType), f.Body)
	if err != nil {
		return newErr(ErrSign, slurmerr.ESLURM_AUTH_CRED_INVALID, err, "%v", f.Header.MsgType)
	}
	opts := []munge.EncodeOption{munge.WithUIDRestriction(rUID)}
	if m.TTL > 0 {
		opts = append(opts, munge.WithTTL(m.TTL))
	}
	cred, err := m.codec().Encode(ctx, payload, opts...)
	if err != nil {
		return newErr(ErrSign, slurmerr.ESLURM_AUTH_CRED_INVALID, err, "%v", f.Header.MsgType)
	}
	f.Auth = codec.MungeAuth(cred)
	return nil
}

// Verify checks f's auth section as a 22.05 receiver does and returns the
// sender's identity, taken from the credential only. The credential must be
// auth/munge, munged must accept it (right key, not expired, not replayed,
// uid restriction satisfied), and its payload must be the hash of exactly
// f.Body under f's message type (per m.Policy).
//
// A munge credential decodes once: munged's replay cache refuses it the
// second time, unless m.AcceptReplayed is set.
func (m *Munge) Verify(ctx context.Context, f *codec.Frame) (Identity, error) {
	mt := f.Header.MsgType
	if f.Auth.PluginID != codec.AuthMunge {
		return Identity{}, newErr(ErrPlugin, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v carries %v", mt, f.Auth.PluginID)
	}
	cred, err := mungeCred(&f.Auth)
	if err != nil {
		return Identity{}, newErr(ErrUnpack, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, err, "%v", mt)
	}
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return Identity{}, newErr(ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v: body_length %d, body of %d bytes", mt, f.Header.BodyLength, len(f.Body))
	}
	c, err := m.codec().Decode(ctx, cred)
	if err != nil && !(m.AcceptReplayed && c != nil && errors.Is(err, munge.ErrCredReplayed)) {
		return Identity{}, newErr(ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID, err, "%v", mt)
	}
	h, err := authhash.Verify(c.Payload, uint16(mt), f.Body, m.Policy)
	if err != nil {
		return Identity{}, newErr(ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, err,
			"%v from uid %d", mt, c.UID)
	}
	return Identity{UID: c.UID, GID: c.GID, Origin: c.Origin, Hash: h}, nil
}

func (m *Munge) codec() munge.Codec {
	if m.Codec != nil {
		return m.Codec
	}
	return m.Client
}

// mungeCred returns the credential text of an auth/munge section, parsing
// Raw when the section was not produced by the codec's decoder.
func mungeCred(a *codec.AuthBlob) (string, error) {
	if a.MungeCred != "" {
		return a.MungeCred, nil
	}
	r := pack.NewReader(a.Data())
	s, ok := r.OptStr()
	if err := r.Err(); err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", errors.New("no credential")
	}
	return s, nil
}

// authError carries a sentinel, the Slurm code and the cause.
type authError struct {
	msg      string
	sentinel error
	code     int
	cause    error
}

func (e *authError) Error() string { return e.msg }

func (e *authError) Unwrap() []error {
	errs := []error{e.sentinel, slurmerr.Error{Code: e.code}}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

func newErr(sentinel error, code int, cause error, format string, args ...any) error {
	msg := sentinel.Error() + ": " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &authError{msg: msg, sentinel: sentinel, code: code, cause: cause}
}
