package conf

import (
	"path"
	"strings"
)

// CgroupConfig is a parsed cgroup.conf with 22.05's defaults.
type CgroupConfig struct {
	CgroupPlugin           string // "autodetect" unless set
	CgroupMountpoint       string // trailing '/' removed
	CgroupAutomount        bool
	IgnoreSystemd          bool
	IgnoreSystemdOnFailure bool
	ConstrainCores         bool
	ConstrainRAMSpace      bool
	ConstrainSwapSpace     bool
	ConstrainDevices       bool
	ConstrainKmemSpace     bool
	AllowedRAMSpace        float64 // percent
	AllowedSwapSpace       float64 // percent
	AllowedKmemSpace       float64 // percent; -1 = unset
	MaxRAMPercent          float64
	MaxSwapPercent         float64
	MaxKmemPercent         float64
	MinRAMSpace            MB
	MinKmemSpace           MB
	MemorySwappiness       uint64 // Infinite64 = unset (NO_VAL64 in Slurm)
	// MemoryLimitEnforcement and MemoryLimitThreshold are accepted and
	// ignored by 22.05, as is AllowedDevicesFile (with a warning).
	MemoryLimitEnforcement bool
	MemoryLimitThreshold   float64

	Set      map[string]Pos
	Files    []string
	Warnings []Diagnostic
}

var cgroupKeys = recordTable(
	recordKey{"CgroupAutomount", "bool"}, recordKey{"CgroupMountpoint", "str"},
	recordKey{"CgroupReleaseAgentDir", "str"}, recordKey{"ConstrainCores", "bool"},
	recordKey{"ConstrainRAMSpace", "bool"}, recordKey{"AllowedRAMSpace", "float"},
	recordKey{"MaxRAMPercent", "float"}, recordKey{"MinRAMSpace", "u64"},
	recordKey{"ConstrainSwapSpace", "bool"}, recordKey{"ConstrainKmemSpace", "bool"},
	recordKey{"AllowedKmemSpace", "float"}, recordKey{"MaxKmemPercent", "float"},
	recordKey{"MinKmemSpace", "u64"}, recordKey{"AllowedSwapSpace", "float"},
	recordKey{"MaxSwapPercent", "float"}, recordKey{"MemoryLimitEnforcement", "bool"},
	recordKey{"MemoryLimitThreshold", "float"}, recordKey{"ConstrainDevices", "bool"},
	recordKey{"AllowedDevicesFile", "str"}, recordKey{"MemorySwappiness", "u64"},
	recordKey{"CgroupPlugin", "str"}, recordKey{"IgnoreSystemd", "bool"},
	recordKey{"IgnoreSystemdOnFailure", "bool"},
)

// CgroupKeys returns the keys cgroup.conf accepts in 22.05.
func CgroupKeys() []string {
	var out []string
	for _, k := range cgroupKeys {
		out = append(out, k.Name)
	}
	return out
}

// readSimple reads a file whose lines each hold one Key=Value (cgroup.conf).
func readSimple(fsys FileSystem, name string, keys map[string]recordKey, d *diags) (map[string]rawVal, []string) {
	raw := map[string]rawVal{}
	lx := &lexer{fsys: fsys, d: d}
	lx.emit = func(l Line) {
		if len(l.Pairs) == 0 {
			if !onlySpace(l.Rest) {
				d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, strings.TrimRight(l.Rest, "\r\n"))
			}
			return
		}
		pr := l.Pairs[0]
		k, ok := keys[strings.ToLower(pr.Key)]
		if !ok {
			d.errorf(l.Pos, "_parse_next_key: Parsing error at unrecognized key: %s", pr.Key)
			return
		}
		if err := checkScalar(k.Name, k.Kind, pr.Value); err != nil {
			d.errorf(l.Pos, "%s", err)
			return
		}
		if _, dup := raw[k.Name]; dup {
			d.warnf(l.Pos, "%s 1 specified more than once, latest value used", k.Name)
		}
		raw[k.Name] = rawVal{Value: pr.Value, Op: pr.Op, Pos: l.Pos}
		if len(l.Pairs) > 1 || !onlySpace(l.Rest) {
			d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, l.after(0))
		}
	}
	lx.run(path.Clean(name), Pos{})
	return raw, lx.files
}

