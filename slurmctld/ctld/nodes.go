package ctld

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// NO_VAL and friends as Slurm packs them.
const (
	noVal   uint32 = 0xfffffffe
	noVal16 uint16 = 0xfffe
	noVal64 uint64 = 0xfffffffffffffffe
)

// Node is one node record: the configured resources (what the controller
// schedules with and reports, as 22.05 reports config_ptr's values), the
// state and what the last registration said.
type Node struct {
	Index                    int
	Name, Hostname, Addr     string
	BcastAddr                string
	Port                     uint16
	CPUs, Boards, Sockets    uint16 // Sockets: total over all boards
	Cores, Threads           uint16 // per socket, per core
	RealMemory               uint64 // MB
	TmpDisk                  uint32 // MB
	Weight                   uint32
	Features, Gres           string // available features
	FeaturesAct              string // active features (what jobs' constraints match)
	Comment, Extra           string
	CoreSpecCnt              uint16
	CPUSpecList              string
	MemSpecLimit             uint64
	CPUBind                  uint32
	CPUsEfctv                uint16
	State, NextState         uint32
	Reason                   string
	ReasonTime               int64
	ReasonUID                uint32
	Version, Arch, OS        string
	CPULoad                  uint32
	FreeMem                  uint64
	BootTime, UpTime         int64
	SlurmdStartTime          int64
	LastBusy, LastResponse   int64
	CPULoadTime, FreeMemTime int64
	Owner                    uint32
	Partitions               []string
	AllocCPUs                uint16 // set by the job manager
	AllocMem                 uint64 // MB, set by the job manager
	RunJobs, CompletingJobs  int    // set by the job manager
	ProtocolVersion          uint16

	// BootReqTime is when a reboot was sent to the node (boot_req_time):
	// registrations from a boot before it are ignored, and ResumeTimeout
	// counts from it.
	BootReqTime int64
	// resuming: the node is in 22.05's rs_node_bitmap, rebooting with
	// nextstate=resume (reboot_resuming.go). The scheduler counts it as
	// up but starts nothing on it until it is back.
	resuming bool

	// PowerSaveReqTime is when the node was set POWERING_DOWN
	// (power_save_req_time): it is POWERED_DOWN SuspendTimeout later.
	PowerSaveReqTime int64
	// psSuspendTime, psSuspendTimeout and psResumeTimeout are its power
	// saving times in seconds, the largest its partitions set or
	// slurm.conf's (setPowerTimeouts); psSuspendTime psInfinite: never.
	psSuspendTime, psSuspendTimeout, psResumeTimeout int64
	// psBooting: woken by power saving and not registered since (22.05's
	// booting_node_bitmap), so ResumeTimeout applies.
	psBooting bool

	// tresWeights is the node line's TRESWeights= (per base unit, mem
	// per MB); nil when unset, so the billing weight is the CPU count.
	tresWeights map[string]float64

	schedFeatures []string // FeaturesAct split, for the scheduler's view
	// actEmpty: the active features were set to "" (an empty string,
	// reported as such, not as NULL).
	actEmpty bool
	// specCores are the specialized cores (of CPUSpecList, from
	// slurm.conf or, for CoreSpecCount, as the node's slurmd chose them
	// at registration), which the scheduler never gives a job.
	specCores []uint16
	// gresRecs are the gres.conf records the node's slurmd registered
	// (gres.go); nil before it registered.
	gresRecs []gres.Record
}

// setFeatures sets the available and active features.
func (n *Node) setFeatures(avail, active string) {
	n.Features, n.FeaturesAct = avail, active
	n.schedFeatures = splitFeatures(active)
	n.actEmpty = false
}

// featuresActRecord is the active features as packed: NULL, or the
// string (possibly empty).
func (n *Node) featuresActRecord() msg.NullString {
	if n.actEmpty {
		return msg.Str("")
	}
	return optStr(n.FeaturesAct)
}

