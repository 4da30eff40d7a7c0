package jobcred

import (
	"errors"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Verdicts of Verifier.VerifyLaunch. They are slurmerr.Error values, so
// slurmerr.Code(err) gives the number slurmd puts in its reply; more specific
// causes are wrapped beside them (errors.Is works for both).
var (
	ErrInvalid  error = slurmerr.Error{Code: slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL} // 4004
	ErrExpired  error = slurmerr.Error{Code: slurmerr.ESLURMD_CREDENTIAL_EXPIRED}     // 4007
	ErrRevoked  error = slurmerr.Error{Code: slurmerr.ESLURMD_CREDENTIAL_REVOKED}     // 4008
	ErrReplayed error = slurmerr.Error{Code: slurmerr.ESLURMD_CREDENTIAL_REPLAYED}    // 4009
)

// Causes wrapped inside ErrInvalid.
var (
	// ErrBadSignature: the signature does not authenticate the body (wrong
	// MAC, munge decode failure, payload different from the body, unknown
	// key).
	ErrBadSignature = errors.New("jobcred: credential signature check failed")
	// ErrUnsigned: a launch credential with no signature (the form batch,
	// prolog and kill credentials take).
	ErrUnsigned = errors.New("jobcred: credential is not signed")
	// ErrBadSigner: munge says the credential was made by a uid that is
	// neither SlurmUser nor root.
	ErrBadSigner = errors.New("jobcred: credential created by invalid user")
	// ErrSignatureReplayed: munged has decoded this signature before.
	ErrSignatureReplayed = errors.New("jobcred: credential signature replayed")
	// ErrStepMismatch, ErrUserMismatch, ErrNodeNotInCredential: the
	// credential does not match the launch request or this node.
	ErrStepMismatch        = errors.New("jobcred: credential is for another step")
	ErrUserMismatch        = errors.New("jobcred: credential is for another uid or gid")
	ErrNodeNotInCredential = errors.New("jobcred: this node is not in the credential's host list")
	// ErrStateFull: the replay cache is full of unexpired entries; the
	// verifier fails closed rather than forget one.
	ErrStateFull = errors.New("jobcred: replay cache full")
)

// Decoding errors.
var (
	// ErrVersion: a protocol version whose credential layout this package
	// does not implement.
	ErrVersion = errors.New("jobcred: unsupported credential protocol version")
	// ErrMalformed: the bytes are not a well-formed credential.
	ErrMalformed = errors.New("jobcred: malformed credential")
)
