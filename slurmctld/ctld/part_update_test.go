package ctld

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// partReq is update_part_msg_t as slurm_init_part_desc_msg leaves it:
// everything unchanged.
func partReq(name string) *msg.UpdatePartitionRequest {
	return &msg.UpdatePartitionRequest{
		Name: msg.Str(name), DefMemPerCPU: noVal64, DefaultTime: noVal, GraceTime: noVal,
		MaxCPUsPerNode: noVal, MaxMemPerCPU: noVal64, MaxNodes: noVal, MaxShare: noVal16,
		MaxTime: noVal, MinNodes: noVal, OverTimeLimit: noVal16, PreemptMode: noVal16,
		PriorityJobFactor: noVal16, PriorityTier: noVal16, StateUp: noVal16,
	}
}

func part(c *Controller, name string) *Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.findPart(name)
}

func TestUpdatePartition(t *testing.T) {
	type check func(t *testing.T, c *Controller)
	with := func(name string, f func(r *msg.UpdatePartitionRequest)) *msg.UpdatePartitionRequest {
		r := partReq(name)
		f(r)
		return r
	}
	for _, tc := range []struct {
		name   string
		req    *msg.UpdatePartitionRequest
		create bool
		rc     int
		check  check
	}{
		{"state down", with("debug", func(r *msg.UpdatePartitionRequest) { r.StateUp = msg.PartitionDown }), false, 0,
			func(t *testing.T, c *Controller) {
				if p := part(c, "debug"); p.StateUp != msg.PartitionDown || p.record(4).StateUp != msg.PartitionDown {
					t.Errorf("state %d", p.StateUp)
				}
			}},
		{"times", with("debug", func(r *msg.UpdatePartitionRequest) { r.MaxTime, r.DefaultTime = 30, 10 }), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.MaxTime != 30 || r.DefaultTime != 10 {
					t.Errorf("max %d default %d", r.MaxTime, r.DefaultTime)
				}
			}},
		{"default time over max time is ignored", with("debug", func(r *msg.UpdatePartitionRequest) { r.MaxTime, r.DefaultTime = 30, 60 }), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.MaxTime != 30 || r.DefaultTime != noVal {
					t.Errorf("max %d default %d", r.MaxTime, r.DefaultTime)
				}
			}},
		{"unknown partition", partReq("nosuch"), false, slurmerr.ESLURM_INVALID_PARTITION_NAME, nil},
		{"no name", &msg.UpdatePartitionRequest{}, false, slurmerr.ESLURM_INVALID_PARTITION_NAME, nil},
		{"create duplicate", partReq("debug"), true, slurmerr.ESLURM_INVALID_PARTITION_NAME, nil},
		{"nodes", with("debug", func(r *msg.UpdatePartitionRequest) { r.Nodes = msg.Str("n1,h1") }), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.Nodes.Value != "n1,h1" || r.TotalNodes != 2 {
					t.Errorf("nodes %q total %d", r.Nodes.Value, r.TotalNodes)
				}
				if n := node(c, "h1"); !slices.Equal(n.Partitions, []string{"debug", "hid"}) {
					t.Errorf("h1 in %v", n.Partitions)
				}
				if n := node(c, "n2"); len(n.Partitions) != 0 {
					t.Errorf("n2 in %v", n.Partitions)
				}
			}},
		{"unknown node keeps the old string", with("debug", func(r *msg.UpdatePartitionRequest) { r.Nodes = msg.Str("n1,nx") }), false, slurmerr.ESLURM_INVALID_NODE_NAME,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.Nodes.Value != "n[1-3]" || r.TotalNodes != 1 {
					t.Errorf("nodes %q total %d", r.Nodes.Value, r.TotalNodes)
				}
			}},
		{"no nodes", with("debug", func(r *msg.UpdatePartitionRequest) { r.Nodes = msg.Str("") }), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.Nodes.Valid || r.TotalNodes != 0 || r.TresFmtStr.Valid {
					t.Errorf("nodes %+v total %d tres %+v", r.Nodes, r.TotalNodes, r.TresFmtStr)
				}
			}},
		{"default moves", with("hid", func(r *msg.UpdatePartitionRequest) { r.Flags = msg.PartFlagDefault }), false, 0,
			func(t *testing.T, c *Controller) {
				if part(c, "debug").Flags&msg.PartFlagDefault != 0 || part(c, "hid").Flags&msg.PartFlagDefault == 0 {
					t.Errorf("default flags %#x %#x", part(c, "debug").Flags, part(c, "hid").Flags)
				}
			}},
		{"flags set and cleared", with("hid", func(r *msg.UpdatePartitionRequest) {
			r.Flags = partFlagHiddenClr | msg.PartFlagRootOnly | msg.PartFlagLLN
		}), false, 0,
			func(t *testing.T, c *Controller) {
				if f := part(c, "hid").Flags; f != msg.PartFlagRootOnly|msg.PartFlagLLN {
					t.Errorf("flags %#x", f)
				}
			}},
		{"oversubscribe force", with("debug", func(r *msg.UpdatePartitionRequest) { r.MaxShare = sharedForce | 2 }), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.MaxShare != sharedForce|2 {
					t.Errorf("max share %#x", r.MaxShare)
				}
			}},
		{"access lists", with("debug", func(r *msg.UpdatePartitionRequest) {
			r.AllowGroups, r.AllowAccounts = msg.Str("root"), msg.Str("a,b")
		}), false, 0,
			func(t *testing.T, c *Controller) {
				if r := part(c, "debug").record(4); r.AllowGroups.Value != "root" || r.AllowAccounts.Value != "a,b" {
					t.Errorf("groups %q accounts %q", r.AllowGroups.Value, r.AllowAccounts.Value)
				}
			}},
		{"bad billing weights", with("debug", func(r *msg.UpdatePartitionRequest) { r.BillingWeightsStr = msg.Str("cpu") }), false,
			slurmerr.ESLURM_INVALID_TRES_BILLING_WEIGHTS, nil},
		{"create", with("new", func(r *msg.UpdatePartitionRequest) { r.Nodes, r.MaxTime = msg.Str("n2"), 5 }), true, 0,
			func(t *testing.T, c *Controller) {
				r := part(c, "new").record(4)
				if r.Nodes.Value != "n2" || r.MaxTime != 5 || r.MinNodes != 1 || r.StateUp != msg.PartitionUp || r.PriorityTier != 1 {
					t.Errorf("created %+v", r)
				}
			}},
		{"create with bad billing weights is undone", with("new", func(r *msg.UpdatePartitionRequest) { r.BillingWeightsStr = msg.Str("x=y") }), true,
			slurmerr.ESLURM_INVALID_TRES_BILLING_WEIGHTS,
			func(t *testing.T, c *Controller) {
				if part(c, "new") != nil {
					t.Error("partition left behind")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, "")
			if rc := c.UpdatePartition(tc.req, tc.create); rc != tc.rc {
				t.Fatalf("rc %d, want %d", rc, tc.rc)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestPartitionRPCAccess(t *testing.T) {
	c, _ := newTestController(t, "")
	call := func(mt msgtype.Type, body any, uid uint32) int {
		r := &server.Request{Body: body, Identity: auth.Identity{UID: uid}}
		r.Header.MsgType = mt
		return int(c.Serve(context.Background(), r).Body.(codec.ReturnCode).RC)
	}
	req := partReq("debug")
	req.StateUp = msg.PartitionDown
	if rc := call(msgtype.REQUEST_UPDATE_PARTITION, req, 1000); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("user update: rc %d", rc)
	}
	if part(c, "debug").StateUp != msg.PartitionUp {
		t.Error("a user's update was applied")
	}
	if rc := call(msgtype.REQUEST_DELETE_PARTITION, &msg.DeletePartitionRequest{Name: msg.Str("hid")}, 1000); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("user delete: rc %d", rc)
	}
	if rc := call(msgtype.REQUEST_UPDATE_PARTITION, req, 0); rc != 0 || part(c, "debug").StateUp != msg.PartitionDown {
		t.Errorf("root update: rc %d", rc)
	}
	if rc := call(msgtype.REQUEST_DELETE_PARTITION, &msg.DeletePartitionRequest{Name: msg.Str("nosuch")}, 0); rc != slurmerr.ESLURM_INVALID_PARTITION_NAME {
		t.Errorf("delete unknown: rc %d", rc)
	}
	if rc := call(msgtype.REQUEST_DELETE_PARTITION, &msg.DeletePartitionRequest{Name: msg.Str("hid")}, 0); rc != 0 || part(c, "hid") != nil {
		t.Errorf("delete: rc %d", rc)
	}
	if n := node(c, "h1"); len(n.Partitions) != 0 {
		t.Errorf("h1 still in %v", n.Partitions)
	}
}

func TestDeletePartitionInUse(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	req := submitReq(1)
	d := req.Body.(*msg.JobDesc)
	d.Priority = 0 // held: stays pending
	if resp := ctl.Serve(context.Background(), req); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %+v", resp)
	}
	if rc := ctl.DeletePartition("debug"); rc != slurmerr.ESLURM_PARTITION_IN_USE {
		t.Errorf("delete with a pending job: rc %d", rc)
	}
	if rc := ctl.DeletePartition("hid"); rc != 0 {
		t.Errorf("delete unused: rc %d", rc)
	}
}

