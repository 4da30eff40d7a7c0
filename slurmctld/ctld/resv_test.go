package ctld

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// resvController is the test controller with n1..n3 registered (IDLE).
func resvController(t *testing.T) (*Controller, *fakeClock) {
	t.Helper()
	c, clk := newTestController(t, "")
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	return c, clk
}

func resvServe(c *Controller, uid uint32, t msgtype.Type, body any) *server.Response {
	r := &server.Request{Body: body, Identity: auth.Identity{UID: uid}}
	r.Header.MsgType = t
	return c.Serve(context.Background(), r)
}

func resvRC(resp *server.Response) int {
	if rc, ok := resp.Body.(codec.ReturnCode); ok {
		return int(rc.RC)
	}
	return 0
}

// resvDescT builds a create/update body: "" and 0 leave fields unset.
type resvDescT struct {
	name, nodes, users, accounts, part string
	start, end                         int64
	dur                                uint32
	flags                              uint64
	cnt                                uint32
}

func (d resvDescT) body() *msg.ReservationDesc {
	b := msg.NewReservationDesc()
	set := func(p *msg.NullString, s string) {
		if s != "" {
			*p = msg.Str(s)
		}
	}
	set(&b.Name, d.name)
	set(&b.NodeList, d.nodes)
	set(&b.Users, d.users)
	set(&b.Accounts, d.accounts)
	set(&b.Partition, d.part)
	if d.start != 0 {
		b.StartTime = d.start
	}
	if d.end != 0 {
		b.EndTime = d.end
	}
	if d.dur != 0 {
		b.Duration = d.dur
	}
	if d.flags != 0 {
		b.Flags = d.flags
	}
	if d.cnt != 0 {
		b.NodeCnt = []uint32{d.cnt}
	}
	return &b
}

func resvCreate(t *testing.T, c *Controller, d resvDescT) (string, int) {
	t.Helper()
	resp := resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, d.body())
	if n, ok := resp.Body.(*msg.ReservationName); ok {
		return n.Name.Value, 0
	}
	return "", resvRC(resp)
}

func resvShow(t *testing.T, c *Controller) map[string]msg.Reservation {
	t.Helper()
	resp := resvServe(c, 1000, msgtype.REQUEST_RESERVATION_INFO, &msg.LastUpdateRequest{})
	info, ok := resp.Body.(*msg.ReservationInfoResponse)
	if !ok {
		t.Fatalf("info reply %T rc %d", resp.Body, resvRC(resp))
	}
	out := map[string]msg.Reservation{}
	for _, r := range info.Reservations {
		out[r.Name.Value] = r
	}
	return out
}

