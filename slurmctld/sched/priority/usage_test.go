package priority

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/conf"
)

func usageConfig(fairTree bool, halfLife uint32) Config {
	cfg := DefaultConfig()
	cfg.DecayHalfLife = halfLife
	if !fairTree {
		cfg.Flags &^= conf.PriorityFairTree
	}
	return cfg
}

// tree builds root -> A (1 share) {u1, u2}, B (3 shares) {u3} and charges
// u1/A and u3/B at t=1000 without decay.
func tree(t *testing.T, fairTree bool, chargeA, chargeB float64) *Usage {
	t.Helper()
	u := NewUsage(usageConfig(fairTree, 0))
	must(t, u.AddAccount("A", "", 1))
	must(t, u.AddAccount("B", "root", 3))
	must(t, u.AddUser("u1", "A", 1))
	must(t, u.AddUser("u2", "A", 1))
	must(t, u.AddUser("u3", "B", 1))
	u.Charge("u1", "A", chargeA, 1000)
	u.Charge("u3", "B", chargeB, 1000)
	return u
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestClassicFairShare(t *testing.T) {
	// By hand (NO_FAIR_TREE): root raw 400.
	// shares_norm: A 1/4, B 3/4, u1 = u2 = 1/2*1/4 = 1/8, u3 = 3/4.
	// usage_norm: A .25, B .75, u1 .25, u2 0, u3 .75.
	// effective: u1 = .25+(.25-.25)/2 = .25, u2 = 0+(.25-0)/2 = .125,
	// u3 = .75+(.75-.75)*1 = .75.
	// factor: u1 2^-(.25/.125) = .25, u2 2^-1 = .5, u3 2^-1 = .5.
	u := tree(t, false, 100, 300)
	for _, tt := range []struct {
		user, acct string
		want       float64
	}{{"u1", "A", 0.25}, {"u2", "A", 0.5}, {"u3", "B", 0.5}} {
		if got := u.FairShareFactor(tt.user, tt.acct); !near(got, tt.want) {
			t.Errorf("factor %s/%s = %v, want %v", tt.user, tt.acct, got, tt.want)
		}
	}
	rows := map[string]Assoc{}
	for _, a := range u.Associations() {
		rows[a.Account+"/"+a.User] = a
	}
	if r := rows["A/u2"]; !near(r.NormShares, 0.125) || !near(r.EffectvUsage, 0.125) || r.NormUsage != 0 {
		t.Errorf("A/u2 row %+v", r)
	}
	if r := rows["B/"]; !near(r.NormShares, 0.75) || !near(r.NormUsage, 0.75) || r.RawUsage != 300 || r.Parent != "root" {
		t.Errorf("B row %+v", r)
	}
	if r := rows["root/"]; r.RawUsage != 400 {
		t.Errorf("root row %+v", r)
	}
}

func TestDepthOblivious(t *testing.T) {
	cfg := usageConfig(false, 0)
	cfg.Flags = conf.PriorityDepthOblivious
	u := NewUsage(cfg)
	must(t, u.AddAccount("A", "", 1))
	must(t, u.AddAccount("B", "", 3))
	must(t, u.AddUser("u1", "A", 1))
	must(t, u.AddUser("u2", "A", 1))
	must(t, u.AddUser("u3", "B", 1))
	u.Charge("u1", "A", 100, 0)
	u.Charge("u2", "A", 50, 0)
	u.Charge("u3", "B", 50, 0)
	// By hand: root 200; A norm .75 over shares .25: ratio_p 3.
	// u1: norm .5, shares .125, siblings (.5+.25)/.25 = 3, ratio_l 4/3,
	// same direction: k 1, UE = 3*4/3*.125 = .5, factor 2^-4.
	// u2: ratio_l 2/3, opposite: k = 1/(1+(5 ln 3)^2) = .0320783,
	// UE = 3*(2/3)^k*.125 = .370154, factor 2^-(UE/.125) = .128404.
	// u3: B ratio_p 1/3, ratio_l 1: k 1, UE .25, factor 2^-(1/3).
	for _, tt := range []struct {
		user, acct string
		want       float64
	}{{"u1", "A", 0.0625}, {"u2", "A", 0.12840446091722832}, {"u3", "B", 0.7937005259840998}} {
		if got := u.FairShareFactor(tt.user, tt.acct); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("factor %s = %v, want %v", tt.user, got, tt.want)
		}
	}
}

