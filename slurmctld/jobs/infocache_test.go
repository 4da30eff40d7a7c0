package jobs

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// wantList packs JobInfoMsg the uncached way, filtered as PackJobInfo
// filters.
func wantList(t *testing.T, m *Manager, cl *Cluster, flags uint16, uid uint32, ids []uint32, now int64) []byte {
	t.Helper()
	r := m.JobInfoMsg(cl, len(cl.Nodes), flags, uid, now)
	if ids != nil {
		want := map[uint32]bool{}
		for _, id := range ids {
			want[id] = true
		}
		kept := r.Jobs[:0]
		for _, j := range r.Jobs {
			if want[j.JobID] || (j.ArrayJobID != 0 && want[j.ArrayJobID]) {
				kept = append(kept, j)
			}
		}
		r.Jobs = kept
	}
	bc, err := jobInfoCodec()
	if err != nil {
		t.Fatal(err)
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, codec.Version2205, r); err != nil {
		t.Fatal(err)
	}
	return w.Bytes()
}

func gotList(t *testing.T, m *Manager, cl *Cluster, flags uint16, uid uint32, ids []uint32, now int64) []byte {
	t.Helper()
	p, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), flags, uid, ids, now)
	if err != nil {
		t.Fatal(err)
	}
	b := p.AppendTo(nil)
	if len(b) != p.Len() {
		t.Fatalf("body %d bytes, Len %d", len(b), p.Len())
	}
	return b
}

// checkList compares the cached list with the uncached one, twice (the
// second from the cache), for the usual flags and filters. The first
// query has the flags of the last one, whose records the cache still
// holds from the previous step: a record kept though what it shows
// changed in between is found there.
func checkList(t *testing.T, step string, m *Manager, cl *Cluster, now int64) {
	t.Helper()
	for _, q := range []struct {
		flags uint16
		uid   uint32
		ids   []uint32
	}{
		{msg.ShowAll, ^uint32(0), nil},
		{msg.ShowAll | msg.ShowLocal, ^uint32(0), nil},
		{msg.ShowAll | msg.ShowDetail, ^uint32(0), nil},
		{msg.ShowLocal, alice.UID, nil},
		{msg.ShowAll, ^uint32(0), []uint32{1, 3, 4}},
		{msg.ShowAll, ^uint32(0), []uint32{}},
	} {
		want := wantList(t, m, cl, q.flags, q.uid, q.ids, now)
		for pass := range 2 {
			if got := gotList(t, m, cl, q.flags, q.uid, q.ids, now); !bytes.Equal(got, want) {
				t.Fatalf("%s: flags %#x uid %d ids %v pass %d: cached list differs from JobInfoMsg\n got %x\nwant %x",
					step, q.flags, q.uid, q.ids, pass, got, want)
			}
		}
	}
}

// The cached list is byte for byte JobInfoMsg's packing through a job's
// life and as the clock moves: pending (estimated start in the past, in the
// future, --begin), held, running, completing, array, dependency.
func TestPackJobInfoMatchesJobInfoMsg(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	now := t0
	checkList(t, "empty", m, cl, now)

	d := batchDesc(alice)
	d.MinNodes = 4
	d.TimeLimit = 30
	wide := mustSubmit(t, m, cl, d, alice, now) // 1: runs, fills the cluster
	d = batchDesc(alice)
	d.TimeLimit = 10
	d.Comment = msg.Str("waits")
	mustSubmit(t, m, cl, d, alice, now) // 2: pending on resources
	d = batchDesc(bob)
	d.Priority = 0
	mustSubmit(t, m, cl, d, bob, now) // 3: held
	d = batchDesc(alice)
	d.ArrayInx = msg.Str("0-5%2")
	mustSubmit(t, m, cl, d, alice, now) // 4: array
	d = batchDesc(alice)
	d.Dependency = msg.Str("afterok:" + strconv.Itoa(int(wide)))
	mustSubmit(t, m, cl, d, alice, now) // 5: dependency
	d = batchDesc(bob)
	d.BeginTime = now + 3600
	mustSubmit(t, m, cl, d, bob, now) // 6: --begin
	checkList(t, "submitted", m, cl, now)

	mustSchedule(t, m, cl, now)
	checkList(t, "scheduled", m, cl, now)

	// Estimated starts in the future, then overtaken by the clock.
	for _, j := range m.Jobs() {
		if j.Pending() {
			j.EstStart = now + 600
			j.LastEval = now + 1
		}
	}
	checkList(t, "estimates", m, cl, now)
	checkList(t, "later", m, cl, now+1200)
	checkList(t, "after begin", m, cl, now+7200)

	now += 60
	finishJob(t, m, cl, wide, 0, now)
	checkList(t, "wide done", m, cl, now)
	mustSchedule(t, m, cl, now)
	checkList(t, "second pass", m, cl, now)

	// Completing: a job ended on nodes that have not run the epilog.
	for _, j := range m.Jobs() {
		if j.Running() {
			if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: j.ID, NodeName: msg.Str(j.BatchHost)}, root, cl, now); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	checkList(t, "completing", m, cl, now)

	// A change the scheduler makes without journaling it.
	for _, j := range m.Jobs() {
		if j.Pending() {
			j.Reason = ReasonDependency
		}
	}
	checkList(t, "reasons", m, cl, now)
	for _, j := range m.Jobs() {
		j.Priority++
	}
	checkList(t, "priorities", m, cl, now)

	// The cluster changes under the records.
	cl.Partitions[0].MaxTime = 120
	checkList(t, "partition MaxTime", m, cl, now)
	cl.Nodes[0].RealMemory = 8192
	checkList(t, "node memory", m, cl, now)
	m.cfg.ClusterName = "other"
	checkList(t, "cluster name", m, cl, now)
}

