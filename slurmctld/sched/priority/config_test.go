package priority

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/conf"
)

func parseConf(t *testing.T, extra string) *conf.Config {
	t.Helper()
	c, err := conf.Parse("slurm.conf", []byte("ClusterName=c\nSlurmctldHost=h\n"+extra), conf.MapFS{})
	if err != nil {
		t.Fatalf("conf.Parse: %v", err)
	}
	return c
}

func TestFromConfDefaults(t *testing.T) {
	got, err := FromConf(parseConf(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Plugin: PluginBasic, MaxAge: 604800, DecayHalfLife: 604800, CalcPeriod: 300,
		UsageReset: ResetNone, Flags: conf.PriorityFairTree, DampeningFactor: 1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	if d := cmp.Diff(DefaultConfig(), got); d != "" {
		t.Errorf("DefaultConfig differs from an empty slurm.conf (-want +got):\n%s", d)
	}
}

func TestFromConfMultifactor(t *testing.T) {
	c := parseConf(t, `PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=500
PriorityWeightPartition=2000
PriorityWeightQOS=3000
PriorityWeightAssoc=7
PriorityWeightTRES=CPU=1000,Mem=2G
PriorityMaxAge=1-0
PriorityDecayHalfLife=2-0
PriorityCalcPeriod=2
PriorityFavorSmall=YES
PriorityUsageResetPeriod=weekly
PriorityFlags=NO_FAIR_TREE,ACCRUE_ALWAYS,SMALL_RELATIVE_TO_TIME
FairShareDampeningFactor=3
`)
	got, err := FromConf(c)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Plugin: PluginMultifactor, WeightAge: 1000, WeightAssoc: 7, WeightFairshare: 10000,
		WeightJobSize: 500, WeightPartition: 2000, WeightQOS: 3000,
		WeightTRES: map[string]float64{"cpu": 1000, "mem": 2.0 / 1024},
		MaxAge:     86400, DecayHalfLife: 172800, CalcPeriod: 120, UsageReset: ResetWeekly,
		FavorSmall: true, Flags: conf.PriorityAccrueAlways | conf.PrioritySizeRelative,
		DampeningFactor: 3,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got.FairTree() {
		t.Error("NO_FAIR_TREE given but FairTree() is true")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" = valid
	}{
		{"default", func(*Config) {}, ""},
		{"multifactor", func(c *Config) { c.Plugin = PluginMultifactor }, ""},
		{"bad plugin", func(c *Config) { c.Plugin = 7 }, "unknown priority plugin"},
		{"calc period 0", func(c *Config) { c.CalcPeriod = 0 }, "PriorityCalcPeriod"},
		{"no decay no reset", func(c *Config) { c.DecayHalfLife = 0 }, "PriorityDecayHalfLife != 0"},
		{"no decay with reset", func(c *Config) { c.DecayHalfLife, c.UsageReset = 0, ResetMonthly }, ""},
		{"bad reset", func(c *Config) { c.UsageReset = 42 }, "PriorityUsageResetPeriod"},
		{"damp 0", func(c *Config) { c.DampeningFactor = 0 }, "FairShareDampeningFactor"},
		{"depth oblivious", func(c *Config) { c.Flags = conf.PriorityDepthOblivious }, ""},
		{"negative tres weight is Slurm's business", func(c *Config) { c.WeightTRES = map[string]float64{"cpu": -1} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v, want one containing %q wrapping ErrConfig", err, tt.want)
			}
		})
	}
}

func TestFromConfErrors(t *testing.T) {
	c := parseConf(t, "")
	c.PriorityType = "priority/fancy"
	c.PriorityUsageResetPeriod = "hourly"
	_, err := FromConf(c)
	for _, want := range []string{"PriorityType=priority/fancy", `Bad value "hourly" for PriorityUsageResetPeriod`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to contain %q", err, want)
		}
	}
	if _, err := FromConf(nil); err == nil {
		t.Error("FromConf(nil) succeeded")
	}
}

