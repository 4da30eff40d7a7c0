package jobcred

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/protocol/pack"
)

// MaxSignatureLen bounds the signature of a received credential (munged
// refuses requests over 1 MiB, so no real signature is longer).
const MaxSignatureLen = 1 << 20

// Credential is a credential as it travels: the packed body (the signed
// region, kept byte for byte as received or created) and the signature.
// Messages carry it as packed body then packmem(signature); REQUEST_BATCH_JOB_LAUNCH
// and REQUEST_LAUNCH_TASKS put a u16 cred_version in front, which is Version.
type Credential struct {
	Version   uint16
	Body      Body
	Signature []byte // nil or empty: unsigned (batch, prolog, kill credentials)

	signed []byte
}

// Signed returns the exact bytes the signature covers (fields 1-37 as they
// were received or created). Do not modify them.
func (c *Credential) Signed() []byte { return c.signed }

// IsSigned reports whether the credential carries a signature.
func (c *Credential) IsSigned() bool { return len(c.Signature) > 0 }

// AppendTo writes the credential as slurm_cred_pack does: the stored body
// bytes unchanged (never re-packed), then packmem(signature). The u16
// cred_version some messages put in front is the caller's.
func (c *Credential) AppendTo(w *pack.Writer) {
	w.Raw(c.signed)
	w.Mem(c.Signature)
}

// Bytes returns the credential as AppendTo writes it.
func (c *Credential) Bytes() []byte {
	w := pack.NewWriter(make([]byte, 0, len(c.signed)+4+len(c.Signature)))
	c.AppendTo(w)
	return w.Bytes()
}

// Unpack reads a credential packed at version v from the start of data and
// returns it with the number of bytes it took, for callers that find it
// inside a message body. It is strict: anything that would not re-pack to
// the same bytes is ErrMalformed. The result does not alias data.
func Unpack(data []byte, v uint16) (*Credential, int, error) {
	if v != Version2205 {
		return nil, 0, fmt.Errorf("%w: %#04x", ErrVersion, v)
	}
	r := pack.NewReader(data)
	c := &Credential{Version: v}
	unpackBody(r, &c.Body)
	end := r.Offset()
	if err := r.Err(); err != nil {
		return nil, 0, wrapMalformed(err)
	}
	sigLen := r.U32()
	if r.Err() == nil && sigLen > MaxSignatureLen {
		return nil, 0, fmt.Errorf("%w: signature of %d bytes", ErrMalformed, sigLen)
	}
	if r.Err() == nil && uint64(sigLen) > uint64(r.Remaining()) {
		return nil, 0, fmt.Errorf("%w: signature of %d bytes, %d remain", ErrMalformed, sigLen, r.Remaining())
	}
	if r.Err() == nil && sigLen > 0 {
		c.Signature = r.Raw(int(sigLen))
	}
	if err := r.Err(); err != nil {
		return nil, 0, wrapMalformed(err)
	}
	c.signed = bytes.Clone(data[:end])
	return c, end + 4 + int(sigLen), nil
}

// Decode unpacks a credential that fills data exactly.
func Decode(data []byte, v uint16) (*Credential, error) {
	c, n, err := Unpack(data, v)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(data)-n)
	}
	return c, nil
}

func wrapMalformed(err error) error {
	if errors.Is(err, ErrMalformed) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// Create builds a credential the way slurmctld does: it stamps body.CTime
// with now, packs the body at version v and signs exactly those bytes. A nil
// signer makes an unsigned credential (the form batch, prolog and kill
// credentials take since 22.05).
func Create(ctx context.Context, body Body, v uint16, signer Signer, now time.Time) (*Credential, error) {
	body.CTime = now.Unix()
	signed, err := EncodeBody(&body, v)
	if err != nil {
		return nil, err
	}
	c := &Credential{Version: v, Body: body, signed: signed}
	if signer != nil {
		sig, err := signer.Sign(ctx, signed)
		if err != nil {
			return nil, fmt.Errorf("jobcred: sign: %w", err)
		}
		if len(sig) == 0 || len(sig) > MaxSignatureLen {
			return nil, fmt.Errorf("jobcred: signer returned %d bytes", len(sig))
		}
		c.Signature = sig
	}
	return c, nil
}
