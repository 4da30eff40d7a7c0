package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Node state: a base state in the low bits and flags above (node_state and
// next_state of a node record, node_state of REQUEST_UPDATE_NODE).
const (
	NodeStateUnknown   uint32 = 0
	NodeStateDown      uint32 = 1
	NodeStateIdle      uint32 = 2
	NodeStateAllocated uint32 = 3
	NodeStateError     uint32 = 4
	NodeStateMixed     uint32 = 5
	NodeStateFuture    uint32 = 6
	NodeStateBase      uint32 = 0x0f

	NodeStateUndrain         uint32 = 0x00000040
	NodeStateCloud           uint32 = 0x00000080
	NodeResume               uint32 = 0x00000100
	NodeStateDrain           uint32 = 0x00000200
	NodeStateCompleting      uint32 = 0x00000400
	NodeStateNoRespond       uint32 = 0x00000800
	NodeStatePoweredDown     uint32 = 0x00001000
	NodeStateFail            uint32 = 0x00002000
	NodeStatePoweringUp      uint32 = 0x00004000
	NodeStateMaint           uint32 = 0x00008000
	NodeStateRebootRequested uint32 = 0x00010000
	NodeStateRebootCancel    uint32 = 0x00020000
	NodeStatePoweringDown    uint32 = 0x00040000
	NodeStateDynamicFuture   uint32 = 0x00080000
	NodeStateRebootIssued    uint32 = 0x00100000
	NodeStatePlanned         uint32 = 0x00200000
	NodeStateInvalidReg      uint32 = 0x00400000
	NodeStatePowerDown       uint32 = 0x00800000
	NodeStatePowerUp         uint32 = 0x01000000
	NodeStatePowerDrain      uint32 = 0x02000000
	NodeStateDynamicNorm     uint32 = 0x04000000
)

// UpdateNodeRequest is update_node_msg_t: REQUEST_UPDATE_NODE,
// REQUEST_CREATE_NODE and REQUEST_DELETE_NODE. Slurm's client initialises
// NodeState and Weight to NO_VAL and everything else to 0/NULL
// (NewUpdateNodeRequest). ReasonUID is ignored by slurmctld, which uses the
// authenticated uid.
type UpdateNodeRequest struct {
	Comment      NullString
	CPUBind      uint32
	Extra        NullString
	Features     NullString
	FeaturesAct  NullString
	Gres         NullString
	NodeAddr     NullString
	NodeHostname NullString
	NodeNames    NullString
	NodeState    uint32
	Reason       NullString
	ReasonUID    uint32
	Weight       uint32
}

// NewUpdateNodeRequest returns a request with Slurm's "unchanged" defaults.
func NewUpdateNodeRequest() UpdateNodeRequest {
	return UpdateNodeRequest{NodeState: 0xfffffffe, Weight: 0xfffffffe}
}

func walkUpdateNode(w fieldWalker, _ codec.Version, b *UpdateNodeRequest) {
	w.str(&b.Comment)
	w.u32(&b.CPUBind)
	w.str(&b.Extra)
	w.str(&b.Features)
	w.str(&b.FeaturesAct)
	w.str(&b.Gres)
	w.str(&b.NodeAddr)
	w.str(&b.NodeHostname)
	w.str(&b.NodeNames)
	w.u32(&b.NodeState)
	w.str(&b.Reason)
	w.u32(&b.ReasonUID)
	w.u32(&b.Weight)
}

// SelectNodeInfo is a node's select_nodeinfo: the select plugin id and, for
// cons_res, cons_tres and linear (the only ones supported; others fail with
// ErrPlugin as in a client without that plugin), the allocated CPUs, memory
// and TRES. sinfo derives MIXED from AllocCPUs against the node's CPUsEfctv.
type SelectNodeInfo struct {
	PluginID          SelectPlugin
	AllocCPUs         uint16
	AllocMemory       uint64
	TresAllocFmtStr   NullString
	TresAllocWeighted PackedDouble
}

func walkSelectNodeInfo(w fieldWalker, s *SelectNodeInfo) {
	w.u32((*uint32)(&s.PluginID))
	switch s.PluginID {
	case SelectConsRes, SelectLinear, SelectConsTres:
	default:
		w.fail(fmt.Errorf("%w: select plugin %d in node record", ErrPlugin, uint32(s.PluginID)))
		return
	}
	w.u16(&s.AllocCPUs)
	w.u64(&s.AllocMemory)
	w.str(&s.TresAllocFmtStr)
	w.dbl(&s.TresAllocWeighted)
}

// NodeEnergy is a node's acct_gather_energy record (all zero when the node
// has none).
type NodeEnergy struct {
	BaseConsumedEnergy     uint64
	AveWatts               uint32
	ConsumedEnergy         uint64
	CurrentWatts           uint32
	PreviousConsumedEnergy uint64
	PollTime               int64
}

func walkEnergy(w fieldWalker, e *NodeEnergy) {
	w.u64(&e.BaseConsumedEnergy)
	w.u32(&e.AveWatts)
	w.u64(&e.ConsumedEnergy)
	w.u32(&e.CurrentWatts)
	w.u64(&e.PreviousConsumedEnergy)
	w.time(&e.PollTime)
}

// ExtSensors is a node's ext_sensors record (all zero when absent).
type ExtSensors struct {
	ConsumedEnergy   uint64
	Temperature      uint32
	EnergyUpdateTime int64
	CurrentWatts     uint32
}

func walkExtSensors(w fieldWalker, e *ExtSensors) {
	w.u64(&e.ConsumedEnergy)
	w.u32(&e.Temperature)
	w.time(&e.EnergyUpdateTime)
	w.u32(&e.CurrentWatts)
}

// Node is one record of RESPONSE_NODE_INFO. A record with a NULL Name is a
// blank slot for a node hidden from the requester; clients skip it but it
// keeps the partition bitmaps' indexes aligned.
type Node struct {
	Name            NullString
	NodeHostname    NullString
	NodeAddr        NullString
	BcastAddress    NullString
	Port            uint16
	NextState       uint32
	NodeState       uint32
	Version         NullString
	CPUs            uint16
	Boards          uint16
	Sockets         uint16
	Cores           uint16
	Threads         uint16
	RealMemory      uint64
	TmpDisk         uint32
	MCSLabel        NullString
	Owner           uint32
	CoreSpecCnt     uint16
	CPUBind         uint32
	MemSpecLimit    uint64
	CPUSpecList     NullString
	CPUsEfctv       uint16
	CPULoad         uint32
	FreeMem         uint64
	Weight          uint32
	ReasonUID       uint32
	BootTime        int64
	LastBusy        int64
	ReasonTime      int64
	SlurmdStartTime int64
	SelectNodeInfo  SelectNodeInfo
	Arch            NullString
	Features        NullString
	FeaturesAct     NullString
	Gres            NullString
	GresDrain       NullString
	GresUsed        NullString
	OS              NullString
	Comment         NullString
	Extra           NullString
	Reason          NullString
	Energy          NodeEnergy
	ExtSensors      ExtSensors
	// PowerCapWatts is the power_mgmt record: NO_VAL when absent.
	PowerCapWatts uint32
	TresFmtStr    NullString
}

// nodeMinSize is the fewest bytes a 22.05 node record can take (every string
// NULL): 18 strings, 104 bytes of fixed fields, select_nodeinfo (26), energy
// (40), ext_sensors (24) and power (4). A test checks it.
const nodeMinSize = 18*4 + 104 + 26 + 40 + 24 + 4

func walkNode(w fieldWalker, n *Node) {
	w.str(&n.Name)
	w.str(&n.NodeHostname)
	w.str(&n.NodeAddr)
	w.str(&n.BcastAddress)
	w.u16(&n.Port)
	w.u32(&n.NextState)
	w.u32(&n.NodeState)
	w.str(&n.Version)
	w.u16(&n.CPUs)
	w.u16(&n.Boards)
	w.u16(&n.Sockets)
	w.u16(&n.Cores)
	w.u16(&n.Threads)
	w.u64(&n.RealMemory)
	w.u32(&n.TmpDisk)
	w.str(&n.MCSLabel)
	w.u32(&n.Owner)
	w.u16(&n.CoreSpecCnt)
	w.u32(&n.CPUBind)
	w.u64(&n.MemSpecLimit)
	w.str(&n.CPUSpecList)
	w.u16(&n.CPUsEfctv)
	w.u32(&n.CPULoad)
	w.u64(&n.FreeMem)
	w.u32(&n.Weight)
	w.u32(&n.ReasonUID)
	w.time(&n.BootTime)
	w.time(&n.LastBusy)
	w.time(&n.ReasonTime)
	w.time(&n.SlurmdStartTime)
	walkSelectNodeInfo(w, &n.SelectNodeInfo)
	w.str(&n.Arch)
	w.str(&n.Features)
	w.str(&n.FeaturesAct)
	w.str(&n.Gres)
	w.str(&n.GresDrain)
	w.str(&n.GresUsed)
	w.str(&n.OS)
	w.str(&n.Comment)
	w.str(&n.Extra)
	w.str(&n.Reason)
	walkEnergy(w, &n.Energy)
	walkExtSensors(w, &n.ExtSensors)
	w.u32(&n.PowerCapWatts)
	w.str(&n.TresFmtStr)
}

// NodeInfoResponse is RESPONSE_NODE_INFO: u32 record_count, time
// last_update, then the records (one per node-table slot).
type NodeInfoResponse struct {
	LastUpdate int64
	Nodes      []Node
}

func walkNodeInfo(w fieldWalker, _ codec.Version, b *NodeInfoResponse) {
	// The count comes before last_update, so the array is walked by hand.
	n := w.count(len(b.Nodes), nodeMinSize)
	w.time(&b.LastUpdate)
	if w.decoding() {
		if w.err() != nil || n == 0 {
			b.Nodes = nil
			return
		}
		b.Nodes = make([]Node, n)
	}
	for i := range b.Nodes {
		walkNode(w, &b.Nodes[i])
		if w.err() != nil {
			return
		}
	}
}

func init() { registrars = append(registrars, registerNode) }

func registerNode(g *codec.Registry) {
	upd := bodyCodec("update_node", walkUpdateNode)
	g.Register(msgtype.REQUEST_UPDATE_NODE, upd)
	g.Register(msgtype.REQUEST_CREATE_NODE, upd)
	g.Register(msgtype.REQUEST_DELETE_NODE, upd)
	g.Register(msgtype.RESPONSE_NODE_INFO, bodyCodec("RESPONSE_NODE_INFO", walkNodeInfo))
}
