package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

func TestPrologFlagsAlloc(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags PrologFlags
	}{
		{"alloc", PrologFlags{Alloc: true}},
		{"contain", PrologFlags{Alloc: true, Contain: true}},
		{"nohold", PrologFlags{Alloc: true, NoHold: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			m.cfg.Prolog = tc.flags
			d := batchDesc(alice)
			d.MinNodes = 2
			id := mustSubmit(t, m, cl, d, alice, t0)
			acts := mustSchedule(t, m, cl, t0)
			var prolog, launch int
			for _, a := range acts {
				switch a := a.(type) {
				case NodeMessage:
					if a.MsgType == msgtype.REQUEST_LAUNCH_PROLOG {
						prolog++
						if pl := a.Msg.(*msg.PrologLaunch); len(a.Nodes) != 2 || pl.JobID != id || pl.Cred == nil {
							t.Errorf("prolog launch %+v to %v", pl, a.Nodes)
						}
					}
				case LaunchBatch:
					if prolog == 0 {
						t.Error("batch launch before the prolog launch")
					}
					launch++
				}
			}
			if prolog != 1 || launch != 1 {
				t.Fatalf("%d prolog launches, %d batch launches", prolog, launch)
			}
			j := m.Job(id)
			if _, st := j.step(msg.StepIDExtern); (st != nil) != tc.flags.Contain {
				t.Errorf("extern step %v, want %v", st != nil, tc.flags.Contain)
			}
			wantReason := ReasonProlog
			if tc.flags.NoHold {
				wantReason = ReasonNone
			}
			if j.Reason != wantReason {
				t.Fatalf("reason %d, want %d", j.Reason, wantReason)
			}
			for _, node := range []string{"n1", "n2"} {
				if j.Reason != wantReason {
					t.Fatalf("reason cleared before %s reported", node)
				}
				if _, err := m.PrologComplete(&msg.CompleteProlog{JobID: id, NodeName: msg.Str(node)}, t0+1); err != nil {
					t.Fatal(err)
				}
			}
			if j.Reason != ReasonNone || j.PrologNodes != nil {
				t.Errorf("after both nodes: reason %d, nodes %v", j.Reason, j.PrologNodes)
			}
		})
	}
}
