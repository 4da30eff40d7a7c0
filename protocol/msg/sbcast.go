package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// RESPONSE_JOB_SBCAST_CRED, the controller's answer to sbcast's
// REQUEST_JOB_SBCAST_CRED (22.05 layouts: _pack_job_sbcast_cred_msg in
// slurm_protocol_pack.c, pack_sbcast_cred in slurm_cred.c).

// SbcastCred is an sbcast credential: the signed fields, then the
// signature (packmem; with cred/munge a munge credential string). Slurm
// refuses a credential without a signature, and so does this codec, in
// both directions. The signature is carried, not checked: verifying it is
// the credential layer's business (SignedBytes gives what was signed).
type SbcastCred struct {
	Ctime      int64
	Expiration int64
	JobID      uint32
	HetJobID   uint32
	StepID     uint32
	UID        uint32
	GID        uint32
	UserName   NullString
	// GIDs are the user's extended groups; none means the receiving
	// slurmd looks them up itself.
	GIDs      []uint32
	Nodes     NullString
	Signature []byte
}

func walkSbcastCredFields(w fieldWalker, c *SbcastCred) {
	w.time(&c.Ctime)
	w.time(&c.Expiration)
	w.u32(&c.JobID)
	w.u32(&c.HetJobID)
	w.u32(&c.StepID)
	w.u32(&c.UID)
	w.u32(&c.GID)
	w.str(&c.UserName)
	walkArray(w, &c.GIDs, 4, func(w fieldWalker, g *uint32) { w.u32(g) })
	w.str(&c.Nodes)
}

func walkSbcastCred(w fieldWalker, c *SbcastCred) {
	walkSbcastCredFields(w, c)
	if !w.decoding() && len(c.Signature) == 0 {
		w.fail(fmt.Errorf("%w: sbcast credential without a signature", codec.ErrEncode))
		return
	}
	walkArray(w, &c.Signature, 1, func(w fieldWalker, b *byte) { w.u8(b) })
	if w.decoding() && w.err() == nil && len(c.Signature) == 0 {
		w.fail(fmt.Errorf("msg: sbcast credential without a signature"))
	}
}

// SignedBytes returns the bytes the controller signed: the credential's
// fields before the signature, packed at protocol v.
func (c SbcastCred) SignedBytes(v codec.Version) ([]byte, error) {
	if err := checkVersion("sbcast credential", v); err != nil {
		return nil, err
	}
	var w pack.Writer
	e := &encoder{w: &w}
	walkSbcastCredFields(e, &c)
	if e.e != nil {
		return nil, e.e
	}
	return w.Bytes(), nil
}

// JobSbcastCredResponse is RESPONSE_JOB_SBCAST_CRED: u32 job_id, str
// node_list, a u32 that was node_cnt (22.05 sends 0 and ignores it on
// receipt; kept so a body re-encodes to the same bytes), the credential.
// 22.05 sends no node addresses here.
type JobSbcastCredResponse struct {
	JobID      uint32
	NodeList   NullString
	OldNodeCnt uint32
	Cred       SbcastCred
}

func walkJobSbcastCred(w fieldWalker, _ codec.Version, b *JobSbcastCredResponse) {
	w.u32(&b.JobID)
	w.str(&b.NodeList)
	w.u32(&b.OldNodeCnt)
	walkSbcastCred(w, &b.Cred)
}

func init() {
	registrars = append(registrars, func(g *codec.Registry) {
		g.Register(msgtype.RESPONSE_JOB_SBCAST_CRED, bodyCodec("RESPONSE_JOB_SBCAST_CRED", walkJobSbcastCred))
	})
}
