package jobs

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

var resyncCfg = ResyncConfig{BatchStartTimeout: 10, MsgTimeout: 10}

// sent summarizes node messages as "TYPE job@nodes" (the kill body's job
// id and node list checked on the way), srun messages as "TYPE job step".
func sent(t *testing.T, acts []Action) []string {
	t.Helper()
	var out []string
	for _, a := range acts {
		switch a := a.(type) {
		case NodeMessage:
			if k, ok := a.Msg.(*msg.KillJob); ok {
				if k.StepID.JobID != a.JobID || k.StepID.StepID != NoVal || k.Nodes.Value != hostlistOf(a.Nodes) {
					t.Errorf("%v body: step %+v nodes %q, sent to %v", a.MsgType, k.StepID, k.Nodes.Value, a.Nodes)
				}
			}
			out = append(out, a.MsgType.String()+" "+itoa32(a.JobID)+"@"+hostlistOf(a.Nodes))
		case SrunMessage:
			f := a.Msg.(*msg.SrunNodeFailMsg)
			out = append(out, a.MsgType.String()+" "+itoa32(a.JobID)+"."+itoa32(f.StepID.StepID)+" "+f.NodeList.Value+" to "+a.Host)
		default:
			out = append(out, "?")
		}
	}
	return out
}

func logText(ls []LogLine) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Msg + "\n")
	}
	return b.String()
}

func batchStep(id uint32) msg.StepID {
	return msg.StepID{JobID: id, StepID: msg.StepIDBatch, StepHetComp: NoVal}
}

// runningBatch submits and starts a batch job on nodes nodes at t0.
func runningBatch(t *testing.T, m *Manager, cl *Cluster, nodes uint32, requeue bool) uint32 {
	t.Helper()
	d := batchDesc(alice)
	d.MinNodes = nodes
	d.Requeue = 0
	if requeue {
		d.Requeue = 1
	}
	id := mustSubmit(t, m, cl, d, alice, t0)
	if l := launches(mustSchedule(t, m, cl, t0)); len(l) != 1 || l[0].JobID != id {
		t.Fatalf("job %d not started: %+v", id, l)
	}
	return id
}

