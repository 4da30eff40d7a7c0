package conf

import (
	"path"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// GresConfig is a parsed gres.conf.
type GresConfig struct {
	// AutoDetect is the global AutoDetect= value ("" if not given).
	AutoDetect string
	Records    []*GresRecord
	Files      []string
	Warnings   []Diagnostic
}

// GresRecord is one Name= or NodeName= line.
type GresRecord struct {
	Pos Pos
	// NodeName is the hostlist expression of the nodes the line applies
	// to; "" means every node.
	NodeName string
	Name     string // gpu, mps, shard, or any GresTypes name
	Type     string
	// File is the File= (or MultipleFiles=) value as written; Files is
	// its expansion.
	File          string
	Files         []string
	MultipleFiles bool
	// Count is the number of GRES; defaults to the number of Files, or 1.
	Count uint64
	Cores string // core ids ("0-15,32-47"); CPUs= is the deprecated alias
	Links []int  // NVLink row; nil if absent or invalid
	Flags List
	// AutoDetect is an in-line node-local AutoDetect= (NodeName lines).
	AutoDetect string

	nodes *hostlist.Hostlist
}

var gresLineKeys = recordTable(
	recordKey{"AutoDetect", "str"}, recordKey{"Count", "str"}, recordKey{"CPUs", "str"},
	recordKey{"Cores", "str"}, recordKey{"File", "str"}, recordKey{"Files", "str"},
	recordKey{"Flags", "str"}, recordKey{"Link", "str"}, recordKey{"Links", "str"},
	recordKey{"MultipleFiles", "str"}, recordKey{"Name", "str"}, recordKey{"Type", "str"},
)

// shared GRES may count more than one per file.
func sharedGres(name string) bool { return name == "mps" || name == "shard" }

func validAutoDetect(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "nvml") || strings.Contains(l, "rsmi") || strings.Contains(l, "oneapi") || l == "off"
}

// LoadGres reads gres.conf. gresTypes is slurm.conf's GresTypes; when
// non-nil, records naming another GRES are dropped with Slurm's message.
func LoadGres(fsys FileSystem, name string, gresTypes List) (*GresConfig, error) {
	g := &GresConfig{}
	p := &parser{}
	lx := &lexer{fsys: fsys, d: &p.d}
	lx.emit = func(l Line) { g.line(p, &l, gresTypes) }
	lx.run(path.Clean(name), Pos{})
	g.Files = lx.files
	if errs := p.d.errs(); len(errs) > 0 {
		return nil, errs
	}
	g.Warnings = p.d.warnings()
	return g, nil
}

func (g *GresConfig) line(p *parser, l *Line, gresTypes List) {
	if len(l.Pairs) == 0 {
		if !onlySpace(l.Rest) {
			p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, strings.TrimRight(l.Rest, "\r\n"))
		}
		return
	}
	first := l.Pairs[0]
	switch strings.ToLower(first.Key) {
	case "autodetect":
		if !validAutoDetect(first.Value) {
			p.d.warnf(l.Pos, "unknown autodetect flag '%s'", first.Value)
		}
		g.AutoDetect = first.Value
		if len(l.Pairs) > 1 || !onlySpace(l.Rest) {
			p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, l.after(0))
		}
	case "name", "nodename":
		tbl := p.parseRecord(l, gresLineKeys)
		g.record(p, l.Pos, strings.EqualFold(first.Key, "nodename"), first.Value, tbl, gresTypes)
	default:
		p.d.errorf(l.Pos, "_parse_next_key: Parsing error at unrecognized key: %s", first.Key)
	}
}

