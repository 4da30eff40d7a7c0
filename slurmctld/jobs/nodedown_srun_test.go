package jobs

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// A node going DOWN tells the srun of each step on it (srun_node_fail),
// before the kill goes to the job's nodes: a batch script's srun then ends
// it by itself, and the script's exit status (0 after srun's 0) is what
// its late completion carries, which the ended job keeps.
func TestNodeDownTellsStepSruns(t *testing.T) {
	for _, requeue := range []uint16{0, 1} {
		t.Run(fmt.Sprint("requeue=", requeue), func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.MinNodes = 2
			d.Requeue = requeue
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			down := j.Nodes[0]
			// Step 0 on both nodes, step 1 on the other node only, step 2
			// on the failed node without an srun address.
			steps := []struct {
				nodes string
				port  uint16
			}{{"", 7000}, {j.Nodes[1], 7001}, {down, 0}}
			for _, s := range steps {
				r := &msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
					MinNodes: 1, NumTasks: 1, CPUCount: NoVal, Flags: ssfOverlapForce, Host: msg.Str("login"), Port: s.port}
				if s.nodes == "" {
					r.MinNodes, r.MaxNodes, r.NumTasks = 2, 2, 2
				} else {
					r.MaxNodes, r.NodeList = 1, msg.Str(s.nodes)
				}
				if _, _, err := m.CreateStep(r, alice, cl, t0+1); err != nil {
					t.Fatal(err)
				}
			}
			out, err := m.NodeDown(down, cl, t0+2)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range out.Actions {
				switch a := a.(type) {
				case SrunMessage:
					f := a.Msg.(*msg.SrunNodeFailMsg)
					got = append(got, fmt.Sprintf("%v %s:%d %d.%d %s", a.MsgType, a.Host, a.Port, f.StepID.JobID, f.StepID.StepID, f.NodeList.Value))
				case NodeMessage:
					got = append(got, fmt.Sprintf("%v", a.MsgType))
				}
			}
			want := []string{
				fmt.Sprintf("%v login:7000 %d.0 %s", msgtype.SRUN_NODE_FAIL, id, down),
				fmt.Sprint(msgtype.REQUEST_TERMINATE_JOB),
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("actions\n got %q\nwant %q", got, want)
			}
			if requeue == 1 {
				return
			}
			// The script's status from the failed node comes after the
			// job ended: the job keeps what it had.
			_, err = m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str(j.BatchHost)}, root, cl, t0+2)
			if ec := j.ExitCode; err == nil || ec != 0 || j.Base() != msg.JobNodeFail {
				t.Fatalf("late batch end: %v, exit %#x state %#x", err, ec, j.State)
			}
		})
	}
}

// A suspended job's sruns are not told (srun_node_fail needs RUNNING).
func TestNodeDownSuspendedNoSrunNodeFail(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes, d.AllocRespPort, d.OtherPort = 1, 4000, 4001
	d.RespHost = msg.Str("login")
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(a.JobID)
	if got := m.srunNodeFail(j, j.Nodes[0]); len(got) != 1 {
		t.Fatalf("running: %+v", got)
	}
	j.setBase(msg.JobSuspended)
	if got := m.srunNodeFail(j, j.Nodes[0]); len(got) != 0 {
		t.Fatalf("suspended: %+v", got)
	}
}
