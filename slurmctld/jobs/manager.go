package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// EnforcePartLimits is slurm.conf's EnforcePartLimits.
type EnforcePartLimits uint8

const (
	EnforceNo  EnforcePartLimits = iota // limits make the job wait
	EnforceAny                          // reject unless one partition fits
	EnforceAll                          // reject unless every partition fits
)

// Config is what the job manager reads from slurm.conf.
type Config struct {
	FirstJobID, MaxJobID uint32
	KillWait             int64 // seconds
	MsgTimeout           int64 // MessageTimeout, seconds
	MinJobAge            int64 // seconds a finished job stays in the table
	OverTimeLimit        uint32
	SlurmUserID          uint32
	EnforcePartLimits    EnforcePartLimits
	KillInvalidDepend    bool
	// EnableUserTop is SchedulerParameters=enable_user_top: users may
	// scontrol top their own jobs.
	EnableUserTop bool
	// WholeHetJob is SchedulerParameters=whole_hetjob (or whole_pack):
	// scancel of one component of a het job acts on every component.
	WholeHetJob bool
	// DisableJobShrink is SchedulerParameters=disable_job_shrink: running
	// jobs may not be shrunk (NumNodes, ReqNodeList).
	DisableJobShrink bool
	// AllowSpecResourcesUsage: jobs may ask for --core-spec/--thread-spec;
	// without it the request is dropped (the job shows CoreSpec=*).
	AllowSpecResourcesUsage bool
	// Prolog is PrologFlags: Alloc (the prolog runs at allocation,
	// REQUEST_LAUNCH_PROLOG), Contain (Alloc and an extern step), NoHold.
	Prolog       PrologFlags
	MaxArraySize uint32
	// MaxStepCount is slurm.conf's: a job whose next step id reached it
	// gets no more steps.
	MaxStepCount uint32
	MaxJobCount  uint32
	ClusterName  string
	Select       msg.SelectPlugin
	// Users resolves a uid to its passwd entry and groups (the step and
	// batch credentials carry them; AllowGroups needs the groups). nil, or
	// an unknown uid: the numeric ids only.
	Users func(uid uint32) (User, bool)
	// Hooks: MailProg, PrologSlurmctld/EpilogSlurmctld, jobcomp (hooks.go).
	Hooks HookConfig
	// GresTypes are slurm.conf's: the only GRES names a job may ask for.
	// nil (DefaultConfig) leaves the names unchecked; ConfigFromConf
	// always sets it, empty when slurm.conf names none.
	GresTypes []string
}

// User is the part of a passwd/group lookup the manager needs.
type User struct {
	Name, Gecos, Dir, Shell string
	GID                     uint32
	Groups                  []uint32 // every GID of the user, primary included
}

// DefaultConfig returns slurm.conf's defaults.
func DefaultConfig() Config {
	return Config{FirstJobID: 1, MaxJobID: 67043328, KillWait: 30, MsgTimeout: 10, MinJobAge: 300,
		MaxArraySize: 1001, MaxStepCount: 40000, MaxJobCount: 10000, Select: msg.SelectConsTres}
}