// TestResyncReportedSteps: what the controller does with each job step a
// registration reports, by the state the table has for its job.
func TestResyncReportedSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, m *Manager, cl *Cluster) msg.StepID
		node  string
		now   int64
		want  []string
		log   string
		state uint32 // the job's state after (when it is in the table)
	}{
		{name: "orphan", node: "n1", now: t0,
			setup: func(*testing.T, *Manager, *Cluster) msg.StepID { return batchStep(77) },
			want:  []string{"REQUEST_ABORT_JOB 77@n1"},
			log:   "Orphan StepId=77.batch reported on node n1\nAborting JobId=77 on node n1\n"},
		{name: "no allocation", node: "n1", now: t0,
			setup: func(*testing.T, *Manager, *Cluster) msg.StepID {
				return msg.StepID{JobID: 0xffff0001, StepID: 0, StepHetComp: NoVal}
			},
			log: "NoAllocate StepId=4294901761.0 reported on node n1\n"},
		{name: "running where it should", node: "n1", now: t0 + 100,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				return batchStep(runningBatch(t, m, cl, 1, false))
			},
			log: "Registered JobId=1 StepId=1.batch on node n1\n", state: msg.JobRunning},
		{name: "running on a wrong node", node: "n3", now: t0 + 100,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				return batchStep(runningBatch(t, m, cl, 1, false))
			},
			want: []string{"REQUEST_ABORT_JOB 1@n3"},
			log: "Registered JobId=1 StepId=1.batch on wrong node n3\nvalidate_jobs_on_node: job nodes n1 count 1 inx 2\n" +
				"Aborting JobId=1 on node n3\n",
			state: msg.JobRunning},
		{name: "pending", node: "n2", now: t0 + 100,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				d := batchDesc(alice)
				d.Priority = 0 // held: stays pending
				return batchStep(mustSubmit(t, m, cl, d, alice, t0))
			},
			want:  []string{"REQUEST_ABORT_JOB 1@n2"},
			log:   "Registered PENDING JobId=1 StepId=1.batch on node n2\nAborting JobId=1 on node n2\n",
			state: msg.JobPending},
		{name: "completing", node: "n1", now: t0 + 100,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				id := runningBatch(t, m, cl, 1, false)
				if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str("n1")}, root, cl, t0+50); err != nil {
					t.Fatal(err)
				}
				return msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}
			},
			want:  []string{"REQUEST_TERMINATE_JOB 1@n1"},
			log:   "Killing JobId=1 on node n1\n",
			state: msg.JobComplete | msg.JobCompleting},
		{name: "just finished", node: "n1", now: t0 + 55,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				id := runningBatch(t, m, cl, 1, false)
				finishJob(t, m, cl, id, 0, t0+50)
				return batchStep(id)
			},
			log: "Registered newly completed JobId=1 StepId=1.batch on n1\n", state: msg.JobComplete},
		{name: "finished long ago", node: "n1", now: t0 + 100,
			setup: func(t *testing.T, m *Manager, cl *Cluster) msg.StepID {
				id := runningBatch(t, m, cl, 1, false)
				finishJob(t, m, cl, id, 0, t0+50)
				return batchStep(id)
			},
			want:  []string{"REQUEST_TERMINATE_JOB 1@n1"},
			log:   "Registered JobId=1 StepId=1.batch in state COMPLETED on node n1\nKilling JobId=1 on node n1\n",
			state: msg.JobComplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			sid := tc.setup(t, m, cl)
			out, logs, err := m.ValidateJobsOnNode(NodeReport{Node: tc.node, Steps: []msg.StepID{sid}, BootTime: t0 - 1000},
				NewActivity(t0), resyncCfg, cl, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := sent(t, out.Actions); strings.Join(got, ";") != strings.Join(tc.want, ";") {
				t.Errorf("sent %q, want %q", got, tc.want)
			}
			if got := logText(logs); got != tc.log {
				t.Errorf("log:\n%s\nwant:\n%s", got, tc.log)
			}
			if j := m.Job(sid.JobID); j != nil && j.State != tc.state {
				t.Errorf("job state %#x, want %#x", j.State, tc.state)
			}
		})
	}
}