func TestUpdateNodeFeaturesWeight(t *testing.T) {
	upd := func(names string, f func(r *msg.UpdateNodeRequest)) *msg.UpdateNodeRequest {
		r := msg.NewUpdateNodeRequest()
		r.NodeNames = msg.Str(names)
		f(&r)
		return &r
	}
	type want struct{ avail, act string }
	for _, tc := range []struct {
		name   string
		reqs   []*msg.UpdateNodeRequest
		rc     int
		n1     want
		weight uint32
	}{
		{"available sets active", []*msg.UpdateNodeRequest{upd("n1", func(r *msg.UpdateNodeRequest) { r.Features = msg.Str("a,b") })},
			0, want{"a,b", "a,b"}, 1},
		{"active subset", []*msg.UpdateNodeRequest{
			upd("n1", func(r *msg.UpdateNodeRequest) { r.Features = msg.Str("a,b") }),
			upd("n1", func(r *msg.UpdateNodeRequest) { r.FeaturesAct = msg.Str("b") }),
		}, 0, want{"a,b", "b"}, 1},
		{"active not a subset", []*msg.UpdateNodeRequest{
			upd("n1", func(r *msg.UpdateNodeRequest) { r.Features = msg.Str("a") }),
			upd("n1", func(r *msg.UpdateNodeRequest) { r.FeaturesAct, r.Weight = msg.Str("c"), 5 }),
		}, slurmerr.ESLURM_ACTIVE_FEATURE_NOT_SUBSET, want{"a", "a"}, 1},
		{"weight", []*msg.UpdateNodeRequest{upd("n[1-2]", func(r *msg.UpdateNodeRequest) { r.Weight = 9 })}, 0, want{"", ""}, 9},
		{"weight not set when a node is unknown", []*msg.UpdateNodeRequest{
			upd("n1,nx", func(r *msg.UpdateNodeRequest) { r.Weight, r.Comment = 9, msg.Str("c") }),
		}, slurmerr.ESLURM_INVALID_NODE_NAME, want{"", ""}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestController(t, "")
			rc := 0
			for _, r := range tc.reqs {
				rc, _ = c.UpdateNode(r, 0)
			}
			n := node(c, "n1")
			if rc != tc.rc || n.Features != tc.n1.avail || n.FeaturesAct != tc.n1.act || n.Weight != tc.weight {
				t.Errorf("rc %d features %q/%q weight %d, want %d %q/%q %d", rc, n.Features, n.FeaturesAct, n.Weight,
					tc.rc, tc.n1.avail, tc.n1.act, tc.weight)
			}
			rec := c.nodeRecord(n)
			if rec.Features.Value != tc.n1.avail || rec.FeaturesAct.Value != tc.n1.act || rec.Weight != tc.weight {
				t.Errorf("record %+v %+v %d", rec.Features, rec.FeaturesAct, rec.Weight)
			}
		})
	}
}

