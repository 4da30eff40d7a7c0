package jobs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// An --immediate allocation that cannot start: job_allocate's code, the
// job FAILED with reason BadConstraints. The cluster: n1-n2 busy with a
// running job; others as each case sets up.
func TestImmediateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, m *Manager, cl *Cluster, run uint32) // other jobs
		edit  func(d *msg.JobDesc, run uint32)                        // the immediate job
		want  int
	}{
		{"free nodes", nil, nil, 0},
		{"busy nodes", nil, func(d *msg.JobDesc, _ uint32) { d.ReqNodes = msg.Str("n1") }, slurmerr.ESLURM_NODES_BUSY},
		{"behind a job waiting for resources", waitingJob(nil), nil, slurmerr.ESLURM_NOT_TOP_PRIORITY},
		{"behind a waiting job of another partition", waitingJob(func(d *msg.JobDesc) { d.Partition = msg.Str("short") }),
			func(d *msg.JobDesc, _ uint32) { d.Partition = msg.Str("debug") }, slurmerr.ESLURM_NOT_TOP_PRIORITY},
		{"a held job is no rival", waitingJob(func(d *msg.JobDesc) { d.Priority = 0 }), nil, 0},
		{"a job waiting for a dependency is no rival", func(t *testing.T, m *Manager, cl *Cluster, run uint32) {
			d := batchDesc(bob)
			d.Dependency = msg.Str("afterok:" + strconv.Itoa(int(run)))
			mustSubmit(t, m, cl, d, bob, t0)
		}, nil, 0},
		{"a job waiting for --begin is no rival", waitingJob(func(d *msg.JobDesc) { d.BeginTime = t0 + 3600 }), nil, 0},
		{"own dependency", nil, func(d *msg.JobDesc, run uint32) { d.Dependency = msg.Str("afterok:" + strconv.Itoa(int(run))) },
			slurmerr.ESLURM_DEPENDENCY},
		{"own --begin", nil, func(d *msg.JobDesc, _ uint32) { d.BeginTime = t0 + 3600 }, slurmerr.ESLURM_DEPENDENCY},
		{"own hold", waitingJob(nil), func(d *msg.JobDesc, _ uint32) { d.Priority = 0 }, slurmerr.ESLURM_DEPENDENCY},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := hookManager(HookConfig{MailProg: "/bin/mail", JobCompType: "jobcomp/filetxt", JobCompLoc: "/var/log/jc"})
			d := batchDesc(alice)
			d.MinNodes, d.ReqNodes, d.Shared = 2, msg.Str("n[1-2]"), 0
			run := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			if !m.Job(run).Running() {
				t.Fatal("the first job does not run")
			}
			if tc.setup != nil {
				tc.setup(t, m, cl, run)
				mustSchedule(t, m, cl, t0)
			}
			d = msg.NewJobDesc()
			d.UserID, d.GroupID = alice.UID, alice.GID
			d.MinNodes, d.Immediate, d.Shared = 1, 1, 0
			d.MailType, d.RespHost, d.OtherPort = MailFail|MailEnd, msg.Str("10.0.0.2"), 4242
			if tc.edit != nil {
				tc.edit(d, run)
			}
			m.TakeScripts(cl)
			a, out, err := m.Allocate(d, alice, cl, t0+1)
			if code(err) != tc.want {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.want)
			}
			if tc.want == 0 {
				if a == nil || a.NodeCnt != 1 {
					t.Fatalf("allocation %+v", a)
				}
				return
			}
			// The immediate job is the last one made.
			var j *Job
			for _, x := range m.Jobs() {
				if j == nil || x.ID > j.ID {
					j = x
				}
			}
			if j.Base() != msg.JobFailed || j.Reason != uint16(sched.ReasonBadConstraints) || j.ExitCode != 1 ||
				j.StartTime != t0+1 || j.EndTime != t0+1 {
				t.Fatalf("immediate job left as %+v", j)
			}
			// job_completion_logger: the FAIL mail, the jobcomp record,
			// SRUN_JOB_COMPLETE to the srun.
			ss := m.TakeScripts(cl)
			mails, comps := scriptsOf(ss, ScriptMail), scriptsOf(ss, ScriptJobCompFile)
			if len(mails) != 1 || !strings.Contains(mails[0].Argv[2], " Failed, ") {
				t.Fatalf("mails %+v", mails)
			}
			if len(comps) != 1 || !strings.Contains(comps[0].Line, " JobState=FAILED ") {
				t.Fatalf("jobcomp records %+v", comps)
			}
			var done int
			for _, act := range out.Actions {
				if sm, ok := act.(SrunMessage); ok && sm.MsgType == msgtype.SRUN_JOB_COMPLETE && sm.Port == 4242 {
					done++
				}
			}
			if done != 1 {
				t.Fatalf("actions %+v", out.Actions)
			}
		})
	}
}

// waitingJob submits a job that waits for the busy nodes (priority above
// the immediate job's), edited by edit.
func waitingJob(edit func(d *msg.JobDesc)) func(t *testing.T, m *Manager, cl *Cluster, run uint32) {
	return func(t *testing.T, m *Manager, cl *Cluster, _ uint32) {
		d := batchDesc(bob)
		d.ReqNodes, d.Shared = msg.Str("n1"), 0
		if edit != nil {
			edit(d)
		}
		mustSubmit(t, m, cl, d, bob, t0)
	}
}
