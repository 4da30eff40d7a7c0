package jobs

import (
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

func ae(code uint32, id string) msg.JobArrayError {
	return msg.JobArrayError{ErrorCode: code, JobArrayID: msg.Str(id)}
}

func suspendReq(op uint16, s string) *msg.SuspendRequest {
	return &msg.SuspendRequest{Op: op, JobID: NoVal, JobIDStr: msg.Str(s)}
}

// suspendInts returns the REQUEST_SUSPEND_INT messages of acts.
func suspendInts(acts []Action) []NodeMessage {
	var out []NodeMessage
	for _, a := range acts {
		if nm, ok := a.(NodeMessage); ok && nm.MsgType == msgtype.REQUEST_SUSPEND_INT {
			out = append(out, nm)
		}
	}
	return out
}

// runningPair: a running job of alice and a pending one (held).
func runningPair(t *testing.T) (*Manager, *Cluster, uint32, uint32) {
	t.Helper()
	cl := testCluster()
	m := newTestManager(nil)
	run := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	d := batchDesc(alice)
	d.Priority = 0
	pend := mustSubmit(t, m, cl, d, alice, t0)
	if !m.Job(run).Running() || !m.Job(pend).Pending() {
		t.Fatal("setup")
	}
	return m, cl, run, pend
}

// The refusals of job_suspend / job_suspend2, as real slurmctld answers
// them (checked against it by testsuite/interop's TestSlurmctldSuspendErrors).
func TestSuspendRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caller  Caller
		op      uint16
		id      func(run, pend uint32) *msg.SuspendRequest
		code    int
		noReply bool
		array   []msg.JobArrayError
	}{
		{name: "unknown job", caller: root, op: msg.SuspendJob,
			id: func(_, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, "999") }, noReply: true},
		{name: "unknown job, numeric", caller: root,
			id: func(_, _ uint32) *msg.SuspendRequest { return &msg.SuspendRequest{Op: msg.ResumeJob, JobID: 999} }, noReply: true},
		{name: "unknown job, ordinary user", caller: bob,
			id: func(_, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, "999") }, noReply: true},
		{name: "owner is not enough", caller: alice,
			id:   func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(r)) },
			code: slurmerr.ESLURM_ACCESS_DENIED},
		{name: "owner is not enough, numeric", caller: alice,
			id:   func(r, _ uint32) *msg.SuspendRequest { return &msg.SuspendRequest{Op: msg.SuspendJob, JobID: r} },
			code: slurmerr.ESLURM_ACCESS_DENIED},
		{name: "pending", caller: root,
			id:   func(_, p uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(p)) },
			code: slurmerr.ESLURM_JOB_PENDING},
		{name: "resume a running job", caller: root,
			id:   func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.ResumeJob, itoa(r)) },
			code: slurmerr.ESLURM_JOB_NOT_SUSPENDED},
		{name: "het component", caller: root,
			id:   func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(r)+"+0") },
			code: slurmerr.ESLURM_NOT_WHOLE_HET_JOB},
		{name: "trailing junk", caller: root,
			id:   func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(r)+"x") },
			code: slurmerr.ESLURM_INVALID_JOB_ID},
		{name: "bad task list", caller: root,
			id:   func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(r)+"_x") },
			code: slurmerr.ESLURM_INVALID_JOB_ID},
		{name: "task of a plain job", caller: root,
			id:    func(r, _ uint32) *msg.SuspendRequest { return suspendReq(msg.SuspendJob, itoa(r)+"_3") },
			array: []msg.JobArrayError{{ErrorCode: slurmerr.ESLURM_INVALID_JOB_ID, JobArrayID: msg.Str("1_3")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, run, pend := runningPair(t)
			before := tableJSON(t, m)
			rep, out, err := m.Suspend(tc.id(run, pend), tc.caller, cl, t0+10)
			if code(err) != tc.code || rep.NoReply != tc.noReply {
				t.Fatalf("err %v (%d), no reply %v; want %d, %v", err, code(err), rep.NoReply, tc.code, tc.noReply)
			}
			if tc.array == nil && rep.Array != nil || tc.array != nil && (rep.Array == nil || !reflect.DeepEqual(rep.Array.Errors, tc.array)) {
				t.Fatalf("array reply %+v, want %+v", rep.Array, tc.array)
			}
			if len(suspendInts(out.Actions)) != 0 {
				t.Fatalf("actions %+v", out.Actions)
			}
			if after := tableJSON(t, m); after != before {
				t.Fatalf("a refused request changed the table\n%s\n%s", before, after)
			}
		})
	}
}

