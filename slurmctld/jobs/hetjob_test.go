package jobs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func TestHetIDSet(t *testing.T) {
	for _, tc := range []struct {
		ids  []uint32
		want string
	}{
		{[]uint32{7}, "7"},
		{[]uint32{7, 8}, "7-8"},
		{[]uint32{7, 8, 9, 12}, "7-9,12"},
		{[]uint32{7, 9}, "7,9"},
	} {
		if got := hetIDSet(tc.ids); got != tc.want {
			t.Errorf("hetIDSet(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}

func TestExcludeHetNodes(t *testing.T) {
	descs := []msg.JobDesc{{ReqNodes: msg.Str("n1")}, {ReqNodes: msg.Str("n2"), ExcNodes: msg.Str("n4")}, {}}
	excludeHetNodes(descs)
	var got []string
	for _, d := range descs {
		got = append(got, strOf(d.ExcNodes))
	}
	if want := []string{"n2", "n4,n1", "n1,n2"}; !slices.Equal(got, want) {
		t.Errorf("exc nodes %q, want %q", got, want)
	}
}

func TestHetComponentScript(t *testing.T) {
	s := "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n2\n# note\necho hi\n"
	for _, tc := range []struct {
		off  uint32
		want string
	}{
		{0, "#!/bin/sh\n#SBATCH -n1\necho hi\n"},
		{1, "#!/bin/sh\n#SBATCH -n2\n# note\nexit 0\n"},
	} {
		if got := hetComponentScript(s, tc.off); got != tc.want {
			t.Errorf("offset %d: %q, want %q", tc.off, got, tc.want)
		}
	}
}

func TestBlockTasks(t *testing.T) {
	for _, tc := range []struct {
		cpus  []uint32
		tasks uint32
		cpt   uint16
		want  []uint32
	}{
		{[]uint32{2}, 2, NoVal16, []uint32{2}},
		{[]uint32{4, 4}, 2, NoVal16, []uint32{1, 1}},
		{[]uint32{4, 4}, 6, NoVal16, []uint32{4, 2}},
		{[]uint32{4, 4}, NoVal, 2, []uint32{2, 2}},
		{[]uint32{1, 1}, 5, NoVal16, []uint32{3, 2}},
	} {
		j := &Job{NodeCPUs: tc.cpus, NumTasks: tc.tasks, CPUsPerTask: tc.cpt}
		if got := blockTasks(j); !slices.Equal(got, tc.want) {
			t.Errorf("blockTasks(%v, n=%d, c=%d) = %v, want %v", tc.cpus, tc.tasks, tc.cpt, got, tc.want)
		}
	}
}

func hetDescs(c Caller, n int) []msg.JobDesc {
	var out []msg.JobDesc
	for i := 0; i < n; i++ {
		d := batchDesc(c)
		d.NumTasks = 1
		out = append(out, *d)
	}
	return out
}

func bfCluster() *Cluster {
	cl := testCluster()
	cl.Config.Backfill = true
	return cl
}

func TestSubmitHet(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r.JobID != 1 {
		t.Fatalf("leader %d, want 1", r.JobID)
	}
	for i, id := range []uint32{1, 2} {
		j := m.Job(id)
		if j.HetJobID != 1 || j.HetJobOffset != uint32(i) || j.HetJobIDSet != "1-2" || !j.Batch {
			t.Errorf("job %d: het %d+%d set %q batch %v", id, j.HetJobID, j.HetJobOffset, j.HetJobIDSet, j.Batch)
		}
	}
	if got := m.Job(1).HetComps; !slices.Equal(got, []uint32{1, 2}) {
		t.Errorf("leader's components %v", got)
	}
	info, ok := m.JobInfoSingle(1, cl, len(cl.Nodes), 0, t0)
	if !ok || len(info.Jobs) != 2 || info.Jobs[1].HetJobOffset != 1 || info.Jobs[1].HetJobIDSet.Value != "1-2" {
		t.Errorf("job info of the leader: %+v", info)
	}
	if info, _ := m.JobInfoSingle(2, cl, len(cl.Nodes), 0, t0); len(info.Jobs) != 1 {
		t.Errorf("job info of a component: %d records", len(info.Jobs))
	}
}

func TestSubmitHetRefused(t *testing.T) {
	t.Run("no backfill", func(t *testing.T) {
		m := newTestManager(nil)
		cl := testCluster()
		cl.Config.Backfill = false
		_, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
		if code(err) != slurmerr.ESLURM_NOT_SUPPORTED {
			t.Errorf("err %v, want ESLURM_NOT_SUPPORTED", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		m := newTestManager(nil)
		if _, _, err := m.SubmitHet(nil, alice, bfCluster(), t0); code(err) != slurmerr.SLURM_ERROR {
			t.Errorf("err %v, want SLURM_ERROR", err)
		}
	})
	t.Run("bad second partition cancels the leader", func(t *testing.T) {
		m := newTestManager(nil)
		descs := hetDescs(alice, 2)
		descs[1].Partition = msg.Str("nosuch")
		_, _, err := m.SubmitHet(descs, alice, bfCluster(), t0)
		if code(err) != slurmerr.ESLURM_INVALID_PARTITION_NAME {
			t.Fatalf("err %v, want ESLURM_INVALID_PARTITION_NAME", err)
		}
		j := m.Job(1)
		if j == nil || j.Base() != msg.JobCancelled || j.ExitCode != 1 || j.HetJobIDSet != "1" {
			t.Fatalf("leader after the refusal: %+v", j)
		}
		if m.Job(2) != nil {
			t.Error("a second record exists")
		}
	})
	t.Run("array in an allocation", func(t *testing.T) {
		m := newTestManager(nil)
		descs := hetDescs(alice, 2)
		descs[0].ArrayInx = msg.Str("1-2")
		if _, _, err := m.AllocateHet(descs, alice, bfCluster(), t0); code(err) != slurmerr.ESLURM_INVALID_ARRAY {
			t.Errorf("err %v, want ESLURM_INVALID_ARRAY", err)
		}
	})
}

func TestHetStartsTogether(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	// A job holding n2 whole keeps the second component from starting.
	blocker := batchDesc(alice)
	blocker.ReqNodes = msg.Str("n2")
	blocker.Shared = 0
	bid := mustSubmit(t, m, cl, blocker, alice, t0)
	mustSchedule(t, m, cl, t0)
	if !m.Job(bid).Running() {
		t.Fatal("blocker not running")
	}
	descs := hetDescs(alice, 2)
	descs[0].ReqNodes = msg.Str("n1")
	descs[1].ReqNodes = msg.Str("n2")
	r, _, err := m.SubmitHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	l := r.JobID
	// The main pass never starts a het job, backfill not while a part
	// cannot start.
	for _, bf := range []bool{false, true} {
		out, err := m.Schedule(cl, t0+1, bf)
		if err != nil {
			t.Fatal(err)
		}
		if m.Job(l).Running() || m.Job(l+1).Running() || len(launches(out.Actions)) != 0 {
			t.Fatalf("backfill=%v: a component started alone", bf)
		}
	}
	finishJob(t, m, cl, bid, 0, t0+2)
	out, err := m.Schedule(cl, t0+3, true)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Job(l).Running() || !m.Job(l+1).Running() {
		t.Fatal("the het job did not start whole")
	}
	ls := launches(out.Actions)
	if len(ls) != 1 || ls[0].JobID != l || ls[0].Msg.HetJobID != l {
		t.Fatalf("launches %+v, want the leader's alone", ls)
	}
	env := strings.Join(nsStrings(ls[0].Msg.Environment), "\n")
	for _, want := range []string{"SLURM_HET_SIZE=2", "SLURM_JOB_NODELIST_HET_GROUP_1=n2", "SLURM_JOB_ID_HET_GROUP_0=2",
		"SLURM_JOB_ID_PACK_GROUP_1=3", "SLURM_TASKS_PER_NODE_HET_GROUP_1=1"} {
		if !strings.Contains(env+"\n", want+"\n") {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	// The end of the leader's script ends every component.
	finishJob(t, m, cl, l, 3<<8, t0+4)
	for _, id := range []uint32{l, l + 1} {
		if j := m.Job(id); j.Base() != msg.JobFailed || j.ExitCode != 3<<8 {
			t.Errorf("job %d: state %d exit %d", id, j.Base(), j.ExitCode)
		}
	}
}

func TestHetKill(t *testing.T) {
	kill := func(m *Manager, cl *Cluster, s string) error {
		_, err := m.Kill(&msg.JobStepKillRequest{SJobID: msg.Str(s), StepID: msg.StepID{StepID: NoVal, StepHetComp: NoVal},
			Signal: sigKill}, alice, cl, t0+1)
		return err
	}
	for _, tc := range []struct {
		req       string
		wantErr   int
		cancelled []uint32
	}{
		{"1+1", slurmerr.ESLURM_NOT_WHOLE_HET_JOB, nil},
		{"2", slurmerr.ESLURM_NOT_WHOLE_HET_JOB, nil},
		{"1+2", slurmerr.ESLURM_INVALID_JOB_ID, nil},
		{"1", 0, []uint32{1, 2}},
		{"1+0", 0, []uint32{1, 2}},
	} {
		m := newTestManager(nil)
		cl := bfCluster()
		if _, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0); err != nil {
			t.Fatal(err)
		}
		if err := kill(m, cl, tc.req); code(err) != tc.wantErr {
			t.Errorf("scancel %s: %v, want code %d", tc.req, err, tc.wantErr)
		}
		var got []uint32
		for _, id := range []uint32{1, 2} {
			if m.Job(id).Base() == msg.JobCancelled {
				got = append(got, id)
			}
		}
		if !slices.Equal(got, tc.cancelled) {
			t.Errorf("scancel %s cancelled %v, want %v", tc.req, got, tc.cancelled)
		}
	}
}

func TestAllocateHetGrant(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	descs := hetDescs(alice, 2)
	for i := range descs {
		descs[i].Script = msg.NullString{}
		descs[i].AllocRespPort = 4242
	}
	resp, _, err := m.AllocateHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Jobs) != 2 || resp.Jobs[0].NodeCnt != 0 {
		t.Fatalf("reply %+v", resp)
	}
	out, err := m.Schedule(cl, t0+1, true)
	if err != nil {
		t.Fatal(err)
	}
	var grants []SrunMessage
	for _, a := range out.Actions {
		if s, ok := a.(SrunMessage); ok {
			grants = append(grants, s)
		}
	}
	if len(grants) != 1 || grants[0].MsgType != msgtype.RESPONSE_HET_JOB_ALLOCATION || grants[0].JobID != resp.Jobs[0].JobID {
		t.Fatalf("grants %+v", grants)
	}
	if h := grants[0].Msg.(*msg.HetAllocation); len(h.Jobs) != 2 || h.Jobs[1].NodeCnt != 1 {
		t.Errorf("grant %+v", h)
	}
	// salloc's exit ends both.
	if _, err := m.CompleteAllocation(&msg.CompleteJobAllocationRequest{JobID: resp.Jobs[0].JobID}, alice, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	for _, a := range resp.Jobs {
		if !m.Job(a.JobID).Finished() {
			t.Errorf("job %d still %d", a.JobID, m.Job(a.JobID).Base())
		}
	}
}

func TestHetStepIDs(t *testing.T) {
	m := newTestManager(nil)
	l := &Job{ID: 10, HetJobID: 10, HetComps: []uint32{10, 11}, NextStepID: 3}
	c := &Job{ID: 11, HetJobID: 10, HetJobOffset: 1}
	m.insert(l)
	m.insert(c)
	req := func(id uint32) *msg.StepCreateRequest {
		return &msg.StepCreateRequest{StepID: msg.StepID{StepID: id, StepHetComp: NoVal}}
	}
	// A component's own step takes the leader's next id.
	if id := m.newStepID(c, req(NoVal), t0); id != 3 || l.NextStepID != 4 || c.NextStepID != 3 {
		t.Fatalf("component step %d; next ids %d %d", id, l.NextStepID, c.NextStepID)
	}
	// srun --het-group asks for the id the first component got.
	if id := m.newStepID(l, req(4), t0); id != 4 || l.NextStepID != 5 {
		t.Fatalf("asked-for step %d; next %d", id, l.NextStepID)
	}
	l.Steps = append(l.Steps, &Step{ID: 4})
	if err := duplicateStep(l, req(4)); code(err) != slurmerr.ESLURM_DUPLICATE_STEP_ID {
		t.Errorf("duplicate step id: %v", err)
	}
	if id := m.newStepID(l, req(NoVal), t0); id != 5 {
		t.Errorf("leader's own step %d, want 5", id)
	}
}

func TestHetSbcastNodes(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	descs := hetDescs(alice, 2)
	descs[0].ReqNodes, descs[1].ReqNodes = msg.Str("n3"), msg.Str("n1")
	r, _, err := m.SubmitHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	for _, tc := range []struct {
		off  uint32
		want string
		job  uint32
	}{
		{NoVal, "n[1,3]", r.JobID},
		{1, "n1", r.JobID + 1},
	} {
		g, err := m.SbcastCred(&msg.SelectedStep{StepID: msg.StepID{JobID: r.JobID, StepID: NoVal, StepHetComp: NoVal},
			ArrayTaskID: NoVal, HetJobOffset: tc.off}, alice, t0+2)
		if err != nil {
			t.Fatalf("offset %d: %v", tc.off, err)
		}
		if g.Resp.NodeList.Value != tc.want || g.Resp.JobID != tc.job {
			t.Errorf("offset %d: job %d nodes %q, want %d %q", tc.off, g.Resp.JobID, g.Resp.NodeList.Value, tc.job, tc.want)
		}
	}
}

func mustScheduleBF(t *testing.T, m *Manager, cl *Cluster, now int64) {
	t.Helper()
	if _, err := m.Schedule(cl, now, true); err != nil {
		t.Fatal(err)
	}
}

func TestHetPurgedTogether(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	// The second component ends first (scancel <N+1>), the leader later.
	if _, err := m.Kill(&msg.JobStepKillRequest{SJobID: msg.Str(fmt.Sprint(r.JobID + 1)),
		StepID: msg.StepID{StepID: NoVal, StepHetComp: NoVal}, Signal: sigKill}, alice, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Job(r.JobID + 1).Completing {
		if _, err := m.EpilogComplete(r.JobID+1, n, root, t0+2); err != nil {
			t.Fatal(err)
		}
	}
	// The leader's completion answers for the component too: already
	// done, as job_complete's last error.
	l := m.Job(r.JobID)
	_, err = m.CompleteBatch(&msg.CompleteBatchScript{JobID: l.ID, NodeName: msg.Str(l.BatchHost)}, root, cl, t0+100)
	if code(err) != slurmerr.ESLURM_ALREADY_DONE {
		t.Fatalf("completion: %v", err)
	}
	for _, n := range append([]string(nil), l.Completing...) {
		if _, err := m.EpilogComplete(l.ID, n, root, t0+100); err != nil {
			t.Fatal(err)
		}
	}
	// MinJobAge (300 s) after the component's end, not the leader's.
	if _, err := m.Tick(cl, t0+350); err != nil {
		t.Fatal(err)
	}
	if m.Job(r.JobID+1) == nil || m.Job(r.JobID) == nil {
		t.Fatal("a record left before the whole het job was old")
	}
	if _, err := m.Tick(cl, t0+400); err != nil {
		t.Fatal(err)
	}
	if m.Job(r.JobID+1) != nil || m.Job(r.JobID) != nil {
		t.Fatal("records left behind")
	}
}

func TestHetNodeDown(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	descs := hetDescs(alice, 2)
	descs[0].ReqNodes, descs[1].ReqNodes = msg.Str("n1"), msg.Str("n2")
	for i := range descs {
		descs[i].Requeue = 0
	}
	r, _, err := m.SubmitHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	if _, err := m.NodeDown("n2", cl, t0+2); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{r.JobID, r.JobID + 1} {
		if j := m.Job(id); j.Base() != msg.JobNodeFail {
			t.Errorf("job %d: state %d, want NODE_FAIL", id, j.Base())
		}
	}
}

func TestHetSuspend(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	suspend := func(id uint32) error {
		_, _, err := m.Suspend(&msg.SuspendRequest{Op: msg.SuspendJob, JobID: id}, root, cl, t0+2)
		return err
	}
	if err := suspend(r.JobID + 1); code(err) != slurmerr.ESLURM_NOT_WHOLE_HET_JOB {
		t.Errorf("suspend of a component: %v", err)
	}
	if err := suspend(r.JobID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{r.JobID, r.JobID + 1} {
		if m.Job(id).Base() != msg.JobSuspended {
			t.Errorf("job %d not suspended", id)
		}
	}
}

func TestHetRequeue(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	requeue := func(id uint32) error {
		_, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, alice, cl, t0+2)
		return err
	}
	if err := requeue(r.JobID + 1); code(err) != slurmerr.ESLURM_NOT_HET_JOB_LEADER {
		t.Errorf("requeue of a component: %v", err)
	}
	if err := requeue(r.JobID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{r.JobID, r.JobID + 1} {
		if j := m.Job(id); j.State&msg.JobRequeue == 0 && !j.Pending() {
			t.Errorf("job %d not requeued: state %#x", id, j.State)
		}
	}
}

// TestHetPrologSlurmctld: with PrologSlurmctld the leader's script is
// launched once, when the last component's prolog ends.
func TestHetPrologSlurmctld(t *testing.T) {
	m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog"})
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Schedule(cl, t0+1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(launches(out.Actions)) != 0 {
		t.Fatal("launched before the prologs ended")
	}
	for k, id := range []uint32{r.JobID + 1, r.JobID} {
		out, err := m.PrologDone(id, 0, false, cl, t0+2)
		if err != nil {
			t.Fatal(err)
		}
		ls := launches(out.Actions)
		switch {
		case k == 0 && len(ls) != 0:
			t.Fatalf("launched with the leader's prolog running: %+v", ls)
		case k == 1 && (len(ls) != 1 || ls[0].JobID != r.JobID):
			t.Fatalf("launches %+v, want the leader's", ls)
		}
	}
}

func TestHetLaunchFailed(t *testing.T) {
	m := newTestManager(nil)
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	if _, err := m.LaunchFailed(r.JobID, slurmerr.ESLURMD_CREDENTIAL_REVOKED, cl, t0+2); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{r.JobID, r.JobID + 1} {
		if j := m.Job(id); j.Base() != msg.JobFailed || j.Reason != ReasonLaunchFailed {
			t.Errorf("job %d: state %d reason %d", id, j.Base(), j.Reason)
		}
	}
}

func TestHetKillWholeHetJob(t *testing.T) {
	m := newTestManager(nil)
	m.cfg.WholeHetJob = true
	cl := bfCluster()
	r, _, err := m.SubmitHet(hetDescs(alice, 2), alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Kill(&msg.JobStepKillRequest{SJobID: msg.Str(fmt.Sprint(r.JobID + 1)),
		StepID: msg.StepID{StepID: NoVal, StepHetComp: NoVal}, Signal: sigKill}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{r.JobID, r.JobID + 1} {
		if m.Job(id).Base() != msg.JobCancelled {
			t.Errorf("job %d not cancelled", id)
		}
	}
}

// scontrol requeue of a het job whose second component is --no-requeue
// requeues the first as _job_requeue does (each component on its own, the
// last refusal answered): its nodes are told to kill it and the change is
// journaled, not left half done.
func TestHetRequeueComponentRefused(t *testing.T) {
	m := newTestManager(&MemJournal{})
	cl := bfCluster()
	descs := hetDescs(alice, 2)
	descs[0].Requeue, descs[1].Requeue = 1, 0
	r, _, err := m.SubmitHet(descs, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustScheduleBF(t, m, cl, t0+1)
	out, err := m.Requeue(&msg.JobRequeueRequest{JobID: r.JobID}, alice, cl, t0+2)
	if slurmerr.Code(err) != slurmerr.ESLURM_DISABLED {
		t.Errorf("requeue: %v, want ESLURM_DISABLED", err)
	}
	if len(out.Actions) != 1 || len(m.pending) != 0 {
		t.Errorf("%d actions, %d records unjournaled; want the leader's kill, none", len(out.Actions), len(m.pending))
	}
	if l := m.Job(r.JobID); !l.Pending() || !l.IsCompleting() {
		t.Errorf("leader state %#x, want PENDING+COMPLETING", l.State)
	}
	if c := m.Job(r.JobID + 1); !c.Running() {
		t.Errorf("--no-requeue component state %#x, want RUNNING", c.State)
	}
}
