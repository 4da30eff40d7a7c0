package cli

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

func TestParseRebootArgs(t *testing.T) {
	tests := []struct {
		args  []string
		want  rebootArgs
		err   string
		quiet bool
	}{
		{args: []string{"reboot", "n1"}, want: rebootArgs{nextState: noVal, nodes: "n1"}},
		{args: []string{"reboot", "asap", "Reason=fw", "n[1-2]"}, want: rebootArgs{asap: true, nextState: noVal, reason: "fw", nodes: "n[1-2]"}},
		{args: []string{"reboot", "NextState=d", "ALL"}, want: rebootArgs{nextState: nodeStateDown, nodes: "ALL"}},
		{args: []string{"reboot", "nextstate=Res", "n1"}, want: rebootArgs{nextState: msg.NodeResume, nodes: "n1"}},
		// Options are counted, not located: the word after the options
		// count is the node list.
		{args: []string{"reboot", "n1", "ASAP"}, want: rebootArgs{asap: true, nextState: noVal, nodes: "ASAP"}},
		{args: []string{"reboot", "nextstate=drain", "n1"}, err: "Invalid state: drain\nValid states: DOWN, RESUME\n", quiet: true},
		{args: []string{"reboot", "nextstate=downs", "n1"}, err: "Invalid state: downs\nValid states: DOWN, RESUME\n", quiet: true},
		{args: []string{"reboot", "reason=", "n1"}, err: "missing reason\n", quiet: true},
		{args: []string{"reboot", "nextstate=", "n1"}, err: "missing state\n", quiet: true},
		{args: []string{"reboot"}, err: "Missing node list. Specify ALL|<NodeList>\n"},
		{args: []string{"reboot", "ASAP"}, err: "Missing node list. Specify ALL|<NodeList>\n"},
		{args: []string{"reb", "n1", "n2"}, err: "too many arguments for keyword:reb\n"},
	}
	for _, tt := range tests {
		got, errMsg, quiet, ok := parseRebootArgs(tt.args)
		if ok != (tt.err == "") || errMsg != tt.err || quiet != tt.quiet {
			t.Errorf("%q: err %q quiet %v ok %v, want %q %v", tt.args, errMsg, quiet, ok, tt.err, tt.quiet)
			continue
		}
		if ok && got != tt.want {
			t.Errorf("%q = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestRebootArgErrorsCLI(t *testing.T) {
	tests := []struct {
		args []string
		errs string
	}{
		{[]string{"reboot"}, "Missing node list. Specify ALL|<NodeList>\n"},
		{[]string{"reboot_nodes", "nextstate=idle", "n1"}, "Invalid state: idle\nValid states: DOWN, RESUME\n"},
		{[]string{"-Q", "reboot", "nextstate=idle", "n1"}, ""},
		{[]string{"-v", "reboot", "reason=", "n1"}, ""},
		{[]string{"-Q", "reboot"}, "Missing node list. Specify ALL|<NodeList>\n"},
		{[]string{"cancel_reboot"}, "missing argument for keyword:cancel_reboot\n"},
		{[]string{"can", "n1", "n2"}, "too many arguments for keyword:can\n"},
	}
	for _, tt := range tests {
		out, errs, code := run(t, nil, "", tt.args...)
		if out != "" || errs != tt.errs || code != 1 {
			t.Errorf("%q: %q %q %d, want stderr %q exit 1", tt.args, out, errs, code, tt.errs)
		}
	}
}
