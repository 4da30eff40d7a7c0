package ctld

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

const testConf = `ClusterName=t
SlurmctldHost=localhost
SlurmUser=root
SelectType=select/cons_tres
ReturnToService=1
SlurmdTimeout=30
NodeName=n[1-3] CPUs=4 RealMemory=1000 TmpDisk=100 State=UNKNOWN
NodeName=h1 CPUs=2 RealMemory=500
PartitionName=debug Nodes=n[1-3] Default=YES
PartitionName=hid Nodes=h1 Hidden=YES
`

type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

func newTestController(t *testing.T, extra string) (*Controller, *fakeClock) {
	t.Helper()
	c, err := conf.Parse("slurm.conf", []byte(testConf+extra), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(c, "/etc/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	ctl, err := New(Options{Config: cfg, Now: clk.now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return ctl, clk
}

func reg(name string, cpus uint16, mem uint64, tmp uint32) *msg.NodeRegistration {
	return &msg.NodeRegistration{
		NodeName: msg.Str(name), CPUs: cpus, Boards: 1, Sockets: cpus, Cores: 1, Threads: 1,
		RealMemory: mem, TmpDisk: tmp, UpTime: 100, Version: msg.Str("22.05.8"),
		Arch: msg.Str("x86_64"), OS: msg.Str("Linux"), HashVal: noVal, Flags: msg.SlurmdRegFlagResp,
	}
}

func node(c *Controller, name string) *Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.nodeIndex[name]
}

func TestRegistrationValidation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		extra    string
		reg      *msg.NodeRegistration
		state    string
		reason   string
		newlyUp  bool
		errKnown bool
	}{
		{name: "ok", reg: reg("n1", 4, 1000, 100), state: "IDLE", newlyUp: true},
		{name: "more than configured", reg: reg("n1", 8, 4000, 1000), state: "IDLE", newlyUp: true},
		{name: "low memory", reg: reg("n1", 4, 999, 100), state: "INVAL",
			reason: "Low RealMemory (reported:999 < 100.00% of configured:1000)"},
		{name: "low cpus", reg: reg("n1", 2, 1000, 100), state: "INVAL",
			reason: "Low socket*core*thread count, Low CPUs"},
		{name: "low tmp", reg: reg("n1", 4, 1000, 10), state: "INVAL", reason: "Low TmpDisk"},
		{name: "everything low", reg: reg("n1", 1, 10, 1), state: "INVAL",
			reason: "Low socket*core*thread count, Low CPUs, Low RealMemory (reported:10 < 100.00% of configured:1000), Low TmpDisk"},
		{name: "mem percent", extra: "SlurmctldParameters=node_reg_mem_percent=90\n", reg: reg("n1", 4, 950, 100), state: "IDLE", newlyUp: true},
		{name: "mem percent low", extra: "SlurmctldParameters=node_reg_mem_percent=90\n", reg: reg("n1", 4, 800, 100), state: "INVAL",
			reason: "Low RealMemory (reported:800 < 90.00% of configured:1000)"},
		// strtod: the leading number, 0 when there is none.
		{name: "mem percent prefix", extra: "SlurmctldParameters=node_reg_mem_percent=90abc\n", reg: reg("n1", 4, 800, 100), state: "INVAL",
			reason: "Low RealMemory (reported:800 < 90.00% of configured:1000)"},
		{name: "mem percent garbage", extra: "SlurmctldParameters=node_reg_mem_percent=abc\n", reg: reg("n1", 4, 10, 100), state: "IDLE", newlyUp: true},
		{name: "mem percent out of range", extra: "SlurmctldParameters=node_reg_mem_percent=1e999\n", reg: reg("n1", 4, 999, 100), state: "INVAL",
			reason: "Low RealMemory (reported:999 < 100.00% of configured:1000)"},
		{name: "config_overrides", extra: "SlurmdParameters=config_overrides\n", reg: reg("n1", 1, 10, 1), state: "IDLE", newlyUp: true},
		{name: "unknown node", reg: reg("zz", 4, 1000, 100), errKnown: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, tc.extra)
			up, err := c.ValidateRegistration(tc.reg, 0x2600)
			if tc.errKnown {
				if err == nil {
					t.Fatal("registration of an unknown node accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := node(c, "n1")
			if got := StateString(n.State); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
			if n.Reason != tc.reason {
				t.Errorf("reason %q, want %q", n.Reason, tc.reason)
			}
			if up != tc.newlyUp {
				t.Errorf("newlyUp %v, want %v", up, tc.newlyUp)
			}
			if tc.reason != "" && !n.IsDrain() {
				t.Errorf("invalid registration did not drain the node")
			}
		})
	}
}

