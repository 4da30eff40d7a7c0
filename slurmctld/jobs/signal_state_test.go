package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// signalFixture has alice's running batch job, her pending (held) batch
// job and her running interactive allocation (salloc: no batch script),
// on testCluster.
type signalFixture struct {
	m                 *Manager
	cl                *Cluster
	run, pend, salloc uint32
}

func newSignalFixture(t *testing.T) signalFixture {
	t.Helper()
	cl := testCluster()
	m := newTestManager(nil)
	run := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	d := batchDesc(alice)
	d.Priority = 0
	pend := mustSubmit(t, m, cl, d, alice, t0)
	a, _, err := m.Allocate(msg.NewJobDesc(), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Job(run).Running() || !m.Job(pend).Pending() || !m.Job(a.JobID).Running() {
		t.Fatalf("fixture states %#x %#x %#x", m.Job(run).State, m.Job(pend).State, m.Job(a.JobID).State)
	}
	return signalFixture{m: m, cl: cl, run: run, pend: pend, salloc: a.JobID}
}

// job_signal acts on a job that is not running with SIGKILL only: any
// other signal to a pending or suspended job answers "Job can not be
// altered now, try again later" (ESLURM_TRANSITION_STATE_NO_UPDATE), by
// its id string (REQUEST_KILL_JOB) as by its id (REQUEST_CANCEL_JOB_STEP
// for the whole job), and leaves the job alone. KILL_JOB_BATCH (scancel
// -b) to a job without a batch script answers ESLURM_JOB_SCRIPT_MISSING.
func TestSignalJobStates(t *testing.T) {
	tests := []struct {
		name    string
		which   func(f signalFixture) uint32
		suspend bool
		sig     uint16
		flags   uint16
		byStr   bool
		want    int
	}{
		{"pending USR1 by id string", func(f signalFixture) uint32 { return f.pend }, false, 10, 0, true, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"pending TERM by id", func(f signalFixture) uint32 { return f.pend }, false, 15, 0, false, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"pending TERM batch only", func(f signalFixture) uint32 { return f.pend }, false, 15, msg.KillJobBatch, true, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"suspended USR1", func(f signalFixture) uint32 { return f.run }, true, 10, 0, true, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"salloc job -b USR1", func(f signalFixture) uint32 { return f.salloc }, false, 10, msg.KillJobBatch, true, slurmerr.ESLURM_JOB_SCRIPT_MISSING},
		{"salloc job -b KILL", func(f signalFixture) uint32 { return f.salloc }, false, sigKill, msg.KillJobBatch, true, slurmerr.ESLURM_JOB_SCRIPT_MISSING},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSignalFixture(t)
			id := tc.which(f)
			if tc.suspend {
				if _, _, err := f.m.Suspend(suspendReq(msg.SuspendJob, itoa(id)), root, f.cl, t0+5); err != nil {
					t.Fatal(err)
				}
			}
			before := tableJSON(t, f.m)
			req := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
				Signal: tc.sig, Flags: tc.flags}
			if tc.byStr {
				req.StepID.JobID = NoVal
				req.SJobID = msg.Str(itoa(id))
			}
			out, err := f.m.Kill(req, alice, f.cl, t0+10)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if len(out.Actions) != 0 {
				t.Fatalf("actions %+v", out.Actions)
			}
			if after := tableJSON(t, f.m); after != before {
				t.Fatalf("the table changed:\n%s\n%s", before, after)
			}
		})
	}
}