// ConfigFromConf reads the manager's settings from a parsed slurm.conf;
// slurmUID is SlurmUser resolved by the caller.
func ConfigFromConf(c *conf.Config, slurmUID uint32) (Config, error) {
	cfg := DefaultConfig()
	cfg.FirstJobID, cfg.MaxJobID = c.FirstJobId, c.MaxJobId
	if cfg.FirstJobID == 0 {
		cfg.FirstJobID = 1
	}
	if cfg.MaxJobID <= cfg.FirstJobID {
		return cfg, fmt.Errorf("MaxJobId (%d) must be greater than FirstJobId (%d)", cfg.MaxJobID, cfg.FirstJobID)
	}
	cfg.KillWait = int64(c.KillWait)
	cfg.MsgTimeout = int64(c.MessageTimeout)
	cfg.MinJobAge = int64(c.MinJobAge)
	cfg.OverTimeLimit = uint32(c.OverTimeLimit)
	cfg.SlurmUserID = slurmUID
	cfg.AllowSpecResourcesUsage = c.AllowSpecResourcesUsage
	cfg.Prolog = PrologFlags{Contain: c.PrologFlags.Has("Contain"), NoHold: c.PrologFlags.Has("NoHold")}
	cfg.Prolog.Alloc = cfg.Prolog.Contain || c.PrologFlags.Has("Alloc")
	switch strings.ToUpper(c.EnforcePartLimits) {
	case "", "NO", "0":
		cfg.EnforcePartLimits = EnforceNo
	case "ANY", "YES", "1":
		cfg.EnforcePartLimits = EnforceAny
	case "ALL":
		cfg.EnforcePartLimits = EnforceAll
	default:
		return cfg, fmt.Errorf("invalid EnforcePartLimits %q", c.EnforcePartLimits)
	}
	cfg.KillInvalidDepend = c.SchedulerParameters.Has("kill_invalid_depend") ||
		c.DependencyParameters.Has("kill_invalid_depend")
	cfg.EnableUserTop = UserTopEnabled(c.SchedulerParameters)
	cfg.DisableJobShrink = strings.Contains(strings.ToLower(c.SchedulerParameters.String()), "disable_job_shrink")
	sp := strings.ToLower(c.SchedulerParameters.String())
	cfg.WholeHetJob = strings.Contains(sp, "whole_hetjob") || strings.Contains(sp, "whole_pack")
	cfg.MaxArraySize = c.MaxArraySize
	cfg.MaxStepCount = c.MaxStepCount
	cfg.MaxJobCount = c.MaxJobCount
	cfg.ClusterName = c.ClusterName
	cfg.Hooks = hookConfigFromConf(c)
	cfg.GresTypes = append([]string{}, c.GresTypes...)
	switch c.SelectType {
	case "select/linear":
		cfg.Select = msg.SelectLinear
	case "select/cons_res":
		cfg.Select = msg.SelectConsRes
	default:
		cfg.Select = msg.SelectConsTres
	}
	return cfg, nil
}

// Caller is the authenticated sender of a request: the identity comes from
// the auth credential, never from the message body.
type Caller struct {
	UID, GID uint32
	// Host is the peer address of the request connection (resp_host).
	Host string
	// HostName is the peer's name (alloc_node when the request has none);
	// empty means Host.
	HostName string
	// ProtocolVersion is the request header's version.
	ProtocolVersion uint16
}

// Cluster is the node and partition view of the controller at the time of
// a call (sched's types; node indexes are the node table order).
type Cluster struct {
	Nodes      []sched.Node
	Partitions []sched.Partition
	Config     sched.Config
	// Reservations are the advanced reservations in force (resv.go).
	Reservations []Reservation
	// Licenses are slurm.conf's Licenses (licenses.go).
	Licenses []conf.License
	// GresRecs are the gres.conf records each node's slurmd registered
	// (index = node index; nil = not registered yet), for GRES indices.
	GresRecs [][]gres.Record
	// CloudAliases are the CLOUD nodes' entries of a job's alias list,
	// "name:[addr]:hostname" by node index ("" for other nodes); nil
	// when there is no CLOUD node, or SlurmctldParameters=cloud_dns.
	CloudAliases []string

	// empty keeps the submission test's empty cluster
	// (submitcheck_select.go) while the node configuration stays.
	empty sched.EmptyCache
}

// NodesChanged tells the view that the configuration of some node
// (hardware, GRES, features, weight, specialized cores or memory) changed
// in Nodes: what was derived from it is rebuilt.
func (c *Cluster) NodesChanged() { c.empty.Reset() }

func (c *Cluster) partition(name string) *sched.Partition {
	if c == nil {
		return nil
	}
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return &c.Partitions[i]
		}
	}
	return nil
}

func (c *Cluster) nodeIndex(name string) int {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return i
		}
	}
	return -1
}

// Ticket is a journal submission the caller waits on (outside its lock)
// before it replies.
type Ticket interface {
	Wait(ctx context.Context) error
}

// Outcome is what a call asks the controller to do: wait for Ticket (if
// any), then carry out Actions in order.
type Outcome struct {
	Ticket  Ticket
	Actions []Action
}