func TestRegistrationReply(t *testing.T) {
	c, _ := newTestController(t, "")
	r := &server.Request{Body: *reg("n2", 4, 1000, 100), Identity: auth.Identity{UID: 0}}
	r.Header.MsgType = msgtype.MESSAGE_NODE_REGISTRATION_STATUS
	resp := c.Serve(context.Background(), r)
	if resp.MsgType != msgtype.RESPONSE_NODE_REGISTRATION {
		t.Fatalf("reply %v", resp.MsgType)
	}
	tres := resp.Body.(*msg.NodeRegResponse).Tres
	if len(tres) != 8 || tres[0].Count != 14 || tres[1].Count != 3500 || tres[3].Count != 4 {
		t.Errorf("TRES %+v", tres)
	}
	// Not SlurmUser: answered 0 (so slurmd stops retrying) but ignored.
	r.Body = *reg("n3", 4, 1000, 100)
	r.Identity.UID = 1000
	if resp := c.Serve(context.Background(), r); resp.MsgType != msgtype.RESPONSE_SLURM_RC {
		t.Errorf("unauthorized registration answered %v", resp.MsgType)
	}
	if n := node(c, "n3"); !n.IsUnknown() {
		t.Errorf("unauthorized registration changed n3 to %s", StateString(n.State))
	}
}

func TestUpdateNode(t *testing.T) {
	upd := func(names, reason string, st uint32) *msg.UpdateNodeRequest {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str(names)
		if reason != "" {
			r.Reason = msg.Str(reason)
		}
		r.NodeState = st
		return &r
	}
	type step struct {
		req    *msg.UpdateNodeRequest
		rc     int
		state  string
		reason string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"drain then resume", []step{
			{upd("n1", "maint", msg.NodeStateDrain), 0, "DRAINED", "maint"},
			{upd("n1", "", msg.NodeResume), 0, "IDLE*", ""},
		}},
		{"down then resume", []step{
			{upd("n1", "dead", msg.NodeStateDown), 0, "DOWN", "dead"},
			{upd("n1", "", msg.NodeResume), 0, "IDLE*", ""},
		}},
		{"undrain", []step{
			{upd("n1", "x", msg.NodeStateDrain), 0, "DRAINED", "x"},
			{upd("n1", "", msg.NodeStateUndrain), 0, "IDLE*", ""},
		}},
		{"reason only on idle node is cleared", []step{
			{upd("n1", "note", noVal), 0, "IDLE", ""},
		}},
		{"resume idle node", []step{
			{upd("n1", "", msg.NodeResume), slurmerr.ESLURM_INVALID_NODE_STATE, "IDLE", ""},
		}},
		{"idle to allocated refused", []step{
			{upd("n1", "", msg.NodeStateAllocated), slurmerr.ESLURM_INVALID_NODE_STATE, "IDLE", ""},
		}},
		// As 22.05's update_node: the nodes are updated one by one, so n1
		// is drained before the unknown name stops the update.
		{"unknown node", []step{
			{upd("n1,nx", "x", msg.NodeStateDrain), slurmerr.ESLURM_INVALID_NODE_NAME, "DRAINED", "x"},
		}},
		{"range", []step{
			{upd("n[1-2]", "both", msg.NodeStateDrain), 0, "DRAINED", "both"},
		}},
		{"a new reason replaces the old one", []step{
			{upd("n1", "a", msg.NodeStateDrain), 0, "DRAINED", "a"},
			{upd("n1", "b", msg.NodeStateDrain), 0, "DRAINED", "b"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, "")
			for _, n := range []string{"n1", "n2"} {
				if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range tc.steps {
				rc, _ := c.UpdateNode(s.req, 0)
				n := node(c, "n1")
				if rc != s.rc || StateString(n.State) != s.state || n.Reason != s.reason {
					t.Errorf("step %d: rc %d state %s reason %q, want %d %s %q",
						i, rc, StateString(n.State), n.Reason, s.rc, s.state, s.reason)
				}
			}
		})
	}
}

