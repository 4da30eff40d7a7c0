package jobs

import (
	"context"
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// The launch message as real 22.05 slurmctld filled it in
// testsuite/captures/batch-launch-complete.pcap (sbatch -w n1 --wrap).
func TestBatchLaunchLikeCapture(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(root)
	d.ReqNodes = msg.Str("n1")
	d.StdIn = msg.Str("/dev/null")
	id := mustSubmit(t, m, cl, d, root, t0)
	ls := launches(mustSchedule(t, m, cl, t0))
	if len(ls) != 1 || ls[0].Node != "n1" {
		t.Fatalf("launches %+v", ls)
	}
	b := ls[0].Msg
	if b.JobID != id || b.Nodes != msg.Str("n1") || b.Partition != msg.Str("debug") || b.UserName.Valid || b.GIDs != nil ||
		b.ArrayJobID != 0 || b.ArrayTaskID != NoVal || b.CPUsPerTask != 1 || b.NTasks != 0 || b.JobCoreSpec != 0 ||
		len(b.CPUsPerNode) != 1 || b.CPUCountReps[0] != 1 || b.SelectJobinfo != msg.SelectConsTres ||
		b.Script.Value != "#!/bin/sh\necho hello\n" || len(b.Environment) != 2 || b.StdIn != msg.Str("/dev/null") {
		t.Fatalf("launch %+v", b)
	}
	c := b.Cred
	if c == nil || c.IsSigned() || c.Version != jobcred.Version2205 || c.Body.StepID.StepID != jobcred.StepBatch ||
		c.Body.StepHostlist.S != "n1" || c.Body.JobHostlist.S != "n1" || c.Body.PwName.S != "root" ||
		len(c.Body.SocketGroups) != 1 || c.Body.SocketGroups[0].SocketsPerNode != 16 || c.Body.JobCoreBitmap.Len() != 16 ||
		c.Body.JobCoreSpec != NoVal16 || c.Body.JobPartition.S != "debug" {
		t.Fatalf("cred %+v", c)
	}
	j := m.Job(id)
	if !j.Running() || j.BatchHost != "n1" || j.StartTime != t0 || j.EndTime != t0+365*24*3600 {
		t.Fatalf("job %+v", j)
	}
}

func TestCompletionStates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rc     uint32
		state  uint32
		reason uint16
	}{
		{"exit 0", 0, msg.JobComplete, ReasonNone},
		{"exit 1", 256, msg.JobFailed, ReasonExitCode},
		{"signal 9", 9, msg.JobFailed, ReasonLaunchFailed},
		{"oom", sigOOM, msg.JobOOM, ReasonOOM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
			mustSchedule(t, m, cl, t0)
			out, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, JobRC: tc.rc, NodeName: msg.Str("n1")}, root, cl, t0+5)
			if err != nil {
				t.Fatal(err)
			}
			j := m.Job(id)
			if j.Base() != tc.state || j.Reason != tc.reason || !j.IsCompleting() || j.ExitCode != tc.rc {
				t.Fatalf("state %#x reason %d exit %d", j.State, j.Reason, j.ExitCode)
			}
			nm, ok := out.Actions[0].(NodeMessage)
			if !ok || nm.MsgType != msgtype.REQUEST_TERMINATE_JOB || nm.Msg.(*msg.KillJob).JobState != j.State {
				t.Fatalf("actions %+v", out.Actions)
			}
			if _, err := m.EpilogComplete(id, "n1", root, t0+6); err != nil {
				t.Fatal(err)
			}
			if j.IsCompleting() || j.Base() != tc.state {
				t.Fatalf("after epilog %#x", j.State)
			}
		})
	}
}

func TestCompleteBatchChecks(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str("n1")}, alice, cl, t0); code(err) != slurmerr.ESLURM_USER_ID_MISSING {
		t.Fatalf("user: %v", err)
	}
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id + 9}, root, cl, t0); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("unknown: %v", err)
	}
	// Stale: another node.
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str("n3")}, root, cl, t0); err != nil || !m.Job(id).Running() {
		t.Fatalf("stale: %v", err)
	}
	// slurmd-side failure drains the node and requeues the job.
	out, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, SlurmRC: 4014, NodeName: msg.Str("n1")}, root, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if dn, ok := out.Actions[0].(DrainNode); !ok || dn.Node != "n1" || !m.Job(id).Pending() || m.Job(id).RestartCnt != 1 {
		t.Fatalf("%+v %#x", out.Actions, m.Job(id).State)
	}
}

