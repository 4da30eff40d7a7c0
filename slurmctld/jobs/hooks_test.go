package jobs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

func hookManager(h HookConfig) *Manager {
	m := newTestManager(nil)
	m.cfg.Hooks = h
	return m
}

func envValue(env []string, k string) (string, bool) {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, k+"="); ok {
			return v, true
		}
	}
	return "", false
}

func scriptsOf(ss []Script, k ScriptKind) []Script {
	var out []Script
	for _, s := range ss {
		if s.Kind == k {
			out = append(out, s)
		}
	}
	return out
}

func TestMailSubjects(t *testing.T) {
	cases := []struct {
		name     string
		mailType uint16
		mailUser string
		domain   string
		rc       uint32
		want     []string // argv[2] and argv[3] of each mail
	}{
		{"all ok", MailBegin | MailEnd | MailFail | MailRequeue, "bob@site", "", 0, []string{
			"Slurm Job_id=1 Name=job Began, Queued time 00:00:05|bob@site",
			"Slurm Job_id=1 Name=job Ended, Run time 00:01:10, COMPLETED, ExitCode 0|bob@site"}},
		{"fail no end", MailBegin | MailEnd | MailFail, "", "example.org", 3 << 8, []string{
			"Slurm Job_id=1 Name=job Began, Queued time 00:00:05|alice@example.org",
			"Slurm Job_id=1 Name=job Failed, Run time 00:01:10, FAILED, ExitCode 3|alice@example.org"}},
		{"end only", MailEnd, "", "", 0, []string{
			"Slurm Job_id=1 Name=job Ended, Run time 00:01:10, COMPLETED, ExitCode 0|alice"}},
		{"none", 0, "", "", 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := hookManager(HookConfig{MailProg: "/bin/mail", MailDomain: tc.domain})
			cl := testCluster()
			d := batchDesc(alice)
			d.MailType, d.MailUser = tc.mailType, msg.NullString{Value: tc.mailUser, Valid: tc.mailUser != ""}
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0+5)
			finishJob(t, m, cl, id, tc.rc, t0+75)
			var got []string
			for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
				if s.Argv[0] != "/bin/mail" || s.Argv[1] != "-s" {
					t.Errorf("argv %q", s.Argv)
				}
				got = append(got, s.Argv[2]+"|"+s.Argv[3])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("mails\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMailEnv(t *testing.T) {
	m := hookManager(HookConfig{MailProg: "/bin/mail"})
	cl := testCluster()
	d := batchDesc(alice)
	d.MailType = MailEnd
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+1)
	finishJob(t, m, cl, id, 2<<8, t0+3)
	mails := scriptsOf(m.TakeScripts(cl), ScriptMail)
	if len(mails) != 0 {
		t.Fatalf("END mail for a FAILED job: %q", mails[0].Argv)
	}
	d = batchDesc(alice)
	d.MailType = MailEnd
	id = mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+1)
	finishJob(t, m, cl, id, 0, t0+3)
	mails = scriptsOf(m.TakeScripts(cl), ScriptMail)
	if len(mails) != 1 {
		t.Fatalf("%d mails", len(mails))
	}
	for k, want := range map[string]string{"SLURM_JOB_ID": "2", "SLURM_JOB_USER": "alice", "SLURM_JOB_UID": "1000",
		"SLURM_JOB_MAIL_TYPE": "Ended", "SLURM_JOB_STATE": "COMPLETED", "SLURM_JOB_RUN_TIME": "00:00:02",
		"SLURM_JOB_EXIT_CODE_MAX": "0", "SLURM_JOB_EXIT_CODE2": "0:0", "SLURM_JOB_NODELIST": "n1",
		"SLURM_JOB_PARTITION": "debug", "SLURM_CLUSTER_NAME": "test", "SLURM_JOB_WORK_DIR": "/tmp"} {
		if got, _ := envValue(mails[0].Env, k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
}

func TestMailTimeLimit(t *testing.T) {
	m := hookManager(HookConfig{MailProg: "/bin/mail"})
	cl := testCluster()
	d := batchDesc(alice)
	d.MailType = MailTime50 | MailTime80
	d.TimeLimit = 10
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	for _, tc := range []struct {
		at   int64
		want string
	}{{299, ""}, {300, "Slurm Job_id=1 Name=job Reached 50% of time limit, Run time 00:05:00"}, {301, ""},
		{480, "Slurm Job_id=1 Name=job Reached 80% of time limit, Run time 00:08:00"}, {540, ""}} {
		if _, err := m.Tick(cl, t0+tc.at); err != nil {
			t.Fatal(err)
		}
		var got string
		for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
			got = s.Argv[2]
		}
		if got != tc.want {
			t.Errorf("at +%d: %q, want %q", tc.at, got, tc.want)
		}
	}
	if m.Job(id).MailType != 0 {
		t.Errorf("mail type left %#x", m.Job(id).MailType)
	}
}

func TestPrologSlurmctld(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		timedOut  bool
		requeue   bool
		wantState string
		launched  bool
	}{
		{"ok", 0, false, true, "RUNNING", true},
		{"fails, requeued", 1 << 8, false, true, "PENDING", false},
		{"times out, requeued", 9, true, true, "PENDING", false},
		{"fails, no requeue", 1 << 8, false, false, "CANCELLED", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog", EpilogSlurmctld: "/etc/epilog"})
			cl := testCluster()
			d := batchDesc(alice)
			d.Requeue = 0
			if tc.requeue {
				d.Requeue = 1
			}
			id := mustSubmit(t, m, cl, d, alice, t0)
			acts := mustSchedule(t, m, cl, t0)
			if len(launches(acts)) != 0 {
				t.Fatal("launched before the prolog ended")
			}
			j := m.Job(id)
			if j.State != msg.JobRunning|msg.JobConfiguring {
				t.Fatalf("state %#x, want RUNNING|CONFIGURING", j.State)
			}
			pro := scriptsOf(m.TakeScripts(cl), ScriptPrologCtld)
			if len(pro) != 1 || pro[0].Argv[0] != "/etc/prolog" {
				t.Fatalf("prolog scripts %+v", pro)
			}
			if v, _ := envValue(pro[0].Env, "SLURM_SCRIPT_CONTEXT"); v != "prolog_slurmctld" {
				t.Errorf("SLURM_SCRIPT_CONTEXT=%q", v)
			}
			out, err := m.PrologDone(id, tc.status, tc.timedOut, cl, t0+1)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(launches(out.Actions)) == 1; got != tc.launched {
				t.Errorf("launched %v, want %v", got, tc.launched)
			}
			if got := jobBaseNames[j.Base()]; got != tc.wantState {
				t.Errorf("state %s, want %s", got, tc.wantState)
			}
			epi := scriptsOf(m.TakeScripts(cl), ScriptEpilogCtld)
			if tc.launched == (len(epi) != 0) {
				t.Errorf("%d epilogs", len(epi))
			}
		})
	}
}

