package slurmauth

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/protocol/pack"
)

// The sack ("Slurm auth and cred kiosk") request, as Slurm 23.11's
// sack_api.c sends it:
//
//	u16 version   (not counted in length)
//	u32 length    counts itself and everything after it
//	u32 rpc       SackCreate or SackVerify
//	create: u32 r_uid, packmem payload
//	verify: packstr token
//
// Replies: create -> packstr token (u32 strlen+1, bytes, NUL), or u32 0 on
// failure (Slurm's client reads a zero length as failure); verify -> u32
// rc, 0 when the token is valid for the caller.
const (
	SackCreate uint32 = 64001
	SackVerify uint32 = 64002

	// SackHeaderLength is version + length + rpc.
	SackHeaderLength = 2 + 4 + 4
	// MaxSackPayload bounds a create request's payload (a message hash is
	// 33 bytes).
	MaxSackPayload = 8 << 10
	// MaxSackRequest bounds the length field.
	MaxSackRequest = 4 + 4 + 4 + MaxTokenLen + 64
)

// SackRequest is one decoded sack request.
type SackRequest struct {
	Version uint16
	RPC     uint32
	// create
	RUID    uint32
	Payload []byte
	// verify
	Token string
}

// ErrSackRequest is wrapped by every request decoding failure.
var ErrSackRequest = errors.New("slurmauth: bad sack request")

// AppendSackRequest appends req's wire form to dst.
func AppendSackRequest(dst []byte, req *SackRequest) []byte {
	start := len(dst)
	w := pack.NewWriter(dst)
	w.U16(req.Version)
	w.U32(0) // length, patched below
	w.U32(req.RPC)
	switch req.RPC {
	case SackCreate:
		w.U32(req.RUID)
		w.Mem(req.Payload)
	case SackVerify:
		w.Str(req.Token)
	}
	out := w.Bytes()
	binary.BigEndian.PutUint32(out[start+2:], uint32(len(out)-start-2))
	return out
}

// ParseSackHeader reads the fixed header and checks the length field
// before anything is allocated for the rest. It returns how many more bytes
// the request has.
func ParseSackHeader(h []byte) (version uint16, rpc uint32, rest int, err error) {
	if len(h) < SackHeaderLength {
		return 0, 0, 0, fmt.Errorf("%w: header of %d bytes", ErrSackRequest, len(h))
	}
	version = binary.BigEndian.Uint16(h)
	length := binary.BigEndian.Uint32(h[2:])
	rpc = binary.BigEndian.Uint32(h[6:])
	if length < 8 || length > MaxSackRequest {
		return 0, 0, 0, fmt.Errorf("%w: length %d, want 8..%d", ErrSackRequest, length, MaxSackRequest)
	}
	if rpc != SackCreate && rpc != SackVerify {
		return 0, 0, 0, fmt.Errorf("%w: unknown rpc %d", ErrSackRequest, rpc)
	}
	return version, rpc, int(length) - 8, nil
}

// DecodeSackRequest decodes a whole request (header included). The body must
// be consumed exactly.
func DecodeSackRequest(b []byte) (SackRequest, error) {
	version, rpc, rest, err := ParseSackHeader(b)
	if err != nil {
		return SackRequest{}, err
	}
	if len(b)-SackHeaderLength != rest {
		return SackRequest{}, fmt.Errorf("%w: length says %d body bytes, have %d",
			ErrSackRequest, rest, len(b)-SackHeaderLength)
	}
	return decodeSackBody(version, rpc, b[SackHeaderLength:])
}

func decodeSackBody(version uint16, rpc uint32, body []byte) (SackRequest, error) {
	req := SackRequest{Version: version, RPC: rpc}
	r := pack.NewReader(body)
	switch rpc {
	case SackCreate:
		req.RUID = r.U32()
		req.Payload = r.Mem()
		if len(req.Payload) > MaxSackPayload {
			return SackRequest{}, fmt.Errorf("%w: payload of %d bytes, at most %d",
				ErrSackRequest, len(req.Payload), MaxSackPayload)
		}
	case SackVerify:
		tok, ok := r.OptStr()
		if r.Err() == nil && (!ok || tok == "") {
			r.Fail(errors.New("no token"))
		}
		req.Token = tok
	default:
		return SackRequest{}, fmt.Errorf("%w: unknown rpc %d", ErrSackRequest, rpc)
	}
	if err := r.Done(); err != nil {
		return SackRequest{}, fmt.Errorf("%w: rpc %d: %v", ErrSackRequest, rpc, err)
	}
	return req, nil
}