// A task split off an array shows its meta record's throttle: the cached
// list follows scontrol update ArrayTaskThrottle, which changes the meta
// record only, on every task record.
func TestPackJobInfoArrayThrottle(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.ArrayInx = msg.Str("1-6%2")
	meta := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	tasks := 0
	for _, j := range m.Jobs() {
		if j.ArrayJobID == meta && j.ID != meta {
			tasks++
			if got := m.Info(j, cl, len(cl.Nodes), 0, t0).ArrayMaxTasks; got != 2 {
				t.Fatalf("task %d: ArrayMaxTasks %d, want 2", j.ID, got)
			}
		}
	}
	if tasks != 2 {
		t.Fatalf("%d tasks split off, want 2", tasks)
	}
	checkList(t, "throttle 2", m, cl, t0)
	for i, v := range []string{"3", "0", "1"} {
		u := msg.NewJobDesc()
		u.JobID, u.ArrayInx = meta, msg.Str(v)
		if _, err := m.Update(u, root, cl, t0+int64(i)+1); err != nil {
			t.Fatalf("ArrayTaskThrottle=%s: %v", v, err)
		}
		checkList(t, "throttle "+v, m, cl, t0+int64(i)+1)
	}
	// Update touches every record of the array; the throttle alone
	// changing on the meta record must be enough.
	m.Job(meta).Array.MaxTasks = 5
	checkList(t, "meta only", m, cl, t0+5)
	// The meta record gone, a task shows no throttle.
	m.remove(meta)
	checkList(t, "meta removed", m, cl, t0+10)
}

// A sentinel inside a job's strings is not mistaken for the field: the
// record is packed fresh every time and still right.
func TestPackJobInfoSentinelInString(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	var pat [8]byte
	binary.BigEndian.PutUint64(pat[:], uint64(sentEval))
	d := batchDesc(alice)
	d.Comment = msg.Str("x" + string(pat[:]) + "y")
	mustSubmit(t, m, cl, d, alice, t0)
	checkList(t, "sentinel", m, cl, t0)
	if e := m.infoCache().entries[1]; e == nil || e.recs[0].ok {
		t.Fatalf("entry %+v: a record holding a sentinel was cached", e)
	}
}

// Records of removed jobs leave the cache.
func TestPackJobInfoDropsRemovedJobs(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	for range 3 {
		mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	}
	gotList(t, m, cl, msg.ShowAll, ^uint32(0), nil, t0)
	if n := len(m.infoCache().entries); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
	m.remove(2)
	checkList(t, "removed", m, cl, t0)
	if _, ok := m.infoCache().entries[2]; ok || len(m.infoCache().entries) != 2 {
		t.Fatalf("entries %v after removing job 2", m.infoCache().entries)
	}
}

