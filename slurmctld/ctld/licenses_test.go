package ctld

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

func licenseInfo(c *Controller, last int64) *server.Response {
	r := &server.Request{Body: msg.InfoRequest{LastUpdate: last}, Identity: auth.Identity{UID: 1000}}
	r.Header.MsgType = msgtype.REQUEST_LICENSE_INFO
	return c.Serve(context.Background(), r)
}

func licenseList(t *testing.T, resp *server.Response) []msg.License {
	t.Helper()
	body, ok := resp.Body.(*msg.LicenseInfoResponse)
	if resp.MsgType != msgtype.RESPONSE_LICENSE_INFO || !ok {
		t.Fatalf("reply %v %+v, want RESPONSE_LICENSE_INFO", resp.MsgType, resp.Body)
	}
	return body.Licenses
}

func lic(name string, total, used uint32) msg.License {
	return msg.License{Name: msg.Str(name), Total: total, InUse: used}
}

// TestLicenseInfo: REQUEST_LICENSE_INFO lists the configured licenses in
// slurmctld's order (last configured first) with what running jobs hold,
// and answers SLURM_NO_CHANGE_IN_DATA to a client whose copy is current.
func TestLicenseInfo(t *testing.T) {
	c, clk := newTestController(t, "Licenses=foo:2,bar\n")
	if got := licenseList(t, licenseInfo(c, 0)); !reflect.DeepEqual(got, []msg.License{lic("bar", 1, 0), lic("foo", 2, 0)}) {
		t.Errorf("no job manager: %+v", got)
	}
	m := jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})
	if err := c.AttachJobs(JobsOptions{Manager: m}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := c.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	clk.t = clk.t.Add(10 * time.Second)
	req := submitReq(1)
	req.Body.(*msg.JobDesc).Licenses = msg.Str("foo:1,bar:1")
	if resp := c.Serve(context.Background(), req); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
	}
	if _, err := c.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	}); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(1); j == nil || !j.Running() {
		t.Fatalf("job 1 not running: %+v", j)
	}
	now := clk.t.Unix()
	if got := licenseList(t, licenseInfo(c, 0)); !reflect.DeepEqual(got, []msg.License{lic("bar", 1, 1), lic("foo", 2, 1)}) {
		t.Errorf("job 1 running: %+v", got)
	}
	resp := licenseInfo(c, now+1)
	if rc, ok := resp.Body.(codec.ReturnCode); resp.MsgType != msgtype.RESPONSE_SLURM_RC || !ok || rc.RC != slurmerr.SLURM_NO_CHANGE_IN_DATA {
		t.Errorf("current copy: %v %+v, want SLURM_NO_CHANGE_IN_DATA", resp.MsgType, resp.Body)
	}
	// The job changes after the client's copy: full data again.
	clk.t = clk.t.Add(5 * time.Second)
	if _, err := c.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: 1, StepID: jobs.NoVal, StepHetComp: jobs.NoVal}, Signal: 9},
			jobs.Caller{}, cl, now)
	}); err != nil {
		t.Fatal(err)
	}
	licenseList(t, licenseInfo(c, now+1))
}
