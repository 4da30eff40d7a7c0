package server

import (
	"context"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
)

// SharedMunge is auth/munge for a daemon that shares its munged with other
// daemons receiving the same messages (several slurmd on one host, -N): it
// is auth.Munge with AcceptReplayed forced on, whatever the embedded value
// says. New code can set auth.Munge.AcceptReplayed directly; this type stays
// for the callers that pick it by name.
type SharedMunge struct {
	auth.Munge
}

// Verify is auth.Munge.Verify tolerating munged's replay verdict.
func (m *SharedMunge) Verify(ctx context.Context, f *codec.Frame) (auth.Identity, error) {
	a := m.Munge
	a.AcceptReplayed = true
	return a.Verify(ctx, f)
}
