package priority

import (
	"fmt"

	"github.com/goslurm/goslurm/conf"
	"math"
	"time"
)

// RootAccount is the name of the account at the top of the tree.
const RootAccount = "root"

// DefaultShares is an association's raw shares when none are given (the
// Fairshare=1 default of sacctmgr).
const DefaultShares uint32 = 1

// assoc is one association: an account (user == "") or a user in an
// account. raw is Slurm's usage_raw: decayed billing-seconds of the
// association and everything under it.
type assoc struct {
	account  string
	user     string
	parent   *assoc
	children []*assoc
	shares   uint32
	raw      float64

	// Derived by refresh().
	levelShares uint32  // sum of the raw shares of the siblings, self included
	sharesNorm  float64 // classic: product over the path; Fair Tree: within the level
	usageNorm   float64 // raw / root raw, at most 1
	usageEfctv  float64 // classic effective usage; Fair Tree: raw / parent raw
	levelFS     float64 // Fair Tree only: sharesNorm / usageEfctv
	factor      float64 // fair-share factor, users only
}

// dblMin is C's DBL_MIN, the smallest normal double.
const dblMin = 2.2250738585072014e-308

type userKey struct{ user, account string }

// Usage tracks fair-share usage without an accounting database: a tree of
// accounts with users under them, each with raw shares, charged with
// billing-seconds (CPU-seconds unless the caller weights them) that decay
// exponentially with PriorityDecayHalfLife and are cleared every
// PriorityUsageResetPeriod.
//
// Time only moves when the caller says so: Charge stamps usage with its
// own time and Decay(now) applies the reset schedule and the decay up to
// now. Slurm's decay thread runs every PriorityCalcPeriod; the caller is
// expected to call Decay on that period (Config.CalcPeriod), and may call
// it more or less often: the decay is a pure function of elapsed time.
//
// Usage is not safe for concurrent use.
type Usage struct {
	decayFactor    float64 // per second
	reset          ResetPeriod
	fairTree       bool
	depthOblivious bool
	damp           float64
	loc            *time.Location

	root      *assoc
	accounts  map[string]*assoc
	users     map[userKey]*assoc
	userCount int

	last      int64 // the time raw values are decayed to, once clockSet
	clockSet  bool
	started   bool // Decay has run once
	lastReset int64
	nextReset int64
	dirty     bool
}

// NewUsage returns an empty tracker (just the root account) for cfg's
// half-life, reset period, Fair Tree flag and dampening factor. Calendar
// resets use UTC until SetLocation says otherwise.
func NewUsage(cfg Config) *Usage {
	root := &assoc{account: RootAccount, shares: DefaultShares}
	return &Usage{
		decayFactor:    DecayFactor(cfg.DecayHalfLife),
		reset:          cfg.UsageReset,
		fairTree:       cfg.FairTree(),
		depthOblivious: !cfg.FairTree() && cfg.Flags&conf.PriorityDepthOblivious != 0,
		damp:           float64(max(cfg.DampeningFactor, 1)),
		loc:            time.UTC,
		root:           root,
		accounts:       map[string]*assoc{RootAccount: root},
		users:          map[userKey]*assoc{},
		dirty:          true,
	}
}

// DecayFactor is Slurm's per-second decay multiplier for a half-life in
// seconds: 1 - 0.693/halfLife (a first-order approximation of 2^(-1/h),
// kept for identical numbers), or 1 (no decay) for 0. Over one half-life
// it multiplies usage by about 0.50007 for a week, 0.498 for a minute.
func DecayFactor(halfLife uint32) float64 {
	if halfLife == 0 {
		return 1
	}
	return 1 - 0.693/float64(halfLife)
}

// SetLocation sets the time zone of the DAILY..YEARLY reset boundaries
// (slurmctld uses its local time).
func (u *Usage) SetLocation(loc *time.Location) {
	if loc != nil {
		u.loc = loc
		u.nextReset = 0
	}
}

