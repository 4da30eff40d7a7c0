package jobs

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// captured returns the decoded bodies of the given types in a capture of
// real Slurm 22.05.8, in capture order.
func captured(t *testing.T, file string, types ...msgtype.Type) map[msgtype.Type][]any {
	t.Helper()
	f, err := os.Open("../../testsuite/captures/testdata/" + file)
	if err != nil {
		t.Skipf("capture not available: %v", err)
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		t.Fatal(err)
	}
	g := msg.Registry()
	out := map[msgtype.Type][]any{}
	for _, c := range conns {
		for _, u := range pcap.SlurmUnits(c, codec.Default) {
			mt := u.Frame.Header.MsgType
			if u.Kind != pcap.UnitRPC || !slices.Contains(types, mt) {
				continue
			}
			bc, _ := g.Lookup(mt)
			v, err := bc.Decode(pack.NewReader(u.Frame.Body), u.Frame.Header.Version)
			if err != nil {
				t.Fatalf("%v: %v", mt, err)
			}
			out[mt] = append(out[mt], v)
		}
	}
	return out
}

func captureCluster(t *testing.T) (*Cluster, Config) {
	data, err := os.ReadFile("testdata/capture-slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	c, err := conf.Parse("capture-slurm.conf", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sched.FromConf(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromConf(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Users = users
	return &Cluster{Nodes: s.Nodes, Partitions: s.Partitions, Config: s.Config}, cfg
}

var cmpBitmap = cmp.Comparer(func(a, b *jobcred.Bitmap) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
})

// The captured sbatch request, replayed into the manager, produces the
// launch and terminate messages real slurmctld sent, field by field (job
// id and times aside).
func TestAgainstCapturedBatchJob(t *testing.T) {
	bodies := captured(t, "batch-launch-complete.pcap", msgtype.REQUEST_SUBMIT_BATCH_JOB,
		msgtype.REQUEST_BATCH_JOB_LAUNCH, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, msgtype.REQUEST_TERMINATE_JOB)
	desc := bodies[msgtype.REQUEST_SUBMIT_BATCH_JOB][0].(msg.JobDesc)
	want := bodies[msgtype.REQUEST_BATCH_JOB_LAUNCH][0].(msg.BatchJobLaunch)
	done := bodies[msgtype.REQUEST_COMPLETE_BATCH_SCRIPT][0].(msg.CompleteBatchScript)
	wantKill := bodies[msgtype.REQUEST_TERMINATE_JOB][0].(msg.KillJob)

	cl, cfg := captureCluster(t)
	m := New(cfg, nil)
	m.nextID = want.JobID // the capture's controller had run 7 jobs before
	r, _, err := m.Submit(&desc, Caller{UID: 0, GID: 0, ProtocolVersion: 0x2600}, cl, wantKill.StartTime)
	if err != nil || r.JobID != want.JobID {
		t.Fatalf("submit: %v %+v", err, r)
	}
	ls := launches(mustSchedule(t, m, cl, wantKill.StartTime))
	if len(ls) != 1 {
		t.Fatalf("%d launches", len(ls))
	}
	got := *ls[0].Msg
	if diff := cmp.Diff(want, got, cmpBitmap, cmpopts.IgnoreFields(msg.BatchJobLaunch{}, "Cred")); diff != "" {
		t.Errorf("batch launch (-real +ours):\n%s", diff)
	}
	if diff := cmp.Diff(want.Cred.Body, got.Cred.Body, cmpBitmap); diff != "" {
		t.Errorf("batch credential (-real +ours):\n%s", diff)
	}
	if got.Cred.Version != want.Cred.Version || got.Cred.IsSigned() {
		t.Errorf("credential version %#x signed %v", got.Cred.Version, got.Cred.IsSigned())
	}

	out, err := m.CompleteBatch(&done, Caller{UID: 0}, cl, wantKill.Time)
	if err != nil {
		t.Fatal(err)
	}
	nm := out.Actions[0].(NodeMessage)
	gotKill := *nm.Msg.(*msg.KillJob)
	if diff := cmp.Diff(wantKill, gotKill, cmpBitmap, cmpopts.IgnoreFields(msg.KillJob{}, "Cred")); diff != "" {
		t.Errorf("terminate job (-real +ours):\n%s", diff)
	}
	if diff := cmp.Diff(wantKill.Cred.Body, gotKill.Cred.Body, cmpBitmap); diff != "" {
		t.Errorf("terminate credential (-real +ours):\n%s", diff)
	}
}

