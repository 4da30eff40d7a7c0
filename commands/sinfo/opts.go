package main

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/getopt"
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
)

const (
	optHelp = 0x100 + iota
	optUsage
	optHide
	optLocal
	optNoconvert
	optFederation
	optJSON
	optYAML
)

var longOptions = []getopt.Option{
	{Name: "all", Val: 'a'},
	{Name: "dead", Val: 'd'},
	{Name: "exact", Val: 'e'},
	{Name: "federation", Val: optFederation},
	{Name: "help", Val: optHelp},
	{Name: "hide", Val: optHide},
	{Name: "iterate", HasArg: getopt.RequiredArgument, Val: 'i'},
	{Name: "local", Val: optLocal},
	{Name: "long", Val: 'l'},
	{Name: "cluster", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "clusters", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "nodes", HasArg: getopt.RequiredArgument, Val: 'n'},
	{Name: "noconvert", Val: optNoconvert},
	{Name: "noheader", Val: 'h'},
	{Name: "Node", Val: 'N'},
	{Name: "format", HasArg: getopt.RequiredArgument, Val: 'o'},
	{Name: "Format", HasArg: getopt.RequiredArgument, Val: 'O'},
	{Name: "partition", HasArg: getopt.RequiredArgument, Val: 'p'},
	{Name: "responding", Val: 'r'},
	{Name: "list-reasons", Val: 'R'},
	{Name: "summarize", Val: 's'},
	{Name: "sort", HasArg: getopt.RequiredArgument, Val: 'S'},
	{Name: "states", HasArg: getopt.RequiredArgument, Val: 't'},
	{Name: "reservation", Val: 'T'},
	{Name: "usage", Val: optUsage},
	{Name: "verbose", Val: 'v'},
	{Name: "version", Val: 'V'},
	{Name: "json", Val: optJSON},
	{Name: "yaml", Val: optYAML},
}

// usageText is our own short synopsis for --usage and --help (the
// wording is goslurm's, not Slurm's).
const usageText = `Usage: sinfo [-adehlNrRsv] [-i seconds] [-n nodes] [-o format | -O fields]
             [-p partitions] [-S sort_keys] [-t states] [--noconvert] [-V]
`

