package priority

import (
	"fmt"
	"math"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"pgregory.net/rapid"
)

// genMultifactor draws weights, cluster and a job eligible at accrue.
func genMultifactor(t *rapid.T) (*Multifactor, Job, Partition, int64) {
	cfg := DefaultConfig()
	cfg.Plugin = PluginMultifactor
	cfg.WeightAge = rapid.Uint32Range(1, 1<<24).Draw(t, "wAge")
	cfg.WeightFairshare = rapid.Uint32Range(0, 1<<24).Draw(t, "wFS")
	cfg.WeightJobSize = rapid.Uint32Range(0, 1<<24).Draw(t, "wJS")
	cfg.WeightPartition = rapid.Uint32Range(0, 1<<24).Draw(t, "wPart")
	cfg.WeightQOS = rapid.Uint32Range(0, 1<<24).Draw(t, "wQOS")
	cfg.MaxAge = rapid.Uint32Range(60, 30*24*3600).Draw(t, "maxAge")
	cfg.FavorSmall = rapid.Bool().Draw(t, "favorSmall")
	if rapid.Bool().Draw(t, "accrueAlways") {
		cfg.Flags |= conf.PriorityAccrueAlways
	}
	nodes := rapid.Uint32Range(1, 10000).Draw(t, "nodes")
	cl := Cluster{
		Nodes: nodes, CPUs: nodes * rapid.Uint32Range(1, 256).Draw(t, "cpn"),
		MaxPartitionJobFactor: rapid.Uint16Range(1, 1000).Draw(t, "maxPJF"),
		MaxQOSPriority:        rapid.Uint32Range(0, 1000).Draw(t, "maxQOS"),
	}
	m := NewMultifactor(cfg, cl, fixedFS(rapid.Float64Range(0, 1).Draw(t, "fs")))
	accrue := rapid.Int64Range(0, 1<<40).Draw(t, "accrue")
	j := Job{
		SubmitTime: accrue, EligibleTime: accrue, Eligible: true,
		MinNodes:    rapid.Uint32Range(1, nodes).Draw(t, "minNodes"),
		CPUs:        rapid.Uint32Range(0, cl.CPUs).Draw(t, "cpus"),
		TimeLimit:   rapid.Uint32Range(1, 100000).Draw(t, "limit"),
		QOSPriority: rapid.Uint32Range(0, cl.MaxQOSPriority).Draw(t, "qos"),
		Nice:        rapid.Int32Range(-100000, 100000).Draw(t, "nice"),
	}
	p := Partition{JobFactor: rapid.Uint16Range(0, cl.MaxPartitionJobFactor).Draw(t, "pjf"), MaxTime: Infinite}
	return m, j, p, accrue
}

func TestPropPriorityMonotoneInAge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, j, p, accrue := genMultifactor(t)
		maxAge := int64(m.Config.MaxAge)
		t1 := accrue + rapid.Int64Range(-1000, maxAge+1000).Draw(t, "t1")
		t2 := t1 + rapid.Int64Range(0, maxAge+1000).Draw(t, "dt")
		p1, p2 := m.Priority(&j, &p, t1), m.Priority(&j, &p, t2)
		if p1 > p2 {
			t.Fatalf("priority fell with age: %d at %d, %d at %d", p1, t1, p2, t2)
		}
		capped := m.Priority(&j, &p, accrue+maxAge)
		if t2 >= accrue+maxAge && p2 != capped {
			t.Fatalf("priority %d at %d differs from %d at MaxAge", p2, t2, capped)
		}
	})
}

