package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func TestExpandPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/var/spool/slurmd", "/var/spool/slurmd"},
		{"/var/spool/%n", "/var/spool/n7"},
		{"/run/slurmd-%h-%n.pid", "/run/slurmd-host-n7.pid"},
		{"/x/%%n/%q/%", "/x/%n7/%q/%"},
	}
	for _, tc := range tests {
		if got := ExpandPath(tc.in, "n7", "host"); got != tc.want {
			t.Errorf("ExpandPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRegistration(t *testing.T) {
	steps := &fakeSteps{running: []StepRef{
		{ID: msg.StepID{JobID: 9, StepID: msg.StepIDBatch, StepHetComp: NoVal}, Owner: 1000},
		{ID: msg.StepID{JobID: 9, StepID: msg.StepIDExtern, StepHetComp: NoVal}, Owner: 1000},
	}}
	r := newRig(t, rigOpts{steps: steps})
	r.ctld.waitFor(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS)
	r.ctld.mu.Lock()
	reg := r.ctld.regs[0]
	r.ctld.mu.Unlock()
	checks := []struct {
		name string
		ok   bool
	}{
		{"node name", reg.NodeName == msg.Str("n1")},
		{"hostname", reg.Hostname == msg.Str("h1")},
		// config_overrides: the configured CPUs, the detected memory.
		{"cpus", reg.CPUs == 4},
		{"memory", reg.RealMemory == 2048},
		{"tmp", reg.TmpDisk == 100},
		{"uptime", reg.UpTime == 77},
		{"hash skipped", reg.HashVal == NoVal},
		{"wants TRES", reg.Flags == msg.SlurmdRegFlagResp},
		{"empty gres blob", string(reg.GresInfo) == "\x26\x00\x00\x00"},
		{"version", reg.Version == msg.Str("22.05.8")},
		{"batch and extern steps", len(reg.Steps) == 2 && reg.Steps[0].StepID == msg.StepIDBatch && reg.Steps[1].StepID == msg.StepIDExtern},
		{"start time", reg.SlurmdStartTime == 1800000000},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: registration %+v", c.name, reg)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); len(r.d.Tres()) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if len(r.d.Tres()) != 2 {
		t.Errorf("TRES list not kept: %+v", r.d.Tres())
	}

	t.Run("registration request: ping reply, then a registration", func(t *testing.T) {
		f, err := r.call(500, msgtype.REQUEST_NODE_REGISTRATION_STATUS, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Header.MsgType != msgtype.RESPONSE_PING_SLURMD {
			t.Fatalf("reply %v", f.Header.MsgType)
		}
		r.ctld.waitFor(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS)
	})
}

func TestControllerRPCs(t *testing.T) {
	r := newRig(t, rigOpts{})
	t.Run("ping", func(t *testing.T) {
		f, err := r.call(500, msgtype.REQUEST_PING, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Header.MsgType != msgtype.RESPONSE_PING_SLURMD {
			t.Fatalf("reply %v", f.Header.MsgType)
		}
	})
	for _, mt := range []msgtype.Type{msgtype.REQUEST_PING, msgtype.REQUEST_HEALTH_CHECK,
		msgtype.REQUEST_ACCT_GATHER_UPDATE, msgtype.REQUEST_NODE_REGISTRATION_STATUS} {
		t.Run("user "+mt.String(), func(t *testing.T) {
			if rc := r.rc(1000, mt, nil); rc != slurmerr.ESLURM_USER_ID_MISSING {
				t.Errorf("rc %d, want ESLURM_USER_ID_MISSING", rc)
			}
		})
	}
	t.Run("health check", func(t *testing.T) {
		if rc := r.rc(0, msgtype.REQUEST_HEALTH_CHECK, nil); rc != 0 {
			t.Errorf("rc %d", rc)
		}
	})
	t.Run("acct gather update", func(t *testing.T) {
		f, err := r.call(0, msgtype.REQUEST_ACCT_GATHER_UPDATE, nil)
		if err != nil || f.Header.MsgType != msgtype.RESPONSE_ACCT_GATHER_UPDATE {
			t.Fatalf("%v %v", f.Header.MsgType, err)
		}
	})
	t.Run("reconfigure: no reply, registers again", func(t *testing.T) {
		r.ctld.waitFor(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS)
		if _, err := r.call(500, msgtype.REQUEST_RECONFIGURE, nil); err == nil {
			t.Error("reconfigure was answered")
		}
		r.ctld.waitFor(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS)
	})
	t.Run("unknown rpc", func(t *testing.T) {
		if rc := r.rc(0, msgtype.REQUEST_DAEMON_STATUS, nil); rc != 22 {
			t.Errorf("rc %d, want EINVAL", rc)
		}
	})
}

func TestTerminateJob(t *testing.T) {
	t.Run("no steps, no epilog: already complete, no epilog message", func(t *testing.T) {
		r := newRig(t, rigOpts{})
		if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(5, r.now)); rc != slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE {
			t.Errorf("rc %d", rc)
		}
		if rc := r.rc(1000, msgtype.REQUEST_TERMINATE_JOB, killReq(5, r.now)); rc != slurmerr.ESLURM_USER_ID_MISSING {
			t.Errorf("from a user: rc %d", rc)
		}
	})
	t.Run("time limit with no steps: reply 0, then epilog complete", func(t *testing.T) {
		r := newRig(t, rigOpts{})
		if rc := r.rc(500, msgtype.REQUEST_KILL_TIMELIMIT, killReq(6, r.now)); rc != 0 {
			t.Errorf("rc %d", rc)
		}
		r.ctld.waitFor(t, msgtype.MESSAGE_EPILOG_COMPLETE)
		if e := r.ctld.epilogs(); len(e) != 1 || e[0].JobID != 6 || e[0].ReturnCode != 0 || e[0].NodeName != msg.Str("n1") {
			t.Errorf("epilog complete %+v", e)
		}
	})
	t.Run("running steps: terminated and the epilog runs with a clean environment", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "env")
		script := filepath.Join(dir, "epilog")
		if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > "+out+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOSLURM_SECRET_USER_VAR", "leak")
		steps := &fakeSteps{running: []StepRef{{ID: msg.StepID{JobID: 7, StepID: 0, StepHetComp: NoVal}, Owner: 1000}}}
		r := newRig(t, rigOpts{steps: steps, extra: "Epilog=" + script})
		if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(7, r.now)); rc != 0 {
			t.Errorf("rc %d", rc)
		}
		r.ctld.waitFor(t, msgtype.MESSAGE_EPILOG_COMPLETE)
		if !slices.Equal(steps.terminated, []uint32{7}) {
			t.Errorf("terminated %v", steps.terminated)
		}
		env, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(env), "GOSLURM_SECRET") {
			t.Errorf("daemon environment reached the epilog:\n%s", env)
		}
		for _, want := range []string{"SLURM_JOB_ID=7\n", "SLURM_SCRIPT_CONTEXT=epilog_slurmd\n", "SLURMD_NODENAME=n1\n", "SLURM_JOB_UID=1000\n"} {
			if !strings.Contains(string(env), want) {
				t.Errorf("epilog environment lacks %q:\n%s", want, env)
			}
		}
	})
}

