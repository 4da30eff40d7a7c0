package codec

import (
	"encoding/binary"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// MaxMsgSize is Slurm's MAX_MSG_SIZE: the largest length prefix a receiver
// accepts (1 GiB).
const MaxMsgSize = 1 << 30

// Frame is one Slurm message: header, auth section and the still-packed body.
type Frame struct {
	Header Header
	Auth   AuthBlob
	// Body holds exactly Header.BodyLength bytes.
	Body []byte
}

// Codec decodes and encodes frames. The zero value has no body codecs, so
// frames whose header carries a ret_list fail; use Default or set Bodies.
type Codec struct {
	// Bodies decodes the bodies inside a header's ret_list.
	Bodies *Registry
	// MaxMsgSize bounds the length prefix; 0 means MaxMsgSize.
	MaxMsgSize int
	// AcceptAuthSlurm makes the decoder accept auth/slurm (103) sections,
	// as a Slurm receiver does when it has that plugin loaded. Off, a frame
	// carrying one fails as it would at a 22.05 receiver. goslurm daemons
	// using the built-in auth turn it on.
	AcceptAuthSlurm bool
}

// Default is the codec with DefaultRegistry and the Slurm size limit.
var Default = &Codec{Bodies: DefaultRegistry()}

func (c *Codec) bodies() *Registry { return c.Bodies }

func (c *Codec) limit() int {
	if c.MaxMsgSize > 0 {
		return c.MaxMsgSize
	}
	return MaxMsgSize
}

// CheckLength validates a length prefix read from the wire before anything is
// allocated for it.
func (c *Codec) CheckLength(n uint32) error {
	if uint64(n) > uint64(c.limit()) {
		return newErr(ErrMsgSize, slurmerr.SLURM_PROTOCOL_INSANE_MSG_LENGTH, nil,
			"%d bytes, limit %d", n, c.limit())
	}
	return nil
}

// DecodeMessage decodes msg, the bytes that follow a frame's length prefix.
// The returned Frame aliases msg (Auth.Raw and Body are sub-slices).
func (c *Codec) DecodeMessage(msg []byte) (Frame, error) {
	if uint64(len(msg)) > uint64(c.limit()) {
		return Frame{}, newErr(ErrMsgSize, slurmerr.SLURM_PROTOCOL_INSANE_MSG_LENGTH, nil,
			"%d bytes, limit %d", len(msg), c.limit())
	}
	r := pack.NewReader(msg)
	h, err := c.readHeader(r)
	if err != nil {
		return Frame{}, err
	}
	auth, err := readAuth(r, msg, c.AcceptAuthSlurm)
	if err != nil {
		return Frame{}, newErr(ErrAuth, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, err,
			"%v from auth section", h.MsgType)
	}
	if rem := r.Remaining(); uint64(rem) != uint64(h.BodyLength) {
		return Frame{}, newErr(ErrBodyLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"%v: body_length %d, %d bytes follow the auth section", h.MsgType, h.BodyLength, rem)
	}
	return Frame{Header: h, Auth: auth, Body: r.Unread()}, nil
}

// DecodeFrame decodes a whole frame, length prefix included; the prefix must
// match the bytes given exactly.
func (c *Codec) DecodeFrame(frame []byte) (Frame, error) {
	if len(frame) < 4 {
		return Frame{}, newErr(ErrFrameLength, slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, nil,
			"%d bytes, no length prefix", len(frame))
	}
	n := binary.BigEndian.Uint32(frame)
	if err := c.CheckLength(n); err != nil {
		return Frame{}, err
	}
	if uint64(n) != uint64(len(frame)-4) {
		return Frame{}, newErr(ErrFrameLength, slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET, nil,
			"length prefix %d, %d bytes follow", n, len(frame)-4)
	}
	return c.DecodeMessage(frame[4:])
}

// AppendFrame appends f, length prefix included, to dst. Header.BodyLength
// must equal len(Body).
func (c *Codec) AppendFrame(dst []byte, f *Frame) ([]byte, error) {
	out, err := c.AppendHead(dst, f)
	if err != nil {
		return dst, err
	}
	return append(out, f.Body...), nil
}

// AppendHead appends everything of f's frame that precedes the body: the
// length prefix (which counts len(Body)), the header and the auth section.
// Head and Body written back to back are AppendFrame's bytes; writing them
// as two buffers spares a copy of a large body (a squeue reply over 10,000
// jobs is several MB). Header.BodyLength must equal len(Body).
func (c *Codec) AppendHead(dst []byte, f *Frame) ([]byte, error) {
	if uint64(f.Header.BodyLength) != uint64(len(f.Body)) {
		return dst, encErr("body_length %d, body of %d bytes", f.Header.BodyLength, len(f.Body))
	}
	if err := checkAuth(&f.Auth); err != nil {
		return dst, err
	}
	start := len(dst)
	w := pack.NewWriter(dst)
	w.U32(0) // length, patched below
	if err := c.AppendHeader(w, &f.Header); err != nil {
		return dst, err
	}
	w.Raw(f.Auth.Raw)
	out := w.Bytes()
	n := len(out) - start - 4 + len(f.Body)
	if n > c.limit() {
		return dst, newErr(ErrMsgSize, slurmerr.SLURM_PROTOCOL_INSANE_MSG_LENGTH, nil,
			"%d bytes, limit %d", n, c.limit())
	}
	binary.BigEndian.PutUint32(out[start:], uint32(n))
	return out, nil
}

// Marshal returns f's frame bytes using Default.
func (f *Frame) Marshal() ([]byte, error) { return Default.AppendFrame(nil, f) }

// NewFrame returns a frame of msgType at version Current with body_length
// set from body.
func NewFrame(msgType msgtype.Type, auth AuthBlob, body []byte) Frame {
	return Frame{
		Header: Header{Version: Current, MsgType: msgType, BodyLength: uint32(len(body))},
		Auth:   auth,
		Body:   body,
	}
}

// DecodeMessage decodes with Default.
func DecodeMessage(msg []byte) (Frame, error) { return Default.DecodeMessage(msg) }

// DecodeFrame decodes with Default.
func DecodeFrame(frame []byte) (Frame, error) { return Default.DecodeFrame(frame) }

// AppendFrame encodes with Default.
func AppendFrame(dst []byte, f *Frame) ([]byte, error) { return Default.AppendFrame(dst, f) }
