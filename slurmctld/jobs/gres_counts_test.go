package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// gresTestCounts applies _test_gres_cnt to every GRES of a job, a site
// GRES ("foo") as gpu: counts that contradict each other are refused,
// the ones they imply are filled in when the job left them unset.
func TestGresTestCountsAnyGres(t *testing.T) {
	type counts struct {
		numTasks, minNodes, maxNodes         uint32
		perNode, perSocket, cpusPerTask, spn uint16
	}
	unset := counts{NoVal, NoVal, NoVal, NoVal16, infinite16, NoVal16, NoVal16}
	with := func(f func(*counts)) counts { c := unset; f(&c); return c }
	for _, tc := range []struct {
		name                             string
		cpus, perJob, perNode, perSocket string
		perTask                          string
		in                               counts
		want                             counts // ignored when refused
		ok                               bool
	}{
		{name: "tasks from per job / per task", perJob: "gres:foo:6", perTask: "gres:foo:2", in: unset,
			want: with(func(c *counts) { c.numTasks = 3 }), ok: true},
		{name: "tasks given agree", perJob: "gres:foo:6", perTask: "gres:foo:2",
			in: with(func(c *counts) { c.numTasks = 3 }), want: with(func(c *counts) { c.numTasks = 3 }), ok: true},
		{name: "tasks given disagree", perJob: "gres:foo:6", perTask: "gres:foo:2",
			in: with(func(c *counts) { c.numTasks = 4 })},
		{name: "per job not a multiple of per task", perJob: "gres:foo:5", perTask: "gres:foo:2", in: unset},
		{name: "per task without tasks", perTask: "gres:foo:2", in: unset},
		{name: "per task, fixed node count: a task a node", perTask: "gres:foo:2",
			in:   with(func(c *counts) { c.minNodes, c.maxNodes = 2, 2 }),
			want: with(func(c *counts) { c.minNodes, c.maxNodes, c.numTasks = 2, 2, 2 }), ok: true},
		{name: "per task, fixed node count, tasks per node", perTask: "gres:foo:1",
			in:   with(func(c *counts) { c.minNodes, c.maxNodes, c.perNode = 2, 2, 3 }),
			want: with(func(c *counts) { c.minNodes, c.maxNodes, c.perNode, c.numTasks = 2, 2, 3, 6 }), ok: true},
		{name: "per task, fixed node count, -c: no task count", perTask: "gres:foo:1",
			in: with(func(c *counts) { c.minNodes, c.maxNodes, c.cpusPerTask = 2, 2, 2 })},
		{name: "tasks per node from per node / per task", perNode: "gres:foo:4", perTask: "gres:foo:2",
			in:   with(func(c *counts) { c.numTasks = 4 }),
			want: with(func(c *counts) { c.numTasks, c.perNode = 4, 2 }), ok: true},
		{name: "tasks per node disagree", perNode: "gres:foo:4", perTask: "gres:foo:2",
			in: with(func(c *counts) { c.numTasks, c.perNode = 4, 3 })},
		{name: "nodes from per job / per node", perJob: "gres:foo:8", perNode: "gres:foo:4", in: unset,
			want: with(func(c *counts) { c.minNodes, c.maxNodes = 2, 2 }), ok: true},
		{name: "nodes from per job / per node below -N", perJob: "gres:foo:8", perNode: "gres:foo:4",
			in: with(func(c *counts) { c.minNodes = 3 })},
		{name: "max nodes at most per job", perJob: "gres:foo:2", in: with(func(c *counts) { c.minNodes, c.maxNodes = 1, 4 }),
			want: with(func(c *counts) { c.minNodes, c.maxNodes = 1, 2 }), ok: true},
		{name: "per job below -N", perJob: "gres:foo:2", in: with(func(c *counts) { c.minNodes = 3 })},
		{name: "sockets from per node / per socket", perNode: "gres:foo:4", perSocket: "gres:foo:2",
			in:   with(func(c *counts) { c.spn = 2 }),
			want: with(func(c *counts) { c.spn = 2 }), ok: true},
		{name: "sockets disagree", perNode: "gres:foo:4", perSocket: "gres:foo:2",
			in: with(func(c *counts) { c.spn = 3 })},
		{name: "per socket without sockets", perSocket: "gres:foo:2", in: unset},
		{name: "tasks per socket", perSocket: "gres:foo:4", perTask: "gres:foo:2",
			in:   with(func(c *counts) { c.spn, c.numTasks = 1, 2 }),
			want: with(func(c *counts) { c.spn, c.numTasks, c.perSocket = 1, 2, 2 }), ok: true},
		{name: "cpus per task from cpus per gres", cpus: "gres:foo:3", perTask: "gres:foo:2",
			in: with(func(c *counts) { c.numTasks = 1 }), want: with(func(c *counts) { c.numTasks, c.cpusPerTask = 1, 6 }), ok: true},
		{name: "cpus per task disagree", cpus: "gres:foo:3", perTask: "gres:foo:2",
			in: with(func(c *counts) { c.numTasks, c.cpusPerTask = 1, 4 })},
		{name: "cpus per gres of another type", cpus: "gres:foo:3", perTask: "gres:foo:big:2",
			in: with(func(c *counts) { c.numTasks = 1 }), want: with(func(c *counts) { c.numTasks = 1 }), ok: true},
		{name: "two GRES, task counts disagree", perJob: "gres:gpu:4,gres:foo:6", perTask: "gres:gpu:2,gres:foo:2", in: unset},
		{name: "two GRES, task counts agree", perJob: "gres:gpu:4,gres:foo:6", perTask: "gres:gpu:2,gres:foo:3", in: unset,
			want: with(func(c *counts) { c.numTasks = 2 }), ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{CPUsPerTres: tc.cpus, TresPerJob: tc.perJob, TresPerNode: tc.perNode, TresPerSocket: tc.perSocket,
				TresPerTask: tc.perTask, NumTasks: tc.in.numTasks, MinNodes: tc.in.minNodes, MaxNodes: tc.in.maxNodes,
				NTasksPerNode: tc.in.perNode, NTasksPerSocket: tc.in.perSocket, CPUsPerTask: tc.in.cpusPerTask,
				SocketsPerNode: tc.in.spn}
			ok := gresTestCounts(j)
			if ok != tc.ok {
				t.Fatalf("accepted %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			got := counts{j.NumTasks, j.MinNodes, j.MaxNodes, j.NTasksPerNode, j.NTasksPerSocket, j.CPUsPerTask, j.SocketsPerNode}
			if got != tc.want {
				t.Errorf("counts %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A job asking for a site GRES per task over the job gets its task count
// from them at submission (as --gpus with --gpus-per-task did), and job
// info shows its requests as given; contradicting counts are refused with
// ESLURM_INVALID_GRES.
func TestSubmitSiteGresPerTask(t *testing.T) {
	cl := gresTestCluster()
	cl.Nodes[0].Gres = append(cl.Nodes[0].Gres, sched.Gres{Name: "foo", Count: 8})
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TresPerJob, d.TresPerTask = msg.Str("gres:foo:4"), msg.Str("gres:foo:2")
	id := mustSubmit(t, m, cl, d, alice, t0)
	j := m.Job(id)
	if j.NumTasks != 2 {
		t.Errorf("NumTasks %d, want 2", j.NumTasks)
	}
	ji := m.Info(j, cl, len(cl.Nodes), 0, t0)
	if ji.NumTasks != 2 || ji.TresPerTask.Value != "gres:foo:2" || ji.TresPerJob.Value != "gres:foo:4" {
		t.Errorf("job info: tasks %d per task %q per job %q", ji.NumTasks, ji.TresPerTask.Value, ji.TresPerJob.Value)
	}
	bad := batchDesc(alice)
	bad.TresPerJob, bad.TresPerTask, bad.NumTasks = msg.Str("gres:foo:4"), msg.Str("gres:foo:2"), 3
	if _, _, err := m.Submit(bad, alice, cl, t0); code(err) != slurmerr.ESLURM_INVALID_GRES {
		t.Errorf("contradicting counts: %v, want ESLURM_INVALID_GRES", err)
	}
}

// scontrol update of a pending job's GRES requests checks them with the
// counts the job record keeps (0 for a task count never given, so per
// task alone passes and per job / per task must match 0), and takes what
// they imply: the task count from per job / per task on a job with -n;
// contradicting counts and a job no longer pending are refused and
// change nothing.
func TestUpdateSiteGresPerTask(t *testing.T) {
	cl := gresTestCluster()
	cl.Nodes[0].Gres = append(cl.Nodes[0].Gres, sched.Gres{Name: "foo", Count: 8})
	m := newTestManager(nil)
	held := func(tasks uint32) *Job {
		d := batchDesc(alice)
		d.Priority, d.NumTasks = 0, tasks
		return m.Job(mustSubmit(t, m, cl, d, alice, t0))
	}
	update := func(j *Job, f func(*msg.JobDesc)) error {
		u := msg.NewJobDesc()
		u.JobID = j.ID
		f(u)
		_, err := m.Update(u, root, cl, t0+1)
		return err
	}
	j := held(NoVal)
	if err := update(j, func(u *msg.JobDesc) {
		u.TresPerJob, u.TresPerTask = msg.Str("gres:foo:6"), msg.Str("gres:foo:2")
	}); code(err) != slurmerr.ESLURM_INVALID_GRES || j.TresPerJob != "" {
		t.Errorf("per job + per task without -n: %v, per job %q; want ESLURM_INVALID_GRES", err, j.TresPerJob)
	}
	if err := update(j, func(u *msg.JobDesc) { u.TresPerTask = msg.Str("gres:foo:2") }); err != nil || j.TresPerTask != "gres:foo:2" {
		t.Errorf("per task alone without -n: %v, per task %q", err, j.TresPerTask)
	}
	if err := update(j, func(u *msg.JobDesc) { u.TresPerTask = msg.Str("") }); err != nil || j.TresPerTask != "" {
		t.Errorf("clearing: %v, per task %q", err, j.TresPerTask)
	}
	// Cleared is an empty string in job info (scontrol: "TresPerTask="),
	// unset a NULL one.
	if ji := m.Info(j, cl, len(cl.Nodes), 0, t0+1); !ji.TresPerTask.Valid || ji.TresPerTask.Value != "" || ji.TresPerSocket.Valid {
		t.Errorf("job info per task %+v, per socket %+v", ji.TresPerTask, ji.TresPerSocket)
	}
	n3 := held(3)
	if err := update(n3, func(u *msg.JobDesc) {
		u.TresPerJob, u.TresPerTask = msg.Str("gres:foo:6"), msg.Str("gres:foo:2")
	}); err != nil || n3.NumTasks != 3 || n3.TresPerJob != "gres:foo:6" {
		t.Errorf("-n3 per job 6 per task 2: %v, tasks %d per job %q", err, n3.NumTasks, n3.TresPerJob)
	}

	// A job without -N keeps a max node count of 0, which no per job /
	// per node count fits.
	d := batchDesc(alice)
	d.Priority, d.TresPerNode = 0, msg.Str("gres:foo:2")
	c := m.Job(mustSubmit(t, m, cl, d, alice, t0))
	if err := update(c, func(u *msg.JobDesc) { u.TresPerJob = msg.Str("gres:foo:4") }); code(err) != slurmerr.ESLURM_INVALID_GRES || c.MinNodes != 1 {
		t.Errorf("per job 4 over per node 2 without -N: %v, min nodes %d; want ESLURM_INVALID_GRES", err, c.MinNodes)
	}

	// Sockets per node come from the request (ReqSockets=) only.
	s := held(2)
	if err := update(s, func(u *msg.JobDesc) {
		u.SocketsPerNode, u.TresPerSocket = 2, msg.Str("gres:foo:1")
	}); err != nil || s.SocketsPerNode != 2 || s.TresPerSocket != "gres:foo:1" {
		t.Errorf("ReqSockets=2 per socket 1: %v, sockets %d per socket %q", err, s.SocketsPerNode, s.TresPerSocket)
	}

	k := held(3)
	before := tableJSON(t, m)
	err := update(k, func(u *msg.JobDesc) { u.TresPerJob, u.TresPerTask = msg.Str("gres:foo:4"), msg.Str("gres:foo:2") })
	if code(err) != slurmerr.ESLURM_INVALID_GRES {
		t.Errorf("contradicting counts: %v, want ESLURM_INVALID_GRES", err)
	}
	if after := tableJSON(t, m); after != before {
		t.Errorf("a refused update changed the table")
	}

	r := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	mustSchedule(t, m, cl, t0+1)
	if err := update(m.Job(r), func(u *msg.JobDesc) { u.TresPerTask = msg.Str("gres:foo:1") }); code(err) != slurmerr.ESLURM_JOB_NOT_PENDING {
		t.Errorf("running job: %v, want ESLURM_JOB_NOT_PENDING", err)
	}
}

// Only GRES of GresTypes may be asked for, at submission and in an
// update (_get_next_job_gres): another name, or a request that does not
// read, is refused with ESLURM_INVALID_GRES and changes nothing.
func TestGresNamesOfGresTypes(t *testing.T) {
	cl := gresTestCluster()
	m := newTestManager(nil)
	m.cfg.GresTypes = []string{"gpu", "foo"}
	for _, tres := range []string{"gres:bar:1", "gres:foo:a:b:c", "gres:gpu:1,gres:baz:2"} {
		d := batchDesc(alice)
		d.TresPerNode = msg.Str(tres)
		if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_INVALID_GRES {
			t.Errorf("submit --gres=%s: %v, want ESLURM_INVALID_GRES", tres, err)
		}
	}
	d := batchDesc(alice)
	d.Priority, d.NumTasks, d.TresPerNode = 0, 2, msg.Str("gres:foo:2")
	j := m.Job(mustSubmit(t, m, cl, d, alice, t0))
	before := tableJSON(t, m)
	u := msg.NewJobDesc()
	u.JobID, u.TresPerTask = j.ID, msg.Str("gres:bar:1")
	if _, err := m.Update(u, root, cl, t0+1); code(err) != slurmerr.ESLURM_INVALID_GRES {
		t.Errorf("update TresPerTask=gres:bar:1: %v, want ESLURM_INVALID_GRES", err)
	}
	if tableJSON(t, m) != before {
		t.Errorf("a refused update changed the table")
	}
}

// Tasks per node or socket, asked for (TasksPerNode=) or implied by a
// GRES update, go through _update_job's handlers: an operator's are
// taken, a user's refused with ESLURM_ACCESS_DENIED after the GRES
// strings are stored, leaving the task counts as they were.
func TestUpdateGresTasksPerNodeNeedsOperator(t *testing.T) {
	cl := gresTestCluster()
	cl.Nodes[0].Gres = append(cl.Nodes[0].Gres, sched.Gres{Name: "foo", Count: 8})
	m := newTestManager(nil)
	held := func() *Job {
		d := batchDesc(alice)
		d.Priority, d.NumTasks = 0, 2
		return m.Job(mustSubmit(t, m, cl, d, alice, t0))
	}
	update := func(j *Job, c Caller, f func(*msg.JobDesc)) error {
		u := msg.NewJobDesc()
		u.JobID = j.ID
		f(u)
		_, err := m.Update(u, c, cl, t0+1)
		return err
	}
	implied := func(u *msg.JobDesc) { u.TresPerNode, u.TresPerTask = msg.Str("gres:foo:4"), msg.Str("gres:foo:2") }
	j := held()
	before := j.NTasksPerNode
	if err := update(j, alice, implied); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Errorf("user, implied tasks per node: %v, want ESLURM_ACCESS_DENIED", err)
	}
	if j.NTasksPerNode != before || j.TresPerNode != "gres:foo:4" {
		t.Errorf("user: tasks per node %d (was %d), per node %q", j.NTasksPerNode, before, j.TresPerNode)
	}
	k := held()
	if err := update(k, alice, func(u *msg.JobDesc) { u.NtasksPerNode = 7 }); code(err) != slurmerr.ESLURM_ACCESS_DENIED || k.NTasksPerNode != before {
		t.Errorf("user TasksPerNode=7: %v, tasks per node %d", err, k.NTasksPerNode)
	}
	if err := update(k, alice, func(u *msg.JobDesc) { u.TresPerNode = msg.Str("gres:foo:1") }); err != nil {
		t.Errorf("user, GRES update implying nothing: %v", err)
	}
	if err := update(k, root, implied); err != nil || k.NTasksPerNode != 2 {
		t.Errorf("root, implied tasks per node: %v, tasks per node %d", err, k.NTasksPerNode)
	}
	if err := update(k, root, func(u *msg.JobDesc) { u.TresPerNode, u.TresPerTask = msg.Str(""), msg.Str(""); u.NtasksPerNode = 3 }); err != nil || k.NTasksPerNode != 3 {
		t.Errorf("root TasksPerNode=3: %v, tasks per node %d", err, k.NTasksPerNode)
	}
}

// The GRES counts are checked after the partition has raised the job's
// node count: --gpus=1 in a MinNodes=2 partition is fewer GPUs than
// nodes (ESLURM_INVALID_GRES), and uses no job id.
func TestSubmitGresAfterPartitionMinNodes(t *testing.T) {
	cl := testCluster()
	for i := range cl.Partitions {
		cl.Partitions[i].MinNodes = 2
	}
	cl.GresRecs = make([][]gres.Record, len(cl.Nodes))
	for i := range cl.Nodes {
		cl.Nodes[i].Gres = []sched.Gres{{Name: "gpu", Count: 2}}
		cl.GresRecs[i] = []gres.Record{{Name: "gpu", Count: 2, HasFile: true}}
	}
	m := newTestManager(nil)
	m.cfg.GresTypes = []string{"gpu"}
	d := batchDesc(alice)
	d.TresPerJob = msg.Str("gres:gpu:1")
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_INVALID_GRES {
		t.Errorf("--gpus=1, partition MinNodes=2: %v, want ESLURM_INVALID_GRES", err)
	}
	d = batchDesc(alice)
	d.TresPerJob = msg.Str("gres:gpu:2")
	if j := m.Job(mustSubmit(t, m, cl, d, alice, t0)); j.MinNodes != 2 {
		t.Errorf("--gpus=2: min nodes %d, want 2", j.MinNodes)
	}
}

// Job GRES strings are read as _get_next_gres reads them: zero counts are
// left out before the name is looked at, an empty type or count is
// refused, "gres/" is not a GRES; --mem-per-gpu needs a gpu asked for in
// the same request.
func TestJobGresParse(t *testing.T) {
	cl := gresTestCluster()
	cl.Nodes[0].Gres = append(cl.Nodes[0].Gres, sched.Gres{Name: "foo", Count: 8})
	m := newTestManager(nil)
	m.cfg.GresTypes = []string{"gpu", "foo"}
	for _, tc := range []struct {
		field, val string
		ok         bool
	}{
		{"node", "gres:bogus:0", true},
		{"node", "gres:foo:", false},
		{"node", "gres:foo::1", false},
		{"node", "gres:foo:t:", false},
		{"node", "gres/bogus:1", true},
		{"node", "gres:bogus:1", false},
		{"mem", "gres:gpu:100", false},
		{"mem+gpu", "gres:gpu:100", true},
	} {
		d := batchDesc(alice)
		d.Priority = 0
		switch tc.field {
		case "node":
			d.TresPerNode = msg.Str(tc.val)
		case "mem":
			d.MemPerTres = msg.Str(tc.val)
		case "mem+gpu":
			d.MemPerTres, d.TresPerNode = msg.Str(tc.val), msg.Str("gres:gpu:1")
		}
		_, _, err := m.Submit(d, alice, cl, t0)
		if tc.ok && err != nil || !tc.ok && code(err) != slurmerr.ESLURM_INVALID_GRES {
			t.Errorf("%s %q: %v (accepted: %v)", tc.field, tc.val, err, tc.ok)
		}
	}
	d := batchDesc(alice)
	d.Priority, d.TresPerJob = 0, msg.Str("gres:gpu:1")
	j := m.Job(mustSubmit(t, m, cl, d, alice, t0))
	u := msg.NewJobDesc()
	u.JobID, u.MemPerTres = j.ID, msg.Str("gres:gpu:100")
	if _, err := m.Update(u, root, cl, t0+1); code(err) != slurmerr.ESLURM_INVALID_GRES || j.MemPerTres != "" {
		t.Errorf("update MemPerTres alone: %v, mem per tres %q", err, j.MemPerTres)
	}
}

// GRES per task with a task count make the record's GRES per job (tasks
// x per task): fewer than the minimum node count is refused, and the
// maximum node count comes down to it.
func TestGresPerTaskMakesPerJob(t *testing.T) {
	j := &Job{TresPerTask: "gres:foo:1", NumTasks: 2, MinNodes: 3, MaxNodes: 3, NTasksPerNode: NoVal16,
		NTasksPerSocket: infinite16, CPUsPerTask: NoVal16, SocketsPerNode: NoVal16}
	if gresTestCounts(j) {
		t.Errorf("-N3 -n2, 1 per task: accepted")
	}
	k := &Job{TresPerTask: "gres:foo:1", NumTasks: 2, MinNodes: 1, MaxNodes: 4, NTasksPerNode: NoVal16,
		NTasksPerSocket: infinite16, CPUsPerTask: NoVal16, SocketsPerNode: NoVal16}
	if !gresTestCounts(k) || k.MaxNodes != 2 {
		t.Errorf("-N1-4 -n2, 1 per task: max nodes %d, want 2", k.MaxNodes)
	}
}

// A GRES asked for with and without a type, the untyped one with a
// count, is ESLURM_INVALID_GRES_TYPE; an untyped one giving only cpus
// per GRES merges into the typed one.
func TestGresTypeMixed(t *testing.T) {
	cl := gresTestCluster()
	m := newTestManager(nil)
	m.cfg.GresTypes = []string{"gpu"}
	d := batchDesc(alice)
	d.Priority, d.TresPerNode = 0, msg.Str("gres:gpu:2,gres:gpu:tesla:1")
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_INVALID_GRES_TYPE {
		t.Errorf("gpu:2,gpu:tesla:1: %v, want ESLURM_INVALID_GRES_TYPE", err)
	}
	d = batchDesc(alice)
	d.Priority, d.TresPerNode, d.CPUsPerTres = 0, msg.Str("gres:gpu:tesla:1"), msg.Str("gres:gpu:1")
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) == slurmerr.ESLURM_INVALID_GRES_TYPE {
		t.Errorf("cpus per gpu with gpu:tesla:1: %v", err)
	}
}
