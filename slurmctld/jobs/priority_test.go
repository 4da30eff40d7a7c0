package jobs

import (
	"fmt"
	"math"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// prioCluster is testCluster (4 nodes of 16 CPUs) with PriorityJobFactor
// 1 on debug and 4 on short.
func prioCluster() *Cluster {
	cl := testCluster()
	for i := range cl.Partitions {
		cl.Partitions[i].PriorityJobFactor = 1
		if cl.Partitions[i].Name == "short" {
			cl.Partitions[i].PriorityJobFactor = 4
		}
	}
	return cl
}

func mfConfig() priority.Config {
	cfg := priority.DefaultConfig()
	cfg.Plugin = priority.PluginMultifactor
	cfg.WeightJobSize = 100000
	cfg.WeightPartition = 40000
	return cfg
}

func withPriority(t *testing.T, m *Manager, cfg priority.Config, track bool) *Priority {
	t.Helper()
	p, err := NewPriority(cfg, track, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.SetPriority(p)
	return p
}

func prioDesc(c Caller, nodes, cpus uint32, part string) *msg.JobDesc {
	d := batchDesc(c)
	d.MinNodes, d.MinCPUs, d.NumTasks = nodes, cpus, cpus
	if part != "" {
		d.Partition = msg.Str(part)
	}
	return d
}

// TestPriorityMultifactorValues: pending jobs get Σ weight·factor as
// _get_priority_internal computes it; held jobs stay 0, an operator's
// priority stays, nice and release recompute, and priority/basic is
// untouched without a Priority.
func TestPriorityMultifactorValues(t *testing.T) {
	cl := prioCluster()
	m := newTestManager(nil)
	withPriority(t, m, mfConfig(), false)

	// Job size favoring large jobs: (nodes/4 + cpus/64)/2; partition:
	// job factor over the largest (4).
	a := mustSubmit(t, m, cl, prioDesc(root, 1, 1, ""), root, t0)      // 0.1328125 -> 13281 + 10000
	b := mustSubmit(t, m, cl, prioDesc(root, 2, 32, ""), root, t0)     // 0.5 -> 50000 + 10000
	c := mustSubmit(t, m, cl, prioDesc(root, 2, 4, "short"), root, t0) // 0.28125 -> 28125 + 40000
	dh := prioDesc(root, 1, 1, "")
	dh.Priority = 0
	held := mustSubmit(t, m, cl, dh, root, t0)
	dn := prioDesc(root, 1, 1, "")
	dn.Nice = niceOff + 281
	nice := mustSubmit(t, m, cl, dn, root, t0)
	m.UpdatePriorities(cl, t0, false)

	want := map[uint32]uint32{a: 23281, b: 60000, c: 68125, held: 0, nice: 23000}
	for id, w := range want {
		if got := m.Job(id).Priority; got != w {
			t.Errorf("job %d: priority %d, want %d", id, got, w)
		}
	}

	upd := func(id uint32, f func(d *msg.JobDesc)) {
		t.Helper()
		d := msg.NewJobDesc()
		d.JobID = id
		f(d)
		if _, err := m.Update(d, root, cl, t0); err != nil {
			t.Fatalf("update %d: %v", id, err)
		}
	}
	// An operator sets b's priority: recomputation leaves it.
	upd(b, func(d *msg.JobDesc) { d.Priority = 7 })
	// a's nice changes: recomputed with the new nice.
	upd(a, func(d *msg.JobDesc) { d.Nice = niceOff + 1000 })
	// The held job is released.
	upd(held, func(d *msg.JobDesc) { d.Priority = Infinite })
	m.UpdatePriorities(cl, t0+10, false)
	want = map[uint32]uint32{a: 22281, b: 7, held: 23281}
	for id, w := range want {
		if got := m.Job(id).Priority; got != w {
			t.Errorf("after updates, job %d: priority %d, want %d", id, got, w)
		}
	}

	// priority/basic: no Priority, FIFO numbering as before.
	m2 := newTestManager(nil)
	id := mustSubmit(t, m2, cl, prioDesc(root, 1, 1, ""), root, t0)
	m2.UpdatePriorities(cl, t0, true)
	if got := m2.Job(id).Priority; got != priority.TopPriority-1 {
		t.Errorf("basic: priority %#x", got)
	}
}

// TestPriorityOrdersScheduling: the pass starts the job with the higher
// multifactor priority first, though it was submitted later.
func TestPriorityOrdersScheduling(t *testing.T) {
	for _, tc := range []struct {
		name       string
		multi      bool
		wantStart  int // index of the job that starts
		wantReason uint16
	}{
		{"basic", false, 0, ReasonPriority},
		{"multifactor", true, 1, ReasonPriority},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := prioCluster()
			m := newTestManager(nil)
			if tc.multi {
				withPriority(t, m, mfConfig(), false)
			}
			ids := []uint32{
				mustSubmit(t, m, cl, prioDesc(root, 4, 4, ""), root, t0),
				mustSubmit(t, m, cl, prioDesc(root, 4, 64, ""), root, t0),
			}
			acts := mustSchedule(t, m, cl, t0)
			l := launches(acts)
			if len(l) != 1 || l[0].JobID != ids[tc.wantStart] {
				t.Fatalf("launched %+v, want job %d", l, ids[tc.wantStart])
			}
			other := m.Job(ids[1-tc.wantStart])
			if !other.Pending() || other.Reason == ReasonNone {
				t.Errorf("other job: state %#x reason %d", other.State, other.Reason)
			}
		})
	}
}