// Suspend and resume: state, priority, REQUEST_SUSPEND_INT to the job's
// nodes, and the time limit charged only for the time the job ran.
func TestSuspendResumeTimeLimit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TimeLimit = 10
	d.MinNodes, d.MaxNodes = 2, 2
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if !j.Running() || j.EndTime != t0+600 || len(j.Nodes) != 2 {
		t.Fatalf("setup %+v", j)
	}
	prio := j.Priority
	step := func(now int64, op uint16, state uint32, pre, end int64) {
		t.Helper()
		rep, out, err := m.Suspend(suspendReq(op, itoa(id)), root, cl, now)
		if err != nil || rep.NoReply || rep.Array != nil {
			t.Fatalf("op %d: %v %+v", op, err, rep)
		}
		if j.State != state || j.PreSusTime != pre || j.EndTime != end || j.SuspendTime != now {
			t.Fatalf("op %d at +%d: state %d pre %d end +%d suspend +%d", op, now-t0, j.State, j.PreSusTime,
				j.EndTime-t0, j.SuspendTime-t0)
		}
		nms := suspendInts(out.Actions)
		want := &msg.SuspendInt{IndfSusp: 1, JobCoreSpec: j.CoreSpec, JobID: id, Op: op}
		if len(nms) != 1 || !reflect.DeepEqual(nms[0].Nodes, j.Nodes) || !reflect.DeepEqual(nms[0].Msg, want) {
			t.Fatalf("op %d: actions %+v", op, out.Actions)
		}
	}
	tick := func(now int64) {
		t.Helper()
		if _, err := m.Tick(cl, now); err != nil {
			t.Fatal(err)
		}
	}
	step(t0+100, msg.SuspendJob, msg.JobSuspended, 100, t0+600)
	if j.Priority != 0 {
		t.Fatalf("suspended priority %d", j.Priority)
	}
	// Suspended past its end time: not killed.
	tick(t0 + 5000)
	if j.Base() != msg.JobSuspended {
		t.Fatalf("suspended job timed out: %#x", j.State)
	}
	// Suspended again: a no-op for the nodes and the times.
	rep, out, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(id)), root, cl, t0+5001)
	if err != nil || rep.NoReply || len(out.Actions) != 0 || j.SuspendTime != t0+100 {
		t.Fatalf("re-suspend: %v %+v %+v", err, rep, j)
	}
	// 100 s used: 500 s left from the resume.
	step(t0+6000, msg.ResumeJob, msg.JobRunning, 100, t0+6500)
	// A new priority, as set_job_prio gives it (real 22.05 too: a
	// lower one than at submission with priority/basic).
	if j.Priority == 0 || j.Priority > prio {
		t.Fatalf("resumed priority %d, was %d", j.Priority, prio)
	}
	// Another 200 s, suspended, resumed: 300 s used, 300 s left.
	step(t0+6200, msg.SuspendJob, msg.JobSuspended, 300, t0+6500)
	step(t0+9000, msg.ResumeJob, msg.JobRunning, 300, t0+9300)
	tick(t0 + 9299)
	if j.Base() != msg.JobRunning {
		t.Fatalf("killed early: %#x", j.State)
	}
	tick(t0 + 9300)
	if j.Base() != msg.JobTimeout {
		t.Fatalf("not timed out: %#x", j.State)
	}
	if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(id)), root, cl, t0+9301); code(err) != slurmerr.ESLURM_ALREADY_DONE {
		t.Fatalf("suspend of a finished job: %v", err)
	}
}