// Every field of Job that the fingerprint covers changes it, also when a
// slice element or a pointee changes in place; the fields it skips do not
// change the record (Payload, Steps) or are patched (LastEval, EstStart).
func TestJobHasherSeesEveryField(t *testing.T) {
	h, err := newJobHasher()
	if err != nil {
		t.Fatalf("nothing is cached: %v", err)
	}
	// lic is Licenses parsed, derived from a covered field (licenses.go);
	// stepWaiters are sruns to wake, not in the record (stepalloc.go);
	// revokedAt is not in it either (revoke.go).
	// schedNodes is covered, but unexported: changes cannot set it, so
	// it is checked on its own below.
	skipped := map[string]bool{"LastEval": true, "EstStart": true, "Payload": true, "Steps": true, "lic": true,
		"stepWaiters": true, "schedNodes": true, "revokedAt": true}
	typ := reflect.TypeFor[Job]()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if skipped[f.Name] {
			continue
		}
		j := sampleJob()
		before := sum(h, j)
		v := reflect.ValueOf(j).Elem().Field(i)
		for _, c := range changes(v) {
			c.apply()
			if sum(h, j) == before {
				t.Errorf("Job.%s: %s does not change the fingerprint", f.Name, c.what)
			}
			c.undo()
			if sum(h, j) != before {
				t.Errorf("Job.%s: fingerprint differs after undoing %s", f.Name, c.what)
			}
		}
	}
	sj := sampleJob()
	before := sum(h, sj)
	sj.schedNodes = "n1"
	if sum(h, sj) == before {
		t.Errorf("Job.schedNodes does not change the fingerprint")
	}
	// The skipped fields: the record does not depend on the first two.
	cl := testCluster()
	m := newTestManager(nil)
	j := sampleJob()
	want := m.Info(j, cl, len(cl.Nodes), 0, t0)
	j.Payload = &Payload{Script: "#!/bin/sh\n", Env: []string{"A=b"}}
	j.Steps = []*Step{{ID: 1, Name: "x"}}
	if got := m.Info(j, cl, len(cl.Nodes), 0, t0); !reflect.DeepEqual(got, want) {
		t.Errorf("the record depends on Payload or Steps, which the fingerprint skips")
	}
}

// sampleJob has every pointer and slice field of a record set, so that
// in-place changes can be made.
func sampleJob() *Job {
	j := &Job{ID: 7, Name: "n", Partitions: []string{"debug"}, Array: &ArrayInfo{Pending: []uint32{1, 2}, Spec: "1-2"},
		Dependency: &Dependency{Items: []DepItem{{Type: "afterok", JobID: 3, Task: NoVal}}},
		Nodes:      []string{"n1"}, NodeIdx: []int{0}, NodeCPUs: []uint32{4}, NodeMem: []uint64{100},
		NodeCores: [][]uint16{{0, 1}}, Completing: []string{"n1"}}
	return j
}

type change struct {
	what        string
	apply, undo func()
}