// TestSchedulerSeesUpdates: the job manager's view follows partition and
// node updates.
func TestSchedulerSeesUpdates(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	req := partReq("debug")
	req.MaxTime, req.StateUp, req.Nodes = 30, msg.PartitionDrain, msg.Str("n[1-2]")
	if rc := ctl.UpdatePartition(req, false); rc != 0 {
		t.Fatal(rc)
	}
	nr := msg.NewUpdateNodeRequest()
	nr.NodeNames, nr.Features, nr.Weight = msg.Str("n2"), msg.Str("big"), 3
	if rc, _ := ctl.UpdateNode(&nr, 0); rc != 0 {
		t.Fatal(rc)
	}
	create := partReq("extra")
	create.Nodes = msg.Str("n3")
	if rc := ctl.UpdatePartition(create, true); rc != 0 {
		t.Fatal(rc)
	}
	ctl.mu.Lock()
	cl, err := ctl.jobCluster()
	ctl.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Partitions) != 3 {
		t.Fatalf("%d partitions", len(cl.Partitions))
	}
	p := cl.Partitions[0]
	if p.MaxTime != 30 || p.State != sched.PartDrain || !slices.Equal(p.Nodes, []int{0, 1}) || !p.Default {
		t.Errorf("debug as scheduled: %+v", p)
	}
	if x := cl.Partitions[2]; x.Name != "extra" || !slices.Equal(x.Nodes, []int{2}) || x.Default {
		t.Errorf("extra as scheduled: %+v", x)
	}
	if n := cl.Nodes[1]; !slices.Equal(n.Features, []string{"big"}) || n.Weight != 3 {
		t.Errorf("n2 as scheduled: %+v", n)
	}
}

