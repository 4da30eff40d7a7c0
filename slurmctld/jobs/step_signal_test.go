package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// scancel ID.STEP (SIGKILL) is _step_signal: REQUEST_SIGNAL_TASKS with
// signal 9 to the step's nodes (never REQUEST_TERMINATE_TASKS, which is
// for failed nodes) and, first, SRUN_JOB_COMPLETE to the step's srun. Other
// signals reach the nodes only. The job and the step stay until the nodes
// report the step complete.
func TestKillStepSigkill(t *testing.T) {
	tests := []struct {
		name     string
		sig      uint16
		srunPort uint16
		wantSrun bool
	}{
		{"sigkill with srun", sigKill, 7000, true},
		{"sigkill without srun address", sigKill, 0, false},
		{"sigterm", 15, 7000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := msg.NewJobDesc()
			d.MinNodes = 2
			a, _, err := m.Allocate(d, alice, cl, t0)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
				MinNodes: 2, NumTasks: 2, Host: msg.Str("login"), Port: tc.srunPort}, alice, cl, t0+1); err != nil {
				t.Fatal(err)
			}
			req := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: a.JobID, StepID: 0, StepHetComp: NoVal}, Signal: tc.sig}
			out, err := m.Kill(req, alice, cl, t0+2)
			if err != nil {
				t.Fatal(err)
			}
			var srun []SrunMessage
			var nodes []NodeMessage
			for _, a := range out.Actions {
				switch a := a.(type) {
				case SrunMessage:
					srun = append(srun, a)
				case NodeMessage:
					nodes = append(nodes, a)
				default:
					t.Fatalf("unexpected action %+v", a)
				}
			}
			if len(nodes) != 1 || nodes[0].MsgType != msgtype.REQUEST_SIGNAL_TASKS || len(nodes[0].Nodes) != 2 {
				t.Fatalf("node messages %+v", nodes)
			}
			if st := nodes[0].Msg.(*msg.SignalTasks); st.Signal != tc.sig || st.StepID.StepID != 0 || st.StepID.StepHetComp != NoVal {
				t.Fatalf("signal msg %+v", st)
			}
			if !tc.wantSrun {
				if len(srun) != 0 {
					t.Fatalf("srun messages %+v", srun)
				}
			} else {
				if len(srun) != 1 {
					t.Fatalf("srun messages %+v", srun)
				}
				s := srun[0]
				c, ok := s.Msg.(*msg.SrunJobCompleteMsg)
				if s.MsgType != msgtype.SRUN_JOB_COMPLETE || s.Host != "login" || s.Port != tc.srunPort || s.UID != alice.UID ||
					!ok || c.StepID != (msg.StepID{JobID: a.JobID, StepID: 0, StepHetComp: NoVal}) {
					t.Fatalf("srun message %+v", s)
				}
				if _, first := out.Actions[0].(SrunMessage); !first {
					t.Fatalf("srun is told before the nodes are signalled: %+v", out.Actions)
				}
			}
			if j := m.Job(a.JobID); !j.Running() || len(j.Steps) != 1 {
				t.Fatalf("job state %#x, %d steps", j.State, len(j.Steps))
			}
		})
	}
}

// job_step_signal refuses a job that is not running (pending or
// suspended) with ESLURM_TRANSITION_STATE_NO_UPDATE and a finished one with
// ESLURM_ALREADY_DONE, before looking for the step.
func TestKillStepJobState(t *testing.T) {
	tests := []struct {
		name  string
		state uint32
		want  int
	}{
		{"pending", msg.JobPending, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"suspended", msg.JobSuspended, slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE},
		{"completed", msg.JobComplete, slurmerr.ESLURM_ALREADY_DONE},
		{"cancelled, completing", msg.JobCancelled | msg.JobCompleting, slurmerr.ESLURM_ALREADY_DONE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{ID: 5, State: tc.state, Steps: []*Step{{ID: 0, Nodes: []string{"n1"}}}}
			m := newTestManager(nil)
			if _, err := m.signalStep(j, msg.StepID{StepID: 0, StepHetComp: NoVal}, sigKill, 0); code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
		})
	}
}
