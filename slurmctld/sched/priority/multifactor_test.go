package priority

import (
	"math"
	"testing"

	"github.com/goslurm/goslurm/conf"
)

// fixedFS is a FairShareSource returning one value for everybody.
type fixedFS float64

func (f fixedFS) FairShareFactor(string, string) float64 { return float64(f) }

const (
	week = 7 * 24 * 3600
	now  = int64(1_000_000_000)
)

// baseline: weights and a job whose weighted factors are, by hand,
// age 0.5*1000=500, fair-share 0.25*10000=2500,
// job size (10/100+320/3200)/2=0.1*500=50, partition 5/10*2000=1000,
// QOS 50/100*3000=1500: 5550 in all.
func baseline() (*Multifactor, Job, Partition) {
	cfg := DefaultConfig()
	cfg.Plugin = PluginMultifactor
	cfg.WeightAge, cfg.WeightFairshare, cfg.WeightJobSize = 1000, 10000, 500
	cfg.WeightPartition, cfg.WeightQOS = 2000, 3000
	m := NewMultifactor(cfg, Cluster{Nodes: 100, CPUs: 3200, MaxPartitionJobFactor: 10, MaxQOSPriority: 100}, fixedFS(0.25))
	j := Job{
		SubmitTime: now - 2*week, EligibleTime: now - week/2, Eligible: true,
		User: "alice", Account: "physics",
		MinNodes: 10, CPUs: 320, TimeLimit: 60, QOSPriority: 50,
	}
	p := Partition{JobFactor: 5, MaxTime: Infinite}
	return m, j, p
}

func TestMultifactorPriority(t *testing.T) {
	tests := []struct {
		name string
		mod  func(m *Multifactor, j *Job, p *Partition)
		want uint32
	}{
		{"baseline", func(*Multifactor, *Job, *Partition) {}, 5550},
		{"nice lowers", func(_ *Multifactor, j *Job, _ *Partition) { j.Nice = 100 }, 5450},
		{"negative nice raises", func(_ *Multifactor, j *Job, _ *Partition) { j.Nice = -50 }, 5600},
		{"nice clamps at 1", func(_ *Multifactor, j *Job, _ *Partition) { j.Nice = 10000 }, 1},
		{"site factor adds", func(_ *Multifactor, j *Job, _ *Partition) { j.SiteFactor = 7 }, 5557},
		{"held is 0", func(_ *Multifactor, j *Job, _ *Partition) { j.Held = true }, 0},
		{"operator priority kept", func(_ *Multifactor, j *Job, _ *Partition) { j.AdminPriority = 42 }, 42},
		{"age capped at MaxAge", func(_ *Multifactor, j *Job, _ *Partition) { j.EligibleTime = now - 3*week }, 6050},
		{"not eligible: no age", func(_ *Multifactor, j *Job, _ *Partition) { j.Eligible = false }, 5050},
		{"eligible in the future: no age", func(_ *Multifactor, j *Job, _ *Partition) { j.EligibleTime = now + 10 }, 5050},
		{"ACCRUE_ALWAYS ages from submit", func(m *Multifactor, j *Job, _ *Partition) {
			m.Config.Flags |= conf.PriorityAccrueAlways
			j.Eligible = false
		}, 6050},
		{"age truncates", func(m *Multifactor, j *Job, _ *Partition) {
			// 100000/604800*1000 = 165.34 -> 165 (+5050)
			j.EligibleTime = now - 100000
		}, 5215},
		{"favor small", func(m *Multifactor, _ *Job, _ *Partition) {
			// ((100-10)/100 + (3200-320)/3200)/2 = 0.9 -> 450
			m.Config.FavorSmall = true
		}, 5950},
		{"favor large without cpus", func(_ *Multifactor, j *Job, _ *Partition) { j.CPUs = 0 }, 5550},
		{"favor large nodes only", func(_ *Multifactor, j *Job, _ *Partition) { j.CPUs, j.MinNodes = 0, 30 }, 5650},
		{"small relative to time", func(m *Multifactor, j *Job, _ *Partition) {
			// max(10*3200/100, 640)/60/3200 = 0.00333 -> 1.67
			m.Config.Flags |= conf.PrioritySizeRelative
			j.CPUs = 640
		}, 5501},
		{"small relative to time, favor small", func(m *Multifactor, j *Job, _ *Partition) {
			// (1 - 0.00333)*500 = 498.33
			m.Config.Flags |= conf.PrioritySizeRelative
			m.Config.FavorSmall = true
			j.CPUs = 640
		}, 5998},
		{"small relative, partition MaxTime when no limit", func(m *Multifactor, j *Job, p *Partition) {
			// 320 cpus / 2 minutes / 3200 = 0.05 -> 25
			m.Config.Flags |= conf.PrioritySizeRelative
			j.TimeLimit, p.MaxTime = NoValue, 2
		}, 5525},
		{"partition factor needs JobFactor", func(_ *Multifactor, _ *Job, p *Partition) { p.JobFactor = 0 }, 4550},
		{"no partition", func(m *Multifactor, j *Job, p *Partition) {
			*p = Partition{}
		}, 4550},
		{"NO_NORMAL_PART", func(m *Multifactor, _ *Job, _ *Partition) { m.Config.Flags |= conf.PriorityNoNormalPart }, 14550},
		{"NO_NORMAL_QOS", func(m *Multifactor, _ *Job, _ *Partition) { m.Config.Flags |= conf.PriorityNoNormalQOS }, 154050},
		{"QOS without max", func(m *Multifactor, _ *Job, _ *Partition) { m.Cluster.MaxQOSPriority = 0 }, 4050},
		{"assoc factor", func(m *Multifactor, j *Job, _ *Partition) {
			m.Config.WeightAssoc, m.Cluster.MaxAssocPriority, j.AssocPriority = 400, 8, 2
		}, 5650},
		{"INCR_ONLY keeps a higher previous value", func(m *Multifactor, j *Job, _ *Partition) {
			m.Config.Flags |= conf.PriorityIncrOnly
			j.Previous = 6000
		}, 6000},
		{"INCR_ONLY takes a higher new value", func(m *Multifactor, j *Job, _ *Partition) {
			m.Config.Flags |= conf.PriorityIncrOnly
			j.Previous = 5000
		}, 5550},
		{"previous ignored without INCR_ONLY", func(_ *Multifactor, j *Job, _ *Partition) { j.Previous = 6000 }, 5550},
		{"clamp at 2^32-1", func(m *Multifactor, _ *Job, _ *Partition) {
			m.Config.WeightQOS = 4000000000
			m.Config.Flags |= conf.PriorityNoNormalQOS
		}, 0xffffffff},
		{"TRES weights", func(m *Multifactor, j *Job, p *Partition) {
			// 320/3200*1000 + 4/16*2000 = 600
			m.Config.WeightTRES = map[string]float64{"cpu": 1000, "gres/gpu": 2000, "mem": 5}
			j.TRES = map[string]uint64{"cpu": 320, "gres/gpu": 4}
			p.TRES = map[string]uint64{"cpu": 3200, "gres/gpu": 16, "mem": 1 << 20}
		}, 6150},
		{"TRES NO_NORMAL_TRES", func(m *Multifactor, j *Job, p *Partition) {
			m.Config.WeightTRES = map[string]float64{"gres/gpu": 2.5}
			m.Config.Flags |= conf.PriorityNoNormalTRES
			j.TRES = map[string]uint64{"gres/gpu": 4}
		}, 5560},
		{"no fair-share source", func(m *Multifactor, _ *Job, _ *Partition) { m.FairShare = nil }, 3050},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, j, p := baseline()
			tt.mod(m, &j, &p)
			if got := m.Priority(&j, &p, now); got != tt.want {
				f := m.Factors(&j, &p, now)
				t.Errorf("Priority = %d, want %d (factors %+v, weighted %v)", got, tt.want, f, m.Weighted(f))
			}
		})
	}
}

