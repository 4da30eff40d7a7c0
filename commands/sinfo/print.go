package main

import (
	"fmt"
	"strings"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
)

// field is one column: its header and how a line prints in it.
type field struct {
	width  int
	right  bool
	suffix string
	prefix bool
	kind   string // the -O name, for field-size overrides
	header string
	// headerNoCut prints the header uncut (node lists).
	headerNoCut bool
	print       func(s *sinfo, r *rec, width int, right bool)
}

func (s *sinfo) printList(recs []*rec) {
	if s.nodeFieldFlag {
		w := 9
		for _, r := range recs {
			w = max(w, len(r.nodes.Ranged()))
		}
		s.nodeFieldSize = w
	}
	if s.partFieldFlag {
		w := 9
		for _, r := range recs {
			if r.part == nil || !r.part.Name.Valid {
				continue
			}
			n := len(r.part.Name.Value)
			if r.part.Flags&partFlagDefault != 0 {
				n++
			}
			w = max(w, n)
		}
		s.partFieldSize = w
	}
	if !s.noHeader {
		s.printEntry(nil)
	}
	for _, r := range recs {
		s.printEntry(r)
	}
}

func (s *sinfo) printEntry(r *rec) {
	for _, f := range s.fields {
		if f.prefix || f.print == nil {
			s.out.WriteString(f.suffix)
			continue
		}
		w := f.width
		switch f.kind {
		case "nodelist", "nodehost":
			if s.nodeFieldFlag {
				w = s.nodeFieldSize
			}
		case "partition", "partitionname":
			if s.partFieldFlag {
				w = s.partFieldSize
			}
		}
		if r == nil {
			s.out.PrintStrS(f.header, w, f.right, !f.headerNoCut)
		} else {
			f.print(s, r, w, f.right)
		}
		s.out.WriteString(f.suffix)
	}
	s.out.WriteString("\n")
}

func (s *sinfo) pstr(v sc.Str, w int, right bool) { s.out.PrintStr(v, w, right, true) }
func (s *sinfo) ps(v string, w int, right bool)   { s.out.PrintStrS(v, w, right, true) }

func (s *sinfo) cnu(v float64) string {
	return cut(sc.ConvertNumUnit(float64(float32(v)), sc.UnitNone, s.convert), 8)
}

func cut(v string, size int) string {
	if len(v) > size-1 {
		return v[:size-1]
	}
	return v
}

// minMax16 is _build_min_max_16_string.
func (s *sinfo) minMax16(lo, hi uint16, rng bool) string {
	a, b := s.cnu(float64(lo)), s.cnu(float64(hi))
	switch {
	case lo == hi:
		return b
	case rng && hi == sc.Infinite16:
		return a + "-infinite"
	case rng:
		return a + "-" + b
	}
	return a + "+"
}

// minMax32 is _build_min_max_32_string.
func (s *sinfo) minMax32(lo, hi uint32, rng, unit bool) string {
	var a, b string
	if unit {
		a, b = s.cnu(float64(lo)), s.cnu(float64(hi))
	} else {
		a, b = cut(fmt.Sprint(lo), 8), cut(fmt.Sprint(hi), 8)
	}
	switch {
	case lo == hi:
		return b
	case rng && hi == sc.Infinite:
		return a + "-infinite"
	case rng:
		return a + "-" + b
	}
	return a + "+"
}

func minMax64(lo, hi uint64, rng bool) string {
	f := func(v uint64) string {
		if v == sc.NoVal64 {
			return "N/A"
		}
		return cut(fmt.Sprint(v), 16)
	}
	a, b := f(lo), f(hi)
	switch {
	case lo == hi:
		return b
	case rng:
		return a + "-" + b
	}
	return a + "+"
}

func cpuLoad(lo, hi uint32) string {
	f := func(v uint32) string {
		if v == sc.NoVal {
			return "N/A"
		}
		return cut(fmt.Sprintf("%.2f", float64(v)/100.0), 8)
	}
	if lo == hi {
		return f(hi)
	}
	return f(lo) + "-" + f(hi)
}

func (s *sinfo) secs(t int64, w int, right bool) {
	s.ps(sc.SecsString(t, false), w, right)
}

func partOr(r *rec, get func() string) string {
	if r.part == nil {
		return "n/a"
	}
	return get()
}

