package main

// sinfo --json and --yaml: Slurm 22.05's sinfo hands these to the
// openapi/v0.0.38 plugin's nodes handler, which ignores every filter,
// format and sort option and dumps all nodes (with the partitions each
// belongs to) as slurmrestd's GET /slurm/v0.0.38/nodes/ would. This file
// builds the same document from the same RPC replies.

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/dataout"
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Output kinds for --json and --yaml.
const (
	mimeJSON = "json"
	mimeYAML = "yaml"
)

const (
	showMixed = 0x08 // SHOW_MIXED: slurm_load_node derives MIXED itself
	noVal     = 0xfffffffe
)

// nodeStateNames is node_states[] of slurm_protocol_defs.c: the base
// states valid_base_state accepts.
var nodeStateNames = map[uint32]string{
	sc.NodeStateDown: "DOWN", sc.NodeStateIdle: "IDLE", sc.NodeStateAllocated: "ALLOCATED",
	sc.NodeStateError: "ERROR", sc.NodeStateMixed: "MIXED", sc.NodeStateFuture: "FUTURE",
	sc.NodeStateUnknown: "UNKNOWN",
}

// nodeFlagNames is node_state_flags[]: node_state_flag_string_single
// takes them in this order.
var nodeFlagNames = []struct {
	flag uint32
	name string
}{
	{sc.NodeStateCloud, "CLOUD"}, {sc.NodeStateCompleting, "COMPLETING"}, {sc.NodeStateDrain, "DRAIN"},
	{sc.NodeStateDynamicFuture, "DYNAMIC_FUTURE"}, {sc.NodeStateDynamicNorm, "DYNAMIC_NORM"},
	{sc.NodeStateInvalidReg, "INVALID_REG"}, {sc.NodeStateFail, "FAIL"}, {sc.NodeStateMaint, "MAINTENANCE"},
	{sc.NodeStatePowerDown, "POWER_DOWN"}, {sc.NodeStatePowerUp, "POWER_UP"}, {sc.NodeStateNet, "PERFCTRS"},
	{sc.NodeStatePoweredDown, "POWERED_DOWN"}, {sc.NodeStateRebootRequested, "REBOOT_REQUESTED"},
	{sc.NodeStateRebootIssued, "REBOOT_ISSUED"}, {sc.NodeStateRes, "RESERVED"}, {sc.NodeResume, "RESUME"},
	{sc.NodeStateNoRespond, "NOT_RESPONDING"}, {sc.NodeStatePlanned, "PLANNED"},
	{sc.NodeStatePoweringUp, "POWERING_UP"}, {sc.NodeStatePoweringDown, "POWERING_DOWN"},
}

// dumpNodes prints every node as --json or --yaml; the exit code is 0
// even when the controller could not be asked (the document says so).
func (s *sinfo) dumpNodes() int {
	if s.verbose >= 3 {
		// Slurm's debug2 line for loading the plugin; the debug3 lines
		// of -vvvv print function addresses and are not reproduced.
		fmt.Fprintf(s.stderr, "%s: debug2: init_openapi: loaded plugin %s with flags 0x1\n", s.prog, dataout.PluginType)
	}
	resp, errs := dataout.NewResponse()
	list := resp.Set("nodes", dataout.NewList())
	code := 0
	m, err := s.conn.LoadNodes(s.ctx, 0, sc.ShowAll|sc.ShowDetail|showMixed)
	if err != nil {
		// slurm_load_node returns SLURM_ERROR whatever the cause.
		code = -1
	} else if len(m.Nodes) > 0 {
		nodes := make([]msg.Node, len(m.Nodes))
		copy(nodes, m.Nodes)
		setNodeMixed(nodes)
		var partsOf [][]string
		parts, err := s.conn.LoadPartitions(s.ctx, 0, sc.ShowAll)
		if err != nil {
			code = -1
		} else {
			partsOf = nodePartitions(nodes, parts.Partitions)
			for i := range nodes {
				if nodes[i].Name.Valid {
					list.Append(dumpNode(&nodes[i], partsOf[i]))
				}
			}
		}
	}
	if err == nil && (m == nil || len(m.Nodes) == 0) {
		code = slurmerr.ESLURM_INVALID_NODE_NAME
	}
	if code != 0 {
		e := errs.Append(dataout.NewDict())
		msgText := "Unspecified error"
		if code > 0 {
			msgText = slurmerr.Message(code)
		}
		e.Set("error", dataout.Str(msgText))
		e.Set("errno", dataout.Int(int64(code)))
	}
	if s.mimetype == mimeYAML {
		s.out.Write(dataout.YAML(resp))
	} else {
		s.out.Write(dataout.JSON(resp))
	}
	return 0
}

// setNodeMixed is what slurm_load_node does under SHOW_MIXED: a node with
// some but not all of its CPUs allocated becomes MIXED.
func setNodeMixed(nodes []msg.Node) {
	for i := range nodes {
		n := &nodes[i]
		used := n.SelectNodeInfo.AllocCPUs
		if used != 0 && used != n.CPUsEfctv {
			n.NodeState = n.NodeState&sc.NodeStateFlags | sc.NodeStateMixed
		}
	}
}

