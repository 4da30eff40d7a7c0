package ctld

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// resvLicController is a controller with foo:4 and bar:2 configured and
// n1..n3 registered.
func resvLicController(t *testing.T) (*Controller, *fakeClock) {
	t.Helper()
	c, clk := newTestController(t, "Licenses=foo:4,bar:2\n")
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	return c, clk
}

// licDesc is a create or update body with Licenses= (lic "-" leaves it
// unset).
func licDesc(d resvDescT, lic string) *msg.ReservationDesc {
	b := d.body()
	if lic != "-" {
		b.Licenses = msg.Str(lic)
	}
	return b
}

// TestResvLicensesCreateUpdate: Licenses= on create and update is
// checked as _license_validate2 checks it (the scenario of the interop
// test TestSlurmctldResvLicenses, whose answers come from real
// slurmctld), and scontrol show reservation prints it as given.
func TestResvLicensesCreateUpdate(t *testing.T) {
	const now = 1_800_000_000
	c, _ := resvLicController(t)
	create, update := msgtype.REQUEST_CREATE_RESERVATION, msgtype.REQUEST_UPDATE_RESERVATION
	for i, s := range []struct {
		op  msgtype.Type
		d   resvDescT
		lic string
		rc  int
	}{
		{create, resvDescT{name: "lic1", users: "root", start: now, dur: 60, flags: resvAnyNodes}, "foo:2", 0},
		// No nodes and not ANY_NODES.
		{create, resvDescT{name: "nonodes", users: "root", start: now, dur: 60}, "foo:1", slurmerr.ESLURM_INVALID_NODE_NAME},
		{create, resvDescT{name: "badname", users: "root", start: now, dur: 60, flags: resvAnyNodes}, "nope:1", slurmerr.ESLURM_INVALID_LICENSES},
		{create, resvDescT{name: "above", users: "root", start: now, dur: 60, flags: resvAnyNodes}, "foo:5", slurmerr.ESLURM_INVALID_LICENSES},
		// 3 beside lic1's 2 is more than 4.
		{create, resvDescT{name: "toomuch", users: "root", start: now, dur: 30, flags: resvAnyNodes}, "foo:3", slurmerr.ESLURM_INVALID_LICENSES},
		// ANY_NODES needs licenses (or burst buffers, or watts).
		{create, resvDescT{name: "empty", users: "root", start: now, dur: 30, flags: resvAnyNodes}, "-", slurmerr.ESLURM_RESERVATION_INVALID},
		{create, resvDescT{name: "later", users: "root", start: now + 7200, dur: 60, flags: resvAnyNodes}, "foo:3", 0},
		{create, resvDescT{name: "onnode", nodes: "n2", users: "root", start: now, dur: 60}, "bar:1", 0},
		{update, resvDescT{name: "onnode"}, "", 0},
		// Clearing the licenses of a reservation without nodes.
		{update, resvDescT{name: "lic1"}, "", slurmerr.ESLURM_INVALID_LICENSES},
		{update, resvDescT{name: "later", start: now + 1800}, "foo:3", slurmerr.ESLURM_INVALID_LICENSES},
		{update, resvDescT{name: "later", start: now + 1800}, "foo:2", 0},
		{update, resvDescT{name: "onnode"}, "bar:2", 0},
		// Without times an update meets no reservation: not summed.
		{update, resvDescT{name: "lic1"}, "foo:4", 0},
		{update, resvDescT{name: "lic1"}, "foo:1,foo:1", 0},
	} {
		if rc := resvRC(resvServe(c, 0, s.op, licDesc(s.d, s.lic))); rc != s.rc {
			t.Errorf("step %d (%s Licenses=%s): rc %d (%s), want %d", i, s.d.name, s.lic, rc, slurmerr.Message(rc), s.rc)
		}
	}
	got := map[string]string{}
	for name, r := range resvShow(t, c) {
		got[name] = r.Licenses.Value
	}
	want := map[string]string{"lic1": "foo:1,foo:1", "later": "foo:2", "onnode": "bar:2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Licenses: %v, want %v", got, want)
	}
	if r := resvShow(t, c)["later"]; r.StartTime != now+1800 || r.EndTime != now+1800+3600 {
		t.Errorf("later: %d-%d", r.StartTime, r.EndTime)
	}
}

