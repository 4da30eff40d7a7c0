package ctld

import (
	"log/slog"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// A node slurm.conf makes CLOUD on a reconfigure gets the CLOUD flag
// (_restore_node_state), and from FUTURE is powered down as well: it
// was not up.
func TestReconfigureToCloud(t *testing.T) {
	for _, tc := range []struct {
		from string
		want uint32
	}{
		{"FUTURE", msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweredDown},
		{"UNKNOWN", msg.NodeStateUnknown | msg.NodeStateCloud},
	} {
		text := testConf + "NodeName=c1 CPUs=2 RealMemory=500 State=" + tc.from + "\nPartitionName=cloud Nodes=c1\n"
		load := func() (*Config, error) {
			c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
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
		text = testConf + "SuspendProgram=/bin/true\nResumeProgram=/bin/true\nNodeName=c1 CPUs=2 RealMemory=500 State=CLOUD\nPartitionName=cloud Nodes=c1\n"
		if err := ctl.Reconfigure(); err != nil {
			t.Fatal(err)
		}
		if n := node(ctl, "c1"); n.State != tc.want {
			t.Errorf("%s -> CLOUD: state %#x, want %#x", tc.from, n.State, tc.want)
		}
	}
}