func TestKill(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	kill := func(id uint32, c Caller, sig uint16) (Outcome, error) {
		return m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal},
			SJobID: msg.Str(itoa(id)), Signal: sig}, c, cl, t0+1)
	}
	run := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	d := batchDesc(alice)
	d.Priority = 0
	pend := mustSubmit(t, m, cl, d, alice, t0)

	if _, err := kill(run, bob, 9); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("bob: %v", err)
	}
	if _, err := kill(999, alice, 9); code(err) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := kill(pend, alice, 15); code(err) != slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE {
		t.Fatalf("pending SIGTERM: %v", err)
	}
	out, err := kill(run, alice, 10)
	if err != nil || out.Actions[0].(NodeMessage).MsgType != msgtype.REQUEST_SIGNAL_TASKS || !m.Job(run).Running() {
		t.Fatalf("signal: %v %+v", err, out.Actions)
	}
	if _, err := kill(pend, alice, 9); err != nil || m.Job(pend).Base() != msg.JobCancelled || m.Job(pend).IsCompleting() {
		t.Fatalf("pending cancel: %v %#x", err, m.Job(pend).State)
	}
	out, err = kill(run, root, 9)
	if err != nil || m.Job(run).State != msg.JobCancelled|msg.JobCompleting {
		t.Fatalf("running cancel: %v %#x", err, m.Job(run).State)
	}
	if nm := out.Actions[0].(NodeMessage); nm.MsgType != msgtype.REQUEST_TERMINATE_JOB || nm.Nodes[0] != "n1" {
		t.Fatalf("%+v", nm)
	}
	if _, err := kill(run, alice, 9); code(err) != slurmerr.ESLURM_ALREADY_DONE {
		t.Fatalf("again: %v", err)
	}
	// A late batch completion only records the exit code.
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: run, JobRC: 15, NodeName: msg.Str("n1")}, root, cl, t0+2); code(err) != slurmerr.ESLURM_ALREADY_DONE ||
		m.Job(run).Base() != msg.JobCancelled || m.Job(run).ExitCode != 15 {
		t.Fatal(err)
	}
}

func TestTimeLimit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TimeLimit = 2
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if out, _ := m.Tick(cl, t0+119); len(out.Actions) != 0 {
		t.Fatal("killed early")
	}
	out, err := m.Tick(cl, t0+120)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(id)
	if j.State != msg.JobTimeout|msg.JobCompleting || j.Reason != ReasonTimeLimit {
		t.Fatalf("%#x %d", j.State, j.Reason)
	}
	if nm := out.Actions[0].(NodeMessage); nm.MsgType != msgtype.REQUEST_KILL_TIMELIMIT {
		t.Fatalf("%+v", nm)
	}
	if logs := m.TakeLogs(); len(logs) != 1 || logs[0].Msg != fmt.Sprintf("Time limit exhausted for JobId=%d", id) {
		t.Errorf("logs %v", logs)
	}
	m.EpilogComplete(id, "n1", root, t0+150)
	if m.Tick(cl, t0+120+299); m.Job(id) == nil {
		t.Fatal("purged before MinJobAge")
	}
	if m.Tick(cl, t0+120+300); m.Job(id) != nil {
		t.Fatal("not purged after MinJobAge")
	}
}