func TestResvCreate(t *testing.T) {
	const now = 1_800_000_000
	type step struct {
		d     resvDescT
		rc    int
		name  string // wanted name when rc is 0
		nodes string // wanted NodeList
		part  string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"generated names", []step{
			{d: resvDescT{nodes: "n1", users: "root", start: now, dur: 60}, name: "root_1", nodes: "n1"},
			{d: resvDescT{nodes: "n2", accounts: "physics,chem", users: "root", start: now, dur: 60}, name: "physics_2", nodes: "n2"},
		}},
		{"lacks users", []step{{d: resvDescT{nodes: "n1", start: now, dur: 60}, rc: slurmerr.ESLURM_RESERVATION_EMPTY}}},
		{"unknown user", []step{{d: resvDescT{nodes: "n1", users: "no-such-user-xyz", start: now, dur: 60}, rc: slurmerr.ESLURM_USER_ID_MISSING}}},
		{"bad node", []step{{d: resvDescT{nodes: "n9", users: "root", start: now, dur: 60}, rc: slurmerr.ESLURM_INVALID_NODE_NAME}}},
		{"bad partition", []step{{d: resvDescT{cnt: 1, part: "nope", users: "root", start: now, dur: 60}, rc: slurmerr.ESLURM_INVALID_PARTITION_NAME}}},
		{"no nodes", []step{{d: resvDescT{users: "root", start: now, dur: 60}, rc: slurmerr.ESLURM_INVALID_NODE_NAME}}},
		{"start in the past", []step{{d: resvDescT{nodes: "n1", users: "root", start: now - 601, dur: 60}, rc: slurmerr.ESLURM_INVALID_TIME_VALUE}}},
		{"overlap and duplicate", []step{
			{d: resvDescT{name: "a", nodes: "n1", users: "root", start: now, dur: 60}, name: "a", nodes: "n1"},
			{d: resvDescT{name: "b", nodes: "n[1-2]", users: "root", start: now + 1800, dur: 60}, rc: slurmerr.ESLURM_RESERVATION_OVERLAP},
			{d: resvDescT{name: "b", nodes: "n1", users: "root", start: now + 3600, dur: 60}, name: "b", nodes: "n1"},
			{d: resvDescT{name: "c", nodes: "n1", users: "root", start: now, dur: 60, flags: resvOverlap}, name: "c", nodes: "n1"},
			{d: resvDescT{name: "a", nodes: "n3", users: "root", start: now, dur: 60}, rc: slurmerr.ESLURM_RESERVATION_NAME_DUP},
		}},
		{"node count picks free nodes of the default partition", []step{
			{d: resvDescT{name: "a", nodes: "n1", users: "root", start: now, dur: 60}, name: "a", nodes: "n1"},
			{d: resvDescT{name: "b", cnt: 2, users: "root", start: now, dur: 60}, name: "b", nodes: "n[2-3]", part: "debug"},
			{d: resvDescT{name: "c", cnt: 1, users: "root", start: now, dur: 60}, rc: slurmerr.ESLURM_NODES_BUSY},
			{d: resvDescT{name: "d", cnt: 1, users: "root", start: now, dur: 60, flags: resvMaint}, name: "d", nodes: "n1", part: "debug"},
		}},
		{"all nodes", []step{{d: resvDescT{name: "all", nodes: "ALL", users: "root", start: now, dur: 60}, name: "all", nodes: "n[1-3],h1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := resvController(t)
			for i, s := range tc.steps {
				name, rc := resvCreate(t, c, s.d)
				if rc != s.rc {
					t.Fatalf("step %d: rc %d (%s), want %d", i, rc, slurmerr.Message(rc), s.rc)
				}
				if rc != 0 {
					continue
				}
				if name != s.name {
					t.Fatalf("step %d: name %q, want %q", i, name, s.name)
				}
				r := resvShow(t, c)[name]
				if r.NodeList.Value != s.nodes || r.Partition.Value != s.part {
					t.Errorf("step %d: nodes %q partition %q, want %q %q", i, r.NodeList.Value, r.Partition.Value, s.nodes, s.part)
				}
			}
		})
	}
}

