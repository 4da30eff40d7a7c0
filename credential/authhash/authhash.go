// Package authhash implements the message-integrity hash that Slurm 22.05+
// carries as the payload of an auth/munge credential, binding the credential
// to one message body and message type.
//
// The payload is one byte of hash type followed by the digest:
//
//	type 2 (K12):  KangarooTwelve(body, customization = msg_type as 2 bytes
//	               big-endian, 32 bytes of output)          -> 33 bytes
//	type 1 (NONE): msg_type as 2 bytes big-endian           -> 3 bytes
//
// The hash covers the body bytes only (exactly header.body_length of them),
// never the header or the auth section.
package authhash

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/xof/k12"
)

// Type is Slurm's hash plugin id (enum hash_plugin_type in slurm.h).
type Type uint8

const (
	// Default selects the default plugin, which in 22.05 is always K12.
	// A payload whose type byte is 0 is verified as K12 by 22.05, so it
	// is here too.
	Default Type = 0
	None    Type = 1
	K12     Type = 2
	// SHA256 is named in 22.05's enum but no plugin implements it; 22.05
	// rejects payloads of this type, and so do we.
	SHA256 Type = 3
)

func (t Type) String() string {
	switch t {
	case Default:
		return "default"
	case None:
		return "none"
	case K12:
		return "k12"
	case SHA256:
		return "sha256"
	}
	return fmt.Sprintf("hash(%d)", uint8(t))
}

// DigestSize is the K12 output length Slurm uses.
const DigestSize = 32

// SlurmErrno is the Slurm error number a receiver reports when the check
// fails: ESLURM_PROTOCOL_INCOMPLETE_PACKET.
const SlurmErrno = 5003

// ErrIncompletePacket is wrapped by every verification failure; Slurm turns
// any of them into ESLURM_PROTOCOL_INCOMPLETE_PACKET (SlurmErrno).
var ErrIncompletePacket = errors.New("authhash: message hash check failed (ESLURM_PROTOCOL_INCOMPLETE_PACKET)")

// Specific causes, each wrapping ErrIncompletePacket.
var (
	ErrNullHash    = fmt.Errorf("%w: empty hash payload refused (block_null_hash)", ErrIncompletePacket)
	ErrZeroHash    = fmt.Errorf("%w: hash type none refused (block_zero_hash)", ErrIncompletePacket)
	ErrUnsupported = fmt.Errorf("%w: unsupported hash type", ErrIncompletePacket)
	ErrMismatch    = fmt.Errorf("%w: hash does not match message", ErrIncompletePacket)
)

// ErrBadType is returned by Compute for a type it cannot produce.
var ErrBadType = errors.New("authhash: cannot compute this hash type")

// Policy holds the receiver options from CommunicationParameters.
type Policy struct {
	BlockNullHash bool // "block_null_hash": refuse credentials without a hash
	BlockZeroHash bool // "block_zero_hash": refuse hash type NONE
}

// Digest returns KangarooTwelve(body, customization = msgType big-endian)
// with DigestSize bytes of output.
func Digest(msgType uint16, body []byte) [DigestSize]byte {
	var custom [2]byte
	binary.BigEndian.PutUint16(custom[:], msgType)
	var out [DigestSize]byte
	k12.Draft10Sum(out[:], body, custom[:])
	return out
}

// Compute returns the credential payload for a message of msgType with the
// given body: 0x02 || Digest for K12 (and Default, as 22.05 sends it), or
// 0x01 || msgType for None.
func Compute(t Type, msgType uint16, body []byte) ([]byte, error) {
	switch t {
	case Default, K12:
		d := Digest(msgType, body)
		return append([]byte{byte(K12)}, d[:]...), nil
	case None:
		return binary.BigEndian.AppendUint16([]byte{byte(None)}, msgType), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrBadType, t)
}

// Verify checks a received credential payload against the message it came
// with, by Slurm 22.05's rules:
//
//   - an empty payload is accepted unless p.BlockNullHash;
//   - type None is accepted only when the payload is exactly 3 bytes, its
//     msg_type (big-endian) matches, and p.BlockZeroHash is not set;
//   - otherwise the digest is recomputed over exactly body and must match.
//
// body must be exactly the header's body_length bytes; the caller has
// already rejected frames with more or fewer.
//
// On success it returns the hash type the reply should use (Slurm copies the
// request's: None or K12; Default when the request carried no hash).
func Verify(payload []byte, msgType uint16, body []byte, p Policy) (Type, error) {
	if len(payload) == 0 {
		if p.BlockNullHash {
			return 0, ErrNullHash
		}
		return Default, nil
	}
	switch t := Type(payload[0]); t {
	case None:
		if p.BlockZeroHash {
			return 0, ErrZeroHash
		}
		if len(payload) != 3 || binary.BigEndian.Uint16(payload[1:]) != msgType {
			return 0, ErrMismatch
		}
		return None, nil
	case Default, K12:
		if len(payload) != 1+DigestSize {
			return 0, ErrMismatch
		}
		d := Digest(msgType, body)
		if subtle.ConstantTimeCompare(payload[1:], d[:]) != 1 {
			return 0, ErrMismatch
		}
		return K12, nil
	default:
		return 0, fmt.Errorf("%w (%v)", ErrUnsupported, t)
	}
}
