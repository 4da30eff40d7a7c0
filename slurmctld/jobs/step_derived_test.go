package jobs

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// stepEnd reports ranks first..last of step s of job id ended with rc.
func stepEnd(t *testing.T, m *Manager, id, s, first, last, rc uint32, now int64) {
	t.Helper()
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: s, StepHetComp: NoVal},
		RangeFirst: first, RangeLast: last, StepRC: rc}, root, now); err != nil {
		t.Fatalf("step %d.%d end: %v", id, s, err)
	}
}

// Steps still recorded when the job's nodes are clean go the way
// cleanup_completing's delete_step_records takes them: each counts in
// the derived exit code with its code so far, NO_VAL (shown 0:126) when
// no node of it ever reported.
func TestStepsLeftCountInDerivedExit(t *testing.T) {
	twoNodeStep := func(id uint32) *msg.StepCreateRequest {
		r := oneTaskStep(id, alice.UID)
		r.MinNodes, r.MaxNodes, r.NumTasks = 2, 2, 2
		return r
	}
	for _, tc := range []struct {
		name string
		// run gets the job (2 nodes) with steps 0 and 1 (both nodes)
		// and ends it, cleaning what nodes it can.
		run  func(t *testing.T, m *Manager, cl *Cluster, j *Job)
		want uint32
	}{
		{"every step reported", func(t *testing.T, m *Manager, cl *Cluster, j *Job) {
			stepEnd(t, m, j.ID, 0, 0, 1, 0, t0+2)
			stepEnd(t, m, j.ID, 1, 0, 1, 2<<8, t0+2)
			finishJob(t, m, cl, j.ID, 0, t0+3)
		}, 2 << 8},
		{"a step never reported", func(t *testing.T, m *Manager, cl *Cluster, j *Job) {
			stepEnd(t, m, j.ID, 0, 0, 1, 2<<8, t0+2)
			finishJob(t, m, cl, j.ID, 0, t0+3)
		}, NoVal},
		{"a node of each step reported", func(t *testing.T, m *Manager, cl *Cluster, j *Job) {
			stepEnd(t, m, j.ID, 0, 0, 0, 0, t0+2)
			stepEnd(t, m, j.ID, 1, 1, 1, 3<<8, t0+2)
			finishJob(t, m, cl, j.ID, 0, t0+3)
		}, 3 << 8},
		{"node failure", func(t *testing.T, m *Manager, cl *Cluster, j *Job) {
			if _, err := m.NodeDown(j.Nodes[0], cl, t0+2); err != nil {
				t.Fatal(err)
			}
			if j.Steps == nil {
				t.Fatal("steps gone before the other node is clean")
			}
			stepEnd(t, m, j.ID, 0, 1, 1, 9, t0+3)
			for _, n := range append([]string(nil), j.Completing...) {
				if _, err := m.EpilogComplete(j.ID, n, root, t0+3); err != nil {
					t.Fatal(err)
				}
			}
		}, NoVal},
		{"every node failed", func(t *testing.T, m *Manager, cl *Cluster, j *Job) {
			stepEnd(t, m, j.ID, 0, 0, 1, 0, t0+2)
			stepEnd(t, m, j.ID, 1, 0, 0, 0, t0+2)
			for _, n := range append([]string(nil), j.Nodes...) {
				if _, err := m.NodeDown(n, cl, t0+3); err != nil {
					t.Fatal(err)
				}
			}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.MinNodes = 2
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			for range 2 {
				if _, _, err := m.CreateStep(twoNodeStep(id), alice, cl, t0+1); err != nil {
					t.Fatal(err)
				}
			}
			tc.run(t, m, cl, j)
			if j.IsCompleting() || j.Steps != nil {
				t.Fatalf("state %#x, %d steps left", j.State, len(j.Steps))
			}
			if j.DerivedEC != tc.want {
				t.Errorf("DerivedEC %#x, want %#x", j.DerivedEC, tc.want)
			}
			if ji := m.Info(j, cl, len(cl.Nodes), 0, t0+5); ji.DerivedEC != tc.want {
				t.Errorf("job info DerivedEC %#x, want %#x", ji.DerivedEC, tc.want)
			}
		})
	}
}

