package conf

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// Dump renders a Config as stable text: every key with its effective value
// and unit, then the records, the node table summary and the warnings.
// It is the format of the golden files.
func Dump(c *Config) string {
	var b strings.Builder
	b.WriteString("# files\n")
	for _, f := range c.Files {
		fmt.Fprintf(&b, "%s\n", f)
	}
	b.WriteString("# keys (* = set in file)\n")
	v := reflect.ValueOf(c).Elem()
	for _, k := range topKeys {
		if k.Kind == "record" {
			continue
		}
		mark := " "
		if _, ok := c.Set[k.Name]; ok {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %s = %s\n", mark, k.Name, formatValue(v.Field(k.field)))
	}
	b.WriteString("# SlurmctldHost\n")
	for _, h := range c.SlurmctldHost {
		fmt.Fprintf(&b, "%s host=%s addr=%s\n", h.Pos, h.Host, h.Addr)
	}
	b.WriteString("# NodeName lines\n")
	for _, n := range c.NodeLines {
		fmt.Fprintf(&b, "%s %s\n", n.Pos, formatRecord(reflect.ValueOf(n).Elem(), "Pos"))
	}
	fmt.Fprintf(&b, "# nodes: %d\n", len(c.Nodes))
	if len(c.Nodes) > 0 {
		names := make([]string, len(c.Nodes))
		hosts := make([]string, len(c.Nodes))
		addrs := make([]string, len(c.Nodes))
		var ports []string
		run := 0
		for i, n := range c.Nodes {
			names[i], hosts[i], addrs[i] = n.Name, n.Hostname, n.Addr
			run++
			if i == len(c.Nodes)-1 || c.Nodes[i+1].Port != n.Port {
				ports = append(ports, fmt.Sprintf("%d*%d", n.Port, run))
				run = 0
			}
		}
		fmt.Fprintf(&b, "names %s\nhostnames %s\naddrs %s\nports %s\n", hostlist.Compress(names),
			hostlist.Compress(hosts), hostlist.Compress(addrs), strings.Join(ports, ","))
	}
	b.WriteString("# PartitionName lines\n")
	for _, p := range c.Partitions {
		fmt.Fprintf(&b, "%s %s\n", p.Pos, formatRecord(reflect.ValueOf(p).Elem(), "Pos", "NodeNames"))
		fmt.Fprintf(&b, "    nodes(%d) %s\n", len(p.NodeNames), hostlist.Compress(p.NodeNames))
	}
	fmt.Fprintf(&b, "# default partition: %s\n", c.DefaultPartition)
	b.WriteString("# NodeSet lines\n")
	for _, n := range c.NodeSets {
		fmt.Fprintf(&b, "%s %s\n", n.Pos, formatRecord(reflect.ValueOf(n).Elem(), "Pos"))
	}
	b.WriteString("# DownNodes lines\n")
	for _, n := range c.DownNodes {
		fmt.Fprintf(&b, "%s %s\n", n.Pos, formatRecord(reflect.ValueOf(n).Elem(), "Pos"))
	}
	b.WriteString("# FrontendName lines\n")
	for _, n := range c.Frontends {
		fmt.Fprintf(&b, "%s %s\n", n.Pos, formatRecord(reflect.ValueOf(n).Elem(), "Pos"))
	}
	b.WriteString("# warnings\n")
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "%s: %s\n", w.Pos, w.Msg)
	}
	return b.String()
}

func formatRecord(v reflect.Value, skip ...string) string {
	var parts []string
	t := v.Type()
outer:
	for i := 0; i < t.NumField(); i++ {
		for _, s := range skip {
			if t.Field(i).Name == s {
				continue outer
			}
		}
		parts = append(parts, t.Field(i).Name+"="+quoteIfNeeded(formatValue(v.Field(i))))
	}
	return strings.Join(parts, " ")
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// formatValue renders one typed value with its unit.
func formatValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Seconds:
		return withUnit(uint64(x), "sec")
	case Minutes:
		return withUnit(uint64(x), "min")
	case Microseconds:
		return withUnit(uint64(x), "usec")
	case MB:
		return withUnit(uint64(x), "MB")
	case Options:
		return x.String()
	case List:
		return strings.Join(x, ",")
	case PortRange:
		if x.Count <= 1 {
			return fmt.Sprint(x.First)
		}
		return fmt.Sprintf("%d-%d", x.First, uint32(x.First)+uint32(x.Count)-1)
	case []GresSpec:
		var s []string
		for _, g := range x {
			t := g.Name
			if g.Type != "" {
				t += ":" + g.Type
			}
			s = append(s, fmt.Sprintf("%s:%d", t, g.Count))
		}
		return strings.Join(s, ",")
	case []string:
		return strings.Join(x, ",")
	case *bool:
		if x == nil {
			return "(unset)"
		}
		return fmt.Sprint(*x)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v.Interface())
}

func withUnit(n uint64, unit string) string {
	switch n {
	case Infinite16, Infinite32, Infinite64:
		return fmt.Sprintf("UNLIMITED(%d)", n)
	case NoVal16, NoVal32:
		return fmt.Sprintf("NONE(%d)", n)
	}
	return fmt.Sprintf("%d %s", n, unit)
}
