package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func TestSubmitRejections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller Caller
		edit   func(d *msg.JobDesc)
		enf    EnforcePartLimits
		want   int
	}{
		{"ok", alice, func(d *msg.JobDesc) {}, EnforceNo, 0},
		{"other uid in body", alice, func(d *msg.JobDesc) { d.UserID = 0 }, EnforceNo, slurmerr.ESLURM_USER_ID_MISSING},
		{"other gid in body", alice, func(d *msg.JobDesc) { d.GroupID = 0 }, EnforceNo, slurmerr.ESLURM_GROUP_ID_MISSING},
		{"root submits for alice", root, func(d *msg.JobDesc) { d.UserID, d.GroupID = 1000, 1000 }, EnforceNo, 0},
		{"no script", alice, func(d *msg.JobDesc) { d.Script = msg.NullString{} }, EnforceNo, slurmerr.ESLURM_JOB_SCRIPT_MISSING},
		{"no environment", alice, func(d *msg.JobDesc) { d.Environment = nil }, EnforceNo, slurmerr.ESLURM_ENVIRONMENT_MISSING},
		{"bad partition", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("nope") }, EnforceNo, slurmerr.ESLURM_INVALID_PARTITION_NAME},
		{"root only", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("rootonly") }, EnforceNo, slurmerr.ESLURM_ACCESS_DENIED},
		{"root only as root", root, func(d *msg.JobDesc) { d.Partition = msg.Str("rootonly") }, EnforceNo, 0},
		{"allow groups member", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("grp") }, EnforceNo, 0},
		{"allow groups outsider", bob, func(d *msg.JobDesc) { d.Partition = msg.Str("grp") }, EnforceNo, slurmerr.ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP},
		{"unknown node", alice, func(d *msg.JobDesc) { d.ReqNodes = msg.Str("n9") }, EnforceNo, slurmerr.ESLURM_INVALID_NODE_NAME},
		{"node list over max nodes", alice, func(d *msg.JobDesc) { d.ReqNodes = msg.Str("n[1-3]"); d.MaxNodes = 2 }, EnforceNo, slurmerr.ESLURM_INVALID_NODE_COUNT},
		{"min over max", alice, func(d *msg.JobDesc) { d.MinNodes, d.MaxNodes = 3, 2 }, EnforceNo, slurmerr.ESLURM_INVALID_NODE_COUNT},
		// Real 22.05 queues it (PartitionConfig) unless limits are
		// enforced (TestSlurmctldSubmitChecksDiff).
		{"more nodes than exist", alice, func(d *msg.JobDesc) { d.MinNodes = 9 }, EnforceNo, 0},
		{"more nodes than exist enforced", alice, func(d *msg.JobDesc) { d.MinNodes = 9 }, EnforceAny, slurmerr.ESLURM_INVALID_NODE_COUNT},
		{"over MaxTime waits", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short"); d.TimeLimit = 60 }, EnforceNo, 0},
		{"over MaxTime enforced", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short"); d.TimeLimit = 60 }, EnforceAll, slurmerr.ESLURM_INVALID_TIME_LIMIT},
		{"over MaxNodes enforced", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short"); d.MinNodes, d.MaxNodes = 2, 3 }, EnforceAll, slurmerr.ESLURM_INVALID_NODE_COUNT},
		{"any partition fits", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short,debug"); d.TimeLimit = 60 }, EnforceAny, 0},
		{"nodes not in partition", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short"); d.ReqNodes = msg.Str("n4") }, EnforceAll, slurmerr.ESLURM_REQUESTED_NODES_NOT_IN_PARTITION},
		{"bad array", alice, func(d *msg.JobDesc) { d.ArrayInx = msg.Str("5-1") }, EnforceNo, slurmerr.ESLURM_INVALID_ARRAY},
		{"array too big", alice, func(d *msg.JobDesc) { d.ArrayInx = msg.Str("0-5000") }, EnforceNo, slurmerr.ESLURM_INVALID_ARRAY},
		{"bad dependency", alice, func(d *msg.JobDesc) { d.Dependency = msg.Str("afterok:0") }, EnforceNo, slurmerr.ESLURM_DEPENDENCY},
		// Real slurmctld accepts a job id that names no job (found by
		// TestGoslurmCommandDiff's setup).
		{"dependency on an unknown job", alice, func(d *msg.JobDesc) { d.Dependency = msg.Str("afterok:999") }, EnforceNo, 0},
		{"dependency syntax", alice, func(d *msg.JobDesc) { d.Dependency = msg.Str("afterfoo:1") }, EnforceNo, slurmerr.ESLURM_DEPENDENCY},
		{"dependency zero time", alice, func(d *msg.JobDesc) { d.Dependency = msg.Str("after:1+0") }, EnforceNo, slurmerr.ESLURM_DEPENDENCY},
		{"negative nice by user", alice, func(d *msg.JobDesc) { d.Nice = niceOff - 5 }, EnforceNo, slurmerr.ESLURM_INVALID_NICE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			m.cfg.EnforcePartLimits = tc.enf
			d := batchDesc(tc.caller)
			tc.edit(d)
			_, _, err := m.Submit(d, tc.caller, cl, t0)
			if got := code(err); got != tc.want {
				t.Fatalf("code %d (%v), want %d", got, err, tc.want)
			}
			if tc.want != 0 && m.Len() != 0 {
				t.Fatal("a rejected job entered the table")
			}
		})
	}
}

func TestNoDefaultPartition(t *testing.T) {
	cl := testCluster()
	cl.Partitions[0].Default = false
	m := newTestManager(nil)
	_, _, err := m.Submit(batchDesc(alice), alice, cl, t0)
	if code(err) != slurmerr.ESLURM_DEFAULT_PARTITION_NOT_SET {
		t.Fatal(err)
	}
}

func TestJobIDsWrap(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	m.cfg.FirstJobID, m.cfg.MaxJobID, m.nextID = 10, 13, 10
	var ids []uint32
	for i := 0; i < 3; i++ {
		ids = append(ids, mustSubmit(t, m, cl, batchDesc(alice), alice, t0))
	}
	if ids[0] != 10 || ids[1] != 11 || ids[2] != 12 {
		t.Fatalf("ids %v", ids)
	}
	if _, _, err := m.Submit(batchDesc(alice), alice, cl, t0); code(err) != slurmerr.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY {
		t.Fatalf("full id space: %v", err)
	}
	// Cancel and purge 11: the counter wraps and reuses it.
	if _, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: 11, StepID: NoVal, StepHetComp: NoVal}, Signal: 9}, alice, cl, t0); err != nil {
		t.Fatal(err)
	}
	m.Tick(cl, t0+1000)
	if m.Job(11) != nil {
		t.Fatal("not purged")
	}
	if id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0+1000); id != 11 {
		t.Fatalf("wrapped to %d", id)
	}
}

