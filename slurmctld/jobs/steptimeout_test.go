package jobs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// stepLimitJob is a running two-node batch job of alice (job limit
// jobLimit minutes, 0: none) with one step on both nodes created at
// t0+10 with step limit stepLimit, its srun listening on 10.0.0.2:4242.
func stepLimitJob(t *testing.T, overTime, jobLimit, stepLimit uint32) (*Manager, *Cluster, uint32) {
	t.Helper()
	cl := testCluster()
	m := newTestManager(nil)
	m.cfg.OverTimeLimit = overTime
	d := batchDesc(alice)
	d.MinNodes = 2
	if jobLimit != 0 {
		d.TimeLimit = jobLimit
	}
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if !m.Job(id).Running() {
		t.Fatal("setup: job not running")
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 2, NumTasks: 2, TimeLimit: stepLimit, Host: msg.Str("10.0.0.2"), Port: 4242}, alice, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	return m, cl, id
}

// timeLimitKills sums up what a Tick sent: "step" for each
// REQUEST_KILL_TIMELIMIT of one step, "job" for the job's, "srun" for
// any message to an srun; "-" for nothing.
func timeLimitKills(acts []Action) string {
	var out []string
	for _, a := range acts {
		switch a := a.(type) {
		case NodeMessage:
			if a.MsgType != msgtype.REQUEST_KILL_TIMELIMIT {
				out = append(out, a.MsgType.String())
				continue
			}
			if k := a.Msg.(*msg.KillJob); k.StepID.StepID == NoVal {
				out = append(out, "job")
			} else {
				out = append(out, "step")
			}
		case SrunMessage:
			out = append(out, "srun")
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

// TestStepTimeLimit: check_job_step_time_limit as 22.05 applies it. A
// step is killed once its run time in whole minutes, suspensions left
// out, reaches its own limit, OverTimeLimit notwithstanding; a step
// without a limit is not; a job that times out itself takes its steps
// with it (no separate step kill); a suspended job's steps are not
// checked.
func TestStepTimeLimit(t *testing.T) {
	type ev struct {
		at   int64  // seconds after the step started
		do   string // tick, suspend, resume, update=N
		want string // what a tick sent (timeLimitKills)
	}
	for _, tc := range []struct {
		name                          string
		overTime, jobLimit, stepLimit uint32
		evs                           []ev
	}{
		{name: "one minute", stepLimit: 1,
			evs: []ev{{59, "tick", "-"}, {60, "tick", "step"}, {61, "tick", "-"}, {600, "tick", "-"}}},
		{name: "first tick late", stepLimit: 2,
			evs: []ev{{100, "tick", "-"}, {119, "tick", "-"}, {300, "tick", "step"}, {301, "tick", "-"}}},
		{name: "OverTimeLimit does not apply to steps", overTime: 5, stepLimit: 1,
			evs: []ev{{60, "tick", "step"}}},
		{name: "no step limit", stepLimit: NoVal,
			evs: []ev{{86400, "tick", "-"}}},
		{name: "step limit 0", stepLimit: 0,
			evs: []ev{{86400, "tick", "-"}}},
		{name: "step limit UNLIMITED", stepLimit: Infinite,
			evs: []ev{{86400, "tick", "-"}}},
		{name: "job limit first", jobLimit: 1, stepLimit: 1,
			// The job started 10 s before its step: at 50 s it times out.
			evs: []ev{{49, "tick", "-"}, {50, "tick", "job"}, {60, "tick", "-"}}},
		{name: "job limit after OverTimeLimit, step's before", overTime: 1, jobLimit: 1, stepLimit: 1,
			evs: []ev{{60, "tick", "step"}, {110, "tick", "job"}}},
		{name: "lowered below the run time", stepLimit: 10,
			evs: []ev{{300, "tick", "-"}, {301, "update=1", ""}, {302, "tick", "step"}}},
		{name: "raised before the limit", stepLimit: 1,
			evs: []ev{{30, "update=5", ""}, {60, "tick", "-"}, {299, "tick", "-"}, {300, "tick", "step"}}},
		{name: "made unlimited", stepLimit: 1,
			evs: []ev{{30, "update=4294967294", ""}, {86400, "tick", "-"}}},
		{name: "suspended: not checked, time not charged", stepLimit: 1,
			evs: []ev{{30, "suspend", ""}, {200, "tick", "-"}, {230, "resume", ""}, {231, "tick", "-"},
				{259, "tick", "-"}, {260, "tick", "step"}}},
		{name: "suspended twice", stepLimit: 1,
			evs: []ev{{10, "suspend", ""}, {20, "resume", ""}, {30, "suspend", ""}, {40, "resume", ""},
				{79, "tick", "-"}, {80, "tick", "step"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, id := stepLimitJob(t, tc.overTime, tc.jobLimit, tc.stepLimit)
			start := t0 + 10
			for _, e := range tc.evs {
				now := start + e.at
				var err error
				switch {
				case e.do == "tick":
					var out Outcome
					out, err = m.Tick(cl, now)
					if got := timeLimitKills(out.Actions); got != e.want {
						t.Errorf("tick at +%ds: sent %s, want %s", e.at, got, e.want)
					}
				case e.do == "suspend" || e.do == "resume":
					op := msg.SuspendJob
					if e.do == "resume" {
						op = msg.ResumeJob
					}
					_, _, err = m.Suspend(suspendReq(op, fmt.Sprint(id)), root, cl, now)
				case strings.HasPrefix(e.do, "update="):
					var l uint32
					fmt.Sscan(strings.TrimPrefix(e.do, "update="), &l)
					_, err = m.UpdateStep(&msg.UpdateJobStepRequest{JobID: id, StepID: 0, TimeLimit: l}, alice, now)
				}
				if err != nil {
					t.Fatalf("%s at +%ds: %v", e.do, e.at, err)
				}
			}
		})
	}
}

// TestStepTimeoutKill: what a step's time-out sends and leaves: one
// REQUEST_KILL_TIMELIMIT to the step's nodes naming the step, with no
// credential (slurmd must not end the job); nothing to srun; the job
// runs on; the step shows TIMEOUT until its nodes report it complete,
// and other steps are untouched.
func TestStepTimeoutKill(t *testing.T) {
	m, cl, id := stepLimitJob(t, 0, 0, 1)
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, TimeLimit: NoVal}, alice, cl, t0+10); err != nil {
		t.Fatal(err)
	}
	j := m.Job(id)
	now := t0 + 10 + 60
	out, err := m.Tick(cl, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{NodeMessage{JobID: id, Nodes: []string{"n1", "n2"}, MsgType: msgtype.REQUEST_KILL_TIMELIMIT,
		Msg: &msg.KillJob{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, JobState: msg.JobRunning,
			JobUID: alice.UID, JobGID: alice.GID, Nodes: msg.Str("n[1-2]"), SelectJobinfo: m.cfg.Select,
			StartTime: t0, Time: now}}}
	if !reflect.DeepEqual(out.Actions, want) {
		t.Fatalf("actions\n%#v\nwant\n%#v", out.Actions, want)
	}
	if j.Base() != msg.JobRunning || len(j.Steps) != 2 {
		t.Fatalf("job state %#x, %d steps: want RUNNING with both steps", j.State, len(j.Steps))
	}
	wantLog := fmt.Sprintf("check_job_step_time_limit: StepId=%d.0 has timed out (1)", id)
	if logs := m.TakeLogs(); len(logs) != 1 || logs[0].Msg != wantLog {
		t.Errorf("logs %v, want one line %q", logs, wantLog)
	}
	states := func() []uint32 {
		info, _ := m.StepInfo(msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal}, cl, len(cl.Nodes), now)
		var s []uint32
		for _, st := range info.Steps {
			if st.StepID.StepID != msg.StepIDBatch {
				s = append(s, st.State)
			}
		}
		return s
	}
	if got := states(); !reflect.DeepEqual(got, []uint32{msg.JobTimeout, msg.JobRunning}) {
		t.Errorf("step states %v, want [TIMEOUT RUNNING]", got)
	}
	for r := uint32(0); r < 2; r++ {
		if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal},
			RangeFirst: r, RangeLast: r, StepRC: 15}, root, now+1); err != nil {
			t.Fatal(err)
		}
	}
	if got := states(); !reflect.DeepEqual(got, []uint32{msg.JobRunning}) {
		t.Errorf("after completion: step states %v, want [RUNNING]", got)
	}
	if j.Base() != msg.JobRunning {
		t.Errorf("job state %#x after its step timed out, want RUNNING", j.State)
	}
}
