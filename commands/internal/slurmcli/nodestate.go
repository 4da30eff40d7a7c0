package slurmcli

// Node state base values and flags (slurm.h, 22.05).
const (
	NodeStateUnknown   = 0
	NodeStateDown      = 1
	NodeStateIdle      = 2
	NodeStateAllocated = 3
	NodeStateError     = 4
	NodeStateMixed     = 5
	NodeStateFuture    = 6
	NodeStateEnd       = 7

	NodeStateBase  = 0x0000000f
	NodeStateFlags = 0xfffffff0

	NodeStateNet             = 1 << 4
	NodeStateRes             = 1 << 5
	NodeStateUndrain         = 1 << 6
	NodeStateCloud           = 1 << 7
	NodeResume               = 1 << 8
	NodeStateDrain           = 1 << 9
	NodeStateCompleting      = 1 << 10
	NodeStateNoRespond       = 1 << 11
	NodeStatePoweredDown     = 1 << 12
	NodeStateFail            = 1 << 13
	NodeStatePoweringUp      = 1 << 14
	NodeStateMaint           = 1 << 15
	NodeStateRebootRequested = 1 << 16
	NodeStateRebootCancel    = 1 << 17
	NodeStatePoweringDown    = 1 << 18
	NodeStateDynamicFuture   = 1 << 19
	NodeStateRebootIssued    = 1 << 20
	NodeStatePlanned         = 1 << 21
	NodeStateInvalidReg      = 1 << 22
	NodeStatePowerDown       = 1 << 23
	NodeStatePowerUp         = 1 << 24
	NodeStatePowerDrain      = 1 << 25
	NodeStateDynamicNorm     = 1 << 26
)

// nodeNames holds one spelling set of node_state_string (long) or
// node_state_string_compact.
type nodeNames struct {
	maint, reboot, rebootIssued                     string
	draining, drained, failing, fail                string
	down, alloc, comp, idle, mixed, future, unknown string
	npc, resv, planned, resume                      string
	rebootIssuedOnly, cancelReboot, cloud           string
	powerDown, powerUp, poweringDown, poweredDown   string
	poweringUp                                      string
	compact                                         bool
}

var longNames = nodeNames{
	maint: "MAINT", reboot: "REBOOT", rebootIssued: "REBOOT^",
	draining: "DRAINING", drained: "DRAINED", failing: "FAILING", fail: "FAIL",
	down: "DOWN", alloc: "ALLOCATED", comp: "COMPLETING", idle: "IDLE",
	mixed: "MIXED", future: "FUTURE", unknown: "UNKNOWN",
	npc: "PERFCTRS", resv: "RESERVED", planned: "PLANNED", resume: "RESUME",
	rebootIssuedOnly: "REBOOT_ISSUED", cancelReboot: "CANCEL_REBOOT", cloud: "CLOUD",
	powerDown: "POWER_DOWN", powerUp: "POWER_UP", poweringDown: "POWERING_DOWN",
	poweredDown: "POWERED_DOWN", poweringUp: "POWERING_UP",
}

var compactNames = nodeNames{
	maint: "MAINT", reboot: "BOOT", rebootIssued: "BOOT^",
	draining: "DRNG", drained: "DRAIN", failing: "FAILG", fail: "FAIL",
	down: "DOWN", alloc: "ALLOC", comp: "COMP", idle: "IDLE",
	mixed: "MIX", future: "FUTR", unknown: "UNK",
	npc: "NPC", resv: "RESV", planned: "PLND", resume: "RESM",
	rebootIssuedOnly: "BOOT^", cancelReboot: "CANC_R", cloud: "CLOUD",
	powerDown: "POW_DN", powerUp: "POW_UP", poweringDown: "POWRING_DN",
	poweredDown: "POWERED_DN", poweringUp: "POWERING_UP",
	compact: true,
}

// NodeStateString is node_state_string (upper case, with the flag
// suffix characters).
func NodeStateString(st uint32) string { return nodeStateName(st, &longNames) }

// NodeStateCompact is node_state_string_compact.
func NodeStateCompact(st uint32) string { return nodeStateName(st, &compactNames) }