func TestEpilogSlurmctldKeepsCompleting(t *testing.T) {
	m := hookManager(HookConfig{EpilogSlurmctld: "/etc/epilog"})
	cl := testCluster()
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	finishJob(t, m, cl, id, 0, t0+1)
	j := m.Job(id)
	if j.State != msg.JobComplete|msg.JobCompleting {
		t.Fatalf("state %#x: the epilog runs, the job must stay COMPLETING", j.State)
	}
	epi := scriptsOf(m.TakeScripts(cl), ScriptEpilogCtld)
	if len(epi) != 1 {
		t.Fatalf("%d epilogs", len(epi))
	}
	if v, _ := envValue(epi[0].Env, "SLURM_JOB_EXIT_CODE2"); v != "0:0" {
		t.Errorf("SLURM_JOB_EXIT_CODE2=%q", v)
	}
	if _, err := m.EpilogDone(id, false, t0+2); err != nil {
		t.Fatal(err)
	}
	if j.State != msg.JobComplete {
		t.Errorf("state %#x after the epilog, want COMPLETED", j.State)
	}
}

func TestJobCompFiletxt(t *testing.T) {
	m := hookManager(HookConfig{JobCompType: "jobcomp/filetxt", JobCompLoc: "/var/log/jc",
		GroupName: func(gid uint32) string { return map[uint32]string{1000: "alice"}[gid] }})
	cl := testCluster()
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	finishJob(t, m, cl, id, 1<<8, t0+1)
	jc := scriptsOf(m.TakeScripts(cl), ScriptJobCompFile)
	if len(jc) != 1 {
		t.Fatalf("%d records", len(jc))
	}
	tm := func(s int64) string { return compTime(s) }
	want := "JobId=1 UserId=alice(1000) GroupId=alice(1000) Name=job JobState=FAILED Partition=debug TimeLimit=UNLIMITED " +
		"StartTime=" + tm(t0) + " EndTime=" + tm(t0+1) + " NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= " +
		"Tres=cpu=1,mem=4G,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=" + tm(t0) + " EligibleTime=" + tm(t0) +
		" DerivedExitCode=0:0 ExitCode=1:0 \n"
	if jc[0].Line != want || jc[0].Path != "/var/log/jc" {
		t.Errorf("record\n got %q\nwant %q", jc[0].Line, want)
	}
}

