package ctld

import (
	"context"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
)

// A State=CLOUD node starts IDLE+CLOUD+POWERED_DOWN; while powered down
// it goes out as a blank record in the full list to everyone (root
// included, -a or not) unless PrivateData=cloud, but asked for by name it
// is always shown (pack_one_node); once powered up it is shown like any
// node.
func TestCloudNodeHidden(t *testing.T) {
	const cloud = "NodeName=c1 CPUs=2 RealMemory=500 State=CLOUD\nPartitionName=cloud Nodes=c1\n"
	for _, tc := range []struct {
		name   string
		extra  string
		hidden bool
	}{
		{"default", cloud, true},
		{"private cloud", "PrivateData=cloud\n" + cloud, false},
		{"private jobs", "PrivateData=jobs\n" + cloud, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, tc.extra)
			n := node(c, "c1")
			if want := msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweredDown; n.State != want {
				t.Fatalf("state %s, want IDLE+CLOUD+POWERED_DOWN", StateString(n.State))
			}
			show := func(uid uint32, flags uint16) (all, single string) {
				r := &server.Request{Body: &msg.InfoRequest{ShowFlags: flags}, Identity: auth.Identity{UID: uid}}
				r.Header.MsgType = msgtype.REQUEST_NODE_INFO
				resp := c.Serve(context.Background(), r).Body.(*msg.NodeInfoResponse)
				all = resp.Nodes[n.Index].Name.Value
				r = &server.Request{Body: &msg.NodeInfoSingleRequest{NodeName: msg.Str("c1"), ShowFlags: flags},
					Identity: auth.Identity{UID: uid}}
				r.Header.MsgType = msgtype.REQUEST_NODE_INFO_SINGLE
				one := c.Serve(context.Background(), r).Body.(*msg.NodeInfoResponse)
				if len(one.Nodes) == 1 {
					single = one.Nodes[0].Name.Value
				}
				return all, single
			}
			want := "c1"
			if tc.hidden {
				want = ""
			}
			for _, who := range []struct {
				uid   uint32
				flags uint16
			}{{0, 0}, {0, showAll}, {1000, showAll}, {1000, 0}} {
				if all, one := show(who.uid, who.flags); all != want || one != "c1" {
					t.Errorf("uid %d flags %#x: listed as %q / %q, want %q / c1", who.uid, who.flags, all, one, want)
				}
			}
			c.mu.Lock()
			n.State = n.State&^msg.NodeStatePoweredDown | msg.NodeStatePoweringUp | msg.NodeStateNoRespond
			c.mu.Unlock()
			if all, one := show(1000, 0); all != "c1" || one != "c1" {
				t.Errorf("powering up: listed as %q / %q", all, one)
			}
		})
	}
}

// The job manager gets each CLOUD node's "name:[addr]:hostname" (none
// for other nodes, none at all with cloud_dns), following NodeAddr.
func TestCloudAliases(t *testing.T) {
	const cloud = "NodeName=c1 NodeAddr=10.1.1.1 NodeHostname=host1 CPUs=2 RealMemory=500 State=CLOUD\nPartitionName=cloud Nodes=c1\n"
	c, _ := newTestController(t, cloud)
	c.mu.Lock()
	got := c.cloudAliases(nil)
	c.mu.Unlock()
	idx := node(c, "c1").Index
	if len(got) != len(c.nodes) || got[idx] != "c1:[10.1.1.1]:host1" || got[0] != "" {
		t.Fatalf("aliases %q", got)
	}
	c.mu.Lock()
	c.nodes[idx].Addr = "10.1.1.2"
	got = c.cloudAliases(got)
	c.mu.Unlock()
	if got[idx] != "c1:[10.1.1.2]:host1" {
		t.Errorf("after an address change: %q", got[idx])
	}
	dns, _ := newTestController(t, "SlurmctldParameters=cloud_dns\n"+cloud)
	none, _ := newTestController(t, "")
	for name, ctl := range map[string]*Controller{"cloud_dns": dns, "no cloud node": none} {
		ctl.mu.Lock()
		if a := ctl.cloudAliases(nil); a != nil {
			t.Errorf("%s: aliases %q", name, a)
		}
		ctl.mu.Unlock()
	}
}

