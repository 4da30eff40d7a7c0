package conf

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// Switch is one SwitchName= line of topology.conf (TopologyPlugin=
// topology/tree), with its level in the tree: 0 for a leaf switch (one
// with Nodes=), one more than its highest child for the others.
type Switch struct {
	Pos       Pos
	Name      string
	Nodes     string // as written; "" for a switch of switches
	Switches  string // as written; "" for a leaf switch
	LinkSpeed uint32 // 1 unless set
	Level     uint16
}

// TopologyConfig is a parsed topology.conf: the switches in file order.
type TopologyConfig struct {
	Switches []Switch
	Files    []string
}

var switchKeys = recordTable(
	recordKey{"LinkSpeed", "u32"}, recordKey{"Nodes", "str"}, recordKey{"Switches", "str"},
)

// LoadTopology reads topology.conf and works out the switch levels. The
// errors are those slurmctld's topology/tree plugin stops on: an unknown
// key, a switch with both or neither of Nodes= and Switches=, a name
// defined twice, a child that is not a switch, a loop.
func LoadTopology(fsys FileSystem, name string) (*TopologyConfig, error) {
	t := &TopologyConfig{}
	p := &parser{}
	lx := &lexer{fsys: fsys, d: &p.d}
	lx.emit = func(l Line) { t.line(p, &l) }
	lx.run(path.Clean(name), Pos{})
	t.Files = lx.files
	if errs := p.d.errs(); len(errs) > 0 {
		return nil, errs
	}
	if err := t.levels(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *TopologyConfig) line(p *parser, l *Line) {
	if len(l.Pairs) == 0 {
		if !onlySpace(l.Rest) {
			p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line, strings.TrimRight(l.Rest, "\r\n"))
		}
		return
	}
	first := l.Pairs[0]
	if !strings.EqualFold(first.Key, "SwitchName") {
		p.d.errorf(l.Pos, "_parse_next_key: Parsing error at unrecognized key: %s", first.Key)
		return
	}
	tbl := p.parseRecord(l, switchKeys)
	s := Switch{Pos: l.Pos, Name: first.Value, LinkSpeed: 1}
	if v, ok := tbl.get("LinkSpeed"); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			p.d.errorf(l.Pos, "\"%s\" is not a valid number", v)
			return
		}
		s.LinkSpeed = uint32(n)
	}
	s.Nodes, _ = tbl.get("Nodes")
	s.Switches, _ = tbl.get("Switches")
	switch {
	case s.Nodes != "" && s.Switches != "":
		p.d.errorf(l.Pos, "switch %s has both child switches and nodes", s.Name)
		return
	case s.Nodes == "" && s.Switches == "":
		p.d.errorf(l.Pos, "switch %s has neither child switches nor nodes", s.Name)
		return
	}
	for _, o := range t.Switches {
		if o.Name == s.Name {
			p.d.errorf(l.Pos, "Switch (%s) has already been defined", s.Name)
			return
		}
	}
	t.Switches = append(t.Switches, s)
}

// levels gives each switch of switches one more than its highest child.
func (t *TopologyConfig) levels() error {
	idx := map[string]int{}
	for i, s := range t.Switches {
		idx[s.Name] = i
	}
	level := make([]int, len(t.Switches))
	for i, s := range t.Switches {
		if s.Switches != "" {
			level[i] = -1
		}
	}
	// Each pass resolves at least one level; more passes than switches
	// mean a loop.
	for pass := 0; ; pass++ {
		resolved := true
		for i, s := range t.Switches {
			if level[i] != -1 {
				continue
			}
			children, err := hostlist.Expand(s.Switches)
			if err != nil {
				return fmt.Errorf("%s: Invalid switches: %s", s.Pos, s.Switches)
			}
			l := 0
			for _, child := range children {
				j, ok := idx[child]
				if !ok || j == i {
					return fmt.Errorf("%s: Switch configuration %s has invalid child (%s)", s.Pos, s.Name, child)
				}
				if level[j] == -1 {
					l = -1
					break
				}
				l = max(l, level[j]+1)
			}
			if l == -1 {
				resolved = false
				continue
			}
			level[i] = l
		}
		if resolved {
			break
		}
		if pass > len(t.Switches) {
			return errors.New("Switch configuration is not a tree")
		}
	}
	for i := range t.Switches {
		t.Switches[i].Level = uint16(level[i])
	}
	return nil
}
