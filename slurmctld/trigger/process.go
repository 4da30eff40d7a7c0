package trigger

import (
	"strconv"
	"strings"

	"github.com/bits-and-blooms/bitset"
)

// events are what happened since the last pass (22.05's trigger_*
// bitmaps and flags). A pass consumes them all.
type events struct {
	down, up, drained, fail *bitset.BitSet
	reconfig, burstBuffer   bool

	priCtldFail, priCtldResOp, priCtldResCtrl, priCtldAcctFull bool
	buCtldFail, buCtldResOp, buCtldAsCtrl                      bool
	priDbdFail, priDbdResOp, priDbFail, priDbResOp             bool
}

func setBit(b **bitset.BitSet, i int) {
	if *b == nil {
		*b = bitset.New(uint(i + 1))
	}
	(*b).Set(uint(i))
}

func anySet(b *bitset.BitSet) bool { return b != nil && b.Any() }

// NodeDown notes that node i went DOWN (_make_node_down).
func (m *Manager) NodeDown(i int) { m.mu.Lock(); setBit(&m.ev.down, i); m.mu.Unlock() }

// NodeUp notes that node i came back from DOWN (an update to IDLE or
// RESUME, or a registration or response returning it to service).
func (m *Manager) NodeUp(i int) { m.mu.Lock(); setBit(&m.ev.up, i); m.mu.Unlock() }

// NodeDrained notes that node i is DRAIN (or FAIL) with no job left.
func (m *Manager) NodeDrained(i int) { m.mu.Lock(); setBit(&m.ev.drained, i); m.mu.Unlock() }

// Reconfig notes a reconfiguration or a node update (trigger_reconfig).
func (m *Manager) Reconfig() { m.mu.Lock(); m.ev.reconfig = true; m.mu.Unlock() }

// PrimaryCtldResCtrl notes that the primary controller took control.
func (m *Manager) PrimaryCtldResCtrl() { m.mu.Lock(); m.ev.priCtldResCtrl = true; m.mu.Unlock() }

// PrimaryCtldResOp notes that the primary controller resumed operation;
// it ends a primary failure.
func (m *Manager) PrimaryCtldResOp() {
	m.mu.Lock()
	m.ev.priCtldResOp, m.ctldFailure = true, 0
	m.mu.Unlock()
}

// PrimaryCtldFail notes that the primary controller failed (a backup
// took over); noted once until the primary resumes.
func (m *Manager) PrimaryCtldFail() {
	m.mu.Lock()
	if m.ctldFailure != 1 {
		m.ev.priCtldFail, m.ctldFailure = true, 1
	}
	m.mu.Unlock()
}

// BackupCtldAsCtrl notes that a backup controller took control.
func (m *Manager) BackupCtldAsCtrl() { m.mu.Lock(); m.ev.buCtldAsCtrl = true; m.mu.Unlock() }

// BackupCtldFail notes that a backup controller stopped answering;
// noted once until it resumes.
func (m *Manager) BackupCtldFail() { m.mu.Lock(); m.backupCtldFail(); m.mu.Unlock() }

// BackupCtldResOp notes that a backup controller answers again.
func (m *Manager) BackupCtldResOp() { m.mu.Lock(); m.backupCtldResOp(); m.mu.Unlock() }

func (m *Manager) backupCtldFail() {
	if m.buCtldFailure != 1 {
		m.ev.buCtldFail, m.buCtldFailure = true, 1
	}
}

func (m *Manager) backupCtldResOp() { m.ev.buCtldResOp, m.buCtldFailure = true, 0 }

func (m *Manager) primaryDbdFail() {
	if m.dbdFailure != 1 {
		m.ev.priDbdFail, m.dbdFailure = true, 1
	}
}

// Launch is a trigger program to start: as UID/GID, Path with Argv
// (Argv[0] is Path's base name, the last argument the node list, job id
// or event name).
type Launch struct {
	ID       uint32
	UID, GID uint32
	Path     string
	Argv     []string
	ResType  uint16
	Type     uint32
	// Program is the trigger's program as set (with its arguments).
	Program string
	ResID   string
}

