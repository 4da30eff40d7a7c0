package ctld

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

const prioConf = `PriorityType=priority/multifactor
PriorityWeightJobSize=100000
PriorityWeightFairshare=50000
PriorityWeightAge=1000
`

// prioController is a controller with n1..n3 registered, a job manager
// and priority/multifactor attached (its background loop stopped, so
// the test drives the decay passes and saves).
func prioController(t *testing.T, extra, stateFile string) (*Controller, *fakeClock, *jobs.Manager) {
	t.Helper()
	ctl, clk := newTestController(t, prioConf+extra)
	m := jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})
	if err := ctl.AttachJobs(JobsOptions{Manager: m}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := ctl.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctl.AttachPriority(PriorityOptions{StateFile: stateFile}); err != nil {
		t.Fatal(err)
	}
	close(ctl.jobs.stop)
	return ctl, clk, m
}

func updateReq(id uint32, f func(d *msg.JobDesc)) *server.Request {
	d := msg.NewJobDesc()
	d.JobID = id
	f(d)
	// A value, as the codec decodes it.
	return &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_UPDATE_JOB, Version: codec.Current},
		Body: *d, Identity: auth.Identity{UID: 0, GID: 0}}
}

// TestPriorityAtSubmit: the reply to a submission leaves the job with
// its multifactor priority (no scheduling pass needed); an update of the
// job recomputes it; without slurmdbd the age and fair-share weights are
// ignored, as in Slurm.
func TestPriorityAtSubmit(t *testing.T) {
	ctl, clk, m := prioController(t, "", "")
	ctx := context.Background()
	resp := ctl.Serve(ctx, submitReq(2))
	sub, ok := resp.Body.(*msg.SubmitResponse)
	if !ok {
		t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
	}
	// 4 nodes configured; the request has 2 nodes and no CPU count.
	want := uint32(50000)
	if got := m.Job(sub.JobID).Priority; got != want {
		t.Fatalf("priority %d, want %d", got, want)
	}
	clk.t = clk.t.Add(24 * time.Hour)
	ctl.Serve(ctx, updateReq(sub.JobID, func(d *msg.JobDesc) { d.Nice = 0x80000000 + 100 }))
	if got := m.Job(sub.JobID).Priority; got != want-100 {
		t.Errorf("after nice=100 a day later: priority %d, want %d", got, want-100)
	}
	// A node count change (the priority itself untouched by the update)
	// is recomputed: 1 node of 4.
	ctl.Serve(ctx, updateReq(sub.JobID, func(d *msg.JobDesc) { d.MinNodes = 1 }))
	if got := m.Job(sub.JobID).Priority; got != 25000-100 {
		t.Errorf("after MinNodes=1: priority %d, want %d", got, 25000-100)
	}
	ctl.Serve(ctx, updateReq(sub.JobID, func(d *msg.JobDesc) { d.Priority = 0 }))
	ctl.PriorityPass()
	if got := m.Job(sub.JobID).Priority; got != 0 {
		t.Errorf("held: priority %d", got)
	}
}

// TestPriorityUsageSurvivesRestart: with the tracker (slurmdbd
// configured), a decay pass charges the running job, the usage is saved
// in the state file and a new controller reading it has the same usage.
func TestPriorityUsageSurvivesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), PriorityStateName)
	extra := "AccountingStorageType=accounting_storage/slurmdbd\nPriorityDecayHalfLife=1:00:00\n"
	ctl, clk, m := prioController(t, extra, file)
	ctx := context.Background()
	resp := ctl.Serve(ctx, submitReq(1))
	id := resp.Body.(*msg.SubmitResponse).JobID
	ctl.schedulePass(ctx, false)
	if !m.Job(id).Running() {
		t.Fatalf("job %d not running", id)
	}
	clk.t = clk.t.Add(300 * time.Second)
	ctl.PriorityPass()
	ctl.savePriority(file)
	usage := m.Priority().Associations()
	if len(usage) == 0 || usage[0].RawUsage <= 0 {
		t.Fatalf("no usage charged: %+v", usage)
	}
	st, err := ReadPriorityState(file)
	if err != nil || st == nil {
		t.Fatalf("read state: %v %v", st, err)
	}
	if st.LastRan != clk.t.Unix() {
		t.Errorf("last ran %d, want %d", st.LastRan, clk.t.Unix())
	}

	ctl2, _, m2 := prioController(t, extra, file)
	_ = ctl2
	got := m2.Priority().Associations()
	if len(got) != len(usage) || got[0].RawUsage <= 0 {
		t.Fatalf("restored usage %+v, want %+v", got, usage)
	}
	// The restarted controller's first pass decayed the usage from the
	// saved pass to its own start (the same clock here: unchanged).
	if got[0].RawUsage != usage[0].RawUsage {
		t.Errorf("root usage %v, want %v", got[0].RawUsage, usage[0].RawUsage)
	}
}

func TestPriorityStateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PriorityStateName)
	if st, err := ReadPriorityState(path); st != nil || err != nil {
		t.Fatalf("missing file: %v %v", st, err)
	}
	in := &jobs.PriorityState{LastRan: 1234, Ended: map[uint32]int64{7: 1000}, Usage: priority.UsageState{
		Last: 1234, ClockSet: true, Started: true, LastReset: 1000,
		Assocs: []priority.AssocState{{Account: "root", Shares: 1, Raw: 10.5}, {Account: "root", User: "alice", Shares: 1, Raw: 10.5}},
	}}
	if err := writePriorityState(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadPriorityState(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.LastRan != 1234 || out.Ended[7] != 1000 || len(out.Usage.Assocs) != 2 || out.Usage.Assocs[1].Raw != 10.5 {
		t.Errorf("round trip: %+v", out)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"version", `{"Version":2}`, "unsupported version 2"},
		{"garbage", `{`, "unexpected end"},
	} {
		if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPriorityState(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPriorityConfigErrors(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"PriorityType=priority/other\n", "priority plugin"},
		{"PriorityDecayHalfLife=0\n", "PriorityDecayHalfLife != 0"},
	} {
		c, err := conf.Parse("slurm.conf", []byte(testConf+tc.extra), conf.MapFS{})
		if err == nil {
			_, err = NewConfig(c, "")
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.extra, err, tc.want)
		}
	}
}
