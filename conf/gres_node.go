package conf

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// CoresMode says how gres.conf Cores= are checked against a node's CPUs.
type CoresMode int

const (
	// CoresAbstract is slurmd's check: Cores= are abstract core ids
	// (0 .. Sockets*CoresPerSocket-1) mapped to machine CPU ids through
	// the block map; ids out of range only log
	// "Invalid GRES data for gpu, Cores=..." and the record keeps no CPU set.
	CoresAbstract CoresMode = iota
	// CoresCPUIDs is slurmctld's check when it loads a CLOUD node's GRES
	// itself: Cores= are read as CPU ids below CPUs, and an id out of
	// range is fatal ("... (only N CPUs are available)").
	CoresCPUIDs
)

// NodeCPUs is the CPU layout ResolveNode checks Cores= against. slurmd
// fills it from the hardware (it uses the larger of the slurm.conf and the
// hardware CPU count, and the slurm.conf socket/core/thread layout unless the
// hardware has fewer CPUs); NodeCPUsFromConfig gives the slurm.conf values.
type NodeCPUs struct {
	// CPUs is the CPU count ("CoreCnt" in slurmd -G); must be > 0.
	CPUs int
	// Sockets (total, all boards), CoresPerSocket and ThreadsPerCore give
	// the abstract core ids (CoresAbstract).
	Sockets, CoresPerSocket, ThreadsPerCore int
	// MachineCPUs is the number of machine CPU ids (hwloc's block map
	// size); 0 means CPUs.
	MachineCPUs int
	// BlockMap maps abstract CPU ids to machine CPU ids; nil is the
	// identity.
	BlockMap []int
	Mode     CoresMode
}

// NodeCPUsFromConfig is the layout slurm.conf gives a node line.
func NodeCPUsFromConfig(nl *NodeLine) NodeCPUs {
	return NodeCPUs{CPUs: int(nl.CPUs), Sockets: int(nl.Sockets), CoresPerSocket: int(nl.CoresPerSocket),
		ThreadsPerCore: int(nl.ThreadsPerCore)}
}

// NodeGres is the effective GRES configuration of one node: gres.conf
// merged with the node's slurm.conf Gres=, as slurmd builds it at startup.
type NodeGres struct {
	Node string
	// AutoDetect is the mode in force on the node ("" = none).
	AutoDetect string
	// Records are in slurmd's order: GresTypes order (mps/shard after
	// gpu), then the node's slurm.conf Gres= order, then gres.conf order.
	Records []*NodeGresRecord
	// Warnings are the non-fatal messages slurmd logs, in its wording.
	Warnings []Diagnostic
}

// NodeGresRecord is one merged record.
type NodeGresRecord struct {
	Name, Type string
	Count      uint64
	// File is the (possibly truncated) File=/MultipleFiles= value as a
	// ranged expression, "" when the record has no device files.
	File          string
	MultipleFiles bool
	// Devices has one entry per device file (one entry holding every file
	// for MultipleFiles); empty without File.
	Devices []GresDevice
	// Cores is Cores=/CPUs= as written; CoreIDs are the abstract core ids
	// (CPU ids in CoresCPUIDs mode) and CPUIDs the machine CPU ids. Both
	// are nil when Cores= is absent or was rejected.
	Cores   string
	CoreIDs []int
	CPUIDs  []int
	CPUs    int // the node's CPU count ("CoreCnt")
	Links   []int
	Flags   List
	// Source is the gres.conf line; nil for a record made from slurm.conf
	// alone (Count from Gres=, or a zero-count placeholder).
	Source *GresRecord
}

// GresDevice is one device of a record.
type GresDevice struct {
	// Index is the number at the end of the (first) file name, -1 if none
	// (slurmd's "Index=").
	Index int
	Path  string
	// Paths holds every file of a MultipleFiles record.
	Paths []string
	Links []int
}