// TestResyncMissingBatch: a running batch job its batch host no longer
// reports is failed (or requeued) once BatchStartTimeout +
// min(MessageTimeout, 10) has passed since its start, since its node last
// reported it and since the controller loaded it; not before.
func TestResyncMissingBatch(t *testing.T) {
	const grace = 20
	for _, tc := range []struct {
		name     string
		requeue  bool
		since    int64   // controller start (job table load)
		seen     []int64 // registrations of n1 reporting the job
		now      int64
		want     []string
		state    uint32
		restarts uint16
	}{
		{name: "within the start-up grace", since: t0, now: t0 + grace, state: msg.JobRunning},
		{name: "after the grace", since: t0, now: t0 + grace + 1,
			want: []string{"REQUEST_TERMINATE_JOB 1@n1"}, state: msg.JobNodeFail | msg.JobCompleting},
		{name: "requeued", requeue: true, since: t0, now: t0 + 100,
			want: []string{"REQUEST_TERMINATE_JOB 1@n1"}, state: msg.JobPending | msg.JobCompleting, restarts: 1},
		{name: "reported lately", since: t0, seen: []int64{t0 + 90}, now: t0 + 100, state: msg.JobRunning},
		{name: "reported long ago", since: t0, seen: []int64{t0 + 50}, now: t0 + 100,
			want: []string{"REQUEST_TERMINATE_JOB 1@n1"}, state: msg.JobNodeFail | msg.JobCompleting},
		{name: "controller restarted lately", since: t0 + 90, now: t0 + 100, state: msg.JobRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			id := runningBatch(t, m, cl, 1, tc.requeue)
			act := NewActivity(tc.since)
			for _, at := range tc.seen {
				if out, _, err := m.ValidateJobsOnNode(NodeReport{Node: "n1", Steps: []msg.StepID{batchStep(id)}},
					act, resyncCfg, cl, at); err != nil || len(out.Actions) != 0 {
					t.Fatalf("report at %d: %v %v", at-t0, err, sent(t, out.Actions))
				}
			}
			out, logs, err := m.ValidateJobsOnNode(NodeReport{Node: "n1", BootTime: t0 - 1000}, act, resyncCfg, cl, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := sent(t, out.Actions); strings.Join(got, ";") != strings.Join(tc.want, ";") {
				t.Errorf("sent %q, want %q\n%s", got, tc.want, logText(logs))
			}
			j := m.Job(id)
			if j.State != tc.state || j.RestartCnt != tc.restarts {
				t.Fatalf("state %#x restarts %d, want %#x %d", j.State, j.RestartCnt, tc.state, tc.restarts)
			}
			if len(tc.want) == 0 {
				if len(logs) != 0 {
					t.Errorf("log: %s", logText(logs))
				}
				return
			}
			want := "Batch JobId=1 missing from batch node n1 (not found BatchStartTime after startup)\n" +
				"_job_complete: JobId=1 WTERMSIG 126\n" +
				"_job_complete: JobId=1 cancelled by node failure\n_job_complete: JobId=1 done\n"
			if tc.requeue {
				want = "Batch JobId=1 missing from batch node n1 (not found BatchStartTime after startup), Requeuing job\n" +
					"_job_complete: JobId=1 WTERMSIG 126\n" +
					"_job_complete: JobId=1 cancelled by node failure\n_job_complete: requeue JobId=1 due to node failure\n" +
					"_job_complete: JobId=1 done\n"
			} else if j.EndTime != tc.now {
				t.Errorf("end %d", j.EndTime-t0)
			}
			if j.ExitCode != 1 {
				t.Errorf("exit code %d", j.ExitCode)
			}
			if got := logText(logs); got != want {
				t.Errorf("log:\n%s\nwant:\n%s", got, want)
			}
			// The node answers the kill: the job is done with it.
			if _, err := m.EpilogComplete(id, "n1", root, tc.now); err != nil {
				t.Fatal(err)
			}
			if j.IsCompleting() || m.NodeUsage(len(cl.Nodes))[0].RunJobs != 0 {
				t.Errorf("after the epilog: %#x, usage %+v", j.State, m.NodeUsage(len(cl.Nodes))[0])
			}
		})
	}
}

// TestResyncMissingBatchOtherNode: only the batch host's registration
// decides that a batch job's script is gone; another node of the job
// lacking it is normal (the script runs on the first node only).
func TestResyncMissingBatchOtherNode(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := runningBatch(t, m, cl, 2, false)
	out, logs, err := m.ValidateJobsOnNode(NodeReport{Node: "n2"}, NewActivity(t0), resyncCfg, cl, t0+1000)
	if err != nil || len(out.Actions) != 0 || len(logs) != 0 || !m.Job(id).Running() {
		t.Fatalf("%v %q %q %#x", err, sent(t, out.Actions), logText(logs), m.Job(id).State)
	}
}