func TestNodeDown(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.MinNodes = 2
	d.Requeue = 0
	failing := mustSubmit(t, m, cl, d, alice, t0)
	d = batchDesc(alice)
	d.MinNodes = 2
	d.Requeue = 1
	requeued := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if !m.Job(failing).Running() || !m.Job(requeued).Running() {
		t.Fatal("not started")
	}
	down1 := m.Job(failing).Nodes[0]
	if _, err := m.NodeDown(down1, cl, t0+5); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(failing); j.Base() != msg.JobNodeFail || j.Reason != ReasonNodeDown || len(j.Completing) != 1 {
		t.Fatalf("%#x %v", j.State, j.Completing)
	}
	down2 := m.Job(requeued).Nodes[0]
	m.NodeDown(down2, cl, t0+5)
	// As _job_requeue_op, the requeue leaves the reason alone (None);
	// batch_requeue_fini makes it submitted anew once its other node is
	// clean.
	j := m.Job(requeued)
	if !j.Pending() || j.RestartCnt != 1 || j.Reason != ReasonNone || !j.IsCompleting() {
		t.Fatalf("%#x", j.State)
	}
	m.EpilogComplete(requeued, j.Completing[0], root, t0+7)
	if j.IsCompleting() || j.SubmitTime != t0+7 || j.BeginTime != t0+7+credLifetime {
		t.Fatalf("%#x submit %d begin %d", j.State, j.SubmitTime, j.BeginTime)
	}
}

func TestAllocateAndSteps(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes, d.AllocRespPort, d.OtherPort = 2, 4000, 4001
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil || a.NodeCnt != 2 || a.NodeList != msg.Str("n[1-2]") || a.JobID == 0 {
		t.Fatalf("%v %+v", err, a)
	}
	// A second one does not fit (4 nodes, exclusive by default? no: cores) —
	// fill the cluster first to see a pending grant pushed later.
	d2 := msg.NewJobDesc()
	d2.MinNodes, d2.AllocRespPort, d2.Shared = 4, 5000, 0
	b, _, err := m.Allocate(d2, bob, cl, t0)
	if err != nil || b.NodeCnt != 0 {
		t.Fatalf("%v %+v", err, b)
	}
	d3 := msg.NewJobDesc()
	d3.MinNodes, d3.Immediate, d3.Shared = 4, 1, 0
	// The queued allocation comes first (_top_priority).
	if _, _, err := m.Allocate(d3, bob, cl, t0); code(err) != slurmerr.ESLURM_NOT_TOP_PRIORITY {
		t.Fatalf("immediate: %v", err)
	}

	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 2, NumTasks: 3, Host: msg.Str("login"), Port: 7000}, alice, cl, t0+1)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jobcred.NewHMACSigner(jobcred.HMACKey{ID: "k", Secret: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Sign(context.Background(), signer, unix(t0+1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.JobStepID != 0 || resp.Layout.NodeCnt() != 2 || len(resp.Layout.TIDs[0]) != 2 || len(resp.Layout.TIDs[1]) != 1 ||
		!resp.Cred.IsSigned() || resp.Cred.Body.StepHostlist.S != "n[1-2]" || resp.Cred.Body.StepID.StepID != 0 {
		t.Fatalf("%+v", resp)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: bob.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal}, MinNodes: 1}, bob, cl, t0); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("bob step: %v", err)
	}
	if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: a.JobID, StepID: 0, StepHetComp: NoVal}, RangeFirst: 0, RangeLast: 1}, alice, t0+2); err != nil || len(m.Job(a.JobID).Steps) != 0 {
		t.Fatalf("step complete: %v", err)
	}
	// salloc exits: the pending one is granted by the next pass, as a push.
	if _, err := m.CompleteAllocation(&msg.CompleteJobAllocationRequest{JobID: a.JobID}, alice, cl, t0+3); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2"} {
		m.EpilogComplete(a.JobID, n, root, t0+4)
	}
	acts := mustSchedule(t, m, cl, t0+5)
	var push *SrunMessage
	for _, x := range acts {
		if s, ok := x.(SrunMessage); ok && s.MsgType == msgtype.RESPONSE_RESOURCE_ALLOCATION {
			push = &s
		}
	}
	if push == nil || push.JobID != b.JobID || push.Port != 5000 || push.UID != bob.UID || push.Host != bob.Host ||
		push.Msg.(*msg.Allocation).NodeCnt != 4 {
		t.Fatalf("push %+v", acts)
	}
}

