package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// oneTaskStep is a one-task step in job id asked for as uid.
func oneTaskStep(id, uid uint32) *msg.StepCreateRequest {
	return &msg.StepCreateRequest{UserID: uid, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUCount: NoVal, Flags: ssfOverlapForce}
}

// Who may create a step, as _slurm_rpc_job_step_create and step_create:
// the sender must be the user named in the request (root may name
// anyone), and that user must own the job.
func TestStepCreateIdentity(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	a, _, err := m.Allocate(msg.NewJobDesc(), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	slurmUser := Caller{UID: m.cfg.SlurmUserID, GID: m.cfg.SlurmUserID}
	for _, tc := range []struct {
		name string
		who  Caller
		as   uint32
		want int
	}{
		{"another user naming the owner", bob, alice.UID, slurmerr.ESLURM_USER_ID_MISSING},
		{"another user as himself", bob, bob.UID, slurmerr.ESLURM_ACCESS_DENIED},
		{"SlurmUser naming the owner", slurmUser, alice.UID, slurmerr.ESLURM_USER_ID_MISSING},
		{"root in its own name", root, 0, slurmerr.ESLURM_ACCESS_DENIED},
		{"root naming the owner", root, alice.UID, 0},
		{"the owner", alice, alice.UID, 0},
	} {
		_, _, err := m.CreateStep(oneTaskStep(a.JobID, tc.as), tc.who, cl, t0+1)
		if code(err) != tc.want {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.want)
		}
	}
}

// A suspended job gets no new step (srun waits: ESLURM_DISABLED).
func TestStepCreateSuspended(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	a, _, err := m.Allocate(msg.NewJobDesc(), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	m.Job(a.JobID).setBase(msg.JobSuspended)
	if _, _, err := m.CreateStep(oneTaskStep(a.JobID, alice.UID), alice, cl, t0+1); code(err) != slurmerr.ESLURM_DISABLED {
		t.Fatalf("step in a suspended job: %v", err)
	}
}

// Step ids: the running batch script is a step, so its id is taken; a
// job whose next step id reached MaxStepCount gets ESLURM_STEP_LIMIT, and
// one that reached the special ids ESLURMD_TOOMANYSTEPS (an id srun asked
// for moves the next id past it), never a wrapped or special id.
func TestStepCreateIDLimits(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0+1)
	if m.Job(id).BatchHost == "" {
		t.Fatal("batch job not started")
	}
	for _, comp := range []uint32{NoVal, 0} {
		q := oneTaskStep(id, alice.UID)
		q.StepID.StepID, q.StepID.StepHetComp = msg.StepIDBatch, comp
		if _, _, err := m.CreateStep(q, alice, cl, t0+2); code(err) != slurmerr.ESLURM_DUPLICATE_STEP_ID {
			t.Errorf("batch step id (component %#x): %v", comp, err)
		}
	}

	m.cfg.MaxStepCount = 2
	for want := uint32(0); want < 2; want++ {
		g, _, err := m.CreateStep(oneTaskStep(id, alice.UID), alice, cl, t0+2)
		if err != nil || g.Resp.JobStepID != want {
			t.Fatalf("step %d: %v", want, err)
		}
	}
	if _, _, err := m.CreateStep(oneTaskStep(id, alice.UID), alice, cl, t0+2); code(err) != slurmerr.ESLURM_STEP_LIMIT {
		t.Fatalf("step past MaxStepCount: %v", err)
	}

	m.cfg.MaxStepCount = NoVal
	q := oneTaskStep(id, alice.UID)
	q.StepID.StepID = msg.StepIDMaxNormal - 1
	if g, _, err := m.CreateStep(q, alice, cl, t0+2); err != nil || g.Resp.JobStepID != msg.StepIDMaxNormal-1 {
		t.Fatalf("asked-for step id: %v", err)
	}
	for range 2 {
		if _, _, err := m.CreateStep(oneTaskStep(id, alice.UID), alice, cl, t0+2); code(err) != slurmerr.ESLURMD_TOOMANYSTEPS {
			t.Fatalf("step past the normal ids: %v", err)
		}
	}
}

// The batch step shows UNLIMITED, as build_batch_step packs it.
func TestBatchStepTimeLimit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TimeLimit = 30
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+1)
	info, _ := m.StepInfo(msg.StepID{JobID: id, StepID: msg.StepIDBatch, StepHetComp: NoVal}, cl, len(cl.Nodes), t0+2)
	if len(info.Steps) != 1 || info.Steps[0].TimeLimit != Infinite {
		t.Fatalf("batch step: %+v", info.Steps)
	}
}

// sbcast to a het step N.S goes to its first component's nodes
// (find_step_record), N.S+K to that component's.
func TestSbcastHetStep(t *testing.T) {
	m, _, _, id := hetStepJob(t)
	for _, tc := range []struct {
		comp uint32
		want string
	}{{NoVal, "n1"}, {0, "n1"}, {1, "n2"}} {
		g, err := m.SbcastCred(&msg.SelectedStep{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: tc.comp},
			ArrayTaskID: NoVal, HetJobOffset: NoVal}, alice, t0+2)
		if err != nil {
			t.Fatal(err)
		}
		if g.Resp.NodeList.Value != tc.want {
			t.Errorf("component %#x: nodes %q, want %s", tc.comp, g.Resp.NodeList.Value, tc.want)
		}
	}
}
