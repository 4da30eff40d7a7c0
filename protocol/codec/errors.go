package codec

import (
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Sentinel errors. Every decode error also matches the slurmerr.Error a Slurm
// 22.05 daemon would report for the same failure, e.g.
// errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_PROTOCOL_VERSION_ERROR}).
var (
	// ErrVersion: the header's protocol version is not one this codec speaks
	// (SLURM_PROTOCOL_VERSION_ERROR).
	ErrVersion = errors.New("codec: unsupported protocol version")
	// ErrMsgSize: the length prefix is over the limit
	// (SLURM_PROTOCOL_INSANE_MSG_LENGTH).
	ErrMsgSize = errors.New("codec: message length over limit")
	// ErrHeader: the header does not parse (SLURM_COMMUNICATIONS_RECEIVE_ERROR).
	ErrHeader = errors.New("codec: malformed header")
	// ErrRetBody: a ret_list entry has a message type with no registered body
	// codec, so the entry's end cannot be found.
	ErrRetBody = errors.New("codec: no body codec for ret_list entry")
	// ErrAuth: the auth section does not parse or names an unknown plugin
	// (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrAuth = errors.New("codec: malformed auth section")
	// ErrBodyLength: header.body_length differs from the bytes that follow
	// the auth section (ESLURM_PROTOCOL_INCOMPLETE_PACKET).
	ErrBodyLength = errors.New("codec: body_length mismatch")
	// ErrFrameLength: the length prefix differs from the bytes given.
	ErrFrameLength = errors.New("codec: frame length mismatch")
	// ErrEncode: a Frame or Header has inconsistent fields and cannot be
	// packed.
	ErrEncode = errors.New("codec: cannot encode")
)

// wireError carries a sentinel, the Slurm code and an optional cause.
type wireError struct {
	msg      string
	sentinel error
	code     int
	cause    error
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Unwrap() []error {
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
	return &wireError{msg: msg, sentinel: sentinel, code: code, cause: cause}
}

func encErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrEncode}, args...)...)
}