// gresContexts returns the GRES names in gres_init's order: GresTypes with
// duplicates dropped and mps/shard moved after the others when they come
// before gpu.
func gresContexts(types List) []string {
	var out, shared []string
	haveGPU := false
	for _, t := range types {
		if sharedGres(t) && !haveGPU {
			shared = append(shared, t)
			continue
		}
		if t == "gpu" {
			haveGPU = true
		}
		out = append(out, t)
	}
	out = append(out, shared...)
	var uniq []string
	seen := map[string]bool{}
	for _, t := range out {
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	return uniq
}

// slurmGres is one GRES name's slurm.conf configuration for a node: the
// total and the per-type counts in order of first appearance.
type slurmGres struct {
	total  uint64
	types  []string
	counts []uint64
	found  bool
}

func nodeSlurmGres(specs []GresSpec, name string) slurmGres {
	var s slurmGres
	for _, g := range specs {
		if g.Name != name {
			continue
		}
		s.found = true
		s.total += g.Count
		if g.Type == "" {
			continue
		}
		i := 0
		for ; i < len(s.types); i++ {
			if strings.EqualFold(s.types[i], g.Type) {
				s.counts[i] += g.Count
				break
			}
		}
		if i == len(s.types) {
			s.types = append(s.types, g.Type)
			s.counts = append(s.counts, g.Count)
		}
	}
	return s
}

// ResolveNode returns node's effective GRES: the gres.conf records for the
// node checked per GRES name (File=/Type= on all records or none, no
// duplicate plain records), Cores= checked against cpus (nil: the slurm.conf
// layout), then merged with the node's slurm.conf Gres= the way slurmd does
// it: gres.conf counts beyond slurm.conf's are cut (with slurmd's WARNING),
// slurm.conf counts without a gres.conf line become file-less records (GPUs
// without a file are dropped, as slurmd does), names configured nowhere get
// a zero-count record. Fatal conditions come back as an ErrorList in
// Slurm's wording.
//
// Unlike slurmd, gres.conf lines for other nodes were already checked by
// LoadGres (slurmd skips them unparsed). Device files are not stat()ed,
// and AutoDetect (NVML etc.) and the mps/shard per-GPU split are not run.
func (g *GresConfig) ResolveNode(c *Config, node string, cpus *NodeCPUs) (*NodeGres, error) {
	var nl *NodeLine
	for i := range c.Nodes {
		if c.Nodes[i].Name == node {
			nl = c.NodeLines[c.Nodes[i].Line]
			break
		}
	}
	if nl == nil {
		return nil, ErrorList{{Severity: SevError, Msg: "Unable to determine this slurmd's NodeName"}}
	}
	lay := NodeCPUsFromConfig(nl)
	if cpus != nil {
		lay = *cpus
	}
	var d diags
	if lay.CPUs <= 0 {
		d.errorf(Pos{}, "gres_g_node_config_load: Invalid cpu_cnt of 0 for node %s", node)
		return nil, d.errs()
	}
	ng := &NodeGres{Node: node}
	var recs []*GresRecord
	if g != nil {
		recs, ng.AutoDetect = g.ForNode(node)
		// slurmd collects the Name= lines before the NodeName= lines.
		var byName, byNode []*GresRecord
		for _, r := range recs {
			if r.nodes == nil {
				byName = append(byName, r)
			} else {
				byNode = append(byNode, r)
			}
		}
		recs = append(byName, byNode...)
		if lay.Mode == CoresCPUIDs && ng.AutoDetect != "" && !strings.EqualFold(ng.AutoDetect, "off") {
			d.errorf(Pos{}, "Cannot use AutoDetect on cloud node \"%s\"", node)
			return nil, d.errs()
		}
	}
	var shared, gpu bool
	for _, t := range c.GresTypes {
		shared = shared || sharedGres(t)
		gpu = gpu || t == "gpu"
	}
	if shared && !gpu {
		d.errorf(Pos{}, "GresTypes: gres/'shared' requires that gres/gpu also be configured")
		return nil, d.errs()
	}
	names := gresContexts(c.GresTypes)

	// Per-record data (Cores) first: slurmd checks it while parsing.
	work := make([]*NodeGresRecord, 0, len(recs))
	for _, r := range recs {
		w := &NodeGresRecord{Name: r.Name, Type: r.Type, Count: r.Count, File: r.File, MultipleFiles: r.MultipleFiles,
			Cores: r.Cores, CPUs: lay.CPUs, Links: r.Links, Flags: r.Flags, Source: r}
		if r.Cores != "" {
			w.CoreIDs, w.CPUIDs = resolveCores(&d, r, lay)
		}
		work = append(work, w)
	}
	if errs := d.errs(); len(errs) > 0 {
		return nil, errs
	}

	for _, name := range names {
		sg := nodeSlurmGres(nl.Gres, name)
		if len(sg.types) > 0 {
			var typed uint64
			for _, n := range sg.counts {
				typed += n
			}
			if sg.total > typed {
				d.errorf(nl.Pos, "_foreach_slurm_conf: Some %s GRES in slurm.conf have a type while others do not (gres_ns->gres_cnt_config (%d) > tmp_count (%d))", name, sg.total, typed)
				return nil, d.errs()
			}
		}
		hasFile, hasType, n := -1, -1, 0
		for _, w := range work {
			if !strings.EqualFold(w.Name, name) {
				continue
			}
			n++
			f, t := b2i(w.File != ""), b2i(w.Source.Type != "")
			if hasFile == -1 {
				hasFile = f
			} else if hasFile != f {
				d.errorf(w.Source.Pos, "gres.conf for %s, some records have \"File\" specification while others do not", name)
				return nil, d.errs()
			}
			if hasType == -1 {
				hasType = t
			} else if hasType != t {
				d.errorf(w.Source.Pos, "gres.conf for %s, some records have \"Type=\" specification while others do not", name)
				return nil, d.errs()
			}
			if hasFile == 0 && hasType == 0 && n > 1 {
				d.errorf(w.Source.Pos, "gres.conf duplicate records for %s", name)
				return nil, d.errs()
			}
		}
		if sg.found {
			checkConfMismatch(&d, work, name, sg)
		}
	}

	// _merge_config
	for _, name := range names {
		sg := nodeSlurmGres(nl.Gres, name)
		if !sg.found {
			ng.Records = append(ng.Records, &NodeGresRecord{Name: name, CPUs: lay.CPUs})
			continue
		}
		if len(sg.types) == 0 {
			work = mergeGres(ng, work, name, "", sg.total, lay.CPUs)
			continue
		}
		for i, t := range sg.types {
			work = mergeGres(ng, work, name, t, sg.counts[i], lay.CPUs)
		}
	}
	// Every GPU without a File is dropped from the final list.
	out := ng.Records[:0]
	for _, r := range ng.Records {
		if r.Name == "gpu" && r.File == "" {
			continue
		}
		out = append(out, r)
	}
	ng.Records = out
	for _, r := range ng.Records {
		r.Devices = gresDevices(r)
	}
	ng.Warnings = d.warnings()
	return ng, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// resolveCores checks Cores= against the layout (see CoresMode).
func resolveCores(d *diags, r *GresRecord, lay NodeCPUs) (cores, cpus []int) {
	if lay.Mode == CoresCPUIDs {
		ids, ok := bitUnfmt(r.Cores, lay.CPUs)
		if !ok {
			d.errorf(r.Pos, "Invalid GRES data for %s, Cores=%s (only %d CPUs are available)", r.Name, r.Cores, lay.CPUs)
			return nil, nil
		}
		return ids, ids
	}
	total := lay.Sockets * lay.CoresPerSocket
	mach := lay.MachineCPUs
	if mach <= 0 {
		mach = lay.CPUs
	}
	ids, ok := bitUnfmt(r.Cores, total)
	if !ok || total <= 0 {
		d.warnf(r.Pos, "xcpuinfo_abs_to_mac: failed")
		d.warnf(r.Pos, "Invalid GRES data for %s, Cores=%s", r.Name, r.Cores)
		return nil, nil
	}
	threads := lay.ThreadsPerCore
	if threads <= 0 {
		threads = 1
	}
	set := make([]bool, mach)
	for _, core := range ids {
		for t := 0; t < threads; t++ {
			abs := (core*threads + t) % mach
			m := abs
			if abs < len(lay.BlockMap) {
				m = lay.BlockMap[abs] % mach
			}
			set[m] = true
		}
	}
	for i, on := range set {
		if on {
			cpus = append(cpus, i)
		}
	}
	return ids, cpus
}

// bitUnfmt reads a bit_unfmt list ("0-3,8", "1-17:4"; other bytes are
// skipped) into ascending ids below size; false when an id is out of range.
func bitUnfmt(s string, size int) ([]int, bool) {
	set := map[int]bool{}
	add := func(a, b, step int64) bool {
		for i := a; i <= b; i += step {
			if i < 0 || i >= int64(size) {
				return false
			}
			set[int(i)] = true
		}
		return true
	}
	if s == "" {
		return nil, true
	}
	if strings.Contains(s, ":") {
		a, rest, _ := strings.Cut(s, "-")
		b, step, _ := strings.Cut(rest, ":")
		first, err1 := strconv.ParseInt(a, 10, 32)
		last, err2 := strconv.ParseInt(b, 10, 32)
		st, err3 := strconv.ParseInt(step, 10, 32)
		if err1 != nil || err2 != nil || err3 != nil || last < first || st <= 0 {
			return nil, false
		}
		for i := first; i < last; i += st {
			if !add(i, i, 1) {
				return nil, false
			}
		}
	} else {
		var sum, start int64 = 0, -1
		for i := 0; i <= len(s); i++ {
			c := byte(0)
			if i < len(s) {
				c = s[i]
			}
			switch {
			case c >= '0' && c <= '9':
				sum = int64(int32(sum*10 + int64(c-'0')))
			case c == '-':
				start, sum = sum, 0
			case c == ',' || c == 0:
				if i == 0 {
					return nil, true
				}
				if start == -1 {
					start = sum
				}
				if start < 0 || sum < 0 || !add(start, sum, 1) {
					return nil, false
				}
				start, sum = -1, 0
			}
		}
	}
	out := make([]int, 0, len(set))
	for i := 0; i < size && len(out) < len(set); i++ {
		if set[i] {
			out = append(out, i)
		}
	}
	return out, true
}

// checkConfMismatch logs the gres.conf lines of name whose counts exceed
// what slurm.conf configures (_check_conf_mismatch).
func checkConfMismatch(d *diags, work []*NodeGresRecord, name string, sg slurmGres) {
	type left struct {
		w     *NodeGresRecord
		count uint64
	}
	var tmp []*left
	for _, w := range work {
		if strings.EqualFold(w.Name, name) {
			tmp = append(tmp, &left{w, w.Count})
		}
	}
	use := func(count uint64, typ string) {
		for _, l := range tmp {
			if !strings.EqualFold(l.w.Type, typ) {
				continue
			}
			if l.count > count {
				l.count -= count
				return
			}
			count -= l.count
			l.count = 0
		}
	}
	if len(sg.types) == 0 {
		use(sg.total, "")
	}
	for i, t := range sg.types {
		use(sg.counts[i], t)
	}
	for _, l := range tmp {
		if l.count > 0 {
			typ := ""
			if l.w.Type != "" {
				typ = ":" + l.w.Type
			}
			d.warnf(l.w.Source.Pos, "WARNING: A line in gres.conf for GRES %s%s has %d more configured than expected in slurm.conf. Ignoring extra GRES.", l.w.Name, typ, l.count)
		}
	}
}

// mergeGres moves the gres.conf records matching one slurm.conf name[:type]
// count from work into ng (_merge_gres2) and returns what is left of work.
func mergeGres(ng *NodeGres, work []*NodeGresRecord, name, typ string, count uint64, cpus int) []*NodeGresRecord {
	if count == 0 {
		return work
	}
	for count > 0 {
		i := -1
		for j, w := range work {
			if !strings.EqualFold(w.Name, name) {
				continue
			}
			if typ != "" && !strings.EqualFold(w.Type, typ) {
				continue
			}
			i = j
			break
		}
		if i < 0 {
			break
		}
		m := work[i]
		work = append(work[:i:i], work[i+1:]...)
		if typ == "" {
			m.Type = "" // an untyped slurm.conf GRES takes any record, untyped
		}
		ng.Records = append(ng.Records, m)
		if m.Count > count {
			m.Count = count
			if m.File != "" && !m.MultipleFiles {
				m.File = truncateFiles(m.File, count)
			}
			count = 0
		} else {
			count -= m.Count
		}
	}
	if count > 0 {
		ng.Records = append(ng.Records, &NodeGresRecord{Name: name, Type: typ, Count: count, CPUs: cpus})
	}
	return work
}

// truncateFiles keeps the first n files of a File= expression.
func truncateFiles(expr string, n uint64) string {
	files, err := hostlist.Expand(expr)
	if err != nil || uint64(len(files)) <= n {
		return expr
	}
	return hostlist.Compress(files[:n])
}

// gresDevices lists a record's device files with their index and Links.
func gresDevices(r *NodeGresRecord) []GresDevice {
	if r.File == "" {
		return nil
	}
	files, err := hostlist.Expand(r.File)
	if err != nil || len(files) == 0 {
		return nil
	}
	if r.MultipleFiles {
		return []GresDevice{{Index: fileIndex(files[0]), Path: files[0], Paths: files, Links: r.Links}}
	}
	out := make([]GresDevice, len(files))
	for i, f := range files {
		out[i] = GresDevice{Index: fileIndex(f), Path: f, Links: r.Links}
	}
	return out
}

// fileIndex is the number a device file name ends with, -1 if none.
func fileIndex(path string) int {
	i := len(path)
	for i > 0 && path[i-1] >= '0' && path[i-1] <= '9' {
		i--
	}
	if i == len(path) {
		return -1
	}
	n, err := strconv.Atoi(path[i:])
	if err != nil {
		return -1
	}
	return n
}