// A step signal (REQUEST_CANCEL_JOB_STEP with a step id, the batch
// script's SLURM_BATCH_SCRIPT included) is job_step_signal: a user who
// does not own the job is refused as "Invalid user id"
// (ESLURM_USER_ID_MISSING) before the job's state is looked at; a job
// that is not running answers ESLURM_TRANSITION_STATE_NO_UPDATE and a
// pending one stays pending, SIGKILL or not; the batch step of a running
// job is signalled on its batch host alone and the job keeps running.
func TestSignalStepPaths(t *testing.T) {
	tests := []struct {
		name      string
		which     func(f signalFixture) uint32
		step      uint32
		caller    Caller
		sig       uint16
		want      int
		wantNodes []string // REQUEST_SIGNAL_TASKS sent, on success
	}{
		{"other user's step", func(f signalFixture) uint32 { return f.run }, 0, bob, 15, slurmerr.ESLURM_USER_ID_MISSING, nil},
		{"other user's batch step", func(f signalFixture) uint32 { return f.run }, msg.StepIDBatch, bob, sigKill, slurmerr.ESLURM_USER_ID_MISSING, nil},
		{"other user's pending job", func(f signalFixture) uint32 { return f.pend }, 0, bob, sigKill, slurmerr.ESLURM_USER_ID_MISSING, nil},
		{"unknown job", func(f signalFixture) uint32 { return 999 }, 0, bob, sigKill, slurmerr.ESLURM_INVALID_JOB_ID, nil},
		{"pending batch step KILL", func(f signalFixture) uint32 { return f.pend }, msg.StepIDBatch, alice, sigKill, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE, nil},
		{"pending step 0", func(f signalFixture) uint32 { return f.pend }, 0, root, sigKill, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE, nil},
		{"running job, no step 0", func(f signalFixture) uint32 { return f.run }, 0, alice, sigKill, slurmerr.ESLURM_INVALID_JOB_ID, nil},
		{"salloc job has no batch step", func(f signalFixture) uint32 { return f.salloc }, msg.StepIDBatch, alice, sigKill, slurmerr.ESLURM_INVALID_JOB_ID, nil},
		{"running batch step KILL", func(f signalFixture) uint32 { return f.run }, msg.StepIDBatch, alice, sigKill, 0, []string{"n1"}},
		{"running batch step USR1 by root", func(f signalFixture) uint32 { return f.run }, msg.StepIDBatch, root, 10, 0, []string{"n1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSignalFixture(t)
			id := tc.which(f)
			before := tableJSON(t, f.m)
			req := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: id, StepID: tc.step, StepHetComp: NoVal}, Signal: tc.sig}
			out, err := f.m.Kill(req, tc.caller, f.cl, t0+10)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if after := tableJSON(t, f.m); after != before {
				t.Fatalf("the table changed:\n%s\n%s", before, after)
			}
			if tc.want != 0 {
				if len(out.Actions) != 0 {
					t.Fatalf("actions %+v", out.Actions)
				}
				return
			}
			if len(out.Actions) != 1 {
				t.Fatalf("actions %+v", out.Actions)
			}
			nm, ok := out.Actions[0].(NodeMessage)
			if !ok || nm.MsgType != msgtype.REQUEST_SIGNAL_TASKS || len(nm.Nodes) != len(tc.wantNodes) || nm.Nodes[0] != tc.wantNodes[0] {
				t.Fatalf("action %+v", out.Actions[0])
			}
			st := nm.Msg.(*msg.SignalTasks)
			if st.StepID != (msg.StepID{JobID: id, StepID: tc.step, StepHetComp: NoVal}) || st.Signal != tc.sig {
				t.Fatalf("signal %+v", st)
			}
		})
	}
}

// A step signal by job id names that one record (find_job_record): the
// id of an array whose first tasks run is its pending meta record, whose
// steps cannot be signalled; the running tasks are not touched. Their
// own ids reach their batch steps.
func TestSignalStepArrayMetaID(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	meta, running := runningArray(t, m, cl)
	before := tableJSON(t, m)
	req := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: meta, StepID: msg.StepIDBatch, StepHetComp: NoVal}, Signal: sigKill}
	out, err := m.Kill(req, alice, cl, t0+5)
	if code(err) != slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE || len(out.Actions) != 0 {
		t.Fatalf("meta id: err %v, actions %+v", err, out.Actions)
	}
	if after := tableJSON(t, m); after != before {
		t.Fatalf("the table changed:\n%s\n%s", before, after)
	}
	req.StepID.JobID = running[1]
	out, err = m.Kill(req, alice, cl, t0+5)
	if err != nil || len(out.Actions) != 1 {
		t.Fatalf("task id: err %v, actions %+v", err, out.Actions)
	}
	if st := out.Actions[0].(NodeMessage).Msg.(*msg.SignalTasks); st.StepID.JobID != running[1] || st.StepID.StepID != msg.StepIDBatch {
		t.Fatalf("signal %+v", st)
	}
	if !m.Job(running[0]).Running() || !m.Job(running[1]).Running() {
		t.Fatal("a task ended")
	}
}