func (s *sinfo) parseCommandLine(args []string) {
	env := s.getenv
	longForm := false
	optASet, optPSet, envASet, envPSet := false, false, false, false
	if _, ok := env("SINFO_ALL"); ok {
		envASet, s.allFlag = true, true
	}
	if _, ok := env("SINFO_LOCAL"); ok {
		s.local = true
	}
	if v, ok := env("SINFO_PARTITION"); ok {
		envPSet = true
		s.partition, s.partList, s.hasParts = v, sc.SplitList(v), true
		s.allFlag = true
	}
	if envASet && envPSet {
		s.errorf("Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. Please choose one or the other.")
		s.exit(1)
	}
	if v, ok := env("SINFO_SORT"); ok {
		s.sortSpec, s.sortSet = v, true
	}
	if v, ok := env("SLURM_CLUSTERS"); ok {
		sc.ClustersUnreachable(s.stderr, s.prog, v, true)
		s.exit(1)
	}
	argv := append([]string(nil), args...)
	_, posix := env("POSIXLY_CORRECT")
	g := getopt.New(argv, "adehi:lM:n:No:O:p:rRsS:t:TvV", longOptions, !posix, s.stderr)
	for {
		c := g.Next()
		if c == -1 {
			break
		}
		arg := g.Arg
		switch c {
		case '?':
			s.out.Flush()
			fmt.Fprintf(s.stderr, "Try \"sinfo --help\" for more information\n")
			s.exit(1)
		case 'a':
			optASet = true
			s.partition, s.partList, s.hasParts = "", nil, false
			s.allFlag = true
		case 'd':
			s.deadNodes = true
		case 'e':
			s.exact = true
		case 'h':
			s.noHeader = true
		case 'i':
			s.iterate = sc.Atoi(arg)
			if s.iterate <= 0 {
				s.errorf("Error: invalid entry for --iterate=%s", arg)
				s.exit(1)
			}
		case 'l':
			s.longOutput = true
		case 'M':
			s.out.Flush()
			sc.ClustersUnreachable(s.stderr, s.prog, arg, false)
			s.exit(1)
		case optNoconvert:
			s.convert |= sc.ConvertNo
		case 'n':
			hl, err := hostlist.Parse(arg)
			if err != nil {
				s.errorf("'%s' invalid entry for --nodes", arg)
				s.exit(1)
			}
			s.nodes, s.hasNodes = arg, true
			if hl.Count() == 1 {
				s.nodeNameSingle = true
				h, _ := hl.Nth(0)
				s.nodes = h
			} else {
				s.nodeNameSingle = false
			}
		case 'N':
			s.nodeFlag = true
		case 'o':
			s.format, s.formatSet = arg, true
		case 'O':
			longForm = true
			s.format, s.formatSet = arg, true
		case 'p':
			optPSet = true
			s.partition, s.partList, s.hasParts = arg, sc.SplitList(arg), true
			s.allFlag = true
		case 'r':
			s.respondingNodes = true
		case 'R':
			s.listReasons = true
		case 's':
			s.summarize = true
		case 'S':
			s.sortSpec, s.sortSet = arg, true
		case 't':
			s.states = arg
			if !s.buildStateList(arg) {
				s.errorf("valid states: %s", nodeStateList())
				s.exit(1)
			}
		case 'T':
			s.reservationFlag = true
		case 'v':
			s.verbose++
		case 'V':
			fmt.Fprintf(s.out, "slurm-wlm 22.05.8\n")
			s.exit(0)
		case optFederation:
			s.federation = true
		case optHelp, optUsage:
			s.out.WriteString(usageText)
			s.exit(0)
		case optHide:
			s.allFlag = false
		case optLocal:
			s.local = true
		case optJSON:
			s.mimetype = mimeJSON
		case optYAML:
			s.mimetype = mimeYAML
		}
	}
	if s.longOutput && s.formatSet {
		s.fatalf("Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
	}
	if optASet && optPSet {
		s.errorf("Conflicting options, -a and -p, specified. Please choose one or the other.")
		s.exit(1)
	}
	if !s.formatSet {
		s.defFormat = true
		longForm = true
		switch {
		case s.summarize:
			s.partFieldFlag = true
			s.format = "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0"
		case s.nodeFlag:
			s.nodeFieldFlag, s.partFieldFlag = true, true
			if s.longOutput {
				s.format = "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 ,memory:.6 ,disk:.8 ,weight:.6 ,features:.8 ,reason:20"
			} else {
				s.format = "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6"
			}
		case s.listReasons:
			if s.longOutput {
				s.format = "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
			} else {
				s.format = "reason:20 ,user:9 ,timestamp:19 ,nodelist:0"
			}
		default:
			if v, ok := env("SINFO_FORMAT"); ok {
				s.format = v
				longForm = false
				break
			}
			s.partFieldFlag = true
			if s.longOutput {
				s.format = "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,groups:.10 ,nodes:.6 ,statelong:.11 ,nodelist:0"
			} else {
				s.format = "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0"
			}
		}
	}
	if longForm {
		s.parseLongFormat(s.format)
	} else {
		s.parseFormat(s.format)
	}
	if s.listReasons && !s.hasStates {
		s.buildStateList("down,fail,drain")
		// Slurm tokenizes this default in place, leaving its first word.
		s.states = "down"
	}
	if s.deadNodes || s.hasNodes || s.partition != "" || s.respondingNodes || s.hasStates {
		s.filtering = true
	}
	if s.verbose != 0 {
		s.printOptions()
	}
}

func (s *sinfo) buildStateList(v string) bool {
	s.stateList, s.hasStates, s.stateListAnd = nil, true, false
	if strings.EqualFold(v, "all") {
		for i := uint32(0); i < sc.NodeStateEnd; i++ {
			s.stateList = append(s.stateList, i)
		}
		s.stateList = append(s.stateList, sc.NodeStateDrain, sc.NodeStateCompleting)
		return true
	}
	if strings.Contains(v, "&") {
		s.stateListAnd = true
	}
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '&' }) {
		id, ok := nodeStateID(tok)
		if !ok {
			s.errorf("Bad state string: \"%s\"", tok)
			return false
		}
		s.stateList = append(s.stateList, id)
	}
	return true
}

