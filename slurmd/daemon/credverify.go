package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/credential/munge"
)

// MungeCreds returns the cred/munge signature verifier for this slurmd.
// With several slurmd on the host sharing one munged (shared), a step
// credential spanning them is decoded once per slurmd and munged calls every
// decode after the first a replay; Slurm built with --enable-multiple-slurmd
// accepts that, and so does the shared verifier. Replay protection then
// rests on the daemon's own replay cache (the credential state), which
// every slurmd keeps for itself.
func MungeCreds(c *munge.Client, slurmUID uint32, shared bool) jobcred.SignatureVerifier {
	if !shared {
		return &mungesign.Verifier{Client: c, SlurmUID: slurmUID}
	}
	return &sharedMungeCreds{client: c, slurmUID: slurmUID}
}

type sharedMungeCreds struct {
	client   *munge.Client
	slurmUID uint32
}

// VerifySignature is mungesign.Verifier's check with a replay verdict
// accepted: the signer must be root or SlurmUser and the payload must be
// exactly the received body.
func (v *sharedMungeCreds) VerifySignature(ctx context.Context, body, sig []byte) (jobcred.SigInfo, error) {
	s := sig
	if n := len(s); n > 0 && s[n-1] == 0 {
		s = s[:n-1]
	}
	if len(s) == 0 || bytes.IndexByte(s, 0) >= 0 {
		return jobcred.SigInfo{}, fmt.Errorf("%w: malformed munge signature", jobcred.ErrBadSignature)
	}
	c, err := v.client.Decode(ctx, string(s))
	if err != nil {
		tolerated := c != nil && (errors.Is(err, munge.ErrCredReplayed) || errors.Is(err, munge.ErrCredExpired))
		if !tolerated {
			return jobcred.SigInfo{}, fmt.Errorf("%w: %w", jobcred.ErrBadSignature, err)
		}
	}
	if c.UID != 0 && c.UID != v.slurmUID {
		return jobcred.SigInfo{}, fmt.Errorf("%w: uid %d", jobcred.ErrBadSigner, c.UID)
	}
	if !bytes.Equal(c.Payload, body) {
		return jobcred.SigInfo{}, fmt.Errorf("%w: payload differs from the credential body", jobcred.ErrBadSignature)
	}
	info := jobcred.SigInfo{Scheme: jobcred.CredTypeMunge, UID: c.UID, Issued: c.Encoded}
	if c.TTL > 0 {
		info.Expires = c.Encoded.Add(c.TTL)
	}
	return info, nil
}
