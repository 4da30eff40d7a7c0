package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

func (s *state) partShowFlags() uint16 {
	if s.allFlag {
		return slurmcli.ShowAll
	}
	return 0
}

// showNodes is scontrol_print_node_list: "show node [LIST]".
func showNodes(s *state, _ []string, val *string) {
	var flags uint16
	if s.allFlag {
		flags |= slurmcli.ShowAll
	}
	if s.detailFlag {
		flags |= slurmcli.ShowDetail
	}
	if s.futureFlag {
		flags |= 0x80
	}
	nodes, err := s.ctl().LoadNodes(s.ctx(), 0, flags)
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_node error", err)
		}
		return
	}
	if s.quietFlag == -1 {
		fmt.Fprintf(s.stdout, "last_update_time=%s, records=%d\n", s.timeStr(nodes.LastUpdate), len(nodes.Nodes))
	}
	parts, err := s.ctl().LoadPartitions(s.ctx(), 0, s.partShowFlags())
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_partitions error", err)
		}
		return
	}
	nodeParts := populateNodePartitions(nodes, parts)
	if val == nil {
		s.printNode(nil, nodes, nodeParts)
		return
	}
	hl, err := hostlist.Parse(*val)
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("unable to parse node list %s\n", *val)
		}
		return
	}
	for _, h := range hl.Hosts() {
		name := h
		s.printNode(&name, nodes, nodeParts)
	}
}

// populateNodePartitions is slurm_populate_node_partitions: each node's
// partitions from the partitions' node bitmaps.
func populateNodePartitions(nodes *msg.NodeInfoResponse, parts *msg.PartitionInfoResponse) []string {
	out := make([]string, len(nodes.Nodes))
	for _, p := range parts.Partitions {
		if p.NodeInx.Null {
			continue
		}
		idx, err := p.NodeInx.Bits()
		if err != nil {
			continue
		}
		for _, i := range idx {
			if i < 0 || i >= len(out) {
				continue
			}
			if out[i] != "" {
				out[i] += ","
			}
			out[i] += p.Name.Value
		}
	}
	return out
}

func (s *state) printNode(name *string, nodes *msg.NodeInfoResponse, parts []string) {
	printed := 0
	n := len(nodes.Nodes)
	for j := 0; j < n; j++ {
		i := j
		if name != nil {
			i = (j + s.lastNodeInx) % n
			if !nodes.Nodes[i].Name.Valid || nodes.Nodes[i].Name.Value != *name {
				continue
			}
		} else if !nodes.Nodes[j].Name.Valid {
			continue
		}
		printed++
		s.stdout.WriteString(s.sprintNode(&nodes.Nodes[i], parts[i], s.oneLiner))
		if name != nil {
			s.lastNodeInx = i
			break
		}
	}
	if printed > 0 {
		return
	}
	if name != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			fmt.Fprintf(s.stdout, "Node %s not found\n", *name)
		}
	} else if s.quietFlag != 1 {
		s.stdout.WriteString("No nodes in the system\n")
	}
}

