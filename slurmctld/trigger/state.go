package trigger

import (
	"errors"
	"fmt"
)

// StateVersion is the version of State (our own format, JSON in
// StateSaveLocation; 22.05 packs the same fields in trigger_state).
const StateVersion = 1

// State is the saved table: what 22.05's trigger_state keeps, each
// trigger as it was set (resource and offset) with its state, and the
// pull states.
type State struct {
	Version                                           int
	CtldFailure, BuCtldFailure, DbdFailure, DbFailure uint8
	Triggers                                          []SavedTrigger
}

// SavedTrigger is one trigger in State.
type SavedTrigger struct {
	ID        uint32
	Flags     uint16
	ResType   uint16
	ResID     string
	ResIDNull bool `json:",omitempty"`
	Type      uint32
	Time      int64
	UID, GID  uint32
	Program   string
	State     uint8
}

// Snapshot returns the table to save and its Seq.
func (m *Manager) Snapshot() (State, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := State{Version: StateVersion, CtldFailure: m.ctldFailure, BuCtldFailure: m.buCtldFailure,
		DbdFailure: m.dbdFailure, DbFailure: m.dbFailure, Triggers: make([]SavedTrigger, 0, len(m.list))}
	for _, t := range m.list {
		s.Triggers = append(s.Triggers, SavedTrigger{
			ID: t.ID, Flags: t.Flags, ResType: t.ResType, ResID: t.origResID, ResIDNull: t.origResIDNull,
			Type: t.Type, Time: t.origTime, UID: t.UID, GID: t.GID, Program: t.Program, State: t.State,
		})
	}
	return s, m.seq
}

// ErrState is a saved table that cannot be restored (22.05's "Incomplete
// trigger record").
var ErrState = errors.New("incomplete trigger record")

// Restore replaces the table with a saved one (trigger_state_restore).
// Each trigger comes back as it was set, in the state it was in (a
// pulled one is due at once). A job trigger whose job is gone, unless it
// had fired, or a node trigger naming an unknown node is ErrState; the
// triggers before it are kept, as 22.05 keeps them. It returns how many
// were restored.
func (m *Manager) Restore(s *State, cl Cluster) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.Version != StateVersion {
		return 0, fmt.Errorf("trigger state version %d: %w", s.Version, ErrState)
	}
	m.list = nil
	n := 0
	for _, st := range s.Triggers {
		// The pull states are in every record of 22.05's file.
		m.ctldFailure, m.buCtldFailure, m.dbdFailure, m.dbFailure = s.CtldFailure, s.BuCtldFailure, s.DbdFailure, s.DbFailure
		t := &Trigger{
			ID: st.ID, Flags: st.Flags, ResType: st.ResType, ResID: st.ResID, ResIDNull: st.ResIDNull,
			Type: st.Type, Time: st.Time, UID: st.UID, GID: st.GID, Program: st.Program, State: st.State,
		}
		if t.ResType < ResJob || t.ResType > ResOther || t.State > stateDone {
			return n, ErrState
		}
		switch t.ResType {
		case ResJob:
			t.JobID = uint32(atol(t.ResID))
			_, ok := cl.Job(t.JobID)
			if (t.JobID == 0 || !ok) && t.State != stateDone {
				return n, ErrState
			}
		case ResNode:
			if !t.ResIDNull && !hasStar(t.ResID) {
				b, ok := cl.NodeBitmap(t.ResID)
				if !ok {
					return n, ErrState
				}
				t.Nodes = b
			}
		}
		t.keepOrig()
		m.list = append(m.list, t)
		m.nextID = max(m.nextID, t.ID+1)
		n++
	}
	return n, nil
}
