package conf

import (
	"fmt"
	"strconv"
	"strings"
)

// TRES checks done by slurmctld at start-up: the TRES table is built from
// AccountingStorageTRES (which always starts with the eight base TRES), and
// every weight string (partition TRESBillingWeights, node TRESWeights,
// PriorityWeightTRES with priority/multifactor) must name TRES of that
// table. Without slurmdbd only the base TRES can exist.

// tresRef is one TRES as Slurm keys it: a type and an optional name
// ("cpu", "gres"/"gpu", "fs"/"disk").
type tresRef struct{ typ, name string }

func (t tresRef) String() string {
	if t.name == "" {
		return t.typ
	}
	return t.typ + "/" + t.name
}

// withSlurmdbd reports whether accounting goes through slurmdbd (Slurm's
// slurm_with_slurmdbd).
func (c *Config) withSlurmdbd() bool {
	return strings.EqualFold(c.AccountingStorageType, "accounting_storage/slurmdbd")
}

// tresTable validates AccountingStorageTRES and returns the TRES slurmctld
// would know about. ok is false after a fatal problem.
func (p *parser) tresTable() ([]tresRef, bool) {
	c := p.cfg
	pos := p.pos("AccountingStorageTRES")
	var out []tresRef
	for _, item := range c.AccountingStorageTRES {
		l := strings.ToLower(item)
		var t tresRef
		fixed := false
		switch {
		case l == "cpu" || l == "mem" || l == "energy" || l == "node" || l == "billing" || l == "vmem" || l == "pages":
			t, fixed = tresRef{typ: l}, true
		default:
			typ, name, _ := strings.Cut(item, "/")
			switch strings.ToLower(typ) {
			case "bb", "gres", "license", "fs", "ic":
			default:
				p.d.errorf(pos, "_init_tres: Unknown tres type '%s', acceptable types are Billing,CPU,Energy,FS/,Gres/,IC/,License/,Mem,Node,Pages,VMem", item)
				return nil, false
			}
			if name == "" {
				p.d.errorf(pos, "TRES %s needs a name (for example gres/gpu)", item)
				return nil, false
			}
			t = tresRef{typ: strings.ToLower(typ), name: name}
			fixed = t.typ == "fs" && strings.HasPrefix(strings.ToLower(name), "disk")
		}
		if !fixed && !c.withSlurmdbd() {
			p.d.errorf(pos, "slurmdbd is required to run with TRES %s. Either setup slurmdbd or remove this TRES from your configuration.", t)
			return nil, false
		}
		out = append(out, t)
	}
	return out, true
}

// checkTRESWeights validates one weight string ("CPU=1.0,Mem=0.25G,
// GRES/gpu=2"); the error text is Slurm's fatal with the reason appended.
func checkTRESWeights(s string, table []tresRef) error {
	if s == "" {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("failed to parse tres weights str '%s': %s", s, fmt.Sprintf(format, args...))
	}
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue // strtok skips empty tokens
		}
		typ, val, _ := strings.Cut(item, "=")
		if typ == "" || val == "" {
			return fail("\"%s\" is an invalid TRES weight entry", item)
		}
		typ, name, _ := strings.Cut(typ, "/")
		found := false
		for _, t := range table {
			if strings.EqualFold(t.typ, typ) && strings.EqualFold(t.name, name) {
				found = true
				break
			}
		}
		if !found {
			shown := typ
			if name != "" {
				shown += ":" + name
			}
			return fail("TRES weight '%s' is not a configured TRES type.", shown)
		}
		// strtod, then an optional unit letter (K, M, G, T, P).
		n := floatPrefix(val)
		if unit := val[n:]; unit != "" && !strings.ContainsRune("KMGTP", rune(strings.ToUpper(unit)[0])) {
			return fail("Invalid unit type '%c'. Possible options are 'KMGTP'", unit[0])
		}
	}
	return nil
}

// floatPrefix returns the length of the longest prefix of s strtod reads.
func floatPrefix(s string) int {
	best := 0
	for i := 1; i <= len(s); i++ {
		if _, err := strconv.ParseFloat(s[:i], 64); err == nil {
			best = i
		}
	}
	return best
}

// checkTRES runs the start-up TRES checks of slurmctld.
func (p *parser) checkTRES() {
	table, ok := p.tresTable()
	if !ok || p.cfg.withSlurmdbd() {
		// With slurmdbd the table also holds every TRES of the database,
		// which a configuration parser cannot know.
		return
	}
	c := p.cfg
	if strings.EqualFold(c.PriorityType, "priority/multifactor") {
		if err := checkTRESWeights(c.PriorityWeightTRES.String(), table); err != nil {
			p.d.errorf(p.pos("PriorityWeightTRES"), "%s", err)
		}
	}
	for _, nl := range c.NodeLines {
		if err := checkTRESWeights(nl.TRESWeights, table); err != nil {
			p.d.errorf(nl.Pos, "%s", err)
		}
	}
	for _, pt := range c.Partitions {
		if err := checkTRESWeights(pt.TRESBillingWeights, table); err != nil {
			p.d.errorf(pt.Pos, "%s", err)
		}
	}
}
