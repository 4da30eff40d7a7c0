package conf

import (
	"path"
	"strings"
)

// rawVal is the (last) value given for a simple key.
type rawVal struct {
	Value string
	Op    Op
	Pos   Pos
}

type parser struct {
	fsys FileSystem
	d    diags
	raw  map[string]rawVal // canonical key -> value
	cfg  *Config

	nodeDefault, partDefault, frontDefault record
	nodeRecs                               []nodeRec
	partRecs                               []partRec
}

type nodeRec struct {
	pos  Pos
	name string
	tbl  record
	dflt record
}

type partRec struct {
	pos  Pos
	name string
	tbl  record
	dflt record
}

// Load reads the slurm.conf at name (and every file it includes) from fsys,
// applies 22.05's defaults and validates it. On failure it returns a nil
// Config and an ErrorList holding every error found.
func Load(fsys FileSystem, name string) (*Config, error) {
	p := &parser{fsys: fsys, raw: make(map[string]rawVal), cfg: &Config{}}
	name = path.Clean(name)
	lx := &lexer{fsys: fsys, d: &p.d, emit: p.line}
	lx.cluster = func() (string, bool) {
		v, ok := p.raw["ClusterName"]
		return v.Value, ok
	}
	lx.run(name, Pos{})
	p.cfg.Files = lx.files
	p.finish()
	if errs := p.d.errs(); len(errs) > 0 {
		return nil, errs
	}
	p.cfg.Warnings = p.d.warnings()
	return p.cfg, nil
}

// Parse reads slurm.conf text held in memory; name is used in positions
// and to resolve relative Include paths inside fsys (which may be nil).
func Parse(name string, data []byte, fsys FileSystem) (*Config, error) {
	name = path.Clean(name)
	over := overlayFS{name: name, data: data, next: fsys}
	return Load(over, name)
}

// overlayFS serves one file from memory and the rest from next.
type overlayFS struct {
	name string
	data []byte
	next FileSystem
}

func (o overlayFS) ReadFile(n string) ([]byte, error) {
	if path.Clean(n) == o.name {
		return o.data, nil
	}
	if o.next == nil {
		return MapFS{}.ReadFile(n)
	}
	return o.next.ReadFile(n)
}

func (o overlayFS) Glob(p string) ([]string, error) {
	if o.next == nil {
		return MapFS{o.name: ""}.Glob(p)
	}
	return o.next.Glob(p)
}

// line interprets one logical line of slurm.conf.
func (p *parser) line(l Line) {
	if len(l.Pairs) == 0 {
		if !onlySpace(l.Rest) {
			p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line,
				strings.TrimRight(l.Rest, "\r\n"))
		}
		return
	}
	first := l.Pairs[0]
	k, ok := topKeyIndex[strings.ToLower(first.Key)]
	if !ok {
		p.d.errorf(l.Pos, "_parse_next_key: Parsing error at unrecognized key: %s", first.Key)
		return
	}
	if k.Kind == "record" {
		p.recordLine(k.Name, &l)
		return
	}
	if err := checkScalar(k.Name, k.Kind, first.Value); err != nil {
		p.d.errorf(l.Pos, "%s", err)
		return
	}
	if k.Name == "SchedulerAuth" {
		p.d.warnf(l.Pos, "The option \"%s\" is defunct, see man slurm.conf.", k.Name)
	}
	if _, dup := p.raw[k.Name]; dup {
		p.d.warnf(l.Pos, "%s 1 specified more than once, latest value used", k.Name)
	}
	if first.Op != OpSet {
		p.d.warnf(l.Pos, "operator %s has no effect on %s, value assigned as with =", first.Op, k.Name)
	}
	p.raw[k.Name] = rawVal{Value: first.Value, Op: first.Op, Pos: l.Pos}
	if len(l.Pairs) > 1 || !onlySpace(l.Rest) {
		p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, l.after(0))
	}
}

func (p *parser) recordLine(kind string, l *Line) {
	value := l.Pairs[0].Value
	switch kind {
	case "SlurmctldHost":
		p.parseRecord(l, slurmctldHostKeys)
		p.slurmctldHost(l.Pos, value)
	case "NodeName":
		tbl := p.parseRecord(l, nodeKeys)
		p.nodeLine(l.Pos, value, tbl)
	case "PartitionName":
		tbl := p.parseRecord(l, partitionKeys)
		if strings.EqualFold(value, "DEFAULT") {
			p.partDefault = mergeDefault(p.partDefault, tbl)
			return
		}
		p.partRecs = append(p.partRecs, partRec{pos: l.Pos, name: value, tbl: tbl, dflt: p.partDefault})
	case "NodeSet":
		tbl := p.parseRecord(l, nodeSetKeys)
		ns := &NodeSet{Pos: l.Pos, Name: value}
		ns.Feature, _ = tbl.get("Feature")
		ns.Nodes, _ = tbl.get("Nodes")
		p.cfg.NodeSets = append(p.cfg.NodeSets, ns)
	case "DownNodes":
		tbl := p.parseRecord(l, downNodesKeys)
		dn := &DownNodes{Pos: l.Pos, Nodes: value, Reason: "Set in slurm.conf"}
		if r, ok := tbl.get("Reason"); ok {
			dn.Reason = r
		}
		dn.State, _ = tbl.get("State")
		p.cfg.DownNodes = append(p.cfg.DownNodes, dn)
	case "FrontendName":
		tbl := p.parseRecord(l, frontendKeys)
		p.frontendLine(l.Pos, value, tbl)
	}
}

// slurmctldHost reads "host" or "host(addr)".
func (p *parser) slurmctldHost(pos Pos, value string) {
	op := strings.IndexByte(value, '(')
	cl := strings.IndexByte(value, ')')
	if (op >= 0) != (cl >= 0) || (cl >= 0 && (cl != len(value)-1 || cl != strings.LastIndexByte(value, ')'))) {
		p.d.errorf(pos, "Bad value \"%s\" for SlurmctldHost", value)
		return
	}
	h := ControllerHost{Host: value, Addr: value, Pos: pos}
	if op >= 0 {
		h.Host = value[:op]
		h.Addr = value[op+1 : cl]
		if i := strings.IndexByte(h.Addr, ')'); i >= 0 {
			h.Addr = h.Addr[:i]
		}
	}
	p.cfg.SlurmctldHost = append(p.cfg.SlurmctldHost, h)
	if p.cfg.Set == nil {
		p.cfg.Set = make(map[string]Pos)
	}
	p.cfg.Set["SlurmctldHost"] = pos
}

// finish applies values and defaults, builds records and validates.
func (p *parser) finish() {
	cfg := p.cfg
	if cfg.Set == nil {
		cfg.Set = make(map[string]Pos)
	}
	for _, k := range topKeys {
		if k.Kind == "record" {
			continue
		}
		rv, given := p.raw[k.Name]
		if given {
			cfg.Set[k.Name] = rv.Pos
		}
		if k.Kind == "special" {
			continue
		}
		switch {
		case given:
			if err := k.setField(cfg, rv.Value); err != nil {
				p.d.errorf(rv.Pos, "%s", err)
			}
		case k.HasDef:
			if err := k.setField(cfg, k.Default); err != nil {
				panic(err) // a broken default is a programming error
			}
		}
	}
	p.validateGlobals()
	p.checkFlagKeys()
	p.checkPlugins()
	p.buildNodes()
	p.buildPartitions()
	p.checkTRES()
	p.checkDownNodes()
	p.checkSchedulerParameters()
}
