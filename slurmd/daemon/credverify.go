package daemon

import (
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
	return &mungesign.Verifier{Client: c, SlurmUID: slurmUID, AcceptReplayed: shared}
}