func nodeStateName(st uint32, n *nodeNames) string {
	base := st & NodeStateBase
	has := func(f uint32) bool { return st&f != 0 }
	maint, drain, comp := has(NodeStateMaint), has(NodeStateDrain), has(NodeStateCompleting)
	reboot, rebootIssued := has(NodeStateRebootRequested), has(NodeStateRebootIssued)
	noResp := has(NodeStateNoRespond)
	if has(NodeStateInvalidReg) {
		return "INVAL"
	}
	if maint {
		if drain || base == NodeStateAllocated || base == NodeStateDown || base == NodeStateMixed {
		} else if noResp {
			return n.maint + "*"
		} else {
			return n.maint
		}
	}
	if reboot || rebootIssued {
		if base == NodeStateAllocated || base == NodeStateMixed {
		} else if rebootIssued {
			return n.rebootIssued
		} else if noResp {
			return n.reboot + "*"
		} else {
			return n.reboot
		}
	}
	// suffix is the common chain of flag characters.
	suffix := func(withNoResp bool) string {
		switch {
		case maint:
			return "$"
		case rebootIssued:
			return "^"
		case reboot:
			return "@"
		case has(NodeStatePoweringUp):
			return "#"
		case has(NodeStatePoweringDown):
			return "%"
		case has(NodeStatePoweredDown):
			return "~"
		case has(NodeStatePowerDown):
			return "!"
		case withNoResp && noResp:
			return "*"
		}
		return ""
	}
	if drain {
		if comp || base == NodeStateAllocated || base == NodeStateMixed {
			return n.draining + suffix(true)
		}
		return n.drained + suffix(true)
	}
	if has(NodeStateFail) {
		name := n.fail
		if comp || base == NodeStateAllocated {
			name = n.failing
		}
		if noResp {
			return name + "*"
		}
		return name
	}
	// The compact form compares the base state with these flags, which
	// never matches; the long form compares the whole state.
	whole := st
	if n.compact {
		whole = base
	}
	switch whole {
	case NodeStateRebootIssued:
		return n.rebootIssuedOnly
	case NodeStateRebootCancel:
		return n.cancelReboot
	case NodeStateCloud:
		return n.cloud
	case NodeStatePowerDown:
		return n.powerDown
	case NodeStatePowerUp:
		return n.powerUp
	case NodeStatePoweringDown:
		return n.poweringDown
	case NodeStatePoweredDown:
		return n.poweredDown
	case NodeStatePoweringUp:
		return n.poweringUp
	}
	if base == NodeStateDown {
		return n.down + suffix(true)
	}
	if base == NodeStateAllocated {
		if s := suffix(true); s != "" {
			return n.alloc + s
		}
		if comp {
			return n.alloc + "+"
		}
		return n.alloc
	}
	if comp {
		return n.comp + suffix(true)
	}
	if base == NodeStateIdle {
		if s := suffix(true); s != "" {
			return n.idle + s
		}
		switch {
		case has(NodeStateNet):
			return n.npc
		case has(NodeStateRes):
			return n.resv
		case has(NodeStatePlanned):
			return n.planned
		}
		return n.idle
	}
	if base == NodeStateMixed {
		if s := suffix(true); s != "" {
			return n.mixed + s
		}
		if has(NodeStatePlanned) {
			return n.mixed + "-"
		}
		return n.mixed
	}
	if base == NodeStateFuture {
		return n.future + suffix(true)
	}
	if has(NodeResume) {
		return n.resume
	}
	if base == NodeStateUnknown {
		if noResp {
			return n.unknown + "*"
		}
		return n.unknown
	}
	return "?"
}

var nodeBaseNames = map[uint32]string{
	NodeStateDown: "DOWN", NodeStateIdle: "IDLE", NodeStateAllocated: "ALLOCATED",
	NodeStateError: "ERROR", NodeStateMixed: "MIXED", NodeStateFuture: "FUTURE",
	NodeStateUnknown: "UNKNOWN",
}

var nodeFlagNames = []struct {
	flag uint32
	name string
}{
	{NodeStateCloud, "CLOUD"}, {NodeStateCompleting, "COMPLETING"}, {NodeStateDrain, "DRAIN"},
	{NodeStateDynamicFuture, "DYNAMIC_FUTURE"}, {NodeStateDynamicNorm, "DYNAMIC_NORM"},
	{NodeStateInvalidReg, "INVALID_REG"}, {NodeStateFail, "FAIL"}, {NodeStateMaint, "MAINTENANCE"},
	{NodeStatePowerDown, "POWER_DOWN"}, {NodeStatePowerUp, "POWER_UP"}, {NodeStateNet, "PERFCTRS"},
	{NodeStatePoweredDown, "POWERED_DOWN"}, {NodeStateRebootRequested, "REBOOT_REQUESTED"},
	{NodeStateRebootIssued, "REBOOT_ISSUED"}, {NodeStateRes, "RESERVED"}, {NodeResume, "RESUME"},
	{NodeStateNoRespond, "NOT_RESPONDING"}, {NodeStatePlanned, "PLANNED"},
	{NodeStatePoweringUp, "POWERING_UP"}, {NodeStatePoweringDown, "POWERING_DOWN"},
}

// NodeStateComplete is node_state_string_complete: the base name and
// "+FLAG" for every flag.
func NodeStateComplete(st uint32) string {
	s, ok := nodeBaseNames[st&NodeStateBase]
	if !ok {
		s = "INVALID"
	}
	flags := st & NodeStateFlags
	for flags != 0 {
		found := false
		for _, f := range nodeFlagNames {
			if flags&f.flag != 0 {
				s += "+" + f.name
				flags &^= f.flag
				found = true
				break
			}
		}
		if !found {
			s += "+?"
			flags &^= flags & -flags
		}
	}
	return s
}
