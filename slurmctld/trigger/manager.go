package trigger

import (
	"strconv"
	"sync"

	"github.com/bits-and-blooms/bitset"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// noVal is NO_VAL: "any user" in a clear request.
const noVal = 0xfffffffe

// Trigger is one entry of the table (trig_mgr_info_t).
type Trigger struct {
	ID      uint32
	Flags   uint16
	ResType uint16
	// ResID is the node list or job id; once a node or controller
	// trigger fires it names what fired it. ResIDNull is a NULL res_id
	// (controller, database and burst buffer triggers are set without).
	ResID     string
	ResIDNull bool
	// Nodes is the node set a node trigger watches; nil is every node.
	Nodes *bitset.BitSet
	JobID uint32
	Type  uint32
	// Time is the wire offset while pending, then when the program is
	// due, then when it started.
	Time     int64
	UID, GID uint32
	Program  string
	State    uint8

	// What the trigger was set with: a permanent trigger is set again
	// from these after it fires, and they are what is saved.
	origResID     string
	origResIDNull bool
	origNodes     *bitset.BitSet
	origTime      int64
}

// Job is what the table needs of a job record.
type Job struct {
	Pending bool
	// Finished is IS_JOB_FINISHED (a terminal state, maybe still
	// completing); Completed is IS_JOB_COMPLETED (terminal and no longer
	// completing).
	Finished, Completed bool
	EndTime             int64
	Nodes               *bitset.BitSet
}

// Cluster is the controller's view the table reads, under the
// controller's lock.
type Cluster interface {
	// NodeBitmap is node_name2bitmap: the node indexes of a node list,
	// false if a name is unknown.
	NodeBitmap(list string) (*bitset.BitSet, bool)
	// NodeNames is bitmap2node_name: the ranged names of a set.
	NodeNames(b *bitset.BitSet) string
	// Job finds a job record.
	Job(id uint32) (Job, bool)
	// IdleNodes are the IDLE nodes not busy since minIdle (last_busy <=
	// minIdle).
	IdleNodes(minIdle int64) *bitset.BitSet
}

// Manager is the trigger table and the events noted since the last pass.
// Its methods are safe for concurrent use.
type Manager struct {
	mu     sync.Mutex
	list   []*Trigger
	nextID uint32
	ev     events
	// Pull states: whether a failure of the primary controller, backup
	// controller, slurmdbd and database was signalled and not yet
	// followed by a resumption (saved with the table).
	ctldFailure, buCtldFailure, dbdFailure, dbFailure uint8
	// seq counts changes worth saving.
	seq uint64
	// Log, when set, receives the DebugFlags=Triggers messages.
	Log func(string)
}

// New returns an empty table.
func New() *Manager { return &Manager{nextID: 1} }

func (m *Manager) logf(s string) {
	if m.Log != nil {
		m.Log(s)
	}
}

// Seq is a counter that moves whenever the table changes in a way worth
// saving.
func (m *Manager) Seq() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seq
}

// SetRequest is a REQUEST_TRIGGER_SET that passed the RPC's permission
// check.
type SetRequest struct {
	UID, GID uint32
	// SlurmUID is SlurmUser's uid: when it is not root, only SlurmUser may
	// set triggers (programs could not run as anyone else).
	SlurmUID    uint32
	MaxJobCount uint32
	Triggers    []msg.Trigger
	// Runnable is _validate_trigger: the program exists, is a regular
	// file and the user may execute it.
	Runnable func(program string, uid, gid uint32) bool
}

// Set is trigger_set: every trigger in the request is added unless it is
// refused; the answer is the last refusal's code (0 when none was).
// Info receives the messages slurmctld logs at info level.
func (m *Manager) Set(r SetRequest, cl Cluster, info func(string)) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.SlurmUID != 0 && r.SlurmUID != r.UID {
		info("Attempt to set trigger by uid " + strconv.FormatUint(uint64(r.UID), 10) + " != SlurmUser")
		return slurmerr.ESLURM_ACCESS_DENIED
	}
	if r.UID != 0 && uint32(len(m.list)) >= r.MaxJobCount {
		return errnoEAGAIN
	}
	rc := 0
	for _, in := range r.Triggers {
		var jobID uint32
		var nodes *bitset.BitSet
		if in.ResType == ResJob {
			jobID = uint32(atol(in.ResID.Value))
			j, ok := cl.Job(jobID)
			if !ok {
				rc = slurmerr.ESLURM_INVALID_JOB_ID
				continue
			}
			if j.Finished {
				rc = slurmerr.ESLURM_ALREADY_DONE
				continue
			}
		} else if in.ResID.Valid && !hasStar(in.ResID.Value) {
			b, ok := cl.NodeBitmap(in.ResID.Value)
			if !ok {
				rc = slurmerr.ESLURM_INVALID_NODE_NAME
				continue
			}
			nodes = b
		}
		t := &Trigger{
			Flags: in.Flags, ResType: in.ResType, ResID: in.ResID.Value, ResIDNull: !in.ResID.Valid,
			Nodes: nodes, JobID: jobID, Type: in.TrigType, Time: int64(in.Offset),
			UID: r.UID, GID: r.GID, Program: in.Program.Value,
		}
		if m.duplicate(t) {
			rc = slurmerr.ESLURM_TRIGGER_DUP
			continue
		}
		// The id is used up even when the program check fails next.
		t.ID = m.nextID
		m.nextID++
		t.keepOrig()
		if r.Runnable != nil && !r.Runnable(t.Program, t.UID, t.GID) {
			rc = slurmerr.ESLURM_ACCESS_DENIED
			continue
		}
		m.list = append(m.list, t)
		m.seq++
	}
	return rc
}