func TestRecoverFull(t *testing.T) {
	c, _ := newTestController(t, "")
	req := partReq("debug")
	req.StateUp, req.MaxTime, req.Nodes, req.PriorityTier = msg.PartitionDown, 30, msg.Str("n[1-2]"), 4
	c.UpdatePartition(req, false)
	create := partReq("made")
	create.Nodes, create.MaxTime, create.Flags = msg.Str("n3"), 7, msg.PartFlagDefault
	c.UpdatePartition(create, true)
	nr := msg.NewUpdateNodeRequest()
	nr.NodeNames, nr.Features, nr.FeaturesAct, nr.Weight = msg.Str("n1"), msg.Str("a,b"), msg.Str("a"), 9
	nr.Comment, nr.Extra = msg.Str("note"), msg.Str("e")
	c.UpdateNode(&nr, 0)
	dr := msg.NewUpdateNodeRequest()
	dr.NodeNames, dr.NodeState, dr.Reason = msg.Str("n2"), msg.NodeStateDrain, msg.Str("disk")
	c.UpdateNode(&dr, 0)
	c.mu.RLock()
	st := c.savedState()
	c.mu.RUnlock()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "node_state.json")
	if err := writeStateFile(path, data); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSavedState(path)
	if err != nil || got == nil {
		t.Fatalf("read: %v", err)
	}

	// Default start: partitions and features from slurm.conf; drain,
	// reason, comment and extra kept.
	def, _ := newTestController(t, "")
	def.RestoreNodes(got.Nodes)
	if p := part(def, "debug"); p.StateUp != msg.PartitionUp || uint32(p.Conf.MaxTime) != conf.Infinite32 || part(def, "made") != nil {
		t.Errorf("default start kept partition state: %d %d", p.StateUp, p.Conf.MaxTime)
	}
	if n := node(def, "n1"); n.Features != "" || n.Weight != 1 || n.Comment != "note" || n.Extra != "e" {
		t.Errorf("default start n1: %+v", n)
	}
	if n := node(def, "n2"); !n.IsDrain() || n.Reason != "disk" {
		t.Errorf("default start n2: %s %q", StateString(n.State), n.Reason)
	}

	// -R: partitions, created ones too, and node records.
	full, _ := newTestController(t, "")
	full.RecoverFull(got)
	r := part(full, "debug").record(4)
	if r.StateUp != msg.PartitionDown || r.MaxTime != 30 || r.Nodes.Value != "n[1-2]" || r.PriorityTier != 4 || r.Flags&msg.PartFlagDefault != 0 {
		t.Errorf("-R debug: %+v", r)
	}
	m := part(full, "made")
	if m == nil || m.record(4).Nodes.Value != "n3" || m.Flags&msg.PartFlagDefault == 0 {
		t.Fatalf("-R made: %+v", m)
	}
	if n := node(full, "n3"); !slices.Equal(n.Partitions, []string{"made"}) {
		t.Errorf("n3 in %v", n.Partitions)
	}
	if n := node(full, "n1"); n.Features != "a,b" || n.FeaturesAct != "a" || n.Weight != 1 || n.Comment != "note" {
		t.Errorf("-R n1: %+v (weight stays slurm.conf's, as 22.05)", n)
	}
	if n := node(full, "n2"); !n.IsDrain() || n.Reason != "disk" {
		t.Errorf("-R n2: %s %q", StateString(n.State), n.Reason)
	}
}