// changes lists ways to change v: its own value, and for slices and
// pointers each element or field in place.
func changes(v reflect.Value) []change {
	old := reflect.New(v.Type()).Elem()
	old.Set(v)
	set := func(what string, nv reflect.Value) change {
		return change{what: what, apply: func() { v.Set(nv) }, undo: func() { v.Set(old) }}
	}
	switch v.Kind() {
	case reflect.Bool:
		return []change{set("flipping it", reflect.ValueOf(!v.Bool()).Convert(v.Type()))}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		nv := reflect.New(v.Type()).Elem()
		nv.SetInt(v.Int() + 1)
		return []change{set("adding one", nv)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		nv := reflect.New(v.Type()).Elem()
		nv.SetUint(v.Uint() + 1)
		return []change{set("adding one", nv)}
	case reflect.String:
		nv := reflect.New(v.Type()).Elem()
		nv.SetString(v.String() + "x")
		return []change{set("appending to it", nv)}
	case reflect.Slice:
		out := []change{}
		if v.Len() == 0 {
			nv := reflect.MakeSlice(v.Type(), 1, 1)
			return append(out, set("adding an element", nv))
		}
		out = append(out, set("dropping an element", v.Slice(0, v.Len()-1)))
		for _, c := range changes(v.Index(0)) {
			c.what = "element 0: " + c.what + " (in place)"
			out = append(out, c)
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return []change{set("setting it", reflect.New(v.Type().Elem()))}
		}
		out := []change{set("clearing it", reflect.Zero(v.Type()))}
		for _, c := range changes(v.Elem()) {
			c.what = "pointee: " + c.what + " (in place)"
			out = append(out, c)
		}
		return out
	case reflect.Struct:
		var out []change
		for i := 0; i < v.NumField(); i++ {
			for _, c := range changes(v.Field(i)) {
				c.what = v.Type().Field(i).Name + ": " + c.what
				out = append(out, c)
			}
		}
		return out
	}
	panic("changes: kind " + v.Kind().String())
}

// The hasher refuses types it cannot read and unknown field names.
func TestContentHasherPlans(t *testing.T) {
	if nodeHasher() == nil || partHasher() == nil {
		t.Fatal("sched.Node or sched.Partition has no content plan: nothing is cached")
	}
	type withMap struct{ M map[string]int }
	if _, err := newContentHasher(reflect.TypeFor[withMap]()); err == nil {
		t.Error("a map field was planned")
	}
	if _, err := newContentHasher(reflect.TypeFor[Job](), "NoSuchField"); err == nil {
		t.Error("an unknown skipped field was accepted")
	}
	// Strings are length-delimited: moving a byte between two fields
	// changes the sum.
	type two struct{ A, B string }
	h, err := newContentHasher(reflect.TypeFor[two]())
	if err != nil {
		t.Fatal(err)
	}
	if sum(h, &two{"ab", "c"}) == sum(h, &two{"a", "bc"}) {
		t.Error("ab|c and a|bc hash alike")
	}
	if unsafe.Sizeof(two{}) != h.plan.size {
		t.Errorf("plan size %d", h.plan.size)
	}
}

// RegisterPackedJobInfo: the registry sends a PackedJobInfo as it is, and
// still packs and unpacks JobInfoMsg.
func TestRegisterPackedJobInfo(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	g := msg.Registry()
	if AcceptsPackedJobInfo(g) {
		t.Fatal("a plain registry accepts a PackedJobInfo")
	}
	if err := RegisterPackedJobInfo(g); err != nil {
		t.Fatal(err)
	}
	if !AcceptsPackedJobInfo(g) {
		t.Fatal("registered registry refuses a PackedJobInfo")
	}
	bc, _ := g.Lookup(msgtype.RESPONSE_JOB_INFO)
	p, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), msg.ShowAll, ^uint32(0), nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, codec.Version2205, p); err != nil {
		t.Fatal(err)
	}
	if want := wantList(t, m, cl, msg.ShowAll, ^uint32(0), nil, t0); !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("packed body differs")
	}
	v, err := bc.Decode(pack.NewReader(w.Bytes()), codec.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(msg.JobInfoMsg); len(got.Jobs) != 1 || got.Jobs[0].JobID != 1 {
		t.Fatalf("decoded %+v", got)
	}
	if got, err := p.Decode(); err != nil || len(got.Jobs) != 1 || got.Jobs[0].JobID != 1 || got.LastUpdate != t0 {
		t.Fatalf("Decode: %v %+v", err, got)
	}
	if err := bc.Encode(pack.NewWriter(nil), codec.Version2205, m.JobInfoMsg(cl, len(cl.Nodes), 0, ^uint32(0), t0)); err != nil {
		t.Fatalf("JobInfoMsg no longer packs: %v", err)
	}
	if err := bc.Encode(pack.NewWriter(nil), codec.Version2205+1, p); err == nil {
		t.Fatal("a body packed at 22.05 was sent at another version")
	}
}

func sum[T any](h *contentHasher, v *T) uint64 {
	s, _ := sumOf(h, v, nil)
	return s
}

// WriteTo packs what AppendTo does, after what the writer holds already,
// with the pending jobs' times patched in, whatever the writer's spare
// capacity.
func TestPackedJobInfoWriteTo(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	for range 3 {
		mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	}
	p, err := m.PackJobInfo(codec.Version2205, cl, len(cl.Nodes), msg.ShowAll, ^uint32(0), nil, t0+5)
	if err != nil {
		t.Fatal(err)
	}
	body := p.AppendTo(nil)
	if want := wantList(t, m, cl, msg.ShowAll, ^uint32(0), nil, t0+5); !bytes.Equal(body, want) {
		t.Fatal("AppendTo differs from the list packed field by field")
	}
	prefix := []byte("head")
	for _, spare := range []int{0, 10, len(body)} {
		buf := make([]byte, len(prefix), len(prefix)+spare)
		copy(buf, prefix)
		w := pack.NewWriter(buf)
		p.WriteTo(w)
		if got := w.Bytes(); !bytes.Equal(got, append(slices.Clone(prefix), body...)) {
			t.Fatalf("spare %d: WriteTo wrote %d bytes, want prefix and the %d-byte body", spare, len(got), len(body))
		}
	}
}