func stateEqual(i uint32, v string) bool {
	return sc.HasPrefixFold(sc.NodeStateCompact(i), v) || sc.HasPrefixFold(sc.NodeStateString(i), v)
}

// nodeStateID is _node_state_id: a state by (a prefix of) its name.
func nodeStateID(v string) (uint32, bool) {
	for i := uint32(0); i < sc.NodeStateEnd; i++ {
		if stateEqual(i, v) {
			return i, true
		}
	}
	pre := func(full string) bool { return sc.HasPrefixFold(full, v) }
	switch {
	case pre("PLANNED") || pre("PLND"):
		return sc.NodeStatePlanned, true
	case pre("DRAIN"):
		return sc.NodeStateDrain, true
	case pre("DRAINED"):
		return sc.NodeStateDrain | sc.NodeStateIdle, true
	case pre("RESV") || pre("RESERVED"):
		return sc.NodeStateRes, true
	case pre("PERFCTRS") || pre("NPC"):
		return sc.NodeStateNet, true
	case pre("DRAINING") || pre("DRNG"):
		return sc.NodeStateDrain | sc.NodeStateAllocated, true
	case stateEqual(sc.NodeStateCompleting, v):
		return sc.NodeStateCompleting, true
	case pre("NO_RESPOND"):
		return sc.NodeStateNoRespond, true
	}
	for _, f := range []uint32{sc.NodeStatePoweringDown, sc.NodeStatePoweredDown, sc.NodeStatePowerDown,
		sc.NodeStatePoweringUp, sc.NodeStateFail, sc.NodeStateMaint, sc.NodeStateRebootRequested,
		sc.NodeStateRebootIssued, sc.NodeStateCloud} {
		if stateEqual(f, v) {
			return f, true
		}
	}
	return 0, false
}

// nodeStateList is the list printed after a bad -t state.
func nodeStateList() string {
	v := sc.NodeStateString(0)
	for i := uint32(1); i < sc.NodeStateEnd; i++ {
		v += "," + sc.NodeStateString(i)
	}
	v += ",DRAIN,DRAINED,DRAINING,NO_RESPOND,RESERVED,PERFCTRS"
	for _, f := range []uint32{sc.NodeStateCloud, sc.NodeStateCompleting, sc.NodeStatePoweringDown,
		sc.NodeStatePoweredDown, sc.NodeStatePowerDown, sc.NodeStatePoweringUp, sc.NodeStateFail,
		sc.NodeStateMaint, sc.NodeStateRebootRequested, sc.NodeStateRebootIssued, sc.NodeStatePlanned} {
		v += "," + sc.NodeStateString(f)
	}
	return strings.ToLower(v)
}

// letterNames maps -o letters to -O names.
var letterNames = map[byte]string{
	'a': "available", 'A': "nodeai", 'b': "features_act", 'B': "maxcpuspernode", 'c': "cpus",
	'C': "cpusstate", 'd': "disk", 'D': "nodes", 'e': "freemem", 'E': "reason", 'f': "features",
	'F': "nodeaiot", 'g': "groups", 'G': "gres", 'h': "oversubscribe", 'H': "timestamp",
	'I': "priorityjobfactor", 'l': "time", 'L': "defaulttime", 'm': "memory", 'M': "preemptmode",
	'n': "nodehost", 'N': "nodelist", 'o': "nodeaddr", 'O': "cpusload", 'p': "prioritytier",
	'P': "partition", 'r': "root", 'R': "partitionname", 's': "size", 'S': "allocnodes",
	't': "statecompact", 'T': "statelong", 'u': "user", 'U': "userlong", 'v': "version",
	'V': "cluster", 'w': "weight", 'X': "sockets", 'Y': "cores", 'Z': "threads", 'z': "socketcorethread",
}

