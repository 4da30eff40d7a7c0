package munge

import (
	"errors"
	"fmt"
)

// Code is a MUNGE status number (munge_err_t). It travels as one byte in
// munged's replies and is what Slurm logs and acts on.
type Code uint8

// MUNGE status numbers, as defined by munge.h in MUNGE 0.5.x.
const (
	CodeSuccess          Code = 0
	CodeSnafu            Code = 1
	CodeBadArg           Code = 2
	CodeBadLength        Code = 3
	CodeOverflow         Code = 4
	CodeNoMemory         Code = 5
	CodeSocket           Code = 6
	CodeTimeout          Code = 7
	CodeBadCred          Code = 8
	CodeBadVersion       Code = 9
	CodeBadCipher        Code = 10
	CodeBadMAC           Code = 11
	CodeBadZip           Code = 12
	CodeBadRealm         Code = 13
	CodeCredInvalid      Code = 14
	CodeCredExpired      Code = 15
	CodeCredRewound      Code = 16
	CodeCredReplayed     Code = 17
	CodeCredUnauthorized Code = 18
)

var codeNames = [...]string{
	CodeSuccess:          "EMUNGE_SUCCESS",
	CodeSnafu:            "EMUNGE_SNAFU",
	CodeBadArg:           "EMUNGE_BAD_ARG",
	CodeBadLength:        "EMUNGE_BAD_LENGTH",
	CodeOverflow:         "EMUNGE_OVERFLOW",
	CodeNoMemory:         "EMUNGE_NO_MEMORY",
	CodeSocket:           "EMUNGE_SOCKET",
	CodeTimeout:          "EMUNGE_TIMEOUT",
	CodeBadCred:          "EMUNGE_BAD_CRED",
	CodeBadVersion:       "EMUNGE_BAD_VERSION",
	CodeBadCipher:        "EMUNGE_BAD_CIPHER",
	CodeBadMAC:           "EMUNGE_BAD_MAC",
	CodeBadZip:           "EMUNGE_BAD_ZIP",
	CodeBadRealm:         "EMUNGE_BAD_REALM",
	CodeCredInvalid:      "EMUNGE_CRED_INVALID",
	CodeCredExpired:      "EMUNGE_CRED_EXPIRED",
	CodeCredRewound:      "EMUNGE_CRED_REWOUND",
	CodeCredReplayed:     "EMUNGE_CRED_REPLAYED",
	CodeCredUnauthorized: "EMUNGE_CRED_UNAUTHORIZED",
}

// Short descriptions, used when munged sent no text of its own. munged
// normally does send one, and Error prefers it.
var codeText = [...]string{
	CodeSuccess:          "success",
	CodeSnafu:            "internal error",
	CodeBadArg:           "invalid argument",
	CodeBadLength:        "message too long",
	CodeOverflow:         "buffer overflow",
	CodeNoMemory:         "out of memory",
	CodeSocket:           "munged socket communication error",
	CodeTimeout:          "munged socket timeout",
	CodeBadCred:          "malformed credential",
	CodeBadVersion:       "unsupported credential version",
	CodeBadCipher:        "unsupported cipher",
	CodeBadMAC:           "unsupported MAC",
	CodeBadZip:           "unsupported compression",
	CodeBadRealm:         "unknown security realm",
	CodeCredInvalid:      "invalid credential",
	CodeCredExpired:      "expired credential",
	CodeCredRewound:      "rewound credential (encode time in the future)",
	CodeCredReplayed:     "replayed credential",
	CodeCredUnauthorized: "unauthorized credential decode",
}

// String returns the C name of the code, e.g. "EMUNGE_CRED_EXPIRED".
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("EMUNGE_%d", uint8(c))
}

// Description is a short English description of the code.
func (c Code) Description() string {
	if int(c) < len(codeText) {
		return codeText[c]
	}
	return fmt.Sprintf("unknown munge error %d", uint8(c))
}

// Error is a failed munge operation: the MUNGE status, munged's own message
// when it sent one, and the underlying cause for local failures (dial, I/O,
// malformed reply).
//
// errors.Is(err, ErrCredExpired) and friends match on Code; errors.As gives
// the *Error itself.
type Error struct {
	Code    Code
	Message string // munged's text, or ours for local failures
	Err     error  // cause, for local failures; nil for munged's verdicts
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Description()
	}
	s := "munge: " + msg + " (" + e.Code.String() + ")"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the local cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel for e's code (a bare *Error
// carrying only a Code, such as ErrCredExpired).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Code == e.Code
}

// Sentinels, one per status, for errors.Is.
var (
	ErrSnafu            = &Error{Code: CodeSnafu}
	ErrBadArg           = &Error{Code: CodeBadArg}
	ErrBadLength        = &Error{Code: CodeBadLength}
	ErrOverflow         = &Error{Code: CodeOverflow}
	ErrNoMemory         = &Error{Code: CodeNoMemory}
	ErrSocket           = &Error{Code: CodeSocket}
	ErrTimeout          = &Error{Code: CodeTimeout}
	ErrBadCred          = &Error{Code: CodeBadCred}
	ErrBadVersion       = &Error{Code: CodeBadVersion}
	ErrBadCipher        = &Error{Code: CodeBadCipher}
	ErrBadMAC           = &Error{Code: CodeBadMAC}
	ErrBadZip           = &Error{Code: CodeBadZip}
	ErrBadRealm         = &Error{Code: CodeBadRealm}
	ErrCredInvalid      = &Error{Code: CodeCredInvalid}
	ErrCredExpired      = &Error{Code: CodeCredExpired}
	ErrCredRewound      = &Error{Code: CodeCredRewound}
	ErrCredReplayed     = &Error{Code: CodeCredReplayed}
	ErrCredUnauthorized = &Error{Code: CodeCredUnauthorized}
)

// ErrMalformedReply is the cause (wrapped in an ErrSocket-coded *Error, as
// libmunge reports it) when munged's reply does not parse: bad magic or
// version, wrong message type, a length past the data or over the limit,
// trailing bytes.
var ErrMalformedReply = errors.New("malformed munged reply")

// CodeOf returns the MUNGE code carried by err, CodeSuccess for nil, and
// CodeSnafu for an error that is not a munge error.
func CodeOf(err error) Code {
	if err == nil {
		return CodeSuccess
	}
	var me *Error
	if errors.As(err, &me) {
		return me.Code
	}
	return CodeSnafu
}

// Decoded reports whether a Decode error still came with a fully decoded
// credential: munged verified its MAC but rejected it as expired, rewound or
// replayed. Only then is the *Credential returned beside the error non-nil.
func Decoded(err error) bool {
	switch CodeOf(err) {
	case CodeCredExpired, CodeCredRewound, CodeCredReplayed:
		return true
	}
	return false
}