// TestResyncMissingStep: a step srun runs that a node of the step does not
// report is signalled to srun (SRUN_STEP_MISSING; srun checks its I/O
// connections); the allocation itself is never touched.
func TestResyncMissingStep(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes, d.AllocRespPort, d.OtherPort = 2, 4000, 4001
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 2, NumTasks: 2, Host: msg.Str("login"), Port: 7000}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	act := NewActivity(t0)
	step0 := msg.StepID{JobID: a.JobID, StepID: 0, StepHetComp: NoVal}
	for _, tc := range []struct {
		node  string
		steps []msg.StepID
		now   int64
		want  []string
	}{
		{node: "n1", steps: []msg.StepID{step0}, now: t0 + 50},
		// n1's report in the same second does not vouch for n2.
		{node: "n2", now: t0 + 50, want: []string{"SRUN_STEP_MISSING 1.0 n2 to login"}},
		{node: "n2", steps: []msg.StepID{step0}, now: t0 + 60},
		{node: "n1", steps: []msg.StepID{step0}, now: t0 + 70},
		// A node outside the step.
		{node: "n3", now: t0 + 80},
	} {
		out, logs, err := m.ValidateJobsOnNode(NodeReport{Node: tc.node, Steps: tc.steps}, act, resyncCfg, cl, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := sent(t, out.Actions); strings.Join(got, ";") != strings.Join(tc.want, ";") {
			t.Errorf("%s at +%d: sent %q, want %q\n%s", tc.node, tc.now-t0, got, tc.want, logText(logs))
		}
	}
	if j := m.Job(a.JobID); !j.Running() || len(j.Steps) != 1 {
		t.Fatalf("job %#x steps %d", j.State, len(j.Steps))
	}
}

// TestResyncStepWithoutSrun: a step with nothing to tell that started
// before the node booted again is killed on that node.
func TestResyncStepWithoutSrun(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := msg.NewJobDesc()
	d.MinNodes = 1
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a.JobID, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, MaxNodes: 1, NumTasks: 1}, alice, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	act := NewActivity(t0)
	// Booted before the step started (allowing MessageTimeout+5): kept.
	out, _, _ := m.ValidateJobsOnNode(NodeReport{Node: "n1", BootTime: t0 + 10}, act, resyncCfg, cl, t0+100)
	if len(out.Actions) != 0 {
		t.Fatalf("sent %q", sent(t, out.Actions))
	}
	out, logs, _ := m.ValidateJobsOnNode(NodeReport{Node: "n1", BootTime: t0 + 90}, act, resyncCfg, cl, t0+101)
	if len(out.Actions) != 1 || logText(logs) != "Node n1 rebooted, killing missing step 1.0\n" {
		t.Fatalf("sent %q log %q", sent(t, out.Actions), logText(logs))
	}
	nm := out.Actions[0].(NodeMessage)
	st := nm.Msg.(*msg.SignalTasks)
	if nm.MsgType != msgtype.REQUEST_TERMINATE_TASKS || st.Signal != sigKill || st.StepID.StepID != 0 || nm.Nodes[0] != "n1" {
		t.Fatalf("%+v %+v", nm, st)
	}
}

func TestJobStateString(t *testing.T) {
	for st, want := range map[uint32]string{
		msg.JobComplete:                      "COMPLETED",
		msg.JobNodeFail:                      "NODE_FAIL",
		msg.JobCancelled | msg.JobCompleting: "COMPLETING",
		msg.JobPending | msg.JobRequeueHold:  "REQUEUE_HOLD",
		msg.JobOOM:                           "OUT_OF_MEMORY",
	} {
		if got := jobStateString(st); got != want {
			t.Errorf("%#x: %s, want %s", st, got, want)
		}
	}
	for s, want := range map[msg.StepID]string{
		{JobID: 5, StepID: msg.StepIDBatch, StepHetComp: NoVal}:  "StepId=5.batch",
		{JobID: 5, StepID: msg.StepIDExtern, StepHetComp: NoVal}: "StepId=5.extern",
		{JobID: 5, StepID: 2, StepHetComp: 1}:                    "StepId=5.2+1",
		{JobID: 5, StepID: NoVal, StepHetComp: NoVal}:            "JobId=5",
	} {
		if got := stepIDString(s); got != want {
			t.Errorf("%+v: %s, want %s", s, got, want)
		}
	}
}