// genTree draws an account tree (up to two levels of accounts) with users,
// random shares and random past usage.
func genTree(t *rapid.T, flags conf.PriorityFlagBits) (*Usage, []userKey) {
	cfg := DefaultConfig()
	cfg.Flags = flags
	cfg.DecayHalfLife = rapid.Uint32Range(0, 30*24*3600).Draw(t, "halfLife")
	u := NewUsage(cfg)
	accounts := []string{RootAccount}
	for i := range rapid.IntRange(1, 5).Draw(t, "accounts") {
		name := fmt.Sprintf("acct%d", i)
		parent := rapid.SampledFrom(accounts).Draw(t, "parent")
		if err := u.AddAccount(name, parent, rapid.Uint32Range(0, 10).Draw(t, "acctShares")); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, name)
	}
	var users []userKey
	for i := range rapid.IntRange(1, 8).Draw(t, "users") {
		k := userKey{fmt.Sprintf("user%d", i), rapid.SampledFrom(accounts).Draw(t, "account")}
		if err := u.AddUser(k.user, k.account, rapid.Uint32Range(0, 10).Draw(t, "userShares")); err != nil {
			t.Fatal(err)
		}
		users = append(users, k)
	}
	clock := int64(0)
	for range rapid.IntRange(0, 20).Draw(t, "charges") {
		k := rapid.SampledFrom(users).Draw(t, "who")
		clock += rapid.Int64Range(0, 3600).Draw(t, "dt")
		u.Charge(k.user, k.account, rapid.Float64Range(0, 1e7).Draw(t, "amount"), clock)
	}
	u.Decay(clock)
	return u, users
}

func TestPropMoreUsageNeverRaisesFactor(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags conf.PriorityFlagBits
	}{{"fair tree", conf.PriorityFairTree}, {"classic", 0}, {"depth oblivious", conf.PriorityDepthOblivious}} {
		t.Run(mode.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				u, users := genTree(t, mode.flags)
				k := rapid.SampledFrom(users).Draw(t, "charged")
				before := u.FairShareFactor(k.user, k.account)
				for _, a := range u.Associations() {
					if a.User != "" && (a.FairShare < 0 || a.FairShare > 1 || a.FairShare != a.FairShare) {
						t.Fatalf("factor out of range: %+v", a)
					}
				}
				// Charged at the tracker's current time, so nothing decays.
				u.Charge(k.user, k.account, rapid.Float64Range(1, 1e7).Draw(t, "extra"), u.last)
				after := u.FairShareFactor(k.user, k.account)
				if after > before+1e-12 {
					t.Fatalf("%s/%s factor rose from %v to %v with more usage", k.user, k.account, before, after)
				}
			})
		})
	}
}

func TestPropDecayHalvesAfterHalfLife(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hl := rapid.Uint32Range(60, 365*24*3600).Draw(t, "halfLife")
		u := NewUsage(usageConfig(false, hl))
		at := rapid.Int64Range(-1<<40, 1<<40).Draw(t, "at")
		amount := rapid.Float64Range(1, 1e12).Draw(t, "amount")
		u.Charge("u", "a", amount, at)
		// Decay in random steps up to one half-life later: same result.
		clock := at
		for clock < at+int64(hl) {
			clock = min(at+int64(hl), clock+rapid.Int64Range(1, int64(hl)).Draw(t, "step"))
			u.Decay(clock)
		}
		ratio := u.RawUsage("u", "a") / amount
		// Slurm's 1-0.693/h approximation: 0.49806 for a minute, 0.50007 for
		// a week, 0.50008 at most.
		if ratio < 0.498 || ratio > 0.5001 {
			t.Fatalf("half-life %d s left %v of the usage", hl, ratio)
		}
		if want := math.Pow(DecayFactor(hl), float64(hl)); math.Abs(ratio-want) > 1e-9 {
			t.Fatalf("ratio %v, want %v", ratio, want)
		}
		if root := u.RawUsage("", ""); math.Abs(root-u.RawUsage("u", "a")) > 1e-9*root {
			t.Fatalf("root %v and user %v disagree", root, u.RawUsage("u", "a"))
		}
	})
}

func TestPropBasicStrictlyFIFO(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := NewBasic()
		var last uint32 = math.MaxUint32
		for range rapid.IntRange(1, 200).Draw(t, "jobs") {
			// Nice jobs in between never change the order of plain ones.
			if rapid.Bool().Draw(t, "niceJob") {
				b.Assign(rapid.Int32Range(-10000, 10000).Draw(t, "nice"))
			}
			p := b.Assign(0)
			if p >= last || p == 0 {
				t.Fatalf("priority %d after %d", p, last)
			}
			last = p
		}
	})
}
