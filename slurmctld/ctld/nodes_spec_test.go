package ctld

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

func TestSpecCoresOf(t *testing.T) {
	for _, tc := range []struct {
		list           string
		threads, cores int
		want           []uint16
	}{
		{"1,2", 1, 4, []uint16{1, 2}},
		{"3", 1, 4, []uint16{3}},
		{"0-3", 2, 4, []uint16{0, 1}}, // two threads a core: CPUs 0-3 are cores 0 and 1
		{"1,6", 2, 4, []uint16{0, 3}},
		{"2,0", 1, 4, []uint16{0, 2}},
		{"3-9", 1, 4, []uint16{3}}, // beyond the node's cores: skipped
		{"x,1", 1, 4, []uint16{1}},
	} {
		if got := specCoresOf(tc.list, tc.threads, tc.cores); !slices.Equal(got, tc.want) {
			t.Errorf("specCoresOf(%q, %d, %d) = %v, want %v", tc.list, tc.threads, tc.cores, got, tc.want)
		}
	}
}

func TestCPUListOf(t *testing.T) {
	for _, tc := range []struct {
		cores   []uint16
		threads int
		want    string
	}{
		{[]uint16{0}, 2, "0-1"},
		{[]uint16{0, 1}, 2, "0-3"},
		{[]uint16{0, 2}, 2, "0-1,4-5"},
		{[]uint16{1, 2}, 1, "1-2"},
		{[]uint16{3}, 1, "3"},
		{nil, 2, ""},
	} {
		if got := cpuListOf(tc.cores, tc.threads); got != tc.want {
			t.Errorf("cpuListOf(%v, %d) = %q, want %q", tc.cores, tc.threads, got, tc.want)
		}
	}
}

// TestSchedNodesChange: refreshing the scheduler's node view reports a
// change of node configuration (features, weight, specialized cores and
// memory), which drops the submission test's kept cluster, and not a
// change of state.
func TestSchedNodesChange(t *testing.T) {
	c, _ := newTestController(t, "")
	upd := func() *msg.UpdateNodeRequest {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str("n1")
		return &r
	}
	c.mu.Lock()
	view := make([]sched.Node, len(c.nodes))
	c.schedNodes(view)
	c.mu.Unlock()
	for _, tc := range []struct {
		name   string
		change func()
		want   bool
	}{
		{"nothing", func() {}, false},
		{"drain", func() {
			r := upd()
			r.NodeState, r.Reason = msg.NodeStateDrain, msg.Str("x")
			c.UpdateNode(r, 0)
		}, false},
		{"features", func() {
			r := upd()
			r.Features = msg.Str("big")
			c.UpdateNode(r, 0)
		}, true},
		{"active features", func() {
			r := upd()
			r.Features, r.FeaturesAct = msg.Str("big,fast"), msg.Str("big")
			c.UpdateNode(r, 0)
		}, true},
		{"weight", func() {
			r := upd()
			r.Weight = 7
			c.UpdateNode(r, 0)
		}, true},
		{"specialized cores", func() { node(c, "n2").specCores = []uint16{0} }, true},
		{"same specialized cores", func() {}, false},
		{"memory kept", func() { node(c, "n3").MemSpecLimit = 100 }, true},
	} {
		tc.change()
		c.mu.Lock()
		got := c.schedNodes(view)
		c.mu.Unlock()
		if got != tc.want {
			t.Errorf("%s: changed %v, want %v", tc.name, got, tc.want)
		}
	}
}
