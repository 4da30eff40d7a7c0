package conf

import (
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// NodeLine is one NodeName= line with the NodeName=DEFAULT values in force
// at that point merged in and Slurm's derivations applied (CPUs from
// boards/sockets/cores/threads, Sockets from CPUs, resets of zero values).
type NodeLine struct {
	Pos Pos
	// Names, Hostnames, Addrs and BcastAddrs are hostlist expressions as
	// written; Hostnames defaults to Names and Addrs to Hostnames.
	Names, Hostnames, Addrs, BcastAddrs string
	// Port is the Port= value as written ("" = SlurmdPort).
	Port string

	CPUs           uint16
	Boards         uint16
	Sockets        uint16 // total sockets (Boards x SocketsPerBoard)
	CoresPerSocket uint16
	ThreadsPerCore uint16
	RealMemory     MB
	TmpDisk        MB
	Weight         uint32
	Features       List
	Gres           []GresSpec
	State          string // "" = UNKNOWN
	Reason         string
	CoreSpecCount  uint16
	CPUSpecList    string
	MemSpecLimit   MB
	// CpuBind is the CpuBind= value ("" when absent or invalid, which
	// 22.05 logs and ignores); CpuBindFlags is its reading (CPUBind*).
	CpuBind      string
	CpuBindFlags uint32
	TRESWeights  string

	// Count is how many nodes this line defines.
	Count int
}

// Node is one node after hostlist expansion.
type Node struct {
	Name      string
	Hostname  string
	Addr      string
	BcastAddr string
	Port      uint16
	Line      int // index in Config.NodeLines
}

// GresSpec is one item of a node's Gres= list: name[:type][:count].
type GresSpec struct {
	Name  string
	Type  string
	Count uint64
}

// ParseGresSpec reads "gpu:a100:4", "gpu:2", "bandwidth:lustre:4G".
func ParseGresSpec(s string) (GresSpec, bool) {
	parts := strings.Split(s, ":")
	g := GresSpec{Name: parts[0], Count: 1}
	if g.Name == "" {
		return g, false
	}
	rest := parts[1:]
	if n := len(rest); n > 0 {
		if c, ok := ParseCount(rest[n-1]); ok {
			g.Count = c
			rest = rest[:n-1]
		}
	}
	// "no_consume" may appear between type and count.
	var typ []string
	for _, r := range rest {
		if !strings.EqualFold(r, "no_consume") {
			typ = append(typ, r)
		}
	}
	if len(typ) > 1 {
		return g, false
	}
	if len(typ) == 1 {
		g.Type = typ[0]
	}
	return g, true
}

// nodeStateOK implements state_str2int's test: the base state names, or a
// CLOUD/DRAIN/FAIL prefix.
func nodeStateOK(s string) bool {
	switch strings.ToUpper(s) {
	case "UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE":
		return true
	}
	u := strings.ToUpper(s)
	return strings.HasPrefix(u, "CLOUD") || strings.HasPrefix(u, "DRAIN") || strings.HasPrefix(u, "FAIL")
}

func (p *parser) nodeLine(pos Pos, value string, tbl record) {
	if strings.EqualFold(value, "DEFAULT") {
		for _, k := range []string{"NodeHostname", "BcastAddr", "NodeAddr"} {
			if _, ok := tbl[k]; ok {
				p.d.errorf(pos, "%s not allowed with NodeName=DEFAULT", k)
				return
			}
		}
		p.nodeDefault = mergeDefault(p.nodeDefault, tbl)
		return
	}
	if strings.EqualFold(value, "ALL") {
		p.d.errorf(pos, "'%s' is a reserved word disallowed for use with NodeName", value)
		return
	}
	p.nodeRecs = append(p.nodeRecs, nodeRec{pos: pos, name: value, tbl: tbl, dflt: p.nodeDefault})
}

// lookup returns a key from the line, else from the DEFAULT in force.
func lookup(tbl, dflt record, key string) (string, bool) {
	if v, ok := tbl.get(key); ok {
		return v, true
	}
	return dflt.get(key)
}

func u16of(tbl, dflt record, key string) (uint16, bool) {
	v, ok := lookup(tbl, dflt, key)
	if !ok {
		return 0, false
	}
	n, _ := ParseUint16(key, v)
	return n, true
}

func u32of(tbl, dflt record, key string) (uint32, bool) {
	v, ok := lookup(tbl, dflt, key)
	if !ok {
		return 0, false
	}
	n, _ := ParseUint32(key, v)
	return n, true
}

func u64of(tbl, dflt record, key string) (uint64, bool) {
	v, ok := lookup(tbl, dflt, key)
	if !ok {
		return 0, false
	}
	n, _ := ParseUint64(key, v)
	return n, true
}

// makeNodeLine mirrors 22.05's NodeName handling.
func (p *parser) makeNodeLine(r nodeRec) *NodeLine {
	tbl, dflt := r.tbl, r.dflt
	n := &NodeLine{Pos: r.pos, Names: r.name, Boards: 1, CoresPerSocket: 1, CPUs: 1,
		RealMemory: 1, ThreadsPerCore: 1, Sockets: 1, Weight: 1}
	w := func(format string, args ...any) { p.d.warnf(r.pos, format, args...) }
	if v, ok := tbl.get("NodeHostname"); ok {
		n.Hostnames = v
	} else {
		n.Hostnames = n.Names
	}
	if v, ok := tbl.get("NodeAddr"); ok {
		n.Addrs = v
	} else {
		n.Addrs = n.Hostnames
	}
	n.BcastAddrs, _ = tbl.get("BcastAddr")
	if v, ok := u16of(tbl, dflt, "Boards"); ok {
		n.Boards = v
	}
	n.CpuBind, _ = lookup(tbl, dflt, "CpuBind")
	if f, ok := ParseCPUBind(n.CpuBind); ok {
		n.CpuBindFlags = f
	} else {
		w("NodeNames=%s CpuBind='%s' is invalid, ignored", n.Names, n.CpuBind)
		n.CpuBind = ""
	}
	n.CoreSpecCount, _ = u16of(tbl, dflt, "CoreSpecCount")
	if v, ok := u16of(tbl, dflt, "CoresPerSocket"); ok {
		n.CoresPerSocket = v
	}
	n.CPUSpecList, _ = lookup(tbl, dflt, "CPUSpecList")
	feat, ok := tbl.get("Feature")
	if !ok {
		feat, ok = tbl.get("Features")
	}
	if !ok {
		feat, ok = dflt.get("Feature")
	}
	if !ok {
		feat, _ = dflt.get("Features")
	}
	n.Features = splitList(feat)
	if g, ok := lookup(tbl, dflt, "Gres"); ok {
		for _, item := range splitList(g) {
			// gres_name_filter: names not in GresTypes are dropped, with
			// an error unless GresTypes is empty (then silently).
			if name, _, _ := strings.Cut(item, ":"); !p.cfg.GresTypes.hasExact(name) {
				if len(p.cfg.GresTypes) > 0 {
					w("Invalid GRES configured on node %s: %s", n.Names, item)
				}
				continue
			}
			gs, good := ParseGresSpec(item)
			if !good {
				p.d.errorf(r.pos, "Invalid GRES configured on node %s: %s", n.Names, g)
				break
			}
			n.Gres = append(n.Gres, gs)
		}
	}
	if v, ok := u64of(tbl, dflt, "MemSpecLimit"); ok {
		n.MemSpecLimit = MB(v)
	}
	n.Port, _ = lookup(tbl, dflt, "Port")
	noCPUs := false
	if v, ok := u16of(tbl, dflt, "CPUs"); ok {
		n.CPUs = v
	} else if v, ok := u16of(tbl, dflt, "Procs"); ok {
		n.CPUs = v
	} else {
		noCPUs = true
	}
	if v, ok := u64of(tbl, dflt, "RealMemory"); ok {
		n.RealMemory = MB(v)
	}
	n.Reason, _ = lookup(tbl, dflt, "Reason")
	noSockets := false
	if v, ok := u16of(tbl, dflt, "Sockets"); ok {
		n.Sockets = v
	} else {
		noSockets = true
	}
	spb, haveSPB := u16of(tbl, dflt, "SocketsPerBoard")
	if !haveSPB {
		spb = 1
	}
	n.State, _ = lookup(tbl, dflt, "State")
	if v, ok := u16of(tbl, dflt, "ThreadsPerCore"); ok {
		n.ThreadsPerCore = v
	}
	if v, ok := u32of(tbl, dflt, "TmpDisk"); ok {
		n.TmpDisk = MB(v)
	}
	n.TRESWeights, _ = lookup(tbl, dflt, "TRESWeights")
	if v, ok := u32of(tbl, dflt, "Weight"); ok {
		n.Weight = v
		if v == Infinite32 {
			n.Weight--
		}
	}

	if n.CoresPerSocket == 0 {
		w("NodeNames=%s CoresPerSocket=0 is invalid, reset to 1", n.Names)
		n.CoresPerSocket = 1
	}
	if n.CPUs == 0 {
		w("NodeNames=%s CPUs=0 is invalid, reset to 1", n.Names)
		n.CPUs = 1
	}
	if n.ThreadsPerCore == 0 {
		w("NodeNames=%s ThreadsPerCore=0 is invalid, reset to 1", n.Names)
		n.ThreadsPerCore = 1
	}
	if spb == 0 {
		w("NodeNames=%s SocketsPerBoards=0 is invalid, reset to 1", n.Names)
		spb = 1
	}
	if n.Sockets == 0 {
		w("NodeNames=%s Sockets=0 is invalid, reset to 1", n.Names)
		n.Sockets = 1
	}
	if haveSPB && !noSockets {
		w("NodeNames=%s Sockets=# and SocketsPerBoard=# is invalid , using SocketsPerBoard", n.Names)
		noSockets = true
	}
	if n.Boards == 0 {
		w("NodeNames=%s Boards=0 is invalid, reset to 1", n.Names)
		n.Boards = 1
	}
	ct := uint32(n.CoresPerSocket) * uint32(n.ThreadsPerCore)
	if noSockets {
		switch {
		case haveSPB:
			n.Sockets = uint16(uint32(n.Boards) * uint32(spb))
		case !noCPUs && uint32(n.CPUs)/ct > 0 && uint32(n.CPUs)%ct == 0:
			n.Sockets = uint16(uint32(n.CPUs) / ct)
		default:
			n.Sockets = n.Boards
		}
	}
	if noCPUs {
		n.CPUs = uint16(uint32(n.Sockets) * ct)
	}
	if n.Sockets < n.Boards {
		w("NodeNames=%s Sockets(%d) < Boards(%d) resetting Boards=1", n.Names, n.Sockets, n.Boards)
		n.Boards = 1
	}
	s := uint32(n.Sockets)
	if c := uint32(n.CPUs); c != s && c != s*uint32(n.CoresPerSocket) && c != s*ct {
		w("NodeNames=%s CPUs=%d match no Sockets, Sockets*CoresPerSocket or Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs.", n.Names, n.CPUs)
		n.CPUs = uint16(s * ct)
	}
	if uint32(n.CoreSpecCount) >= s*uint32(n.CoresPerSocket) {
		w("NodeNames=%s CoreSpecCount=%d is invalid, reset to 1", n.Names, n.CoreSpecCount)
		n.CoreSpecCount = 1
	}
	if n.CPUSpecList != "" && !cpuSpecListFits(n.CPUSpecList, int(n.CPUs)) {
		w("NodeNames=%s CpuSpecList=%s - unable to convert it to bitmap of size CPUs=%d. Ignoring CpuSpecList.", n.Names, n.CPUSpecList, n.CPUs)
		n.CPUSpecList = ""
	}
	if n.CoreSpecCount > 0 && n.CPUSpecList != "" {
		w("NodeNames=%s CoreSpecCount=%d is invalid with CPUSpecList, reset to 0", n.Names, n.CoreSpecCount)
		n.CoreSpecCount = 0
	}
	if n.MemSpecLimit >= n.RealMemory {
		if n.MemSpecLimit > 0 {
			w("NodeNames=%s MemSpecLimit=%d is invalid, reset to 0", n.Names, n.MemSpecLimit)
		}
		n.MemSpecLimit = 0
	}
	return n
}

// expandList parses a hostlist expression for key, reporting failures.
func (p *parser) expandList(pos Pos, key, expr string) ([]string, bool) {
	if expr == "" {
		return nil, true
	}
	h, err := hostlist.Expand(expr)
	if err != nil {
		p.d.errorf(pos, "Unable to create %s list from %s", key, expr)
		return nil, false
	}
	return h, true
}

// buildNodes turns NodeName lines into nodes (expand_nodeline_info of a
// multiple-slurmd build such as Debian's).
func (p *parser) buildNodes() {
	c := p.cfg
	c.NodeIndex = make(map[string]int)
	for _, r := range p.nodeRecs {
		nl := p.makeNodeLine(r)
		idx := len(c.NodeLines)
		c.NodeLines = append(c.NodeLines, nl)
		if nl.State != "" && !nodeStateOK(nl.State) {
			p.d.errorf(nl.Pos, "Invalid state %s from %s", nl.State, nl.Names)
		}
		if nl.Names == "" {
			p.d.errorf(nl.Pos, "Empty NodeName in config.")
			continue
		}
		// Slurm expands the lists in this order and stops at the first
		// failure (a fatal), so one bad NodeName yields one message even
		// though NodeHostname and NodeAddr default to it.
		portExpr := nl.Port
		if portExpr != "" && portExpr[0] != '[' && strings.ContainsAny(portExpr, "-,") {
			portExpr = "[" + portExpr + "]"
		}
		var addrs, names, bcast, hosts, ports []string
		ok := true
		for _, x := range []struct {
			key, expr string
			dst       *[]string
		}{
			{"NodeAddr", nl.Addrs, &addrs}, {"NodeName", nl.Names, &names},
			{"BcastAddr", nl.BcastAddrs, &bcast}, {"NodeHostname", nl.Hostnames, &hosts},
			{"Port", portExpr, &ports},
		} {
			if *x.dst, ok = p.expandList(nl.Pos, x.key, x.expr); !ok {
				break
			}
		}
		if !ok {
			continue
		}
		nl.Count = len(names)
		if len(addrs) != len(names) && len(addrs) != 1 {
			p.d.errorf(nl.Pos, "NodeAddr count must equal that of NodeName records of there must be no more than one")
			continue
		}
		if len(bcast) > 0 && len(bcast) != len(names) && len(bcast) != 1 {
			p.d.errorf(nl.Pos, "BcastAddr count must equal that of NodeName records, or there must be no more than one")
			continue
		}
		if len(ports) != len(names) && len(ports) > 1 {
			p.d.errorf(nl.Pos, "Port count must equal that of NodeName records or there must be no more than one (%d != %d)", len(ports), len(names))
			continue
		}
		port := uint16(c.SlurmdPort)
		var addr, bc, host string
		for i, name := range names {
			if i < len(addrs) {
				addr = addrs[i]
			}
			if i < len(bcast) {
				bc = bcast[i]
			}
			if i < len(hosts) {
				host = hosts[i]
			}
			if i < len(ports) {
				v := atoi(ports[i])
				if v <= 0 || v > 0xffff {
					p.d.errorf(nl.Pos, "Invalid Port %s", ports[i])
					break
				}
				port = uint16(v)
			}
			if _, dup := c.NodeIndex[name]; dup {
				p.d.errorf(nl.Pos, "Duplicated NodeName %s in the config file", name)
				continue
			}
			c.NodeIndex[name] = len(c.Nodes)
			c.Nodes = append(c.Nodes, Node{Name: name, Hostname: host, Addr: addr, BcastAddr: bc, Port: port, Line: idx})
		}
	}
}

// checkDownNodes validates DownNodes records against the node table.
func (p *parser) checkDownNodes() {
	for _, dn := range p.cfg.DownNodes {
		names, ok := p.expandList(dn.Pos, "DownNodes", dn.Nodes)
		if !ok {
			continue
		}
		if dn.State != "" && !nodeStateOK(dn.State) {
			p.d.warnf(dn.Pos, "Invalid State \"%s\"", dn.State)
		}
		for _, n := range names {
			if _, ok := p.cfg.NodeIndex[n]; !ok {
				p.d.warnf(dn.Pos, "DownNode \"%s\" does not exist!", n)
			}
		}
	}
}

// NodeSet is a NodeSet= record.
type NodeSet struct {
	Pos     Pos
	Name    string
	Feature string
	Nodes   string
}

// DownNodes is a DownNodes= record.
type DownNodes struct {
	Pos    Pos
	Nodes  string
	State  string
	Reason string
}

// Frontend is a FrontendName= record (parsed; front-end builds only).
type Frontend struct {
	Pos                                            Pos
	Names, Addrs                                   string
	Port                                           uint16
	AllowGroups, AllowUsers, DenyGroups, DenyUsers string
	Reason, State                                  string
}

func (p *parser) frontendLine(pos Pos, value string, tbl record) {
	if strings.EqualFold(value, "DEFAULT") {
		if _, ok := tbl["FrontendAddr"]; ok {
			p.d.errorf(pos, "FrontendAddr not allowed with FrontendName=DEFAULT")
			return
		}
		p.frontDefault = mergeDefault(p.frontDefault, tbl)
		return
	}
	f := &Frontend{Pos: pos, Names: value}
	f.AllowGroups, _ = tbl.get("AllowGroups")
	f.AllowUsers, _ = tbl.get("AllowUsers")
	f.DenyGroups, _ = tbl.get("DenyGroups")
	f.DenyUsers, _ = tbl.get("DenyUsers")
	if f.AllowGroups != "" && f.DenyGroups != "" {
		p.d.warnf(pos, "FrontEnd options AllowGroups and DenyGroups are incompatible")
	}
	if f.AllowUsers != "" && f.DenyUsers != "" {
		p.d.warnf(pos, "FrontEnd options AllowUsers and DenyUsers are incompatible")
	}
	if v, ok := tbl.get("FrontendAddr"); ok {
		f.Addrs = v
	} else {
		f.Addrs = value
	}
	if v, ok := lookup(tbl, p.frontDefault, "Port"); ok {
		f.Port, _ = ParseUint16("Port", v)
	}
	f.Reason, _ = lookup(tbl, p.frontDefault, "Reason")
	f.State, _ = lookup(tbl, p.frontDefault, "State")
	// Debian's 22.05 is not a front-end build: slurmctld dies here.
	p.d.errorf(pos, "Use of FrontendName in slurm.conf without Slurm being configured/built with the --enable-front-end option")
	p.cfg.Frontends = append(p.cfg.Frontends, f)
}
