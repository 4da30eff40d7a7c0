package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// SharedMunge is auth/munge for a daemon that shares its munged with other
// daemons receiving the same messages: several slurmd on one host (-N),
// where a forwarded message's credential is decoded once by each of them and
// munged reports every decode after the first as replayed. Slurm built with
// --enable-multiple-slurmd accepts a replayed credential (auth_munge.c,
// MULTIPLE_SLURMD); SharedMunge does the same and is otherwise auth.Munge:
// the credential must decode with the right key, be unexpired and carry the
// hash of exactly this body and message type.
//
// Use it only where several daemons share the munged: it gives up munged's
// replay protection for messages to this daemon.
type SharedMunge struct {
	auth.Munge
}

// Verify checks f's auth/munge credential, tolerating a replay verdict.
func (m *SharedMunge) Verify(ctx context.Context, f *codec.Frame) (auth.Identity, error) {
	mt := f.Header.MsgType
	if f.Auth.PluginID != codec.AuthMunge {
		return auth.Identity{}, codeErr(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, auth.ErrPlugin, "%v carries %v", mt, f.Auth.PluginID)
	}
	cred := f.Auth.MungeCred
	if cred == "" {
		r := pack.NewReader(f.Auth.Data())
		s, ok := r.OptStr()
		if r.Err() != nil || !ok || s == "" {
			return auth.Identity{}, codeErr(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, auth.ErrUnpack, "%v", mt)
		}
		cred = s
	}
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return auth.Identity{}, codeErr(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, auth.ErrBodyLength, "%v", mt)
	}
	c, err := m.Client.Decode(ctx, cred)
	if err != nil && !(errors.Is(err, munge.ErrCredReplayed) && c != nil) {
		return auth.Identity{}, codeErr(slurmerr.ESLURM_AUTH_CRED_INVALID, fmt.Errorf("%w: %w", auth.ErrCredInvalid, err), "%v", mt)
	}
	h, err := authhash.Verify(c.Payload, uint16(mt), f.Body, m.Policy)
	if err != nil {
		return auth.Identity{}, codeErr(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, fmt.Errorf("%w: %w", auth.ErrHash, err), "%v from uid %d", mt, c.UID)
	}
	return auth.Identity{UID: c.UID, GID: c.GID, Origin: c.Origin, Hash: h}, nil
}

func codeErr(code int, cause error, format string, args ...any) error {
	return fmt.Errorf("%s: %w (%w)", fmt.Sprintf(format, args...), cause, slurmerr.Error{Code: code})
}
