package jobs

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestLateRefusal: what a refused submission leaves, as job_allocate and
// _job_create do. Refused before the record exists: no id used. Refused
// by _job_create once the record has its id (dependency, constraint): the
// record is purged, the id used up. Refused by the select test: the
// record stays FAILED, BadConstraints, exit code 1, started and ended at
// submission, counted as submitted (not as failed), journaled, and purged
// after MinJobAge.
func TestLateRefusal(t *testing.T) {
	type op func(m *Manager, cl *Cluster, d *msg.JobDesc) error
	batch := func(m *Manager, cl *Cluster, d *msg.JobDesc) error {
		_, _, err := m.Submit(d, alice, cl, t0)
		return err
	}
	alloc := func(m *Manager, cl *Cluster, d *msg.JobDesc) error {
		d.Script, d.Environment, d.AllocRespPort = msg.NullString{}, nil, 4000
		_, _, err := m.Allocate(d, alice, cl, t0)
		return err
	}
	for _, tc := range []struct {
		name      string
		edit      func(d *msg.JobDesc)
		do        op
		code      int
		kept      bool // a FAILED record stays
		idUsed    bool
		submitted uint64 // sdiag's jobs submitted after the refusal
	}{
		{"memory", func(d *msg.JobDesc) { d.PnMinMemory = 8000 }, batch,
			slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, true, true, 1},
		{"cpus per task", func(d *msg.JobDesc) { d.CPUsPerTask = 32 }, batch,
			slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, true, true, 1},
		{"salloc memory", func(d *msg.JobDesc) { d.PnMinMemory = 8000 }, alloc,
			slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, true, true, 1},
		{"array memory", func(d *msg.JobDesc) { d.PnMinMemory, d.ArrayInx = 8000, msg.Str("1-3") }, batch,
			slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, true, true, 3},
		{"constraint", func(d *msg.JobDesc) { d.Features = msg.Str("nosuch") }, batch,
			slurmerr.ESLURM_INVALID_FEATURE, false, true, 0},
		{"dependency on itself", func(d *msg.JobDesc) { d.Dependency = msg.Str("afterok:2") }, batch,
			slurmerr.ESLURM_DEPENDENCY, false, true, 0},
		{"partition", func(d *msg.JobDesc) { d.Partition = msg.Str("nosuch") }, batch,
			slurmerr.ESLURM_INVALID_PARTITION_NAME, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			journal := &MemJournal{}
			m := newTestManager(journal)
			first := mustSubmit(t, m, cl, batchDesc(alice), alice, t0) // id 1
			base := m.DiagCounters().Submitted
			d := batchDesc(alice)
			tc.edit(d)
			if err := tc.do(m, cl, d); code(err) != tc.code {
				t.Fatalf("err %v, want code %d", err, tc.code)
			}
			if got := m.DiagCounters().Submitted - base; got != tc.submitted {
				t.Errorf("submitted +%d, want +%d", got, tc.submitted)
			}
			next := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
			if want := first + 1 + map[bool]uint32{true: 1}[tc.idUsed]; next != want {
				t.Errorf("next id %d, want %d", next, want)
			}
			j := m.Job(first + 1)
			if !tc.kept {
				if j != nil && tc.idUsed {
					t.Fatalf("refused job kept: %+v", j)
				}
				return
			}
			if j == nil {
				t.Fatal("no record of the refused job")
			}
			if j.Base() != msg.JobFailed || j.Reason != uint16(sched.ReasonBadConstraints) || j.ExitCode != 1 ||
				j.StartTime != t0 || j.EndTime != t0 || j.StateDesc != "" {
				t.Errorf("record: state %d reason %d exit %d start %d end %d desc %q",
					j.Base(), j.Reason, j.ExitCode, j.StartTime, j.EndTime, j.StateDesc)
			}
			ji := m.Info(j, cl, len(cl.Nodes), 0, t0)
			if ji.AccrueTime != 0 {
				t.Errorf("accrue time %d, want none", ji.AccrueTime)
			}
			if wantElig := map[bool]int64{false: t0}[d.ArrayInx.Valid]; ji.EligibleTime != wantElig {
				t.Errorf("eligible time %d, want %d", ji.EligibleTime, wantElig)
			}
			// Journaled before the reply: a restart finds it.
			if a, b := tableJSON(t, m), tableJSON(t, replay(t, journal.Records)); a != b {
				t.Fatalf("replayed table differs:\n%s\n%s", a, b)
			}
			// Purged once MinJobAge has passed.
			if _, err := m.Tick(cl, t0+m.cfg.MinJobAge-1); err != nil {
				t.Fatal(err)
			}
			if m.Job(j.ID) == nil {
				t.Fatal("purged before MinJobAge")
			}
			if _, err := m.Tick(cl, t0+m.cfg.MinJobAge); err != nil {
				t.Fatal(err)
			}
			if m.Job(j.ID) != nil {
				t.Fatal("kept after MinJobAge")
			}
		})
	}
}

// TestLateRefusalHet: a het job component the select test refuses stays
// as a FAILED job of its own (no het ids); the components made before it
// end CANCELLED, as _slurm_rpc_submit_batch_het_job leaves them.
func TestLateRefusalHet(t *testing.T) {
	for _, kind := range []string{"batch", "alloc"} {
		t.Run(kind, func(t *testing.T) {
			m := newTestManager(&MemJournal{})
			cl := bfCluster()
			descs := hetDescs(alice, 3)
			descs[1].PnMinMemory = 8000
			var err error
			if kind == "batch" {
				_, _, err = m.SubmitHet(descs, alice, cl, t0)
			} else {
				for i := range descs {
					descs[i].Script, descs[i].Environment = msg.NullString{}, nil
				}
				_, _, err = m.AllocateHet(descs, alice, cl, t0)
			}
			if code(err) != slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE {
				t.Fatalf("err %v", err)
			}
			lead, comp := m.Job(1), m.Job(2)
			if lead == nil || lead.Base() != msg.JobCancelled || lead.HetJobID != 1 {
				t.Errorf("leader %+v", lead)
			}
			if comp == nil || comp.Base() != msg.JobFailed || comp.Reason != uint16(sched.ReasonBadConstraints) ||
				comp.HetJobID != 0 || comp.ExitCode != 1 {
				t.Errorf("refused component %+v", comp)
			}
			if m.Job(3) != nil {
				t.Error("a component after the refused one was made")
			}
		})
	}
}

// TestLateRefusalMail: job_completion_logger runs for the kept record, so
// --mail-type=FAIL mails the refused job's end.
func TestLateRefusalMail(t *testing.T) {
	cl := testCluster()
	m := hookManager(HookConfig{MailProg: "/bin/mail"})
	d := batchDesc(alice)
	d.PnMinMemory, d.MailType = 8000, MailFail
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE {
		t.Fatalf("err %v", err)
	}
	var got []string
	for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
		got = append(got, s.Argv[2])
	}
	if len(got) != 1 || !strings.Contains(got[0], "Failed") {
		t.Errorf("mails %q, want one FAIL mail", got)
	}
}
