package ctld

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// adminController is a controller whose slurm.conf (testConf and extra)
// and topology.conf (when topo is set) are in a temporary directory, with
// a controllable log written to the returned buffer.
func adminController(t *testing.T, extra, topo string) (*Controller, *slog.LevelVar, *slurmlog.FlagSet, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(testConf+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	if topo != "" {
		if err := os.WriteFile(filepath.Join(dir, "topology.conf"), []byte(topo), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func() (*Config, error) {
		c, err := conf.Load(conf.OSFS{}, path)
		if err != nil {
			return nil, err
		}
		return NewConfig(c, path)
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	lv, fs, buf := new(slog.LevelVar), slurmlog.NewFlagSet(nil), &bytes.Buffer{}
	h := slurmlog.New(buf, slurmlog.Options{Level: lv, Flags: fs, Program: "slurmctld"})
	ctl, err := New(Options{Config: cfg, Reload: load, Log: slog.New(slurmlog.Controlled{Handler: h, Level: lv, Flags: fs})})
	if err != nil {
		t.Fatal(err)
	}
	return ctl, lv, fs, buf
}

func adminServe(c *Controller, uid uint32, mt msgtype.Type, body any) *server.Response {
	r := &server.Request{Body: body, Identity: auth.Identity{UID: uid}}
	r.Header.MsgType = mt
	return c.Serve(context.Background(), r)
}

func adminRC(t *testing.T, r *server.Response) uint32 {
	t.Helper()
	rc, ok := r.Body.(codec.ReturnCode)
	if !ok {
		t.Fatalf("%v reply, want RESPONSE_SLURM_RC", r.MsgType)
	}
	return rc.RC
}

func TestSetDebugLevelAndFlags(t *testing.T) {
	c, lv, fs, buf := adminController(t, "DebugFlags=Gres\n", "")
	if got := c.buildInfo().DebugFlags; got != 1<<6 {
		t.Fatalf("DebugFlags bits from slurm.conf = %#x", got)
	}
	if rc := adminRC(t, adminServe(c, 1000, msgtype.REQUEST_SET_DEBUG_LEVEL, &msg.SetDebugLevelRequest{Level: 6})); rc != errnoEACCES {
		t.Errorf("setdebug by a user: rc %d", rc)
	}
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_LEVEL, &msg.SetDebugLevelRequest{Level: 6})); rc != 0 {
		t.Fatalf("setdebug: rc %d", rc)
	}
	if lv.Level() != slurmlog.LevelDebug2 || c.buildInfo().SlurmctldDebug != 6 {
		t.Errorf("after setdebug debug2: level %v, SlurmctldDebug %d", lv.Level(), c.buildInfo().SlurmctldDebug)
	}
	// Above debug5 is debug5.
	adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_LEVEL, &msg.SetDebugLevelRequest{Level: 40})
	if c.buildInfo().SlurmctldDebug != 9 || lv.Level() != slurmlog.LevelDebug5 {
		t.Errorf("setdebug 40: SlurmctldDebug %d", c.buildInfo().SlurmctldDebug)
	}
	if rc := adminRC(t, adminServe(c, 1000, msgtype.REQUEST_SET_DEBUG_FLAGS, &msg.SetDebugFlagsRequest{Plus: 1 << 12})); rc != errnoEACCES {
		t.Errorf("setdebugflags by a user: rc %d", rc)
	}
	adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_FLAGS, &msg.SetDebugFlagsRequest{Plus: 1 << 12})
	adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_FLAGS, &msg.SetDebugFlagsRequest{Minus: 1 << 6})
	if got := c.buildInfo().DebugFlags; got != 1<<12 || !fs.Has("Backfill") || fs.Has("Gres") {
		t.Errorf("after +Backfill -Gres: bits %#x", got)
	}
	for _, want := range []string{"Set debug level to 'debug2'", "Set debug level to 'debug5'",
		"error: set debug level request from non-super user uid=1000", "Set DebugFlags to Backfill,Gres", "Set DebugFlags to Backfill\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf)
		}
	}
	// A reconfigure reads slurm.conf again: its level and flags are back.
	if err := c.Reconfigure(); err != nil {
		t.Fatal(err)
	}
	if b := c.buildInfo(); b.SlurmctldDebug != 3 || b.DebugFlags != 1<<6 || lv.Level() != slurmlog.LevelInfo || !fs.Has("gres") || fs.Has("backfill") {
		t.Errorf("after reconfigure: SlurmctldDebug %d, DebugFlags %#x, level %v", b.SlurmctldDebug, b.DebugFlags, lv.Level())
	}
}