// TestReadNodeStateV1 reads a version 1 file (DOWN/DRAIN/FAIL nodes only).
func TestReadNodeStateV1(t *testing.T) {
	st, err := ReadSavedState(filepath.Join("testdata", "node_state_v1.json"))
	if err != nil || st == nil || st.Version != 1 || len(st.Nodes) != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	c, _ := newTestController(t, "")
	c.RecoverFull(st)
	if n := node(c, "n2"); !n.IsDrain() || n.Reason != "disk swap" {
		t.Errorf("n2: %s %q", StateString(n.State), n.Reason)
	}
	if n := node(c, "n3"); !n.IsDown() || n.Reason != "gone" {
		t.Errorf("n3: %s %q", StateString(n.State), n.Reason)
	}
}

// BenchmarkSavedState is the once-a-second cost of building the state
// file's content for 10,000 nodes.
func BenchmarkSavedState(b *testing.B) {
	extra := "NodeName=big[1-10000] CPUs=4 RealMemory=1000\nPartitionName=big Nodes=big[1-10000]\n"
	c, err := conf.Parse("slurm.conf", []byte(testConf+extra), conf.MapFS{})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := NewConfig(c, "/etc/slurm/slurm.conf")
	if err != nil {
		b.Fatal(err)
	}
	ctl, err := New(Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ctl.mu.RLock()
		st := ctl.savedState()
		ctl.mu.RUnlock()
		if _, err := json.Marshal(st); err != nil {
			b.Fatal(err)
		}
	}
}

// -R without power saving drops the saved power flags (nothing would
// resume the node); with it they stay.
func TestRecoverFullPowerFlags(t *testing.T) {
	const ps = "SuspendProgram=/bin/true\nResumeProgram=/bin/true\n"
	for _, extra := range []string{"", ps} {
		src, _ := newTestController(t, ps)
		src.mu.Lock()
		src.nodeIndex["n1"].State = msg.NodeStateIdle | msg.NodeStatePoweredDown
		src.nodeIndex["n2"].State = msg.NodeStateIdle | msg.NodeStatePoweringUp | msg.NodeStateNoRespond
		st := src.savedState()
		src.mu.Unlock()
		c, _ := newTestController(t, extra)
		c.RecoverFull(&st)
		for name, want := range map[string]uint32{
			"n1": msg.NodeStateIdle | msg.NodeStatePoweredDown,
			"n2": msg.NodeStateIdle | msg.NodeStatePoweringUp | msg.NodeStateNoRespond,
		} {
			if extra == "" {
				want &^= msg.NodeStatePoweredDown | msg.NodeStatePoweringUp
			}
			if got := node(c, name).State; got != want {
				t.Errorf("power save %v: %s state %#x, want %#x", extra != "", name, got, want)
			}
		}
	}
}
