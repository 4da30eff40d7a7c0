package conf

import (
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// Partition is one PartitionName= line with PartitionName=DEFAULT merged in
// and 22.05's defaults applied.
type Partition struct {
	Pos  Pos
	Name string
	// Nodes is the Nodes= value as written (blanks turned into commas);
	// NodeNames is its resolution (ALL, NodeSet names, hostlists) against
	// the node table, in configuration order without duplicates.
	Nodes     string
	NodeNames []string
	NodeSets  []string // NodeSet names referenced by Nodes

	AllocNodes    List // empty = ALL
	AllowAccounts List // empty = ALL (lower-cased)
	AllowGroups   List // empty = ALL
	AllowQos      List // empty = ALL (lower-cased)
	DenyAccounts  List
	DenyQos       List
	Alternate     string
	CpuBind       string // "" when absent or invalid (logged, ignored)
	CpuBindFlags  uint32 // CPUBind* bits
	Default       bool
	// DefaultTime is NoVal32 when not set (jobs then get MaxTime).
	DefaultTime     Minutes
	MaxTime         Minutes // Infinite32 = UNLIMITED
	DefCPUPerGPU    uint64
	DefMemPerGPU    MB
	DefMemPerCPU    MB
	DefMemPerNode   MB
	MaxMemPerCPU    MB
	MaxMemPerNode   MB
	DisableRootJobs *bool // nil = use the global DisableRootJobs
	ExclusiveUser   bool
	Hidden          bool
	LLN             bool
	RootOnly        bool
	ReqResv         bool
	GraceTime       Seconds
	MaxCPUsPerNode  uint32 // Infinite32 = UNLIMITED
	MaxNodes        uint32 // Infinite32 = UNLIMITED
	MinNodes        uint32
	// OverSubscribe is NO, EXCLUSIVE, YES or FORCE; MaxShare is the job
	// count per resource (YES:n / FORCE:n; 4 by default, 1 for NO, 0 for
	// EXCLUSIVE).
	OverSubscribe string
	MaxShare      uint16
	// OverTimeLimit is NoVal16 when not set (the global value applies).
	OverTimeLimit        Minutes
	PreemptMode          List // empty = global PreemptMode
	PriorityJobFactor    uint16
	PriorityTier         uint16
	QOS                  string
	ResumeTimeout        Seconds // NoVal16 = global
	SelectTypeParameters string
	State                string  // UP, DOWN, DRAIN, INACTIVE
	SuspendTime          Seconds // NoVal32 = global
	SuspendTimeout       Seconds // NoVal16 = global
	TRESBillingWeights   string
}

func lowerList(s string) List {
	l := splitList(strings.ToLower(s))
	if len(l) == 1 && l[0] == "all" {
		return nil
	}
	return l
}

func allOrList(s string) List {
	if strings.EqualFold(s, "ALL") {
		return nil
	}
	return splitList(s)
}

// makePartition mirrors 22.05's PartitionName handling; ok is false when
// Slurm rejects the line.
func (p *parser) makePartition(r partRec) (*Partition, bool) {
	tbl, dflt := r.tbl, r.dflt
	pt := &Partition{Pos: r.pos, Name: r.name, DefaultTime: NoVal32, MaxCPUsPerNode: Infinite32,
		MaxNodes: Infinite32, MaxShare: 1, OverSubscribe: "NO", MaxTime: Infinite32, OverTimeLimit: NoVal16,
		PriorityJobFactor: 1, PriorityTier: 1, ResumeTimeout: NoVal16, State: "UP",
		SuspendTime: NoVal32, SuspendTimeout: NoVal16}
	errf := func(format string, args ...any) { p.d.errorf(r.pos, format, args...) }
	warnf := func(format string, args ...any) { p.d.warnf(r.pos, format, args...) }
	ok := true

	if v, has := lookup(tbl, dflt, "AllowAccounts"); has {
		pt.AllowAccounts = lowerList(v)
	}
	if v, has := lookup(tbl, dflt, "AllowGroups"); has {
		pt.AllowGroups = allOrList(v)
	}
	if v, has := lookup(tbl, dflt, "AllowQos"); has {
		pt.AllowQos = lowerList(v)
	}
	if v, has := lookup(tbl, dflt, "DenyAccounts"); has {
		if pt.AllowAccounts != nil {
			warnf("Both AllowAccounts and DenyAccounts are defined, DenyAccounts will be ignored")
		} else {
			pt.DenyAccounts = splitList(strings.ToLower(v))
		}
	}
	if v, has := lookup(tbl, dflt, "DenyQos"); has {
		if pt.AllowQos != nil {
			warnf("Both AllowQos and DenyQos are defined, DenyQos will be ignored")
		} else {
			pt.DenyQos = splitList(strings.ToLower(v))
		}
	}
	if v, has := tbl.get("AllocNodes"); has {
		pt.AllocNodes = splitList(v)
	} else if v, has := dflt.get("AllocNodes"); has {
		pt.AllocNodes = allOrList(v)
	}
	pt.Alternate, _ = lookup(tbl, dflt, "Alternate")
	pt.CpuBind, _ = lookup(tbl, dflt, "CpuBind")
	if f, good := ParseCPUBind(pt.CpuBind); good {
		pt.CpuBindFlags = f
	} else {
		warnf("Partition=%s CpuBind='%s' is invalid, ignored", pt.Name, pt.CpuBind)
		pt.CpuBind = ""
	}
	pt.TRESBillingWeights, _ = lookup(tbl, dflt, "TRESBillingWeights")
	if v, has := lookup(tbl, dflt, "Default"); has {
		pt.Default, _ = ParseBool("Default", v)
	}
	if v, has := u32of(tbl, dflt, "MaxCPUsPerNode"); has {
		pt.MaxCPUsPerNode = v
	}
	if v, has := u64of(tbl, dflt, "DefCPUPerGPU"); has {
		pt.DefCPUPerGPU = v
	}
	if v, has := u64of(tbl, dflt, "DefMemPerGPU"); has {
		pt.DefMemPerGPU = MB(v)
	}
	if v, has := u64of(tbl, dflt, "DefMemPerNode"); has {
		pt.DefMemPerNode = MB(v)
		if _, both := lookup(tbl, dflt, "DefMemPerCPU"); both {
			warnf("DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode")
		}
	} else if v, has := u64of(tbl, dflt, "DefMemPerCPU"); has {
		pt.DefMemPerCPU = MB(v)
	}
	if v, has := u64of(tbl, dflt, "MaxMemPerNode"); has {
		pt.MaxMemPerNode = MB(v)
		if _, both := lookup(tbl, dflt, "MaxMemPerCPU"); both {
			warnf("MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode")
		}
	} else if v, has := u64of(tbl, dflt, "MaxMemPerCPU"); has {
		pt.MaxMemPerCPU = MB(v)
	}
	// DisableRootJobs and ExclusiveUser are not taken from DEFAULT.
	if v, has := tbl.get("DisableRootJobs"); has {
		b, _ := ParseBool("DisableRootJobs", v)
		pt.DisableRootJobs = &b
	}
	if v, has := tbl.get("ExclusiveUser"); has {
		pt.ExclusiveUser, _ = ParseBool("ExclusiveUser", v)
	}
	if v, has := lookup(tbl, dflt, "Hidden"); has {
		pt.Hidden, _ = ParseBool("Hidden", v)
	}
	if v, has := lookup(tbl, dflt, "MaxTime"); has {
		m, good := ParseTimeMins(v)
		if !good {
			errf("Bad value \"%s\" for MaxTime", v)
			ok = false
		}
		pt.MaxTime = Minutes(m)
	}
	if v, has := u32of(tbl, dflt, "GraceTime"); has {
		pt.GraceTime = Seconds(v)
	}
	if v, has := lookup(tbl, dflt, "DefaultTime"); has {
		m, good := ParseTimeMins(v)
		if !good {
			errf("Bad value \"%s\" for DefaultTime", v)
			ok = false
		}
		pt.DefaultTime = Minutes(m)
	}
	if v, has := u32of(tbl, dflt, "MaxNodes"); has {
		pt.MaxNodes = v
	}
	if v, has := u32of(tbl, dflt, "MinNodes"); has {
		pt.MinNodes = v
	}
	if v, has := lookup(tbl, dflt, "Nodes"); has {
		pt.Nodes = strings.Map(func(r rune) rune {
			if r < 128 && isSpace(byte(r)) {
				return ','
			}
			return r
		}, v)
	}
	if v, has := lookup(tbl, dflt, "RootOnly"); has {
		pt.RootOnly, _ = ParseBool("RootOnly", v)
	}
	if v, has := lookup(tbl, dflt, "ReqResv"); has {
		pt.ReqResv, _ = ParseBool("ReqResv", v)
	}
	if v, has := lookup(tbl, dflt, "LLN"); has {
		pt.LLN, _ = ParseBool("LLN", v)
	}
	if v, has := lookup(tbl, dflt, "OverTimeLimit"); has {
		if isUnlimited(v) {
			pt.OverTimeLimit = Infinite16
		} else if i := atoi(v); i < 0 {
			warnf("Ignoring bad OverTimeLimit value: %s", v)
		} else if i > 0xfffe {
			pt.OverTimeLimit = Infinite16
		} else {
			pt.OverTimeLimit = Minutes(i)
		}
	}
	if v, has := lookup(tbl, dflt, "PreemptMode"); has {
		l, good := parsePreemptMode(v)
		if !good {
			errf("Bad value \"%s\" for PreemptMode", v)
			ok = false
		}
		pt.PreemptMode = l
	}
	if v, has := u16of(tbl, dflt, "PriorityJobFactor"); has {
		pt.PriorityJobFactor = v
	}
	if v, has := u16of(tbl, dflt, "PriorityTier"); has {
		pt.PriorityTier = v
	}
	if v, has := u16of(tbl, dflt, "Priority"); has {
		pt.PriorityJobFactor, pt.PriorityTier = v, v
	}
	pt.QOS, _ = lookup(tbl, dflt, "QOS")
	if v, has := u16of(tbl, dflt, "ResumeTimeout"); has {
		pt.ResumeTimeout = Seconds(v)
	}
	if v, has := tbl.get("SelectTypeParameters"); has {
		l := strings.ToLower(v)
		switch {
		case strings.HasPrefix(l, "cr_core_memory"):
			pt.SelectTypeParameters = "CR_Core_Memory"
		case strings.HasPrefix(l, "cr_core"):
			pt.SelectTypeParameters = "CR_Core"
		case strings.HasPrefix(l, "cr_socket_memory"):
			pt.SelectTypeParameters = "CR_Socket_Memory"
		case strings.HasPrefix(l, "cr_socket"):
			pt.SelectTypeParameters = "CR_Socket"
		default:
			errf("Bad value for SelectTypeParameters: %s", v)
			ok = false
		}
	}
	os, has := lookup(tbl, dflt, "OverSubscribe")
	if !has {
		os, has = lookup(tbl, dflt, "Shared")
	}
	if has {
		u := strings.ToUpper(os)
		switch {
		case u == "NO":
			pt.OverSubscribe, pt.MaxShare = "NO", 1
		case u == "EXCLUSIVE":
			pt.OverSubscribe, pt.MaxShare = "EXCLUSIVE", 0
		case strings.HasPrefix(u, "YES:"):
			if i := atoi(os[4:]); i <= 1 {
				warnf("Ignoring bad OverSubscribe value: %s", os)
				pt.OverSubscribe, pt.MaxShare = "NO", 1
			} else {
				pt.OverSubscribe, pt.MaxShare = "YES", uint16(min(i, 0x7fff))
			}
		case u == "YES":
			pt.OverSubscribe, pt.MaxShare = "YES", 4
		case strings.HasPrefix(u, "FORCE:"):
			if i := atoi(os[6:]); i < 1 {
				warnf("Ignoring bad OverSubscribe value: %s", os)
				pt.OverSubscribe, pt.MaxShare = "NO", 1
			} else {
				pt.OverSubscribe, pt.MaxShare = "FORCE", uint16(min(i, 0x7fff))
			}
		case u == "FORCE":
			pt.OverSubscribe, pt.MaxShare = "FORCE", 4
		default:
			errf("Bad value \"%s\" for OverSubscribe", os)
			ok = false
		}
	}
	if v, has := tbl.get("SuspendTime"); has {
		if strings.EqualFold(v, "INFINITE") || v == "-1" {
			pt.SuspendTime = Infinite32
		} else if n := atoi(v); n < 0 || n > 0xffffffff {
			errf("Bad value \"%s\" for SuspendTime", v)
			ok = false
		} else {
			pt.SuspendTime = Seconds(n)
		}
	}
	if v, has := u16of(tbl, dflt, "SuspendTimeout"); has {
		pt.SuspendTimeout = Seconds(v)
	}
	if v, has := lookup(tbl, dflt, "State"); has {
		u := strings.ToUpper(v)
		switch {
		case strings.HasPrefix(u, "DOWN"):
			pt.State = "DOWN"
		case strings.HasPrefix(u, "UP"):
			pt.State = "UP"
		case strings.HasPrefix(u, "DRAIN"):
			pt.State = "DRAIN"
		case strings.HasPrefix(u, "INACTIVE"):
			pt.State = "INACTIVE"
		default:
			errf("Bad value \"%s\" for State", v)
			ok = false
		}
	}
	return pt, ok
}

// buildPartitions creates the partitions and resolves their node lists
// (slurmctld's _build_single_partitionline_info and build_part_bitmap).
func (p *parser) buildPartitions() {
	c := p.cfg
	seen := map[string]bool{}
	for _, r := range p.partRecs {
		pt, ok := p.makePartition(r)
		if !ok {
			continue
		}
		if seen[pt.Name] {
			p.d.errorf(pt.Pos, "_build_single_partitionline_info: duplicate entry for partition %s", pt.Name)
			continue
		}
		seen[pt.Name] = true
		if pt.Default {
			if c.DefaultPartition != "" && c.DefaultPartition != pt.Name {
				p.d.warnf(pt.Pos, "_parse_part_spec: changing default partition from %s to %s", c.DefaultPartition, pt.Name)
			}
			c.DefaultPartition = pt.Name
		}
		if pt.DefaultTime != NoVal32 && pt.MaxTime != Infinite32 && pt.DefaultTime > pt.MaxTime {
			p.d.warnf(pt.Pos, "partition %s DefaultTime exceeds MaxTime (%d > %d)", pt.Name, pt.DefaultTime, pt.MaxTime)
			pt.DefaultTime = NoVal32 // slurmctld drops it; jobs get MaxTime
		}
		p.resolvePartitionNodes(pt)
		c.Partitions = append(c.Partitions, pt)
	}
}

// resolvePartitionNodes implements nodespec_to_hostlist + bitmap building.
func (p *parser) resolvePartitionNodes(pt *Partition) {
	c := p.cfg
	if pt.Nodes == "" {
		return
	}
	if strings.EqualFold(pt.Nodes, "ALL") {
		pt.NodeNames = make([]string, len(c.Nodes))
		for i := range c.Nodes {
			pt.NodeNames[i] = c.Nodes[i].Name
		}
		return
	}
	hl, err := hostlist.Parse(pt.Nodes)
	if err != nil {
		p.d.errorf(pt.Pos, "nodespec_to_hostlist: hostlist_create() error for %s", pt.Nodes)
		return
	}
	names := hl.Hosts()
	for _, ns := range c.NodeSets {
		found := false
		kept := names[:0:0]
		for _, n := range names {
			if n == ns.Name {
				found = true
				continue
			}
			kept = append(kept, n)
		}
		if !found {
			continue
		}
		names = kept
		pt.NodeSets = append(pt.NodeSets, ns.Name)
		if ns.Feature != "" {
			names = append(names, p.nodesWithFeature(ns.Feature)...)
		}
		if ns.Nodes != "" {
			if strings.EqualFold(ns.Nodes, "ALL") {
				for i := range c.Nodes {
					names = append(names, c.Nodes[i].Name)
				}
			} else if more, ok := p.expandList(ns.Pos, "NodeSet Nodes", ns.Nodes); ok {
				names = append(names, more...)
			}
		}
	}
	seen := make(map[string]bool, len(names))
	var bad []string
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, ok := c.NodeIndex[n]; !ok {
			bad = append(bad, n)
			continue
		}
		pt.NodeNames = append(pt.NodeNames, n)
	}
	if len(bad) > 0 {
		p.d.errorf(pt.Pos, "Invalid node names in partition %s (invalid node name %s)", pt.Name, hostlist.Compress(bad))
	}
}

// nodesWithFeature returns the nodes having every feature of the
// "&"-separated expression (a NodeSet Feature= is one feature name).
func (p *parser) nodesWithFeature(feature string) []string {
	var out []string
	for _, n := range p.cfg.Nodes {
		if p.cfg.NodeLines[n.Line].Features.Has(feature) {
			out = append(out, n.Name)
		}
	}
	return out
}