func TestSetSchedLogLevel(t *testing.T) {
	c, _, _, _ := adminController(t, "", "")
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_SET_SCHEDLOG_LEVEL, &msg.SetDebugLevelRequest{Level: 1})); rc != slurmerr.ESLURM_DISABLED {
		t.Errorf("without SlurmSchedLogFile: rc %d", rc)
	}
	file := filepath.Join(t.TempDir(), "sched.log")
	c, _, _, _ = adminController(t, "SlurmSchedLogFile="+file+"\n", "")
	if rc := adminRC(t, adminServe(c, 1000, msgtype.REQUEST_SET_SCHEDLOG_LEVEL, &msg.SetDebugLevelRequest{Level: 1})); rc != errnoEACCES {
		t.Errorf("by a user: rc %d", rc)
	}
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_SET_SCHEDLOG_LEVEL, &msg.SetDebugLevelRequest{Level: 7})); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	if got := c.buildInfo().SchedLogLevel; got != 1 {
		t.Errorf("SchedLogLevel %d, want 1 (clamped)", got)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(b), "sched: [") || !strings.HasSuffix(string(b), "] Set scheduler log level to 1\n") {
		t.Errorf("sched log %q, %v", b, err)
	}
}

func TestTopoInfo(t *testing.T) {
	c, _, _, _ := adminController(t, "", "")
	r := adminServe(c, 0, msgtype.REQUEST_TOPO_INFO, &msg.Empty{})
	if got := r.Body.(*msg.TopoInfoResponse); len(got.Switches) != 0 {
		t.Errorf("topology/none: %v", got.Switches)
	}
	topo := "SwitchName=s0 Nodes=n[1-2],bogus\nSwitchName=s1 Nodes=n3 LinkSpeed=5\nSwitchName=top Switches=s[0-1]\n"
	c, _, _, _ = adminController(t, "TopologyPlugin=topology/tree\n", topo)
	r = adminServe(c, 1000, msgtype.REQUEST_TOPO_INFO, &msg.Empty{})
	want := []msg.TopoSwitch{
		{Level: 0, LinkSpeed: 1, Name: msg.Str("s0"), Nodes: msg.Str("n[1-2],bogus")},
		{Level: 0, LinkSpeed: 5, Name: msg.Str("s1"), Nodes: msg.Str("n3")},
		{Level: 1, LinkSpeed: 1, Name: msg.Str("top"), Nodes: msg.Str("n[1-3]"), Switches: msg.Str("s[0-1]")},
	}
	if d := cmp.Diff(want, r.Body.(*msg.TopoInfoResponse).Switches); d != "" {
		t.Errorf("switches (-want +got):\n%s", d)
	}
}

// TestTopoInfoReadLock: scontrol show topology only reads, so it is
// answered while another reader holds the controller's lock (a write
// lock would wait for it), and readers at once with writers race on
// nothing (run with -race).
func TestTopoInfoReadLock(t *testing.T) {
	topo := "SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n3\nSwitchName=top Switches=s[0-1]\n"
	c, _, _, _ := adminController(t, "TopologyPlugin=topology/tree\n", topo)
	c.mu.RLock()
	done := make(chan *server.Response, 1)
	go func() { done <- adminServe(c, 1000, msgtype.REQUEST_TOPO_INFO, &msg.Empty{}) }()
	select {
	case r := <-done:
		if got := len(r.Body.(*msg.TopoInfoResponse).Switches); got != 3 {
			t.Errorf("%d switches, want 3", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("topology request still waiting after 60 s with a reader holding the lock")
	}
	c.mu.RUnlock()

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				// A writer: scontrol setdebug.
				adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_LEVEL, &msg.SetDebugLevelRequest{Level: uint32(i)})
				return
			}
			r := adminServe(c, 1000, msgtype.REQUEST_TOPO_INFO, &msg.Empty{})
			if got := len(r.Body.(*msg.TopoInfoResponse).Switches); got != 3 {
				t.Errorf("%d switches, want 3", got)
			}
		}()
	}
	wg.Wait()
}