// Process is trigger_process, run every Interval seconds under the
// controller's read lock: pending triggers whose event happened are
// pulled, pulled triggers whose time came fire (a permanent one is set
// again, first in the table), fired ones older than MaxProgTime go, and
// the noted events are forgotten. It returns the programs to start, in
// table order.
func (m *Manager) Process(now int64, cl Cluster) []Launch {
	m.mu.Lock()
	defer m.mu.Unlock()
	var launches []Launch
	var clones []*Trigger
	changed := false
	kept := make([]*Trigger, 0, len(m.list))
	for _, t := range m.list {
		if t.State == statePending {
			switch t.ResType {
			case ResOther:
				m.otherEvent(t, now)
			case ResJob:
				m.jobEvent(t, now, cl)
			case ResNode:
				m.nodeEvent(t, now, cl)
			case ResSlurmctld:
				m.slurmctldEvent(t, now)
			case ResSlurmdbd:
				m.slurmdbdEvent(t, now)
			case ResDatabase:
				m.databaseEvent(t, now)
			}
			// Front ends: this controller has none, so no front end
			// event ever happens.
		}
		switch {
		case t.State == statePulled && t.Time <= now:
			m.logf("launching program for trigger[" + u32(t.ID) + "]: uid=" + u32(t.UID) + " gid=" + u32(t.GID) +
				" program=" + t.Program + " arg=" + nullStr(t.ResID, t.ResIDNull))
			if t.Flags&FlagPerm != 0 {
				clones = append(clones, t.clone())
			}
			t.State, t.Time = stateDone, now
			changed = true
			launches = append(launches, t.launch())
		case t.State == stateDone && now-t.Time > MaxProgTime:
			m.logf("purging trigger[" + u32(t.ID) + "]")
			changed = true
			continue
		}
		kept = append(kept, t)
	}
	// Each clone went to the head of 22.05's list as it was made.
	list := make([]*Trigger, 0, len(clones)+len(kept))
	for i := len(clones) - 1; i >= 0; i-- {
		list = append(list, clones[i])
	}
	m.list = append(list, kept...)
	m.ev.clear()
	if changed {
		m.seq++
	}
	return launches
}

// clear is _clear_event_triggers (which leaves the node fail set alone;
// nothing sets it in 22.05).
func (e *events) clear() {
	for _, b := range []*bitset.BitSet{e.down, e.up, e.drained} {
		if b != nil {
			b.ClearAll()
		}
	}
	fail := e.fail
	*e = events{down: e.down, up: e.up, drained: e.drained, fail: fail}
}

// clone is _trigger_clone: the trigger as it was set, pending again,
// with the same id.
func (t *Trigger) clone() *Trigger {
	c := &Trigger{
		ID: t.ID, Flags: t.Flags, ResType: t.ResType, JobID: t.JobID, Type: t.Type,
		UID: t.UID, GID: t.GID, Program: t.Program,
		ResID: t.origResID, ResIDNull: t.origResIDNull, Time: t.origTime,
	}
	if t.origNodes != nil {
		c.Nodes = t.origNodes.Clone()
	}
	c.keepOrig()
	return c
}

// launch is _trigger_run_program's argument vector: the program's words
// (split on blanks), the base name first, and the resource after them
// unless it is NULL or the words already fill 63 places.
func (t *Trigger) launch() Launch {
	words := strings.FieldsFunc(t.Program, func(r rune) bool { return r == ' ' })
	l := Launch{ID: t.ID, UID: t.UID, GID: t.GID, ResType: t.ResType, Type: t.Type, Program: t.Program, ResID: t.ResID}
	if len(words) == 0 {
		return l
	}
	l.Path = words[0]
	base := l.Path
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	l.Argv = []string{base}
	for i := 1; i < 63; i++ {
		if i >= len(words) {
			if !t.ResIDNull {
				l.Argv = append(l.Argv, t.ResID)
			}
			break
		}
		l.Argv = append(l.Argv, words[i])
	}
	return l
}

// pull marks t's event seen, its program due delay seconds from now.
func (m *Manager) pull(t *Trigger, due int64, what string) {
	t.State, t.Time = statePulled, due
	m.logf("trigger[" + u32(t.ID) + "] " + what)
}

// offset is the trigger's offset in seconds (pending triggers only).
func (t *Trigger) offset() int64 { return t.Time - OffsetZero }

func (m *Manager) otherEvent(t *Trigger, now int64) {
	if t.Type&TypeBurstBuffer != 0 && m.ev.burstBuffer {
		m.pull(t, now, "for burst buffer")
	}
}

// jobEvent is _trigger_job_event.
func (m *Manager) jobEvent(t *Trigger, now int64, cl Cluster) {
	j, ok := cl.Job(t.JobID)
	id := u32(t.JobID)
	if t.Type&TypeFini != 0 && (!ok || j.Completed) {
		m.pull(t, now+t.offset(), "event for job "+id+" fini")
		return
	}
	if !ok {
		t.State, t.Time = stateDone, now
		m.logf("trigger[" + u32(t.ID) + "] for defunct job " + id)
		return
	}
	if !j.Pending && t.Type&TypeTime != 0 && j.EndTime-now <= OffsetZero-t.Time {
		m.pull(t, now, "for job "+id+" time")
		return
	}
	if t.Type&TypeDown != 0 && anySet(m.ev.down) && j.Nodes != nil && j.Nodes.IntersectionCardinality(m.ev.down) > 0 {
		m.pull(t, now+t.offset(), "for job "+id+" down")
		return
	}
	if t.Type&TypeFail != 0 && anySet(m.ev.fail) && j.Nodes != nil && j.Nodes.IntersectionCardinality(m.ev.fail) > 0 {
		m.pull(t, now+t.offset(), "for job "+id+" node fail")
		return
	}
	if t.Type&TypeUp != 0 && anySet(m.ev.up) && j.Nodes != nil && j.Nodes.IntersectionCardinality(m.ev.up) > 0 {
		// 22.05 subtracts the offset here, unlike everywhere else.
		m.pull(t, now-t.offset(), "for job "+id+" up")
	}
}

