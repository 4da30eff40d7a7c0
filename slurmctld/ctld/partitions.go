package ctld

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

const (
	memPerCPU   uint64 = 0x8000000000000000
	sharedForce uint16 = 0x8000

	jobDefCPUPerGPU uint16 = 0x0001 // JOB_DEF_CPU_PER_GPU
	jobDefMemPerGPU uint16 = 0x0002 // JOB_DEF_MEM_PER_GPU
)

// Partition is one partition record. Conf is the partition's own copy of
// its slurm.conf line, which scontrol update changes (Flags and StateUp
// are authoritative for what they hold; syncConf writes them back).
type Partition struct {
	Name    string
	Conf    *conf.Partition
	Nodes   []*Node // in node table order
	StateUp uint16
	Flags   uint16

	// keepShown: shownNodes is the Nodes= string reported instead of the
	// member list. 22.05 keeps the old string when an update named an
	// unknown node, while the members already changed.
	keepShown  bool
	shownNodes string
	// sched is the scheduler's view, rebuilt after a change (nil).
	sched *sched.Partition
}

func newPartitions(cfg *Config, nodes []*Node) ([]*Partition, error) {
	c := cfg.Conf
	idx := map[string]*Node{}
	for _, n := range nodes {
		idx[n.Name] = n
	}
	var parts []*Partition
	for _, orig := range c.Partitions {
		cp := new(conf.Partition)
		*cp = *orig // updates must not write into the parsed configuration
		p := &Partition{Name: cp.Name, Conf: cp}
		in := map[string]bool{}
		for _, name := range cp.NodeNames {
			if idx[name] == nil {
				return nil, fmt.Errorf("partition %s: unknown node %s", cp.Name, name)
			}
			in[name] = true
		}
		for _, n := range nodes {
			if in[n.Name] {
				p.Nodes = append(p.Nodes, n)
				n.Partitions = append(n.Partitions, p.Name)
			}
		}
		switch strings.ToUpper(cp.State) {
		case "", "UP":
			p.StateUp = msg.PartitionUp
		case "DOWN":
			p.StateUp = msg.PartitionDown
		case "DRAIN":
			p.StateUp = msg.PartitionDrain
		case "INACTIVE":
			p.StateUp = msg.PartitionInactive
		default:
			return nil, fmt.Errorf("partition %s: invalid State=%s", cp.Name, cp.State)
		}
		if _, err := preemptMode(cp.PreemptMode); err != nil {
			return nil, fmt.Errorf("partition %s: %w", cp.Name, err)
		}
		if cp.Name == c.DefaultPartition {
			p.Flags |= msg.PartFlagDefault
		}
		if cp.Hidden {
			p.Flags |= msg.PartFlagHidden
		}
		noRoot := c.DisableRootJobs
		if cp.DisableRootJobs != nil {
			noRoot = *cp.DisableRootJobs
		}
		if noRoot {
			p.Flags |= msg.PartFlagNoRoot
		}
		if cp.RootOnly {
			p.Flags |= msg.PartFlagRootOnly
		}
		if cp.ReqResv {
			p.Flags |= msg.PartFlagReqResv
		}
		if cp.LLN {
			p.Flags |= msg.PartFlagLLN
		}
		if cp.ExclusiveUser {
			p.Flags |= msg.PartFlagExclusiveUser
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// TotalCPUs is the sum of the member nodes' CPUs.
func (p *Partition) TotalCPUs() uint32 {
	var t uint32
	for _, n := range p.Nodes {
		t += uint32(n.CPUs)
	}
	return t
}

// efctvCPUs is the CPUs of the member nodes that jobs may have (their
// CPUEfctv): the partition's TRES count them.
func (p *Partition) efctvCPUs() uint32 {
	var t uint32
	for _, n := range p.Nodes {
		t += uint32(n.CPUsEfctv)
	}
	return t
}

func (p *Partition) totalMem() uint64 {
	var t uint64
	for _, n := range p.Nodes {
		t += n.RealMemory
	}
	return t
}

// NodeList is the ranged list of member nodes ("n[1-2]").
func (p *Partition) NodeList() string {
	names := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		names[i] = n.Name
	}
	return hostlist.Compress(names)
}

// nodesString is the partition's Nodes= as reported.
func (p *Partition) nodesString() string {
	if p.keepShown {
		return p.shownNodes
	}
	return p.NodeList()
}

func optStr(s string) msg.NullString {
	if s == "" {
		return msg.NullString{}
	}
	return msg.Str(s)
}

func preemptMode(l conf.List) (uint16, error) {
	if len(l) == 0 {
		return noVal16, nil
	}
	var m uint16
	for _, s := range l {
		switch strings.ToUpper(s) {
		case "OFF", "CLUSTER":
		case "SUSPEND", "ON":
			m |= 0x0001
		case "REQUEUE":
			m |= 0x0002
		case "CANCEL":
			m |= 0x0008
		case "WITHIN":
			m |= 0x4000
		case "GANG":
			m |= 0x8000
		default:
			return 0, fmt.Errorf("invalid PreemptMode %s", s)
		}
	}
	return m, nil
}

// record is the partition as RESPONSE_PARTITION_INFO packs it; nodeCount is
// the size of the node table (the NodeInx bitmap's length).
func (p *Partition) record(nodeCount int) msg.Partition {
	cp := p.Conf
	maxShare := cp.MaxShare
	if strings.EqualFold(cp.OverSubscribe, "FORCE") {
		maxShare |= sharedForce
	}
	var defMem, maxMem uint64
	switch {
	case cp.DefMemPerCPU != 0:
		defMem = uint64(cp.DefMemPerCPU) | memPerCPU
	case cp.DefMemPerNode != 0:
		defMem = uint64(cp.DefMemPerNode)
	}
	switch {
	case cp.MaxMemPerCPU != 0:
		maxMem = uint64(cp.MaxMemPerCPU) | memPerCPU
	case cp.MaxMemPerNode != 0:
		maxMem = uint64(cp.MaxMemPerNode)
	}
	pm, _ := preemptMode(cp.PreemptMode) // checked at load
	set := make([]int, len(p.Nodes))
	for i, n := range p.Nodes {
		set[i] = n.Index
	}
	r := msg.Partition{
		Name:              msg.Str(p.Name),
		CPUBind:           cp.CpuBindFlags,
		GraceTime:         uint32(cp.GraceTime),
		MaxTime:           uint32(cp.MaxTime),
		DefaultTime:       uint32(cp.DefaultTime),
		MaxNodes:          cp.MaxNodes,
		MinNodes:          cp.MinNodes,
		TotalNodes:        uint32(len(p.Nodes)),
		TotalCPUs:         p.TotalCPUs(),
		DefMemPerCPU:      defMem,
		MaxCPUsPerNode:    cp.MaxCPUsPerNode,
		MaxMemPerCPU:      maxMem,
		Flags:             p.Flags,
		MaxShare:          maxShare,
		OverTimeLimit:     uint16(cp.OverTimeLimit),
		PreemptMode:       pm,
		PriorityJobFactor: cp.PriorityJobFactor,
		PriorityTier:      cp.PriorityTier,
		StateUp:           p.StateUp,
		ResumeTimeout:     uint16(cp.ResumeTimeout),
		SuspendTimeout:    uint16(cp.SuspendTimeout),
		SuspendTime:       uint32(cp.SuspendTime),
		AllowAccounts:     optStr(strings.Join(cp.AllowAccounts, ",")),
		AllowGroups:       optStr(strings.Join(cp.AllowGroups, ",")),
		AllowAllocNodes:   optStr(strings.Join(cp.AllocNodes, ",")),
		AllowQOS:          optStr(strings.Join(cp.AllowQos, ",")),
		QOSChar:           optStr(cp.QOS),
		Alternate:         optStr(cp.Alternate),
		DenyAccounts:      optStr(strings.Join(cp.DenyAccounts, ",")),
		DenyQOS:           optStr(strings.Join(cp.DenyQos, ",")),
		Nodes:             optStr(p.nodesString()),
		NodeSets:          optStr(strings.Join(cp.NodeSets, ",")),
		NodeInx:           msg.BitmapOf(nodeCount, set...),
		BillingWeightsStr: optStr(cp.TRESBillingWeights),
	}
	if cp.DefCPUPerGPU != 0 {
		r.JobDefaults = append(r.JobDefaults, msg.JobDefault{Type: jobDefCPUPerGPU, Value: cp.DefCPUPerGPU})
	}
	if cp.DefMemPerGPU != 0 {
		r.JobDefaults = append(r.JobDefaults, msg.JobDefault{Type: jobDefMemPerGPU, Value: uint64(cp.DefMemPerGPU)})
	}
	// A partition without nodes has no TRES at all (zero counts are left
	// out of the string, which is then NULL).
	if len(p.Nodes) > 0 {
		r.TresFmtStr = msg.Str(fmt.Sprintf("cpu=%d,mem=%s,node=%d,billing=%d",
			p.efctvCPUs(), memUnits(p.totalMem()), len(p.Nodes), p.efctvCPUs()))
	}
	return r
}
