package conf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoadTopology(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Switch
		err        string
	}{
		{name: "tree", text: "SwitchName=s0 Nodes=n[1-2] LinkSpeed=10\nSwitchName=s1 Nodes=n[3-4]\n# top\nSwitchName=top Switches=s[0-1]\n",
			want: []Switch{
				{Name: "s0", Nodes: "n[1-2]", LinkSpeed: 10},
				{Name: "s1", Nodes: "n[3-4]", LinkSpeed: 1},
				{Name: "top", Switches: "s[0-1]", LinkSpeed: 1, Level: 1},
			}},
		{name: "parent first", text: "SwitchName=root Switches=mid\nSwitchName=mid Switches=leaf\nSwitchName=leaf Nodes=n1\n",
			want: []Switch{
				{Name: "root", Switches: "mid", LinkSpeed: 1, Level: 2},
				{Name: "mid", Switches: "leaf", LinkSpeed: 1, Level: 1},
				{Name: "leaf", Nodes: "n1", LinkSpeed: 1},
			}},
		{name: "both", text: "SwitchName=s0 Nodes=n1 Switches=s1\n", err: "switch s0 has both child switches and nodes"},
		{name: "neither", text: "SwitchName=s0\n", err: "switch s0 has neither child switches nor nodes"},
		{name: "twice", text: "SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n", err: "Switch (s0) has already been defined"},
		{name: "bad child", text: "SwitchName=s0 Switches=s9\n", err: "has invalid child (s9)"},
		{name: "loop", text: "SwitchName=a Switches=b\nSwitchName=b Switches=a\nSwitchName=c Nodes=n1\n", err: "not a tree"},
		{name: "bad key", text: "NodeName=n1\n", err: "unrecognized key: NodeName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := MapFS{"/etc/topology.conf": tc.text}
			got, err := LoadTopology(fs, "/etc/topology.conf")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.Switches, cmpopts.IgnoreFields(Switch{}, "Pos")); d != "" {
				t.Errorf("switches (-want +got):\n%s", d)
			}
		})
	}
}

func TestDebugFlags(t *testing.T) {
	m := DebugFlagMask([]string{"selecttype", "Backfill", "net", "Task", "bogus"})
	if want := uint64(1<<0 | 1<<12 | 1<<10); m != want {
		t.Fatalf("mask = %#x, want %#x", m, want)
	}
	if got := strings.Join(DebugFlagNames(m), ","); got != "Backfill,Network,SelectType" {
		t.Fatalf("names = %s", got)
	}
}