// nodeSet pulls a node trigger whose watched nodes meet set: an
// all-nodes trigger takes the whole set, another keeps the nodes in both.
// Its resource becomes their names.
func (m *Manager) nodeSet(t *Trigger, set *bitset.BitSet, cl Cluster) bool {
	if t.Nodes == nil {
		t.ResID, t.ResIDNull = cl.NodeNames(set), false
		return true
	}
	if set != nil && t.Nodes.IntersectionCardinality(set) > 0 {
		t.Nodes.InPlaceIntersection(set)
		t.ResID, t.ResIDNull = cl.NodeNames(t.Nodes), false
		return true
	}
	return false
}

// nodeEvent is _trigger_node_event.
func (m *Manager) nodeEvent(t *Trigger, now int64, cl Cluster) {
	for _, e := range []struct {
		typ  uint32
		set  *bitset.BitSet
		what string
	}{{TypeDown, m.ev.down, "down"}, {TypeDrained, m.ev.drained, "drained"}, {TypeFail, m.ev.fail, "fail"}} {
		if t.Type&e.typ != 0 && anySet(e.set) && m.nodeSet(t, e.set, cl) {
			m.pull(t, now+t.offset(), "for node "+t.ResID+" "+e.what)
			return
		}
	}
	if t.Type&TypeIdle != 0 {
		// An all-nodes idle trigger fires on its first pass, with the
		// (maybe empty) list of nodes idle for long enough.
		idle := cl.IdleNodes(now - t.offset())
		if m.nodeSet(t, idle, cl) {
			m.pull(t, now, "for node "+t.ResID+" idle")
			return
		}
	}
	if t.Type&TypeUp != 0 && anySet(m.ev.up) && m.nodeSet(t, m.ev.up, cl) {
		m.pull(t, now+t.offset(), "for node "+t.ResID+" up")
		return
	}
	if t.Type&TypeReconfig != 0 && m.ev.reconfig {
		t.ResID, t.ResIDNull = "reconfig", false
		m.pull(t, now+t.offset(), "for reconfig")
	}
}

// named pulls t when the event happened, its resource then the event's
// name.
func (m *Manager) named(t *Trigger, now int64, typ uint32, happened bool, name, logName string) bool {
	if t.Type&typ == 0 || !happened {
		return false
	}
	t.ResID, t.ResIDNull = name, false
	m.pull(t, now+t.offset(), "for "+logName)
	return true
}

func (m *Manager) slurmctldEvent(t *Trigger, now int64) {
	e := &m.ev
	_ = m.named(t, now, TypePriCtldFail, e.priCtldFail, "primary_slurmctld_failure", "primary_slurmctld_failure") ||
		m.named(t, now, TypePriCtldResOp, e.priCtldResOp, "primary_slurmctld_resumed_operation", "primary_slurmctld_resumed_operation") ||
		m.named(t, now, TypePriCtldResCtrl, e.priCtldResCtrl, "primary_slurmctld_resumed_control", "primary_slurmctld_resumed_control") ||
		m.named(t, now, TypePriCtldAcctFul, e.priCtldAcctFull, "primary_slurmctld_acct_buffer_full", "primary_slurmctld_acct_buffer_full") ||
		m.named(t, now, TypeBuCtldFail, e.buCtldFail, "backup_slurmctld_failure", "backup_slurmctld_failure") ||
		m.named(t, now, TypeBuCtldResOp, e.buCtldResOp, "backup_slurmctld_resumed_operation", "backup_slurmctld_resumed_operation") ||
		m.named(t, now, TypeBuCtldAsCtrl, e.buCtldAsCtrl, "backup_slurmctld_assumed_control", "bu_slurmctld_assumed_control")
}

func (m *Manager) slurmdbdEvent(t *Trigger, now int64) {
	// 22.05 goes on to the resumption test after a failure matched.
	m.named(t, now, TypePriDbdFail, m.ev.priDbdFail, "primary_slurmdbd_failure", "primary_slurmcdbd_failure")
	m.named(t, now, TypePriDbdResOp, m.ev.priDbdResOp, "primary_slurmdbd_resumed_operation", "primary_slurmdbd_resumed_operation")
}

func (m *Manager) databaseEvent(t *Trigger, now int64) {
	_ = m.named(t, now, TypePriDbFail, m.ev.priDbFail, "primary_database_failure", "primary_database_failure") ||
		m.named(t, now, TypePriDbResOp, m.ev.priDbResOp, "primary_database_resumed_operation", "primary_database_resumed_operation")
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func nullStr(s string, null bool) string {
	if null {
		return "(null)"
	}
	return s
}
