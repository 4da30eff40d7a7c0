package ctld

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// The "clear" partition flags of update_part_msg_t (22.05 slurm.h).
const (
	partFlagDefaultClr  uint16 = 0x0100
	partFlagHiddenClr   uint16 = 0x0200
	partFlagNoRootClr   uint16 = 0x0400
	partFlagRootOnlyClr uint16 = 0x0800
	partFlagReqResvClr  uint16 = 0x1000
	partFlagLLNClr      uint16 = 0x2000
	partFlagExcUserClr  uint16 = 0x4000
)

// Preempt mode bits as update_part reads them.
const (
	preemptGang   uint16 = 0x8000
	preemptCancel uint16 = 0x0008
)

func partStateName(up uint16) string {
	switch up {
	case msg.PartitionDown:
		return "DOWN"
	case msg.PartitionDrain:
		return "DRAIN"
	case msg.PartitionInactive:
		return "INACTIVE"
	}
	return "UP"
}

// rpcUpdatePartition is _slurm_rpc_update_partition: REQUEST_UPDATE_PARTITION
// and REQUEST_CREATE_PARTITION, root/SlurmUser only.
func (c *Controller) rpcUpdatePartition(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.UpdatePartitionRequest](r.Body)
	rc := 0
	if !c.Config().SuperUser(r.Identity.UID) {
		rc = slurmerr.ESLURM_USER_ID_MISSING
		c.log.Error(fmt.Sprintf("Security violation, UPDATE_PARTITION RPC from uid=%d", r.Identity.UID))
	} else {
		rc = c.UpdatePartition(req, r.Header.MsgType == msgtype.REQUEST_CREATE_PARTITION)
	}
	if rc != 0 {
		c.log.Info(fmt.Sprintf("_slurm_rpc_update_partition partition=%s: %s", nullText(req.Name), slurmerr.Message(rc)))
		return server.RC(rc)
	}
	c.log.Debug(fmt.Sprintf("_slurm_rpc_update_partition complete for %s", req.Name.Value))
	c.kickScheduler()
	return server.RC(0)
}

// rpcDeletePartition is _slurm_rpc_delete_partition.
func (c *Controller) rpcDeletePartition(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.DeletePartitionRequest](r.Body)
	rc := 0
	if !c.Config().SuperUser(r.Identity.UID) {
		rc = slurmerr.ESLURM_USER_ID_MISSING
		c.log.Error(fmt.Sprintf("Security violation, DELETE_PARTITION RPC from uid=%d", r.Identity.UID))
	} else {
		rc = c.DeletePartition(req.Name.Value)
	}
	if rc != 0 {
		c.log.Info(fmt.Sprintf("_slurm_rpc_delete_partition partition=%s: %s", nullText(req.Name), slurmerr.Message(rc)))
		return server.RC(rc)
	}
	c.log.Info(fmt.Sprintf("_slurm_rpc_delete_partition complete for %s", req.Name.Value))
	c.kickScheduler()
	return server.RC(0)
}

func nullText(s msg.NullString) string {
	if !s.Valid {
		return "(null)"
	}
	return s.Value
}

// UpdatePartition is update_part: it creates (create) or changes a
// partition and returns Slurm's error code. As in 22.05 the changes are
// applied in order, so an error late in the request (an unknown node in
// Nodes=) leaves the earlier ones in force.
func (c *Controller) UpdatePartition(req *msg.UpdatePartitionRequest, create bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updatePart(req, create)
}