func TestClassicDampening(t *testing.T) {
	cfg := usageConfig(false, 0)
	cfg.DampeningFactor = 2
	u := NewUsage(cfg)
	must(t, u.AddAccount("A", "", 1))
	must(t, u.AddUser("u1", "A", 1))
	u.Charge("u1", "A", 50, 0)
	// Alone: shares_norm 1, effective usage 1: 2^-(1/2).
	if got, want := u.FairShareFactor("u1", "A"), math.Pow(2, -0.5); !near(got, want) {
		t.Fatalf("damped factor = %v, want %v", got, want)
	}
	if got := ClassicFactor(1, 0, 1); got != 0 {
		t.Fatalf("no shares: factor %v, want 0", got)
	}
}

func TestFairTree(t *testing.T) {
	tests := []struct {
		name             string
		chargeA, chargeB float64
		want             map[string]float64
	}{
		{
			// A: S .25 / U .25 = 1; B: .75/.75 = 1: tied, A first by
			// name. In A: u2 (no usage, LF +Inf) rank 3, u1 (.5/1) rank
			// 2. B starts tied, so u3 keeps rank 2.
			"tied accounts", 100, 300,
			map[string]float64{"u1": 2.0 / 3, "u2": 1, "u3": 2.0 / 3},
		},
		{
			// A: .25/(1/3) = .75; B: .75/(2/3) = 1.125: B first, u3
			// rank 3; then u2 rank 2, u1 rank 1.
			"B under-served", 100, 200,
			map[string]float64{"u1": 1.0 / 3, "u2": 2.0 / 3, "u3": 1},
		},
		{
			"no usage at all: everybody tied at the top", 0, 0,
			map[string]float64{"u1": 1, "u2": 1, "u3": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tree(t, true, tt.chargeA, tt.chargeB)
			for user, want := range tt.want {
				acct := "A"
				if user == "u3" {
					acct = "B"
				}
				if got := u.FairShareFactor(user, acct); !near(got, want) {
					t.Errorf("factor %s = %v, want %v", user, got, want)
				}
			}
		})
	}
}

func TestFairTreeZeroShares(t *testing.T) {
	u := NewUsage(usageConfig(true, 0))
	must(t, u.AddAccount("A", "", 0))
	must(t, u.AddAccount("B", "", 1))
	must(t, u.AddUser("a", "A", 1))
	must(t, u.AddUser("b", "B", 1))
	u.Charge("b", "B", 1000, 0)
	// A has no shares: LF 0, ranked after B however much B used.
	if got := u.FairShareFactor("b", "B"); got != 1 {
		t.Errorf("b factor %v, want 1", got)
	}
	if got := u.FairShareFactor("a", "A"); got != 0.5 {
		t.Errorf("a factor %v, want 0.5", got)
	}
}

func TestAutoCreate(t *testing.T) {
	u := NewUsage(usageConfig(true, 0))
	u.Charge("bob", "chem", 10, 5)
	if got := u.RawUsage("", "chem"); got != 10 {
		t.Fatalf("chem raw %v", got)
	}
	if got := u.RawUsage("", ""); got != 10 {
		t.Fatalf("root raw %v", got)
	}
	// A new user of a new account has not used anything: top rank.
	if got := u.FairShareFactor("carol", "bio"); got != 1 {
		t.Fatalf("new user factor %v, want 1", got)
	}
	if got := u.FairShareFactor("bob", "chem"); got != 0.5 {
		t.Fatalf("bob factor %v, want 0.5", got)
	}
	if err := u.AddUser("x", "nosuch", 1); err == nil {
		t.Fatal("AddUser to a missing account succeeded")
	}
	if err := u.AddAccount("chem", "bio", 1); err == nil {
		t.Fatal("moving an account succeeded")
	}
}

func TestDecayPinned(t *testing.T) {
	u := NewUsage(usageConfig(false, 3600))
	u.Charge("u", "a", 1000, 100)
	u.Decay(3700)
	// 1000 * (1 - 0.693/3600)^3600 = 500.040236993...
	if got := u.RawUsage("u", "a"); math.Abs(got-500.04023699321) > 1e-6 {
		t.Fatalf("after one half-life: %v", got)
	}
	// Usage stamped in the past is decayed by its age on arrival.
	u.Charge("v", "a", 1000, 100)
	if got := u.RawUsage("v", "a"); math.Abs(got-500.04023699321) > 1e-6 {
		t.Fatalf("late charge: %v", got)
	}
	// Time going backwards changes nothing.
	u.Decay(50)
	if got := u.RawUsage("u", "a"); math.Abs(got-500.04023699321) > 1e-6 {
		t.Fatalf("after backwards Decay: %v", got)
	}
}

func TestNoDecay(t *testing.T) {
	cfg := usageConfig(false, 0)
	cfg.UsageReset = ResetMonthly
	u := NewUsage(cfg)
	u.Charge("u", "a", 1000, 100)
	u.Decay(100 + 10*week)
	if got := u.RawUsage("u", "a"); got != 1000 {
		t.Fatalf("half-life 0 decayed usage to %v", got)
	}
}