func TestUpdateNodeAuthorization(t *testing.T) {
	c, _ := newTestController(t, "")
	req := msg.NewUpdateNodeRequest()
	req.NodeNames, req.NodeState, req.Reason = msg.Str("n1"), msg.NodeStateDrain, msg.Str("x")
	for _, tc := range []struct {
		uid uint32
		rc  uint32
	}{{1000, slurmerr.ESLURM_USER_ID_MISSING}, {0, 0}} {
		r := &server.Request{Body: req, Identity: auth.Identity{UID: tc.uid}}
		r.Header.MsgType = msgtype.REQUEST_UPDATE_NODE
		resp := c.Serve(context.Background(), r)
		if got := resp.Body.(codec.ReturnCode).RC; got != tc.rc {
			t.Errorf("uid %d: rc %d, want %d", tc.uid, got, tc.rc)
		}
	}
}

func TestInfoNoChange(t *testing.T) {
	c, clk := newTestController(t, "")
	call := func(mt msgtype.Type, body any, uid uint32) *server.Response {
		r := &server.Request{Body: body, Identity: auth.Identity{UID: uid}}
		r.Header.MsgType = mt
		return c.Serve(context.Background(), r)
	}
	clk.t = clk.t.Add(10 * time.Second)
	now := clk.t.Unix()
	for _, tc := range []struct {
		mt   msgtype.Type
		body any
		want msgtype.Type
	}{
		{msgtype.REQUEST_NODE_INFO, msg.InfoRequest{}, msgtype.RESPONSE_NODE_INFO},
		{msgtype.REQUEST_NODE_INFO, msg.InfoRequest{LastUpdate: now}, msgtype.RESPONSE_SLURM_RC},
		{msgtype.REQUEST_PARTITION_INFO, msg.InfoRequest{}, msgtype.RESPONSE_PARTITION_INFO},
		{msgtype.REQUEST_PARTITION_INFO, msg.InfoRequest{LastUpdate: now}, msgtype.RESPONSE_SLURM_RC},
		{msgtype.REQUEST_BUILD_INFO, msg.LastUpdateRequest{}, msgtype.RESPONSE_BUILD_INFO},
		{msgtype.REQUEST_BUILD_INFO, msg.LastUpdateRequest{LastUpdate: now}, msgtype.RESPONSE_SLURM_RC},
		{msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{}, msgtype.RESPONSE_JOB_INFO},
		{msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{LastUpdate: now}, msgtype.RESPONSE_SLURM_RC},
	} {
		resp := call(tc.mt, tc.body, 1000)
		if resp.MsgType != tc.want {
			t.Errorf("%v %+v: reply %v, want %v", tc.mt, tc.body, resp.MsgType, tc.want)
			continue
		}
		if tc.want == msgtype.RESPONSE_SLURM_RC {
			if rc := resp.Body.(codec.ReturnCode).RC; rc != slurmerr.SLURM_NO_CHANGE_IN_DATA {
				t.Errorf("%v: rc %d, want SLURM_NO_CHANGE_IN_DATA", tc.mt, rc)
			}
		}
	}
	// A change after the client's copy: full data again.
	if _, err := c.ValidateRegistration(reg("n1", 4, 1000, 100), 0x2600); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(time.Second)
	c.mu.Lock()
	c.lastNodeUpdate = clk.t.Unix()
	c.mu.Unlock()
	if resp := call(msgtype.REQUEST_NODE_INFO, msg.InfoRequest{LastUpdate: now}, 0); resp.MsgType != msgtype.RESPONSE_NODE_INFO {
		t.Errorf("changed nodes answered %v", resp.MsgType)
	}
}