// A step's code is its first node's report, then the highest one, an
// OOM kill (SIG_OOM) winning over a higher status (_step_partial_comp).
func TestStepExitCodeOOMWins(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.MinNodes = 2
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	r := oneTaskStep(id, alice.UID)
	r.MinNodes, r.MaxNodes, r.NumTasks = 2, 2, 2
	if _, _, err := m.CreateStep(r, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	stepEnd(t, m, id, 0, 0, 0, 1<<8, t0+2)
	stepEnd(t, m, id, 0, 1, 1, sigOOM, t0+2)
	if ec := m.Job(id).DerivedEC; ec != sigOOM {
		t.Errorf("DerivedEC %#x, want SIG_OOM", ec)
	}
}

// A step only on nodes a shrink takes away is killed there (its code 9
// for each, _kill_step_on_node); it counts in the derived exit code as
// cleanup_completing would count it.
func TestShrinkStepCountsInDerivedExit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes = 3
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(a.JobID)
	r := oneTaskStep(a.JobID, alice.UID)
	r.NodeList = msg.Str(j.Nodes[2])
	if _, _, err := m.CreateStep(r, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	u := msg.NewJobDesc()
	u.JobID, u.MinNodes = a.JobID, 1
	if _, err := m.Update(u, alice, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	if len(j.Steps) != 0 || j.DerivedEC != 9 {
		t.Errorf("steps %d, DerivedEC %#x, want none and 9", len(j.Steps), j.DerivedEC)
	}
}

// slurmd's cancel of a step over the job's memory limit
// (REQUEST_CANCEL_JOB_STEP with KILL_OOM) makes the step's code SIG_OOM
// (_step_signal): a step none of whose nodes then reports counts that
// in the derived exit code, not NO_VAL; a node's first report still
// sets the code outright.
func TestStepKillOOMDerivedExit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  uint16
		report bool // node 1 reports rc 9 after the cancel
		want   uint32
	}{
		{"KILL_OOM, no report", msg.KillOOM, false, sigOOM},
		{"plain cancel, no report", 0, false, NoVal},
		{"KILL_OOM, then a report", msg.KillOOM, true, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.MinNodes = 2
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			r := oneTaskStep(id, alice.UID)
			r.MinNodes, r.MaxNodes, r.NumTasks = 2, 2, 2
			if _, _, err := m.CreateStep(r, alice, cl, t0+1); err != nil {
				t.Fatal(err)
			}
			k := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, Signal: sigKill, Flags: tc.flags}
			if _, err := m.Kill(k, root, cl, t0+2); err != nil {
				t.Fatal(err)
			}
			if tc.report {
				stepEnd(t, m, id, 0, 1, 1, 9, t0+2)
			}
			finishJob(t, m, cl, id, 0, t0+3)
			if j := m.Job(id); j.Steps != nil || j.DerivedEC != tc.want {
				t.Errorf("%d steps left, DerivedEC %#x, want %#x", len(j.Steps), j.DerivedEC, tc.want)
			}
		})
	}
}

// The SIG_OOM mark survives a controller restart.
func TestStepKillOOMKeptOverRestart(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	if _, _, err := m.CreateStep(oneTaskStep(id, alice.UID), alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	k := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, Signal: sigKill, Flags: msg.KillOOM}
	if _, err := m.Kill(k, root, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	if err := n.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	finishJob(t, n, cl, id, 0, t0+3)
	if ec := n.Job(id).DerivedEC; ec != sigOOM {
		t.Errorf("DerivedEC %#x after restart, want SIG_OOM", ec)
	}
}
