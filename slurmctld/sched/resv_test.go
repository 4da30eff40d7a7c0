package sched

import (
	"reflect"
	"slices"
	"testing"
)

func resvOf(name string, start, end int64, nodes ...int) Reservation {
	return Reservation{Name: name, Nodes: nodes, Start: start, End: end}
}

func magnetic(r Reservation, users ...uint32) Reservation {
	r.Magnetic, r.Users = true, users
	return r
}

func flex(r Reservation) Reservation {
	r.Flex = true
	return r
}

func inResv(name string) jobOpt { return func(j *Job) { j.Reservation = name } }

// TestResvPlacement: what jobs with and without a reservation may do with
// reserved nodes, now and around a future window (Now is 1000, jobs run
// 60 minutes unless limited).
func TestResvPlacement(t *testing.T) {
	type want struct {
		id     uint32
		nodes  []int  // started on these nodes
		reason Reason // else pending with this reason
		start  int64  // expected start of a pending job, when not 0
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
		name:  "job with reservation runs on its node",
		nodes: 2,
		resv:  []Reservation{resvOf("r1", 0, 100000, 1)},
		jobs:  []Job{mkJob(1, inResv("r1"))},
		want:  []want{{id: 1, nodes: []int{1}}},
	}, {
		name:  "job without reservation goes elsewhere",
		nodes: 2,
		resv:  []Reservation{resvOf("r1", 0, 100000, 0)},
		jobs:  []Job{mkJob(1)},
		want:  []want{{id: 1, nodes: []int{1}}},
	}, {
		name:  "job without reservation waits when every node is reserved",
		nodes: 1,
		resv:  []Reservation{resvOf("r1", 0, 100000, 0)},
		jobs:  []Job{mkJob(1)},
		want:  []want{{id: 1, reason: ReasonReqNodeNotAvail, desc: DescMayBeReserved}},
	}, {
		name:  "job with reservation does not leave it",
		nodes: 2,
		resv:  []Reservation{resvOf("r1", 0, 100000, 1)},
		jobs:  []Job{mkJob(1, inResv("r1"), nodesN(2, 2))},
		want:  []want{{id: 1, reason: ReasonResources}},
	}, {
		name:  "future reservation: job waits for it",
		nodes: 2,
		resv:  []Reservation{resvOf("r1", 5000, 9000, 1)},
		jobs:  []Job{mkJob(1, inResv("r1"))},
		want:  []want{{id: 1, reason: ReasonReservation}},
	}, {
		name:  "unknown or ended reservation",
		nodes: 2,
		resv:  []Reservation{resvOf("old", 0, 1000, 1)},
		jobs:  []Job{mkJob(1, inResv("nope")), mkJob(2, inResv("old"))},
		want:  []want{{id: 1, reason: ReasonReservation}, {id: 2, reason: ReasonReservation}},
	}, {
		name:  "job ending before a future window may use its nodes",
		nodes: 1,
		resv:  []Reservation{resvOf("r1", 1000+3600, 9000, 0)},
		jobs:  []Job{mkJob(1, limit(60))},
		want:  []want{{id: 1, nodes: []int{0}}},
	}, {
		name:  "job reaching into a future window does not start",
		nodes: 1,
		resv:  []Reservation{resvOf("r1", 1000+3599, 9000, 0)},
		jobs:  []Job{mkJob(1, limit(60))},
		want:  []want{{id: 1, reason: ReasonReqNodeNotAvail, desc: DescMayBeReserved}},
	}, {
		name:    "busy unreserved node: resources, not the reservation",
		nodes:   2,
		resv:    []Reservation{resvOf("r1", 0, 100000, 1)},
		running: []Allocation{running(9, 5000, 4, 0)},
		jobs:    []Job{mkJob(1)},
		want:    []want{{id: 1, reason: ReasonResources}},
	}, {
		name:     "backfill keeps a short job clear of a future window",
		nodes:    2,
		backfill: true,
		resv:     []Reservation{resvOf("r1", 1000+1800, 100000, 1)},
		running:  []Allocation{running(9, 1000+7200, 4, 0)},
		jobs:     []Job{mkJob(1, limit(60)), mkJob(2, limit(20))},
		want:     []want{{id: 1, reason: ReasonResources, start: 1000 + 7200}, {id: 2, nodes: []int{1}}},
	}, {
		name:  "maintenance reservation over the whole partition",
		nodes: 2,
		resv:  []Reservation{{Name: "m", Nodes: []int{0, 1}, Start: 0, End: 100000, Maint: true}},
		jobs:  []Job{mkJob(1), mkJob(2, inResv("m"))},
		want: []want{{id: 1, reason: ReasonReqNodeNotAvail, desc: DescReservedMaint, start: 100000},
			{id: 2, nodes: []int{0}}},
	}, {
		name:  "reservation jobs in priority order",
		nodes: 2,
		resv:  []Reservation{resvOf("r1", 0, 100000, 1)},
		jobs:  []Job{mkJob(2, inResv("r1"), tasks(4)), mkJob(1, inResv("r1"), tasks(4))},
		want:  []want{{id: 1, nodes: []int{1}}, {id: 2, reason: ReasonResources}},
	}, {
		name:  "magnetic reservation takes jobs that may use it",
		nodes: 2,
		resv:  []Reservation{magnetic(resvOf("m", 0, 100000, 1), 1000)},
		jobs:  []Job{mkJob(1), mkJob(2, user(2000))},
		want:  []want{{id: 1, nodes: []int{1}}, {id: 2, nodes: []int{0}}},
	}, {
		name:  "magnetic reservation full: job runs outside it",
		nodes: 2,
		resv:  []Reservation{magnetic(resvOf("m", 0, 100000, 1), 1000)},
		jobs:  []Job{mkJob(1, tasks(4)), mkJob(2, tasks(4))},
		want:  []want{{id: 1, nodes: []int{1}}, {id: 2, nodes: []int{0}}},
	}, {
		name:  "magnetic reservation not started: job runs outside it",
		nodes: 2,
		resv:  []Reservation{magnetic(resvOf("m", 50000, 100000, 1), 1000)},
		jobs:  []Job{mkJob(1)},
		want:  []want{{id: 1, nodes: []int{0}}},
	}, {
		name:  "flex reservation: job spills outside it",
		nodes: 3,
		resv:  []Reservation{flex(resvOf("f", 0, 100000, 1))},
		jobs:  []Job{mkJob(1, inResv("f"), nodesN(2, 2))},
		want:  []want{{id: 1, nodes: []int{0, 1}}},
	}, {
		name:  "flex reservation: job starts before it",
		nodes: 2,
		resv:  []Reservation{flex(resvOf("f", 50000, 100000, 1))},
		jobs:  []Job{mkJob(1, inResv("f"))},
		want:  []want{{id: 1, nodes: []int{0}}},
	}, {
		name:  "flex reservation: job keeps off other reservations",
		nodes: 3,
		resv:  []Reservation{flex(resvOf("f", 0, 100000, 2)), resvOf("o", 0, 100000, 0)},
		jobs:  []Job{mkJob(1, inResv("f"), nodesN(2, 2)), mkJob(2, inResv("f"), nodesN(3, 3))},
		want:  []want{{id: 1, nodes: []int{1, 2}}, {id: 2, reason: ReasonResources}},
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
				if w.nodes != nil {
					if got := nodesOf(mustStart(t, p, w.id)); !slices.Equal(got, w.nodes) {
						t.Errorf("job %d on %v, want %v", w.id, got, w.nodes)
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

// TestResvNoneUnchanged: without reservations the resv code does not run,
// so plans equal those made before it existed (the golden tests cover the
// plans themselves); an empty reservation list is the same as nil.
func TestResvNoneUnchanged(t *testing.T) {
	mk := func() *Snapshot {
		s := snap(mkNodes(3, 4, 4000))
		s.Config.Backfill = true
		s.Running = []Allocation{running(9, 5000, 4, 0)}
		s.Pending = []Job{mkJob(1, nodesN(3, 3)), mkJob(2, tasks(2)), mkJob(3, limit(10))}
		return s
	}
	a, b := mk(), mk()
	b.Reservations = []Reservation{}
	pa, pb := Schedule(a), Schedule(b)
	if len(pa.Starts) != len(pb.Starts) || len(pa.Pending) != len(pb.Pending) {
		t.Fatalf("plans differ: %+v vs %+v", pa, pb)
	}
	for i := range pa.Pending {
		if !reflect.DeepEqual(pa.Pending[i], pb.Pending[i]) {
			t.Errorf("pending %d: %+v vs %+v", i, pa.Pending[i], pb.Pending[i])
		}
	}
}