// A restart gives a CLOUD node back its saved state, not slurm.conf's
// powered down: one that was up stays up (and shown). Without power
// saving the saved power flags are dropped.
func TestCloudNodeRestore(t *testing.T) {
	const cloud = "NodeName=c[1-2] CPUs=2 RealMemory=500 State=CLOUD\nPartitionName=cloud Nodes=c[1-2]\n"
	for _, tc := range []struct {
		name       string
		power      bool
		up, downed uint32
	}{
		{"power save", true, msg.NodeStateIdle | msg.NodeStateCloud, msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweredDown},
		{"no power save", false, msg.NodeStateIdle | msg.NodeStateCloud, msg.NodeStateIdle | msg.NodeStateCloud},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := cloud
			if tc.power {
				extra = "SuspendTime=60\nSuspendProgram=/bin/true\nResumeProgram=/bin/true\n" + cloud
			}
			old, _ := newTestController(t, extra)
			old.mu.Lock()
			old.nodeIndex["c1"].State = msg.NodeStateIdle | msg.NodeStateCloud
			saved := old.savedState()
			old.mu.Unlock()
			fresh, _ := newTestController(t, extra)
			fresh.RestoreNodes(saved.Nodes)
			if st := node(fresh, "c1").State; st != tc.up {
				t.Errorf("c1 saved up: %s, want %s", StateString(st), StateString(tc.up))
			}
			if st := node(fresh, "c2").State; st != tc.downed {
				t.Errorf("c2 saved powered down: %s, want %s", StateString(st), StateString(tc.downed))
			}
		})
	}
}

// A node pack_one_node hides (here FUTURE, without SHOW_FUTURE) goes out
// as no record at all, not a blank one.
func TestNodeInfoSingleHiddenNoRecord(t *testing.T) {
	c, _ := newTestController(t, "NodeName=f1 CPUs=2 RealMemory=500 State=FUTURE\n")
	for _, tc := range []struct {
		flags uint16
		want  int
	}{{0, 0}, {showFuture, 1}} {
		r := &server.Request{Body: &msg.NodeInfoSingleRequest{NodeName: msg.Str("f1"), ShowFlags: tc.flags}}
		r.Header.MsgType = msgtype.REQUEST_NODE_INFO_SINGLE
		resp := c.Serve(context.Background(), r).Body.(*msg.NodeInfoResponse)
		if len(resp.Nodes) != tc.want {
			t.Errorf("flags %#x: %d records, want %d", tc.flags, len(resp.Nodes), tc.want)
		}
	}
}

// Without node_reg_mem_percent a CLOUD node may register 90% of its
// RealMemory (DEFAULT_CLOUD_REG_MEM_PERCENT), others 100%; the
// parameter, when set, applies to both.
func TestRegistrationCloudMemPercent(t *testing.T) {
	const cloud = "NodeName=c1 CPUs=4 RealMemory=1000 TmpDisk=100 State=CLOUD\nPartitionName=cloud Nodes=c1\n"
	for _, tc := range []struct {
		extra  string
		name   string
		mem    uint64
		reason string
	}{
		{cloud, "c1", 950, ""},
		{cloud, "c1", 850, "Low RealMemory (reported:850 < 90.00% of configured:1000)"},
		{cloud, "n1", 950, "Low RealMemory (reported:950 < 100.00% of configured:1000)"},
		{"SlurmctldParameters=node_reg_mem_percent=100\n" + cloud, "c1", 950, "Low RealMemory (reported:950 < 100.00% of configured:1000)"},
	} {
		c, _ := newTestController(t, tc.extra)
		if _, err := c.ValidateRegistration(reg(tc.name, 4, tc.mem, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
		if n := node(c, tc.name); n.Reason != tc.reason {
			t.Errorf("%s with %d MB: reason %q, want %q", tc.name, tc.mem, n.Reason, tc.reason)
		}
	}
}

// REQUEST_RECONFIGURE and REQUEST_SHUTDOWN skip a CLOUD node powered down
// or powering down; one powering up, and other nodes powered down, get
// them.
func TestBroadcastSkipsPoweredDownCloud(t *testing.T) {
	c, _ := newTestController(t, "NodeName=c[1-3] CPUs=2 RealMemory=500 State=CLOUD\nPartitionName=cloud Nodes=c[1-3]\n")
	c.mu.Lock()
	node := func(name string) *Node { return c.nodeIndex[name] }
	node("c2").State = msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweringDown
	node("c3").State = msg.NodeStateIdle | msg.NodeStateCloud | msg.NodeStatePoweringUp
	node("n1").State |= msg.NodeStatePoweredDown
	c.mu.Unlock()
	got := strings.Join(c.broadcastNodes(), ",")
	if strings.Contains(got, "c1") || strings.Contains(got, "c2") || !strings.Contains(got, "c3") || !strings.Contains(got, "n1") {
		t.Errorf("broadcast to %s", got)
	}
}
