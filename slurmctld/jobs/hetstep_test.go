package jobs

import (
	"bytes"
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// hetStepJob is a running two-node allocation with a het step of two
// components (srun -w n1 : -w n2 as srun asks for it: the first with any
// step id, the second with the id the first got), and a journal.
func hetStepJob(t *testing.T) (*Manager, *Cluster, *MemJournal, uint32) {
	t.Helper()
	cl := testCluster()
	jr := &MemJournal{}
	m := newTestManager(jr)
	d := msg.NewJobDesc()
	d.MinNodes = 2
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	nodes := m.Job(a.JobID).Nodes
	step := NoVal
	for k, node := range nodes {
		g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: step, StepHetComp: uint32(k)},
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, NodeList: msg.Str(node), Host: msg.Str("login"), Port: 7000,
			StepHetCompCnt: 1, CPUCount: NoVal}, alice, cl, t0+1)
		if err != nil {
			t.Fatalf("component %d: %v", k, err)
		}
		if g.Body.StepID.StepHetComp != uint32(k) || g.Resp.JobStepID != g.Body.StepID.StepID {
			t.Fatalf("component %d: credential %+v, response step %d", k, g.Body.StepID, g.Resp.JobStepID)
		}
		if g.Resp.Layout.NodeList.Value != node || len(g.Resp.Layout.TIDs) != 1 || g.Resp.Layout.TIDs[0][0] != 0 {
			t.Fatalf("component %d: layout %+v", k, g.Resp.Layout)
		}
		step = g.Resp.JobStepID
	}
	if step != 0 {
		t.Fatalf("step id %d, want 0", step)
	}
	return m, cl, jr, a.JobID
}

func stepNames(m *Manager, cl *Cluster, key msg.StepID) []string {
	info, _ := m.StepInfo(key, cl, len(cl.Nodes), t0+2)
	var out []string
	for _, s := range info.Steps {
		out = append(out, stepIDString(s.StepID)+"@"+s.Nodes.Value)
	}
	return out
}

// Each component is a step record of its own, named N.S+K; the next
// plain step gets the next id (the components after the first do not
// move the job's next step id); a component asked for again is a
// duplicate; N.S alone finds the first component (find_step_record).
func TestHetStepRecords(t *testing.T) {
	m, cl, _, id := hetStepJob(t)
	all := msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal}
	want := []string{sid(id, "0+0") + "@n1", sid(id, "0+1") + "@n2"}
	if got := stepNames(m, cl, all); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for _, tc := range []struct {
		key  msg.StepID
		want string
	}{
		{msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, sid(id, "0+0") + "@n1"},
		{msg.StepID{JobID: id, StepID: 0, StepHetComp: 1}, sid(id, "0+1") + "@n2"},
	} {
		if got := stepNames(m, cl, tc.key); len(got) != 1 || got[0] != tc.want {
			t.Errorf("step info %+v: %v, want %s", tc.key, got, tc.want)
		}
	}
	for _, req := range []msg.StepID{{JobID: id, StepID: 0, StepHetComp: 1}, {JobID: id, StepID: 0, StepHetComp: 0}} {
		_, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: req, MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUCount: NoVal, Flags: ssfOverlapForce},
			alice, cl, t0+2)
		if code(err) != slurmerr.ESLURM_DUPLICATE_STEP_ID {
			t.Errorf("step %+v again: %v", req, err)
		}
	}
	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUCount: NoVal, Flags: ssfOverlapForce}, alice, cl, t0+2)
	if err != nil || g.Resp.JobStepID != 1 || g.Body.StepID.StepHetComp != NoVal {
		t.Fatalf("next step: %v %+v", err, g)
	}
}

// scancel N.S signals every component (job_step_signal goes on past a het
// step component), telling srun per component; N.S+K only that one.
// Each component ends on its own REQUEST_STEP_COMPLETE.
func TestHetStepSignalAndComplete(t *testing.T) {
	m, cl, _, id := hetStepJob(t)
	for _, tc := range []struct {
		key  msg.StepID
		want []msg.StepID
	}{
		{msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, []msg.StepID{{JobID: id, StepID: 0, StepHetComp: 0}, {JobID: id, StepID: 0, StepHetComp: 1}}},
		{msg.StepID{JobID: id, StepID: 0, StepHetComp: 1}, []msg.StepID{{JobID: id, StepID: 0, StepHetComp: 1}}},
	} {
		out, err := m.Kill(&msg.JobStepKillRequest{StepID: tc.key, Signal: sigKill}, alice, cl, t0+2)
		if err != nil {
			t.Fatal(err)
		}
		var signalled, told []msg.StepID
		for _, a := range out.Actions {
			switch a := a.(type) {
			case NodeMessage:
				if a.MsgType == msgtype.REQUEST_SIGNAL_TASKS {
					signalled = append(signalled, a.Msg.(*msg.SignalTasks).StepID)
				}
			case SrunMessage:
				told = append(told, a.Msg.(*msg.SrunJobCompleteMsg).StepID)
			}
		}
		if !slices.Equal(signalled, tc.want) || !slices.Equal(told, tc.want) {
			t.Errorf("kill %+v: signalled %v, srun told %v, want %v", tc.key, signalled, told, tc.want)
		}
	}
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: 1}}, alice, t0+3); err != nil {
		t.Fatal(err)
	}
	want := []string{sid(id, "0+0") + "@n1"}
	if got := stepNames(m, cl, msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal}); !slices.Equal(got, want) {
		t.Fatalf("after the second component's end: %v, want %v", got, want)
	}
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: 1}}, alice, t0+3); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("second component again: %v", err)
	}
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: 0}}, alice, t0+3); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Job(id).Steps); n != 0 {
		t.Fatalf("%d steps left", n)
	}
}

// The components survive a restart (journal replay, and a snapshot) as
// components.
func TestHetStepReplay(t *testing.T) {
	m, cl, jr, id := hetStepJob(t)
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	snap := newTestManager(nil)
	if err := snap.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	want := []string{sid(id, "0+0") + "@n1", sid(id, "0+1") + "@n2"}
	for name, r := range map[string]*Manager{"journal": replay(t, jr.Records), "snapshot": snap} {
		if a, b := tableJSON(t, m), tableJSON(t, r); a != b {
			t.Fatalf("%s: table differs:\n%s\n%s", name, a, b)
		}
		if got := stepNames(r, cl, msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal}); !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
}

func sid(id uint32, s string) string { return "StepId=" + itoa(id) + "." + s }
