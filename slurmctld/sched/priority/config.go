package priority

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/goslurm/goslurm/conf"
)

// Plugin is the PriorityType in force.
type Plugin int

const (
	// PluginBasic is priority/basic: FIFO, Slurm's default.
	PluginBasic Plugin = iota
	// PluginMultifactor is priority/multifactor.
	PluginMultifactor
)

func (p Plugin) String() string {
	if p == PluginMultifactor {
		return "priority/multifactor"
	}
	return "priority/basic"
}

// ResetPeriod is PriorityUsageResetPeriod: when all accumulated usage is
// cleared, on top of (or instead of) the exponential decay.
type ResetPeriod int

const (
	ResetNone ResetPeriod = iota
	ResetNow              // once, at the first Decay
	ResetDaily
	ResetWeekly
	ResetMonthly
	ResetQuarterly
	ResetYearly
)

var resetNames = []string{"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}

func (r ResetPeriod) String() string {
	if r >= 0 && int(r) < len(resetNames) {
		return resetNames[r]
	}
	return fmt.Sprintf("ResetPeriod(%d)", int(r))
}

// ParseResetPeriod reads a PriorityUsageResetPeriod value (case-insensitive).
func ParseResetPeriod(s string) (ResetPeriod, error) {
	for i, n := range resetNames {
		if strings.EqualFold(s, n) {
			return ResetPeriod(i), nil
		}
	}
	return ResetNone, fmt.Errorf("%w: Bad value \"%s\" for PriorityUsageResetPeriod", ErrConfig, s)
}

// Slurm's defaults (DEFAULT_PRIORITY_DECAY, DEFAULT_PRIORITY_CALC_PERIOD).
const (
	DefaultDecayHalfLife = 7 * 24 * 3600 // seconds
	DefaultMaxAge        = 7 * 24 * 3600 // seconds
	DefaultCalcPeriod    = 5 * 60        // seconds
)

// ErrConfig marks an invalid priority configuration.
var ErrConfig = errors.New("invalid priority configuration")

// Config is the priority part of slurm.conf, as the priority plugins read
// it. Durations are in seconds, like slurm_conf.
type Config struct {
	Plugin Plugin

	WeightAge       uint32
	WeightAssoc     uint32
	WeightFairshare uint32
	WeightJobSize   uint32
	WeightPartition uint32
	WeightQOS       uint32
	// WeightTRES maps a TRES key ("cpu", "mem", "node", "gres/gpu"; see
	// TRESKey) to its weight, already divided by any unit suffix.
	WeightTRES map[string]float64

	MaxAge        uint32 // PriorityMaxAge
	DecayHalfLife uint32 // PriorityDecayHalfLife; 0 = no decay
	CalcPeriod    uint32 // PriorityCalcPeriod: how often Decay is meant to run
	UsageReset    ResetPeriod
	FavorSmall    bool
	Flags         conf.PriorityFlagBits
	// DampeningFactor is FairShareDampeningFactor (classic fair-share only).
	DampeningFactor uint16
}

// DefaultConfig is what Slurm 22.05 uses when slurm.conf sets nothing:
// priority/basic, all weights 0, Fair Tree.
func DefaultConfig() Config {
	return Config{
		Plugin:          PluginBasic,
		MaxAge:          DefaultMaxAge,
		DecayHalfLife:   DefaultDecayHalfLife,
		CalcPeriod:      DefaultCalcPeriod,
		UsageReset:      ResetNone,
		Flags:           conf.PriorityFairTree,
		DampeningFactor: 1,
	}
}

// FromConf builds a Config from a parsed slurm.conf and validates it.
func FromConf(c *conf.Config) (Config, error) {
	if c == nil {
		return Config{}, fmt.Errorf("%w: no configuration", ErrConfig)
	}
	cfg := DefaultConfig()
	var errs []error
	switch strings.ToLower(c.PriorityType) {
	case "", "priority/basic":
		cfg.Plugin = PluginBasic
	case "priority/multifactor":
		cfg.Plugin = PluginMultifactor
	default:
		errs = append(errs, fmt.Errorf("%w: PriorityType=%s is not supported (priority/basic or priority/multifactor)", ErrConfig, c.PriorityType))
	}
	cfg.WeightAge = c.PriorityWeightAge
	cfg.WeightAssoc = c.PriorityWeightAssoc
	cfg.WeightFairshare = c.PriorityWeightFairshare
	cfg.WeightJobSize = c.PriorityWeightJobSize
	cfg.WeightPartition = c.PriorityWeightPartition
	cfg.WeightQOS = c.PriorityWeightQOS
	if s := c.PriorityWeightTRES.String(); s != "" {
		w, err := ParseTRESWeights(s)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.WeightTRES = w
	}
	cfg.MaxAge = uint32(c.PriorityMaxAge)
	cfg.DecayHalfLife = uint32(c.PriorityDecayHalfLife)
	cfg.CalcPeriod = uint32(c.PriorityCalcPeriod)
	cfg.FavorSmall = c.PriorityFavorSmall
	cfg.Flags = c.PriorityFlagBits
	cfg.DampeningFactor = c.FairShareDampeningFactor
	if c.PriorityUsageResetPeriod != "" {
		r, err := ParseResetPeriod(c.PriorityUsageResetPeriod)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.UsageReset = r
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	return cfg, errors.Join(errs...)
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Plugin != PluginBasic && c.Plugin != PluginMultifactor {
		errs = append(errs, fmt.Errorf("%w: unknown priority plugin %d", ErrConfig, int(c.Plugin)))
	}
	if c.CalcPeriod < 60 {
		// Slurm reads it in minutes and rejects anything below one.
		errs = append(errs, fmt.Errorf("%w: Bad value \"%d\" for PriorityCalcPeriod (at least one minute)", ErrConfig, c.CalcPeriod))
	}
	if c.DecayHalfLife == 0 && c.UsageReset == ResetNone {
		//lint:ignore ST1005 Slurm's wording
		errs = append(errs, fmt.Errorf("%w: You have to either have PriorityDecayHalfLife != 0 or PriorityUsageResetPeriod set to something or the priority plugin will result in rolling over.", ErrConfig))
	}
	if c.UsageReset < ResetNone || c.UsageReset > ResetYearly {
		errs = append(errs, fmt.Errorf("%w: unknown PriorityUsageResetPeriod %d", ErrConfig, int(c.UsageReset)))
	}
	if c.DampeningFactor == 0 {
		// Slurm would divide by zero (factor 0, or NaN for zero usage).
		errs = append(errs, fmt.Errorf("%w: FairShareDampeningFactor must be at least 1", ErrConfig))
	}
	for k, w := range c.WeightTRES {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			errs = append(errs, fmt.Errorf("%w: PriorityWeightTRES for %s is not a finite number", ErrConfig, k))
		}
	}
	return errors.Join(errs...)
}

// FairTree reports whether the Fair Tree algorithm is in force (22.05's
// default unless PriorityFlags has NO_FAIR_TREE).
func (c Config) FairTree() bool { return c.Flags&conf.PriorityFairTree != 0 }