func TestEmptySubsystems(t *testing.T) {
	c, _, _, _ := adminController(t, "", "")
	if r := adminServe(c, 0, msgtype.REQUEST_FRONT_END_INFO, &msg.FrontEndInfoRequest{}); r.MsgType != msgtype.RESPONSE_FRONT_END_INFO {
		t.Errorf("front end: %v", r.MsgType)
	}
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_FRONT_END_INFO, &msg.FrontEndInfoRequest{LastUpdate: 5})); rc != slurmerr.SLURM_NO_CHANGE_IN_DATA {
		t.Errorf("front end with a time: rc %d", rc)
	}
	if r := adminServe(c, 1000, msgtype.REQUEST_BURST_BUFFER_INFO, &msg.Empty{}); r.MsgType != msgtype.RESPONSE_BURST_BUFFER_INFO {
		t.Errorf("burst buffer: %v", r.MsgType)
	}
	r := adminServe(c, 1000, msgtype.REQUEST_ASSOC_MGR_INFO, &msg.AssocMgrInfoRequest{})
	if got := r.Body.(*msg.AssocMgrInfoResponse); len(got.TRESNames) != 8 || got.TRESNames[7].Value != "pages" {
		t.Errorf("assoc_mgr TRES %v", got.TRESNames)
	}
	if r := adminServe(c, 0, msgtype.REQUEST_AUTH_TOKEN, &msg.TokenRequest{}); r.MsgType != msgtype.RESPONSE_AUTH_TOKEN || r.Body.(*msg.TokenResponse).Token.Valid {
		t.Errorf("token: %v %#v", r.MsgType, r.Body)
	}
	if rc := adminRC(t, adminServe(c, 65534, msgtype.REQUEST_AUTH_TOKEN, &msg.TokenRequest{Username: msg.Str("root")})); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("token for another user: rc %d", rc)
	}
	if r := adminServe(c, 1000, msgtype.REQUEST_BURST_BUFFER_STATUS, &msg.BBStatusRequest{}); r.Body.(*msg.BBStatusResponse).Status.Valid {
		t.Errorf("bbstat: %#v", r.Body)
	}
	if r := adminServe(c, 1000, msgtype.REQUEST_SHARE_INFO, &msg.SharesRequest{}); r.MsgType != msgtype.RESPONSE_SHARE_INFO {
		t.Errorf("shares: %v", r.MsgType)
	}
	upd := &msg.UpdateFrontEndRequest{Name: msg.Str("n1")}
	if rc := adminRC(t, adminServe(c, 1000, msgtype.REQUEST_UPDATE_FRONT_END, upd)); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("update front end by a user: rc %d", rc)
	}
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_UPDATE_FRONT_END, upd)); rc != slurmerr.ESLURM_INVALID_NODE_NAME {
		t.Errorf("update front end: rc %d", rc)
	}
}