// A suspended job gives its cores back but keeps its memory, as
// cons_tres's job_res_rm_job with the "resume" action: its node is no
// longer running it, another job may start on those cores, and resuming
// counts the cores again (once, however many jobs hold them).
func TestSuspendReleasesCores(t *testing.T) {
	for _, tc := range []struct {
		name      string
		memory    bool   // CR_Core_Memory
		mem       uint64 // --mem of both jobs (MB), 0 for none
		thirdRuns bool   // the waiting job starts on the suspended job's cores
		heldMem   uint64 // memory the suspended job still holds on its node
	}{
		{"cores only", false, 0, true, 0},
		{"memory left for another", true, 1024, true, 1024},
		{"memory all held", true, 4096, false, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			cl.Config.MemoryConsumable = tc.memory
			m := newTestManager(nil)
			desc := func() *msg.JobDesc {
				d := batchDesc(alice)
				d.MinNodes, d.MaxNodes, d.NumTasks = 1, 1, 16 // a whole node's cores
				d.ReqNodes = msg.Str("n1")
				if tc.mem != 0 {
					d.PnMinMemory = tc.mem
				}
				return d
			}
			first := mustSubmit(t, m, cl, desc(), alice, t0)
			mustSchedule(t, m, cl, t0)
			second := mustSubmit(t, m, cl, desc(), alice, t0+1)
			mustSchedule(t, m, cl, t0+1)
			if !m.Job(first).Running() || !m.Job(second).Pending() {
				t.Fatal("setup: the second job should wait for n1")
			}
			if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(first)), root, cl, t0+2); err != nil {
				t.Fatal(err)
			}
			u := m.NodeUsage(len(cl.Nodes))[0]
			if want := (Usage{MemMB: tc.heldMem}); u != want {
				t.Fatalf("n1 with the job suspended: %+v, want %+v", u, want)
			}
			mustSchedule(t, m, cl, t0+3)
			if got := m.Job(second).Running(); got != tc.thirdRuns {
				t.Fatalf("waiting job started: %v, want %v", got, tc.thirdRuns)
			}
			if _, _, err := m.Suspend(suspendReq(msg.ResumeJob, itoa(first)), root, cl, t0+4); err != nil {
				t.Fatal(err)
			}
			u = m.NodeUsage(len(cl.Nodes))[0]
			runs := 1
			if tc.thirdRuns {
				runs = 2
			}
			// The cores are held twice now; node info counts them once.
			if u.RunJobs != runs || u.CPUs != 16 {
				t.Fatalf("n1 with the job resumed: %+v", u)
			}
		})
	}
}

// A suspended job that is cancelled ends at its suspend time (RunTime is
// what it ran before), and while it completes its node holds its memory
// but none of its cores.
func TestCancelSuspended(t *testing.T) {
	m, cl, run, _ := runningPair(t)
	if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(run)), root, cl, t0+100); err != nil {
		t.Fatal(err)
	}
	kill := &msg.JobStepKillRequest{StepID: msg.StepID{JobID: run, StepID: NoVal, StepHetComp: NoVal}, Signal: sigKill}
	if _, err := m.Kill(kill, root, cl, t0+700); err != nil {
		t.Fatal(err)
	}
	j := m.Job(run)
	if j.Base() != msg.JobCancelled || !j.IsCompleting() || j.EndTime != t0+100 || j.SuspendTime != t0+100 || j.PreSusTime != 100 {
		t.Fatalf("cancelled: state %#x end %d suspend %d presus %d", j.State, j.EndTime-t0, j.SuspendTime-t0, j.PreSusTime)
	}
	i := j.NodeIdx[0]
	if u := m.NodeUsage(len(cl.Nodes))[i]; u.CPUs != 0 || u.RunJobs != 0 || u.CompletingJobs != 1 || u.MemMB != j.NodeMem[0] {
		t.Fatalf("node of the cancelled job: %+v", u)
	}
	// A job that ran to the end, resumed before, ends when it ends.
	m, cl, run, _ = runningPair(t)
	for k, op := range []uint16{msg.SuspendJob, msg.ResumeJob} {
		if _, _, err := m.Suspend(suspendReq(op, itoa(run)), root, cl, t0+100+int64(k)*50); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Kill(kill, root, cl, t0+700); err != nil {
		t.Fatal(err)
	}
	j = m.Job(run)
	if j.EndTime != t0+700 {
		t.Fatalf("end of a resumed job: %d", j.EndTime-t0)
	}
	if u := m.NodeUsage(len(cl.Nodes))[j.NodeIdx[0]]; u.CPUs == 0 || u.CompletingJobs != 1 {
		t.Fatalf("node of the resumed, cancelled job: %+v", u)
	}
}