// TestPriorityNoAccountingZeroesAgeAndFairshare: without the tracker
// (no slurmdbd) Slurm ignores the age and fair-share weights, so a
// priority does not change with time.
func TestPriorityNoAccountingZeroesAgeAndFairshare(t *testing.T) {
	cfg := mfConfig()
	cfg.WeightAge, cfg.WeightFairshare = 1000, 5000
	cl := prioCluster()
	m := newTestManager(nil)
	p := withPriority(t, m, cfg, false)
	if c := p.Config(); c.WeightAge != 0 || c.WeightFairshare != 0 || p.Tracking() {
		t.Fatalf("config %+v, tracking %v", c, p.Tracking())
	}
	id := mustSubmit(t, m, cl, prioDesc(root, 1, 1, ""), root, t0)
	m.PriorityDecay(cl, t0)
	first := m.Job(id).Priority
	m.PriorityDecay(cl, t0+7*86400)
	if got := m.Job(id).Priority; got != first || got != 23281 {
		t.Errorf("priority %d then %d, want 23281 both", first, got)
	}
	if p.State() != nil {
		t.Error("state without a tracker")
	}
}

// TestPriorityUsageCharging: the decay passes charge running jobs'
// CPU-seconds (decayed over the period, as _apply_new_usage), a job that
// ended is charged once for the rest of its run, and fair-share orders
// users by usage.
func TestPriorityUsageCharging(t *testing.T) {
	cfg := mfConfig()
	cfg.WeightJobSize, cfg.WeightPartition = 0, 0
	cfg.WeightFairshare = 100000
	cfg.DecayHalfLife = 3600
	cl := prioCluster()
	m := newTestManager(nil)
	p := withPriority(t, m, cfg, true)
	m.PriorityDecay(cl, t0) // the first pass only starts the clock

	run := mustSubmit(t, m, cl, prioDesc(alice, 1, 16, ""), alice, t0)
	mustSchedule(t, m, cl, t0)
	if !m.Job(run).Running() || m.Job(run).TotalCPUs != 16 {
		t.Fatalf("job not running on 16 CPUs: %+v", m.Job(run))
	}
	df := priority.DecayFactor(3600)
	m.PriorityDecay(cl, t0+300)
	want := 16 * 300 * math.Pow(df, 300)
	if got := rawUsage(p, "alice"); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("alice usage %v, want %v", got, want)
	}

	// Ends at t0+400: the next pass decays the old usage and adds the
	// last 100 s once.
	j := m.Job(run)
	finishJob(t, m, cl, run, 0, t0+400)
	if j.EndTime != t0+400 {
		t.Fatalf("end time %d", j.EndTime)
	}
	m.PriorityDecay(cl, t0+600)
	want = (want + 16*100*math.Pow(df, 100)) * math.Pow(df, 300)
	if got := rawUsage(p, "alice"); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("after the end, alice usage %v, want %v", got, want)
	}
	m.PriorityDecay(cl, t0+900)
	want *= math.Pow(df, 300)
	if got := rawUsage(p, "alice"); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("charged twice: alice usage %v, want %v", got, want)
	}

	// Fair Tree: bob (no usage) ranks above alice.
	pa := mustSubmit(t, m, cl, prioDesc(alice, 1, 1, ""), alice, t0+900)
	pb := mustSubmit(t, m, cl, prioDesc(bob, 1, 1, ""), bob, t0+900)
	m.PriorityDecay(cl, t0+900)
	if a, b := m.Job(pa).Priority, m.Job(pb).Priority; a != 50000 || b != 100000 {
		t.Errorf("alice %d, bob %d; want 50000 and 100000", a, b)
	}

	// The state restores to the same usage and clock.
	st := p.State()
	if p.Changed() {
		t.Error("changed right after State")
	}
	q, err := NewPriority(cfg, true, st)
	if err != nil {
		t.Fatal(err)
	}
	if q.LastRan() != t0+900 || rawUsage(q, "alice") != rawUsage(p, "alice") {
		t.Errorf("restored: last %d usage %v", q.LastRan(), rawUsage(q, "alice"))
	}
}

