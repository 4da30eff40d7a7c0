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
