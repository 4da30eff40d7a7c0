package ctld

import (
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// coreResv is a CoreCnt= create request.
type coreResv struct {
	name, nodes string
	nodeCnt     uint32
	cores       []uint32
	flags       uint64
	start       int64
}

func (d coreResv) body() *msg.ReservationDesc {
	b := resvDescT{name: d.name, nodes: d.nodes, users: "root", start: d.start, dur: 60, flags: d.flags, cnt: d.nodeCnt}.body()
	b.CoreCnt = append(append([]uint32(nil), d.cores...), 0)
	return b
}

func coreCreate(c *Controller, d coreResv) int {
	resp := resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, d.body())
	if _, ok := resp.Body.(*msg.ReservationName); ok {
		return 0
	}
	return resvRC(resp)
}

// coreLines is a reservation's "node:cores" lines as scontrol shows them.
func coreLines(r msg.Reservation) []string {
	var out []string
	for _, s := range r.CoreSpec {
		out = append(out, s.NodeName.Value+":"+s.CoreID.Value)
	}
	return out
}

// TestResvCoreCreate: which cores each CoreCnt= request takes on 3 nodes
// of 4 cores, and the errors of those that cannot be met.
func TestResvCoreCreate(t *testing.T) {
	const now = 1_800_000_000
	type step struct {
		d     coreResv
		rc    int
		cores []string // wanted node:cores lines
		tres  string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"nodes and core count", []step{
			{d: coreResv{name: "a", nodes: "n1", cores: []uint32{2}}, cores: []string{"n1:0-1"}, tres: "cpu=2"},
			{d: coreResv{name: "b", nodes: "n1", cores: []uint32{2}}, cores: []string{"n1:2-3"}},
			{d: coreResv{name: "c", nodes: "n1", cores: []uint32{1}}, rc: slurmerr.ESLURM_NODES_BUSY},
		}},
		{"one count for two nodes", []step{
			{d: coreResv{name: "a", nodes: "n[1-2]", cores: []uint32{2}}, rc: slurmerr.ESLURM_INVALID_CORE_CNT},
			{d: coreResv{name: "a", nodes: "n[1-2]", cores: []uint32{1, 3}}, cores: []string{"n1:0", "n2:0-2"}},
		}},
		{"more counts than nodes", []step{
			// Only the counts of as many nodes as there are decide
			// (one here: "that many cores over any nodes").
			{d: coreResv{name: "a", nodes: "n1", cores: []uint32{1, 1}}, cores: []string{"n1:0"}},
		}},
		{"core count alone spans nodes", []step{
			{d: coreResv{name: "a", cores: []uint32{6}}, cores: []string{"n1:0-3", "n2:0-1"}, tres: "cpu=6"},
			{d: coreResv{name: "b", cores: []uint32{7}}, rc: slurmerr.ESLURM_NODES_BUSY},
			{d: coreResv{name: "b", cores: []uint32{6}}, cores: []string{"n2:2-3", "n3:0-3"}},
		}},
		{"node count splits the cores", []step{
			{d: coreResv{name: "a", nodeCnt: 2, cores: []uint32{4}}, cores: []string{"n1:0-1", "n2:0-1"}},
			{d: coreResv{name: "b", nodeCnt: 1, cores: []uint32{3}}, cores: []string{"n3:0-2"}},
		}},
		{"uneven split takes more, as Slurm does", []step{
			// 5 over 2 nodes: 2 each plus 1, but the remainder grows
			// as it is handed out (real slurmctld reserves 7).
			{d: coreResv{name: "a", nodeCnt: 2, cores: []uint32{5}}, cores: []string{"n1:0-2", "n2:0-3"}, tres: "cpu=7"},
		}},
		{"whole-node reservation keeps its nodes", []step{
			{d: coreResv{name: "w", nodes: "n1"}},
			{d: coreResv{name: "a", nodeCnt: 1, cores: []uint32{2}}, cores: []string{"n2:0-1"}},
			{d: coreResv{name: "b", nodes: "n1", cores: []uint32{2}}, rc: slurmerr.ESLURM_RESERVATION_OVERLAP},
		}},
		{"later window does not meet", []step{
			{d: coreResv{name: "a", nodes: "n1", cores: []uint32{4}}, cores: []string{"n1:0-3"}},
			{d: coreResv{name: "b", nodes: "n1", cores: []uint32{4}, start: now + 7200}, cores: []string{"n1:0-3"}},
		}},
		{"first cores", []step{
			{d: coreResv{name: "a", nodes: "n1", cores: []uint32{1}}, cores: []string{"n1:0"}},
			{d: coreResv{name: "b", nodeCnt: 1, cores: []uint32{2}, flags: resvFirstCores}, cores: []string{"n2:0-1"}},
		}},
		{"replace with cores", []step{
			{d: coreResv{name: "a", cores: []uint32{1}, flags: resvReplace}, rc: slurmerr.ESLURM_INVALID_CPU_COUNT},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := resvController(t)
			for i, s := range tc.steps {
				if s.d.start == 0 {
					s.d.start = now
				}
				if s.d.cores == nil {
					if _, rc := resvCreate(t, c, resvDescT{name: s.d.name, nodes: s.d.nodes, users: "root", start: s.d.start, dur: 60}); rc != 0 {
						t.Fatalf("step %d: whole-node create: %s", i, slurmerr.Message(rc))
					}
					continue
				}
				rc := coreCreate(c, s.d)
				if rc != s.rc {
					t.Fatalf("step %d: rc %d (%s), want %d", i, rc, slurmerr.Message(rc), s.rc)
				}
				if rc != 0 {
					continue
				}
				r := resvShow(t, c)[s.d.name]
				if got := coreLines(r); !equalStrings(got, s.cores) {
					t.Errorf("step %d: cores %q, want %q", i, got, s.cores)
				}
				if s.tres != "" && r.TRES.Value != s.tres {
					t.Errorf("step %d: TRES %q, want %q", i, r.TRES.Value, s.tres)
				}
				if want := uint32(len(s.cores)); r.NodeCnt != want || r.Partition.Value != "debug" {
					t.Errorf("step %d: NodeCnt %d partition %q", i, r.NodeCnt, r.Partition.Value)
				}
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestResvCoreUpdate: a core reservation's cores and nodes stay as they
// are; its other fields change.
func TestResvCoreUpdate(t *testing.T) {
	const now = 1_800_000_000
	c, _ := resvController(t)
	if rc := coreCreate(c, coreResv{name: "a", nodes: "n1", cores: []uint32{2}, start: now}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	for _, tc := range []struct {
		d  *msg.ReservationDesc
		rc int
	}{
		{coreResv{name: "a", cores: []uint32{3}}.body(), slurmerr.ESLURM_CORE_RESERVATION_UPDATE},
		{resvDescT{name: "a", nodes: "n2"}.body(), slurmerr.ESLURM_CORE_RESERVATION_UPDATE},
		{resvDescT{name: "a", cnt: 2}.body(), slurmerr.ESLURM_CORE_RESERVATION_UPDATE},
		{resvDescT{name: "a", dur: 90}.body(), 0},
	} {
		if tc.rc == 0 {
			tc.d.Users = msg.NullString{}
		}
		if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, tc.d)); rc != tc.rc {
			t.Errorf("update: rc %d, want %d", rc, tc.rc)
		}
	}
	if r := resvShow(t, c)["a"]; r.EndTime != now+90*60 || !equalStrings(coreLines(r), []string{"n1:0-1"}) {
		t.Errorf("after update: end %d cores %q", r.EndTime, coreLines(r))
	}
}

// TestResvCorePersist: a core reservation keeps its cores across a
// restart, and new ones keep off them.
func TestResvCorePersist(t *testing.T) {
	const now = 1_800_000_000
	file := filepath.Join(t.TempDir(), ResvStateName)
	c, _ := resvController(t)
	if err := c.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []coreResv{
		{name: "a", nodes: "n1", cores: []uint32{2}, start: now},
		{name: "b", nodeCnt: 1, cores: []uint32{1}, start: now},
	} {
		if rc := coreCreate(c, d); rc != 0 {
			t.Fatal(slurmerr.Message(rc))
		}
	}
	c2, _ := resvController(t)
	if err := c2.AttachReservations(ResvOptions{StateFile: file}); err != nil {
		t.Fatal(err)
	}
	got := resvShow(t, c2)
	if !equalStrings(coreLines(got["a"]), []string{"n1:0-1"}) || !equalStrings(coreLines(got["b"]), []string{"n1:2"}) ||
		got["a"].CoreCnt != 2 || got["b"].CoreCnt != 1 {
		t.Fatalf("recovered: %+v", got)
	}
	// The scheduler's view: cores by node index, nil for whole nodes.
	c2.mu.RLock()
	views := c2.jobReservations()
	c2.mu.RUnlock()
	for _, v := range views {
		if v.Name == "a" && (len(v.Cores) != 1 || !equalStrings([]string{cpuListOf(v.Cores[0], 1)}, []string{"0-1"})) {
			t.Errorf("scheduler view of a: %v", v.Cores)
		}
	}
	if rc := coreCreate(c2, coreResv{name: "c", nodes: "n1", cores: []uint32{1}, start: now}); rc != 0 {
		t.Fatal(slurmerr.Message(rc))
	}
	if l := coreLines(resvShow(t, c2)["c"]); !equalStrings(l, []string{"n1:3"}) {
		t.Errorf("after recovery: c takes %q, want n1:3", l)
	}
}
