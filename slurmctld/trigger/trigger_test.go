package trigger

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// fakeCluster has nodes n1..n4 (indexes 0..3) and some jobs.
type fakeCluster struct {
	jobs     map[uint32]Job
	idle     []int
	lastBusy int64
}

var names = []string{"n1", "n2", "n3", "n4"}

func (f *fakeCluster) NodeBitmap(list string) (*bitset.BitSet, bool) {
	b := bitset.New(4)
	for _, n := range strings.Split(list, ",") {
		i := -1
		for k, name := range names {
			if name == n {
				i = k
			}
		}
		if i < 0 {
			return nil, false
		}
		b.Set(uint(i))
	}
	return b, true
}

func (f *fakeCluster) NodeNames(b *bitset.BitSet) string {
	var out []string
	for i, ok := b.NextSet(0); ok; i, ok = b.NextSet(i + 1) {
		out = append(out, names[i])
	}
	return strings.Join(out, ",")
}

func (f *fakeCluster) Job(id uint32) (Job, bool) { j, ok := f.jobs[id]; return j, ok }

func (f *fakeCluster) IdleNodes(minIdle int64) *bitset.BitSet {
	b := bitset.New(4)
	if f.lastBusy <= minIdle {
		for _, i := range f.idle {
			b.Set(uint(i))
		}
	}
	return b
}

func nodes(idx ...uint) *bitset.BitSet {
	b := bitset.New(4)
	for _, i := range idx {
		b.Set(i)
	}
	return b
}

// trig builds a set request's trigger.
func trig(res uint16, resID string, typ uint32, offset int, program string) msg.Trigger {
	t := msg.Trigger{ResType: res, TrigType: typ, Offset: uint16(OffsetZero + offset), UserID: noVal, Program: msg.Str(program)}
	if resID != "" {
		t.ResID = msg.Str(resID)
	}
	return t
}

func set(m *Manager, cl Cluster, uid uint32, ts ...msg.Trigger) int {
	return m.Set(SetRequest{UID: uid, GID: uid, MaxJobCount: 10, Triggers: ts,
		Runnable: func(p string, _, _ uint32) bool { return !strings.HasPrefix(p, "/bad") }}, cl, func(string) {})
}

func TestSetRules(t *testing.T) {
	cl := &fakeCluster{jobs: map[uint32]Job{5: {}, 6: {Finished: true}}}
	tests := []struct {
		name     string
		uid      uint32
		slurmUID uint32
		max      uint32
		in       msg.Trigger
		want     int
	}{
		{"node", 0, 0, 10, trig(ResNode, "n1", TypeDown, 0, "/p"), 0},
		{"all nodes", 0, 0, 10, trig(ResNode, "*", TypeDown, 0, "/p"), 0},
		{"unknown node", 0, 0, 10, trig(ResNode, "n9", TypeDown, 0, "/p"), slurmerr.ESLURM_INVALID_NODE_NAME},
		{"job", 0, 0, 10, trig(ResJob, "5", TypeFini, 0, "/p"), 0},
		{"unknown job", 0, 0, 10, trig(ResJob, "7", TypeFini, 0, "/p"), slurmerr.ESLURM_INVALID_JOB_ID},
		{"finished job", 0, 0, 10, trig(ResJob, "6", TypeFini, 0, "/p"), slurmerr.ESLURM_ALREADY_DONE},
		{"program", 0, 0, 10, trig(ResNode, "*", TypeDown, 0, "/bad"), slurmerr.ESLURM_ACCESS_DENIED},
		{"dbd without dbd", 0, 0, 10, trig(ResSlurmdbd, "", TypePriDbdFail, 0, "/p"), 0},
		{"user, SlurmUser root", 1000, 0, 10, trig(ResNode, "*", TypeDown, 0, "/p"), 0},
		{"user, SlurmUser not root", 1000, 500, 10, trig(ResNode, "*", TypeDown, 0, "/p"), slurmerr.ESLURM_ACCESS_DENIED},
		{"root, SlurmUser not root", 0, 500, 10, trig(ResNode, "*", TypeDown, 0, "/p"), slurmerr.ESLURM_ACCESS_DENIED},
		{"SlurmUser", 500, 500, 10, trig(ResNode, "*", TypeDown, 0, "/p"), 0},
		{"limit", 1000, 0, 1, trig(ResNode, "*", TypeDown, 0, "/p"), errnoEAGAIN},
		{"limit, root", 0, 0, 1, trig(ResNode, "*", TypeDown, 0, "/p"), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			set(m, cl, 0, trig(ResNode, "n4", TypeUp, 0, "/q"))
			rc := m.Set(SetRequest{UID: tc.uid, GID: tc.uid, SlurmUID: tc.slurmUID, MaxJobCount: tc.max, Triggers: []msg.Trigger{tc.in},
				Runnable: func(p string, _, _ uint32) bool { return p != "/bad" }}, cl, func(string) {})
			if rc != tc.want {
				t.Fatalf("rc %d, want %d", rc, tc.want)
			}
			if got := len(m.Get()); (rc == 0) != (got == 2) {
				t.Errorf("%d triggers after rc %d", got, rc)
			}
		})
	}
}