func splitFeatures(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Base is the node's base state (IDLE, DOWN, ...).
func (n *Node) Base() uint32 { return n.State & msg.NodeStateBase }

// Has reports whether the node has every flag in f.
func (n *Node) Has(f uint32) bool { return n.State&f == f }

// IsDown, IsIdle ... as Slurm's IS_NODE_* macros.
func (n *Node) IsDown() bool      { return n.Base() == msg.NodeStateDown }
func (n *Node) IsIdle() bool      { return n.Base() == msg.NodeStateIdle }
func (n *Node) IsUnknown() bool   { return n.Base() == msg.NodeStateUnknown }
func (n *Node) IsFuture() bool    { return n.Base() == msg.NodeStateFuture }
func (n *Node) IsDrain() bool     { return n.Has(msg.NodeStateDrain) }
func (n *Node) IsFail() bool      { return n.Has(msg.NodeStateFail) }
func (n *Node) IsNoRespond() bool { return n.Has(msg.NodeStateNoRespond) }
func (n *Node) IsAllocated() bool { return n.Base() == msg.NodeStateAllocated }

// Available reports whether jobs may be started on the node (Slurm's
// avail_node_bitmap).
func (n *Node) Available() bool {
	if n.IsDown() || n.IsDrain() || n.IsFail() || n.IsNoRespond() || n.IsFuture() || n.IsUnknown() {
		return false
	}
	return !n.Has(msg.NodeStateInvalidReg)
}

// TresFmtStr is the node's TRES as Slurm prints them ("cpu=2,mem=1000M,billing=2").
func (n *Node) TresFmtStr() string {
	return fmt.Sprintf("cpu=%d,mem=%s,billing=%d", n.CPUsEfctv, memUnits(n.RealMemory), n.CPUsEfctv)
}

// allocTres is what the jobs hold on the node as a TRES string ("cpu=2",
// "cpu=2,mem=500M"); empty when nothing is allocated.
func (n *Node) allocTres() string {
	if n.AllocCPUs == 0 && n.AllocMem == 0 {
		return ""
	}
	s := fmt.Sprintf("cpu=%d", n.AllocCPUs)
	if n.AllocMem > 0 {
		s += ",mem=" + memUnits(n.AllocMem)
	}
	return s
}

// allocWeighted is the select nodeinfo's tres_alloc_weighted: the billing
// value of what jobs hold on the node (assoc_mgr_tres_weighted over the
// allocated CPUs and memory). Without TRESWeights it is the CPU count;
// with PriorityFlags=MAX_TRES the node-level TRES count by their maximum.
// GRES are not tracked per node here, so they weigh nothing.
func (n *Node) allocWeighted(maxTRES bool) float64 {
	if n.tresWeights == nil {
		return float64(n.AllocCPUs)
	}
	cpu := float64(n.AllocCPUs) * n.tresWeights["cpu"]
	mem := float64(n.AllocMem) * n.tresWeights["mem"]
	if maxTRES {
		return max(cpu, mem)
	}
	return cpu + mem
}

// gresDrained is the node record's gres_drain: 22.05's
// gres_get_node_drain always says "N/A", and only detailed requests
// (SHOW_DETAIL, as sinfo and scontrol ask) gather it; others get NULL.
func gresDrained(showFlags uint16) msg.NullString {
	if showFlags&msg.ShowDetail == 0 {
		return msg.NullString{}
	}
	return msg.Str("N/A")
}

// memUnits renders MB the way Slurm's TRES strings do: the largest unit
// that divides exactly.
func memUnits(mb uint64) string {
	units := []string{"M", "G", "T", "P"}
	i := 0
	for mb != 0 && mb%1024 == 0 && i < len(units)-1 {
		mb /= 1024
		i++
	}
	return fmt.Sprintf("%d%s", mb, units[i])
}

// newNodes builds the node table from slurm.conf.
func newNodes(c *conf.Config, now int64, slurmUID uint32) ([]*Node, error) {
	var nodes []*Node
	for i, cn := range c.Nodes {
		nl := c.NodeLines[cn.Line]
		n := &Node{
			Index: i, Name: cn.Name, Hostname: cn.Hostname, Addr: cn.Addr,
			BcastAddr: cn.BcastAddr, Port: cn.Port,
			CPUs: nl.CPUs, Boards: nl.Boards, Sockets: nl.Sockets,
			Cores: nl.CoresPerSocket, Threads: nl.ThreadsPerCore,
			RealMemory: uint64(nl.RealMemory), TmpDisk: uint32(nl.TmpDisk),
			Weight:      nl.Weight,
			CoreSpecCnt: nl.CoreSpecCount, CPUSpecList: nl.CPUSpecList,
			MemSpecLimit: uint64(nl.MemSpecLimit), CPUBind: nl.CpuBindFlags,
			NextState: noVal, ReasonUID: noVal, Owner: noVal,
			CPULoad: noVal, FreeMem: noVal64,
		}
		feat := strings.Join(nl.Features, ",")
		n.setFeatures(feat, feat)
		if n.Port == 0 {
			n.Port = uint16(c.SlurmdPort)
		}
		if n.Hostname == "" {
			n.Hostname = n.Name
		}
		if n.Addr == "" {
			n.Addr = n.Hostname
		}
		var gres []string
		for _, g := range nl.Gres {
			s := g.Name
			if g.Type != "" {
				s += ":" + g.Type
			}
			s += fmt.Sprintf(":%d", g.Count)
			gres = append(gres, s)
		}
		n.Gres = strings.Join(gres, ",")
		if nl.TRESWeights != "" {
			w, err := priority.ParseTRESWeights(nl.TRESWeights)
			if err != nil {
				return nil, fmt.Errorf("node %s: TRESWeights: %w", n.Name, err)
			}
			n.tresWeights = w
		}
		tpc := uint16(1)
		if uint32(n.Sockets)*uint32(n.Cores) < uint32(n.CPUs) {
			tpc = n.Threads
		}
		if n.CPUSpecList != "" {
			// A CPUSpecList reserves the whole cores of its CPUs; their
			// count is the CoreSpecCount.
			n.specCores = specCoresOf(n.CPUSpecList, int(tpc), int(n.Sockets)*int(n.Cores))
			n.CoreSpecCnt = uint16(len(n.specCores))
			if tpc > 1 {
				// Shown as every CPU of those cores (CPUSpecList=1 on
				// two-thread cores is 0-1).
				n.CPUSpecList = cpuListOf(n.specCores, int(tpc))
			}
		}
		n.CPUsEfctv = n.CPUs - min(n.CoreSpecCnt*tpc, n.CPUs)
		st, err := configState(nl.State)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		n.State = st
		if nl.Reason != "" {
			n.Reason, n.ReasonTime, n.ReasonUID = nl.Reason, now, slurmUID
		}
		nodes = append(nodes, n)
	}
	// DownNodes= lines override the state and reason.
	for _, d := range c.DownNodes {
		st, err := configState(d.State)
		if err != nil {
			return nil, fmt.Errorf("DownNodes=%s: %w", d.Nodes, err)
		}
		if d.State == "" {
			st = msg.NodeStateDown
		}
		names, err := expandNodes(d.Nodes)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			i, ok := c.NodeIndex[name]
			if !ok {
				return nil, fmt.Errorf("DownNodes=%s: unknown node %s", d.Nodes, name)
			}
			nodes[i].State = st
			if d.Reason != "" {
				nodes[i].Reason, nodes[i].ReasonTime, nodes[i].ReasonUID = d.Reason, now, slurmUID
			}
		}
	}
	return nodes, nil
}