// TestResvLicensesReserved: scontrol show licenses counts as Reserved
// the licenses of the reservations active now (and of FLEX ones at any
// time); the job manager's view carries every reservation's licenses.
func TestResvLicensesReserved(t *testing.T) {
	const now = 1_800_000_000
	c, clk := resvLicController(t)
	for _, s := range []struct {
		d   resvDescT
		lic string
	}{
		{resvDescT{name: "now", users: "root", start: now, dur: 60, flags: resvAnyNodes}, "foo:1"},
		{resvDescT{name: "soon", users: "root", start: now + 600, dur: 10, flags: resvAnyNodes}, "foo:1,bar:1"},
		{resvDescT{name: "flex", users: "root", start: now + 7200, dur: 10, flags: resvAnyNodes | resvFlex}, "bar:1"},
	} {
		if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, licDesc(s.d, s.lic))); rc != 0 {
			t.Fatalf("create %s: rc %d", s.d.name, rc)
		}
	}
	res := func(name string, total, reserved uint32) msg.License {
		return msg.License{Name: msg.Str(name), Total: total, Reserved: reserved}
	}
	for _, tc := range []struct {
		at   int64
		want []msg.License
	}{
		{now, []msg.License{res("bar", 2, 1), res("foo", 4, 1)}},
		{now + 600, []msg.License{res("bar", 2, 2), res("foo", 4, 2)}},
		{now + 1200, []msg.License{res("bar", 2, 2), res("foo", 4, 2)}}, // soon's end is still in
		{now + 1201, []msg.License{res("bar", 2, 1), res("foo", 4, 1)}},
	} {
		clk.t = time.Unix(tc.at, 0)
		if got := licenseList(t, licenseInfo(c, 0)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("at now+%d: %+v, want %+v", tc.at-now, got, tc.want)
		}
	}
	clk.t = time.Unix(now, 0)
	c.mu.Lock()
	view := c.jobReservations()
	c.mu.Unlock()
	i := slices.IndexFunc(view, func(r jobs.Reservation) bool { return r.Name == "soon" })
	if i < 0 || !reflect.DeepEqual(view[i].Licenses, []conf.License{{Name: "foo", Count: 1}, {Name: "bar", Count: 1}}) ||
		view[i].Now != now || !view[i].AnyNodes || view[i].Start != now+600 {
		t.Errorf("job view of soon: %+v", view)
	}
}

// TestResvLicensesJobs: a job outside a reservation holding licenses
// waits with reason Licenses, one inside it runs (on any node: the
// reservation has none), through the controller's scheduling pass.
func TestResvLicensesJobs(t *testing.T) {
	const now = 1_800_000_000
	c, clk := resvLicController(t)
	m := jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})
	if err := c.AttachJobs(JobsOptions{Manager: m}); err != nil {
		t.Fatal(err)
	}
	d := resvDescT{name: "r", users: "root", start: now, dur: 60, flags: resvAnyNodes}
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, licDesc(d, "foo:3"))); rc != 0 {
		t.Fatalf("create: rc %d", rc)
	}
	clk.t = clk.t.Add(10 * time.Second)
	for _, resv := range []string{"", "r"} {
		req := submitReq(1)
		jd := req.Body.(*msg.JobDesc)
		jd.Licenses = msg.Str("foo:2")
		jd.TimeLimit = 10
		if resv != "" {
			jd.Reservation = msg.Str(resv)
		}
		if resp := c.Serve(context.Background(), req); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
			t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
		}
	}
	if _, err := c.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(1); j == nil || !j.Pending() || j.Reason != jobs.ReasonLicenses {
		t.Errorf("job 1 (outside): %+v", j)
	}
	if j := m.Job(2); j == nil || !j.Running() {
		t.Errorf("job 2 (in r): %+v", j)
	}
}

// TestResvLicensesState: a saved reservation with licenses (the state
// file fixture) loads, keeps its Licenses= text and holds its licenses;
// a save and a load give it back.
func TestResvLicensesState(t *testing.T) {
	c, _ := resvLicController(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "resv_state_v1_licenses.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "resv_state")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	check := func(c *Controller, when string) {
		t.Helper()
		if r := resvShow(t, c)["lic"]; r.Licenses.Value != "foo:1,foo:1" || r.NodeCnt != 0 || r.Flags&resvAnyNodes == 0 {
			t.Errorf("%s: lic %+v", when, r)
		}
		want := []msg.License{{Name: msg.Str("bar"), Total: 2}, {Name: msg.Str("foo"), Total: 4, Reserved: 2}}
		if got := licenseList(t, licenseInfo(c, 0)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: licenses %+v", when, got)
		}
	}
	check(c, "fixture")
	c.mu.Lock()
	c.resv.seq++
	c.mu.Unlock()
	c.saveResv(context.Background())
	c2, _ := resvLicController(t)
	if err := c2.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	check(c2, "saved again")
}
