package priority

import "fmt"

// UsageState is everything a Usage needs to resume after a restart (what
// slurmctld keeps in assoc_usage and last_decay_ran): the associations
// with their shares and decayed usage, parents before children, and the
// decay and reset clocks. The controller stores it; this package does no
// I/O.
type UsageState struct {
	Last      int64 // time the usage values are decayed to
	LastReset int64 // last PriorityUsageResetPeriod boundary (or first Decay)
	Started   bool  // Decay has run at least once
	ClockSet  bool  // Last is meaningful
	Assocs    []AssocState
}

// AssocState is one association of a UsageState. User is "" for an
// account; the root account is included.
type AssocState struct {
	Account, Parent, User string
	Shares                uint32
	Raw                   float64
}

// State captures the tracker's state.
func (u *Usage) State() UsageState {
	st := UsageState{Last: u.last, LastReset: u.lastReset, Started: u.started, ClockSet: u.clockSet}
	u.walk(u.root, func(a *assoc) {
		s := AssocState{Account: a.account, User: a.user, Shares: a.shares, Raw: a.raw}
		if a.parent != nil && a.user == "" {
			s.Parent = a.parent.account
		}
		st.Assocs = append(st.Assocs, s)
	})
	return st
}

// RestoreUsage rebuilds a tracker for cfg from st. A NOW reset period is
// not replayed: it applies to the first start only.
func RestoreUsage(cfg Config, st UsageState) (*Usage, error) {
	u := NewUsage(cfg)
	for _, s := range st.Assocs {
		var err error
		switch {
		case s.User == "" && s.Account == RootAccount:
			u.root.shares = s.Shares
		case s.User == "":
			err = u.AddAccount(s.Account, s.Parent, s.Shares)
		default:
			err = u.AddUser(s.User, s.Account, s.Shares)
		}
		if err != nil {
			return nil, fmt.Errorf("restore fair-share usage: %w", err)
		}
		if a := u.lookup(s.User, s.Account); a != nil {
			a.raw = s.Raw
		}
	}
	u.last, u.clockSet = st.Last, st.ClockSet
	u.lastReset, u.started = st.LastReset, st.Started
	if u.started && u.reset == ResetNow {
		u.reset = ResetNone
	}
	u.dirty = true
	return u, nil
}
