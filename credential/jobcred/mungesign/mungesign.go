// Package mungesign is Slurm 22.05's cred/munge for job credentials: the
// signature is a munge credential whose payload is exactly the packed
// credential body.
//
// slurmctld encodes with MUNGE_OPT_UID_RESTRICTION set to SlurmdUser (so only
// slurmd can decode it) and MUNGE_OPT_TTL set to AuthInfo's ttl when one is
// configured (otherwise munged's default), and sends the munge text with its
// NUL as the signature. slurmd decodes it once on its own munged and requires
// the decoding uid to be SlurmUser or root and the payload to equal the body
// bytes it received.
//
// It is a separate package from jobcred because it talks to munged (network
// I/O), which jobcred, a pure package, must not.
package mungesign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/munge"
)

// Signer signs credentials through munged (slurmctld's side).
type Signer struct {
	Client *munge.Client
	// Codec, when set, replaces Client (munge.Local: in process).
	Codec munge.Codec
	// SlurmdUID is the uid allowed to decode (slurm.conf SlurmdUser,
	// normally 0).
	SlurmdUID uint32
	// TTL is AuthInfo's ttl; 0 leaves munged's default.
	TTL time.Duration
}

// Sign returns the munge credential text over body, NUL included.
func (s *Signer) Sign(ctx context.Context, body []byte) ([]byte, error) {
	opts := []munge.EncodeOption{munge.WithUIDRestriction(s.SlurmdUID)}
	if s.TTL > 0 {
		opts = append(opts, munge.WithTTL(s.TTL))
	}
	var c munge.Codec = s.Client
	if s.Codec != nil {
		c = s.Codec
	}
	cred, err := c.Encode(ctx, body, opts...)
	if err != nil {
		return nil, err
	}
	return append([]byte(cred), 0), nil
}

// Verifier checks munge signatures (slurmd's side). Each signature can be
// decoded once per munged: a second decode on the same host reports a
// replay, so never verify one credential twice (unless AcceptReplayed).
type Verifier struct {
	Client *munge.Client
	// SlurmUID is slurm.conf's SlurmUser; root is always accepted too.
	SlurmUID uint32
	// AcceptReplayed accepts munged's replay verdict, as Slurm built with
	// --enable-multiple-slurmd does: several slurmd on one host share one
	// munged, so a step credential spanning them is decoded once by each
	// and every decode after the first is a replay. Replay protection then
	// rests on each slurmd's own replay cache (jobcred.Verifier). Set it
	// only where slurmd share the munged.
	AcceptReplayed bool
}

// VerifySignature decodes sig and checks the signer and the payload.
//
// When munged authenticates the credential but reports it expired, the
// result carries the encode time and TTL and no error: the payload is
// authentic, and jobcred.Verifier decides with its own clock (which, in a
// daemon, is the same wall clock munged uses). A rewound or replayed
// credential (replayed only without AcceptReplayed), and every other munge
// error, is a failure.
func (v *Verifier) VerifySignature(ctx context.Context, body, sig []byte) (jobcred.SigInfo, error) {
	text, err := sigText(sig)
	if err != nil {
		return jobcred.SigInfo{}, err
	}
	c, err := v.Client.Decode(ctx, text)
	switch {
	case err == nil:
	case errors.Is(err, munge.ErrCredExpired) && c != nil:
	case errors.Is(err, munge.ErrCredReplayed) && c != nil && v.AcceptReplayed:
	case errors.Is(err, munge.ErrCredReplayed):
		return jobcred.SigInfo{}, fmt.Errorf("%w: %w", jobcred.ErrSignatureReplayed, err)
	default:
		return jobcred.SigInfo{}, fmt.Errorf("%w: %w", jobcred.ErrBadSignature, err)
	}
	info := jobcred.SigInfo{
		Scheme:  jobcred.CredTypeMunge,
		UID:     c.UID,
		Issued:  c.Encoded,
		Expires: c.Encoded.Add(c.TTL),
	}
	if c.UID != v.SlurmUID && c.UID != 0 {
		return jobcred.SigInfo{}, fmt.Errorf("%w: uid %d, SlurmUser is %d", jobcred.ErrBadSigner, c.UID, v.SlurmUID)
	}
	if len(c.Payload) != len(body) {
		return jobcred.SigInfo{}, fmt.Errorf("%w: payload of %d bytes, body of %d", jobcred.ErrBadSignature, len(c.Payload), len(body))
	}
	if !bytes.Equal(c.Payload, body) {
		return jobcred.SigInfo{}, fmt.Errorf("%w: payload differs from the body", jobcred.ErrBadSignature)
	}
	return info, nil
}

// sigText checks that sig is a C string with its NUL (what cred/munge
// sends) and returns the text.
func sigText(sig []byte) (string, error) {
	if len(sig) < 2 || sig[len(sig)-1] != 0 || bytes.IndexByte(sig[:len(sig)-1], 0) >= 0 {
		return "", fmt.Errorf("%w: not a NUL-terminated munge credential", jobcred.ErrBadSignature)
	}
	if !bytes.HasPrefix(sig, []byte("MUNGE:")) {
		return "", fmt.Errorf("%w: not a munge credential", jobcred.ErrBadSignature)
	}
	return string(sig[:len(sig)-1]), nil
}