// fieldDefs maps -O names to their header and printer; -o letters map
// onto these names.
func (s *sinfo) fieldDefs() map[string]field {
	def := func(h string, p func(s *sinfo, r *rec, w int, right bool)) field {
		return field{header: h, print: p}
	}
	m := map[string]field{
		"allocmem": def("ALLOCMEM", func(s *sinfo, r *rec, w int, right bool) { s.ps(cut(fmt.Sprint(r.allocMem), 32), w, right) }),
		"allocnodes": def("ALLOCNODES", func(s *sinfo, r *rec, w int, right bool) {
			switch {
			case r.part == nil:
				s.ps("n/a", w, right)
			case r.part.AllowAllocNodes.Valid:
				s.ps(r.part.AllowAllocNodes.Value, w, right)
			default:
				s.ps("all", w, right)
			}
		}),
		"available": def("AVAIL", func(s *sinfo, r *rec, w int, right bool) {
			if r.part == nil {
				s.ps("n/a", w, right)
				return
			}
			switch r.part.StateUp {
			case 3:
				s.ps("up", w, right)
			case 1:
				s.ps("down", w, right)
			case 2:
				s.ps("drain", w, right)
			case 0:
				s.ps("inactive", w, right)
			default:
				s.ps("unknown", w, right)
			}
		}),
		"cluster": def("CLUSTER", func(s *sinfo, r *rec, w int, right bool) { s.ps("N/A", w, right) }),
		"comment": def("COMMENT", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.comment, w, right) }),
		"cpus": def("CPUS", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax32(r.minCPUs, r.maxCPUs, false, true), w, right)
		}),
		"cpusload": def("CPU_LOAD", func(s *sinfo, r *rec, w int, right bool) { s.ps(cpuLoad(r.minCPULoad, r.maxCPULoad), w, right) }),
		"freemem": def("FREE_MEM", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(minMax64(r.minFreeMem, r.maxFreeMem, true), w, right)
		}),
		"cpusstate": def("CPUS(A/I/O/T)", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(fmt.Sprintf("%d/%d/%d/%d", r.cpusAlloc, r.cpusIdle, r.cpusOther, r.cpusTotal), w, right)
		}),
		"cores": def("CORES", func(s *sinfo, r *rec, w int, right bool) { s.ps(s.minMax16(r.minCores, r.maxCores, false), w, right) }),
		"defaulttime": def("DEFAULTTIME", func(s *sinfo, r *rec, w int, right bool) {
			switch {
			case r.part == nil || r.part.DefaultTime == sc.NoVal:
				s.ps("n/a", w, right)
			case r.part.DefaultTime == sc.Infinite:
				s.ps("infinite", w, right)
			default:
				s.secs(int64(r.part.DefaultTime)*60, w, right)
			}
		}),
		"disk": def("TMP_DISK", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax32(r.minDisk, r.maxDisk, false, false), w, right)
		}),
		"extra":        def("EXTRA", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.extra, w, right) }),
		"features":     def("AVAIL_FEATURES", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.features, w, right) }),
		"features_act": def("ACTIVE_FEATURES", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.featuresAct, w, right) }),
		"groups": def("GROUPS", func(s *sinfo, r *rec, w int, right bool) {
			switch {
			case r.part == nil:
				s.ps("n/a", w, right)
			case r.part.AllowGroups.Valid:
				s.ps(r.part.AllowGroups.Value, w, right)
			default:
				s.ps("all", w, right)
			}
		}),
		"gres":     def("GRES", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.gres, w, right) }),
		"gresused": def("GRES_USED", func(s *sinfo, r *rec, w int, right bool) { s.pstr(r.gresUsed, w, right) }),
		"maxcpuspernode": def("MAX_CPUS_PER_NODE", func(s *sinfo, r *rec, w int, right bool) {
			if r.part.MaxCPUsPerNode == sc.Infinite {
				s.ps("UNLIMITED", w, right)
				return
			}
			s.ps(fmt.Sprint(r.maxCPUsPerNode), w, right)
		}),
		"memory": def("MEMORY", func(s *sinfo, r *rec, w int, right bool) { s.ps(minMax64(r.minMem, r.maxMem, false), w, right) }),
		"nodes":  def("NODES", func(s *sinfo, r *rec, w int, right bool) { s.ps(fmt.Sprint(int32(r.nodesTotal)), w, right) }),
		"nodeaddr": {header: "NODE_ADDR", headerNoCut: true, print: func(s *sinfo, r *rec, w int, right bool) {
			s.ps(r.nodeAddr.Ranged(), w, right)
		}},
		"nodeai": def("NODES(A/I)", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(fmt.Sprintf("%d/%d", int32(r.nodesAlloc), int32(r.nodesIdle)), w, right)
		}),
		"nodeaiot": def("NODES(A/I/O/T)", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(fmt.Sprintf("%d/%d/%d/%d", r.nodesAlloc, r.nodesIdle, r.nodesOther, r.nodesTotal), w, right)
		}),
		"nodehost": {header: "HOSTNAMES", headerNoCut: true, print: func(s *sinfo, r *rec, w int, right bool) {
			s.ps(r.hostnames.Ranged(), w, right)
		}},
		"nodelist": {header: "NODELIST", headerNoCut: true, print: func(s *sinfo, r *rec, w int, right bool) {
			s.ps(r.nodes.Ranged(), w, right)
		}},
		"partition": def("PARTITION", func(s *sinfo, r *rec, w int, right bool) {
			if r.part == nil {
				s.ps("n/a", w, right)
				return
			}
			name := r.part.Name.Value
			if r.part.Flags&partFlagDefault != 0 {
				if len(name) < w || w == 0 {
					name += "*"
				} else if w > 0 {
					name = name[:w-1] + "*"
				}
			}
			s.ps(name, w, right)
		}),
		"partitionname": def("PARTITION", func(s *sinfo, r *rec, w int, right bool) {
			if r.part == nil {
				s.ps("n/a", w, right)
				return
			}
			s.pstr(str(r.part.Name), w, right)
		}),
		"port": def("PORT", func(s *sinfo, r *rec, w int, right bool) { s.ps(s.minMax16(r.port, r.port, false), w, right) }),
		"preemptmode": def("PREEMPT_MODE", func(s *sinfo, r *rec, w int, right bool) {
			pm := r.part.PreemptMode
			if pm == sc.NoVal16 {
				pm = s.confPreemptMode()
			}
			s.ps(preemptModeString(pm), w, right)
		}),
		"priorityjobfactor": def("PRIO_JOB_FACTOR", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax16(r.part.PriorityJobFactor, r.part.PriorityJobFactor, true), w, right)
		}),
		"prioritytier": def("PRIO_TIER", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax16(r.part.PriorityTier, r.part.PriorityTier, true), w, right)
		}),
		"reason": def("REASON", func(s *sinfo, r *rec, w int, right bool) {
			v := "none"
			if !r.reason.Null {
				v = r.reason.V
			}
			if strings.HasPrefix(v, "(null)") {
				v = "none"
			}
			s.ps(v, w, right)
		}),
		"root": def("ROOT", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(partOr(r, func() string {
				if r.part.Flags&partFlagRootOnly != 0 {
					return "yes"
				}
				return "no"
			}), w, right)
		}),
		"oversubscribe": def("OVERSUBSCRIBE", func(s *sinfo, r *rec, w int, right bool) {
			force := r.part.MaxShare&0x8000 != 0
			val := r.part.MaxShare &^ 0x8000
			var v string
			switch {
			case val == 0:
				v = "EXCLUSIVE"
			case force:
				v = fmt.Sprintf("FORCE:%d", val)
			case val == 1:
				v = "NO"
			default:
				v = fmt.Sprintf("YES:%d", val)
			}
			s.ps(v, w, right)
		}),
		"size": def("JOB_SIZE", func(s *sinfo, r *rec, w int, right bool) {
			if r.part == nil {
				s.ps("n/a", w, right)
				return
			}
			if r.part.MinNodes < 1 && r.part.MaxNodes > 0 {
				r.part.MinNodes = 1
			}
			s.ps(s.minMax32(r.part.MinNodes, r.part.MaxNodes, true, true), w, right)
		}),
		"statecompact": def("STATE", func(s *sinfo, r *rec, w int, right bool) {
			s.stateField(r, w, right, func(st uint32) string { return strings.ToLower(sc.NodeStateCompact(st)) })
		}),
		"statecomplete": def("STATECOMPLETE", func(s *sinfo, r *rec, w int, right bool) {
			s.stateField(r, w, right, func(st uint32) string { return strings.ToLower(sc.NodeStateComplete(st)) })
		}),
		"statelong": def("STATE", func(s *sinfo, r *rec, w int, right bool) {
			s.stateField(r, w, right, func(st uint32) string { return strings.ToLower(sc.NodeStateString(st)) })
		}),
		"sockets": def("SOCKETS", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax16(r.minSockets, r.maxSockets, false), w, right)
		}),
		"socketcorethread": def("S:C:T", func(s *sinfo, r *rec, w int, right bool) {
			v := s.minMax16(r.minSockets, r.maxSockets, false) + ":" + s.minMax16(r.minCores, r.maxCores, false) +
				":" + s.minMax16(r.minThreads, r.maxThreads, false)
			s.ps(v, w, right)
		}),
		"time": def("TIMELIMIT", func(s *sinfo, r *rec, w int, right bool) {
			switch {
			case r.part == nil:
				s.ps("n/a", w, right)
			case r.part.MaxTime == sc.Infinite:
				s.ps("infinite", w, right)
			default:
				s.secs(int64(r.part.MaxTime)*60, w, right)
			}
		}),
		"timestamp": def("TIMESTAMP", func(s *sinfo, r *rec, w int, right bool) {
			if r.reasonTime == 0 {
				s.ps("Unknown", w, right)
				return
			}
			s.ps(s.tf.Format(r.reasonTime, s.now), w, right)
		}),
		"threads": def("THREADS", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax16(r.minThreads, r.maxThreads, false), w, right)
		}),
		"user": def("USER", func(s *sinfo, r *rec, w int, right bool) {
			if r.reasonUID == sc.NoVal {
				s.ps("Unknown", w, right)
				return
			}
			if n, ok := sc.UserNameOK(r.reasonUID); ok {
				s.ps(cut(n, 32), w, right)
				return
			}
			s.ps(fmt.Sprintf("Unk(%d)", r.reasonUID), w, right)
		}),
		"userlong": def("USER", func(s *sinfo, r *rec, w int, right bool) {
			if r.reasonUID == sc.NoVal {
				s.ps("Unknown", w, right)
				return
			}
			if n, ok := sc.UserNameOK(r.reasonUID); ok {
				s.ps(cut(fmt.Sprintf("%s(%d)", n, r.reasonUID), 32), w, right)
				return
			}
			s.ps(fmt.Sprintf("Unk(%d)", r.reasonUID), w, right)
		}),
		"version": def("VERSION", func(s *sinfo, r *rec, w int, right bool) {
			if r.version.Null {
				s.ps("N/A", w, right)
				return
			}
			s.pstr(r.version, w, right)
		}),
		"weight": def("WEIGHT", func(s *sinfo, r *rec, w int, right bool) {
			s.ps(s.minMax32(r.minWeight, r.maxWeight, false, false), w, right)
		}),
	}
	m["share"] = m["oversubscribe"]
	return m
}