func (c *Controller) findPart(name string) *Partition {
	for _, p := range c.parts {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// newPartRecord is create_part_record's defaults.
func (c *Controller) newPartRecord(name string) *Partition {
	cp := &conf.Partition{Name: name, DefaultTime: conf.NoVal32, MaxCPUsPerNode: conf.Infinite32,
		MaxNodes: conf.Infinite32, MinNodes: 1, MaxShare: 1, OverSubscribe: "NO", MaxTime: conf.Infinite32,
		OverTimeLimit: conf.NoVal16, PriorityJobFactor: 1, PriorityTier: 1, ResumeTimeout: conf.NoVal16,
		State: "UP", SuspendTime: conf.NoVal32, SuspendTimeout: conf.NoVal16}
	p := &Partition{Name: name, Conf: cp, StateUp: msg.PartitionUp}
	if c.cfg.Conf.DisableRootJobs {
		p.Flags |= msg.PartFlagNoRoot
	}
	return p
}

func (c *Controller) updatePart(req *msg.UpdatePartitionRequest, create bool) int {
	if !req.Name.Valid {
		c.log.Info("update_part: invalid partition name, NULL")
		return slurmerr.ESLURM_INVALID_PARTITION_NAME
	}
	name := req.Name.Value
	p := c.findPart(name)
	if create {
		if p != nil {
			c.log.Debug(fmt.Sprintf("update_part: Duplicate partition name for create (%s)", name))
			return slurmerr.ESLURM_INVALID_PARTITION_NAME
		}
		c.log.Info(fmt.Sprintf("update_part: partition %s being created", name))
		p = c.newPartRecord(name)
		c.parts = append(c.parts, p)
	} else if p == nil {
		c.log.Debug(fmt.Sprintf("update_part: Update for partition not found (%s)", name))
		return slurmerr.ESLURM_INVALID_PARTITION_NAME
	}
	now := c.now().Unix()
	c.lastPartUpdate = now
	defer func() { p.sched = nil }()
	cp := p.Conf
	info := func(format string, args ...any) {
		c.log.Info("update_part: " + fmt.Sprintf(format, args...) + " for partition " + name)
	}

	if req.BillingWeightsStr.Valid {
		if !validBillingWeights(req.BillingWeightsStr.Value) {
			if create {
				c.parts = c.parts[:len(c.parts)-1]
			}
			return slurmerr.ESLURM_INVALID_TRES_BILLING_WEIGHTS
		}
		cp.TRESBillingWeights = req.BillingWeightsStr.Value
	}
	if req.CPUBind != 0 {
		info("setting CpuBind to %#x", req.CPUBind)
		cp.CpuBindFlags = req.CPUBind
		if req.CPUBind == conf.CPUBindOff {
			cp.CpuBindFlags = 0
		}
	}
	if req.MaxCPUsPerNode != noVal {
		info("setting MaxCPUsPerNode to %d", req.MaxCPUsPerNode)
		cp.MaxCPUsPerNode = req.MaxCPUsPerNode
	}
	if req.MaxTime != noVal {
		info("setting max_time to %d", req.MaxTime)
		cp.MaxTime = conf.Minutes(req.MaxTime)
	}
	if req.DefaultTime != noVal {
		if req.DefaultTime > uint32(cp.MaxTime) {
			c.log.Info("update_part: DefaultTime would exceed MaxTime for partition " + name)
		} else {
			info("setting default_time to %d", req.DefaultTime)
			cp.DefaultTime = conf.Minutes(req.DefaultTime)
		}
	}
	if req.MaxNodes != noVal {
		info("setting max_nodes to %d", req.MaxNodes)
		cp.MaxNodes = req.MaxNodes
	}
	if req.MinNodes != noVal {
		info("setting min_nodes to %d", req.MinNodes)
		cp.MinNodes = req.MinNodes
	}
	if req.GraceTime != noVal {
		info("setting grace_time to %d", req.GraceTime)
		cp.GraceTime = conf.Seconds(req.GraceTime)
	}
	for _, f := range []struct {
		set, clr uint16
		what     string
	}{
		{msg.PartFlagHidden, partFlagHiddenClr, "hidden"},
		{msg.PartFlagReqResv, partFlagReqResvClr, "req_resv"},
		{msg.PartFlagRootOnly, partFlagRootOnlyClr, "root_only"},
		{msg.PartFlagNoRoot, partFlagNoRootClr, "no_root"},
		{msg.PartFlagExclusiveUser, partFlagExcUserClr, "exclusive_user"},
	} {
		switch {
		case req.Flags&f.set != 0:
			info("setting %s", f.what)
			p.Flags |= f.set
		case req.Flags&f.clr != 0:
			info("clearing %s", f.what)
			p.Flags &^= f.set
		}
	}
	switch {
	case req.Flags&msg.PartFlagDefault != 0:
		for _, o := range c.parts {
			if o != p && o.Flags&msg.PartFlagDefault != 0 {
				c.log.Info(fmt.Sprintf("update_part: changing default partition from %s to %s", o.Name, name))
				o.Flags &^= msg.PartFlagDefault
				o.sched = nil
			}
		}
		p.Flags |= msg.PartFlagDefault
	case req.Flags&partFlagDefaultClr != 0 && p.Flags&msg.PartFlagDefault != 0:
		c.log.Info("update_part: clearing default partition from " + name)
		p.Flags &^= msg.PartFlagDefault
	}
	switch {
	case req.Flags&msg.PartFlagLLN != 0:
		info("setting LLN")
		p.Flags |= msg.PartFlagLLN
	case req.Flags&partFlagLLNClr != 0:
		info("clearing LLN")
		p.Flags &^= msg.PartFlagLLN
	}
	if req.StateUp != noVal16 {
		info("setting state_up to %d", req.StateUp)
		p.StateUp = req.StateUp
	}
	if req.MaxShare != noVal16 {
		force := req.MaxShare&sharedForce != 0
		val := req.MaxShare &^ sharedForce
		switch {
		case val == 0:
			cp.OverSubscribe = "EXCLUSIVE"
		case force:
			cp.OverSubscribe = "FORCE"
		case val == 1:
			cp.OverSubscribe = "NO"
		default:
			cp.OverSubscribe = "YES"
		}
		info("setting share to %s:%d", cp.OverSubscribe, val)
		cp.MaxShare = val
	}
	if req.OverTimeLimit != noVal16 {
		info("setting OverTimeLimit to %d", req.OverTimeLimit)
		cp.OverTimeLimit = conf.Minutes(req.OverTimeLimit)
	}
	if req.PreemptMode != noVal16 {
		mode := req.PreemptMode &^ preemptGang
		if mode <= preemptCancel {
			info("setting preempt_mode to %d", mode)
			cp.PreemptMode = preemptModeList(mode)
		} else {
			c.log.Info(fmt.Sprintf("update_part: invalid preempt_mode %d", mode))
		}
	}
	if req.PriorityTier != noVal16 {
		info("setting PriorityTier to %d", req.PriorityTier)
		cp.PriorityTier = req.PriorityTier
	}
	if req.PriorityJobFactor != noVal16 {
		info("setting PriorityJobFactor to %d", req.PriorityJobFactor)
		cp.PriorityJobFactor = req.PriorityJobFactor
	}
	if req.AllowAccounts.Valid {
		cp.AllowAccounts = allOrList(req.AllowAccounts.Value)
		info("setting AllowAccounts to %s", orAll(cp.AllowAccounts))
	}
	if req.AllowGroups.Valid {
		cp.AllowGroups = allOrList(req.AllowGroups.Value)
		info("setting allow_groups to %s", orAll(cp.AllowGroups))
	}
	if req.AllowQOS.Valid {
		cp.AllowQos = allOrList(req.AllowQOS.Value)
		info("setting AllowQOS to %s", orAll(cp.AllowQos))
	}
	if req.QOSChar.Valid {
		// Without accounting every QOS name is accepted, as 22.05's
		// assoc_mgr does when QOS are not enforced.
		cp.QOS = req.QOSChar.Value
		info("changing partition QOS to %s", cp.QOS)
	}
	if req.AllowAllocNodes.Valid {
		cp.AllocNodes = allOrList(req.AllowAllocNodes.Value)
		info("setting allow_alloc_nodes to %s", orAll(cp.AllocNodes))
	}
	if req.Alternate.Valid {
		cp.Alternate = req.Alternate.Value
		if strings.EqualFold(cp.Alternate, "NONE") {
			cp.Alternate = ""
		}
		info("setting alternate to %s", cp.Alternate)
	}
	if req.DefMemPerCPU != noVal64 {
		cp.DefMemPerCPU, cp.DefMemPerNode = 0, 0
		if req.DefMemPerCPU&memPerCPU != 0 {
			cp.DefMemPerCPU = conf.MB(req.DefMemPerCPU &^ memPerCPU)
		} else {
			cp.DefMemPerNode = conf.MB(req.DefMemPerCPU)
		}
		info("setting DefMem to %d", req.DefMemPerCPU&^memPerCPU)
	}
	if req.DenyAccounts.Valid {
		cp.DenyAccounts = listOrNil(req.DenyAccounts.Value)
		info("setting DenyAccounts to %s", req.DenyAccounts.Value)
	}
	if req.AllowAccounts.Valid && req.DenyAccounts.Valid {
		c.log.Error("update_part: Both AllowAccounts and DenyAccounts are defined, DenyAccounts will be ignored")
	}
	if req.DenyQOS.Valid {
		cp.DenyQos = listOrNil(req.DenyQOS.Value)
		info("setting DenyQOS to %s", req.DenyQOS.Value)
	}
	if req.MaxMemPerCPU != noVal64 {
		cp.MaxMemPerCPU, cp.MaxMemPerNode = 0, 0
		if req.MaxMemPerCPU&memPerCPU != 0 {
			cp.MaxMemPerCPU = conf.MB(req.MaxMemPerCPU &^ memPerCPU)
		} else {
			cp.MaxMemPerNode = conf.MB(req.MaxMemPerCPU)
		}
		info("setting MaxMem to %d", req.MaxMemPerCPU&^memPerCPU)
	}
	rc := 0
	if req.JobDefaultsStr.Valid {
		cpuPerGPU, memPerGPU, ok := parseJobDefaults(req.JobDefaultsStr.Value)
		if !ok {
			c.log.Error(fmt.Sprintf("update_part: Invalid JobDefaults(%s) given", req.JobDefaultsStr.Value))
			rc = slurmerr.ESLURM_INVALID_JOB_DEFAULTS
		} else {
			cp.DefCPUPerGPU, cp.DefMemPerGPU = cpuPerGPU, conf.MB(memPerGPU)
		}
	}
	if req.Nodes.Valid {
		rc = c.setPartNodes(p, req.Nodes.Value)
	}
	return rc
}

// setPartNodes is update_part's Nodes= (build_part_bitmap): the known
// nodes become the members; an unknown name is ESLURM_INVALID_NODE_NAME
// and, as in 22.05, the Nodes= string reported stays the old one while
// the members already changed.
func (c *Controller) setPartNodes(p *Partition, spec string) int {
	old := p.nodesString()
	spec = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' {
			return ','
		}
		return r
	}, spec)
	var names []string
	switch {
	case spec == "":
	case strings.EqualFold(spec, "ALL"):
		for _, n := range c.nodes {
			names = append(names, n.Name)
		}
	default:
		for _, tok := range splitTop(spec) {
			if ns := c.nodeSet(tok); ns != nil {
				names = append(names, ns...)
				continue
			}
			more, err := hostlist.Expand(tok)
			if err != nil {
				return slurmerr.ESLURM_INVALID_NODE_NAME
			}
			names = append(names, more...)
		}
	}
	in := map[string]bool{}
	rc := 0
	for _, name := range names {
		if c.nodeIndex[name] == nil {
			c.log.Info(fmt.Sprintf("build_part_bitmap: invalid node name %s in partition", name))
			rc = slurmerr.ESLURM_INVALID_NODE_NAME
			continue
		}
		in[name] = true
	}
	if len(names) == 0 {
		c.log.Info("build_part_bitmap: No nodes in partition " + p.Name)
	}
	p.Nodes = p.Nodes[:0:0]
	for _, n := range c.nodes {
		if in[n.Name] {
			p.Nodes = append(p.Nodes, n)
		}
	}
	p.Conf.Nodes = spec
	p.keepShown, p.shownNodes = rc != 0, old
	if rc == 0 {
		c.log.Info(fmt.Sprintf("update_part: setting nodes to %s for partition %s", p.NodeList(), p.Name))
	}
	c.relinkPartitions()
	// A node's power saving times come from its partitions.
	setPowerTimeouts(c.cfg.Conf, c.nodes, c.parts)
	c.lastNodeUpdate = c.now().Unix()
	return rc
}