func TestSetDuplicateAndIDs(t *testing.T) {
	m, cl := New(), &fakeCluster{}
	a := trig(ResNode, "n1", TypeDown, 0, "/p")
	if rc := set(m, cl, 0, a); rc != 0 {
		t.Fatal(rc)
	}
	if rc := set(m, cl, 0, a); rc != slurmerr.ESLURM_TRIGGER_DUP {
		t.Fatalf("duplicate: %d", rc)
	}
	// Another owner is not a duplicate; a refused program uses an id.
	if rc := set(m, cl, 7, a); rc != 0 {
		t.Fatal(rc)
	}
	if rc := set(m, cl, 0, trig(ResNode, "n1", TypeDown, 0, "/bad")); rc != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatal(rc)
	}
	set(m, cl, 0, trig(ResNode, "n2", TypeDown, 0, "/p"))
	var ids []uint32
	for _, g := range m.Get() {
		ids = append(ids, g.TrigID)
	}
	if d := cmp.Diff([]uint32{1, 2, 4}, ids); d != "" {
		t.Error(d)
	}
}

func TestClear(t *testing.T) {
	cl := &fakeCluster{jobs: map[uint32]Job{5: {}}}
	tests := []struct {
		name string
		uid  uint32
		in   msg.Trigger
		want int
		left int
	}{
		{"by id", 0, msg.Trigger{TrigID: 1, UserID: noVal}, 0, 2},
		{"unknown id", 0, msg.Trigger{TrigID: 9, UserID: noVal}, errnoESRCH, 3},
		{"other's", 7, msg.Trigger{TrigID: 1, UserID: noVal}, slurmerr.ESLURM_ACCESS_DENIED, 3},
		{"own by user", 7, msg.Trigger{UserID: 7}, 0, 2},
		{"by job", 0, msg.Trigger{ResType: ResJob, ResID: msg.Str("5"), UserID: noVal}, 0, 2},
		{"bad job", 0, msg.Trigger{ResType: ResJob, ResID: msg.Str("x"), UserID: noVal}, slurmerr.ESLURM_INVALID_JOB_ID, 3},
		{"nothing named", 0, msg.Trigger{UserID: noVal}, errnoEINVAL, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			set(m, cl, 0, trig(ResNode, "n1", TypeDown, 0, "/p"))
			set(m, cl, 0, trig(ResJob, "5", TypeFini, 0, "/p"))
			set(m, cl, 7, trig(ResNode, "n2", TypeDown, 0, "/p"))
			seq := m.Seq()
			if rc := m.Clear(tc.uid, []msg.Trigger{tc.in}); rc != tc.want {
				t.Fatalf("rc %d, want %d", rc, tc.want)
			}
			if n := len(m.Get()); n != tc.left {
				t.Errorf("%d left, want %d", n, tc.left)
			}
			// Only a deletion is worth a save (each costs an fsync
			// before the reply).
			if saved := m.Seq() != seq; saved != (tc.left < 3) {
				t.Errorf("save asked %v after %d left", saved, tc.left)
			}
		})
	}
}

// pass runs a pass and returns each launch as "argv... uid".
func pass(m *Manager, now int64, cl Cluster) []string {
	var out []string
	for _, l := range m.Process(now, cl) {
		out = append(out, strings.Join(l.Argv, " "))
	}
	return out
}

