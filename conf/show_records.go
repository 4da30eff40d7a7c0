package conf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
)

// timeLimit renders a limit in minutes as scontrol does ([D-]HH:MM:SS,
// UNLIMITED; NONE for "not set" where notSet applies).
func timeLimit(m Minutes, notSet bool) string {
	switch {
	case notSet:
		return "NONE"
	case m == Infinite32:
		return "UNLIMITED"
	}
	return secs2time(uint64(m) * 60)
}

func yesNoUpper(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func unlimited32(v uint32) string {
	if v == Infinite32 {
		return "UNLIMITED"
	}
	return fmt.Sprint(v)
}

// ShowPartitionValue renders field key of partition p as `scontrol show
// partition` prints it (22.05). ok is false for fields it does not render.
func (c *Config) ShowPartitionValue(p *Partition, key string) (string, bool) {
	switch key {
	case "MaxTime":
		return timeLimit(p.MaxTime, false), true
	case "DefaultTime":
		return timeLimit(p.DefaultTime, p.DefaultTime == NoVal32), true
	case "Nodes":
		return c.compressNodes(p.NodeNames), true
	case "MinNodes":
		return fmt.Sprint(p.MinNodes), true
	case "MaxNodes":
		return unlimited32(p.MaxNodes), true
	case "MaxCPUsPerNode":
		return unlimited32(p.MaxCPUsPerNode), true
	case "State":
		return p.State, true
	case "OverSubscribe":
		switch p.OverSubscribe {
		case "YES", "FORCE":
			return fmt.Sprintf("%s:%d", p.OverSubscribe, p.MaxShare), true
		}
		return p.OverSubscribe, true
	case "PriorityTier":
		return fmt.Sprint(p.PriorityTier), true
	case "PriorityJobFactor":
		return fmt.Sprint(p.PriorityJobFactor), true
	case "Default":
		// Only the last Default=YES partition is the default.
		return yesNoUpper(p.Name == c.DefaultPartition), true
	case "Hidden":
		return yesNoUpper(p.Hidden), true
	case "RootOnly":
		return yesNoUpper(p.RootOnly), true
	case "ReqResv":
		return yesNoUpper(p.ReqResv), true
	case "LLN":
		return yesNoUpper(p.LLN), true
	case "ExclusiveUser":
		return yesNoUpper(p.ExclusiveUser), true
	case "GraceTime":
		return fmt.Sprint(uint32(p.GraceTime)), true
	case "TotalNodes":
		return fmt.Sprint(len(p.NodeNames)), true
	}
	return "", false
}

// compressNodes renders node names as scontrol does (bitmap2node_name:
// node-table order, then hostlist-sorted and ranged), "(null)" when empty.
func (c *Config) compressNodes(names []string) string {
	if len(names) == 0 {
		return "(null)"
	}
	s := append([]string(nil), names...)
	sort.SliceStable(s, func(i, j int) bool { return c.NodeIndex[s[i]] < c.NodeIndex[s[j]] })
	hl := hostlist.New()
	for _, n := range s {
		hl.PushHost(n)
	}
	hl.Sort()
	return hl.Ranged()
}

// ShowNodeValue renders field key of node n as `scontrol show node` prints
// it (22.05) before the node registers. ok is false for fields it does not
// render.
func (c *Config) ShowNodeValue(n *Node, key string) (string, bool) {
	nl := c.NodeLines[n.Line]
	switch key {
	case "CPUTot":
		return fmt.Sprint(nl.CPUs), true
	case "Sockets":
		return fmt.Sprint(nl.Sockets), true
	case "Boards":
		return fmt.Sprint(nl.Boards), true
	case "CoresPerSocket":
		return fmt.Sprint(nl.CoresPerSocket), true
	case "ThreadsPerCore":
		return fmt.Sprint(nl.ThreadsPerCore), true
	case "RealMemory":
		return fmt.Sprint(uint64(nl.RealMemory)), true
	case "TmpDisk":
		return fmt.Sprint(uint64(nl.TmpDisk)), true
	case "Weight":
		return fmt.Sprint(nl.Weight), true
	case "AvailableFeatures", "ActiveFeatures":
		return nullIfEmpty(strings.Join(nl.Features, ",")), true
	case "Gres":
		var parts []string
		for _, g := range nl.Gres {
			s := g.Name
			if g.Type != "" {
				s += ":" + g.Type
			}
			parts = append(parts, fmt.Sprintf("%s:%d", s, g.Count))
		}
		return nullIfEmpty(strings.Join(parts, ",")), true
	case "NodeAddr":
		return n.Addr, true
	case "NodeHostName":
		return n.Hostname, true
	case "Port":
		return fmt.Sprint(n.Port), true
	}
	return "", false
}