// nodeSet expands a NodeSet name (its Nodes= list), or returns nil.
func (c *Controller) nodeSet(name string) []string {
	for _, ns := range c.cfg.Conf.NodeSets {
		if ns.Name == name && ns.Nodes != "" {
			names, err := hostlist.Expand(ns.Nodes)
			if err == nil {
				return names
			}
		}
	}
	return nil
}

// relinkPartitions rebuilds every node's partition list from the
// partitions' members.
func (c *Controller) relinkPartitions() {
	for _, n := range c.nodes {
		n.Partitions = nil
	}
	for _, p := range c.parts {
		for _, n := range p.Nodes {
			n.Partitions = append(n.Partitions, p.Name)
		}
	}
}

// DeletePartition is delete_partition: refused while a job that is not
// finished uses the partition (ESLURM_PARTITION_IN_USE).
func (c *Controller) DeletePartition(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := -1
	for i, p := range c.parts {
		if p.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		return slurmerr.ESLURM_INVALID_PARTITION_NAME
	}
	if c.partitionInUse(name) {
		return slurmerr.ESLURM_PARTITION_IN_USE
	}
	if c.parts[idx].Flags&msg.PartFlagDefault != 0 {
		c.log.Error("Deleting default partition " + name)
	}
	c.parts = append(c.parts[:idx:idx], c.parts[idx+1:]...)
	c.relinkPartitions()
	now := c.now().Unix()
	c.lastPartUpdate, c.lastNodeUpdate = now, now
	return 0
}