// AddAccount adds account name under parent ("" means root) with raw
// shares (0 is allowed: such an account gets fair-share factor 0).
// Re-adding an existing account updates its shares.
func (u *Usage) AddAccount(name, parent string, shares uint32) error {
	if name == "" {
		return fmt.Errorf("account name is empty")
	}
	if parent == "" {
		parent = RootAccount
	}
	if a, ok := u.accounts[name]; ok {
		if a.parent != nil && a.parent.account != parent {
			return fmt.Errorf("account %s already exists under %s", name, a.parent.account)
		}
		a.shares = shares
		u.dirty = true
		return nil
	}
	p, ok := u.accounts[parent]
	if !ok {
		return fmt.Errorf("parent account %s does not exist", parent)
	}
	a := &assoc{account: name, parent: p, shares: shares}
	p.children = append(p.children, a)
	u.accounts[name] = a
	u.dirty = true
	return nil
}

// AddUser adds user to account ("" means root) with raw shares; the
// account must exist. Re-adding updates the shares.
func (u *Usage) AddUser(user, account string, shares uint32) error {
	if user == "" {
		return fmt.Errorf("user name is empty")
	}
	if account == "" {
		account = RootAccount
	}
	if a, ok := u.users[userKey{user, account}]; ok {
		a.shares = shares
		u.dirty = true
		return nil
	}
	p, ok := u.accounts[account]
	if !ok {
		return fmt.Errorf("account %s does not exist", account)
	}
	a := &assoc{account: account, user: user, parent: p, shares: shares}
	p.children = append(p.children, a)
	u.users[userKey{user, account}] = a
	u.userCount++
	u.dirty = true
	return nil
}

// Ensure creates the association of user in account when it is missing,
// as Charge and FairShareFactor do, so that factors read afterwards all
// see the same tree. It reports whether anything was created (every
// user's factor may have changed then).
func (u *Usage) Ensure(user, account string) bool {
	if u.lookup(user, account) != nil {
		return false
	}
	u.ensure(user, account)
	return true
}

// ensure returns the association of user in account, creating what is
// missing with DefaultShares (an unknown account goes under root).
func (u *Usage) ensure(user, account string) *assoc {
	if account == "" {
		account = RootAccount
	}
	if a, ok := u.users[userKey{user, account}]; ok {
		return a
	}
	if _, ok := u.accounts[account]; !ok {
		_ = u.AddAccount(account, RootAccount, DefaultShares)
	}
	if user == "" {
		return u.accounts[account]
	}
	_ = u.AddUser(user, account, DefaultShares)
	return u.users[userKey{user, account}]
}

// Charge adds billing-seconds of user in account, incurred at time at,
// to the association and every account above it up to root. Unknown
// associations are created with DefaultShares. Usage stamped before the
// last decay is decayed by its age; usage stamped later first moves the
// tracker's clock to at (decaying everything else), so the result never
// depends on how Charge and Decay calls interleave.
//
// Slurm adds a running job's usage every PriorityCalcPeriod; charging
// cpus*period at the period's start reproduces its arithmetic, charging a
// whole job at its end is coarser but equivalent over long horizons.
func (u *Usage) Charge(user, account string, billingSeconds float64, at int64) {
	if billingSeconds <= 0 || math.IsNaN(billingSeconds) || math.IsInf(billingSeconds, 0) {
		return
	}
	a := u.ensure(user, account)
	if !u.clockSet {
		u.last, u.clockSet = at, true
	}
	if at > u.last {
		u.decayTo(at)
	} else if at < u.last {
		billingSeconds *= u.decayOver(u.last - at)
	}
	for ; a != nil; a = a.parent {
		a.raw += billingSeconds
	}
	u.dirty = true
}