// hasStar is res_id[0] == '*': every node.
func hasStar(s string) bool { return len(s) > 0 && s[0] == '*' }

func (t *Trigger) keepOrig() {
	t.origResID, t.origResIDNull, t.origTime = t.ResID, t.ResIDNull, t.Time
	if t.Nodes != nil {
		t.origNodes = t.Nodes.Clone()
	}
}

// duplicate is _duplicate_trigger: the same flags, types, offset, user,
// program and resource as any entry, fired ones included (whose resource
// and time have changed).
func (m *Manager) duplicate(t *Trigger) bool {
	for _, o := range m.list {
		if t.Flags == o.Flags && t.ResType == o.ResType && t.Type == o.Type && t.Time == o.Time &&
			t.UID == o.UID && t.Program == o.Program && t.ResID == o.ResID && t.ResIDNull == o.ResIDNull {
			return true
		}
	}
	return false
}

// Get is trigger_get: the pending triggers, in table order. (22.05 means
// to list fired permanent ones too, but tests the flags of the record it
// is about to fill, always zero, so only pending ones are listed.)
func (m *Manager) Get() []msg.Trigger {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []msg.Trigger{}
	for _, t := range m.list {
		if t.State != statePending {
			continue
		}
		out = append(out, msg.Trigger{
			Flags: t.Flags, TrigID: t.ID, ResType: t.ResType,
			ResID:    msg.NullString{Value: t.ResID, Valid: !t.ResIDNull},
			TrigType: t.Type, Offset: uint16(t.Time), UserID: t.UID,
			Program: msg.NullString{Value: t.Program, Valid: t.Program != ""},
		})
	}
	return out
}

// Clear is trigger_clear: the triggers matching the request's id, job
// and user that uid owns (root owns all) go. ESRCH when none matched,
// ESLURM_ACCESS_DENIED when the only matches belong to someone else.
func (m *Manager) Clear(uid uint32, req []msg.Trigger) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(req) != 1 {
		return errnoESRCH
	}
	in := req[0]
	var jobID uint32
	if in.ResType == ResJob {
		jobID = uint32(atol(in.ResID.Value))
		if jobID == 0 {
			return slurmerr.ESLURM_INVALID_JOB_ID
		}
	} else if in.TrigID == 0 && in.UserID == noVal {
		return errnoEINVAL
	}
	rc := errnoESRCH
	kept := m.list[:0]
	for _, t := range m.list {
		del := true
		switch {
		case in.TrigID != 0 && in.TrigID != t.ID,
			jobID != 0 && jobID != t.JobID,
			in.UserID != noVal && in.UserID != t.UID,
			t.State == stateDone:
			del = false
		case t.UID != uid && uid != 0:
			rc = slurmerr.ESLURM_ACCESS_DENIED
			del = false
		}
		if del {
			rc = 0
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) < len(m.list) {
		// 22.05 schedules a save whatever happened, but its saves
		// are batched; ours is written before the reply, so only a
		// clear that deleted something is worth one (else any user
		// could force an fsync per request).
		m.seq++
	}
	clear(m.list[len(kept):])
	m.list = kept
	return rc
}

// Pull is trigger_pull (SlurmUser's REQUEST_TRIGGER_PULL, as strigger's
// library callers and slurmdbd send): for each trigger of the request's
// resource and event type, the event is noted. A request for another
// resource type than slurmctld, slurmdbd or database is EINVAL.
func (m *Manager) Pull(req []msg.Trigger) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(req) != 1 {
		return errnoESRCH
	}
	in := req[0]
	if in.ResType != ResSlurmctld && in.ResType != ResSlurmdbd && in.ResType != ResDatabase {
		return errnoEINVAL
	}
	rc := 0
	for _, t := range m.list {
		if t.ResType != in.ResType || t.Type != in.TrigType {
			continue
		}
		switch t.Type {
		case TypePriCtldAcctFul:
			m.ev.priCtldAcctFull = true
		case TypeBuCtldFail:
			m.backupCtldFail()
		case TypeBuCtldResOp:
			m.backupCtldResOp()
		case TypeBuCtldAsCtrl:
			m.ev.buCtldAsCtrl = true
		case TypePriDbdFail:
			m.primaryDbdFail()
		case TypePriDbdResOp:
			m.ev.priDbdResOp, m.dbdFailure = true, 0
		case TypePriDbFail:
			if m.dbFailure != 1 {
				m.ev.priDbFail, m.dbFailure = true, 1
			}
		case TypePriDbResOp:
			m.ev.priDbResOp, m.dbFailure = true, 0
		default:
			rc = errnoEINVAL
		}
	}
	return rc
}

// atol is C's atol: optional blanks and sign, then digits up to the
// first other character; 0 when there are none.
func atol(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\v' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var v int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int64(s[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}