// squeue against real slurmctld (squeue.pcap): a pending job in a DOWN
// partition, two running jobs and two held ones, rebuilt from the captured
// sbatch request (sbatch.pcap made job 1) and compared record by record.
func TestAgainstCapturedJobInfo(t *testing.T) {
	want := captured(t, "squeue.pcap", msgtype.RESPONSE_JOB_INFO)[msgtype.RESPONSE_JOB_INFO][0].(msg.JobInfoMsg)
	base := captured(t, "sbatch.pcap", msgtype.REQUEST_SUBMIT_BATCH_JOB)[msgtype.REQUEST_SUBMIT_BATCH_JOB][0].(msg.JobDesc)
	cl, cfg := captureCluster(t)
	m := New(cfg, nil)
	rootC := Caller{UID: 0, GID: 0, Host: "127.0.0.1", HostName: "localhost", ProtocolVersion: 0x2600}
	submit := func(name, node string, held bool, now int64) {
		d := base
		d.Name = msg.Str(name)
		if name != "cap-sbatch" {
			d.Partition = msg.NullString{}
			d.Bitflags |= msg.UseDefaultPart
		}
		if node != "" {
			d.ReqNodes = msg.Str(node)
		}
		if held {
			d.Priority = 0
		}
		if _, _, err := m.Submit(&d, rootC, cl, now); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Schedule(cl, now, false); err != nil {
			t.Fatal(err)
		}
	}
	submit("cap-sbatch", "", false, want.Jobs[0].SubmitTime)
	t1 := want.Jobs[1].SubmitTime
	// Real slurmctld started 2 and 3 two seconds after their submission
	// (the deferred batch scheduling); submit them without a pass first.
	for _, s := range []struct {
		name, node string
		held       bool
	}{{"cap-run1", "n1", false}, {"cap-run2", "n2", false}, {"cap-held1", "", true}, {"cap-held2", "", true}} {
		d := base
		d.Name, d.Partition = msg.Str(s.name), msg.NullString{}
		d.Bitflags |= msg.UseDefaultPart
		if s.node != "" {
			d.ReqNodes = msg.Str(s.node)
		}
		if s.held {
			d.Priority = 0
		}
		if _, _, err := m.Submit(&d, rootC, cl, t1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Schedule(cl, want.Jobs[1].StartTime, false); err != nil {
		t.Fatal(err)
	}
	got := m.JobInfoMsg(cl, len(cl.Nodes), want.Jobs[0].ShowFlags, ^uint32(0), want.LastUpdate)
	if len(got.Jobs) != len(want.Jobs) {
		t.Fatalf("%d jobs, want %d", len(got.Jobs), len(want.Jobs))
	}
	for i := range got.Jobs {
		w, g := want.Jobs[i], got.Jobs[i]
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("job %d (-real +ours):\n%s", w.JobID, diff)
		}
	}
}

// scancel of a running batch job (scancel-running.pcap): the terminate
// message, then the batch script's late completion answered 2021.
func TestAgainstCapturedScancel(t *testing.T) {
	bodies := captured(t, "scancel-running.pcap", msgtype.REQUEST_KILL_JOB, msgtype.REQUEST_TERMINATE_JOB,
		msgtype.REQUEST_COMPLETE_BATCH_SCRIPT)
	kill := bodies[msgtype.REQUEST_KILL_JOB][0].(msg.JobStepKillRequest)
	wantKill := bodies[msgtype.REQUEST_TERMINATE_JOB][0].(msg.KillJob)
	done := bodies[msgtype.REQUEST_COMPLETE_BATCH_SCRIPT][0].(msg.CompleteBatchScript)
	base := captured(t, "sbatch.pcap", msgtype.REQUEST_SUBMIT_BATCH_JOB)[msgtype.REQUEST_SUBMIT_BATCH_JOB][0].(msg.JobDesc)

	cl, cfg := captureCluster(t)
	m := New(cfg, nil)
	m.nextID = wantKill.StepID.JobID
	rootC := Caller{UID: 0, GID: 0, Host: "127.0.0.1", HostName: "localhost", ProtocolVersion: 0x2600}
	d := base
	d.Partition, d.ReqNodes = msg.NullString{}, msg.Str("n1")
	if _, _, err := m.Submit(&d, rootC, cl, wantKill.StartTime); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, m, cl, wantKill.StartTime)
	out, err := m.Kill(&kill, rootC, cl, wantKill.Time)
	if err != nil || len(out.Actions) != 1 {
		t.Fatalf("%v %+v", err, out.Actions)
	}
	got := *out.Actions[0].(NodeMessage).Msg.(*msg.KillJob)
	if diff := cmp.Diff(wantKill, got, cmpBitmap, cmpopts.IgnoreFields(msg.KillJob{}, "Cred")); diff != "" {
		t.Errorf("terminate (-real +ours):\n%s", diff)
	}
	if diff := cmp.Diff(wantKill.Cred.Body, got.Cred.Body, cmpBitmap); diff != "" {
		t.Errorf("terminate credential (-real +ours):\n%s", diff)
	}
	if _, err := m.CompleteBatch(&done, rootC, cl, wantKill.Time); code(err) != 2021 {
		t.Errorf("late completion: %v, want 2021", err)
	}
}
