package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"pgregory.net/rapid"
)

// topPriority gives the answer of its first version, which tested every
// pending job's eligibility before comparing it with j (kept below as
// topPriorityScan), on random tables: states, priorities, reservations,
// partitions of different tiers, holds, --begin, dependencies and
// throttled arrays.
func TestTopPriorityUnchanged(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cl := testCluster()
		cl.Partitions[3].PriorityTier = uint16(rapid.IntRange(0, 2).Draw(rt, "shortTier"))
		side := cl.Partitions[0]
		side.Name, side.Default, side.Nodes = "side", false, []int{3}
		side.PriorityTier = uint16(rapid.IntRange(0, 2).Draw(rt, "sideTier"))
		cl.Partitions = append(cl.Partitions, side)
		parts := []string{"debug", "short", "side", "nosuch"}
		resvs := []string{"", "", "r1", "r2"}
		states := []uint32{msg.JobPending, msg.JobPending, msg.JobPending, msg.JobRunning, msg.JobComplete, msg.JobPending | msg.JobCompleting}
		reasons := []uint16{ReasonNone, ReasonPriority, ReasonResources, ReasonDependency, ReasonHeldUser, 41, ReasonLicenses}
		m := newTestManager(nil)
		n := rapid.IntRange(1, 10).Draw(rt, "jobs")
		for i := 1; i <= n; i++ {
			j := &Job{ID: uint32(i), ArrayTaskID: NoVal,
				State:       rapid.SampledFrom(states).Draw(rt, "state"),
				Priority:    uint32(rapid.IntRange(0, 3).Draw(rt, "prio")),
				Reason:      rapid.SampledFrom(reasons).Draw(rt, "reason"),
				Reservation: rapid.SampledFrom(resvs).Draw(rt, "resv"),
				Partitions:  []string{rapid.SampledFrom(parts).Draw(rt, "part")},
			}
			if rapid.IntRange(0, 5).Draw(rt, "held") == 0 {
				j.Hold = HoldUser
			}
			if rapid.IntRange(0, 5).Draw(rt, "begin") == 0 {
				j.BeginTime = t0 + 100
			}
			if rapid.IntRange(0, 3).Draw(rt, "dep") == 0 {
				j.Dependency = &Dependency{Items: []DepItem{{Type: DepAfterOK, Task: NoVal,
					JobID: uint32(rapid.IntRange(1, n+1).Draw(rt, "depOn"))}}}
			}
			switch rapid.IntRange(0, 4).Draw(rt, "array") {
			case 0: // a meta record with pending tasks and a throttle
				j.ArrayJobID = j.ID
				j.Array = &ArrayInfo{Pending: []uint32{5, 6}, MaxTasks: uint32(rapid.IntRange(0, 2).Draw(rt, "throttle"))}
			case 1: // a task of an earlier job's array
				j.ArrayJobID = uint32(rapid.IntRange(1, i).Draw(rt, "of"))
				j.ArrayTaskID = uint32(i)
			}
			m.insert(j)
		}
		for _, j := range m.Jobs() {
			if !j.Pending() {
				continue
			}
			want := m.topPriorityScan(j, cl, t0)
			snap := tableJSON(t, m)
			if got := m.topPriority(j, cl, t0); got != want {
				rt.Fatalf("job %d: topPriority %v, want %v\n%s", j.ID, got, want, snap)
			}
			if tableJSON(t, m) != snap {
				rt.Fatalf("topPriority changed the table")
			}
		}
	})
}

// topPriorityScan is topPriority as first written: every pending job's
// eligibility, then the comparison.
func (m *Manager) topPriorityScan(j *Job, cl *Cluster, now int64) bool {
	if j.Priority == 0 {
		return false
	}
	for _, o := range m.jobs {
		if o == j || !o.Pending() || o.IsCompleting() || !runnableReason(o.Reason) || !m.couldRunScan(o, now) {
			continue
		}
		switch {
		case o.Reservation == j.Reservation:
			if o.Priority > j.Priority {
				return false
			}
			continue
		case o.Reservation == "" || j.Reservation == "":
			continue
		}
		pj, po := cl.partition(firstPart(j)), cl.partition(firstPart(o))
		if pj == nil || po == nil {
			continue
		}
		if pj == po {
			if o.Priority > j.Priority {
				return false
			}
			continue
		}
		if !overlap(pj.Nodes, po.Nodes) {
			continue
		}
		if po.PriorityTier > pj.PriorityTier || po.PriorityTier == pj.PriorityTier && o.Priority > j.Priority {
			return false
		}
	}
	return true
}

