package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestSiteGresPerTaskScheduled: a site GRES per task (TresPerTask
// gres:foo:2, 3 tasks) is counted over the job as --gpus-per-task is: it
// spreads over the foo:4 nodes (4 + 2) and the job holds those devices,
// not the nodes' GPUs.
func TestSiteGresPerTaskScheduled(t *testing.T) {
	cl := &Cluster{Config: gresTestCluster().Config, Partitions: testCluster().Partitions}
	for _, n := range []string{"n1", "n2"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1, CPUs: 4,
			RealMemory: 4096, Weight: 1, Gres: []sched.Gres{{Name: "gpu", Count: 2}, {Name: "foo", Count: 4}}})
		cl.GresRecs = append(cl.GresRecs, []gres.Record{{Name: "gpu", Count: 2, HasFile: true}, {Name: "foo", Count: 4}})
	}
	for i := range cl.Partitions {
		cl.Partitions[i].Nodes = []int{0, 1}
	}
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TresPerTask = msg.Str("gres:foo:2")
	d.NumTasks = 3
	id := mustSubmit(t, m, cl, d, alice, t0)
	j := m.Job(id)
	if name, n, _ := jobGPUs(j); name != "foo" || n != 6 {
		t.Fatalf("counted over the job: %s %d", name, n)
	}
	mustSchedule(t, m, cl, t0+1)
	want := [][]gres.Alloc{{{Name: "foo", Count: 4}}, {{Name: "foo", Count: 2}}}
	if d := cmp.Diff(want, j.NodeGres); d != "" {
		t.Fatalf("NodeGres (-want +got):\n%s", d)
	}
	// GPUs asked for over the job too: those are what the scheduler
	// counts (one GRES a job).
	j.TresPerJob = "gres:gpu:1"
	if name, n, _ := jobGPUs(j); name != "gpu" || n != 1 {
		t.Fatalf("with --gpus: %s %d", name, n)
	}
}

// Memory per GRES exists for GPUs only: gres_job_state_validate refuses
// it when the requests it is given name no gpu (in an update, only the
// update's requests are given).
func TestMemPerTresWithoutGPU(t *testing.T) {
	for _, tc := range []struct {
		mem  string
		reqs []string
		want bool
	}{
		{"", nil, false},
		{"gres:gpu:100", []string{"", "gres:gpu:1"}, false},
		{"gres:gpu:100", []string{"gres:foo:1", "gres:gpu:tesla:2"}, false},
		{"gres:foo:100", []string{"gres:foo:2"}, true},
		{"gres:gpu:100", nil, true},
	} {
		if got := memPerTresWithoutGPU(tc.mem, tc.reqs...); got != tc.want {
			t.Errorf("%q %q: %v, want %v", tc.mem, tc.reqs, got, tc.want)
		}
	}
	m := newTestManager(nil)
	cl := gresTestCluster()
	d := batchDesc(alice)
	d.TresPerNode, d.MemPerTres = msg.Str("gres:gpu:1"), msg.Str("gres:gpu:100")
	id := mustSubmit(t, m, cl, d, alice, t0)
	u := msg.NewJobDesc()
	u.JobID, u.MemPerTres = id, msg.Str("gres:gpu:200")
	if _, err := m.updateGres(m.Job(id), u); err == nil {
		t.Fatal("MemPerTres alone accepted in an update")
	}
	if j := m.Job(id); j.MemPerTres != "gres:gpu:100" {
		t.Fatalf("MemPerTres %q after a refused update", j.MemPerTres)
	}
}

// CpusPerTres of a site GRES asked for per node makes the node's CPUs at
// least that many a unit of it (gres_min_cpus), as --cpus-per-gpu does.
func TestCPUsPerSiteGres(t *testing.T) {
	j := &Job{TresPerNode: "gres:foo:2", CPUsPerTres: "gres:foo:2", NumTasks: 1, MinNodes: 1, MaxNodes: NoVal}
	var sj sched.Job
	setSchedGres(&sj, j)
	if sj.MinCPUs != 4 {
		t.Fatalf("MinCPUs %d, want 4", sj.MinCPUs)
	}
}
