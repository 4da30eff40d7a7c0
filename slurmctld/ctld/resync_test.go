package ctld

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// startTestJob submits a two-node batch job (requeue as asked) and starts
// it on n1 and n2.
func startTestJob(t *testing.T, ctl *Controller, requeue bool) uint32 {
	t.Helper()
	req := submitReq(2)
	if !requeue {
		req.Body.(*msg.JobDesc).Requeue = 0
	}
	sub, ok := ctl.Serve(context.Background(), req).Body.(*msg.SubmitResponse)
	if !ok {
		t.Fatal("submit failed")
	}
	out, err := ctl.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.Schedule(cl, now, false)
	})
	if err != nil || len(out.Actions) != 1 {
		t.Fatalf("schedule: %v %+v", err, out.Actions)
	}
	return sub.JobID
}

func regWith(name string, steps ...msg.StepID) *msg.NodeRegistration {
	r := reg(name, 4, 1000, 100)
	r.Steps = steps
	return r
}

// kinds lists the actions as "TYPE job@nodes".
func kinds(acts []jobs.Action) []string {
	var out []string
	for _, a := range acts {
		if nm, ok := a.(jobs.NodeMessage); ok {
			out = append(out, nm.MsgType.String()+" "+itoa(nm.JobID)+"@"+joinNodes(nm.Nodes))
		}
	}
	return out
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func joinNodes(ns []string) string { return strings.Join(ns, ",") }

// TestRegistrationResync: a registration's job steps are checked against
// the job table before the node's own checks: a job the table lacks is
// aborted on that node, a job the table has there and the node reports
// is left alone, and a batch job its batch host stopped reporting ends
// (here NODE_FAIL, no requeue) once the start-up grace has passed; the
// node table follows.
func TestRegistrationResync(t *testing.T) {
	ctl, clk := newTestController(t, "")
	m := jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})
	if err := ctl.AttachJobs(JobsOptions{Manager: m}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := ctl.ValidateRegistration(reg(n, 4, 1000, 100), 0x2600); err != nil {
			t.Fatal(err)
		}
	}
	id := startTestJob(t, ctl, false)
	batch := msg.StepID{JobID: id, StepID: msg.StepIDBatch, StepHetComp: 0xfffffffe}
	orphan := msg.StepID{JobID: 4242, StepID: 0, StepHetComp: 0xfffffffe}
	for _, tc := range []struct {
		after time.Duration
		reg   *msg.NodeRegistration
		want  []string
		state uint32
	}{
		// Reported where it runs, with an orphan beside it.
		{after: time.Minute, reg: regWith("n1", batch, orphan), want: []string{"REQUEST_ABORT_JOB 4242@n1"}, state: msg.JobRunning},
		// Not reported, but reported 10 s ago: within the grace.
		{after: 10 * time.Second, reg: regWith("n1"), state: msg.JobRunning},
		// n2 never runs the script.
		{after: time.Minute, reg: regWith("n2"), state: msg.JobRunning},
		{after: time.Second, reg: regWith("n1"),
			want: []string{"REQUEST_TERMINATE_JOB " + itoa(id) + "@n1,n2"}, state: msg.JobNodeFail | msg.JobCompleting},
	} {
		clk.t = clk.t.Add(tc.after)
		_, out, err := ctl.registerNode(tc.reg, 0x2600)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(out.Actions); len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s at %v: sent %q, want %q", tc.reg.NodeName.Value, clk.t.Unix()-1_800_000_000, got, tc.want)
		}
		ctl.mu.RLock()
		st := m.Job(id).State
		ctl.mu.RUnlock()
		if st != tc.state {
			t.Fatalf("%s at %v: job state %#x, want %#x", tc.reg.NodeName.Value, clk.t.Unix()-1_800_000_000, st, tc.state)
		}
	}
	if n := node(ctl, "n1"); n.RunJobs != 0 || n.CompletingJobs != 1 || !n.Has(msg.NodeStateCompleting) {
		t.Errorf("n1: run %d completing %d state %#x", n.RunJobs, n.CompletingJobs, n.State)
	}
}

// TestRegistrationRPCActions: the kills a registration calls for leave
// after slurmd has its answer (Response.After), not before.
func TestRegistrationRPCActions(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	r := &server.Request{Header: codec.Header{MsgType: msgtype.MESSAGE_NODE_REGISTRATION_STATUS, Version: codec.Current},
		Body:     regWith("n1", msg.StepID{JobID: 4242, StepID: msg.StepIDBatch, StepHetComp: 0xfffffffe}),
		Identity: auth.Identity{UID: 0}}
	resp := ctl.Serve(context.Background(), r)
	if resp.MsgType != msgtype.RESPONSE_NODE_REGISTRATION || resp.After == nil {
		t.Fatalf("%v after=%v", resp.MsgType, resp.After != nil)
	}
	resp.After(nil) // n1 does not resolve: the abort fails at once
	plain := &server.Request{Header: r.Header, Body: regWith("n2"), Identity: auth.Identity{UID: 0}}
	if resp := ctl.Serve(context.Background(), plain); resp.After != nil {
		t.Fatal("a registration with nothing to kill has actions")
	}
}