func (g *GresConfig) record(p *parser, pos Pos, isNode bool, value string, tbl record, gresTypes List) {
	r := &GresRecord{Pos: pos}
	fatal := func(format string, args ...any) { p.d.errorf(pos, format, args...) }
	if v, ok := tbl.get("AutoDetect"); ok {
		if !isNode {
			p.d.warnf(pos, "gres.conf: In-line AutoDetect requires NodeName to take effect")
		} else {
			if !validAutoDetect(v) {
				p.d.warnf(pos, "unknown autodetect flag '%s'", v)
			}
			r.AutoDetect = v
		}
	}
	if isNode {
		r.NodeName = value
		hl, err := hostlist.Parse(value)
		if err != nil {
			fatal("Unable to create NodeName list from %s", value)
			return
		}
		r.nodes = hl
		r.Name, _ = tbl.get("Name")
	} else {
		r.Name = value
	}
	if r.Name == "" {
		if r.AutoDetect == "" {
			p.d.warnf(pos, "Invalid GRES data, no type name (%s)", value)
			return
		}
		g.Records = append(g.Records, r)
		return
	}
	r.Type, _ = tbl.get("Type")
	if v, ok := tbl.get("Cores"); ok {
		r.Cores = v
	} else if v, ok := tbl.get("CPUs"); ok {
		r.Cores = v
	}
	if r.Cores != "" && strings.Trim(r.Cores, "0123456789,-") != "" {
		fatal("Invalid GRES data for %s, Cores=%s", r.Name, r.Cores)
	}
	var fileCount uint64
	if v, ok := tbl.get("File"); ok {
		r.File = v
	} else if v, ok := tbl.get("Files"); ok {
		r.File = v
	}
	if r.File != "" {
		files, err := hostlist.Expand(r.File)
		if err != nil {
			fatal("can't parse File=%s", r.File)
			return
		}
		r.Files = files
		fileCount = uint64(len(files))
	}
	if v, ok := tbl.get("MultipleFiles"); ok {
		if r.File != "" {
			fatal("File and MultipleFiles options are mutually exclusive")
			return
		}
		files, err := hostlist.Expand(v)
		if err != nil {
			fatal("can't parse File=%s", v)
			return
		}
		if len(files) < 2 {
			fatal("MultipleFiles does not contain multiple files. Use File instead")
			return
		}
		r.File, r.Files, r.MultipleFiles, fileCount = v, files, true, 1
	}
	if v, ok := tbl.get("Flags"); ok {
		r.Flags = splitList(v)
		lv := strings.ToLower(v)
		env := false
		for _, e := range []string{"nvidia_gpu_env", "amd_gpu_env", "intel_gpu_env", "opencl_env"} {
			if strings.Contains(lv, e) {
				env = true
			}
		}
		if env && strings.Contains(lv, "no_gpu_env") {
			fatal("Invalid GRES record name=%s type=%s: Flags (%s) contains \"no_gpu_env\", which must be mutually exclusive to all other GRES env flags of same node and name", r.Name, r.Type, v)
		}
	}
	links, ok := tbl.get("Links")
	if !ok {
		links, ok = tbl.get("Link")
	}
	if ok {
		if l, good := parseLinks(links); good {
			r.Links = l
		} else {
			p.d.warnf(pos, "gres.conf: Ignoring invalid Links=%s for Name=%s", links, r.Name)
		}
	}
	r.Count = fileCount
	if v, ok := tbl.get("Count"); ok {
		n, good := ParseCount(v)
		if !good || n >= Infinite64-1 {
			fatal("Invalid GRES record for %s, invalid count %s", r.Name, v)
			return
		}
		if fileCount != 0 && fileCount != n && !sharedGres(r.Name) {
			fatal("Invalid GRES record for %s, count does not match File value", r.Name)
			return
		}
		r.Count = n
	} else if r.Count == 0 {
		r.Count = 1
	}
	if gresTypes != nil && !gresTypes.Has(r.Name) {
		p.d.warnf(pos, "Ignoring gres.conf record, invalid name: %s", r.Name)
		return
	}
	g.Records = append(g.Records, r)
}

// parseLinks reads a comma list of integers holding exactly one -1.
func parseLinks(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var out []int
	self := 0
	for _, t := range strings.Split(s, ",") {
		n, err := strconv.Atoi(t)
		if err != nil || n < -1 {
			return nil, false
		}
		if n == -1 {
			self++
		}
		out = append(out, n)
	}
	return out, self == 1
}

// ForNode returns the records that apply to node (lines without NodeName
// and lines whose NodeName hostlist holds node, in file order) and the
// AutoDetect mode in force there (node-local first, then global).
func (g *GresConfig) ForNode(node string) ([]*GresRecord, string) {
	var out []*GresRecord
	auto := ""
	for _, r := range g.Records {
		if r.nodes != nil && r.nodes.Find(node) < 0 {
			continue
		}
		if r.AutoDetect != "" && auto == "" {
			auto = r.AutoDetect
		}
		if r.Name != "" {
			out = append(out, r)
		}
	}
	if auto == "" {
		auto = g.AutoDetect
	}
	return out, auto
}