// sprintNode is slurm_sprint_node_table.
func (s *state) sprintNode(n *msg.Node, partitions string, oneLiner bool) string {
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	st := n.NodeState
	alloc := n.SelectNodeInfo.AllocCPUs
	idle := int(n.CPUsEfctv) - int(alloc)
	if idle != 0 && idle != int(n.CPUsEfctv) {
		st = st&slurmcli.NodeStateFlags | slurmcli.NodeStateMixed
	}
	p("NodeName=%s ", cs(n.Name))
	if n.Arch.Valid {
		p("Arch=%s ", n.Arch.Value)
	}
	if n.CPUBind != 0 {
		p("CpuBind=%s ", cpuBindString(n.CPUBind))
	}
	p("CoresPerSocket=%d %s", n.Cores, nl)
	p("CPUAlloc=%d CPUEfctv=%d CPUTot=%d ", alloc, n.CPUsEfctv, n.CPUs)
	if n.CPULoad == noVal {
		b.WriteString("CPULoad=N/A")
	} else {
		p("CPULoad=%.2f", float64(n.CPULoad)/100.0)
	}
	b.WriteString(nl)
	p("AvailableFeatures=%s%s", cs(n.Features), nl)
	p("ActiveFeatures=%s%s", cs(n.FeaturesAct), nl)
	p("Gres=%s%s", cs(n.Gres), nl)
	if n.GresDrain.Valid {
		p("GresDrain=%s%s", n.GresDrain.Value, nl)
	}
	if n.GresUsed.Valid {
		p("GresUsed=%s%s", n.GresUsed.Value, nl)
	}
	used := false
	if n.NodeAddr.Valid {
		p("NodeAddr=%s ", n.NodeAddr.Value)
		used = true
	}
	if n.NodeHostname.Valid {
		p("NodeHostName=%s ", n.NodeHostname.Value)
		used = true
	}
	if n.BcastAddress.Valid {
		p("BcastAddr=%s ", n.BcastAddress.Value)
		used = true
	}
	if uint32(n.Port) != s.ctl().Conf.SlurmdPort {
		p("Port=%d ", n.Port)
		used = true
	}
	if n.Version.Valid {
		p("Version=%s", n.Version.Value)
		used = true
	}
	if used {
		b.WriteString(nl)
	}
	if n.OS.Valid {
		p("OS=%s %s", n.OS.Value, nl)
	}
	p("RealMemory=%d AllocMem=%d ", n.RealMemory, n.SelectNodeInfo.AllocMemory)
	if n.FreeMem == slurmcli.NoVal64 {
		b.WriteString("FreeMem=N/A ")
	} else {
		p("FreeMem=%d ", n.FreeMem)
	}
	p("Sockets=%d Boards=%d%s", n.Sockets, n.Boards, nl)
	if n.CoreSpecCnt != 0 || n.CPUSpecList.Valid || n.MemSpecLimit != 0 {
		if n.CoreSpecCnt != 0 {
			p("CoreSpecCount=%d ", n.CoreSpecCnt)
		}
		if n.CPUSpecList.Valid {
			p("CPUSpecList=%s ", n.CPUSpecList.Value)
		}
		if n.MemSpecLimit != 0 {
			p("MemSpecLimit=%d", n.MemSpecLimit)
		}
		b.WriteString(nl)
	}
	p("State=%s ThreadsPerCore=%d TmpDisk=%d Weight=%d ", slurmcli.NodeStateComplete(st), n.Threads, n.TmpDisk, n.Weight)
	if n.Owner == noVal {
		b.WriteString("Owner=N/A ")
	} else {
		p("Owner=%s(%d) ", s.userName(n.Owner), n.Owner)
	}
	mcs := "N/A"
	if n.MCSLabel.Valid {
		mcs = n.MCSLabel.Value
	}
	p("MCS_label=%s%s", mcs, nl)
	if n.NextState != noVal && st&(slurmcli.NodeStateRebootRequested|slurmcli.NodeStateRebootIssued) != 0 {
		p("NextState=%s%s", slurmcli.NodeStateString(n.NextState), nl)
	}
	if partitions != "" {
		p("Partitions=%s %s", partitions, nl)
	}
	if n.BootTime != 0 {
		p("BootTime=%s ", s.timeStr(n.BootTime))
	} else {
		b.WriteString("BootTime=None ")
	}
	if n.SlurmdStartTime != 0 {
		p("SlurmdStartTime=%s", s.timeStr(n.SlurmdStartTime))
	} else {
		b.WriteString("SlurmdStartTime=None")
	}
	b.WriteString(nl)
	p("LastBusyTime=%s%s", s.timeStr(n.LastBusy), nl)
	p("CfgTRES=%s%s", cs(n.TresFmtStr), nl)
	p("AllocTRES=%s%s", n.SelectNodeInfo.TresAllocFmtStr.Value, nl)
	if n.PowerCapWatts == noVal {
		b.WriteString("CapWatts=n/a")
	} else {
		p("CapWatts=%d", n.PowerCapWatts)
	}
	b.WriteString(nl)
	if n.Energy.CurrentWatts == noVal {
		b.WriteString("CurrentWatts=n/s AveWatts=n/s")
	} else {
		p("CurrentWatts=%d AveWatts=%d", n.Energy.CurrentWatts, n.Energy.AveWatts)
	}
	b.WriteString(nl)
	if n.ExtSensors.ConsumedEnergy == slurmcli.NoVal64 {
		b.WriteString("ExtSensorsJoules=n/s ")
	} else {
		p("ExtSensorsJoules=%d ", n.ExtSensors.ConsumedEnergy)
	}
	if n.ExtSensors.CurrentWatts == noVal {
		b.WriteString("ExtSensorsWatts=n/s ")
	} else {
		p("ExtSensorsWatts=%d ", n.ExtSensors.CurrentWatts)
	}
	if n.ExtSensors.Temperature == noVal {
		b.WriteString("ExtSensorsTemp=n/s")
	} else {
		p("ExtSensorsTemp=%d", n.ExtSensors.Temperature)
	}
	if n.Reason.Valid && n.Reason.Value != "" {
		b.WriteString(nl)
		inx := 1
		for _, tok := range strings.Split(n.Reason.Value, "\n") {
			if tok == "" {
				continue
			}
			if inx == 1 {
				b.WriteString("Reason=")
			} else {
				b.WriteString(nl + "       ")
			}
			b.WriteString(tok)
			if inx == 1 && n.ReasonTime != 0 {
				p(" [%s@%s]", s.userName(n.ReasonUID), s.timeStr(n.ReasonTime))
			}
			inx++
		}
	}
	if n.Comment.Valid {
		p("%sComment=%s", nl, n.Comment.Value)
	}
	if n.Extra.Valid {
		p("%sExtra=%s", nl, n.Extra.Value)
	}
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// cpuBindString is slurm_sprint_cpu_bind_type for the node and partition
// CpuBind values slurm.conf can set.
func cpuBindString(t uint32) string {
	var parts []string
	for _, f := range []struct {
		bit  uint32
		name string
	}{{0x0001, "verbose"}, {0x0002, "threads"}, {0x0004, "cores"}, {0x0008, "sockets"},
		{0x0010, "ldoms"}, {0x0020, "none"}, {0x0040, "map_cpu"}, {0x0080, "mask_cpu"},
		{0x0100, "rank"}, {0x0200, "map_ldom"}, {0x0400, "mask_ldom"}, {0x0800, "rank_ldom"},
		{0x10000, "off"}} {
		if t&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "(null type)"
	}
	return strings.Join(parts, ",")
}

// showPartitions is scontrol_print_part: "show partition [NAME]".
func showPartitions(s *state, _ []string, val *string) {
	parts, err := s.ctl().LoadPartitions(s.ctx(), 0, s.partShowFlags())
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_partitions error", err)
		}
		return
	}
	if s.quietFlag == -1 {
		fmt.Fprintf(s.stdout, "last_update_time=%s, records=%d\n", s.timeStr(parts.LastUpdate), len(parts.Partitions))
	}
	printed := 0
	for i := range parts.Partitions {
		p := &parts.Partitions[i]
		if val != nil && (!p.Name.Valid || p.Name.Value != *val) {
			continue
		}
		printed++
		s.stdout.WriteString(s.sprintPartition(p, s.oneLiner))
		if val != nil {
			break
		}
	}
	if printed > 0 {
		return
	}
	if val != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			fmt.Fprintf(s.stdout, "Partition %s not found\n", *val)
		}
	} else if s.quietFlag != 1 {
		s.stdout.WriteString("No partitions in the system\n")
	}
}