func TestResets(t *testing.T) {
	day := int64(24 * 3600)
	// Wednesday 2026-01-14 10:00 UTC.
	start := time.Date(2026, 1, 14, 10, 0, 0, 0, time.UTC).Unix()
	tests := []struct {
		period    ResetPeriod
		wantNext  time.Time
		clearedAt int64 // first Decay time (after start) that clears
	}{
		{ResetDaily, time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), 0},
		{ResetWeekly, time.Date(2026, 1, 18, 0, 0, 0, 0, time.UTC), 0}, // next Sunday
		{ResetMonthly, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 0},
		{ResetQuarterly, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), 0},
		{ResetYearly, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), 0},
	}
	for _, tt := range tests {
		t.Run(tt.period.String(), func(t *testing.T) {
			cfg := usageConfig(false, 0)
			cfg.UsageReset = tt.period
			u := NewUsage(cfg)
			u.Charge("u", "a", 1000, start)
			u.Decay(start)
			if got := time.Unix(u.NextReset(), 0).UTC(); !got.Equal(tt.wantNext) {
				t.Fatalf("next reset %v, want %v", got, tt.wantNext)
			}
			u.Decay(tt.wantNext.Unix() - 1)
			if got := u.RawUsage("u", "a"); got != 1000 {
				t.Fatalf("cleared early: %v", got)
			}
			u.Decay(tt.wantNext.Unix())
			if got := u.RawUsage("u", "a"); got != 0 {
				t.Fatalf("not cleared at the boundary: %v", got)
			}
			if u.LastReset() != tt.wantNext.Unix() || u.NextReset() <= u.LastReset() {
				t.Fatalf("schedule after reset: last %d next %d", u.LastReset(), u.NextReset())
			}
		})
	}

	// NOW clears once, at the first pass.
	cfg := usageConfig(false, 0)
	cfg.UsageReset = ResetNow
	u := NewUsage(cfg)
	u.Charge("u", "a", 1000, start)
	u.Decay(start)
	u.Charge("u", "a", 7, start)
	u.Decay(start + day)
	if got := u.RawUsage("u", "a"); got != 7 {
		t.Fatalf("NOW reset: usage %v, want 7", got)
	}

	// Daily boundaries skip ahead after a long pause; time zones move them.
	loc := time.FixedZone("UTC+2", 2*3600)
	cfg.UsageReset = ResetDaily
	u = NewUsage(cfg)
	u.SetLocation(loc)
	u.Decay(start)
	if got, want := time.Unix(u.NextReset(), 0).In(loc), time.Date(2026, 1, 15, 0, 0, 0, 0, loc); !got.Equal(want) {
		t.Fatalf("next reset in UTC+2 %v, want %v", got, want)
	}
	// After the reset at Jan 24 12:00 the next boundary is the last
	// midnight not more than a day before now (Slurm's loop), Jan 24
	// 00:00, already past: the following pass resets once more.
	u.Decay(start + 10*day)
	if got, want := time.Unix(u.NextReset(), 0).In(loc), time.Date(2026, 1, 24, 0, 0, 0, 0, loc); !got.Equal(want) {
		t.Fatalf("next reset after a pause %v, want %v", got, want)
	}
}

func TestStateRoundTrip(t *testing.T) {
	for _, fairTree := range []bool{true, false} {
		cfg := usageConfig(fairTree, 3600)
		cfg.UsageReset = ResetDaily
		u := NewUsage(cfg)
		must(t, u.AddAccount("A", "", 2))
		must(t, u.AddAccount("A1", "A", 5))
		must(t, u.AddUser("x", "A1", 3))
		u.Charge("x", "A1", 100, 10)
		u.Charge("y", "B", 300, 20)
		u.Decay(500)
		st := u.State()
		r, err := RestoreUsage(cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(u.Associations(), r.Associations()); d != "" {
			t.Fatalf("fairTree=%v: restored associations differ (-orig +restored):\n%s", fairTree, d)
		}
		if d := cmp.Diff(st, r.State()); d != "" {
			t.Fatalf("state differs after a round trip:\n%s", d)
		}
		// Both go on identically.
		for _, v := range []*Usage{u, r} {
			v.Charge("x", "A1", 50, 900)
			v.Decay(4000)
		}
		if d := cmp.Diff(u.Associations(), r.Associations()); d != "" {
			t.Fatalf("diverged after restore:\n%s", d)
		}
	}
	if _, err := RestoreUsage(DefaultConfig(), UsageState{Assocs: []AssocState{{Account: "A", Parent: "nosuch"}}}); err == nil {
		t.Fatal("restoring an orphan account succeeded")
	}
}