// Wait waits for the journal ticket, if there is one.
func (o Outcome) Wait(ctx context.Context) error {
	if o.Ticket == nil {
		return nil
	}
	return o.Ticket.Wait(ctx)
}

// Manager is the job table. It is not safe for concurrent use: the
// controller calls it under its lock.
type Manager struct {
	cfg     Config
	journal Journal
	prio    *priority.Basic
	// mf is priority/multifactor when configured (SetPriority); nil:
	// priority/basic.
	mf *Priority
	// info caches packed job records for REQUEST_JOB_INFO (infocache.go).
	info *infoCache
	// rebuilt holds the jobs recovered ended without ever having nodes,
	// by id, with their end time then (noteRebuiltAllocs, persist.go).
	rebuilt map[uint32]int64
	// billing is the partitions' TRESBillingWeights, for either priority
	// plugin (priority.go).
	billing billingTable

	jobs map[uint32]*Job
	// holders are the jobs that may hold nodes (running, suspended,
	// completing), for NodeUsage, which the controller calls after every
	// RPC: walking the whole table there cost a cache miss per job, a
	// third of the controller's CPU at 10,000 pending jobs. A job gets in
	// when it enters the table holding nodes or is journaled (every
	// change that gives a job nodes is: start, requeue, resync) and
	// leaves when NodeUsage finds it holds none.
	holders map[uint32]*Job
	arrays  arrayIndex // records by array (array_index.go)
	order   []uint32   // ids, ascending: deterministic iteration
	sorted  bool
	nextID  uint32

	lastUpdate int64
	pending    []record // records of the call in progress
	// logs are the lines for the controller's log since TakeLogs.
	logs []LogLine
	// licBlocked are the jobs the pass in the making left out for
	// their licenses (licenses_sched.go).
	licBlocked    []*Job
	licBlockedSet map[*Job]bool // isLicBlocked's index of licBlocked
	// diag and lastPass are sdiag's figures (diagstats.go).
	diag     DiagCounters
	lastPass sched.PassStats
	// hooks are the site scripts asked for (hooks.go).
	hooks hookState
	// planned is what the last backfill pass planned (planned.go).
	planned []int
	// gangs is the gang logic's job order per partition (gang.go).
	gangs gangState
	// revokeWait is the second from which a job held back for its
	// credential revocation may start (revoke.go); 0: none waits.
	revokeWait int64
}

// New returns an empty job table. j may be nil (nothing is persisted).
func New(cfg Config, j Journal) *Manager {
	if cfg.FirstJobID == 0 {
		cfg.FirstJobID = 1
	}
	if cfg.MaxJobID <= cfg.FirstJobID {
		cfg.MaxJobID = DefaultConfig().MaxJobID
	}
	if cfg.Select == 0 {
		cfg.Select = msg.SelectConsTres
	}
	return &Manager{cfg: cfg, journal: j, prio: priority.NewBasic(), jobs: map[uint32]*Job{},
		nextID: cfg.FirstJobID}
}

// SetConfig replaces the configuration (reconfigure).
func (m *Manager) SetConfig(cfg Config) { m.cfg = cfg }

// Job returns the record of a job id, nil if there is none.
func (m *Manager) Job(id uint32) *Job { return m.jobs[id] }

// Len is the number of records in the table.
func (m *Manager) Len() int { return len(m.jobs) }

// LastUpdate is the time of the last change (for "no change in data").
func (m *Manager) LastUpdate() int64 { return m.lastUpdate }

// Jobs returns the records in job id order. The slice is the caller's, the
// records are not.
func (m *Manager) Jobs() []*Job {
	m.sortOrder()
	out := make([]*Job, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.jobs[id])
	}
	return out
}

func (m *Manager) sortOrder() {
	if m.sorted {
		return
	}
	m.order = m.order[:0]
	for id := range m.jobs {
		m.order = append(m.order, id)
	}
	sort.Slice(m.order, func(a, b int) bool { return m.order[a] < m.order[b] })
	m.sorted = true
}