func TestMultifactorFactorsNormalized(t *testing.T) {
	m, j, p := baseline()
	f := m.Factors(&j, &p, now)
	want := Factors{Age: 0.5, FairShare: 0.25, JobSize: 0.1, Partition: 0.5, QOS: 0.5}
	if f != want {
		t.Fatalf("Factors = %+v, want %+v", f, want)
	}
	// Zero weights leave factors at 0, as sprio shows them.
	m.Config.WeightAge, m.Config.WeightFairshare = 0, 0
	if f := m.Factors(&j, &p, now); f.Age != 0 || f.FairShare != 0 {
		t.Fatalf("factors with zero weights: %+v", f)
	}
}

func TestJobSizeEdgeCases(t *testing.T) {
	m, j, p := baseline()
	m.Cluster = Cluster{} // no nodes: 10/0 is +Inf, clamped to 1 as in C
	if f := m.Factors(&j, &p, now); f.JobSize != 1 {
		t.Errorf("empty cluster job size = %v, want 1", f.JobSize)
	}
	j.MinNodes, j.CPUs = 0, 0 // 0/0 is NaN: C keeps it (undefined cast), we use 0
	if f := m.Factors(&j, &p, now); f.JobSize != 0 {
		t.Errorf("empty cluster, empty job size = %v, want 0", f.JobSize)
	}
	m, j, p = baseline()
	m.Config.FavorSmall = true
	j.CPUs = 6400 // more than the cluster: unsigned difference wraps, factor clamps to 1
	if f := m.Factors(&j, &p, now); f.JobSize != 1 {
		t.Errorf("oversized job favor-small = %v, want 1", f.JobSize)
	}
}

func TestClamp(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want uint32
	}{
		{-5, 1}, {0, 1}, {0.999, 1}, {1, 1}, {1.999, 1}, {2.5, 2},
		{4294967294.9, 4294967294}, {4294967295, 4294967295}, {1e20, 4294967295},
		{math.NaN(), 1}, {math.Inf(1), 4294967295}, {math.Inf(-1), 1},
	} {
		if got := Clamp(tt.in); got != tt.want {
			t.Errorf("Clamp(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