func TestCompressedCounts(t *testing.T) {
	for _, tc := range []struct {
		in   []uint32
		want string
	}{{[]uint32{2}, "2"}, {[]uint32{2, 2}, "2(x2)"}, {[]uint32{2, 2, 1}, "2(x2),1"}, {[]uint32{1, 2, 2}, "1,2(x2)"}} {
		if got := compressedCounts(tc.in); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHooksRecovered(t *testing.T) {
	m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog", EpilogSlurmctld: "/etc/epilog"})
	cl := testCluster()
	pro := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	epi := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	m.TakeScripts(cl)
	if _, err := m.PrologDone(epi, 0, false, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	finishJob(t, m, cl, epi, 0, t0+2)
	m.TakeScripts(cl)
	// A restart forgets the running scripts: both run again.
	m.hooks = hookState{}
	m.Recovered(t0 + 3)
	var got []string
	for _, s := range m.TakeScripts(cl) {
		got = append(got, s.Kind.Name()+" "+jobBaseNames[m.Job(s.JobID).Base()])
	}
	want := []string{"PrologSlurmctld RUNNING", "EpilogSlurmctld COMPLETED"}
	if !slices.Equal(got, want) {
		t.Errorf("after recovery %q, want %q", got, want)
	}
	if !m.Job(epi).IsCompleting() || m.Job(pro).State&msg.JobConfiguring == 0 {
		t.Errorf("states %#x %#x", m.Job(pro).State, m.Job(epi).State)
	}
}

func TestJobCompScriptEnv(t *testing.T) {
	m := hookManager(HookConfig{JobCompType: "jobcomp/script", JobCompLoc: "/etc/jobcomp.sh"})
	cl := testCluster()
	d := batchDesc(alice)
	d.TimeLimit = 90
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	finishJob(t, m, cl, id, 9, t0+1) // killed by SIGKILL
	s := scriptsOf(m.TakeScripts(cl), ScriptJobCompScript)
	if len(s) != 1 || s[0].Argv[0] != "/etc/jobcomp.sh" {
		t.Fatalf("scripts %+v", s)
	}
	for k, want := range map[string]string{"JOBID": "1", "EXITCODE": "0:9", "ARRAYTASKID": "4294967294",
		"LIMIT": "01:30:00", "DB_FLAGS": "SchedMain", "NODES": "n1", "JOBSTATE": "FAILED", "BATCH": "yes",
		"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "USERNAME": "alice", "START": "1800000000"} {
		if got, _ := envValue(s[0].Env, k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
}

func TestHooksNodeFailRequeue(t *testing.T) {
	m := hookManager(HookConfig{MailProg: "/bin/mail", EpilogSlurmctld: "/etc/epilog",
		JobCompType: "jobcomp/filetxt", JobCompLoc: "/jc"})
	cl := testCluster()
	d := batchDesc(alice)
	d.MailType, d.Requeue = MailFail|MailRequeue|MailEnd, 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	m.TakeScripts(cl)
	if _, err := m.NodeDown(m.Job(id).Nodes[0], cl, t0+10); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range m.TakeScripts(cl) {
		switch s.Kind {
		case ScriptMail:
			got = append(got, s.Argv[2])
		case ScriptEpilogCtld:
			v, _ := envValue(s.Env, "SLURM_JOB_RESTART_COUNT")
			got = append(got, "epilog restarts="+v)
		case ScriptJobCompFile:
			got = append(got, strings.Fields(s.Line)[4])
		}
	}
	want := []string{"Slurm Job_id=1 Name=job Failed, Run time 00:00:10, NODE_FAIL, ExitCode 0",
		"Slurm Job_id=1 Name=job Requeued, Run time 00:00:10", "JobState=NODE_FAIL", "epilog restarts=0"}
	if !slices.Equal(got, want) {
		t.Errorf("hooks\n got %q\nwant %q", got, want)
	}
	if j := m.Job(id); j.RestartCnt != 1 || !j.Pending() {
		t.Errorf("restarts %d state %#x", j.RestartCnt, j.State)
	}
}

// TestPrologSlurmctldExtendsLimit: the time PrologSlurmctld ran does not
// come out of the job's limit (job_config_fini's _job_time_limit_incr).
func TestPrologSlurmctldExtendsLimit(t *testing.T) {
	m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog"})
	cl := testCluster()
	d := batchDesc(alice)
	d.TimeLimit = 10
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if _, err := m.PrologDone(id, 0, false, cl, t0+45); err != nil {
		t.Fatal(err)
	}
	if j := m.Job(id); j.EndTime != t0+45+600 {
		t.Errorf("end time %d, want the start of the run (prolog end) + 10 minutes %d", j.EndTime, t0+45+600)
	}
}

// TestRestartDecision: what a restart does for each recovered job, as
// read_slurm_conf (_sync_nodes_to_jobs, _sync_nodes_to_comp_job).
func TestRestartDecision(t *testing.T) {
	both := HookConfig{PrologSlurmctld: "/etc/prolog", EpilogSlurmctld: "/etc/epilog"}
	nodes := []string{"n1", "n2"}
	cases := []struct {
		name       string
		state      uint32
		nodes      []string
		completing []string
		hooks      HookConfig
		want       restartStep
	}{
		{"running", msg.JobRunning, nodes, nil, both, restartStep{}},
		{"pending", msg.JobPending, nil, nil, both, restartStep{}},
		{"prolog ran", msg.JobRunning | msg.JobConfiguring, nodes, nil, both, restartStep{prolog: true}},
		{"prolog gone from slurm.conf", msg.JobRunning | msg.JobConfiguring, nodes, nil, HookConfig{},
			restartStep{configFini: true}},
		{"cancelled while its prolog ran", msg.JobCancelled | msg.JobCompleting | msg.JobConfiguring, nodes, nodes, both,
			restartStep{dropConfiguring: true, epilog: true, kill: true}},
		{"epilog ran, nodes clean", msg.JobComplete | msg.JobCompleting, nodes, nil, both, restartStep{epilog: true}},
		{"epilog ran, a node completing", msg.JobComplete | msg.JobCompleting, nodes, nodes[1:], both,
			restartStep{epilog: true, kill: true}},
		{"no epilog, a node completing", msg.JobComplete | msg.JobCompleting, nodes, nodes[1:], HookConfig{},
			restartStep{kill: true}},
		{"no epilog, nodes clean", msg.JobFailed | msg.JobCompleting, nodes, nil, HookConfig{}, restartStep{done: true}},
		{"requeued, completing", msg.JobPending | msg.JobCompleting, nodes, nodes, both, restartStep{epilog: true, kill: true}},
		{"completed", msg.JobComplete, nodes, nil, both, restartStep{}},
		{"completing without nodes", msg.JobCancelled | msg.JobCompleting, nil, nil, both, restartStep{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{ID: 1, State: tc.state, Nodes: tc.nodes, Completing: tc.completing}
			if got := restartDecision(j, tc.hooks); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// restarted is m's table as a restarted controller recovers it (a
// snapshot loaded into a new manager, the running scripts forgotten).
func restarted(t *testing.T, m *Manager, now int64) *Manager {
	t.Helper()
	var b strings.Builder
	if err := m.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	m2 := hookManager(m.cfg.Hooks)
	if err := m2.LoadSnapshot(0, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	m2.Recovered(now)
	return m2
}

// TestRestartEpilogWhileNodesComplete: the controller crashed while
// EpilogSlurmctld ran for a job one of whose nodes was still completing.
// The restart runs the epilog again and tells that node again to end the
// job; the job stays COMPLETING until both the node and the epilog are
// done, in either order.
func TestRestartEpilogWhileNodesComplete(t *testing.T) {
	for _, epilogFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("epilog first %v", epilogFirst), func(t *testing.T) {
			m := hookManager(HookConfig{EpilogSlurmctld: "/etc/epilog"})
			cl := testCluster()
			d := batchDesc(alice)
			d.MinNodes = 2
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str(j.BatchHost)}, root, cl, t0+1); err != nil {
				t.Fatal(err)
			}
			first, second := j.Nodes[0], j.Nodes[1]
			if _, err := m.EpilogComplete(id, first, root, t0+2); err != nil {
				t.Fatal(err)
			}
			if n := len(scriptsOf(m.TakeScripts(cl), ScriptEpilogCtld)); n != 1 {
				t.Fatalf("%d epilogs before the crash", n)
			}

			m = restarted(t, m, t0+10)
			j = m.Job(id)
			epi := scriptsOf(m.TakeScripts(cl), ScriptEpilogCtld)
			if len(epi) != 1 || epi[0].JobID != id {
				t.Fatalf("after the restart: epilogs %+v, want EpilogSlurmctld again", epi)
			}
			if v, _ := envValue(epi[0].Env, "SLURM_SCRIPT_CONTEXT"); v != "epilog_slurmctld" {
				t.Errorf("SLURM_SCRIPT_CONTEXT=%q", v)
			}
			out, err := m.RestartActions(cl, t0+10)
			if err != nil {
				t.Fatal(err)
			}
			var kills []string
			for _, a := range out.Actions {
				if nm, ok := a.(NodeMessage); ok && nm.MsgType == msgtype.REQUEST_TERMINATE_JOB && nm.JobID == id {
					kills = append(kills, nm.Nodes...)
				}
			}
			if !slices.Equal(kills, []string{second}) {
				t.Errorf("kills to %q, want the node still completing %q", kills, second)
			}
			if out, _ := m.RestartActions(cl, t0+11); len(out.Actions) != 0 {
				t.Errorf("a second RestartActions did %v", out.Actions)
			}
			steps := []func() error{
				func() error { _, err := m.EpilogDone(id, false, t0+12); return err },
				func() error { _, err := m.EpilogComplete(id, second, root, t0+12); return err },
			}
			if !epilogFirst {
				steps[0], steps[1] = steps[1], steps[0]
			}
			if err := steps[0](); err != nil {
				t.Fatal(err)
			}
			if !j.IsCompleting() {
				t.Fatalf("state %#x: COMPLETING ended before both the epilog and the node", j.State)
			}
			if err := steps[1](); err != nil {
				t.Fatal(err)
			}
			if j.State != msg.JobComplete {
				t.Errorf("state %#x, want COMPLETED", j.State)
			}
		})
	}
}

// TestRestartPrologGone: a job recovered CONFIGURING when slurm.conf no
// longer has a PrologSlurmctld ends its configuration and is launched.
func TestRestartPrologGone(t *testing.T) {
	m := hookManager(HookConfig{PrologSlurmctld: "/etc/prolog"})
	cl := testCluster()
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	m.TakeScripts(cl)
	m.cfg.Hooks.PrologSlurmctld = ""
	m = restarted(t, m, t0+5)
	if s := m.TakeScripts(cl); len(s) != 0 {
		t.Fatalf("scripts %+v", s)
	}
	out, err := m.RestartActions(cl, t0+5)
	if err != nil {
		t.Fatal(err)
	}
	if l := launches(out.Actions); len(l) != 1 || l[0].JobID != id {
		t.Errorf("launches %+v", l)
	}
	if j := m.Job(id); j.State != msg.JobRunning {
		t.Errorf("state %#x, want RUNNING", j.State)
	}
}

// TestNodeDownKeepsEpilogCompleting: the last completing node of a job
// going DOWN does not end COMPLETING while EpilogSlurmctld still runs
// (kill_running_job_by_node_name's cleanup_completing waits for it).
func TestNodeDownKeepsEpilogCompleting(t *testing.T) {
	m := hookManager(HookConfig{EpilogSlurmctld: "/etc/epilog"})
	cl := testCluster()
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0)
	j := m.Job(id)
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, NodeName: msg.Str(j.BatchHost)}, root, cl, t0+1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NodeDown(j.Nodes[0], cl, t0+2); err != nil {
		t.Fatal(err)
	}
	if j.State != msg.JobComplete|msg.JobCompleting || len(j.Completing) != 0 {
		t.Fatalf("state %#x completing %q: the epilog still runs", j.State, j.Completing)
	}
	if _, err := m.EpilogDone(id, false, t0+3); err != nil {
		t.Fatal(err)
	}
	if j.State != msg.JobComplete {
		t.Errorf("state %#x after the epilog, want COMPLETED", j.State)
	}
}

// TestNodeDownRunningJobWaitsForEpilog: a running job whose nodes all go
// DOWN stays COMPLETING while its EpilogSlurmctld runs, requeued or not
// (kill_running_job_by_node_name: deallocate_nodes' cleanup_completing
// and _set_requeued_job_pending_completing wait for the epilog); the
// epilog's end finishes it, a requeued job pending without nodes.
func TestNodeDownRunningJobWaitsForEpilog(t *testing.T) {
	cases := []struct {
		name       string
		requeue    uint16
		nodes      uint32
		waiting    uint32 // state while the epilog runs
		afterwards uint32
	}{
		{"one node", 0, 1, msg.JobNodeFail | msg.JobCompleting, msg.JobNodeFail},
		{"two nodes", 0, 2, msg.JobNodeFail | msg.JobCompleting, msg.JobNodeFail},
		{"one node, requeued", 1, 1, msg.JobPending | msg.JobCompleting, msg.JobPending},
		{"two nodes, requeued", 1, 2, msg.JobPending | msg.JobCompleting, msg.JobPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := hookManager(HookConfig{EpilogSlurmctld: "/etc/epilog"})
			cl := testCluster()
			d := batchDesc(alice)
			d.Requeue, d.MinNodes = tc.requeue, tc.nodes
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			j := m.Job(id)
			for i, n := range slices.Clone(j.Nodes) {
				if _, err := m.NodeDown(n, cl, t0+2+int64(i)); err != nil {
					t.Fatal(err)
				}
			}
			if j.State != tc.waiting || len(j.Completing) != 0 {
				t.Fatalf("state %#x completing %q, want %#x while the epilog runs", j.State, j.Completing, tc.waiting)
			}
			if got := len(scriptsOf(m.TakeScripts(cl), ScriptEpilogCtld)); got != 1 {
				t.Fatalf("%d epilogs, want 1", got)
			}
			if _, err := m.EpilogDone(id, false, t0+10); err != nil {
				t.Fatal(err)
			}
			if j.State != tc.afterwards {
				t.Errorf("state %#x after the epilog, want %#x", j.State, tc.afterwards)
			}
			if j.Pending() && len(j.Nodes) != 0 {
				t.Errorf("requeued job keeps nodes %q", j.Nodes)
			}
		})
	}
}
