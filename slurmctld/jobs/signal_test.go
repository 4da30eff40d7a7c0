package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// sigTermKill is SIG_TERM_KILL, what srun -K asks for when a task fails.
const sigTermKill = 991

// A step signal goes to the step's nodes as REQUEST_SIGNAL_TASKS with the
// signal unchanged (job_step_signal): slurmstepd turns SIG_TERM_KILL into
// SIGCONT, SIGTERM and, after KillWait, SIGKILL. The job keeps running.
func TestKillStepTermKill(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes = 2
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 2, NumTasks: 2, Host: msg.Str("login"), Port: 7000}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		caller Caller
		step   uint32
		want   int // error code, 0 for success
	}{
		{"other user", bob, 0, slurmerr.ESLURM_USER_ID_MISSING},
		{"no such step", alice, 7, slurmerr.ESLURM_INVALID_JOB_ID},
		{"owner", alice, 0, 0},
		{"root", root, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: a.JobID, StepID: tc.step, StepHetComp: NoVal}, Signal: sigTermKill}
			out, err := m.Kill(req, tc.caller, cl, t0+2)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			if tc.want != 0 {
				return
			}
			if len(out.Actions) != 1 {
				t.Fatalf("actions %+v", out.Actions)
			}
			nm, ok := out.Actions[0].(NodeMessage)
			if !ok || nm.MsgType != msgtype.REQUEST_SIGNAL_TASKS || len(nm.Nodes) != 2 {
				t.Fatalf("action %+v", out.Actions[0])
			}
			st := nm.Msg.(*msg.SignalTasks)
			if st.Signal != sigTermKill || st.StepID.StepID != 0 || st.StepID.JobID != a.JobID {
				t.Fatalf("signal msg %+v", st)
			}
			if j := m.Job(a.JobID); !j.Running() || len(j.Steps) != 1 {
				t.Fatalf("job state %#x, %d steps", j.State, len(j.Steps))
			}
		})
	}
}

// _job_requeue_op answers ESLURM_DISABLED for a --no-requeue job, to a
// user's scontrol requeue and to slurmd's launch-failure requeue alike
// (slurmd then ends the job); a requeueable job still requeues.
func TestRequeueDisabled(t *testing.T) {
	tests := []struct {
		name    string
		requeue uint16 // JobDesc.Requeue: 0 is --no-requeue
		caller  Caller
		flags   uint32
		want    int
	}{
		{"no-requeue, user", 0, alice, 0, slurmerr.ESLURM_DISABLED},
		{"no-requeue, launch failed", 0, root, msg.JobRequeueHold | msg.JobLaunchFailed, slurmerr.ESLURM_DISABLED},
		{"no-requeue, other user", 0, bob, 0, slurmerr.ESLURM_ACCESS_DENIED},
		{"requeue, user", 1, alice, 0, 0},
		{"default, launch failed", NoVal16, root, msg.JobRequeueHold | msg.JobLaunchFailed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.Requeue = tc.requeue
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			_, err := m.Requeue(&msg.JobRequeueRequest{JobID: id, Flags: tc.flags}, tc.caller, cl, t0+10)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			j := m.Job(id)
			if tc.want != 0 {
				if !j.Running() || j.RestartCnt != 0 {
					t.Fatalf("refused requeue changed the job: state %#x restarts %d", j.State, j.RestartCnt)
				}
				return
			}
			if !j.Pending() || j.RestartCnt != 1 {
				t.Fatalf("state %#x restarts %d", j.State, j.RestartCnt)
			}
		})
	}
}

// _job_create sets JOB_MEM_SET when the request names a memory limit.
func TestSubmitMemSet(t *testing.T) {
	tests := []struct {
		name string
		mem  uint64
		want bool
	}{
		{"unset", NoVal64, false},
		{"--mem", 100, true},
		{"--mem-per-cpu", 50 | memPerCPU, true},
		{"--mem=0", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.PnMinMemory = tc.mem
			id := mustSubmit(t, m, cl, d, alice, t0)
			if got := m.Job(id).Bitflags&jobMemSet != 0; got != tc.want {
				t.Fatalf("JOB_MEM_SET %v, want %v", got, tc.want)
			}
		})
	}
}
