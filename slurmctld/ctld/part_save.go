package ctld

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// SavedPartition is a partition as it is saved for slurmctld -R: the
// fields 22.05's part_state holds (_dump_part_state). The memory limits,
// billing weights, job defaults and power-saving times are not among
// them: after -R they come from slurm.conf (or the defaults, for a
// partition created by scontrol).
type SavedPartition struct {
	Name              string `json:"name"`
	CPUBind           uint32 `json:"cpu_bind,omitempty"`
	GraceTime         uint32 `json:"grace_time,omitempty"`
	MaxTime           uint32 `json:"max_time"`
	DefaultTime       uint32 `json:"default_time"`
	MaxCPUsPerNode    uint32 `json:"max_cpus_per_node"`
	MaxNodes          uint32 `json:"max_nodes"`
	MinNodes          uint32 `json:"min_nodes"`
	Flags             uint16 `json:"flags,omitempty"`
	MaxShare          uint16 `json:"max_share"` // with the FORCE bit
	OverTimeLimit     uint16 `json:"over_time_limit"`
	PreemptMode       uint16 `json:"preempt_mode"`
	PriorityJobFactor uint16 `json:"priority_job_factor"`
	PriorityTier      uint16 `json:"priority_tier"`
	StateUp           uint16 `json:"state_up"`
	AllowAccounts     string `json:"allow_accounts,omitempty"`
	AllowGroups       string `json:"allow_groups,omitempty"`
	AllowQOS          string `json:"allow_qos,omitempty"`
	QOS               string `json:"qos,omitempty"`
	AllowAllocNodes   string `json:"allow_alloc_nodes,omitempty"`
	Alternate         string `json:"alternate,omitempty"`
	DenyAccounts      string `json:"deny_accounts,omitempty"`
	DenyQOS           string `json:"deny_qos,omitempty"`
	Nodes             string `json:"nodes,omitempty"`
}

func savePartition(p *Partition) SavedPartition {
	cp := p.Conf
	share := cp.MaxShare
	if strings.EqualFold(cp.OverSubscribe, "FORCE") {
		share |= sharedForce
	}
	pm, _ := preemptMode(cp.PreemptMode)
	return SavedPartition{
		Name: p.Name, CPUBind: cp.CpuBindFlags, GraceTime: uint32(cp.GraceTime),
		MaxTime: uint32(cp.MaxTime), DefaultTime: uint32(cp.DefaultTime),
		MaxCPUsPerNode: cp.MaxCPUsPerNode, MaxNodes: cp.MaxNodes, MinNodes: cp.MinNodes,
		Flags: p.Flags, MaxShare: share, OverTimeLimit: uint16(cp.OverTimeLimit), PreemptMode: pm,
		PriorityJobFactor: cp.PriorityJobFactor, PriorityTier: cp.PriorityTier, StateUp: p.StateUp,
		AllowAccounts: strings.Join(cp.AllowAccounts, ","), AllowGroups: strings.Join(cp.AllowGroups, ","),
		AllowQOS: strings.Join(cp.AllowQos, ","), QOS: cp.QOS,
		AllowAllocNodes: strings.Join(cp.AllocNodes, ","), Alternate: cp.Alternate,
		DenyAccounts: strings.Join(cp.DenyAccounts, ","), DenyQOS: strings.Join(cp.DenyQos, ","),
		Nodes: p.NodeList(),
	}
}

// restorePartition is load_all_part_state for one record. Called under
// the write lock.
func (c *Controller) restorePartition(s SavedPartition) {
	if s.StateUp > msg.PartitionUp {
		c.log.Error(fmt.Sprintf("Invalid data for partition %s: state_up=%d", s.Name, s.StateUp))
		return
	}
	p := c.findPart(s.Name)
	if p == nil {
		c.log.Info(fmt.Sprintf("load_all_part_state: partition %s missing from configuration file", s.Name))
		p = c.newPartRecord(s.Name)
		c.parts = append(c.parts, p)
	}
	cp := p.Conf
	cp.CpuBindFlags = s.CPUBind
	p.Flags = s.Flags&^msg.PartFlagDefault | p.Flags&msg.PartFlagDefault
	if s.Flags&msg.PartFlagDefault != 0 {
		for _, o := range c.parts {
			if o != p {
				o.Flags &^= msg.PartFlagDefault
				o.sched = nil
			}
		}
		p.Flags |= msg.PartFlagDefault
	}
	cp.MaxTime, cp.DefaultTime = conf.Minutes(s.MaxTime), conf.Minutes(s.DefaultTime)
	cp.MaxCPUsPerNode, cp.MaxNodes, cp.MinNodes = s.MaxCPUsPerNode, s.MaxNodes, s.MinNodes
	val := s.MaxShare &^ sharedForce
	switch {
	case val == 0:
		cp.OverSubscribe = "EXCLUSIVE"
	case s.MaxShare&sharedForce != 0:
		cp.OverSubscribe = "FORCE"
	case val == 1:
		cp.OverSubscribe = "NO"
	default:
		cp.OverSubscribe = "YES"
	}
	cp.MaxShare = val
	cp.GraceTime = conf.Seconds(s.GraceTime)
	cp.OverTimeLimit = conf.Minutes(s.OverTimeLimit)
	if s.PreemptMode != noVal16 {
		cp.PreemptMode = preemptModeList(s.PreemptMode)
	}
	cp.PriorityJobFactor, cp.PriorityTier = s.PriorityJobFactor, s.PriorityTier
	p.StateUp = s.StateUp
	cp.AllowAccounts, cp.AllowGroups = listOrNil(s.AllowAccounts), listOrNil(s.AllowGroups)
	cp.AllowQos, cp.AllocNodes = listOrNil(s.AllowQOS), listOrNil(s.AllowAllocNodes)
	if s.QOS != "" {
		cp.QOS = s.QOS
	}
	cp.Alternate = s.Alternate
	cp.DenyAccounts, cp.DenyQos = listOrNil(s.DenyAccounts), listOrNil(s.DenyQOS)
	p.Nodes = p.Nodes[:0:0]
	p.keepShown = false
	if s.Nodes != "" {
		names, err := expandNodeSpec(s.Nodes)
		if err != nil {
			c.log.Error(fmt.Sprintf("partition %s: invalid saved Nodes=%s", s.Name, s.Nodes))
		}
		in := map[string]bool{}
		for _, name := range names {
			in[name] = true
		}
		for _, n := range c.nodes {
			if in[n.Name] {
				p.Nodes = append(p.Nodes, n)
			}
		}
	}
	cp.Nodes = s.Nodes
	p.sched = nil
}
