package sim

import (
	"math"
	"slices"
)

// BoundedSlowdownTau is the run-time floor of the bounded slowdown: very short
// jobs would otherwise dominate the mean with huge ratios.
const BoundedSlowdownTau = 10

// Finished is one job as the simulator ran it. Times are seconds from the
// trace start.
type Finished struct {
	ID       uint32
	Submit   int64
	Start    int64
	End      int64
	CPUs     int64
	Backfill bool // started by the backfill pass
	Killed   bool // its run time was cut to the time limit
}

// Wait is the time the job spent queued.
func (f Finished) Wait() int64 { return f.Start - f.Submit }

// Run is the time the job held its CPUs.
func (f Finished) Run() int64 { return f.End - f.Start }

// BoundedSlowdown is max((wait+run)/max(run, tau), 1).
func BoundedSlowdown(wait, run int64) float64 {
	return math.Max(float64(wait+run)/float64(max(run, BoundedSlowdownTau)), 1)
}

// Metrics summarises one simulation.
type Metrics struct {
	Jobs       int
	Backfilled int // started by the backfill pass
	Killed     int // ran into their time limit

	FirstSubmit int64
	LastEnd     int64
	Makespan    int64 // LastEnd - FirstSubmit, seconds

	// Utilization is the CPU-seconds used over the CPU-seconds available
	// during the makespan.
	Utilization float64
	MeanWait    float64 // seconds
	P95Wait     float64 // seconds, nearest rank
	MeanBSLD    float64 // mean bounded slowdown

	// Fragmentation is the time-averaged fraction of CPUs idle while jobs
	// were waiting (see FragMeter); BlockedTime is how long jobs waited
	// at all, the denominator of that average.
	Fragmentation float64
	BlockedTime   int64
}

// Compute derives the metrics from finished jobs on a machine of totalCPUs,
// with the fragmentation measured during the run.
func Compute(jobs []Finished, totalCPUs int64, frag *FragMeter) Metrics {
	m := Metrics{Jobs: len(jobs)}
	if frag != nil {
		m.Fragmentation = frag.Value()
		m.BlockedTime = frag.BlockedTime()
	}
	if len(jobs) == 0 {
		return m
	}
	m.FirstSubmit, m.LastEnd = jobs[0].Submit, jobs[0].End
	var used, sumWait, sumBSLD float64
	waits := make([]int64, len(jobs))
	for i, j := range jobs {
		m.FirstSubmit = min(m.FirstSubmit, j.Submit)
		m.LastEnd = max(m.LastEnd, j.End)
		used += float64(j.CPUs) * float64(j.Run())
		sumWait += float64(j.Wait())
		sumBSLD += BoundedSlowdown(j.Wait(), j.Run())
		waits[i] = j.Wait()
		if j.Backfill {
			m.Backfilled++
		}
		if j.Killed {
			m.Killed++
		}
	}
	m.Makespan = m.LastEnd - m.FirstSubmit
	if m.Makespan > 0 && totalCPUs > 0 {
		m.Utilization = used / (float64(totalCPUs) * float64(m.Makespan))
	}
	n := float64(len(jobs))
	m.MeanWait = sumWait / n
	m.MeanBSLD = sumBSLD / n
	m.P95Wait = float64(Percentile(waits, 95))
	return m
}

// Percentile returns the nearest-rank p-th percentile (the smallest value
// with at least p% of the values at or below it). It sorts a copy.
func Percentile(values []int64, p float64) int64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// FragMeter integrates idle CPUs over the time the queue is blocked: after
// the scheduling passes at an instant, jobs are still pending although every
// one of them fits the empty machine, so they wait only for resources. The
// value is
//
//	sum(idle CPUs x duration while blocked) / (total CPUs x blocked duration)
//
// the mean fraction of the machine left idle while work was waiting: CPUs
// too few or badly placed for the job at the head of the queue (and, without
// backfill, for the jobs stuck behind it).
type FragMeter struct {
	total   int64
	last    int64
	idle    int64
	blocked bool
	started bool

	blockedTime  int64
	idleCPUTimeF float64
}

// NewFragMeter returns a meter for a machine of total CPUs.
func NewFragMeter(total int64) *FragMeter { return &FragMeter{total: total} }

// Set records the state from now on: idle CPUs and whether jobs wait. Time
// must not go backwards.
func (m *FragMeter) Set(now, idle int64, blocked bool) {
	m.advance(now)
	m.idle, m.blocked = idle, blocked
}

func (m *FragMeter) advance(now int64) {
	if m.started && m.blocked && now > m.last {
		d := now - m.last
		m.blockedTime += d
		m.idleCPUTimeF += float64(m.idle) * float64(d)
	}
	if !m.started || now > m.last {
		m.last = now
	}
	m.started = true
}

// Value is the time-averaged idle fraction while blocked (0 if never blocked).
func (m *FragMeter) Value() float64 {
	if m.blockedTime == 0 || m.total == 0 {
		return 0
	}
	return m.idleCPUTimeF / (float64(m.total) * float64(m.blockedTime))
}

// BlockedTime is the total time jobs waited for resources.
func (m *FragMeter) BlockedTime() int64 { return m.blockedTime }