func (m *Manager) couldRunScan(o *Job, now int64) bool {
	if o.Hold != HoldNone || o.BeginTime > now {
		return false
	}
	if o.Dependency != nil {
		c := *o
		d := *o.Dependency
		d.Items = slices.Clone(d.Items)
		c.Dependency = &d
		if wait, failed := m.evalDependency(&c, now); wait || failed {
			return false
		}
	}
	// job_array_start_test: every record of an array (the meta record,
	// tasks split off it, the meta turned into its last task) waits while
	// the array's running tasks reach the throttle its meta record holds.
	if o.ArrayJobID != 0 {
		if meta := m.jobs[o.ArrayJobID]; meta != nil && meta.Array != nil && meta.Array.MaxTasks > 0 &&
			uint32(m.arrayRunning(o.ArrayJobID)) >= meta.Array.MaxTasks {
			return false
		}
	}
	return true
}

// An --immediate allocation behind a throttled array at its limit starts;
// below its limit the array's next task comes first.
func TestImmediateBehindThrottledArray(t *testing.T) {
	for _, tc := range []struct {
		name     string
		throttle string
		want     int
	}{
		{"at its limit", "%1", 0},
		{"below its limit", "%2", slurmerr.ESLURM_NOT_TOP_PRIORITY},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(bob)
			d.ArrayInx = msg.Str("0-3" + tc.throttle)
			d.ReqNodes, d.Shared = msg.Str("n1"), 0
			arr := mustSubmit(t, m, cl, d, bob, t0)
			mustSchedule(t, m, cl, t0)
			if got := m.arrayRunning(arr); got != 1 {
				t.Fatalf("%d tasks running, want 1", got)
			}
			d = msg.NewJobDesc()
			d.UserID, d.GroupID = alice.UID, alice.GID
			d.MinNodes, d.Immediate, d.Shared = 1, 1, 0
			d.ExcNodes = msg.Str("n1")
			_, _, err := m.Allocate(d, alice, cl, t0+1)
			if code(err) != tc.want {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.want)
			}
		})
	}
}

// outranks: _top_priority's comparison rules one by one.
func TestOutranks(t *testing.T) {
	cl := testCluster()
	side := cl.Partitions[0]
	side.Name, side.Default, side.Nodes, side.PriorityTier = "side", false, []int{2, 3}, 1
	cl.Partitions = append(cl.Partitions, side)
	cl.Partitions[3].PriorityTier = 1 // short: n[1-2], overlaps debug and not side
	job := func(prio uint32, resv, part string) *Job {
		return &Job{Priority: prio, Reservation: resv, Partitions: []string{part}}
	}
	for _, tc := range []struct {
		name string
		o, j *Job
		want bool
	}{
		{"no reservations, higher", job(2, "", "short"), job(1, "", "debug"), true},
		{"no reservations, equal", job(1, "", "debug"), job(1, "", "debug"), false},
		{"same reservation, higher", job(2, "r", "side"), job(1, "r", "short"), true},
		{"same reservation, lower", job(1, "r", "debug"), job(2, "r", "debug"), false},
		{"only o in a reservation", job(9, "r", "debug"), job(1, "", "debug"), false},
		{"only j in a reservation", job(9, "", "debug"), job(1, "r", "debug"), false},
		{"two reservations, one partition, higher", job(2, "r1", "debug"), job(1, "r2", "debug"), true},
		{"two reservations, one partition, lower", job(1, "r1", "short"), job(2, "r2", "short"), false},
		{"two reservations, disjoint partitions", job(9, "r1", "side"), job(1, "r2", "short"), false},
		{"higher tier, lower priority", job(1, "r1", "short"), job(5, "r2", "debug"), true},
		{"lower tier, higher priority", job(5, "r1", "debug"), job(1, "r2", "short"), false},
		{"higher tier, higher priority", job(2, "r1", "short"), job(1, "r2", "rootonly"), true},
		{"equal tiers, equal priority", job(1, "r1", "debug"), job(1, "r2", "rootonly"), false},
		{"equal tiers, higher priority, overlapping", job(2, "r1", "debug"), job(1, "r2", "rootonly"), true},
		{"unknown partition", job(9, "r1", "nosuch"), job(1, "r2", "debug"), false},
	} {
		if got := outranks(tc.o, tc.j, cl); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
