package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Partition flags (u16 at 22.05; u32 from 24.05).
const (
	PartFlagDefault       uint16 = 0x0001
	PartFlagHidden        uint16 = 0x0002
	PartFlagNoRoot        uint16 = 0x0004
	PartFlagRootOnly      uint16 = 0x0008
	PartFlagReqResv       uint16 = 0x0010
	PartFlagLLN           uint16 = 0x0020
	PartFlagExclusiveUser uint16 = 0x0040
)

// Partition state_up values.
const (
	PartitionInactive uint16 = 0
	PartitionDown     uint16 = 1
	PartitionDrain    uint16 = 2
	PartitionUp       uint16 = 3
)

// UpdatePartitionRequest is update_part_msg_t: REQUEST_UPDATE_PARTITION and
// REQUEST_CREATE_PARTITION, 28 fields in wire order.
type UpdatePartitionRequest struct {
	AllowAccounts     NullString
	AllowAllocNodes   NullString
	AllowGroups       NullString
	AllowQOS          NullString
	Alternate         NullString
	BillingWeightsStr NullString
	CPUBind           uint32
	DefMemPerCPU      uint64
	DefaultTime       uint32
	DenyAccounts      NullString
	DenyQOS           NullString
	Flags             uint16
	JobDefaultsStr    NullString
	GraceTime         uint32
	MaxCPUsPerNode    uint32
	MaxMemPerCPU      uint64
	MaxNodes          uint32
	MaxShare          uint16
	MaxTime           uint32
	MinNodes          uint32
	Name              NullString
	Nodes             NullString
	OverTimeLimit     uint16
	PreemptMode       uint16
	PriorityJobFactor uint16
	PriorityTier      uint16
	QOSChar           NullString
	StateUp           uint16
}

func walkUpdatePartition(w fieldWalker, _ codec.Version, b *UpdatePartitionRequest) {
	w.str(&b.AllowAccounts)
	w.str(&b.AllowAllocNodes)
	w.str(&b.AllowGroups)
	w.str(&b.AllowQOS)
	w.str(&b.Alternate)
	w.str(&b.BillingWeightsStr)
	w.u32(&b.CPUBind)
	w.u64(&b.DefMemPerCPU)
	w.u32(&b.DefaultTime)
	w.str(&b.DenyAccounts)
	w.str(&b.DenyQOS)
	w.u16(&b.Flags)
	w.str(&b.JobDefaultsStr)
	w.u32(&b.GraceTime)
	w.u32(&b.MaxCPUsPerNode)
	w.u64(&b.MaxMemPerCPU)
	w.u32(&b.MaxNodes)
	w.u16(&b.MaxShare)
	w.u32(&b.MaxTime)
	w.u32(&b.MinNodes)
	w.str(&b.Name)
	w.str(&b.Nodes)
	w.u16(&b.OverTimeLimit)
	w.u16(&b.PreemptMode)
	w.u16(&b.PriorityJobFactor)
	w.u16(&b.PriorityTier)
	w.str(&b.QOSChar)
	w.u16(&b.StateUp)
}

// Partition is one record of RESPONSE_PARTITION_INFO. NodeInx indexes the
// RESPONSE_NODE_INFO array; it, not Nodes, is how clients map partitions to
// nodes.
type Partition struct {
	Name              NullString
	CPUBind           uint32
	GraceTime         uint32
	MaxTime           uint32
	DefaultTime       uint32
	MaxNodes          uint32
	MinNodes          uint32
	TotalNodes        uint32
	TotalCPUs         uint32
	DefMemPerCPU      uint64
	MaxCPUsPerNode    uint32
	MaxMemPerCPU      uint64
	Flags             uint16
	MaxShare          uint16
	OverTimeLimit     uint16
	PreemptMode       uint16
	PriorityJobFactor uint16
	PriorityTier      uint16
	StateUp           uint16
	CRType            uint16
	ResumeTimeout     uint16
	SuspendTimeout    uint16
	SuspendTime       uint32
	AllowAccounts     NullString
	AllowGroups       NullString
	AllowAllocNodes   NullString
	AllowQOS          NullString
	QOSChar           NullString
	Alternate         NullString
	DenyAccounts      NullString
	DenyQOS           NullString
	Nodes             NullString
	NodeSets          NullString
	NodeInx           HexBitmap
	BillingWeightsStr NullString
	TresFmtStr        NullString
	JobDefaults       []JobDefault `slurm:"nullable"`
}

// partitionMinSize: 13 strings, 76 bytes of fixed fields, a NULL bitmap and a
// NULL job_defaults list. A test checks it.
const partitionMinSize = 13*4 + 76 + 4 + 4

func walkPartition(w fieldWalker, p *Partition) {
	w.str(&p.Name)
	w.u32(&p.CPUBind)
	w.u32(&p.GraceTime)
	w.u32(&p.MaxTime)
	w.u32(&p.DefaultTime)
	w.u32(&p.MaxNodes)
	w.u32(&p.MinNodes)
	w.u32(&p.TotalNodes)
	w.u32(&p.TotalCPUs)
	w.u64(&p.DefMemPerCPU)
	w.u32(&p.MaxCPUsPerNode)
	w.u64(&p.MaxMemPerCPU)
	w.u16(&p.Flags)
	w.u16(&p.MaxShare)
	w.u16(&p.OverTimeLimit)
	w.u16(&p.PreemptMode)
	w.u16(&p.PriorityJobFactor)
	w.u16(&p.PriorityTier)
	w.u16(&p.StateUp)
	w.u16(&p.CRType)
	w.u16(&p.ResumeTimeout)
	w.u16(&p.SuspendTimeout)
	w.u32(&p.SuspendTime)
	w.str(&p.AllowAccounts)
	w.str(&p.AllowGroups)
	w.str(&p.AllowAllocNodes)
	w.str(&p.AllowQOS)
	w.str(&p.QOSChar)
	w.str(&p.Alternate)
	w.str(&p.DenyAccounts)
	w.str(&p.DenyQOS)
	w.str(&p.Nodes)
	w.str(&p.NodeSets)
	w.bitmap(&p.NodeInx)
	w.str(&p.BillingWeightsStr)
	w.str(&p.TresFmtStr)
	walkJobDefaults(w, &p.JobDefaults)
}

// PartitionInfoResponse is RESPONSE_PARTITION_INFO: u32 record_count, time
// last_update, then the records.
type PartitionInfoResponse struct {
	LastUpdate int64
	Partitions []Partition
}

func walkPartitionInfo(w fieldWalker, _ codec.Version, b *PartitionInfoResponse) {
	n := w.count(len(b.Partitions), partitionMinSize)
	w.time(&b.LastUpdate)
	if w.decoding() {
		if w.err() != nil || n == 0 {
			b.Partitions = nil
			return
		}
		b.Partitions = make([]Partition, n)
	}
	for i := range b.Partitions {
		walkPartition(w, &b.Partitions[i])
		if w.err() != nil {
			return
		}
	}
}

func init() { registrars = append(registrars, registerPartition) }

func registerPartition(g *codec.Registry) {
	upd := bodyCodec("update_partition", walkUpdatePartition)
	g.Register(msgtype.REQUEST_UPDATE_PARTITION, upd)
	g.Register(msgtype.REQUEST_CREATE_PARTITION, upd)
	g.Register(msgtype.RESPONSE_PARTITION_INFO, bodyCodec("RESPONSE_PARTITION_INFO", walkPartitionInfo))
}
