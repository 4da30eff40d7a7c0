package sched

import (
	"fmt"
	"testing"
)

// specNodes: count 8-core nodes keeping cores 0 and 1 and 500 MB for the
// system (CPUSpecList / MemSpecLimit), 4000 MB each.
func specNodes(count int) []Node {
	return mkNodes(count, 8, 4000, func(nd *Node) { nd.SpecCores, nd.MemSpec = []uint16{0, 1}, 500 })
}

// TestEmptyCacheSameAsFitsEmpty: the cached test answers as the uncached
// one, job after job on one cache, partition changes included.
func TestEmptyCacheSameAsFitsEmpty(t *testing.T) {
	jobs := []Job{
		mkJob(1, cpt(6)),
		mkJob(2, cpt(7)),
		mkJob(3, memNode(3500)),
		mkJob(4, memNode(3600)),
		mkJob(5, tasks(13), nodesN(2, 2)),
		mkJob(6, tasks(12), nodesN(2, 2)),
		mkJob(7, memCPU(600), exclusive()),
		mkJob(8, feat("big")),
		mkJob(9, reqNodes(3), cpt(6)),
		mkJob(10, excNodes(0, 1, 2), nodesN(2, 2)),
	}
	s := snap(specNodes(4))
	var e EmptyCache
	check := func(step string) {
		t.Helper()
		for _, part := range []string{"batch", "small", "nosuch"} {
			for i := range jobs {
				want := FitsEmpty(s, &jobs[i], part)
				if got := e.FitsEmpty(s, &jobs[i], part); got != want {
					t.Errorf("%s: job %d in %s: cached %v, uncached %v", step, jobs[i].JobID, part, got, want)
				}
			}
		}
	}
	check("first")
	check("again")
	s.Partitions = append(s.Partitions, mkPart("small", []int{0, 1}))
	check("partition added")
	s.Partitions[1].Nodes = []int{0, 1, 2}
	check("partition members changed")
	s.Partitions[1].State = PartDown
	check("partition down")
	s.Config.MemoryConsumable = false
	check("memory not consumable")
	s.Nodes = specNodes(4)
	s.Nodes[3].Features = []string{"big"}
	check("another node table")
}

// TestEmptyCacheReset: a node configuration changed in place is seen
// once the cache is reset, and only then (the kept state is really used:
// the two nodes stay one configuration group until the reset).
func TestEmptyCacheReset(t *testing.T) {
	s := snap(specNodes(2))
	j := mkJob(1, tasks(12), nodesN(2, 2))
	var e EmptyCache
	if !e.FitsEmpty(s, &j, "batch") {
		t.Fatal("12 tasks on two nodes of 6 free cores: no fit, want a fit")
	}
	s.Nodes[1].SpecCores = []uint16{0, 1, 2}
	if !e.FitsEmpty(s, &j, "batch") {
		t.Fatal("before Reset: no fit, want the kept state's answer (a fit)")
	}
	e.Reset()
	if e.FitsEmpty(s, &j, "batch") {
		t.Error("after Reset, a node keeping 3 cores of 8: a fit for 12 tasks on 2 nodes, want none")
	}
	if FitsEmpty(s, &j, "batch") {
		t.Error("uncached, a node keeping 3 cores of 8: a fit for 12 tasks on 2 nodes, want none")
	}
}

// BenchmarkFitsEmpty is the submission test on 10,000 nodes with
// specialized cores and memory, built every time (uncached) and kept
// (cached), for a job that fits and one that does not.
func BenchmarkFitsEmpty(b *testing.B) {
	s := snap(specNodes(10000))
	jobs := map[string]Job{"fits": mkJob(1, cpt(6), memNode(3000)), "nofit": mkJob(2, cpt(7))}
	for _, name := range []string{"fits", "nofit"} {
		j := jobs[name]
		b.Run(fmt.Sprintf("uncached/%s", name), func(b *testing.B) {
			for b.Loop() {
				FitsEmpty(s, &j, "batch")
			}
		})
		b.Run(fmt.Sprintf("cached/%s", name), func(b *testing.B) {
			var e EmptyCache
			for b.Loop() {
				e.FitsEmpty(s, &j, "batch")
			}
		})
	}
}
