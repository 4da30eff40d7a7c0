package cli

import (
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rebootFlagASAP is REBOOT_FLAGS_ASAP: drain the nodes so the reboot is
// not held back by new jobs.
const rebootFlagASAP = 0x0001

// rebootArgs is what "reboot [ASAP] [nextstate=] [reason=] <nodes>" asks.
type rebootArgs struct {
	asap      bool
	nextState uint32
	reason    string // empty: none
	nodes     string
}

// parseRebootArgs reads the options the way scontrol 22.05 does: only the
// first three words after the keyword are looked at, and every one that is
// an option moves the node list one word on, whatever its position. So
// "reboot n1 ASAP" takes "ASAP" as the node list, as the real one does.
// A message and false are returned for a word scontrol rejects; quiet
// reports whether that message is kept back under a non-zero quiet flag.
func parseRebootArgs(args []string) (r rebootArgs, errMsg string, quiet bool, ok bool) {
	r.nextState = noVal
	off := 1
	for i := 1; i <= 3 && i < len(args); i++ {
		a := args[i]
		switch {
		case strings.EqualFold(a, "ASAP"):
			r.asap = true
			off++
		case hasPrefixFold(a, "Reason=", len("Reason=")):
			v := a[strings.IndexByte(a, '=')+1:]
			if v == "" {
				return r, "missing reason\n", true, false
			}
			r.reason = v
			off++
		case hasPrefixFold(a, "nextstate=", len("nextstate=")):
			v := a[strings.IndexByte(a, '=')+1:]
			if v == "" {
				return r, "missing state\n", true, false
			}
			off++
			switch n := max(len(v), 1); {
			case hasPrefixFold(v, "DOWN", n):
				r.nextState = nodeStateDown
			case hasPrefixFold(v, "RESUME", n):
				r.nextState = msg.NodeResume
			default:
				return r, "Invalid state: " + v + "\nValid states: DOWN, RESUME\n", true, false
			}
		}
	}
	switch rest := len(args) - off; {
	case rest > 1:
		return r, "too many arguments for keyword:" + args[0] + "\n", false, false
	case rest < 1:
		return r, "Missing node list. Specify ALL|<NodeList>\n", false, false
	}
	r.nodes = args[off]
	return r, "", false, true
}

// cmdReboot is "reboot_nodes": REQUEST_REBOOT_NODES for the nodes (or ALL).
func cmdReboot(s *state, args []string) {
	r, errMsg, quiet, ok := parseRebootArgs(args)
	if !ok {
		s.exitCode = 1
		// scontrol tests "!quiet_flag" here, so -v hides these too.
		if !quiet || s.quietFlag == 0 {
			s.eprintf("%s", errMsg)
		}
		return
	}
	if err := s.rebootNodes(r); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("scontrol_reboot_nodes error", err)
		}
	}
}

// rebootNodes is scontrol_reboot_nodes. Without a RebootProgram in the
// local slurm.conf nothing is sent, as with the real scontrol.
func (s *state) rebootNodes(r rebootArgs) error {
	c := s.ctl()
	if c.Conf.RebootProgram == "" {
		s.stdout.Flush()
		s.errorf("RebootProgram isn't defined")
		return slurmerr.Error{Code: slurmerr.SLURM_ERROR}
	}
	req := msg.RebootNodesRequest{NextState: r.nextState, NodeList: msg.Str(r.nodes)}
	if r.reason != "" {
		req.Reason = msg.Str(r.reason)
	}
	if r.asap {
		req.Flags |= rebootFlagASAP
	}
	return s.rpcRC(msgtype.REQUEST_REBOOT_NODES, req)
}

// cmdCancelReboot is "cancel_reboot <nodes>": a node update whose state is
// NODE_STATE_REBOOT_CANCEL. Its failure is reported even under -Q, as
// scontrol_cancel_reboot does.
func cmdCancelReboot(s *state, args []string) {
	switch {
	case len(args) > 2:
		s.tooMany(args[0])
		return
	case len(args) < 2:
		s.exitCode = 1
		s.eprintf("missing argument for keyword:%s\n", args[0])
		return
	}
	req := msg.NewUpdateNodeRequest()
	req.NodeNames = msg.Str(args[1])
	req.NodeState = msg.NodeStateRebootCancel
	if err := s.rpcRC(msgtype.REQUEST_UPDATE_NODE, req); err != nil {
		s.exitCode = 1
		s.perror("slurm_update error", err)
	}
}
