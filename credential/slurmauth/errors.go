package slurmauth

import (
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Sentinel errors. Like credential/auth's, each failure also matches the
// slurmerr.Error a Slurm receiver reports for it
// (errors.Is(err, slurmerr.Error{Code: ...})).
var (
	// ErrPlugin: the auth section is not auth/slurm
	// (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrPlugin = errors.New("slurmauth: not an auth/slurm credential")
	// ErrUnpack: the auth/slurm section does not parse
	// (ESLURM_PROTOCOL_INCOMPLETE_PACKET, as the receiver reports it).
	ErrUnpack = errors.New("slurmauth: malformed auth/slurm section")
	// ErrCredInvalid: the token was refused (ESLURM_AUTH_CRED_INVALID). One
	// of the more specific errors below is wrapped as well.
	ErrCredInvalid = errors.New("slurmauth: invalid auth/slurm token")
	// ErrHash: the token's payload does not match the message body and
	// type (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrHash = errors.New("slurmauth: message hash check failed")
	// ErrBodyLength: the frame's body is not header.body_length bytes
	// (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrBodyLength = errors.New("slurmauth: body does not match body_length")
	// ErrSign: no token could be created (ESLURM_AUTH_UNABLE_TO_SIGN).
	ErrSign = errors.New("slurmauth: cannot create auth/slurm token")
	// ErrKey: the key file is missing, unreadable, insecure or too short
	// (ESLURM_AUTH_FOPEN_ERROR).
	ErrKey = errors.New("slurmauth: unusable key")
	// ErrSack: the token service could not be reached or answered
	// nonsense (ESLURM_AUTH_NET_ERROR).
	ErrSack = errors.New("slurmauth: token service (sack) failed")
	// ErrConfig: bad AuthInfo option (ESLURM_AUTH_BADARG).
	ErrConfig = errors.New("slurmauth: bad AuthInfo")
)

// Causes of ErrCredInvalid, for tests and logs.
var (
	ErrMalformed = errors.New("malformed token")
	ErrSignature = errors.New("bad signature or algorithm")
	ErrExpired   = errors.New("token expired")
	ErrRUID      = errors.New("token restricted to another uid")
	ErrContext   = errors.New("token context not auth or sack")
	ErrCluster   = errors.New("token is for another cluster")
	ErrClaims    = errors.New("missing or malformed claims")
	ErrReplayed  = errors.New("token replayed")
)

// authError carries a sentinel, the Slurm code and the cause, as
// credential/auth's does.
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

func credErr(cause error, format string, args ...any) error {
	return newErr(ErrCredInvalid, slurmerr.ESLURM_AUTH_CRED_INVALID, cause, format, args...)
}