func rawUsage(p *Priority, user string) float64 {
	for _, a := range p.Associations() {
		if a.User == user {
			return a.RawUsage
		}
	}
	return 0
}

// TestPriorityIncrOnlyAndCalculateRunning: INCR_ONLY never lowers a
// priority; CALCULATE_RUNNING recomputes running jobs too.
func TestPriorityIncrOnlyAndCalculateRunning(t *testing.T) {
	cfg := mfConfig()
	cfg.Flags |= conf.PriorityIncrOnly | conf.PriorityCalculateRunning
	cl := prioCluster()
	m := newTestManager(nil)
	withPriority(t, m, cfg, false)
	id := mustSubmit(t, m, cl, prioDesc(root, 2, 32, ""), root, t0)
	m.UpdatePriorities(cl, t0, false)
	if got := m.Job(id).Priority; got != 60000 {
		t.Fatalf("priority %d", got)
	}
	// Fewer CPUs would lower it: INCR_ONLY keeps 60000.
	m.Job(id).MinCPUs = 2
	m.UpdatePriorities(cl, t0, true)
	if got := m.Job(id).Priority; got != 60000 {
		t.Errorf("INCR_ONLY: priority %d, want 60000", got)
	}
}

// BenchmarkPriorityPass, with 10,000 pending jobs of 100 users under the
// tracker: a decay pass (every pending job recomputed), the scan a
// scheduling pass makes for jobs given a priority elsewhere, and the
// update of one submitted job.
func BenchmarkPriorityPass(b *testing.B) {
	cfg := mfConfig()
	cfg.WeightFairshare, cfg.WeightAge = 10000, 1000
	cl := prioCluster()
	m := newTestManager(nil)
	p, err := NewPriority(cfg, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	m.SetPriority(p)
	for i := 0; i < 10000; i++ {
		d := prioDesc(root, uint32(1+i%4), uint32(1+i%64), "")
		d.BeginTime = t0 + 3600
		r, _, err := m.Submit(d, root, cl, t0)
		if err != nil {
			b.Fatal(err)
		}
		m.Job(r.JobID).UserName = fmt.Sprintf("u%d", i%100)
	}
	m.PriorityDecay(cl, t0)
	b.Run("decay", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			m.PriorityDecay(cl, t0+int64(i+1))
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			m.UpdatePriorities(cl, t0, false)
		}
	})
	b.Run("submitted", func(b *testing.B) {
		id := m.order[len(m.order)/2]
		for b.Loop() {
			m.Job(id).Priority++
			m.UpdateJobPriorities(cl, t0, false, id)
		}
	})
}
