package main

import (
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// rec is one output line (sinfo_data_t): a partition and the nodes of it
// that share every printed attribute.
type rec struct {
	part    *msg.Partition // nil for -R lines merged across partitions
	partInx int

	nodeState                         uint32
	nodesAlloc, nodesIdle, nodesOther uint32
	nodesTotal                        uint32
	cpusAlloc, cpusIdle, cpusOther    uint32
	cpusTotal                         uint32
	minCPUs, maxCPUs                  uint32
	minSockets, maxSockets            uint16
	minCores, maxCores                uint16
	minThreads, maxThreads            uint16
	minDisk, maxDisk                  uint32
	minMem, maxMem                    uint64
	minWeight, maxWeight              uint32
	minCPULoad, maxCPULoad            uint32
	minFreeMem, maxFreeMem            uint64
	maxCPUsPerNode                    uint32
	port                              uint16
	allocMem                          uint64
	features, featuresAct, gres       sc.Str
	gresUsed, comment, extra, reason  sc.Str
	version                           sc.Str
	reasonTime                        int64
	reasonUID                         uint32
	nodes, nodeAddr, hostnames        *hostlist.Hostlist
}

func str(s msg.NullString) sc.Str {
	if !s.Valid {
		return sc.NullStr
	}
	return sc.S(s.Value)
}

func newRec(p *msg.Partition, inx int) *rec {
	n := sc.NullStr
	return &rec{part: p, partInx: inx, nodes: hostlist.New(), nodeAddr: hostlist.New(), hostnames: hostlist.New(),
		features: n, featuresAct: n, gres: n, gresUsed: n, comment: n, extra: n, reason: n, version: n}
}

func (s *sinfo) inPartList(name sc.Str) bool {
	for _, p := range s.partList {
		if !name.Null && p == name.V {
			return true
		}
	}
	return false
}

// buildSinfoData is _build_sinfo_data.
func (s *sinfo) buildSinfoData(parts []msg.Partition, nodes []msg.Node) []*rec {
	var recs []*rec
	if !s.nodeFlag && s.match.partition {
		for j := range parts {
			if !s.hasParts || s.inPartList(str(parts[j].Name)) {
				recs = append(recs, newRec(&parts[j], j))
			}
		}
	}
	if s.filtering {
		for j := range nodes {
			if nodes[j].Name.Valid && s.filterOut(&nodes[j]) {
				nodes[j].Name = msg.NullString{}
			}
		}
	}
	for j := range parts {
		p := &parts[j]
		if s.filtering && s.hasParts && !s.inPartList(str(p.Name)) {
			continue
		}
		if len(nodes) == 1 {
			n := &nodes[0]
			if !n.Name.Valid || !p.Nodes.Valid {
				continue
			}
			hl, err := hostlist.Parse(p.Nodes.Value)
			if err != nil || hl.Find(n.Name.Value) < 0 {
				continue
			}
			recs = s.insertNode(recs, p, j, n)
			continue
		}
		inx, err := p.NodeInx.Bits()
		if err != nil {
			continue
		}
		for _, i := range inx {
			if i >= len(nodes) {
				break
			}
			n := &nodes[i]
			if !n.Name.Valid {
				continue
			}
			recs = s.insertNode(recs, p, j, n)
		}
	}
	for _, r := range recs {
		r.nodes.Sort()
	}
	return recs
}

func (s *sinfo) insertNode(recs []*rec, p *msg.Partition, inx int, n *msg.Node) []*rec {
	for _, r := range recs {
		if !s.matchPart(r, p) {
			continue
		}
		if r.nodesTotal != 0 && !s.matchNode(r, n) {
			continue
		}
		s.update(r, n)
		return recs
	}
	r := newRec(p, inx)
	s.update(r, n)
	return append(recs, r)
}

func (s *sinfo) filterOut(n *msg.Node) bool {
	if s.hasNodes {
		hl, err := hostlist.Parse(s.nodes)
		if err != nil || hl.Find(n.Name.Value) < 0 {
			return true
		}
	}
	noResp := n.NodeState&sc.NodeStateNoRespond != 0
	if s.deadNodes && !noResp {
		return true
	}
	if s.respondingNodes && noResp {
		return true
	}
	if s.hasStates {
		match := false
		for _, st := range s.stateList {
			match = false
			switch {
			case st == sc.NodeStateDrain:
				match = n.NodeState&sc.NodeStateDrain != 0
			case isDraining(st):
				match = isDraining(n.NodeState)
			case isDrained(st):
				match = isDrained(n.NodeState)
			case st&sc.NodeStateFlags != 0:
				match = st&n.NodeState != 0
			case st == sc.NodeStateAllocated:
				match = n.SelectNodeInfo.AllocCPUs != 0
			default:
				match = n.NodeState&sc.NodeStateBase == st
			}
			if !s.stateListAnd && match {
				break
			}
			if s.stateListAnd && !match {
				break
			}
		}
		if !match {
			return true
		}
	}
	return false
}

// isDraining is IS_NODE_DRAINING: drain flag with work on the node.
func isDraining(st uint32) bool {
	base := st & sc.NodeStateBase
	return st&sc.NodeStateDrain != 0 &&
		(base == sc.NodeStateAllocated || base == sc.NodeStateMixed || st&sc.NodeStateCompleting != 0)
}

// isDrained is IS_NODE_DRAINED: drain flag on an idle node.
func isDrained(st uint32) bool {
	return st&sc.NodeStateDrain != 0 && !isDraining(st)
}

func (s *sinfo) matchPart(r *rec, p *msg.Partition) bool {
	if s.listReasons {
		return true
	}
	if r.part == p {
		return true
	}
	if r.part == nil || p == nil {
		return false
	}
	a, m := r.part, &s.match
	switch {
	case m.partition && sc.CompareStr(str(p.Name), str(a.Name)) != 0,
		m.avail && p.StateUp != a.StateUp,
		m.groups && sc.CompareStr(str(p.AllowGroups), str(a.AllowGroups)) != 0,
		m.jobSize && (p.MinNodes != a.MinNodes || p.MaxNodes != a.MaxNodes),
		m.defaultTime && p.DefaultTime != a.DefaultTime,
		m.maxTime && p.MaxTime != a.MaxTime,
		m.root && p.Flags&partFlagRootOnly != a.Flags&partFlagRootOnly,
		m.oversubscribe && p.MaxShare != a.MaxShare,
		m.preemptMode && p.PreemptMode != a.PreemptMode,
		m.priorityTier && p.PriorityTier != a.PriorityTier,
		m.priorityJobFactor && p.PriorityJobFactor != a.PriorityJobFactor,
		m.maxCPUsPerNode && p.MaxCPUsPerNode != a.MaxCPUsPerNode:
		return false
	}
	return true
}

const (
	partFlagDefault  = 0x0001
	partFlagRootOnly = 0x0008
)

func (s *sinfo) matchNode(r *rec, n *msg.Node) bool {
	m := &s.match
	if s.nodeFlag {
		return false
	}
	if m.hostnames && r.hostnames.Find(n.NodeHostname.Value) < 0 {
		return false
	}
	if m.nodeAddr && r.nodeAddr.Find(n.NodeAddr.Value) < 0 {
		return false
	}
	// Slurm tests its node hostlist pointer here, which is never NULL.
	{
		switch {
		case m.extra && sc.CompareStr(str(n.Extra), r.extra) != 0,
			m.features && sc.CompareStr(str(n.Features), r.features) != 0,
			m.featuresAct && sc.CompareStr(str(n.FeaturesAct), r.featuresAct) != 0,
			m.gres && sc.CompareStr(str(n.Gres), r.gres) != 0,
			m.gresUsed && sc.CompareStr(str(n.GresUsed), r.gresUsed) != 0,
			m.comment && sc.CompareStr(str(n.Comment), r.comment) != 0,
			m.reason && sc.CompareStr(str(n.Reason), r.reason) != 0,
			m.reasonTimestamp && n.ReasonTime != r.reasonTime,
			m.reasonUser && n.ReasonUID != r.reasonUID:
			return false
		}
	}
	if m.state && sc.NodeStateString(n.NodeState) != sc.NodeStateString(r.nodeState) {
		return false
	}
	if m.stateComplete && sc.NodeStateComplete(n.NodeState) != sc.NodeStateComplete(r.nodeState) {
		return false
	}
	if m.allocMem && n.SelectNodeInfo.AllocMemory != r.allocMem {
		return false
	}
	if !s.exact {
		return true
	}
	switch {
	case m.cpus && uint32(n.CPUs) != r.minCPUs,
		m.sockets && n.Sockets != r.minSockets,
		m.cores && n.Cores != r.minCores,
		m.threads && n.Threads != r.minThreads,
		m.sct && (n.Sockets != r.minSockets || n.Cores != r.minCores || n.Threads != r.minThreads),
		m.disk && n.TmpDisk != r.minDisk,
		m.memory && n.RealMemory != r.minMem,
		m.weight && n.Weight != r.minWeight,
		m.cpuLoad && n.CPULoad != r.minCPULoad,
		m.freeMem && n.FreeMem != r.minFreeMem,
		m.port && n.Port != r.port,
		m.version && !sameVersion(str(n.Version), r.version):
		return false
	}
	return true
}

// sameVersion compares version strings as Slurm compares their pointers:
// equal text from two nodes are distinct pointers, so only NULLs match.
func sameVersion(a, b sc.Str) bool {
	return a.Null && b.Null
}

func (s *sinfo) update(r *rec, n *msg.Node) {
	base := n.NodeState & sc.NodeStateBase
	if r.nodesTotal == 0 {
		r.nodeState = n.NodeState
		r.features, r.featuresAct = str(n.Features), str(n.FeaturesAct)
		r.gres, r.gresUsed = str(n.Gres), str(n.GresUsed)
		r.comment, r.extra, r.reason = str(n.Comment), str(n.Extra), str(n.Reason)
		r.reasonTime, r.reasonUID = n.ReasonTime, n.ReasonUID
		r.minCPUs, r.maxCPUs = uint32(n.CPUs), uint32(n.CPUs)
		r.minSockets, r.maxSockets = n.Sockets, n.Sockets
		r.minCores, r.maxCores = n.Cores, n.Cores
		r.minThreads, r.maxThreads = n.Threads, n.Threads
		r.minDisk, r.maxDisk = n.TmpDisk, n.TmpDisk
		r.minMem, r.maxMem = n.RealMemory, n.RealMemory
		r.port = n.Port
		r.minWeight, r.maxWeight = n.Weight, n.Weight
		r.minCPULoad, r.maxCPULoad = n.CPULoad, n.CPULoad
		r.minFreeMem, r.maxFreeMem = n.FreeMem, n.FreeMem
		if r.part != nil {
			r.maxCPUsPerNode = r.part.MaxCPUsPerNode
		}
		r.version = str(n.Version)
	} else if r.nodes.Find(n.Name.Value) >= 0 {
		return
	} else {
		r.minCPUs, r.maxCPUs = min(r.minCPUs, uint32(n.CPUs)), max(r.maxCPUs, uint32(n.CPUs))
		r.minSockets, r.maxSockets = min(r.minSockets, n.Sockets), max(r.maxSockets, n.Sockets)
		r.minCores, r.maxCores = min(r.minCores, n.Cores), max(r.maxCores, n.Cores)
		r.minThreads, r.maxThreads = min(r.minThreads, n.Threads), max(r.maxThreads, n.Threads)
		r.minDisk, r.maxDisk = min(r.minDisk, n.TmpDisk), max(r.maxDisk, n.TmpDisk)
		r.minMem, r.maxMem = min(r.minMem, n.RealMemory), max(r.maxMem, n.RealMemory)
		r.minWeight, r.maxWeight = min(r.minWeight, n.Weight), max(r.maxWeight, n.Weight)
		r.minCPULoad, r.maxCPULoad = min(r.minCPULoad, n.CPULoad), max(r.maxCPULoad, n.CPULoad)
		r.minFreeMem, r.maxFreeMem = min(r.minFreeMem, n.FreeMem), max(r.maxFreeMem, n.FreeMem)
	}
	if r.nodes.Find(n.Name.Value) < 0 {
		r.nodes.PushHost(n.Name.Value)
	}
	if s.match.nodeAddr && r.nodeAddr.Find(n.NodeAddr.Value) < 0 {
		r.nodeAddr.PushHost(n.NodeAddr.Value)
	}
	if s.match.hostnames && r.hostnames.Find(n.NodeHostname.Value) < 0 {
		r.hostnames.PushHost(n.NodeHostname.Value)
	}
	total := uint32(n.CPUs)
	used := uint32(n.SelectNodeInfo.AllocCPUs)
	switch {
	case base == sc.NodeStateAllocated || base == sc.NodeStateMixed || n.NodeState&sc.NodeStateCompleting != 0:
		r.nodesAlloc++
	case n.NodeState&sc.NodeStateDrain != 0 || base == sc.NodeStateDown:
		r.nodesOther++
	default:
		r.nodesIdle++
	}
	r.nodesTotal++
	r.cpusAlloc += used
	r.cpusTotal += total
	total -= used
	r.allocMem = n.SelectNodeInfo.AllocMemory
	if n.NodeState&sc.NodeStateDrain != 0 || base == sc.NodeStateDown {
		r.cpusOther += total
	} else {
		r.cpusIdle += total
	}
}

// firstNode returns the first host of the record's sorted node list.
func firstNode(hl *hostlist.Hostlist) string {
	h, _ := hl.Nth(0)
	return h
}
