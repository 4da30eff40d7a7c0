package slurmauth

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// PluginID is auth/slurm's id on the wire.
const PluginID = codec.AuthSlurm

// Slurm signs and verifies frames with auth/slurm, with the same shape as
// credential/auth's Munge so a caller can pick either by AuthType.
//
// With Key set (daemons) tokens are minted and verified in process, minted
// with context "auth" for this process's real uid and gid, as Slurm's
// internal mode does. Otherwise (commands, which cannot read the key) Sack
// mints them for the caller and verifies received ones.
//
// It is safe for concurrent use once configured.
type Slurm struct {
	Key  *Key
	Sack *SackClient
	// Cluster is ClusterName: stamped into tokens and, when set, required
	// of received ones.
	Cluster string
	// TTL is AuthInfo ttl=; 0 means DefaultTTL.
	TTL time.Duration
	// Hash is the hash type requests are signed with (authhash.Default is
	// K12).
	Hash authhash.Type
	// Policy is CommunicationParameters block_null_hash / block_zero_hash.
	Policy authhash.Policy
	// Version is the ver claim; 0 means codec.Current.
	Version codec.Version
	// Host is the host claim; "" means the short host name.
	Host string
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time
	// Replay, when set, refuses a token seen before (Slurm 23.11 has no
	// replay cache; munged has one).
	Replay *ReplayCache
	// uid/gid override for tests; nil means os.Getuid/os.Getgid.
	ids func() (uid, gid uint32)
}

func (s *Slurm) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *Slurm) ident() (uint32, uint32) {
	if s.ids != nil {
		return s.ids()
	}
	return uint32(os.Getuid()), uint32(os.Getgid())
}

func (s *Slurm) host() string {
	if s.Host != "" {
		return s.Host
	}
	h, _ := os.Hostname()
	return shortHostname(h)
}

func (s *Slurm) version() uint16 {
	if s.Version != 0 {
		return uint16(s.Version)
	}
	return uint16(codec.Current)
}

// Identity is what a verified frame says about its sender: credential/auth's
// Identity (Origin stays unset: auth/slurm carries a host name, not an
// address) plus the token's claims.
type Identity = auth.Identity

// Sign fills f.Auth with a fresh auth/slurm token for f's message type and
// body, restricted to rUID (UIDAny, or SlurmUser's uid), hashed with
// s.Hash.
func (s *Slurm) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return s.SignHash(ctx, f, rUID, s.Hash)
}

// SignHash is Sign with an explicit hash type (a reply uses its request's).
func (s *Slurm) SignHash(ctx context.Context, f *codec.Frame, rUID uint32, h authhash.Type) error {
	mt := f.Header.MsgType
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return newErr(ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v: body_length %d, body of %d bytes", mt, f.Header.BodyLength, len(f.Body))
	}
	payload, err := authhash.Compute(h, uint16(mt), f.Body)
	if err != nil {
		return newErr(ErrSign, slurmerr.ESLURM_AUTH_UNABLE_TO_SIGN, err, "%v", mt)
	}
	var tok string
	switch {
	case s.Key != nil:
		uid, gid := s.ident()
		tok, err = s.Key.Mint(MintParams{
			Context: ContextAuth, UID: uid, GID: gid, RUID: rUID, Payload: payload,
			Cluster: s.Cluster, Host: s.host(), Version: s.version(), Now: s.now(), TTL: s.TTL,
		})
	case s.Sack != nil:
		tok, err = s.Sack.Create(ctx, rUID, payload)
	default:
		err = errors.New("neither a key nor a sack client configured")
	}
	if err != nil {
		return newErr(ErrSign, slurmerr.ESLURM_AUTH_UNABLE_TO_SIGN, err, "%v", mt)
	}
	f.Auth = AuthBlob(tok)
	return nil
}

// AuthBlob returns an auth/slurm section carrying token. (The parsed token
// goes in AuthBlob.Token, the field auth/jwt uses too.)
func AuthBlob(token string) codec.AuthBlob {
	w := pack.NewWriter(make([]byte, 0, 9+len(token)))
	w.U32(uint32(PluginID))
	w.Str(token)
	return codec.AuthBlob{PluginID: PluginID, Raw: w.Bytes(), Token: token}
}

// TokenOf returns the token of an auth/slurm section, parsed from Raw: the
// section must be exactly the plugin id and one non-empty packstr.
func TokenOf(a *codec.AuthBlob) (string, error) {
	if a.PluginID != PluginID {
		return "", ErrPlugin
	}
	r := pack.NewReader(a.Data())
	s, ok := r.OptStr()
	if err := r.Done(); err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", errors.New("no token")
	}
	return s, nil
}

// Verify checks f's auth section and returns the sender's identity, taken
// from the token only: the section must be auth/slurm, the token valid
// (Key.Parse, or the sack service when no key is held), and its payload the
// hash of exactly f.Body under f's message type (per s.Policy).
func (s *Slurm) Verify(ctx context.Context, f *codec.Frame) (Identity, error) {
	id, _, err := s.VerifyClaims(ctx, f)
	return id, err
}

// VerifyClaims is Verify that also returns the token's claims (host,
// context, iat, ...).
func (s *Slurm) VerifyClaims(ctx context.Context, f *codec.Frame) (Identity, *Claims, error) {
	mt := f.Header.MsgType
	if f.Auth.PluginID != PluginID {
		return Identity{}, nil, newErr(ErrPlugin, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v carries %v", mt, f.Auth.PluginID)
	}
	tok, err := TokenOf(&f.Auth)
	if err != nil {
		return Identity{}, nil, newErr(ErrUnpack, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, err, "%v", mt)
	}
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return Identity{}, nil, newErr(ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v: body_length %d, body of %d bytes", mt, f.Header.BodyLength, len(f.Body))
	}
	c, err := s.VerifyToken(ctx, tok)
	if err != nil {
		return Identity{}, nil, err
	}
	h, err := authhash.Verify(c.Payload, uint16(mt), f.Body, s.Policy)
	if err != nil {
		return Identity{}, nil, newErr(ErrHash, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, err,
			"%v from uid %d", mt, c.UID)
	}
	if s.Replay != nil {
		if err := s.Replay.Check(tok, c.Expires, s.now()); err != nil {
			return Identity{}, nil, err
		}
	}
	return Identity{UID: c.UID, GID: c.GID, Hash: h}, c, nil
}

// VerifyToken checks a token by itself (no message hash): in process with
// the key, else through sack.
func (s *Slurm) VerifyToken(ctx context.Context, tok string) (*Claims, error) {
	uid, _ := s.ident()
	v := VerifyParams{Now: s.now(), DecoderUID: uid, Cluster: s.Cluster}
	switch {
	case s.Key != nil:
		return s.Key.Parse(tok, v)
	case s.Sack != nil:
		if err := s.Sack.Verify(ctx, tok); err != nil {
			return nil, err
		}
		return parseUnverified(tok, v)
	}
	return nil, credErr(errors.New("neither a key nor a sack client configured"), "verify")
}

var _ auth.Authenticator = (*Slurm)(nil)