func TestHiddenPartition(t *testing.T) {
	c, _ := newTestController(t, "")
	call := func(mt msgtype.Type, flags uint16, uid uint32) any {
		r := &server.Request{Body: msg.InfoRequest{ShowFlags: flags}, Identity: auth.Identity{UID: uid}}
		r.Header.MsgType = mt
		return c.Serve(context.Background(), r).Body
	}
	parts := call(msgtype.REQUEST_PARTITION_INFO, 0, 1000).(*msg.PartitionInfoResponse)
	if len(parts.Partitions) != 1 || parts.Partitions[0].Name.Value != "debug" {
		t.Errorf("user sees partitions %+v", parts.Partitions)
	}
	if p := call(msgtype.REQUEST_PARTITION_INFO, showAll, 1000).(*msg.PartitionInfoResponse); len(p.Partitions) != 2 {
		t.Errorf("-a shows %d partitions", len(p.Partitions))
	}
	nodes := call(msgtype.REQUEST_NODE_INFO, 0, 1000).(*msg.NodeInfoResponse)
	if len(nodes.Nodes) != 4 || nodes.Nodes[3].Name.Valid {
		t.Errorf("h1 (only in a hidden partition) not blanked: %+v", nodes.Nodes[3].Name)
	}
	if nodes := call(msgtype.REQUEST_NODE_INFO, 0, 0).(*msg.NodeInfoResponse); !nodes.Nodes[3].Name.Valid {
		t.Errorf("root does not see h1")
	}
	d := parts.Partitions[0]
	if d.TotalCPUs != 12 || d.TotalNodes != 3 || d.Nodes.Value != "n[1-3]" || d.TresFmtStr.Value != "cpu=12,mem=3000M,node=3,billing=12" || d.Flags&msg.PartFlagDefault == 0 {
		t.Errorf("debug partition %+v", d)
	}
}

// TestPingTimeout drives the ping plan with a fake clock: a node silent
// for SlurmdTimeout is set DOWN "Not responding"; nodes not yet booted
// get a registration request.
func TestPingTimeout(t *testing.T) {
	c, clk := newTestController(t, "")
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	_, regs := c.planPing()
	if strings.Join(regs, ",") != "h1" {
		t.Errorf("first cycle asks %v to register, want h1 (never registered)", regs)
	}
	clk.t = clk.t.Add(11 * time.Second)
	c.nodeNotResp("n2", clk.t.Unix(), msgtype.RESPONSE_FORWARD_FAILED)
	if n := node(c, "n2"); StateString(n.State) != "IDLE*" {
		t.Errorf("after a failed ping n2 is %s", StateString(n.State))
	}
	for i := 0; i < 4; i++ {
		clk.t = clk.t.Add(10 * time.Second)
		c.planPing()
	}
	n := node(c, "n2")
	if StateString(n.State) != "DOWN*" || n.Reason != "Not responding" {
		t.Errorf("n2 is %s %q, want DOWN* \"Not responding\"", StateString(n.State), n.Reason)
	}
	// ReturnToService=1: a "Not responding" node comes back when it
	// answers.
	c.nodeDidResp(forwardResult("n2"))
	if n := node(c, "n2"); StateString(n.State) != "IDLE" || n.Reason != "" {
		t.Errorf("after answering n2 is %s %q", StateString(n.State), n.Reason)
	}
}

func TestConfHashCapture(t *testing.T) {
	// The real slurmd that made the captures registered this hash for
	// this file (slurmd-registration.pcap).
	h, err := confHash("testdata/capture-slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if h != 2988253629 {
		t.Errorf("hash %d, want 2988253629", h)
	}
}

func TestMemUnits(t *testing.T) {
	for in, want := range map[uint64]string{0: "0M", 1000: "1000M", 1024: "1G", 4096: "4G", 8192: "8G", 1536: "1536M", 1 << 20: "1T"} {
		if got := memUnits(in); got != want {
			t.Errorf("memUnits(%d) = %s, want %s", in, got, want)
		}
	}
}

func TestValidStateChange(t *testing.T) {
	for _, tc := range []struct {
		old, new uint32
		ok       bool
	}{
		{msg.NodeStateIdle, msg.NodeStateDrain, true},
		{msg.NodeStateIdle, msg.NodeResume, false},
		{msg.NodeStateIdle | msg.NodeStateDrain, msg.NodeResume, true},
		{msg.NodeStateDown, msg.NodeResume, true},
		{msg.NodeStateUnknown | msg.NodeStateDrain | msg.NodeStateInvalidReg, msg.NodeResume, false},
		{msg.NodeStateIdle | msg.NodeStateInvalidReg, msg.NodeStateUndrain, false},
		{msg.NodeStateIdle, msg.NodeStateAllocated, false},
		{msg.NodeStateDown, msg.NodeStateIdle, true},
		{msg.NodeStateAllocated, msg.NodeStateIdle, false},
		{msg.NodeStateIdle, msg.NodeStateFuture, true},
		{msg.NodeStateIdle, msg.NodeStatePowerDown, false},
	} {
		if got := validStateChange(tc.old, tc.new); got != tc.ok {
			t.Errorf("%s -> %#x: %v, want %v", StateString(tc.old), tc.new, got, tc.ok)
		}
	}
}

