package jobs

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"pgregory.net/rapid"
)

// The node count from the partition maxima equals PendingNodeCount's
// scan, on random clusters (nodes of several sizes, partitions over
// subsets, an empty one, a repeated name) and jobs.
func TestNodeMaximaUnchanged(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cl := &Cluster{Config: sched.DefaultConfig()}
		nodes := rapid.IntRange(0, 8).Draw(rt, "nodes")
		for i := range nodes {
			cl.Nodes = append(cl.Nodes, sched.Node{Name: fmt.Sprintf("n%d", i),
				Sockets:        uint16(rapid.IntRange(0, 4).Draw(rt, "sockets")),
				CoresPerSocket: uint16(rapid.IntRange(1, 8).Draw(rt, "cores")),
				CPUs:           uint16(rapid.IntRange(0, 64).Draw(rt, "cpus"))})
		}
		for _, name := range []string{"a", "b", "empty", "a"} {
			p := sched.Partition{Name: name}
			if name != "empty" {
				for i := range nodes {
					if rapid.Bool().Draw(rt, "in") {
						p.Nodes = append(p.Nodes, i)
					}
				}
			}
			cl.Partitions = append(cl.Partitions, p)
		}
		mx := newNodeMaxima(cl)
		u16 := []uint16{0, 1, 2, 3, NoVal16, 0xffff}
		u32 := []uint32{0, 1, 5, 17, 64, NoVal}
		parts := []string{"", "a", "b", "empty", "nosuch"}
		j := &Job{
			Partition:     rapid.SampledFrom(parts).Draw(rt, "partition"),
			Partitions:    []string{rapid.SampledFrom(parts).Draw(rt, "partitions")},
			MinNodes:      rapid.SampledFrom(u32).Draw(rt, "minNodes"),
			NumTasks:      rapid.SampledFrom(u32).Draw(rt, "tasks"),
			NTasksPerNode: rapid.SampledFrom(u16).Draw(rt, "perNode"),
			CPUsPerTask:   rapid.SampledFrom(u16).Draw(rt, "cpusPerTask"),
			NTasksPerCore: rapid.SampledFrom(u16).Draw(rt, "perCore"),
		}
		m := newTestManager(nil)
		want := m.PendingNodeCount(j, cl)
		got := mx.of(j)
		if n := nodeCountWag(j, got.cpus, got.cores); n != want {
			rt.Fatalf("maxima %+v give %d nodes, the scan %d", got, n, want)
		}
	})
}

// The job list takes the maxima again when a node changes, and answers
// from them only while it packs.
func TestPackJobInfoNodeMaxima(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.NumTasks, d.MinNodes = 40, 1
	id := mustSubmit(t, m, cl, d, alice, t0)
	count := func() uint32 {
		t.Helper()
		p, err := m.PackJobInfo(0x2600, cl, len(cl.Nodes), msg.ShowLocal, ^uint32(0), nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.Decode()
		if err != nil || len(l.Jobs) != 1 {
			t.Fatalf("%v %d", err, len(l.Jobs))
		}
		if m.info.maxCl != nil {
			t.Error("maxima left in use after the list")
		}
		return l.Jobs[0].NumNodes
	}
	if n := count(); n != 3 { // 40 tasks on 16-CPU nodes
		t.Fatalf("%d nodes, want 3", n)
	}
	cl.Nodes[2].CPUs, cl.Nodes[2].Sockets = 40, 40
	if n := count(); n != 1 {
		t.Fatalf("%d nodes with a 40-CPU node, want 1", n)
	}
	// Outside a list the scan answers, for any view.
	other := testCluster()
	if n := m.pendingNodeCount(m.Job(id), other); n != 3 {
		t.Fatalf("%d nodes outside the list, want 3", n)
	}
}