func TestProcessNodeEvents(t *testing.T) {
	tests := []struct {
		name   string
		set    []msg.Trigger
		events func(m *Manager)
		want   []string
	}{
		{"down, one node", []msg.Trigger{trig(ResNode, "n1,n2", TypeDown, 0, "/x/p a")},
			func(m *Manager) { m.NodeDown(1); m.NodeDown(2) }, []string{"p a n2"}},
		{"down, all nodes", []msg.Trigger{trig(ResNode, "*", TypeDown, 0, "/p")},
			func(m *Manager) { m.NodeDown(1); m.NodeDown(2) }, []string{"p n2,n3"}},
		{"down, other node", []msg.Trigger{trig(ResNode, "n1", TypeDown, 0, "/p")},
			func(m *Manager) { m.NodeDown(3) }, nil},
		{"up", []msg.Trigger{trig(ResNode, "*", TypeUp, 0, "/p")},
			func(m *Manager) { m.NodeUp(0) }, []string{"p n1"}},
		{"drained", []msg.Trigger{trig(ResNode, "n3", TypeDrained, 0, "/p")},
			func(m *Manager) { m.NodeDrained(2) }, []string{"p n3"}},
		{"reconfig", []msg.Trigger{trig(ResNode, "*", TypeReconfig, 0, "/p")},
			func(m *Manager) { m.Reconfig() }, []string{"p reconfig"}},
		{"offset delays", []msg.Trigger{trig(ResNode, "*", TypeDown, 100, "/p")},
			func(m *Manager) { m.NodeDown(0) }, nil},
		{"controller", []msg.Trigger{trig(ResSlurmctld, "", TypePriCtldResOp, 0, "/p")},
			func(m *Manager) { m.PrimaryCtldResOp() }, []string{"p primary_slurmctld_resumed_operation"}},
		{"controller, other event", []msg.Trigger{trig(ResSlurmctld, "", TypePriCtldFail, 0, "/p")},
			func(m *Manager) { m.PrimaryCtldResOp() }, nil},
		{"backup took over", []msg.Trigger{trig(ResSlurmctld, "", TypeBuCtldAsCtrl, 0, "/p"), trig(ResSlurmctld, "", TypePriCtldFail, 0, "/p")},
			func(m *Manager) { m.PrimaryCtldFail(); m.BackupCtldAsCtrl() },
			[]string{"p backup_slurmctld_assumed_control", "p primary_slurmctld_failure"}},
		{"idle, all nodes, none idle", []msg.Trigger{trig(ResNode, "*", TypeIdle, 0, "/p")},
			func(*Manager) {}, []string{"p "}},
		{"63 words", []msg.Trigger{trig(ResNode, "*", TypeReconfig, 0, "/p"+strings.Repeat(" w", 62))},
			func(m *Manager) { m.Reconfig() }, []string{"p" + strings.Repeat(" w", 62)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cl := New(), &fakeCluster{}
			if rc := set(m, cl, 0, tc.set...); rc != 0 {
				t.Fatal(rc)
			}
			tc.events(m)
			if d := cmp.Diff(tc.want, pass(m, 1000, cl)); d != "" {
				t.Errorf("first pass (-want +got):\n%s", d)
			}
			// The events are consumed: nothing more fires.
			if got := pass(m, 1000+Interval, cl); len(got) != 0 && !strings.Contains(tc.name, "offset") {
				t.Errorf("second pass fired %q", got)
			}
		})
	}
}

func TestProcessOffsetAndPerm(t *testing.T) {
	m, cl := New(), &fakeCluster{}
	set(m, cl, 0, trig(ResNode, "n1", TypeDown, 20, "/p"), trig(ResNode, "n1,n2", TypeDown, 0, "/perm"))
	m.list[1].Flags = FlagPerm
	m.NodeDown(0)
	if d := cmp.Diff([]string{"perm n1"}, pass(m, 1000, cl)); d != "" {
		t.Error(d)
	}
	// The permanent trigger is pending again, first in the table, as set.
	got := m.Get()
	if len(got) != 1 || got[0].TrigID != 2 || got[0].ResID.Value != "n1,n2" {
		t.Errorf("listing after the pass: %+v", got)
	}
	if d := cmp.Diff([]string(nil), pass(m, 1015, cl)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"p n1"}, pass(m, 1020, cl)); d != "" {
		t.Error(d)
	}
	// Fired triggers are forgotten after MaxProgTime.
	if n := len(m.list); n != 3 {
		t.Errorf("%d entries before the purge", n)
	}
	pass(m, 1020+MaxProgTime+1, cl)
	if n := len(m.list); n != 1 {
		t.Errorf("%d entries after the purge", n)
	}
}