func forwardResult(node string) forward.Result {
	return forward.Result{Node: node, MsgType: msgtype.RESPONSE_PING_SLURMD, Body: &msg.PingSlurmdResponse{CPULoad: 1, FreeMem: 2}}
}

// TestReturnToService covers ReturnToService 0, 1 and 2 for a node that
// was set DOWN "Not responding" and then answers a ping or registers,
// and a node that registers after an unexpected reboot.
func TestReturnToService(t *testing.T) {
	for _, tc := range []struct {
		rts                  string
		afterPing, afterReg  string
		rebootState, rebootR string
	}{
		{"0", "DOWN", "DOWN", "DOWN", "Node unexpectedly rebooted"},
		{"1", "IDLE", "IDLE", "DOWN", "Node unexpectedly rebooted"},
		{"2", "IDLE", "IDLE", "IDLE", ""},
	} {
		t.Run("ReturnToService="+tc.rts, func(t *testing.T) {
			extra := "ReturnToService=" + tc.rts + "\n"
			setup := func() (*Controller, *fakeClock) {
				c, clk := newTestController(t, extra)
				if _, err := c.ValidateRegistration(reg("n1", 4, 1000, 100), 0x2600); err != nil {
					t.Fatal(err)
				}
				clk.t = clk.t.Add(5 * time.Second)
				n := node(c, "n1")
				c.mu.Lock()
				c.setNodeDown(n, "Not responding", clk.t.Unix())
				c.mu.Unlock()
				clk.t = clk.t.Add(5 * time.Second)
				return c, clk
			}
			c, _ := setup()
			c.nodeDidResp(forwardResult("n1"))
			if got := StateString(node(c, "n1").State); got != tc.afterPing {
				t.Errorf("after a ping reply: %s, want %s", got, tc.afterPing)
			}
			c, _ = setup()
			if _, err := c.ValidateRegistration(reg("n1", 4, 1000, 100), 0x2600); err != nil {
				t.Fatal(err)
			}
			if got := StateString(node(c, "n1").State); got != tc.afterReg {
				t.Errorf("after registering: %s, want %s", got, tc.afterReg)
			}

			// An idle node that registers with a boot time after its last
			// response rebooted behind the controller's back.
			c, clk := newTestController(t, extra)
			if _, err := c.ValidateRegistration(reg("n1", 4, 1000, 100), 0x2600); err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(time.Hour)
			r := reg("n1", 4, 1000, 100)
			r.UpTime = 10 // booted 10 s ago, long after the last response
			if _, err := c.ValidateRegistration(r, 0x2600); err != nil {
				t.Fatal(err)
			}
			n := node(c, "n1")
			if StateString(n.State) != tc.rebootState || n.Reason != tc.rebootR {
				t.Errorf("after a reboot: %s %q, want %s %q", StateString(n.State), n.Reason, tc.rebootState, tc.rebootR)
			}
		})
	}
}

func TestStrtod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"90", 90, true}, {" 90.5x", 90.5, true}, {"abc", 0, true}, {"", 0, true},
		{"-5", -5, true}, {"1e2", 100, true}, {"1e", 1, true}, {"2.e1z", 20, true},
		{".5", 0.5, true}, {".", 0, true}, {"1e999", 0, false},
	} {
		got, ok := strtod(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("strtod(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestConfigProblems: what reading slurm.conf logs and goes on from, in
// Slurm's words.
func TestConfigProblems(t *testing.T) {
	c, err := conf.Parse("slurm.conf", []byte(testConf+"SlurmctldParameters=node_reg_mem_percent=1e999\nTreeWidth=10\nTreeWidth=20\n"), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(c, "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TreeWidth 1 specified more than once, latest value used",
		"validate_node_specs: Unable to convert node_reg_mem_percent=1e999 value to double"}
	if got := cfg.Problems(); !slices.Equal(got, want) || cfg.NodeRegMemPercent != -1 {
		t.Errorf("problems %q, percent %v; want %q, -1", got, cfg.NodeRegMemPercent, want)
	}
}