// configState reads a State= value of a NodeName or DownNodes line as
// state_str2int does: a base state's name, else a CLOUD, DRAIN or FAIL
// prefix (FAILING is FAIL, DRAINED is DRAIN), without regard to case. A
// FAIL node is IDLE+FAIL (so registering leaves it so), a DRAIN node
// UNKNOWN+DRAIN.
func configState(s string) (uint32, error) {
	u := strings.ToUpper(s)
	switch u {
	case "", "UNKNOWN":
		return msg.NodeStateUnknown, nil
	case "DOWN":
		return msg.NodeStateDown, nil
	case "IDLE":
		return msg.NodeStateIdle, nil
	case "ALLOCATED":
		return msg.NodeStateAllocated, nil
	case "ERROR":
		return msg.NodeStateError, nil
	case "MIXED":
		return msg.NodeStateMixed, nil
	case "FUTURE":
		return msg.NodeStateFuture, nil
	}
	switch {
	case strings.HasPrefix(u, "CLOUD"):
		// A cloud node starts powered down (and hidden until it is
		// resumed for a job).
		return msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweredDown, nil
	case strings.HasPrefix(u, "DRAIN"):
		return msg.NodeStateUnknown | msg.NodeStateDrain, nil
	case strings.HasPrefix(u, "FAIL"):
		return msg.NodeStateIdle | msg.NodeStateFail, nil
	}
	return 0, fmt.Errorf("invalid node state %s", s)
}