// A DOWN node keeps a suspended job from resuming (SLURM_ERROR).
func TestResumeOnDownNode(t *testing.T) {
	m, cl, run, _ := runningPair(t)
	if _, _, err := m.Suspend(suspendReq(msg.SuspendJob, itoa(run)), root, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	cl.Nodes[m.Job(run).NodeIdx[0]].State |= sched.NodeDown | sched.NodeDownBase
	if _, _, err := m.Suspend(suspendReq(msg.ResumeJob, itoa(run)), root, cl, t0+2); code(err) != slurmerr.SLURM_ERROR {
		t.Fatalf("resume on a down node: %v", err)
	}
	if m.Job(run).Base() != msg.JobSuspended {
		t.Fatal("resumed")
	}
}

// Interactive allocations hear of it (SRUN_REQUEST_SUSPEND), whatever the
// outcome.
func TestSuspendNotifiesSalloc(t *testing.T) {
	m, cl, run, _ := runningPair(t)
	j := m.Job(run)
	j.Batch, j.RespHost, j.OtherPort = false, "10.0.0.2", 4321
	_, out, err := m.Suspend(&msg.SuspendRequest{Op: msg.ResumeJob, JobID: run}, root, cl, t0+1)
	if code(err) != slurmerr.ESLURM_JOB_NOT_SUSPENDED || len(out.Actions) != 1 {
		t.Fatalf("%v %+v", err, out.Actions)
	}
	sm, ok := out.Actions[0].(SrunMessage)
	if !ok || sm.MsgType != msgtype.SRUN_REQUEST_SUSPEND || sm.Port != 4321 || sm.UID != alice.UID ||
		!reflect.DeepEqual(sm.Msg, &msg.SuspendRequest{Op: msg.ResumeJob, JobID: run}) {
		t.Fatalf("%+v", out.Actions[0])
	}
}

// Array tasks are answered per task with RESPONSE_JOB_ARRAY_ERRORS:
// grouped by result, ordered by task id.
func TestSuspendArray(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-5")
	d.MinNodes, d.MaxNodes = 1, 1
	d.MinCPUs = 16 // a whole node each: four tasks run, two pend
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	running := 0
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta && j.Running() {
			running++
		}
	}
	if running != 4 {
		t.Fatalf("%d tasks running", running)
	}
	a := itoa(meta)
	for _, tc := range []struct {
		spec string
		want []msg.JobArrayError
	}{
		{a + "_[1-2,9]", []msg.JobArrayError{ae(0, a+"_1-2"), ae(slurmerr.ESLURM_INVALID_JOB_ID, a+"_9")}},
		{a + "_2", []msg.JobArrayError{ae(0, a+"_2")}},
		{a + "_5", []msg.JobArrayError{ae(slurmerr.ESLURM_JOB_PENDING, a+"_5")}},
		{a, []msg.JobArrayError{ae(0, a+"_0-3"), ae(slurmerr.ESLURM_JOB_PENDING, a+"_4-5")}},
	} {
		rep, _, err := m.Suspend(suspendReq(msg.SuspendJob, tc.spec), root, cl, t0+1)
		if err != nil || rep.Array == nil || !reflect.DeepEqual(rep.Array.Errors, tc.want) {
			t.Errorf("%s: %v %+v, want %+v", tc.spec, err, rep.Array, tc.want)
		}
	}
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta && j.ArrayTaskID != NoVal && j.Base() != msg.JobSuspended {
			t.Errorf("task %d: state %#x", j.ArrayTaskID, j.State)
		}
	}
}
