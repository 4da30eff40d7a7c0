package codec

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// BodyCodec packs and unpacks the body of one message type at a given
// protocol version. Decode reads from r (leaving errors in r or returning
// one); Encode appends to w and returns an error for a value of the wrong
// type.
type BodyCodec struct {
	Decode func(r *pack.Reader, v Version) (any, error)
	Encode func(w *pack.Writer, v Version, body any) error
}

// Registry maps message types to body codecs. It is filled before use and
// only read afterwards, so it needs no lock.
type Registry struct {
	m map[msgtype.Type]BodyCodec
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[msgtype.Type]BodyCodec{}} }

// Register sets the codec for t, replacing any earlier one.
func (g *Registry) Register(t msgtype.Type, c BodyCodec) {
	if c.Decode == nil || c.Encode == nil {
		panic(fmt.Sprintf("codec: incomplete BodyCodec for %v", t))
	}
	g.m[t] = c
}

// Lookup returns the codec for t.
func (g *Registry) Lookup(t msgtype.Type) (BodyCodec, bool) {
	if g == nil {
		return BodyCodec{}, false
	}
	c, ok := g.m[t]
	return c, ok
}

// DefaultRegistry returns a new registry holding the bodies that appear in
// forwarding replies: RESPONSE_SLURM_RC, RESPONSE_SLURM_RC_MSG and
// RESPONSE_FORWARD_FAILED.
func DefaultRegistry() *Registry {
	g := NewRegistry()
	g.Register(msgtype.RESPONSE_SLURM_RC, BodyCodec{Decode: decodeReturnCode, Encode: encodeReturnCode})
	g.Register(msgtype.RESPONSE_SLURM_RC_MSG, BodyCodec{Decode: decodeReturnCodeMsg, Encode: encodeReturnCodeMsg})
	g.Register(msgtype.RESPONSE_FORWARD_FAILED, BodyCodec{Decode: decodeEmpty, Encode: encodeEmpty})
	return g
}

// ReturnCode is the body of RESPONSE_SLURM_RC (and RESPONSE_JOB_READY,
// RESPONSE_PROLOG_EXECUTING): u32 return_code.
type ReturnCode struct {
	RC uint32
}

// Err returns nil for SLURM_SUCCESS, otherwise the slurmerr.Error.
func (b ReturnCode) Err() error { return slurmerr.FromRC(b.RC) }

// ReturnCodeMsg is the body of RESPONSE_SLURM_RC_MSG: u32 return_code,
// str err_msg. MsgNull marks a NULL err_msg (Slurm tells it from "").
type ReturnCodeMsg struct {
	RC      uint32
	Msg     string
	MsgNull bool
}

// Empty is the body of messages that carry none (RESPONSE_FORWARD_FAILED).
type Empty struct{}

func decodeReturnCode(r *pack.Reader, _ Version) (any, error) {
	b := ReturnCode{RC: r.U32()}
	return b, r.Err()
}

func encodeReturnCode(w *pack.Writer, _ Version, body any) error {
	switch b := body.(type) {
	case ReturnCode:
		w.U32(b.RC)
	case *ReturnCode:
		w.U32(b.RC)
	default:
		return encErr("RESPONSE_SLURM_RC body is %T, want ReturnCode", body)
	}
	return nil
}

func decodeReturnCodeMsg(r *pack.Reader, _ Version) (any, error) {
	var b ReturnCodeMsg
	b.RC = r.U32()
	var ok bool
	b.Msg, ok = r.OptStr()
	b.MsgNull = !ok
	return b, r.Err()
}

func encodeReturnCodeMsg(w *pack.Writer, _ Version, body any) error {
	var b ReturnCodeMsg
	switch v := body.(type) {
	case ReturnCodeMsg:
		b = v
	case *ReturnCodeMsg:
		b = *v
	default:
		return encErr("RESPONSE_SLURM_RC_MSG body is %T, want ReturnCodeMsg", body)
	}
	w.U32(b.RC)
	w.OptStr(b.Msg, !b.MsgNull)
	return nil
}

func decodeEmpty(*pack.Reader, Version) (any, error) { return Empty{}, nil }

func encodeEmpty(_ *pack.Writer, _ Version, body any) error {
	switch body.(type) {
	case nil, Empty, *Empty:
		return nil
	}
	return encErr("empty body given %T", body)
}
