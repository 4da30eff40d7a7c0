package ctld

import (
	"log/slog"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// reconfigController is a controller whose Reload reads testConf+extra
// again.
func reconfigController(t *testing.T, extra string) *Controller {
	t.Helper()
	load := func() (*Config, error) {
		c, err := conf.Parse("slurm.conf", []byte(testConf+extra), conf.MapFS{})
		if err != nil {
			return nil, err
		}
		return NewConfig(c, "/etc/slurm/slurm.conf")
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{}
	ctl, err := New(Options{Config: cfg, Now: clk.now, Log: slog.New(slog.DiscardHandler), Reload: load})
	if err != nil {
		t.Fatal(err)
	}
	return ctl
}

// TestReconfigureKeeps: what `scontrol reconfigure` keeps of changes made
// since slurm.conf was read, for each ReconfigFlags (the interop test
// TestSlurmctldReconfigure checks the same against real slurmctld).
func TestReconfigureKeeps(t *testing.T) {
	type want struct {
		debugState, hidState uint16
		debugMaxTime         conf.Minutes
		debugNodes           string
		created              bool // the partition scontrol created is back
		defaultPart          string
	}
	confState := want{msg.PartitionUp, msg.PartitionUp, conf.Infinite32, "n[1-3]", false, "debug"}
	for _, tc := range []struct {
		flags string
		want  want
	}{
		{"", confState},
		{"ReconfigFlags=KeepPartState\n", want{msg.PartitionDown, msg.PartitionDrain, conf.Infinite32, "n[1-3]", false, "hid"}},
		{"ReconfigFlags=KeepPartInfo\n", want{msg.PartitionDown, msg.PartitionDrain, 30, "n1", true, "hid"}},
		{"ReconfigFlags=KeepPartInfo,KeepPartState\n", want{msg.PartitionDown, msg.PartitionDrain, 30, "n1", true, "hid"}},
	} {
		t.Run(tc.flags, func(t *testing.T) {
			ctl := reconfigController(t, tc.flags)
			ctl.mu.Lock()
			n1, n2 := ctl.nodeIndex["n1"], ctl.nodeIndex["n2"]
			n1.Comment, n1.Extra, n1.Weight = "hello", "world", 5
			n1.setFeatures("fa,fb", "fa")
			n2.State = msg.NodeStateIdle | msg.NodeStateDrain
			n2.Reason, n2.ReasonUID = "maint", 0
			debug, hid := ctl.findPart("debug"), ctl.findPart("hid")
			debug.StateUp, debug.Conf.MaxTime = msg.PartitionDown, 30
			if rc := ctl.setPartNodes(debug, "n1"); rc != 0 {
				t.Fatalf("nodes: %d", rc)
			}
			hid.StateUp = msg.PartitionDrain
			debug.Flags &^= msg.PartFlagDefault
			hid.Flags |= msg.PartFlagDefault
			extra := ctl.newPartRecord("extra")
			extra.Nodes = []*Node{n2}
			ctl.parts = append(ctl.parts, extra)
			ctl.relinkPartitions()
			ctl.mu.Unlock()

			if err := ctl.Reconfigure(); err != nil {
				t.Fatal(err)
			}
			n1, n2 = node(ctl, "n1"), node(ctl, "n2")
			if n1.Comment != "hello" || n1.Extra != "world" || n1.Weight != 1 || n1.Features != "" || n1.FeaturesAct != "" {
				t.Errorf("n1: comment %q extra %q weight %d features %q/%q", n1.Comment, n1.Extra, n1.Weight, n1.Features, n1.FeaturesAct)
			}
			if n2.State != msg.NodeStateIdle|msg.NodeStateDrain || n2.Reason != "maint" || n2.ReasonUID != 0 {
				t.Errorf("n2: state %#x reason %q by %d", n2.State, n2.Reason, n2.ReasonUID)
			}
			ctl.mu.RLock()
			defer ctl.mu.RUnlock()
			debug, hid = ctl.findPart("debug"), ctl.findPart("hid")
			def := ""
			for _, p := range ctl.parts {
				if p.Flags&msg.PartFlagDefault != 0 {
					def += p.Name
				}
			}
			got := want{debug.StateUp, hid.StateUp, debug.Conf.MaxTime, debug.NodeList(), ctl.findPart("extra") != nil, def}
			if got != tc.want {
				t.Errorf("partitions: %+v, want %+v", got, tc.want)
			}
			// debug kept n1 only: n2 is in the created partition alone.
			if got.created && (len(n2.Partitions) != 1 || n2.Partitions[0] != "extra") {
				t.Errorf("n2 partitions %v", n2.Partitions)
			}
		})
	}
}

// A node slurm.conf sets DOWN or DRAIN is so after a reconfigure whatever
// its state was; one that was FUTURE takes slurm.conf's state.
func TestReconfigureNodeState(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, conf uint32
		want      uint32
	}{
		{"kept", msg.NodeStateAllocated | msg.NodeStateDrain, msg.NodeStateUnknown, msg.NodeStateAllocated | msg.NodeStateDrain},
		{"conf down", msg.NodeStateIdle, msg.NodeStateDown, msg.NodeStateDown},
		{"conf drain", msg.NodeStateIdle, msg.NodeStateUnknown | msg.NodeStateDrain, msg.NodeStateIdle | msg.NodeStateDrain},
		{"was future", msg.NodeStateFuture | msg.NodeStateNoRespond, msg.NodeStateUnknown, msg.NodeStateUnknown | msg.NodeStateNoRespond},
		{"power save off", msg.NodeStateIdle | msg.NodeStatePoweredDown, msg.NodeStateUnknown, msg.NodeStateIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, o := &Node{State: tc.conf}, &Node{State: tc.old}
			cleared := restoreNode(n, o, false)
			if n.State != tc.want || cleared != (tc.old&msg.NodeStatePoweredDown != 0) {
				t.Errorf("state %#x (cleared %v), want %#x", n.State, cleared, tc.want)
			}
		})
	}
}