// nodePartitions is slurm_populate_node_partitions: each node's partitions
// in the order of the partition list.
func nodePartitions(nodes []msg.Node, parts []msg.Partition) [][]string {
	out := make([][]string, len(nodes))
	for _, p := range parts {
		if p.NodeInx.Null {
			continue
		}
		bits, _ := sc.HexMaskBits(p.NodeInx.Hex.Value)
		for j, set := range bits {
			if set && j < len(nodes) {
				out[j] = append(out[j], p.Name.Value)
			}
		}
	}
	return out
}

// longNodeState is _get_long_node_state: the base state in lower case.
func longNodeState(st uint32) string {
	if n, ok := nodeStateNames[st&sc.NodeStateBase]; ok {
		return strings.ToLower(n)
	}
	return "invalid"
}

// nodeStateFlags is _add_node_state_flags.
func nodeStateFlags(st uint32) *dataout.Value {
	l := dataout.NewList()
	if _, ok := nodeStateNames[st&sc.NodeStateBase]; !ok {
		return l
	}
	flags := st & sc.NodeStateFlags
	for flags != 0 {
		name := "?"
		bit := flags & -flags
		for _, f := range nodeFlagNames {
			if flags&f.flag != 0 {
				name, bit = f.name, f.flag
				break
			}
		}
		flags &^= bit
		l.Append(dataout.Str(name))
	}
	return l
}

func nstrV(s msg.NullString) *dataout.Value { return dataout.StrOrNullStr(s.Value, s.Valid) }

// userOrNull is uid_to_string_or_null.
func userOrNull(uid uint32) *dataout.Value {
	if uid == 0 {
		return dataout.Str("root")
	}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return dataout.Str(u.Username)
	}
	return dataout.Null()
}

// dumpNode is _dump_node of openapi/v0.0.38 (key names and order; the
// next state after reboot is set twice and keeps its first position).
func dumpNode(n *msg.Node, parts []string) *dataout.Value {
	d := dataout.NewDict()
	str := func(k string, s msg.NullString) { d.Set(k, nstrV(s)) }
	num := func(k string, v int64) { d.Set(k, dataout.Int(v)) }
	str("architecture", n.Arch)
	str("burstbuffer_network_address", n.BcastAddress)
	num("boards", int64(n.Boards))
	num("boot_time", n.BootTime)
	str("comment", n.Comment)
	num("cores", int64(n.Cores))
	num("cpu_binding", int64(n.CPUBind))
	num("cpu_load", int64(n.CPULoad))
	str("extra", n.Extra)
	num("free_memory", int64(n.FreeMem))
	num("cpus", int64(n.CPUs))
	num("last_busy", n.LastBusy)
	str("features", n.Features)
	str("active_features", n.FeaturesAct)
	str("gres", n.Gres)
	str("gres_drained", n.GresDrain)
	str("gres_used", n.GresUsed)
	str("mcs_label", n.MCSLabel)
	str("name", n.Name)
	d.Set("next_state_after_reboot", dataout.Str(longNodeState(n.NextState)))
	str("address", n.NodeAddr)
	str("hostname", n.NodeHostname)
	d.Set("state", dataout.Str(longNodeState(n.NodeState)))
	d.Set("state_flags", nodeStateFlags(n.NodeState))
	d.Set("next_state_after_reboot", dataout.Str(longNodeState(n.NextState)))
	d.Set("next_state_after_reboot_flags", nodeStateFlags(n.NextState))
	str("operating_system", n.OS)
	if n.Owner == noVal {
		d.Set("owner", dataout.Null())
	} else {
		d.Set("owner", userOrNull(n.Owner))
	}
	pl := d.Set("partitions", dataout.NewList())
	for _, p := range parts {
		pl.Append(dataout.Str(p))
	}
	num("port", int64(n.Port))
	num("real_memory", int64(n.RealMemory))
	str("reason", n.Reason)
	num("reason_changed_at", n.ReasonTime)
	d.Set("reason_set_by_user", userOrNull(n.ReasonUID))
	num("slurmd_start_time", n.SlurmdStartTime)
	num("sockets", int64(n.Sockets))
	num("threads", int64(n.Threads))
	num("temporary_disk", int64(n.TmpDisk))
	num("weight", int64(n.Weight))
	str("tres", n.TresFmtStr)
	str("slurmd_version", n.Version)
	sel := n.SelectNodeInfo
	num("alloc_memory", int64(sel.AllocMemory))
	num("alloc_cpus", int64(sel.AllocCPUs))
	num("idle_cpus", int64(n.CPUs)-int64(sel.AllocCPUs))
	if sel.TresAllocFmtStr.Valid {
		str("tres_used", sel.TresAllocFmtStr)
	} else {
		d.Set("tres_used", dataout.Null())
	}
	d.Set("tres_weighted", dataout.Float(sel.TresAllocWeighted.Float64()))
	return d
}