func TestTriggers(t *testing.T) {
	c, _, _, _ := adminController(t, "", "")
	if r := adminServe(c, 1000, msgtype.REQUEST_TRIGGER_GET, &msg.TriggerInfo{}); len(r.Body.(*msg.TriggerInfo).Triggers) != 0 {
		t.Errorf("get: %#v", r.Body)
	}
	one := func(tr msg.Trigger) *msg.TriggerInfo { return &msg.TriggerInfo{Triggers: []msg.Trigger{tr}} }
	down := func(nodes, program string) *msg.TriggerInfo {
		return one(msg.Trigger{ResType: 2, ResID: msg.Str(nodes), TrigType: 2, Offset: 0x8000, UserID: noVal, Program: msg.Str(program)})
	}
	for _, tc := range []struct {
		name string
		uid  uint32
		mt   msgtype.Type
		body *msg.TriggerInfo
		rc   uint32
	}{
		{"set by a user", 1000, msgtype.REQUEST_TRIGGER_SET, down("*", "/bin/true"), slurmerr.ESLURM_ACCESS_DENIED},
		{"set by root", 0, msgtype.REQUEST_TRIGGER_SET, down("n1", "/bin/true"), 0},
		{"set again", 0, msgtype.REQUEST_TRIGGER_SET, down("n1", "/bin/true"), slurmerr.ESLURM_TRIGGER_DUP},
		{"unknown node", 0, msgtype.REQUEST_TRIGGER_SET, down("n9", "/bin/true"), slurmerr.ESLURM_INVALID_NODE_NAME},
		{"not a program", 0, msgtype.REQUEST_TRIGGER_SET, down("*", "/nonexistent"), slurmerr.ESLURM_ACCESS_DENIED},
		{"unknown job", 0, msgtype.REQUEST_TRIGGER_SET, one(msg.Trigger{ResType: 1, ResID: msg.Str("12"), TrigType: 16, Program: msg.Str("/bin/true")}), slurmerr.ESLURM_INVALID_JOB_ID},
		{"clear by id", 1000, msgtype.REQUEST_TRIGGER_CLEAR, one(msg.Trigger{TrigID: 7, UserID: noVal}), errnoESRCH},
		{"clear another's", 1000, msgtype.REQUEST_TRIGGER_CLEAR, one(msg.Trigger{TrigID: 1, UserID: noVal}), slurmerr.ESLURM_ACCESS_DENIED},
		{"clear job 0", 0, msgtype.REQUEST_TRIGGER_CLEAR, one(msg.Trigger{ResType: 1, ResID: msg.Str("x")}), slurmerr.ESLURM_INVALID_JOB_ID},
		{"clear nothing named", 0, msgtype.REQUEST_TRIGGER_CLEAR, one(msg.Trigger{UserID: noVal}), errnoEINVAL},
		{"clear two", 0, msgtype.REQUEST_TRIGGER_CLEAR, &msg.TriggerInfo{Triggers: make([]msg.Trigger, 2)}, errnoESRCH},
		{"pull by a user", 1000, msgtype.REQUEST_TRIGGER_PULL, one(msg.Trigger{}), slurmerr.ESLURM_USER_ID_MISSING},
		{"pull a node event", 0, msgtype.REQUEST_TRIGGER_PULL, one(msg.Trigger{ResType: 2}), errnoEINVAL},
	} {
		if rc := adminRC(t, adminServe(c, tc.uid, tc.mt, tc.body)); rc != tc.rc {
			t.Errorf("%s: rc %d, want %d", tc.name, rc, tc.rc)
		}
	}
	got := adminServe(c, 1000, msgtype.REQUEST_TRIGGER_GET, &msg.TriggerInfo{}).Body.(*msg.TriggerInfo).Triggers
	if len(got) != 1 || got[0].TrigID != 1 || got[0].ResID.Value != "n1" || got[0].UserID != 0 {
		t.Errorf("get: %+v", got)
	}
	if rc := adminRC(t, adminServe(c, 0, msgtype.REQUEST_TRIGGER_CLEAR, one(msg.Trigger{TrigID: 1, UserID: noVal}))); rc != 0 {
		t.Errorf("clear by root: rc %d", rc)
	}
	// SlurmUser is root: with allow_user_triggers anyone may set one.
	c2, _, _, _ := adminController(t, "SlurmctldParameters=allow_user_triggers\n", "")
	if rc := adminRC(t, adminServe(c2, 1000, msgtype.REQUEST_TRIGGER_SET, down("*", "/bin/true"))); rc != 0 {
		t.Errorf("set by a user with allow_user_triggers: rc %d", rc)
	}
}