func TestWillRun(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.MinNodes = 4
	r, err := m.WillRun(d, alice, cl, t0)
	if err != nil || r.StartTime != t0 || r.NodeList != msg.Str("n[1-4]") || r.ProcCnt == 0 || m.Len() != 0 {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestInfo(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-3,8%2")
	id := mustSubmit(t, m, cl, d, alice, t0)
	ji := m.Info(m.Job(id), cl, 4, 0, t0)
	if ji.ArrayTaskStr != msg.Str("0x10F") || ji.ArrayMaxTasks != 2 || ji.ArrayJobID != id || ji.ArrayTaskID != NoVal ||
		ji.Partition != msg.Str("debug") || ji.TimeLimit != Infinite || ji.BatchFlag != 1 {
		t.Fatalf("%+v", ji)
	}
	mustSchedule(t, m, cl, t0)
	info, ok := m.JobInfoSingle(id, cl, 4, 0, t0)
	if !ok || len(info.Jobs) != 3 {
		t.Fatalf("%v %d records", ok, len(info.Jobs))
	}
	run := info.Jobs[1]
	if run.JobState != msg.JobRunning || run.ArrayTaskID != 0 || run.Nodes.Value == "" || run.NodeInx.Null {
		t.Fatalf("%+v", run)
	}
}

func itoa(v uint32) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
		if v == 0 {
			return string(b)
		}
	}
}

func TestRequeue(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	d := msg.NewJobDesc()
	d.MinNodes = 1
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: a.JobID}, alice, cl, t0); code(err) != slurmerr.ESLURM_BATCH_ONLY {
		t.Fatalf("interactive: %v", err)
	}
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, bob, cl, t0); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("bob: %v", err)
	}
	out, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, alice, cl, t0+10)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(id)
	if j.State != msg.JobPending|msg.JobCompleting || j.RestartCnt != 1 || j.BeginTime != 0 ||
		out.Actions[0].(NodeMessage).MsgType != msgtype.REQUEST_TERMINATE_JOB {
		t.Fatalf("%#x %+v", j.State, out.Actions)
	}
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id}, alice, cl, t0+10); code(err) != slurmerr.ESLURM_JOB_PENDING {
		t.Fatalf("again: %v", err)
	}
	// batch_requeue_fini: the begin time is pushed once the node is clean.
	m.EpilogComplete(id, "n1", root, t0+11)
	if j.IsCompleting() || len(j.Nodes) != 0 || j.BeginTime != t0+11+credLifetime {
		t.Fatalf("%#x %v begin %d", j.State, j.Nodes, j.BeginTime)
	}
	if ls := launches(mustSchedule(t, m, cl, t0+12)); len(ls) != 0 || j.Reason != ReasonBeginTime {
		t.Fatalf("started before the credential expired: %d, reason %d", len(ls), j.Reason)
	}
	if ls := launches(mustSchedule(t, m, cl, t0+11+credLifetime)); len(ls) != 1 || ls[0].Msg.RestartCnt != 1 {
		t.Fatal("not restarted")
	}
	// requeuehold
	if _, err := m.Requeue(&msg.JobRequeueRequest{JobID: id, Flags: msg.JobRequeueHold}, root, cl, t0+200); err != nil {
		t.Fatal(err)
	}
	// Real slurmctld: PENDING (no REQUEUE_HOLD flag), a user hold explained
	// by the state description.
	if j.Reason != ReasonHeldUser || j.Priority != 0 || j.State != msg.JobPending|msg.JobCompleting ||
		j.StateDesc != "job requeued in held state" {
		t.Fatalf("%#x reason %d", j.State, j.Reason)
	}
}