// TestLaunchRejections checks every refusal of REQUEST_LAUNCH_TASKS with
// the code a real 22.05 slurmd answers, and that nothing reaches Steps.
func TestLaunchRejections(t *testing.T) {
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps})
	now := r.now
	other, err := jobcred.NewHMACSigner(jobcred.HMACKey{ID: "k", Secret: []byte(strings.Repeat("x", 32))})
	if err != nil {
		t.Fatal(err)
	}
	// Job 30 is revoked before its launch arrives.
	if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(30, now)); rc != slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE {
		t.Fatalf("terminate: rc %d", rc)
	}
	tampered := cred(t, 21, 0, "n1", now, nil)
	tampered.Signature[len(tampered.Signature)-3] ^= 1

	tests := []struct {
		name   string
		sender uint32
		req    msg.LaunchTasksRequest
		want   int
	}{
		{"node not in complete_nodelist", 1000, launchReq(cred(t, 20, 0, "n1", now, nil), 1000, "n2"), slurmerr.ESLURM_INVALID_NODE_NAME},
		{"sender is not the step's user", 1001, launchReq(cred(t, 20, 0, "n1", now, nil), 1000, "n1"), slurmerr.ESLURM_USER_ID_MISSING},
		{"no allocation from a user", 1000, func() msg.LaunchTasksRequest {
			q := launchReq(cred(t, 20, 0, "n1", now, nil), 1000, "n1")
			q.Flags |= msg.LaunchNoAlloc
			return q
		}(), slurmerr.ESLURM_ACCESS_DENIED},
		{"forged signature (other key)", 1000, launchReq(cred(t, 20, 0, "n1", now, other), 1000, "n1"), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		{"tampered signature", 1000, launchReq(tampered, 1000, "n1"), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		{"expired", 1000, launchReq(cred(t, 20, 0, "n1", now.Add(-121*time.Second), nil), 1000, "n1"), slurmerr.ESLURMD_CREDENTIAL_EXPIRED},
		{"credential for another uid", 1000, func() msg.LaunchTasksRequest {
			q := launchReq(cred(t, 20, 0, "n1", now, nil), 1000, "n1")
			q.UID, q.Cred.Body.UID = 1000, 1000
			q.GID = 1001 // the credential says 1000
			return q
		}(), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		{"credential for another step", 1000, func() msg.LaunchTasksRequest {
			q := launchReq(cred(t, 20, 0, "n1", now, nil), 1000, "n1")
			q.StepID.StepID = 1
			return q
		}(), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		{"this node not in the credential", 1000, launchReq(cred(t, 20, 0, "n2", now, nil), 1000, "n[1-2]"), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		{"revoked job", 1000, launchReq(cred(t, 30, 0, "n1", now.Add(-time.Second), nil), 1000, "n1"), slurmerr.ESLURMD_CREDENTIAL_REVOKED},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if rc := r.rc(tc.sender, msgtype.REQUEST_LAUNCH_TASKS, tc.req); rc != tc.want {
				t.Errorf("rc %d (%s), want %d (%s)", rc, slurmerr.Name(rc), tc.want, slurmerr.Name(tc.want))
			}
		})
	}
	if len(steps.launched) != 0 {
		t.Fatalf("rejected launches reached Steps: %v", steps.launched)
	}

	good := launchReq(cred(t, 40, 0, "n1", now, nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, good); rc != 0 {
		t.Fatalf("valid launch: rc %d", rc)
	}
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, good); rc != slurmerr.ESLURMD_CREDENTIAL_REPLAYED {
		t.Errorf("replay: rc %d", rc)
	}
	if len(steps.launched) != 1 {
		t.Errorf("launches %v", steps.launched)
	}

	t.Run("signal: owner and SlurmUser yes, others no", func(t *testing.T) {
		sig := msg.SignalTasks{StepID: good.StepID, Signal: 10}
		if rc := r.rc(1001, msgtype.REQUEST_SIGNAL_TASKS, sig); rc != slurmerr.ESLURM_USER_ID_MISSING {
			t.Errorf("stranger: rc %d", rc)
		}
		if rc := r.rc(1000, msgtype.REQUEST_SIGNAL_TASKS, sig); rc != 0 {
			t.Errorf("owner: rc %d", rc)
		}
		sig.StepID.JobID = 99
		if rc := r.rc(0, msgtype.REQUEST_SIGNAL_TASKS, sig); rc != slurmerr.ESLURM_INVALID_JOB_ID {
			t.Errorf("unknown job: rc %d", rc)
		}
	})
}

func TestLaunchWithoutStepsIsRefused(t *testing.T) {
	r := newRig(t, rigOpts{})
	q := launchReq(cred(t, 50, 0, "n1", r.now, nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, q); rc != slurmerr.ESLURM_NOT_SUPPORTED {
		t.Errorf("rc %d, want ESLURM_NOT_SUPPORTED", rc)
	}
	b := batchReq(t, 51, r.now)
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, b); rc != slurmerr.ESLURM_NOT_SUPPORTED {
		t.Errorf("batch: rc %d, want ESLURM_NOT_SUPPORTED", rc)
	}
}

func batchReq(t *testing.T, job uint32, now time.Time) msg.BatchJobLaunch {
	c, err := jobcred.Create(context.Background(), jobcred.Body{
		StepID: jobcred.StepID{JobID: job, StepID: msg.StepIDBatch, StepHetComp: NoVal}, UID: 1000, GID: 1000,
		JobCoreSpec: 0xfffe, StepHostlist: jobcred.Str("n1"), JobHostlist: jobcred.Str("n1"), JobNHosts: 1,
	}, jobcred.Version2205, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	c, err = jobcred.Decode(c.Bytes(), jobcred.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	return msg.BatchJobLaunch{JobID: job, HetJobID: NoVal, UID: 1000, GID: 1000, ArrayJobID: NoVal, ArrayTaskID: NoVal,
		Cred: c, SelectJobinfo: msg.SelectConsTres, Script: msg.Str("#!/bin/sh\ntrue\n"), Nodes: msg.Str("n1")}
}

func TestBatchLaunch(t *testing.T) {
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps})
	if rc := r.rc(1000, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 60, r.now)); rc != slurmerr.ESLURM_USER_ID_MISSING {
		t.Errorf("from a user: rc %d", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 60, r.now)); rc != 0 {
		t.Errorf("rc %d", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 60, r.now)); rc != slurmerr.ESLURM_DUPLICATE_JOB_ID {
		t.Errorf("again: rc %d", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(61, r.now)); rc != slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE {
		t.Errorf("terminate: rc %d", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 61, r.now.Add(-time.Second))); rc != slurmerr.ESLURMD_CREDENTIAL_REVOKED {
		t.Errorf("revoked: rc %d", rc)
	}
	wrong := batchReq(t, 62, r.now)
	wrong.UID = 0
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, wrong); rc != slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL {
		t.Errorf("uid differs from the credential: rc %d", rc)
	}
}

// TestCredStateSurvivesRestart: a used credential and a revocation are
// still refused by a slurmd restarted on the same spool directory.
func TestCredStateSurvivesRestart(t *testing.T) {
	spool := t.TempDir()
	ctld := startCtld(t)
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps, spool: spool, ctld: ctld})
	used := launchReq(cred(t, 70, 0, "n1", r.now, nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, used); rc != 0 {
		t.Fatalf("launch: rc %d", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(71, r.now)); rc != slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE {
		t.Fatalf("terminate: rc %d", rc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(spool, CredStateFile)); err != nil {
		t.Fatal(err)
	}

	r2 := newRig(t, rigOpts{steps: &fakeSteps{}, spool: spool, ctld: ctld})
	if rc := r2.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, used); rc != slurmerr.ESLURMD_CREDENTIAL_REPLAYED {
		t.Errorf("replay after restart: rc %d", rc)
	}
	late := launchReq(cred(t, 71, 0, "n1", r2.now.Add(-time.Second), nil), 1000, "n1")
	if rc := r2.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, late); rc != slurmerr.ESLURMD_CREDENTIAL_REVOKED {
		t.Errorf("revoked after restart: rc %d", rc)
	}
	// A requeued job's newer credential is accepted.
	fresh := launchReq(cred(t, 71, 0, "n1", r2.now.Add(time.Second), nil), 1000, "n1")
	r2.setNow(r2.now.Add(2 * time.Second))
	if rc := r2.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, fresh); rc != 0 {
		t.Errorf("reissued credential: rc %d", rc)
	}
	// The -c flag forgets everything.
	cs, err := newCredState(mustHMAC(t), r2.clock, 120*time.Second, spool)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.load(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(spool, CredStateFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-c left the state file: %v", err)
	}
}