func TestResvRecordAndNodeFlags(t *testing.T) {
	const now = 1_800_000_000
	c, clk := resvController(t)
	if resp := resvServe(c, 1000, msgtype.REQUEST_CREATE_RESERVATION, resvDescT{nodes: "n1", users: "root", start: now, dur: 60}.body()); resvRC(resp) != slurmerr.ESLURM_USER_ID_MISSING {
		t.Fatalf("create by a user: rc %d", resvRC(resp))
	}
	if _, rc := resvCreate(t, c, resvDescT{name: "m", nodes: "n1", users: "root", start: now, dur: 60, flags: resvMaint | resvIgnJobs}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	if _, rc := resvCreate(t, c, resvDescT{name: "later", nodes: "n2", users: "root", start: now + 3600, end: now + 7200}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	r := resvShow(t, c)["m"]
	want := msg.Reservation{Name: msg.Str("m"), NodeList: msg.Str("n1"), NodeCnt: 1, CoreCnt: 4, TRES: msg.Str("cpu=4"),
		Users: msg.Str("root"), StartTime: now, EndTime: now + 3600, Flags: resvMaint | resvIgnJobs | resvSpecNodes,
		PurgeCompTime: 300, Watts: noVal, NodeInx: msg.BitmapOf(4, 0)}
	if r.Name != want.Name || r.NodeList != want.NodeList || r.NodeCnt != want.NodeCnt || r.CoreCnt != want.CoreCnt ||
		r.TRES != want.TRES || r.Users != want.Users || r.StartTime != want.StartTime || r.EndTime != want.EndTime ||
		r.Flags != want.Flags || r.PurgeCompTime != want.PurgeCompTime || r.NodeInx != want.NodeInx || r.Accounts.Valid {
		t.Errorf("record\n got %+v\nwant %+v", r, want)
	}
	state := func(n string) uint32 { return node(c, n).State }
	if s := state("n1"); s&nodeStateRes == 0 || s&msg.NodeStateMaint == 0 {
		t.Errorf("n1 state %#x, want RESERVED+MAINT", s)
	}
	if s := state("n2"); s&(nodeStateRes|msg.NodeStateMaint) != 0 {
		t.Errorf("n2 state %#x before its reservation starts", s)
	}
	clk.t = time.Unix(now+3600, 0)
	c.resvTick(context.Background())
	if s := state("n2"); s&nodeStateRes == 0 || s&msg.NodeStateMaint != 0 {
		t.Errorf("n2 state %#x once its reservation started, want RESERVED", s)
	}
	if s := state("n1"); s&(nodeStateRes|msg.NodeStateMaint) != 0 {
		t.Errorf("n1 state %#x after its reservation ended", s)
	}
	if _, ok := resvShow(t, c)["m"]; ok {
		t.Errorf("ended reservation not purged")
	}
}

func TestResvRepeatAndExpiry(t *testing.T) {
	const now = 1_800_000_000
	c, clk := resvController(t)
	for _, d := range []resvDescT{
		{name: "daily", nodes: "n1", users: "root", start: now, dur: 60, flags: resvDaily},
		{name: "weekly", nodes: "n2", users: "root", start: now, dur: 60, flags: resvWeekly},
		{name: "once", nodes: "n3", users: "root", start: now, dur: 60},
	} {
		if _, rc := resvCreate(t, c, d); rc != 0 {
			t.Fatal(slurmerr.Message(rc))
		}
	}
	clk.t = time.Unix(now+3600, 0)
	c.resvTick(context.Background())
	got := resvShow(t, c)
	day := func(n int) int64 { return time.Unix(now, 0).AddDate(0, 0, n).Unix() }
	if r := got["daily"]; r.StartTime != day(1) || r.EndTime != day(1)+3600 {
		t.Errorf("daily: %d-%d, want %d-%d", r.StartTime, r.EndTime, day(1), day(1)+3600)
	}
	if r := got["weekly"]; r.StartTime != day(7) {
		t.Errorf("weekly: start %d, want %d", r.StartTime, day(7))
	}
	if _, ok := got["once"]; ok {
		t.Errorf("one-off reservation kept after its end")
	}
	// Flags=SKIP moves a repeating reservation on by one occurrence.
	skip := resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, resvDescT{name: "daily", flags: resvSkip}.body())
	if rc := resvRC(skip); rc != 0 {
		t.Fatalf("skip: rc %d", rc)
	}
	if r := resvShow(t, c)["daily"]; r.StartTime != day(2) {
		t.Errorf("daily after skip: start %d, want %d", r.StartTime, day(2))
	}
	if _, rc := resvCreate(t, c, resvDescT{name: "plain", nodes: "n3", users: "root", start: now + 7200, dur: 60}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	skip = resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, resvDescT{name: "plain", flags: resvSkip}.body())
	if rc := resvRC(skip); rc != slurmerr.ESLURM_RESERVATION_NO_SKIP {
		t.Errorf("skip of a one-off reservation: rc %d", rc)
	}
}

func TestResvUpdateDelete(t *testing.T) {
	const now = 1_800_000_000
	c, _ := resvController(t)
	if _, rc := resvCreate(t, c, resvDescT{name: "r", nodes: "n1", users: "root", start: now + 600, dur: 60}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	if _, rc := resvCreate(t, c, resvDescT{name: "other", nodes: "n3", users: "root", start: now, dur: 600}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	upd := func(d resvDescT) int { return resvRC(resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, d.body())) }
	steps := []struct {
		d     resvDescT
		rc    int
		check func(r msg.Reservation) bool
	}{
		{resvDescT{name: "r", dur: 120}, 0, func(r msg.Reservation) bool { return r.EndTime == now+600+7200 }},
		{resvDescT{name: "r", dur: 30, flags: resvDurPlus}, 0, func(r msg.Reservation) bool { return r.EndTime == now+600+9000 }},
		{resvDescT{name: "r", end: now + 1200}, 0, func(r msg.Reservation) bool { return r.EndTime == now+1200 }},
		{resvDescT{name: "r", start: now + 60}, 0, func(r msg.Reservation) bool { return r.StartTime == now+60 }},
		{resvDescT{name: "r", users: "+daemon"}, 0, func(r msg.Reservation) bool { return r.Users.Value == "root,daemon" }},
		{resvDescT{name: "r", users: "-root"}, 0, func(r msg.Reservation) bool { return r.Users.Value == "daemon" }},
		{resvDescT{name: "r", nodes: "n[1-2]"}, 0, func(r msg.Reservation) bool { return r.NodeList.Value == "n[1-2]" && r.NodeCnt == 2 }},
		{resvDescT{name: "r", nodes: "n3"}, slurmerr.ESLURM_RESERVATION_OVERLAP, nil},
		{resvDescT{name: "r", cnt: 1}, 0, func(r msg.Reservation) bool { return r.NodeCnt == 1 }},
		{resvDescT{name: "r", flags: resvMaint}, 0, func(r msg.Reservation) bool { return r.Flags&resvMaint != 0 }},
		{resvDescT{name: "r", flags: resvNoMaint}, 0, func(r msg.Reservation) bool { return r.Flags&resvMaint == 0 }},
		{resvDescT{name: "r", end: now - 3600}, slurmerr.ESLURM_INVALID_TIME_VALUE, nil},
		{resvDescT{name: "other", start: now + 60}, slurmerr.ESLURM_RSV_ALREADY_STARTED, nil},
		{resvDescT{name: "nope", dur: 5}, slurmerr.ESLURM_RESERVATION_INVALID, nil},
	}
	for i, s := range steps {
		if rc := upd(s.d); rc != s.rc {
			t.Fatalf("step %d: rc %d (%s), want %d", i, rc, slurmerr.Message(rc), s.rc)
		}
		if s.check != nil && !s.check(resvShow(t, c)["r"]) {
			t.Fatalf("step %d: record %+v", i, resvShow(t, c)["r"])
		}
	}
	del := func(uid uint32, name string) int {
		return resvRC(resvServe(c, uid, msgtype.REQUEST_DELETE_RESERVATION, &msg.ReservationName{Name: msg.Str(name)}))
	}
	if rc := del(1000, "r"); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("delete by a user: rc %d", rc)
	}
	if rc := del(0, "nope"); rc != slurmerr.ESLURM_RESERVATION_INVALID {
		t.Errorf("delete of an unknown reservation: rc %d", rc)
	}
	if rc := del(0, "r"); rc != 0 {
		t.Errorf("delete: rc %d", rc)
	}
	if _, ok := resvShow(t, c)["r"]; ok {
		t.Errorf("deleted reservation still shown")
	}
}

// TestResvPersist: reservations and the id counter survive a restart.
func TestResvPersist(t *testing.T) {
	const now = 1_800_000_000
	file := filepath.Join(t.TempDir(), ResvStateName)
	c, _ := resvController(t)
	if err := c.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	if _, rc := resvCreate(t, c, resvDescT{nodes: "n1", users: "root", start: now, dur: 60, flags: resvMaint}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	c2, _ := resvController(t)
	if err := c2.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	if r, ok := resvShow(t, c2)["root_1"]; !ok || r.NodeList.Value != "n1" || r.Flags&resvMaint == 0 {
		t.Fatalf("recovered: %+v", resvShow(t, c2))
	}
	if node(c2, "n1").State&msg.NodeStateMaint == 0 {
		t.Errorf("recovered maintenance reservation does not flag its node")
	}
	if name, rc := resvCreate(t, c2, resvDescT{nodes: "n2", users: "root", start: now, dur: 60}); rc != 0 || name != "root_2" {
		t.Errorf("after recovery: %q rc %d, want root_2", name, rc)
	}
	if err := writeStateFile(file, []byte(`{"Version":99}`)); err != nil {
		t.Fatal(err)
	}
	c3, _ := resvController(t)
	if err := c3.AttachReservations(ResvOptions{StateFile: file}); err == nil {
		t.Errorf("unknown version accepted")
	}
	if err := c3.AttachReservations(ResvOptions{StateFile: file, IgnoreState: true}); err != nil {
		t.Errorf("-i: %v", err)
	}
}

// TestResvPurgeComp: a PURGE_COMP reservation without jobs ends
// PurgeCompTime seconds after it found itself idle.
func TestResvPurgeComp(t *testing.T) {
	const now = 1_800_000_000
	c, clk := resvController(t)
	b := resvDescT{name: "p", nodes: "n1", users: "root", start: now, dur: 600, flags: resvPurgeComp}.body()
	b.PurgeCompTime = 60
	if resp := resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b); resvRC(resp) != 0 {
		t.Fatalf("create: rc %d", resvRC(resp))
	}
	for _, step := range []struct {
		at   int64
		kept bool
	}{{now, true}, {now + 59, true}, {now + 60, false}} {
		clk.t = time.Unix(step.at, 0)
		c.resvTick(context.Background())
		if _, ok := resvShow(t, c)["p"]; ok != step.kept {
			t.Fatalf("at +%d: kept %v, want %v", step.at-now, ok, step.kept)
		}
	}
}