// partitionInUse is partition_in_use: a job not finished whose partition
// (the one it runs in, or the first it asked for) is name.
func (c *Controller) partitionInUse(name string) bool {
	if c.jobs == nil {
		return false
	}
	for _, j := range c.jobs.m.Jobs() {
		if j.Finished() {
			continue
		}
		part := j.Partition
		if part == "" && len(j.Partitions) > 0 {
			part = j.Partitions[0]
		}
		if part == name {
			return true
		}
	}
	return false
}

func allOrList(s string) conf.List {
	if s == "" || strings.EqualFold(s, "ALL") {
		return nil
	}
	return conf.List(strings.Split(s, ","))
}

func listOrNil(s string) conf.List {
	if s == "" {
		return nil
	}
	return conf.List(strings.Split(s, ","))
}

func orAll(l conf.List) string {
	if len(l) == 0 {
		return "ALL"
	}
	return strings.Join(l, ",")
}

// splitTop splits a node specification on the commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				if i > start {
					out = append(out, s[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func preemptModeList(mode uint16) conf.List {
	if mode == 0 {
		return conf.List{"OFF"}
	}
	var l conf.List
	for _, m := range []struct {
		bit  uint16
		name string
	}{{0x0001, "SUSPEND"}, {0x0002, "REQUEUE"}, {0x0008, "CANCEL"}} {
		if mode&m.bit != 0 {
			l = append(l, m.name)
		}
	}
	return l
}

// validBillingWeights checks TRESBillingWeights: "" or TYPE[/NAME]=number
// items, the number optionally with a K/M/G/T/P unit.
func validBillingWeights(s string) bool {
	if s == "" {
		return true
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" || v == "" {
			return false
		}
		v = strings.TrimRight(v, "KMGTPkmgtp")
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return true
}

// parseJobDefaults reads JobDefaults= (DefCpuPerGPU=n,DefMemPerGPU=n).
func parseJobDefaults(s string) (cpu, mem uint64, ok bool) {
	if s == "" {
		return 0, 0, true
	}
	for _, item := range strings.Split(s, ",") {
		k, v, found := strings.Cut(item, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !found || err != nil {
			return 0, 0, false
		}
		switch strings.ToLower(k) {
		case "defcpupergpu":
			cpu = n
		case "defmempergpu":
			mem = n
		default:
			return 0, 0, false
		}
	}
	return cpu, mem, true
}