// Decay is one pass of Slurm's decay thread at now: it clears all usage
// if a PriorityUsageResetPeriod boundary has passed, then decays all
// usage from the previous pass to now. Times going backwards are ignored.
func (u *Usage) Decay(now int64) {
	if !u.started {
		u.started = true
		u.lastReset = now
	}
	switch u.reset {
	case ResetNone:
	case ResetNow:
		u.clear()
		u.reset = ResetNone
		u.lastReset = now
	default:
		if u.nextReset == 0 {
			u.nextReset = nextReset(u.reset, u.lastReset, now, u.loc)
		}
		if now >= u.nextReset {
			u.clear()
			u.lastReset = u.nextReset
			u.nextReset = nextReset(u.reset, u.lastReset, now, u.loc)
		}
	}
	if !u.clockSet {
		u.last, u.clockSet = now, true
	}
	u.decayTo(now)
}

// LastReset and NextReset expose the reset schedule (Unix seconds; 0
// before the first Decay), for display.
func (u *Usage) LastReset() int64 { return u.lastReset }
func (u *Usage) NextReset() int64 { return u.nextReset }

// decayOver is the multiplier for d seconds, floored at the smallest
// normal float64 as Slurm does.
func (u *Usage) decayOver(d int64) float64 {
	if d <= 0 || u.decayFactor == 1 {
		return 1
	}
	f := math.Pow(u.decayFactor, float64(d))
	if f < dblMin {
		f = dblMin
	}
	return f
}

func (u *Usage) decayTo(t int64) {
	if t <= u.last {
		return
	}
	f := u.decayOver(t - u.last)
	u.last = t
	if f == 1 {
		return
	}
	u.walk(u.root, func(a *assoc) { a.raw *= f })
	u.dirty = true
}

func (u *Usage) clear() {
	u.walk(u.root, func(a *assoc) { a.raw = 0 })
	u.dirty = true
}

func (u *Usage) walk(a *assoc, fn func(*assoc)) {
	fn(a)
	for _, c := range a.children {
		u.walk(c, fn)
	}
}

// RawUsage is the decayed usage of user in account (user "" for the
// account itself, including everything under it); 0 if unknown.
func (u *Usage) RawUsage(user, account string) float64 {
	if a := u.lookup(user, account); a != nil {
		return a.raw
	}
	return 0
}

func (u *Usage) lookup(user, account string) *assoc {
	if account == "" {
		account = RootAccount
	}
	if user == "" {
		return u.accounts[account]
	}
	return u.users[userKey{user, account}]
}

// FairShareFactor is the fair-share factor (0..1) of user in account
// under the configured algorithm. An unknown association is created with
// DefaultShares first (as if sacctmgr had added it), so a new user starts
// with the factor of an idle one.
func (u *Usage) FairShareFactor(user, account string) float64 {
	a := u.ensure(user, account)
	u.refresh()
	if a.user == "" {
		return 0 // accounts have no factor of their own
	}
	return a.factor
}

// nextReset is _next_reset: the first reset boundary after lastReset, in
// loc's calendar. Daily and weekly boundaries skip ahead to the last one
// not more than a period before now; monthly and later ones do not.
func nextReset(r ResetPeriod, lastReset, now int64, loc *time.Location) int64 {
	const day, week = 24 * 3600, 7 * 24 * 3600
	t := time.Unix(lastReset, 0).In(loc)
	midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	switch r {
	case ResetDaily:
		next := midnight.Unix() + day
		for next+day < now {
			next += day
		}
		return next
	case ResetWeekly:
		next := midnight.Unix() + day*int64(7-int(t.Weekday()))
		for next+week < now {
			next += week
		}
		return next
	case ResetMonthly:
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc).Unix()
	case ResetQuarterly:
		m := t.Month()
		switch {
		case m < time.April:
			return time.Date(t.Year(), time.April, 1, 0, 0, 0, 0, loc).Unix()
		case m < time.July:
			return time.Date(t.Year(), time.July, 1, 0, 0, 0, 0, loc).Unix()
		case m < time.October:
			return time.Date(t.Year(), time.October, 1, 0, 0, 0, 0, loc).Unix()
		default:
			return time.Date(t.Year()+1, time.January, 1, 0, 0, 0, 0, loc).Unix()
		}
	case ResetYearly:
		return time.Date(t.Year()+1, time.January, 1, 0, 0, 0, 0, loc).Unix()
	}
	return 0
}