// LoadCgroup reads cgroup.conf. A missing file is not an error for Slurm
// (defaults apply); callers decide whether to call LoadCgroup at all.
func LoadCgroup(fsys FileSystem, name string) (*CgroupConfig, error) {
	var d diags
	raw, files := readSimple(fsys, name, cgroupKeys, &d)
	c := &CgroupConfig{
		CgroupPlugin: "autodetect", CgroupMountpoint: "/sys/fs/cgroup",
		AllowedRAMSpace: 100, MaxRAMPercent: 100, MinRAMSpace: 30,
		AllowedKmemSpace: -1, MaxKmemPercent: 100, MinKmemSpace: 30,
		MaxSwapPercent: 100, MemorySwappiness: Infinite64,
		Set: map[string]Pos{}, Files: files,
	}
	str := func(k string) (string, bool) { v, ok := raw[k]; return v.Value, ok }
	b := func(k string, dst *bool) {
		if v, ok := str(k); ok {
			*dst, _ = ParseBool(k, v)
		}
	}
	f := func(k string, dst *float64) {
		if v, ok := str(k); ok {
			*dst, _ = ParseFloat(k, v)
		}
	}
	for k, v := range raw {
		c.Set[k] = v.Pos
	}
	b("CgroupAutomount", &c.CgroupAutomount)
	if v, ok := str("CgroupMountpoint"); ok {
		c.CgroupMountpoint = strings.TrimSuffix(v, "/")
	}
	if _, ok := str("CgroupReleaseAgentDir"); ok {
		d.errorf(raw["CgroupReleaseAgentDir"].Pos, "Support for CgroupReleaseAgentDir option has been removed.")
	}
	b("ConstrainCores", &c.ConstrainCores)
	b("ConstrainRAMSpace", &c.ConstrainRAMSpace)
	f("AllowedRAMSpace", &c.AllowedRAMSpace)
	f("MaxRAMPercent", &c.MaxRAMPercent)
	b("ConstrainSwapSpace", &c.ConstrainSwapSpace)
	b("ConstrainKmemSpace", &c.ConstrainKmemSpace)
	f("AllowedKmemSpace", &c.AllowedKmemSpace)
	f("MaxKmemPercent", &c.MaxKmemPercent)
	if v, ok := str("MinKmemSpace"); ok {
		n, _ := ParseUint64("MinKmemSpace", v)
		c.MinKmemSpace = MB(n)
	}
	f("AllowedSwapSpace", &c.AllowedSwapSpace)
	f("MaxSwapPercent", &c.MaxSwapPercent)
	if v, ok := str("MinRAMSpace"); ok {
		n, _ := ParseUint64("MinRAMSpace", v)
		c.MinRAMSpace = MB(n)
	}
	if v, ok := str("MemorySwappiness"); ok {
		c.MemorySwappiness, _ = ParseUint64("MemorySwappiness", v)
		if c.MemorySwappiness > 100 {
			d.warnf(raw["MemorySwappiness"].Pos, "Value for MemorySwappiness is too high, rounding down to 100.")
			c.MemorySwappiness = 100
		}
	}
	b("ConstrainDevices", &c.ConstrainDevices)
	if _, ok := str("AllowedDevicesFile"); ok {
		d.warnf(raw["AllowedDevicesFile"].Pos, "AllowedDevicesFile option is obsolete, please remove it from your configuration.")
	}
	b("MemoryLimitEnforcement", &c.MemoryLimitEnforcement)
	f("MemoryLimitThreshold", &c.MemoryLimitThreshold)
	if v, ok := str("CgroupPlugin"); ok {
		c.CgroupPlugin = v
	}
	b("IgnoreSystemd", &c.IgnoreSystemd)
	if c.IgnoreSystemd {
		c.IgnoreSystemdOnFailure = true
	} else {
		b("IgnoreSystemdOnFailure", &c.IgnoreSystemdOnFailure)
	}
	if errs := d.errs(); len(errs) > 0 {
		return nil, errs
	}
	c.Warnings = d.warnings()
	return c, nil
}