// Partition flags (slurm.h).
const (
	partDefault   = 0x01
	partHidden    = 0x02
	partNoRoot    = 0x04
	partRootOnly  = 0x08
	partReqResv   = 0x10
	partLLN       = 0x20
	partExclUser  = 0x40
	sharedForce   = 0x8000
	preemptWithin = 0x4000
	preemptGang   = 0x8000
)

// sprintPartition is slurm_sprint_partition_info.
func (s *state) sprintPartition(pt *msg.Partition, oneLiner bool) string {
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	yn := func(flag uint16) string {
		if pt.Flags&flag != 0 {
			return "YES"
		}
		return "NO"
	}
	p("PartitionName=%s%s", cs(pt.Name), nl)
	if pt.AllowGroups.Value == "" {
		b.WriteString("AllowGroups=ALL")
	} else {
		p("AllowGroups=%s", pt.AllowGroups.Value)
	}
	allowDeny := func(allow, deny msg.NullString, what string) {
		if allow.Valid || !deny.Valid {
			v := allow.Value
			if v == "" {
				v = "ALL"
			}
			p(" Allow%s=%s", what, v)
		} else {
			p(" Deny%s=%s", what, deny.Value)
		}
	}
	allowDeny(pt.AllowAccounts, pt.DenyAccounts, "Accounts")
	allowDeny(pt.AllowQOS, pt.DenyQOS, "Qos")
	b.WriteString(nl)
	if !pt.AllowAllocNodes.Valid {
		b.WriteString("AllocNodes=ALL")
	} else {
		p("AllocNodes=%s", pt.AllowAllocNodes.Value)
	}
	if pt.Alternate.Valid {
		p(" Alternate=%s", pt.Alternate.Value)
	}
	p(" Default=%s", yn(partDefault))
	if pt.CPUBind != 0 {
		p(" CpuBind=%s ", cpuBindString(pt.CPUBind))
	}
	if pt.QOSChar.Valid {
		p(" QoS=%s", pt.QOSChar.Value)
	} else {
		b.WriteString(" QoS=N/A")
	}
	b.WriteString(nl)
	switch pt.DefaultTime {
	case infinite:
		b.WriteString("DefaultTime=UNLIMITED")
	case noVal:
		b.WriteString("DefaultTime=NONE")
	default:
		p("DefaultTime=%s", secs2time(int64(pt.DefaultTime)*60))
	}
	p(" DisableRootJobs=%s ExclusiveUser=%s GraceTime=%d Hidden=%s%s", yn(partNoRoot), yn(partExclUser),
		pt.GraceTime, yn(partHidden), nl)
	if pt.MaxNodes == infinite {
		b.WriteString("MaxNodes=UNLIMITED")
	} else {
		p("MaxNodes=%d", pt.MaxNodes)
	}
	if pt.MaxTime == infinite {
		b.WriteString(" MaxTime=UNLIMITED")
	} else {
		p(" MaxTime=%s", secs2time(int64(pt.MaxTime)*60))
	}
	p(" MinNodes=%d LLN=%s", pt.MinNodes, yn(partLLN))
	if pt.MaxCPUsPerNode == infinite {
		b.WriteString(" MaxCPUsPerNode=UNLIMITED")
	} else {
		p(" MaxCPUsPerNode=%d", pt.MaxCPUsPerNode)
	}
	b.WriteString(nl)
	if pt.NodeSets.Valid {
		p("NodeSets=%s%s", pt.NodeSets.Value, nl)
	}
	p("Nodes=%s%s", cs(pt.Nodes), nl)
	p("PriorityJobFactor=%d PriorityTier=%d RootOnly=%s ReqResv=%s", pt.PriorityJobFactor, pt.PriorityTier,
		yn(partRootOnly), yn(partReqResv))
	force := pt.MaxShare & sharedForce
	val := pt.MaxShare &^ sharedForce
	switch {
	case val == 0:
		b.WriteString(" OverSubscribe=EXCLUSIVE")
	case force != 0:
		p(" OverSubscribe=FORCE:%d", val)
	case val == 1:
		b.WriteString(" OverSubscribe=NO")
	default:
		p(" OverSubscribe=YES:%d", val)
	}
	b.WriteString(nl)
	switch pt.OverTimeLimit {
	case noVal16:
		b.WriteString("OverTimeLimit=NONE")
	case infinite16:
		b.WriteString("OverTimeLimit=UNLIMITED")
	default:
		p("OverTimeLimit=%d", pt.OverTimeLimit)
	}
	pm := pt.PreemptMode
	if pm == noVal16 {
		pm = s.confPreemptMode()
	}
	p(" PreemptMode=%s%s", preemptModeString(pm), nl)
	switch pt.StateUp {
	case msg.PartitionUp:
		b.WriteString("State=UP")
	case msg.PartitionDown:
		b.WriteString("State=DOWN")
	case msg.PartitionInactive:
		b.WriteString("State=INACTIVE")
	case msg.PartitionDrain:
		b.WriteString("State=DRAIN")
	default:
		b.WriteString("State=UNKNOWN")
	}
	p(" TotalCPUs=%d TotalNodes=%d SelectTypeParameters=%s%s", pt.TotalCPUs, pt.TotalNodes,
		selectTypeParamString(pt.CRType), nl)
	jd := "(null)"
	if len(pt.JobDefaults) > 0 {
		var parts []string
		for _, d := range pt.JobDefaults {
			name := fmt.Sprintf("Unknown(%d)", d.Type)
			switch d.Type {
			case 1:
				name = "DefCpuPerGPU"
			case 2:
				name = "DefMemPerGPU"
			}
			parts = append(parts, fmt.Sprintf("%s=%d", name, d.Value))
		}
		jd = strings.Join(parts, ",")
	}
	p("JobDefaults=%s%s", jd, nl)
	memLimit := func(v uint64, what string) string {
		switch {
		case v&memPerCPU != 0 && v == memPerCPU:
			return what + "PerCPU=UNLIMITED"
		case v&memPerCPU != 0:
			return fmt.Sprintf("%sPerCPU=%d", what, v&^memPerCPU)
		case v == 0:
			return what + "PerNode=UNLIMITED"
		}
		return fmt.Sprintf("%sPerNode=%d", what, v)
	}
	p("%s %s", memLimit(pt.DefMemPerCPU, "DefMem"), memLimit(pt.MaxMemPerCPU, "MaxMem"))
	p("%sTRES=%s", nl, cs(pt.TresFmtStr))
	if pt.BillingWeightsStr.Valid {
		p("%sTRESBillingWeights=%s", nl, pt.BillingWeightsStr.Value)
	}
	if pt.ResumeTimeout != noVal16 || pt.SuspendTimeout != noVal16 || pt.SuspendTime != noVal {
		b.WriteString(nl)
		t16 := func(v uint16) string {
			switch v {
			case noVal16:
				return "GLOBAL"
			case infinite16:
				return "INFINITE"
			}
			return fmt.Sprint(v)
		}
		st := "GLOBAL"
		switch pt.SuspendTime {
		case noVal:
		case infinite:
			st = "INFINITE"
		default:
			st = fmt.Sprint(int32(pt.SuspendTime))
		}
		p("ResumeTimeout=%s SuspendTimeout=%s SuspendTime=%s", t16(pt.ResumeTimeout), t16(pt.SuspendTimeout), st)
	}
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// confPreemptMode is slurm.conf's PreemptMode as preempt_mode_num reads
// it.
func (s *state) confPreemptMode() uint16 {
	var m uint16
	for _, tok := range s.ctl().Conf.PreemptMode {
		switch strings.ToLower(tok) {
		case "gang":
			m |= preemptGang
		case "within":
			m |= preemptWithin
		case "suspend":
			m |= 0x1
		case "requeue":
			m |= 0x2
		case "cancel":
			m |= 0x8
		}
	}
	return m
}

func preemptModeString(m uint16) string {
	switch m {
	case 0:
		return "OFF"
	case preemptGang:
		return "GANG"
	case preemptWithin:
		return "WITHIN"
	}
	prefix := ""
	if m&preemptGang != 0 {
		m &^= preemptGang
		prefix = "GANG,"
	} else if m&preemptWithin != 0 {
		m &^= preemptWithin
		prefix = "WITHIN,"
	}
	switch m {
	case 0x8:
		return prefix + "CANCEL"
	case 0x2:
		return prefix + "REQUEUE"
	case 0x1:
		return prefix + "SUSPEND"
	}
	return prefix + "UNKNOWN"
}

func selectTypeParamString(t uint16) string {
	var parts []string
	const cpu, socket, core, memory = 0x1, 0x2, 0x4, 0x10
	switch {
	case t&cpu != 0 && t&memory != 0:
		parts = append(parts, "CR_CPU_MEMORY")
	case t&core != 0 && t&memory != 0:
		parts = append(parts, "CR_CORE_MEMORY")
	case t&socket != 0 && t&memory != 0:
		parts = append(parts, "CR_SOCKET_MEMORY")
	case t&cpu != 0:
		parts = append(parts, "CR_CPU")
	case t&core != 0:
		parts = append(parts, "CR_CORE")
	case t&socket != 0:
		parts = append(parts, "CR_SOCKET")
	case t&memory != 0:
		parts = append(parts, "CR_MEMORY")
	}
	for _, f := range []struct {
		bit  uint16
		name string
	}{{0x20, "OTHER_CONS_RES"}, {0x800, "OTHER_CONS_TRES"}, {0x100, "CR_ONE_TASK_PER_CORE"},
		{0x1000, "CR_CORE_DEFAULT_DIST_BLOCK"}, {0x4000, "CR_LLN"}, {0x200, "CR_PACK_NODES"}} {
		if t&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "NONE"
	}
	return strings.Join(parts, ",")
}