func TestHoldAndBegin(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.Priority = 0
	held := mustSubmit(t, m, cl, d, alice, t0)
	d = batchDesc(alice)
	d.BeginTime = t0 + 600
	later := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if j := m.Job(held); j.Reason != ReasonHeldUser || j.Priority != 0 || !j.Pending() {
		t.Fatalf("held: %+v", j)
	}
	if j := m.Job(later); j.Reason != ReasonBeginTime || !j.Pending() {
		t.Fatalf("begin: reason %d", j.Reason)
	}
	// Release by the owner.
	u := msg.NewJobDesc()
	u.JobID, u.Priority = held, Infinite
	if _, err := m.Update(u, alice, cl, t0); err != nil {
		t.Fatal(err)
	}
	// Admin hold: the owner cannot release it.
	u = msg.NewJobDesc()
	u.JobID, u.Priority = later, 0
	if _, err := m.Update(u, root, cl, t0); err != nil {
		t.Fatal(err)
	}
	u.Priority = Infinite
	if _, err := m.Update(u, alice, cl, t0); code(err) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("user release of admin hold: %v", err)
	}
	acts := mustSchedule(t, m, cl, t0+700)
	if len(launches(acts)) != 1 || !m.Job(held).Running() || m.Job(later).Reason != ReasonHeldAdmin {
		t.Fatalf("after release: %d launches, later reason %d", len(launches(acts)), m.Job(later).Reason)
	}
}

func TestUpdate(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	for _, tc := range []struct {
		name string
		c    Caller
		edit func(d *msg.JobDesc)
		want int
	}{
		{"other user", bob, func(d *msg.JobDesc) { d.Name = msg.Str("x") }, slurmerr.ESLURM_USER_ID_MISSING},
		{"rename", alice, func(d *msg.JobDesc) { d.Name = msg.Str("renamed") }, 0},
		{"user raises limit", alice, func(d *msg.JobDesc) { d.TimeLimit = Infinite - 2 }, 0},
		{"user lowers limit", alice, func(d *msg.JobDesc) { d.TimeLimit = 30 }, 0},
		{"user raises again within MaxTime", alice, func(d *msg.JobDesc) { d.TimeLimit = 60 }, 0},
		{"root raises", root, func(d *msg.JobDesc) { d.TimeLimit = 60 }, 0},
		{"partition", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("short") }, 0},
		{"bad partition", alice, func(d *msg.JobDesc) { d.Partition = msg.Str("nope") }, slurmerr.ESLURM_INVALID_PARTITION_NAME},
		{"nodes", alice, func(d *msg.JobDesc) { d.MinNodes = 2 }, 0},
		{"nodes inverted", alice, func(d *msg.JobDesc) { d.MinNodes, d.MaxNodes = 3, 2 }, slurmerr.ESLURM_INVALID_NODE_COUNT},
		{"user priority", alice, func(d *msg.JobDesc) { d.Priority = 5 }, slurmerr.ESLURM_PRIO_RESET_FAIL},
		{"admin priority", root, func(d *msg.JobDesc) { d.Priority = 6 }, 0},
		{"nice", alice, func(d *msg.JobDesc) { d.Nice = niceOff + 10 }, 0},
	} {
		d := msg.NewJobDesc()
		d.JobID = id
		tc.edit(d)
		if _, err := m.Update(d, tc.c, cl, t0); code(err) != tc.want {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.want)
		}
	}
	j := m.Job(id)
	if j.Name != "renamed" || j.TimeLimit != 60 || j.Partition != "" || j.PartitionReq != "short" || j.MinNodes != 2 || j.Priority != 6 {
		t.Fatalf("job %+v", j)
	}
}

// An unknown partition is refused with the text slurmctld sends with the
// code (RESPONSE_SLURM_RC_MSG): the first unknown name of the list.
func TestUnknownPartitionMessage(t *testing.T) {
	for _, tc := range []struct{ parts, want string }{
		{"nosuch", "invalid partition specified: nosuch"},
		{"debug,nosuch,other", "invalid partition specified: nosuch"},
	} {
		cl := testCluster()
		m := newTestManager(nil)
		d := batchDesc(alice)
		d.Partition = msg.Str(tc.parts)
		_, _, err := m.Submit(d, alice, cl, t0)
		if code(err) != slurmerr.ESLURM_INVALID_PARTITION_NAME || UserMessage(err) != tc.want {
			t.Errorf("-p %s: code %d, message %q; want %d, %q", tc.parts, code(err), UserMessage(err),
				slurmerr.ESLURM_INVALID_PARTITION_NAME, tc.want)
		}
	}
}
