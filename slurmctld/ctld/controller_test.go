package ctld

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
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
	stateOnly := want{msg.PartitionDown, msg.PartitionDrain, conf.Infinite32, "n[1-3]", false, "hid"}
	info := want{msg.PartitionDown, msg.PartitionDrain, 30, "n1", true, "hid"}
	for _, tc := range []struct {
		flags  string
		signal bool // SIGHUP (read_slurm_conf(2)): features and partitions kept
		want   want
	}{
		{"", false, confState},
		{"ReconfigFlags=KeepPartState\n", false, stateOnly},
		{"ReconfigFlags=KeepPartInfo\n", false, info},
		{"ReconfigFlags=KeepPartInfo,KeepPartState\n", false, info},
		{"", true, info},
		{"ReconfigFlags=KeepPartState\n", true, stateOnly},
		{"ReconfigFlags=KeepPartInfo\n", true, info},
	} {
		name := tc.flags
		if tc.signal {
			name = "SIGHUP " + name
		}
		t.Run(name, func(t *testing.T) {
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

			reconf, features, active, weight := ctl.Reconfigure, "", "", uint32(1)
			if tc.signal {
				reconf, features, active, weight = ctl.ReconfigureSignal, "fa,fb", "fa", 5
			}
			if err := reconf(); err != nil {
				t.Fatal(err)
			}
			n1, n2 = node(ctl, "n1"), node(ctl, "n2")
			if n1.Comment != "hello" || n1.Extra != "world" || n1.Weight != weight || n1.Features != features || n1.FeaturesAct != active {
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

// TestReconfigureNodeHardware: slurm.conf changes a node's CPUs or memory.
// The node shows the new values at once; the scheduler keeps allocating
// the hardware the node had when the controller started, across further
// reconfigures; a changed CPU count makes the reconfigure answer
// ESLURM_NEED_RESTART (22.05's read_slurm_conf), a memory change does not.
func TestReconfigureNodeHardware(t *testing.T) {
	const base = "NodeName=x1 CPUs=4 RealMemory=1000\nNodeName=x2 CPUs=4 RealMemory=1000\nPartitionName=x Nodes=x[1-2]\n"
	type step struct {
		text        string
		needRestart bool
		shown       [2]uint16 // CPUs scontrol shows for x1, x2
		sched       [2]uint16 // CPUs the scheduler allocates
		schedMem    uint64    // x1's memory for the scheduler
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"cpus lowered, the same again, then back", []step{
			{strings.Replace(base, "x1 CPUs=4", "x1 CPUs=2", 1), true, [2]uint16{2, 4}, [2]uint16{4, 4}, 1000},
			{strings.Replace(base, "x1 CPUs=4", "x1 CPUs=2", 1), false, [2]uint16{2, 4}, [2]uint16{4, 4}, 1000},
			{base, true, [2]uint16{4, 4}, [2]uint16{4, 4}, 1000},
		}},
		{"memory raised", []step{
			{strings.Replace(base, "x1 CPUs=4 RealMemory=1000", "x1 CPUs=4 RealMemory=9000", 1), false, [2]uint16{4, 4}, [2]uint16{4, 4}, 1000},
		}},
		{"cpus twice", []step{
			{strings.Replace(base, "x1 CPUs=4", "x1 CPUs=2", 1), true, [2]uint16{2, 4}, [2]uint16{4, 4}, 1000},
			{strings.Replace(base, "x1 CPUs=4", "x1 CPUs=8", 1), true, [2]uint16{8, 4}, [2]uint16{4, 4}, 1000},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := base
			load := func() (*Config, error) {
				c, err := conf.Parse("slurm.conf", []byte("ClusterName=t\nSlurmctldHost=localhost\nSlurmUser=root\n"+text), conf.MapFS{})
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
			for i, st := range tc.steps {
				text = st.text
				err := ctl.Reconfigure()
				if errors.Is(err, ErrNeedRestart) != st.needRestart || (err != nil && !st.needRestart) {
					t.Fatalf("step %d: Reconfigure = %v, want need restart %v", i, err, st.needRestart)
				}
				if err != nil && slurmerr.Code(err) != slurmerr.ESLURM_NEED_RESTART {
					t.Errorf("step %d: code %d", i, slurmerr.Code(err))
				}
				snap, err := sched.FromConf(ctl.Config().Conf, nil)
				if err != nil {
					t.Fatal(err)
				}
				ctl.ApplyKeptHardware(snap.Nodes)
				for k, name := range []string{"x1", "x2"} {
					if got := ctl.nodeIndex[name].CPUs; got != st.shown[k] {
						t.Errorf("step %d: %s shows CPUs=%d, want %d", i, name, got, st.shown[k])
					}
					if got := snap.Nodes[k].CPUs; got != st.sched[k] {
						t.Errorf("step %d: scheduler has %s CPUs=%d, want %d", i, name, got, st.sched[k])
					}
					if got := snap.Nodes[k].Cores() * int(snap.Nodes[k].ThreadsPerCore); got != int(st.sched[k]) {
						t.Errorf("step %d: scheduler has %s with %d cores*threads, want %d", i, name, got, st.sched[k])
					}
				}
				if got := snap.Nodes[0].RealMemory; got != st.schedMem {
					t.Errorf("step %d: scheduler has x1 RealMemory=%d, want %d", i, got, st.schedMem)
				}
			}
		})
	}
}
