package sched

import (
	"slices"
	"testing"
)

// coreResv is a core reservation of the given cores of each node.
func coreResv(name string, start, end int64, cores map[int][]uint16) Reservation {
	r := Reservation{Name: name, Start: start, End: end, Cores: cores}
	for ni := range cores {
		r.Nodes = append(r.Nodes, ni)
	}
	slices.Sort(r.Nodes)
	return r
}

// TestResvCorePlacement: jobs in a core reservation get its cores only;
// other jobs get the nodes' other cores, and whole-node jobs keep off the
// nodes (Now is 1000, jobs run 60 minutes, nodes have 4 cores).
func TestResvCorePlacement(t *testing.T) {
	type want struct {
		id     uint32
		node   int
		cores  []uint16 // started on these cores of node
		reason Reason   // else pending with this reason
		start  int64    // expected start of a pending job, when not 0
		desc   string
	}
	cases := []struct {
		name     string
		nodes    int
		resv     []Reservation
		running  []Allocation
		jobs     []Job
		backfill bool
		want     []want
	}{{
		name:  "job in the reservation gets its cores",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {2, 3}})},
		jobs:  []Job{mkJob(1, inResv("c"), tasks(2))},
		want:  []want{{id: 1, node: 0, cores: []uint16{2, 3}}},
	}, {
		name:  "job in the reservation gets no more",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {2, 3}})},
		jobs:  []Job{mkJob(1, inResv("c"), tasks(3)), mkJob(2, tasks(2))},
		want:  []want{{id: 1, reason: ReasonResources}, {id: 2, node: 0, cores: []uint16{0, 1}}},
	}, {
		name:  "jobs outside share the node's other cores",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {0, 1}})},
		jobs:  []Job{mkJob(1, tasks(2)), mkJob(2, tasks(1))},
		want:  []want{{id: 1, node: 0, cores: []uint16{2, 3}}, {id: 2, reason: ReasonResources}},
	}, {
		name:  "both kinds on one node",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {1, 2}})},
		jobs:  []Job{mkJob(1, tasks(2)), mkJob(2, inResv("c"), tasks(1)), mkJob(3, inResv("c"), tasks(1))},
		want: []want{{id: 1, node: 0, cores: []uint16{0, 3}}, {id: 2, node: 0, cores: []uint16{1}},
			{id: 3, node: 0, cores: []uint16{2}}},
	}, {
		name:  "whole-node job keeps off the node",
		nodes: 2,
		resv:  []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {0}})},
		jobs:  []Job{mkJob(1, exclusive()), mkJob(2, exclusive())},
		want:  []want{{id: 1, node: 1, cores: []uint16{0, 1, 2, 3}}, {id: 2, reason: ReasonResources}},
	}, {
		name:    "running job of the reservation keeps its cores",
		nodes:   1,
		resv:    []Reservation{coreResv("c", 0, 100000, map[int][]uint16{0: {0, 1}})},
		running: []Allocation{running(9, 5000, 1, 0)},
		jobs:    []Job{mkJob(1, inResv("c"), tasks(1)), mkJob(2, inResv("c"), tasks(1)), mkJob(3, tasks(2))},
		want: []want{{id: 1, node: 0, cores: []uint16{1}}, {id: 2, reason: ReasonResources},
			{id: 3, node: 0, cores: []uint16{2, 3}}},
	}, {
		name:  "ended reservation frees its cores",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 0, 1000, map[int][]uint16{0: {0, 1}})},
		jobs:  []Job{mkJob(1, tasks(4))},
		want:  []want{{id: 1, node: 0, cores: []uint16{0, 1, 2, 3}}},
	}, {
		name:  "job ending before a later reservation uses its cores",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 5000, 9000, map[int][]uint16{0: {0, 1}})},
		jobs:  []Job{mkJob(1, tasks(4), limit(60))},
		want:  []want{{id: 1, node: 0, cores: []uint16{0, 1, 2, 3}}},
	}, {
		name:  "job running into a later reservation keeps off its cores",
		nodes: 1,
		resv:  []Reservation{coreResv("c", 5000, 9000, map[int][]uint16{0: {0, 1}})},
		jobs:  []Job{mkJob(1, tasks(2), limit(120)), mkJob(2, tasks(1), limit(120))},
		want:  []want{{id: 1, node: 0, cores: []uint16{2, 3}}, {id: 2, reason: ReasonResources}},
	}, {
		name:     "backfill: job running into a later reservation keeps off its cores",
		nodes:    1,
		resv:     []Reservation{coreResv("c", 5000, 9000, map[int][]uint16{0: {0, 1}})},
		running:  []Allocation{running(9, 100000, 1, 0)},
		jobs:     []Job{mkJob(1, tasks(3), limit(120)), mkJob(3, tasks(1), limit(10))},
		backfill: true,
		want:     []want{{id: 1, reason: ReasonResources}, {id: 3, node: 0, cores: []uint16{1}}},
	}, {
		name:     "whole-node job and a later reservation",
		nodes:    2,
		resv:     []Reservation{coreResv("c", 5000, 9000, map[int][]uint16{0: {0}, 1: {0}})},
		jobs:     []Job{mkJob(1, exclusive(), limit(120)), mkJob(2, exclusive(), limit(10))},
		backfill: true,
		want: []want{{id: 1, reason: ReasonReqNodeNotAvail, desc: DescMayBeReserved},
			{id: 2, node: 0, cores: []uint16{0, 1, 2, 3}}},
	}, {
		name:     "backfill sees the cores come back at the end",
		nodes:    1,
		resv:     []Reservation{coreResv("c", 0, 7000, map[int][]uint16{0: {0, 1}})},
		jobs:     []Job{mkJob(1, tasks(4))},
		backfill: true,
		want:     []want{{id: 1, reason: ReasonResources, start: 7000}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(tc.nodes, 4, 4000))
			s.Reservations = tc.resv
			s.Running = tc.running
			s.Pending = tc.jobs
			s.Config.Backfill = tc.backfill
			p := Schedule(s)
			for _, w := range tc.want {
				if w.cores != nil {
					st := mustStart(t, p, w.id)
					if len(st.Alloc.Nodes) != 1 || st.Alloc.Nodes[0].Node != w.node || !slices.Equal(st.Alloc.Nodes[0].Cores, w.cores) {
						t.Errorf("job %d on %+v, want node %d cores %v", w.id, st.Alloc.Nodes, w.node, w.cores)
					}
					continue
				}
				pd := mustPend(t, p, w.id, w.reason)
				if w.start != 0 && pd.StartTime != w.start {
					t.Errorf("job %d expected start %d, want %d", w.id, pd.StartTime, w.start)
				}
				if pd.Desc != w.desc {
					t.Errorf("job %d desc %q, want %q", w.id, pd.Desc, w.desc)
				}
			}
		})
	}
}
