package msg

// slurmd registration and the small slurmd -> slurmctld replies (reference
// protocol-daemon.md §2.1, §2.2).

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Flags of NodeRegistration.Flags.
const (
	// SlurmdRegFlagResp asks slurmctld for RESPONSE_NODE_REGISTRATION (with
	// the TRES list a real slurmd waits for before it launches anything).
	SlurmdRegFlagResp uint16 = 0x0002
)

// Dynamic node types of NodeRegistration.DynamicType.
const (
	DynNodeNone   uint8 = 0
	DynNodeFuture uint8 = 1
	DynNodeNorm   uint8 = 2
)

// NodeRegistration is MESSAGE_NODE_REGISTRATION_STATUS
// (slurm_node_registration_status_msg_t), protocol 22.05. Steps lists every
// live step, the batch (StepIDBatch) and extern (StepIDExtern) steps
// included. GresInfo is the gres_node_config_pack blob, opaque here (u32
// size, then packmem of the same bytes; empty: size 0 alone). HashVal NO_VAL
// skips slurmctld's slurm.conf comparison.
type NodeRegistration struct {
	Timestamp       int64
	SlurmdStartTime int64
	Status          uint32
	FeaturesActive  NullString
	FeaturesAvail   NullString
	Hostname        NullString
	NodeName        NullString
	Arch            NullString
	CPUSpecList     NullString
	OS              NullString
	CPUs            uint16
	Boards          uint16
	Sockets         uint16
	Cores           uint16
	Threads         uint16
	RealMemory      uint64
	TmpDisk         uint32
	UpTime          uint32
	HashVal         uint32
	CPULoad         uint32
	FreeMem         uint64
	Steps           []StepID
	Flags           uint16
	GresInfo        []byte
	Energy          NodeEnergy
	Version         NullString
	DynamicType     uint8
	DynamicConf     NullString
	DynamicFeature  NullString
}

func walkNodeRegistration(w fieldWalker, _ codec.Version, b *NodeRegistration) {
	w.time(&b.Timestamp)
	w.time(&b.SlurmdStartTime)
	w.u32(&b.Status)
	w.str(&b.FeaturesActive)
	w.str(&b.FeaturesAvail)
	w.str(&b.Hostname)
	w.str(&b.NodeName)
	w.str(&b.Arch)
	w.str(&b.CPUSpecList)
	w.str(&b.OS)
	w.u16(&b.CPUs)
	w.u16(&b.Boards)
	w.u16(&b.Sockets)
	w.u16(&b.Cores)
	w.u16(&b.Threads)
	w.u64(&b.RealMemory)
	w.u32(&b.TmpDisk)
	w.u32(&b.UpTime)
	w.u32(&b.HashVal)
	w.u32(&b.CPULoad)
	w.u64(&b.FreeMem)
	walkArray(w, &b.Steps, 12, walkStepID)
	w.u16(&b.Flags)
	walkGresInfo(w, &b.GresInfo)
	walkEnergy(w, &b.Energy)
	w.str(&b.Version)
	w.u8(&b.DynamicType)
	w.str(&b.DynamicConf)
	w.str(&b.DynamicFeature)
}

// walkGresInfo walks the registration's GRES blob: u32 size and, when it is
// not 0, packmem of exactly size bytes (the length appears twice).
func walkGresInfo(w fieldWalker, p *[]byte) {
	size := uint32(len(*p))
	if !w.decoding() && uint64(len(*p)) > pack.MaxMemLen {
		daemonFail(w, "GRES blob of %d bytes", len(*p))
		return
	}
	w.u32(&size)
	if w.decoding() {
		*p = nil
		if w.err() != nil || size == 0 {
			return
		}
	} else if size == 0 {
		return
	}
	walkMem(w, p)
	if w.decoding() && w.err() == nil && uint32(len(*p)) != size {
		daemonFail(w, "GRES blob size %d, block of %d bytes", size, len(*p))
	}
}

// NodeRegResponse is RESPONSE_NODE_REGISTRATION (slurm_node_reg_resp_msg_t):
// slurmctld's TRES list (nil is NO_VAL; a real slurmd needs one) and, for a
// dynamic node, its node name.
type NodeRegResponse struct {
	Tres     []TresRec `slurm:"nullable"`
	NodeName NullString
}

func walkNodeRegResponse(w fieldWalker, _ codec.Version, b *NodeRegResponse) {
	walkTresList(w, &b.Tres)
	w.str(&b.NodeName)
}

// PingSlurmdResponse is RESPONSE_PING_SLURMD: the 5-minute load average x 100
// and free memory in MB.
type PingSlurmdResponse struct {
	CPULoad uint32
	FreeMem uint64
}

func walkPingSlurmdResponse(w fieldWalker, _ codec.Version, b *PingSlurmdResponse) {
	w.u32(&b.CPULoad)
	w.u64(&b.FreeMem)
}

// AcctGatherNodeResponse is RESPONSE_ACCT_GATHER_UPDATE: the node name and
// one energy record per sensor (u16 count).
type AcctGatherNodeResponse struct {
	NodeName NullString
	Energy   []NodeEnergy
}

func walkAcctGatherNodeResponse(w fieldWalker, _ codec.Version, b *AcctGatherNodeResponse) {
	w.str(&b.NodeName)
	n := uint16(len(b.Energy))
	if !w.decoding() && len(b.Energy) > 0xffff {
		daemonFail(w, "%d energy sensors", len(b.Energy))
		return
	}
	w.u16(&n)
	if w.decoding() {
		b.Energy = nil
		if n == 0 || !bound(w, uint64(n), 40, "energy records") {
			return
		}
		b.Energy = make([]NodeEnergy, n)
	}
	for i := range b.Energy {
		walkEnergy(w, &b.Energy[i])
	}
}

// AcctGatherEnergyRequest is REQUEST_ACCT_GATHER_ENERGY.
type AcctGatherEnergyRequest struct {
	ContextID uint16
	Delta     uint16
}

func walkAcctGatherEnergyRequest(w fieldWalker, _ codec.Version, b *AcctGatherEnergyRequest) {
	w.u16(&b.ContextID)
	w.u16(&b.Delta)
}