// setMatch turns on the grouping attribute a field prints.
func (s *sinfo) setMatch(name string) {
	m := &s.match
	switch name {
	case "allocmem":
		m.allocMem = true
	case "available":
		m.avail = true
	case "comment":
		m.comment = true
	case "cpus", "cpusstate":
		m.cpus = true
	case "cpusload":
		m.cpuLoad = true
	case "freemem":
		m.freeMem = true
	case "cores":
		m.cores = true
	case "defaulttime":
		m.defaultTime = true
	case "disk":
		m.disk = true
	case "extra":
		m.extra = true
	case "features":
		m.features = true
	case "features_act":
		m.featuresAct = true
	case "groups":
		m.groups = true
	case "gres":
		m.gres = true
	case "gresused":
		m.gresUsed = true
	case "maxcpuspernode":
		m.maxCPUsPerNode = true
	case "memory":
		m.memory = true
	case "nodeaddr":
		m.nodeAddr = true
	case "nodehost":
		m.hostnames = true
	case "partition", "partitionname":
		m.partition = true
	case "port":
		m.port = true
	case "preemptmode":
		m.preemptMode = true
	case "priorityjobfactor":
		m.priorityJobFactor = true
	case "prioritytier":
		m.priorityTier = true
	case "reason":
		m.reason = true
	case "root":
		m.root = true
	case "oversubscribe", "share":
		m.oversubscribe = true
	case "size":
		m.jobSize = true
	case "statecompact", "statelong":
		m.state = true
	case "statecomplete":
		m.stateComplete = true
	case "sockets":
		m.sockets = true
	case "socketcorethread":
		m.sct = true
	case "time":
		m.maxTime = true
	case "timestamp":
		m.reasonTimestamp = true
	case "threads":
		m.threads = true
	case "user", "userlong":
		m.reasonUser = true
	case "version":
		m.version = true
	case "weight":
		m.weight = true
	}
}

func (s *sinfo) addField(name string, width int, right bool, suffix string) {
	defs := s.fieldDefs()
	d := defs[name]
	d.kind, d.width, d.right, d.suffix = name, width, right, suffix
	s.setMatch(name)
	s.fields = append(s.fields, d)
}

// parseFormat builds the fields of a -o format.
func (s *sinfo) parseFormat(format string) {
	prefix, hasPrefix, items, all := sc.ParseFormat(format, " ")
	if hasPrefix {
		s.fields = append(s.fields, field{prefix: true, suffix: prefix})
	}
	for _, it := range items {
		name, ok := letterNames[it.Letter]
		if !ok {
			if all {
				continue
			}
			s.fields = append(s.fields, field{width: it.Width, right: it.Right, suffix: "%" + it.Text})
			s.out.Flush()
			fmt.Fprintf(s.stderr, "Invalid node format specification: %c\n", it.Letter)
			continue
		}
		s.addField(name, it.Width, it.Right, it.Suffix)
	}
}

// parseLongFormat builds the fields of a -O format.
func (s *sinfo) parseLongFormat(format string) {
	defs := s.fieldDefs()
	for _, it := range sc.ParseLongFormat(format) {
		lname := strings.ToLower(it.Name)
		if lname == "all" {
			s.parseFormat("%all")
			continue
		}
		if _, ok := defs[lname]; !ok {
			s.fields = append(s.fields, field{width: it.Width, right: it.Right, suffix: it.Suffix})
			s.errorf("Invalid job format specification: %s", it.Name)
			continue
		}
		s.addField(lname, it.Width, it.Right, it.Suffix)
	}
}

