package captures

// The administrative bodies of protocol/msg (admin.go, reservation.go)
// against a live real Slurm 22.05 controller: our requests are accepted
// and the controller's replies (licenses, topology, reservations, the
// batch script, the configless file set) decode, use their body up and
// re-encode to the bytes it sent. Skipped when the Slurm binaries are
// missing (testsuite/oracle rules).

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

func TestAdminBodiesLiveRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, ExtraConf: []string{
		"Licenses=fs:4,db:2",
		"SlurmctldParameters=enable_configless",
		"SlurmSchedLogFile=" + t.TempDir() + "/sched.log",
	}})
	cl := &client.Client{
		Controllers:  []string{c.CtldAddr()},
		Auth:         &auth.Munge{Client: c.Munge.Client()},
		SlurmUserUID: c.SlurmUserUID,
		Sweeps:       2,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g := msg.Registry()

	// send encodes body with our codec and returns the reply frame.
	send := func(mt msgtype.Type, body any) *client.Reply {
		t.Helper()
		r, err := cl.Call(ctx, mt, encodeJob(t, g, mt, body))
		if err != nil {
			t.Fatalf("%v: %v", mt, err)
		}
		return r
	}
	// call requires a reply of type want and decodes it exactly.
	call := func(mt msgtype.Type, body any, want msgtype.Type) any {
		t.Helper()
		r := send(mt, body)
		if r.Frame.Header.MsgType != want {
			t.Fatalf("%v: reply %v (rc %v), want %v", mt, r.Frame.Header.MsgType, client.ReturnCode(&r.Frame), want)
		}
		return mustDecode(t, g, r.Frame)
	}
	// rc requires a return code reply and returns it.
	rc := func(mt msgtype.Type, body any) error {
		t.Helper()
		r := send(mt, body)
		if r.Frame.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
			t.Fatalf("%v: reply %v, want RESPONSE_SLURM_RC", mt, r.Frame.Header.MsgType)
		}
		return client.ReturnCode(&r.Frame)
	}

	lic := call(msgtype.REQUEST_LICENSE_INFO, msg.InfoRequest{}, msgtype.RESPONSE_LICENSE_INFO).(msg.LicenseInfoResponse)
	if len(lic.Licenses) != 2 || lic.LastUpdate == 0 {
		t.Errorf("licenses %#v", lic)
	}
	for _, l := range lic.Licenses {
		if (l.Name.Value == "fs" && l.Total != 4) || (l.Name.Value == "db" && l.Total != 2) || l.Available() != l.Total {
			t.Errorf("license %#v", l)
		}
	}

	// Topology: topology/none answers with a return code or an empty set;
	// either way the request (no body) was understood.
	if r := send(msgtype.REQUEST_TOPO_INFO, msg.Empty{}); r.Frame.Header.MsgType == msgtype.RESPONSE_TOPO_INFO {
		mustDecode(t, g, r.Frame)
	} else {
		t.Logf("REQUEST_TOPO_INFO: %v %v", r.Frame.Header.MsgType, client.ReturnCode(&r.Frame))
	}

	// Reservations: create (the controller names it), list, update, delete.
	d := msg.NewReservationDesc()
	d.StartTime = time.Now().Add(time.Hour).Unix()
	d.Duration = 60
	d.Flags = 0
	d.NodeList = msg.Str("n1")
	d.Users = msg.Str(c.SlurmUser)
	d.Licenses = msg.Str("fs:1")
	name := call(msgtype.REQUEST_CREATE_RESERVATION, d, msgtype.RESPONSE_CREATE_RESERVATION).(msg.ReservationName)
	if name.Name.Value == "" {
		t.Fatalf("reservation name %#v", name)
	}
	d2 := msg.NewReservationDesc()
	d2.Name = msg.Str("byname")
	d2.StartTime = time.Now().Add(4 * time.Hour).Unix()
	d2.Duration = 30
	d2.NodeCnt = []uint32{1}
	d2.Users = msg.Str(c.SlurmUser)
	if got := call(msgtype.REQUEST_CREATE_RESERVATION, d2, msgtype.RESPONSE_CREATE_RESERVATION).(msg.ReservationName); got.Name != d2.Name {
		t.Errorf("reservation byname created as %#v", got)
	}
	res := call(msgtype.REQUEST_RESERVATION_INFO, msg.LastUpdateRequest{}, msgtype.RESPONSE_RESERVATION_INFO).(msg.ReservationInfoResponse)
	if len(res.Reservations) != 2 {
		t.Fatalf("reservations %#v", res)
	}
	for _, r := range res.Reservations {
		t.Logf("reservation %q nodes %q node_inx %#v tres %q licenses %q", r.Name.Value, r.NodeList.Value, r.NodeInx, r.TRES.Value, r.Licenses.Value)
		if r.NodeCnt != 1 || r.NodeInx.Null || !r.TRES.Valid {
			t.Errorf("reservation %#v", r)
		}
	}
	up := msg.NewReservationDesc()
	up.Name = name.Name
	up.Duration = 120
	if err := rc(msgtype.REQUEST_UPDATE_RESERVATION, up); err != nil {
		t.Errorf("update reservation: %v", err)
	}
	for _, n := range []msg.NullString{name.Name, d2.Name} {
		if err := rc(msgtype.REQUEST_DELETE_RESERVATION, msg.ReservationName{Name: n}); err != nil {
			t.Errorf("delete reservation %s: %v", n.Value, err)
		}
	}
	if err := rc(msgtype.REQUEST_DELETE_RESERVATION, msg.ReservationName{Name: msg.Str("nosuch")}); slurmerr.Code(err) != slurmerr.ESLURM_RESERVATION_INVALID {
		t.Errorf("delete of an unknown reservation: %v", err)
	}

	// Debug settings: accepted as sent (a malformed body would be
	// rejected before the handler).
	for _, x := range []struct {
		mt   msgtype.Type
		body any
	}{
		{msgtype.REQUEST_SET_DEBUG_LEVEL, msg.SetDebugLevelRequest{Level: 5}},
		{msgtype.REQUEST_SET_DEBUG_LEVEL, msg.SetDebugLevelRequest{Level: 3}},
		{msgtype.REQUEST_SET_DEBUG_FLAGS, msg.SetDebugFlagsRequest{Plus: 1 << 12}},
		{msgtype.REQUEST_SET_DEBUG_FLAGS, msg.SetDebugFlagsRequest{Minus: 1 << 12}},
		{msgtype.REQUEST_SET_SCHEDLOG_LEVEL, msg.SetDebugLevelRequest{Level: 1}},
		{msgtype.REQUEST_SET_SCHEDLOG_LEVEL, msg.SetDebugLevelRequest{Level: 0}},
	} {
		if err := rc(x.mt, x.body); err != nil {
			t.Errorf("%v %#v: %v", x.mt, x.body, err)
		}
	}
	// Without priority/multifactor the dampening factor is refused by the
	// handler, not by the unpacker.
	err := rc(msgtype.REQUEST_SET_FS_DAMPENING_FACTOR, msg.SetFSDampeningFactorRequest{Factor: 2})
	t.Logf("REQUEST_SET_FS_DAMPENING_FACTOR: %v", err)
	if c := slurmerr.Code(err); c == slurmerr.SLURM_PROTOCOL_VERSION_ERROR || c == slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("dampening factor body rejected: %v", err)
	}
	if r := send(msgtype.REQUEST_STATS_INFO, msg.StatsInfoRequest{CommandID: msg.StatsCommandGet}); r.Frame.Header.MsgType != msgtype.RESPONSE_STATS_INFO {
		t.Errorf("stats info: %v %v", r.Frame.Header.MsgType, client.ReturnCode(&r.Frame))
	}

	// The batch script of a submitted job.
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	host, _ := os.Hostname()
	j := msg.NewJobDesc()
	j.Name = msg.Str("live-script")
	j.UserID, j.GroupID = uid, gid
	j.AllocNode = msg.Str(host)
	j.WorkDir = msg.Str(c.Dir)
	j.MinNodes = 1
	j.Environment = []msg.NullString{msg.Str("PATH=/usr/bin:/bin")}
	j.Script = msg.Str("#!/bin/sh\n#SBATCH --comment=live\nsleep 30\n")
	j.StdOut, j.StdIn = msg.Str("/dev/null"), msg.Str("/dev/null")
	j.BeginTime = time.Now().Add(time.Hour).Unix() // stays pending
	j.SetDefaultBits()
	sub := call(msgtype.REQUEST_SUBMIT_BATCH_JOB, *j, msgtype.RESPONSE_SUBMIT_BATCH_JOB).(msg.SubmitResponse)
	script := call(msgtype.REQUEST_BATCH_SCRIPT, msg.JobIDShowRequest{JobID: sub.JobID}, msgtype.RESPONSE_BATCH_SCRIPT).(msg.BatchScriptResponse)
	if script.Script != j.Script {
		t.Errorf("batch script %#v, want %#v", script.Script, j.Script)
	}
	if err := rc(msgtype.REQUEST_BATCH_SCRIPT, msg.JobIDShowRequest{JobID: sub.JobID + 1000}); slurmerr.Code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Errorf("script of an unknown job: %v", err)
	}

	// Configless: the files a command would fetch.
	cf := call(msgtype.REQUEST_CONFIG, msg.ConfigRequest{}, msgtype.RESPONSE_CONFIG).(msg.ConfigResponse)
	found := false
	for _, f := range cf.Files {
		t.Logf("config file %q exists %d, %d bytes", f.Name.Value, f.Exists, len(f.Content.Value))
		if f.Name.Value == "slurm.conf" && f.Exists == 1 && f.Content.Valid {
			found = true
		}
	}
	if !found {
		t.Errorf("RESPONSE_CONFIG without slurm.conf: %#v", cf)
	}
}
