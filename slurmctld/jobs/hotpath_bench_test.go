package jobs

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Benchmarks of the paths that grow with the job table (hotpath_*.go).
// Run: go test -run '^$' -bench Hotpath -benchtime 2s ./slurmctld/jobs

// licenseManager holds n pending jobs asking for licenses on a cluster
// whose licenses are all taken by running jobs, so every pass tests each
// pending job's licenses and counts the holders'.
func licenseManager(b *testing.B, n int) (*Manager, *Cluster) {
	cl := testCluster()
	cl.Licenses = []conf.License{{Name: "foo", Count: 4}, {Name: "bar", Count: 4}, {Name: "baz", Count: 100}}
	m := newTestManager(nil)
	m.cfg.MaxJobCount = 0
	d := batchDesc(alice)
	d.Licenses = msg.Str("foo:1,bar:1,baz:1")
	for i := 0; i < n; i++ {
		if _, _, err := m.Submit(d, alice, cl, t0); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := m.Schedule(cl, t0, false); err != nil {
		b.Fatal(err)
	}
	return m, cl
}

// BenchmarkHotpathLicenseSchedule: one scheduling pass over 10,000
// pending jobs that wait for their licenses.
func BenchmarkHotpathLicenseSchedule(b *testing.B) {
	m, cl := licenseManager(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Schedule(cl, t0+int64(i), false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotpathLicenseTest: the license side of a pass alone: counts
// held, then every pending job tested.
func BenchmarkHotpathLicenseTest(b *testing.B) {
	m, cl := licenseManager(b, 10000)
	jobs := m.Jobs()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := m.LicenseUsage(cl.Licenses)
		busy := 0
		for _, j := range jobs {
			if j.Pending() && u.Test(j) == LicensesBusy {
				busy++
			}
		}
		if busy == 0 {
			b.Fatal("no job waits for licenses")
		}
	}
}

// immediateManager: n pending jobs, each waiting on an unfinished job
// (afterok on a running one), a quarter of them throttled array metas
// at their limit, and a busy cluster. Every one of them ranks above a
// new job of priority prio when prio is low.
func immediateManager(b *testing.B, n int) (*Manager, *Cluster, *Job) {
	cl := testCluster()
	m := newTestManager(nil)
	m.cfg.MaxJobCount = 0
	d := batchDesc(alice)
	d.MinNodes = 4
	run, _, err := m.Submit(d, alice, cl, t0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Schedule(cl, t0, false); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		d := batchDesc(alice)
		d.MinNodes = 4
		d.Dependency = msg.Str("afterok:" + strconv.Itoa(int(run.JobID)))
		if i%4 == 0 {
			d.Dependency = msg.NullString{}
			d.ArrayInx = msg.Str("0-9%1")
		}
		if _, _, err := m.Submit(d, alice, cl, t0); err != nil {
			b.Fatal(err)
		}
	}
	// Each array runs one task: at its throttle.
	for _, j := range m.Jobs() {
		if j.IsArrayMeta() {
			t, ok := m.splitTask(j, t0)
			if !ok {
				b.Fatal("split")
			}
			t.setBase(msg.JobRunning)
		}
	}
	j := &Job{ID: 0x03000000, State: msg.JobPending, Priority: 1, Partitions: []string{"debug"}}
	return m, cl, j
}

// BenchmarkHotpathImmediateTop: _top_priority for a new --immediate job
// that no pending job can beat (all wait), and for one that the first
// runnable rival beats.
func BenchmarkHotpathImmediateTop(b *testing.B) {
	m, cl, j := immediateManager(b, 10000)
	for _, tc := range []struct {
		name string
		prio uint32
	}{{"top", 0xfffffff0}, {"behind-blocked", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			j.Priority = tc.prio
			want := m.topPriority(j, cl, t0+1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if m.topPriority(j, cl, t0+1) != want {
					b.Fatal("answer changed")
				}
			}
		})
	}
}

// nodeCountCluster: nodes nodes in partition "big" (the default) and in
// "small" (its first 16).
func nodeCountCluster(nodes int) *Cluster {
	cl := &Cluster{Config: sched.DefaultConfig()}
	var all []int
	for i := 0; i < nodes; i++ {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: fmt.Sprintf("c%05d", i), Sockets: 2, CoresPerSocket: uint16(8 + i%3),
			ThreadsPerCore: 2, CPUs: uint16(32 + 4*(i%3)), RealMemory: 4096, Weight: 1})
		all = append(all, i)
	}
	base := sched.Partition{MaxTime: sched.Infinite32, DefaultTime: sched.NoValue32,
		MaxNodes: sched.Infinite32, MaxCPUsPerNode: sched.Infinite32}
	big, small := base, base
	big.Name, big.Default, big.Nodes = "big", true, all
	small.Name, small.Nodes = "small", all[:16]
	cl.Partitions = []sched.Partition{big, small}
	return cl
}

// BenchmarkHotpathPendingNodeCount: a job list of 5,000 pending jobs on
// 5,000 nodes with every record missing from the cache (as after a pass
// that changed every pending job's reason).
func BenchmarkHotpathPendingNodeCount(b *testing.B) {
	cl := nodeCountCluster(5000)
	m := newTestManager(nil)
	m.cfg.MaxJobCount = 0
	d := batchDesc(alice)
	d.NumTasks = 64
	for i := 0; i < 5000; i++ {
		if _, _, err := m.Submit(d, alice, cl, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m.info != nil {
			m.info.entries = nil // every record packed again
		}
		p, err := m.PackJobInfo(0x2600, cl, len(cl.Nodes), msg.ShowLocal, ^uint32(0), nil, t0)
		if err != nil || p.Count() != 5000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotpathTickArrays: Tick over n finished array meta records,
// past MinJobAge, each kept by a task still running.
func BenchmarkHotpathTickArrays(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			m, cl := tickArrays(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Tick(cl, t0+10000); err != nil {
					b.Fatal(err)
				}
			}
			if m.Len() != 2*n {
				b.Fatalf("%d records left, want %d", m.Len(), 2*n)
			}
		})
	}
}

// tickArrays: n arrays whose meta record (ids 1..n) ended at t0 and
// whose one task (ids n+1..2n) still runs.
func tickArrays(n int) (*Manager, *Cluster) {
	cl := testCluster()
	m := newTestManager(nil)
	for i := 1; i <= n; i++ {
		id := uint32(i)
		m.insert(&Job{ID: id, ArrayJobID: id, ArrayTaskID: 0, State: msg.JobComplete, EndTime: t0})
		m.insert(&Job{ID: id + uint32(n), ArrayJobID: id, ArrayTaskID: 1, State: msg.JobRunning})
	}
	return m, cl
}
