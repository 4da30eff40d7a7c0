package priority

import (
	"fmt"
	"testing"
)

// benchSetup builds 50k pending jobs of 1000 users in 50 accounts, with
// usage charged, on a 10k-node cluster with every factor weighted.
func benchSetup(b *testing.B, fairTree bool) (*Multifactor, *Usage, []Job, Partition) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Plugin = PluginMultifactor
	cfg.WeightAge, cfg.WeightFairshare, cfg.WeightJobSize = 1000, 10000, 500
	cfg.WeightPartition, cfg.WeightQOS = 2000, 3000
	cfg.WeightTRES = map[string]float64{"cpu": 100, "gres/gpu": 400}
	if !fairTree {
		cfg.Flags = 0
	}
	u := NewUsage(cfg)
	for a := range 50 {
		if err := u.AddAccount(fmt.Sprintf("acct%d", a), "", uint32(1+a%5)); err != nil {
			b.Fatal(err)
		}
	}
	jobs := make([]Job, 50000)
	for i := range jobs {
		user, acct := fmt.Sprintf("user%d", i%1000), fmt.Sprintf("acct%d", i%1000%50)
		jobs[i] = Job{
			SubmitTime: int64(i), EligibleTime: int64(i), Eligible: true,
			User: user, Account: acct, MinNodes: uint32(1 + i%64), CPUs: uint32(32 * (1 + i%64)),
			TimeLimit: uint32(60 + i%1440), QOSPriority: uint32(i % 3 * 50), Nice: int32(i%7) - 3,
			TRES: map[string]uint64{"cpu": uint64(32 * (1 + i%64)), "gres/gpu": uint64(i % 5)},
		}
		u.Charge(user, acct, float64(i%97)*3600, int64(i))
	}
	m := NewMultifactor(cfg, Cluster{Nodes: 10000, CPUs: 320000, MaxPartitionJobFactor: 10, MaxQOSPriority: 100}, u)
	p := Partition{JobFactor: 5, MaxTime: Infinite, TRES: map[string]uint64{"cpu": 320000, "gres/gpu": 40000}}
	return m, u, jobs, p
}

// BenchmarkPriority50k computes the priority of 50k jobs (one scheduling
// cycle's worth), fair-share factors already fresh.
func BenchmarkPriority50k(b *testing.B) {
	for _, ft := range []bool{true, false} {
		b.Run(fmt.Sprintf("fairTree=%v", ft), func(b *testing.B) {
			m, u, jobs, p := benchSetup(b, ft)
			u.Decay(100000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for i := range jobs {
					jobs[i].Previous = m.Priority(&jobs[i], &p, 200000)
				}
			}
		})
	}
}

// BenchmarkDecayAndRefresh50k is one decay pass followed by the fair-share
// refresh it triggers (1000 users in 50 accounts).
func BenchmarkDecayAndRefresh50k(b *testing.B) {
	for _, ft := range []bool{true, false} {
		b.Run(fmt.Sprintf("fairTree=%v", ft), func(b *testing.B) {
			_, u, _, _ := benchSetup(b, ft)
			clock := int64(100000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clock += 300
				u.Decay(clock)
				u.FairShareFactor("user1", "acct1")
			}
		})
	}
}