func (m *Manager) insert(j *Job) {
	m.jobs[j.ID] = j
	delete(m.holders, j.ID) // a record replaced (state replay) leaves
	m.noteHolder(j)
	m.arrays.add(j)
	if m.sorted && (len(m.order) == 0 || m.order[len(m.order)-1] < j.ID) {
		m.order = append(m.order, j.ID)
	} else {
		m.sorted = false
	}
}

func (m *Manager) remove(id uint32) {
	if j := m.jobs[id]; j != nil {
		m.arrays.drop(j)
	}
	delete(m.jobs, id)
	delete(m.holders, id)
	m.sorted = false
}

// noteHolder puts j in holders when it holds nodes.
func (m *Manager) noteHolder(j *Job) {
	if !j.holdsResources() {
		return
	}
	if m.holders == nil {
		m.holders = map[uint32]*Job{}
	}
	m.holders[j.ID] = j
}

// notePendingHolders notes the jobs of the call's records (noteHolder).
func (m *Manager) notePendingHolders() {
	for _, r := range m.pending {
		if r.job != nil && m.jobs[r.job.ID] == r.job {
			m.noteHolder(r.job)
		}
	}
}

// allocID hands out the next free job id, wrapping from MaxJobId back to
// FirstJobId as Slurm's get_next_job_id does. MaxJobId itself is never
// used (ids are below it).
func (m *Manager) allocID() (uint32, bool) {
	span := m.cfg.MaxJobID - m.cfg.FirstJobID
	for i := uint32(0); i < span; i++ {
		id := m.nextID
		m.nextID++
		if m.nextID >= m.cfg.MaxJobID || m.nextID < m.cfg.FirstJobID {
			m.nextID = m.cfg.FirstJobID
		}
		if id < m.cfg.FirstJobID || id >= m.cfg.MaxJobID {
			continue
		}
		if _, used := m.jobs[id]; !used {
			return id, true
		}
	}
	return 0, false
}

// peekID is the id allocID would hand out next (0 when none is free),
// without using it up.
func (m *Manager) peekID() uint32 {
	save := m.nextID
	id, _ := m.allocID()
	m.nextID = save
	return id
}

// privileged: root or SlurmUser (operators, once accounting exists).
func (m *Manager) privileged(uid uint32) bool { return uid == 0 || uid == m.cfg.SlurmUserID }

func (m *Manager) user(uid uint32) (User, bool) {
	if m.cfg.Users == nil {
		return User{}, false
	}
	return m.cfg.Users(uid)
}

// touch records a change of j: the journal gets its new state at the end of
// the call.
func (m *Manager) touch(j *Job, now int64) {
	m.lastUpdate = now
	m.pending = append(m.pending, record{kind: recUpdate, job: j})
}

// finish closes a call: it journals the records it produced and returns
// the outcome.
func (m *Manager) finish(actions []Action) (Outcome, error) {
	out := Outcome{Actions: actions}
	if len(m.pending) == 0 {
		return out, nil
	}
	m.notePendingHolders()
	recs, err := m.encodePending()
	m.pending = m.pending[:0]
	if err != nil {
		return out, err
	}
	if m.journal == nil {
		return out, nil
	}
	t, err := m.journal.Submit(recs...)
	if err != nil {
		return out, fmt.Errorf("jobs: journal: %w", err)
	}
	out.Ticket = t
	return out, nil
}

// logf notes a line for the controller's log (real slurmctld logs it
// where the event happens; the manager has no logger of its own).
func (m *Manager) logf(l slog.Level, format string, args ...any) {
	m.logs = append(m.logs, LogLine{Level: l, Msg: fmt.Sprintf(format, args...)})
}

// TakeLogs returns the lines noted since the last call.
func (m *Manager) TakeLogs() []LogLine {
	l := m.logs
	m.logs = nil
	return l
}

func strOf(s msg.NullString) string { return s.Value }

func ns(s string) msg.NullString {
	if s == "" {
		return msg.NullString{}
	}
	return msg.Str(s)
}

func cns(s string) jobcred.NullString {
	if s == "" {
		return jobcred.NullString{}
	}
	return jobcred.Str(s)
}

// SetJournal sets where changes are journaled (after recovery: replaying
// must not journal again).
func (m *Manager) SetJournal(j Journal) { m.journal = j }
