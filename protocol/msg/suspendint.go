package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Suspend operations (slurm.h enum suspend_opts), in REQUEST_SUSPEND and
// REQUEST_SUSPEND_INT.
const (
	SuspendJob uint16 = 0
	ResumeJob  uint16 = 1
)

// SuspendInt is REQUEST_SUSPEND_INT, the controller's order to every node
// of a job to stop (or continue) its steps. IndfSusp is set for a suspend
// by scontrol (indefinite) rather than by the gang scheduler. The switch
// plugin's suspend info follows op on the wire; switch/none (the only
// switch plugin of 22.05 without a proprietary interconnect) packs nothing.
type SuspendInt struct {
	IndfSusp    uint8
	JobCoreSpec uint16
	JobID       uint32
	Op          uint16
}

func walkSuspendInt(w fieldWalker, _ codec.Version, b *SuspendInt) {
	w.u8(&b.IndfSusp)
	w.u16(&b.JobCoreSpec)
	w.u32(&b.JobID)
	w.u16(&b.Op)
}

func init() { registrars = append(registrars, registerSuspendInt) }

func registerSuspendInt(g *codec.Registry) {
	g.Register(msgtype.REQUEST_SUSPEND_INT, bodyCodec("REQUEST_SUSPEND_INT", walkSuspendInt))
}