func TestProcessJobEvents(t *testing.T) {
	running := Job{EndTime: 2000, Nodes: nodes(1)}
	tests := []struct {
		name string
		typ  uint32
		off  int
		job  Job
		gone bool
		ev   func(m *Manager)
		want []string
	}{
		{"fini, running", TypeFini, 0, running, false, nil, nil},
		{"fini, completing", TypeFini, 0, Job{Finished: true, EndTime: 900}, false, nil, nil},
		{"fini, completed", TypeFini, 0, Job{Finished: true, Completed: true, EndTime: 900}, false, nil, []string{"p 5"}},
		{"fini, purged", TypeFini, 0, Job{}, true, nil, []string{"p 5"}},
		{"time, far", TypeTime, -60, running, false, nil, nil},
		{"time, near", TypeTime, -1000, running, false, nil, []string{"p 5"}},
		{"time, pending", TypeTime, -1000, Job{Pending: true, EndTime: 2000}, false, nil, nil},
		{"down on its node", TypeDown, 0, running, false, func(m *Manager) { m.NodeDown(1) }, []string{"p 5"}},
		{"down elsewhere", TypeDown, 0, running, false, func(m *Manager) { m.NodeDown(2) }, nil},
		{"up, offset the other way", TypeUp, -5, running, false, func(m *Manager) { m.NodeUp(1) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := &fakeCluster{jobs: map[uint32]Job{5: {EndTime: 5000}}}
			m := New()
			if rc := set(m, cl, 0, trig(ResJob, "5", tc.typ, tc.off, "/p")); rc != 0 {
				t.Fatal(rc)
			}
			if tc.gone {
				delete(cl.jobs, 5)
			} else {
				cl.jobs[5] = tc.job
			}
			if tc.ev != nil {
				tc.ev(m)
			}
			if d := cmp.Diff(tc.want, pass(m, 1000, cl)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestPull(t *testing.T) {
	m, cl := New(), &fakeCluster{}
	set(m, cl, 0, trig(ResSlurmdbd, "", TypePriDbdFail, 0, "/p"))
	if rc := m.Pull([]msg.Trigger{{ResType: ResNode}}); rc != errnoEINVAL {
		t.Errorf("node pull: %d", rc)
	}
	if rc := m.Pull([]msg.Trigger{{ResType: ResSlurmdbd, TrigType: TypePriDbdFail}}); rc != 0 {
		t.Fatal(rc)
	}
	if d := cmp.Diff([]string{"p primary_slurmdbd_failure"}, pass(m, 1000, cl)); d != "" {
		t.Error(d)
	}
	// A failure is signalled once until the resumption.
	set(m, cl, 0, trig(ResSlurmdbd, "", TypePriDbdFail, 0, "/q"))
	m.Pull([]msg.Trigger{{ResType: ResSlurmdbd, TrigType: TypePriDbdFail}})
	if got := pass(m, 1020, cl); len(got) != 0 {
		t.Errorf("second failure fired %q", got)
	}
}

func TestStateRoundTrip(t *testing.T) {
	cl := &fakeCluster{jobs: map[uint32]Job{5: {}}}
	m := New()
	set(m, cl, 0, trig(ResNode, "n1,n2", TypeDown, 30, "/p a"), trig(ResJob, "5", TypeFini, 0, "/p"),
		trig(ResSlurmctld, "", TypePriCtldFail, 0, "/p"))
	m.PrimaryCtldFail() // pull state saved
	s, _ := m.Snapshot()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	r := New()
	if n, err := r.Restore(&back, cl); n != 3 || err != nil {
		t.Fatalf("restore: %d, %v", n, err)
	}
	if d := cmp.Diff(m.Get(), r.Get()); d != "" {
		t.Errorf("listing differs (-saved +restored):\n%s", d)
	}
	if r.ctldFailure != 1 || r.nextID != 4 {
		t.Errorf("ctldFailure %d nextID %d", r.ctldFailure, r.nextID)
	}
	// A pending job trigger whose job is gone cannot be restored.
	delete(cl.jobs, 5)
	if n, err := New().Restore(&back, cl); err == nil || n != 1 {
		t.Errorf("job gone: %d, %v", n, err)
	}
}

func TestExecutable(t *testing.T) {
	tests := []struct {
		perm, fuid, fgid, uid, gid uint32
		want                       bool
	}{
		{0o700, 1, 1, 1, 2, true},
		{0o070, 1, 1, 1, 1, false}, // the owner class decides for the owner
		{0o010, 1, 2, 3, 2, true},
		{0o001, 1, 2, 3, 4, true},
		{0o770, 1, 2, 3, 4, false},
	}
	for _, tc := range tests {
		if got := Executable(tc.perm, tc.fuid, tc.fgid, tc.uid, tc.gid); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
}