// StateString is node_state_string (the upper-case names scontrol prints),
// for log messages.
func StateString(st uint32) string {
	base := st & msg.NodeStateBase
	drain := st&msg.NodeStateDrain != 0
	compl := st&msg.NodeStateCompleting != 0
	noResp := ""
	if st&msg.NodeStateNoRespond != 0 {
		noResp = "*"
	}
	if st&msg.NodeStateInvalidReg != 0 {
		return "INVAL" + noResp
	}
	switch st {
	case msg.NodeStateRebootIssued:
		return "REBOOT_ISSUED"
	case msg.NodeStateRebootCancel:
		return "CANCEL_REBOOT"
	}
	if st&(msg.NodeStateRebootRequested|msg.NodeStateRebootIssued) != 0 &&
		base != msg.NodeStateAllocated && base != msg.NodeStateMixed {
		switch {
		case st&msg.NodeStateRebootIssued != 0:
			return "REBOOT^"
		case noResp != "":
			return "REBOOT*"
		}
		return "REBOOT"
	}
	if drain {
		if compl || base == msg.NodeStateAllocated || base == msg.NodeStateMixed {
			return "DRAINING" + noResp
		}
		return "DRAINED" + noResp
	}
	if st&msg.NodeStateFail != 0 {
		if compl || base == msg.NodeStateAllocated {
			return "FAILING" + noResp
		}
		return "FAIL" + noResp
	}
	name := map[uint32]string{
		msg.NodeStateUnknown: "UNKNOWN", msg.NodeStateDown: "DOWN", msg.NodeStateIdle: "IDLE",
		msg.NodeStateAllocated: "ALLOCATED", msg.NodeStateError: "ERROR", msg.NodeStateMixed: "MIXED",
		msg.NodeStateFuture: "FUTURE",
	}[base]
	if name == "" {
		name = "?"
	}
	if compl {
		if base == msg.NodeStateAllocated {
			return name + "+" + noResp
		}
		return "COMPLETING" + noResp
	}
	return name + noResp
}

// nodeDetail fills the parts of a node record that depend on the request
// or on the configuration beyond the node line: gres_drain (SHOW_DETAIL
// only) and the billing-weighted allocated TRES.
func (c *Controller) nodeDetail(rec *msg.Node, n *Node, showFlags uint16) {
	rec.GresDrain = gresDrained(showFlags)
	if showFlags&msg.ShowDetail != 0 {
		rec.GresUsed = optStr(c.nodeGresUsed(n))
	}
	maxTRES := c.cfg.Conf != nil && c.cfg.Conf.PriorityFlagBits&conf.PriorityMaxTRES != 0
	rec.SelectNodeInfo.TresAllocWeighted = msg.PackDouble(n.allocWeighted(maxTRES))
}

// allocCPUs is the CPUAlloc the node reports for what its jobs hold
// (select_p_select_nodeinfo_set_all): the cores of the jobs' core
// bitmaps, at most the cores not specialized, counted whole, each as its
// threads where the node's CPUs are threads. Under CR_CPU a job of one
// task holds one CPU but the node shows its core's two threads taken.
// cpus is the jobs' CPUs, cores the distinct cores their bitmaps hold,
// loose the CPUs of jobs without a core list (counted as they are). hw is
// the hardware the scheduler uses for the node: the one it had at start
// when a reconfigure changed it (real keeps its select plugin's view
// until a restart, so CPUAlloc may exceed the new CPUTot). whole: a job
// has the whole node, which takes every core of it (a --core-spec job
// given fewer cores than the node keeps for itself shows all the node's
// CPUs allocated, as real's job_res_add_job_to_res does).
func (n *Node) allocCPUs(hw nodeHW, cpus, cores, loose uint32, whole bool) uint16 {
	total := uint32(max(hw.Sockets, 1)) * uint32(max(hw.Cores, 1))
	if whole {
		cores = total
	}
	if cores == 0 {
		return uint16(min(cpus, 0xffff))
	}
	if efctv := total - min(uint32(n.CoreSpecCnt), total); cores > efctv {
		cores = efctv
	}
	alloc := cores
	if total < uint32(hw.CPUs) {
		alloc *= uint32(max(hw.Threads, 1))
	}
	return uint16(min(alloc+loose, 0xffff))
}