func (s *sinfo) stateField(r *rec, w int, right bool, name func(uint32) string) {
	if r.nodesTotal == 0 {
		s.ps("n/a", w, right)
		return
	}
	s.ps(name(r.nodeState), w, right)
}

// preemptModeString is preempt_mode_string: GANG or WITHIN with exactly
// one of CANCEL, REQUEUE, SUSPEND.
func preemptModeString(m uint16) string {
	const (
		suspend = 0x0001
		requeue = 0x0002
		cancel  = 0x0008
		within  = 0x4000
		gang    = 0x8000
	)
	switch m {
	case 0:
		return "OFF"
	case gang:
		return "GANG"
	case within:
		return "WITHIN"
	}
	prefix := ""
	switch {
	case m&gang != 0:
		prefix, m = "GANG,", m&^gang
	case m&within != 0:
		prefix, m = "WITHIN,", m&^within
	}
	switch m {
	case cancel:
		return prefix + "CANCEL"
	case requeue:
		return prefix + "REQUEUE"
	case suspend:
		return prefix + "SUSPEND"
	}
	return prefix + "UNKNOWN"
}

// confPreemptMode is slurm.conf's PreemptMode as a number.
func (s *sinfo) confPreemptMode() uint16 {
	var m uint16
	for _, p := range s.conn.Conf.PreemptMode {
		switch strings.ToUpper(p) {
		case "GANG":
			m |= 0x8000
		case "WITHIN":
			m |= 0x4000
		case "SUSPEND":
			m |= 0x0001
		case "REQUEUE":
			m |= 0x0002
		case "CANCEL":
			m |= 0x0008
		}
	}
	return m
}
