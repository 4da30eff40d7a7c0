package jobs

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// arrayMails runs a 4-task array (--array=0-3:1 --mail-type=mailType)
// through its life, tasks ending with the exit codes rcs, and returns
// each mail as "subject|SLURM_ARRAY_TASK_COUNT|SLURM_JOB_EXIT_CODE_MIN..MAX".
func arrayMails(t *testing.T, mailType uint16, rcs []uint32) []string {
	t.Helper()
	m := hookManager(HookConfig{MailProg: "/bin/mail"})
	cl := testCluster()
	// Another array and plain jobs in the table: their records must not
	// count for this array.
	// (held, so the array's tasks have the nodes).
	other := batchDesc(alice)
	other.ArrayInx, other.Priority = msg.Str("0-1"), 0
	mustSubmit(t, m, cl, other, alice, t0)
	plain := batchDesc(alice)
	plain.Priority = 0
	mustSubmit(t, m, cl, plain, alice, t0)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("0-3:1")
	d.MailType = mailType
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+5)
	var ids []uint32
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta {
			ids = append(ids, j.ID)
		}
	}
	if len(ids) != len(rcs) {
		t.Fatalf("%d tasks running, want %d", len(ids), len(rcs))
	}
	for i, id := range ids {
		finishJob(t, m, cl, id, rcs[i], t0+60+int64(i))
	}
	var got []string
	for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
		cnt, _ := envValue(s.Env, "SLURM_ARRAY_TASK_COUNT")
		lo, _ := envValue(s.Env, "SLURM_JOB_EXIT_CODE_MIN")
		hi, _ := envValue(s.Env, "SLURM_JOB_EXIT_CODE_MAX")
		got = append(got, s.Argv[2]+"|"+cnt+"|"+lo+".."+hi)
	}
	return got
}