func (s *sinfo) printOptions() {
	tf := func(b bool) string {
		if b {
			return "true"
		}
		return "false"
	}
	opt := func(set bool, v string) string {
		if !set {
			return "(null)"
		}
		return v
	}
	na := func(set bool, v string) string {
		if !set {
			return "n/a"
		}
		return v
	}
	o := s.out
	fmt.Fprintf(o, "-----------------------------\n")
	fmt.Fprintf(o, "dead        = %s\n", tf(s.deadNodes))
	fmt.Fprintf(o, "exact       = %d\n", b01(s.exact))
	fmt.Fprintf(o, "filtering   = %s\n", tf(s.filtering))
	fmt.Fprintf(o, "format      = %s\n", s.format)
	fmt.Fprintf(o, "iterate     = %d\n", s.iterate)
	fmt.Fprintf(o, "long        = %s\n", tf(s.longOutput))
	fmt.Fprintf(o, "no_header   = %s\n", tf(s.noHeader))
	fmt.Fprintf(o, "node_field  = %s\n", tf(s.nodeFieldFlag))
	fmt.Fprintf(o, "node_format = %s\n", tf(s.nodeFlag))
	fmt.Fprintf(o, "nodes       = %s\n", na(s.hasNodes, s.nodes))
	fmt.Fprintf(o, "part_field  = %s\n", tf(s.partFieldFlag))
	fmt.Fprintf(o, "partition   = %s\n", na(s.hasParts, s.partition))
	fmt.Fprintf(o, "responding  = %s\n", tf(s.respondingNodes))
	fmt.Fprintf(o, "states      = %s\n", opt(s.states != "", s.states))
	fmt.Fprintf(o, "sort        = %s\n", opt(s.sortSet, s.sortSpec))
	fmt.Fprintf(o, "summarize   = %s\n", tf(s.summarize))
	fmt.Fprintf(o, "verbose     = %d\n", s.verbose)
	fmt.Fprintf(o, "-----------------------------\n")
	fmt.Fprintf(o, "all_flag        = %s\n", tf(s.allFlag))
	fmt.Fprintf(o, "alloc_mem_flag  = %s\n", tf(s.match.allocMem))
	fmt.Fprintf(o, "avail_flag      = %s\n", tf(s.match.avail))
	fmt.Fprintf(o, "comment_flag    = %s\n", tf(s.match.comment))
	fmt.Fprintf(o, "cpus_flag       = %s\n", tf(s.match.cpus))
	fmt.Fprintf(o, "default_time_flag =%s\n", tf(s.match.defaultTime))
	fmt.Fprintf(o, "disk_flag       = %s\n", tf(s.match.disk))
	fmt.Fprintf(o, "extra_flag      = %s\n", tf(s.match.extra))
	fmt.Fprintf(o, "features_flag   = %s\n", tf(s.match.features))
	fmt.Fprintf(o, "features_flag_act = %s\n", tf(s.match.featuresAct))
	fmt.Fprintf(o, "groups_flag     = %s\n", tf(s.match.groups))
	fmt.Fprintf(o, "gres_flag       = %s\n", tf(s.match.gres))
	fmt.Fprintf(o, "gres_used_flag  = %s\n", tf(s.match.gresUsed))
	fmt.Fprintf(o, "job_size_flag   = %s\n", tf(s.match.jobSize))
	fmt.Fprintf(o, "max_time_flag   = %s\n", tf(s.match.maxTime))
	fmt.Fprintf(o, "memory_flag     = %s\n", tf(s.match.memory))
	fmt.Fprintf(o, "partition_flag  = %s\n", tf(s.match.partition))
	fmt.Fprintf(o, "port_flag       = %s\n", tf(s.match.port))
	fmt.Fprintf(o, "priority_job_factor_flag   = %s\n", tf(s.match.priorityJobFactor))
	fmt.Fprintf(o, "priority_tier_flag   = %s\n", tf(s.match.priorityTier))
	fmt.Fprintf(o, "reason_flag     = %s\n", tf(s.match.reason))
	fmt.Fprintf(o, "reason_timestamp_flag = %s\n", tf(s.match.reasonTimestamp))
	fmt.Fprintf(o, "reason_user_flag = %s\n", tf(s.match.reasonUser))
	fmt.Fprintf(o, "reservation_flag = %s\n", tf(s.reservationFlag))
	fmt.Fprintf(o, "root_flag       = %s\n", tf(s.match.root))
	fmt.Fprintf(o, "oversubscribe_flag      = %s\n", tf(s.match.oversubscribe))
	fmt.Fprintf(o, "state_flag      = %s\n", tf(s.match.state))
	fmt.Fprintf(o, "statecomplete_flag = %s\n", tf(s.match.stateComplete))
	fmt.Fprintf(o, "weight_flag     = %s\n", tf(s.match.weight))
	fmt.Fprintf(o, "-----------------------------\n\n")
}

func b01(b bool) int {
	if b {
		return 1
	}
	return 0
}
