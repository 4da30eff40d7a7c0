package jobs

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// RegisterPackedJobInfo lets g's RESPONSE_JOB_INFO codec send a
// *PackedJobInfo as it is, besides the msg.JobInfoMsg values it packs.
// Decoding is unchanged. The controller calls it on its registry before it
// serves, so that REQUEST_JOB_INFO can answer with cached records.
func RegisterPackedJobInfo(g *codec.Registry) error {
	bc, ok := g.Lookup(msgtype.RESPONSE_JOB_INFO)
	if !ok {
		return fmt.Errorf("jobs: registry has no RESPONSE_JOB_INFO codec")
	}
	encode := bc.Encode
	g.Register(msgtype.RESPONSE_JOB_INFO, codec.BodyCodec{
		Decode: bc.Decode,
		Encode: func(w *pack.Writer, v codec.Version, body any) error {
			p, ok := body.(*PackedJobInfo)
			if !ok {
				return encode(w, v, body)
			}
			if p == nil {
				return fmt.Errorf("%w: nil packed RESPONSE_JOB_INFO", codec.ErrEncode)
			}
			if v != p.version {
				return fmt.Errorf("%w: RESPONSE_JOB_INFO packed at %v, sent at %v", codec.ErrEncode, p.version, v)
			}
			p.WriteTo(w)
			return nil
		},
	})
	return nil
}

// AcceptsPackedJobInfo reports whether g's RESPONSE_JOB_INFO codec takes a
// *PackedJobInfo (RegisterPackedJobInfo was called on it).
func AcceptsPackedJobInfo(g *codec.Registry) bool {
	bc, ok := g.Lookup(msgtype.RESPONSE_JOB_INFO)
	if !ok {
		return false
	}
	var w pack.Writer
	return bc.Encode(&w, codec.Version2205, &PackedJobInfo{version: codec.Version2205}) == nil
}