// TestArrayMails: the mails of an array with and without ARRAY_TASKS:
// one summary for the whole array at its end (FAIL when a task failed),
// or every task's own mails. The expectations are what the code made
// before the array index (array_index.go): the index changes no mail.
func TestArrayMails(t *testing.T) {
	cases := []struct {
		name     string
		mailType uint16
		rcs      []uint32
		want     []string
	}{
		{"summary ok", MailBegin | MailEnd, []uint32{0, 0, 0, 0}, []string{
			"Slurm Array Summary Job_id=3_* (3) Name=job Began||..",
			"Slurm Array Summary Job_id=3_* (3) Name=job Ended, COMPLETED, ExitCode [0-0]|4|0..0"}},
		{"summary failed", MailBegin | MailEnd | MailFail, []uint32{0, 2 << 8, 0, 1 << 8}, []string{
			"Slurm Array Summary Job_id=3_* (3) Name=job Began||..",
			"Slurm Array Summary Job_id=3_* (3) Name=job Failed, Mixed, ExitCode [0-2]|4|0..2"}},
		{"summary end only, a task failed", MailEnd, []uint32{0, 0, 3 << 8, 0}, []string{
			"Slurm Array Summary Job_id=3_* (3) Name=job Ended, Mixed, ExitCode [0-3]|4|0..3"}},
		{"array tasks", MailBegin | MailEnd | MailFail | MailArrayTasks, []uint32{0, 1 << 8, 0, 0}, []string{
			"Slurm Array Task Job_id=3_0 (4) Name=job Began, Queued time 00:00:05|4|..",
			"Slurm Array Task Job_id=3_1 (5) Name=job Began, Queued time 00:00:05|4|..",
			"Slurm Array Task Job_id=3_2 (6) Name=job Began, Queued time 00:00:05|4|..",
			"Slurm Array Task Job_id=3_3 (3) Name=job Began, Queued time 00:00:05|4|..",
			"Slurm Array Task Job_id=3_3 (3) Name=job Ended, Run time 00:00:55, COMPLETED, ExitCode 0|4|..0",
			"Slurm Array Task Job_id=3_0 (4) Name=job Failed, Run time 00:00:56, FAILED, ExitCode 1|4|..1",
			"Slurm Array Task Job_id=3_1 (5) Name=job Ended, Run time 00:00:57, COMPLETED, ExitCode 0|4|..0",
			"Slurm Array Task Job_id=3_2 (6) Name=job Ended, Run time 00:00:58, COMPLETED, ExitCode 0|4|..0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := arrayMails(t, tc.mailType, tc.rcs)
			if !slices.Equal(got, tc.want) {
				t.Errorf("mails\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// benchArray is a table holding one array of n tasks (all split off,
// pending) among other finished jobs, with MailProg set.
func benchArray(n, others int, mailType uint16) (*Manager, []*Job) {
	m := hookManager(HookConfig{MailProg: "/bin/mail"})
	id := uint32(1)
	for ; int(id) <= others; id++ {
		m.insert(&Job{ID: id, ArrayTaskID: NoVal, State: msg.JobComplete, EndTime: t0, UserName: "alice"})
	}
	meta := id
	var tasks []*Job
	for i := 0; i < n; i++ {
		j := &Job{ID: meta + uint32(i), ArrayJobID: meta, ArrayTaskID: uint32(i), State: msg.JobPending,
			MailType: mailType, Name: "job", UserName: "alice", SubmitTime: t0, Nodes: []string{"n1"},
			NodeCPUs: []uint32{1}, Partition: "debug"}
		if i == 0 {
			j.Array = &ArrayInfo{Spec: "0-" + strconv.Itoa(n-1)}
		}
		m.insert(j)
		tasks = append(tasks, j)
	}
	return m, tasks
}

// BenchmarkArrayMails: the mail hooks over the whole life of one array
// (every task starts, then every task ends) in a table that also holds
// other finished jobs: a summary for the array (BEGIN,END), or every
// task's mails (ARRAY_TASKS, whose environment names the array's size).
func BenchmarkArrayMails(b *testing.B) {
	for _, c := range []struct {
		tasks, others int
		name          string
		bits          uint16
	}{
		{1000, 1000, "summary", MailBegin | MailEnd},
		{1000, 1000, "arraytasks", MailBegin | MailEnd | MailArrayTasks},
		{10000, 10000, "summary", MailBegin | MailEnd},
		{10000, 100000, "summary", MailBegin | MailEnd},
		{10000, 10000, "arraytasks", MailBegin | MailEnd | MailArrayTasks},
	} {
		b.Run(fmt.Sprintf("tasks=%d/others=%d/%s", c.tasks, c.others, c.name), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, tasks := benchArray(c.tasks, c.others, c.bits)
				b.StartTimer()
				for _, j := range tasks {
					j.State, j.StartTime = msg.JobRunning, t0+1
					m.mailOnStart(j, t0+1)
				}
				for _, j := range tasks {
					j.State, j.EndTime = msg.JobComplete, t0+2
					m.mailOnEnd(j, false, t0+2)
				}
				m.hooks.scripts = nil
			}
		})
	}
}

// TestArrayStartMails: the BEGIN mail of an array without ARRAY_TASKS is
// one summary, from the meta record, for the first task to start while
// none has ended (_first_array_task: tot_run_tasks 1, tot_comp_tasks 0):
// a task started after another ended, or after a requeue, is not mailed.
// A requeue marks the array (ARRAY_TASK_REQUEUED): every summary once all
// tasks have ended is then a REQUEUE mail too, and its END or FAIL says
// "with requeued tasks"; the requeued task's end is no exit code.
func TestArrayStartMails(t *testing.T) {
	cases := []struct {
		name  string
		spec  string
		steps func(t *testing.T, m *Manager, cl *Cluster, meta uint32)
		want  []string
	}{
		{"one task: the meta record runs it", "5", func(t *testing.T, m *Manager, cl *Cluster, meta uint32) {
			mustSchedule(t, m, cl, t0+5)
			finishJob(t, m, cl, meta, 0, t0+9)
		}, []string{
			"Slurm Array Summary Job_id=1_* (1) Name=job Began|00:00:05",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, COMPLETED, ExitCode [0-0]|"}},
		{"two tasks at once", "0-1", func(t *testing.T, m *Manager, cl *Cluster, meta uint32) {
			mustSchedule(t, m, cl, t0+5)
			finishJob(t, m, cl, 2, 0, t0+9)
			finishJob(t, m, cl, meta, 0, t0+9)
		}, []string{
			"Slurm Array Summary Job_id=1_* (1) Name=job Began|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, COMPLETED, ExitCode [0-0]|"}},
		{"throttled: the second starts after the first ended", "0-1%1", func(t *testing.T, m *Manager, cl *Cluster, meta uint32) {
			mustSchedule(t, m, cl, t0+5)
			finishJob(t, m, cl, 2, 0, t0+9)
			mustSchedule(t, m, cl, t0+10)
			finishJob(t, m, cl, meta, 0, t0+12)
		}, []string{
			"Slurm Array Summary Job_id=1_* (1) Name=job Began|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, COMPLETED, ExitCode [0-0]|"}},
		{"a task cancelled pending: status 9", "0-1%1", func(t *testing.T, m *Manager, cl *Cluster, meta uint32) {
			mustSchedule(t, m, cl, t0+5)
			if _, err := killStr(m, cl, alice, "1_1", 9, t0+6); err != nil {
				t.Fatal(err)
			}
			finishJob(t, m, cl, 2, 0, t0+9)
		}, []string{
			"Slurm Array Summary Job_id=1_* (1) Name=job Began|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, Mixed, MaxSignal [9]|"}},
		{"requeued by a node failure, run again", "7", func(t *testing.T, m *Manager, cl *Cluster, meta uint32) {
			mustSchedule(t, m, cl, t0+5)
			if _, err := m.NodeDown(m.Job(meta).Nodes[0], cl, t0+6); err != nil {
				t.Fatal(err)
			}
			mustSchedule(t, m, cl, t0+500)
			if !m.Job(meta).Running() {
				t.Fatalf("not restarted: state %#x", m.Job(meta).State)
			}
			finishJob(t, m, cl, meta, 0, t0+509)
		}, []string{
			"Slurm Array Summary Job_id=1_* (1) Name=job Began|00:00:05",
			"Slurm Array Summary Job_id=1_* (1) Name=job Requeued|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, NODE_FAIL, ExitCode [0-0], with requeued tasks|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Requeued|",
			"Slurm Array Summary Job_id=1_* (1) Name=job Ended, COMPLETED, ExitCode [0-0], with requeued tasks|"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := hookManager(HookConfig{MailProg: "/bin/mail"})
			cl := testCluster()
			d := batchDesc(alice)
			d.ArrayInx = msg.Str(tc.spec)
			d.MailType, d.Requeue = MailBegin|MailEnd|MailFail|MailRequeue, 1
			meta := mustSubmit(t, m, cl, d, alice, t0)
			tc.steps(t, m, cl, meta)
			var got []string
			for _, s := range scriptsOf(m.TakeScripts(cl), ScriptMail) {
				q, _ := envValue(s.Env, "SLURM_JOB_QUEUED_TIME")
				got = append(got, s.Argv[2]+"|"+q)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("mails\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