func mustHMAC(t *testing.T) jobcred.SignatureVerifier {
	v, err := jobcred.NewHMACVerifier(credKey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLaunchProlog: PrologFlags=Alloc's REQUEST_LAUNCH_PROLOG. A user gets
// no reply at all; the controller gets RC 0 at once, then the Prolog runs
// (with a clean environment) and REQUEST_COMPLETE_PROLOG reports it.
func TestLaunchProlog(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	script := filepath.Join(dir, "prolog")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > "+out+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigOpts{extra: "Prolog=" + script + "\nPrologFlags=Alloc"})
	req := msg.PrologLaunch{JobID: 80, HetJobID: NoVal, UID: 1000, GID: 1000, Nodes: msg.Str("n1"),
		Cred: batchReq(t, 80, r.now).Cred, SpankJobEnv: []msg.NullString{msg.Str("LEAK=1")}}
	if _, err := r.call(1000, msgtype.REQUEST_LAUNCH_PROLOG, req); err == nil {
		t.Error("a user's REQUEST_LAUNCH_PROLOG was answered")
	}
	if rc := r.rc(500, msgtype.REQUEST_LAUNCH_PROLOG, req); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	r.ctld.waitFor(t, msgtype.REQUEST_COMPLETE_PROLOG)
	r.ctld.mu.Lock()
	got := r.ctld.prologs
	r.ctld.mu.Unlock()
	if len(got) != 1 || got[0].JobID != 80 || got[0].PrologRC != uint32(slurmerr.ESLURMD_PROLOG_FAILED) || got[0].NodeName != msg.Str("n1") {
		t.Errorf("complete prolog %+v (the script exits 3)", got)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "LEAK") || !strings.Contains(string(env), "SLURM_SCRIPT_CONTEXT=prolog_slurmd") {
		t.Errorf("prolog environment:\n%s", env)
	}
}