func TestParseResetPeriod(t *testing.T) {
	for i, n := range []string{"none", "NOW", "Daily", "weekly", "monthly", "quarterly", "YEARLY"} {
		r, err := ParseResetPeriod(n)
		if err != nil || r != ResetPeriod(i) {
			t.Errorf("ParseResetPeriod(%q) = %v, %v; want %v", n, r, err, ResetPeriod(i))
		}
		if !strings.EqualFold(r.String(), n) {
			t.Errorf("%v.String() = %q", r, r.String())
		}
	}
}

func TestParseTRESWeights(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]float64
		err  string
	}{
		{"", map[string]float64{}, ""},
		{"CPU=1000,Mem=2000G,GRES/gpu=3000", map[string]float64{"cpu": 1000, "mem": 2000.0 / 1024, "gres/gpu": 3000}, ""},
		{",,cpu=1.5e3,,", map[string]float64{"cpu": 1500}, ""},
		{"Mem=2K", map[string]float64{"mem": 2}, ""}, // below the MB base unit: unchanged
		{"Mem=3M", map[string]float64{"mem": 3}, ""}, // the base unit itself
		{"mem=1T", map[string]float64{"mem": 1.0 / 1048576}, ""},
		{"cpu=1K", map[string]float64{"cpu": 1.0 / 1024}, ""}, // count TRES: K divides
		{"BB=4g", map[string]float64{"bb": 4.0 / 1024}, ""},
		{"cpu=2Gjunk", map[string]float64{"cpu": 2.0 / (1024 * 1024 * 1024)}, ""}, // only the first letter counts
		{"License/Matlab=.5", map[string]float64{"license/matlab": 0.5}, ""},
		{"cpu=-2", map[string]float64{"cpu": -2}, ""},
		{"cpu", nil, `"cpu" is an invalid TRES weight entry`},
		{"cpu=", nil, "invalid TRES weight entry"},
		{"=5", nil, "invalid TRES weight entry"},
		{"cpu=abc", nil, "Invalid unit type 'a'"},
		{"cpu=1x", nil, "Invalid unit type 'x'"},
		{"cpu=1e999", nil, "Unable to convert"},
		{"cpu=0x10", nil, "Invalid unit type 'x'"},
	}
	for _, tt := range tests {
		got, err := ParseTRESWeights(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseTRESWeights(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTRESWeights(%q): %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseTRESWeights(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func FuzzParseTRESWeights(f *testing.F) {
	for _, s := range []string{"CPU=1000,Mem=2000G,GRES/gpu=3000", "cpu=1e3", "=", ",,", "mem= 5k", "a/b/c=1P", "cpu=-.5e-3M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseTRESWeights(s)
		if err != nil {
			if w != nil || !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v with result %v", err, w)
			}
			return
		}
		for k, v := range w {
			if k != strings.ToLower(k) || v != v {
				t.Fatalf("bad entry %q=%v", k, v)
			}
		}
		// A valid string stays valid, with the same values, when
		// re-joined from its own items.
		items := strings.Split(s, ",")
		w2, err := ParseTRESWeights(strings.Join(items, ",,"))
		if err != nil || !cmp.Equal(w, w2) {
			t.Fatalf("doubling separators changed the result: %v %v", w2, err)
		}
	})
}

func TestClusterAndPartitionFromConf(t *testing.T) {
	c := parseConf(t, `GresTypes=gpu
NodeName=n[1-4] Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:a100:4
NodeName=m[1-2] CPUs=4 RealMemory=500
PartitionName=big Nodes=n[1-4] PriorityJobFactor=10 MaxTime=60
PartitionName=all Nodes=ALL PriorityJobFactor=3 Default=YES
`)
	cl := ClusterFromConf(c)
	if want := (Cluster{Nodes: 6, CPUs: 72, MaxPartitionJobFactor: 10}); cl != want {
		t.Errorf("ClusterFromConf = %+v, want %+v", cl, want)
	}
	var big Partition
	for _, p := range c.Partitions {
		if p.Name == "big" {
			big = PartitionFromConf(c, p)
		}
	}
	want := Partition{JobFactor: 10, MaxTime: 60, TRES: map[string]uint64{
		"node": 4, "cpu": 64, "mem": 4000, "gres/gpu": 16, "gres/gpu:a100": 16,
	}}
	if d := cmp.Diff(want, big); d != "" {
		t.Errorf("PartitionFromConf (-want +got):\n%s", d)
	}
}