func TestStepInfoAndAllocInfo(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	b := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	d := msg.NewJobDesc()
	d.MinNodes, d.OtherPort, d.TimeLimit = 2, 4001, 1
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal}, MinNodes: 2, NumTasks: 2,
		Name: msg.Str("hostname"), Host: msg.Str("login")}, alice, cl, t0); err != nil {
		t.Fatal(err)
	}
	all, _ := m.StepInfo(msg.StepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal}, cl, 4, t0+5)
	if len(all.Steps) != 2 || all.Steps[0].StepID.StepID != msg.StepIDBatch || all.Steps[0].StepID.JobID != b ||
		all.Steps[1].Name != msg.Str("hostname") || all.Steps[1].Nodes != msg.Str("n[2-3]") || all.Steps[1].RunTime != 5 {
		t.Fatalf("%+v", all.Steps)
	}
	// Real 22.05 shows the batch step with CPUs=0 TRES=(null).
	if b := all.Steps[0]; b.NumCPUs != 0 || b.TresAllocStr.Valid || b.NumTasks != 1 {
		t.Errorf("batch step CPUs %d TRES %+v tasks %d, want 0, null, 1", b.NumCPUs, b.TresAllocStr, b.NumTasks)
	}
	if _, ok := m.StepInfo(msg.StepID{JobID: 999, StepID: NoVal}, cl, 4, t0); ok {
		t.Fatal("unknown job")
	}
	if ai, err := m.AllocationInfo(a.JobID, alice); err != nil || ai.NodeCnt != 2 {
		t.Fatalf("%v %+v", err, ai)
	}
	if _, err := m.AllocationInfo(a.JobID, bob); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatal(err)
	}
	// The interactive job's time limit: srun is told, the nodes get
	// REQUEST_KILL_TIMELIMIT.
	out, _ := m.Tick(cl, t0+60)
	var kinds []msgtype.Type
	for _, x := range out.Actions {
		switch x := x.(type) {
		case SrunMessage:
			kinds = append(kinds, x.MsgType)
		case NodeMessage:
			kinds = append(kinds, x.MsgType)
		}
	}
	if len(kinds) != 3 || kinds[0] != msgtype.SRUN_TIMEOUT || kinds[1] != msgtype.REQUEST_KILL_TIMELIMIT || kinds[2] != msgtype.SRUN_JOB_COMPLETE {
		t.Fatalf("%v", kinds)
	}
}

// The controller may run the passes itself: Snapshot, sched, ApplyPlan.
func TestSnapshotApplyPlan(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	big := batchDesc(alice)
	big.MinNodes, big.TimeLimit = 4, 10
	mustSubmit(t, m, cl, batchDesc(alice), alice, t0) // takes a core of n1
	mustSchedule(t, m, cl, t0)
	wide := mustSubmit(t, m, cl, big, alice, t0)
	small := batchDesc(bob)
	small.TimeLimit = 5
	fill := mustSubmit(t, m, cl, small, bob, t0)
	p := m.Snapshot(cl, t0+1)
	if len(p.Snapshot.Pending) != 2 || len(p.Snapshot.Running) != 1 {
		t.Fatalf("pending %d running %d", len(p.Snapshot.Pending), len(p.Snapshot.Running))
	}
	out, err := m.ApplyPlan(p, sched.Backfill(p.Snapshot), t0+1)
	if err != nil {
		t.Fatal(err)
	}
	// Memory is consumable and unset requests take whole nodes' memory:
	// the wide job waits for n1, the small one is backfilled elsewhere.
	ls := launches(out.Actions)
	if len(ls) != 1 || m.Job(wide).Reason != ReasonResources || !m.Job(fill).Running() || m.Job(fill).Nodes[0] == "n1" {
		t.Fatalf("launches %d wide %#x reason %d fill %#x", len(ls), m.Job(wide).State, m.Job(wide).Reason, m.Job(fill).State)
	}
}

// A job with --time-min that backfill starts runs with the time-min as its
// limit (sched.Start.TimeLimit), as backfill.c sets it: its end time and
// the limit the job shows follow.
func TestBackfillTimeMinSetsLimit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	first := batchDesc(alice)
	first.TimeLimit = 10 // holds a core of n1 for 10 minutes
	mustSubmit(t, m, cl, first, alice, t0)
	mustSchedule(t, m, cl, t0)
	big := batchDesc(alice)
	big.MinNodes, big.TimeLimit = 4, 10
	wide := mustSubmit(t, m, cl, big, alice, t0) // reserves all nodes at t0+600
	fill := batchDesc(bob)
	fill.TimeLimit, fill.TimeMin = 100, 5
	id := mustSubmit(t, m, cl, fill, bob, t0)
	p := m.Snapshot(cl, t0+1)
	if _, err := m.ApplyPlan(p, sched.Backfill(p.Snapshot), t0+1); err != nil {
		t.Fatal(err)
	}
	j := m.Job(id)
	if !j.Running() || m.Job(wide).Running() {
		t.Fatalf("fill running %v, wide running %v", j.Running(), m.Job(wide).Running())
	}
	if j.TimeLimit != 5 || j.EndTime != t0+1+5*60 {
		t.Errorf("TimeLimit %d EndTime %d, want 5 and %d", j.TimeLimit, j.EndTime, t0+1+5*60)
	}
}
