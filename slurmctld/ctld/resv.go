package ctld

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Advanced reservations (slurmctld/reservation.c): the table, create,
// update and delete. resv_rpc.go has the RPCs, resv_save.go the state
// file, resv_tick.go expiry, node flags and the scheduler's view.

// Reservation flag bits (RESERVE_FLAG_* of slurm.h, 22.05).
const (
	resvMaint       uint64 = 1 << 0
	resvNoMaint     uint64 = 1 << 1
	resvDaily       uint64 = 1 << 2
	resvNoDaily     uint64 = 1 << 3
	resvWeekly      uint64 = 1 << 4
	resvNoWeekly    uint64 = 1 << 5
	resvIgnJobs     uint64 = 1 << 6
	resvNoIgnJobs   uint64 = 1 << 7
	resvAnyNodes    uint64 = 1 << 8
	resvNoAnyNodes  uint64 = 1 << 9
	resvStatic      uint64 = 1 << 10
	resvNoStatic    uint64 = 1 << 11
	resvPartNodes   uint64 = 1 << 12
	resvNoPartNodes uint64 = 1 << 13
	resvOverlap     uint64 = 1 << 14
	resvSpecNodes   uint64 = 1 << 15
	resvFirstCores  uint64 = 1 << 16
	resvTimeFloat   uint64 = 1 << 17
	resvReplace     uint64 = 1 << 18
	resvAllNodes    uint64 = 1 << 19
	resvPurgeComp   uint64 = 1 << 20
	resvWeekday     uint64 = 1 << 21
	resvNoWeekday   uint64 = 1 << 22
	resvWeekend     uint64 = 1 << 23
	resvNoWeekend   uint64 = 1 << 24
	resvFlex        uint64 = 1 << 25
	resvNoFlex      uint64 = 1 << 26
	resvDurPlus     uint64 = 1 << 27
	resvDurMinus    uint64 = 1 << 28
	resvNoHoldJobs  uint64 = 1 << 29
	resvReplaceDown uint64 = 1 << 30
	resvNoPurgeComp uint64 = 1 << 31
	resvMagnetic    uint64 = 1 << 32
	resvNoMagnetic  uint64 = 1 << 33
	resvSkip        uint64 = 1 << 34
	resvHourly      uint64 = 1 << 35
	resvNoHourly    uint64 = 1 << 36

	resvReoccurring = resvHourly | resvDaily | resvWeekly | resvWeekday | resvWeekend

	// resvCreateMask is what create_resv keeps of the requested flags.
	resvCreateMask = resvMaint | resvFlex | resvOverlap | resvIgnJobs | resvHourly | resvDaily |
		resvWeekday | resvWeekend | resvWeekly | resvStatic | resvAnyNodes | resvPartNodes |
		resvFirstCores | resvTimeFloat | resvPurgeComp | resvReplace | resvReplaceDown |
		resvNoHoldJobs | resvMagnetic
)

const (
	noVal32       = 0xfffffffe
	infinite32    = 0xffffffff
	yearSeconds   = 365 * 24 * 3600
	maxResvDelay  = 600 // seconds a start time may lie in the past
	maxResvCount  = 9999
	nodeStateRes  = 0x20 // NODE_STATE_RES
	infiniteTime  = int64(infinite32)
	resvPurgeTime = 300 // default PurgeCompTime
)

// resvRec is one reservation (slurmctld_resv_t, the parts we keep).
type resvRec struct {
	ID       uint32
	Name     string
	Accounts string `json:",omitempty"`
	Users    string `json:",omitempty"`
	// Groups is Groups=: their members (UIDs) may use the reservation.
	Groups      string `json:",omitempty"`
	Partition   string `json:",omitempty"`
	Features    string `json:",omitempty"`
	Licenses    string `json:",omitempty"`
	BurstBuffer string `json:",omitempty"`
	// Nodes are the reserved node names (kept by name, so a
	// reconfiguration that reorders nodes keeps the right ones).
	Nodes      []string `json:",omitempty"`
	Start      int64
	StartFirst int64
	End        int64
	Duration   uint32 // minutes; NO_VAL when EndTime was given
	Flags      uint64
	// Full is RESV_CTLD_FULL_NODE: whole nodes (no CoreCnt).
	Full bool
	// Cores are a core reservation's cores (Full false), one entry per
	// node of Nodes, same order.
	Cores         []resvNodeCores `json:",omitempty"`
	PurgeCompTime uint32
	// IdleStart is when the reservation last found itself without jobs
	// (idle_start_time); 0 while jobs use it.
	IdleStart     int64 `json:",omitempty"`
	MaxStartDelay uint32
	Watts         uint32

	UIDs     []uint32 `json:",omitempty"`
	UsersNot bool     `json:",omitempty"`
	AcctList []string `json:",omitempty"`
	AcctNot  bool     `json:",omitempty"`

	// nodeFlagsSet is RESV_CTLD_NODE_FLAGS_SET: the reservation's node
	// flags are on (it is active).
	nodeFlagsSet bool
}

// resvTable is the controller's reservation list, guarded by the
// controller's lock (saveMu only orders writes of the state file).
type resvTable struct {
	list       []*resvRec
	top        uint32 // top_suffix: the last id given
	lastUpdate int64
	file       string // state file; "" = not saved
	seq        uint64 // changes made
	saveMu     sync.Mutex
	saved      uint64 // change written last
	// flagged: some node carries a flag a reservation set.
	flagged bool
	// groupCheck and groupMtime pace resvGroupRefresh: when the
	// groups' members were last looked at, and the group file's
	// modification time then.
	groupCheck int64
	groupMtime int64
}

func (t *resvTable) find(name string) *resvRec {
	for _, r := range t.list {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (t *resvTable) idUsed(id uint32) bool {
	for _, r := range t.list {
		if r.ID == id {
			return true
		}
	}
	return false
}

// nextID is _generate_resv_id.
func (t *resvTable) nextID() (uint32, error) {
	for i := 0; i < maxResvCount; i++ {
		if t.top >= maxResvCount {
			t.top = 1
		} else {
			t.top++
		}
		if !t.idUsed(t.top) {
			return t.top, nil
		}
	}
	return 0, resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
}

func resvErr(code int) error { return slurmerr.Error{Code: code} }

// genName is _generate_resv_name: the first account, else user, else
// group (without a leading '-'), "_" and the id.
func genName(d *msg.ReservationDesc, id uint32) string {
	key := "resv"
	for _, s := range []msg.NullString{d.Accounts, d.Users, d.Groups} {
		if s.Valid && s.Value != "" {
			key = s.Value
			break
		}
	}
	key = strings.TrimPrefix(key, "-")
	if i := strings.IndexByte(key, ','); i >= 0 {
		key = key[:i]
	}
	return fmt.Sprintf("%s_%d", key, id)
}

// resvUID resolves a user name or number (uid_from_string).
func resvUID(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	if u, err := user.Lookup(s); err == nil {
		if id, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			return uint32(id), true
		}
	}
	if id, err := strconv.ParseUint(s, 10, 32); err == nil {
		if _, err := user.LookupId(s); err == nil {
			return uint32(id), true
		}
	}
	return 0, false
}

// buildUIDs is _build_uid_list: a comma list, "-" before the first name
// makes it the users who may not use the reservation.
func buildUIDs(users string) ([]uint32, bool, error) {
	not := strings.HasPrefix(users, "-")
	var out []uint32
	for _, tok := range strings.Split(users, ",") {
		tok = strings.TrimPrefix(tok, "-")
		if tok == "" {
			continue
		}
		uid, ok := resvUID(tok)
		if !ok {
			return nil, false, resvErr(slurmerr.ESLURM_USER_ID_MISSING)
		}
		out = append(out, uid)
	}
	if len(out) == 0 {
		return nil, false, resvErr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	return out, not, nil
}

// buildAccounts is _build_account_list without accounting enforcement
// (every account name is valid then, as _is_account_valid says).
func buildAccounts(accounts string) ([]string, bool, error) {
	not := strings.HasPrefix(accounts, "-")
	var out []string
	for _, tok := range strings.Split(accounts, ",") {
		tok = strings.TrimPrefix(tok, "-")
		if tok != "" {
			out = append(out, tok)
		}
	}
	if len(out) == 0 {
		return nil, false, resvErr(slurmerr.ESLURM_INVALID_ACCOUNT)
	}
	return out, not, nil
}

// updateList applies a user or account expression to a reservation's
// list (_update_uid_list, _update_account_list): "a,b" replaces it,
// "+a" adds and "-a" removes names; removing from an empty list makes a
// "may not use" list. It returns the new string, names and Not flag.
func updateList(cur string, curNot bool, expr string) (string, bool, error) {
	var plus, minus, set []string
	for _, tok := range strings.Split(expr, ",") {
		switch {
		case tok == "":
		case tok[0] == '-':
			minus = append(minus, tok[1:])
		case tok[0] == '+':
			plus = append(plus, tok[1:])
		case len(plus) > 0 || len(minus) > 0:
			return "", false, resvErr(slurmerr.ESLURM_USER_ID_MISSING)
		default:
			set = append(set, tok)
		}
	}
	if len(plus) == 0 && len(minus) == 0 {
		return strings.Join(set, ","), false, nil
	}
	if len(set) > 0 {
		return "", false, resvErr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	names := splitNames(cur)
	not := curNot
	if len(names) == 0 && len(minus) > 0 {
		not = true
	} else if len(names) == 0 {
		not = false
	}
	if not {
		// On a "may not" list, "-name" adds and "+name" removes.
		plus, minus = minus, plus
	}
	for _, n := range plus {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range minus {
		i := slices.Index(names, n)
		if i < 0 {
			return "", false, resvErr(slurmerr.ESLURM_USER_ID_MISSING)
		}
		names = slices.Delete(names, i, i+1)
	}
	s := strings.Join(names, ",")
	if not && s != "" {
		s = "-" + strings.Join(names, ",-")
	}
	return s, not && s != "", nil
}

func splitNames(s string) []string {
	var out []string
	for _, tok := range strings.Split(s, ",") {
		if tok = strings.TrimPrefix(tok, "-"); tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// setUsers and setAccounts install a user or account string on r.
func (r *resvRec) setUsers(users string) error {
	if users == "" {
		if r.Groups == "" {
			r.UIDs, r.UsersNot = nil, false
		}
		r.Users = ""
		return nil
	}
	uids, not, err := buildUIDs(users)
	if err != nil {
		return err
	}
	r.Users, r.UIDs, r.UsersNot = users, uids, not
	return nil
}

func (r *resvRec) setAccounts(accts string) error {
	if accts == "" {
		r.Accounts, r.AcctList, r.AcctNot = "", nil, false
		return nil
	}
	l, not, err := buildAccounts(accts)
	if err != nil {
		return err
	}
	r.Accounts, r.AcctList, r.AcctNot = accts, l, not
	return nil
}

// nodeIdx maps node names to table positions. Called under the lock.
func (c *Controller) nodeIdx() map[string]int {
	m := make(map[string]int, len(c.nodes))
	for i, n := range c.nodes {
		m[n.Name] = i
	}
	return m
}

// resvNodes resolves a Nodes= expression (node_name2bitmap) into the
// table's order; "ALL" is every node not FUTURE.
func (c *Controller) resvNodes(expr string) ([]string, error) {
	if strings.EqualFold(expr, "ALL") {
		var out []string
		for _, n := range c.nodes {
			if !n.IsFuture() {
				out = append(out, n.Name)
			}
		}
		return out, nil
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil, resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
	}
	want := map[string]bool{}
	for _, n := range names {
		if c.nodeIndex[n] == nil {
			return nil, resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		want[n] = true
	}
	var out []string
	for _, n := range c.nodes {
		if want[n.Name] {
			out = append(out, n.Name)
		}
	}
	return out, nil
}

func (c *Controller) defaultPart() *Partition {
	for _, p := range c.parts {
		if p.Flags&msg.PartFlagDefault != 0 {
			return p
		}
	}
	return nil
}

// relTimes are a reservation's start and end as the overlap tests use
// them (_get_rel_start_end): a floating one starts Start seconds from now.
func (r *resvRec) relTimes(now int64) (int64, int64) {
	if r.Flags&resvTimeFloat == 0 {
		return r.Start, r.End
	}
	s := r.Start + now
	switch {
	case r.Duration == infinite32:
		return s, s + yearSeconds
	case r.Duration != 0 && r.Duration != noVal32:
		return s, s + int64(r.Duration)*60
	}
	return min(s, r.End), r.End
}

// timeOverlap is _resv_time_overlap: the windows meet, looking a week
// ahead for reservations that repeat hourly or daily.
func timeOverlap(s1, e1 int64, f1 uint64, s2, e2 int64, f2 uint64) bool {
	steps := func(f uint64) (int, int64) {
		switch {
		case f&resvHourly != 0:
			return 7 * 24, 3600
		case f&resvDaily != 0:
			return 7, 86400
		}
		return 1, 0
	}
	n1, d1 := steps(f1)
	n2, d2 := steps(f2)
	for i := 0; i < n1; i++ {
		a, b := s1+int64(i)*d1, e1+int64(i)*d1
		for j := 0; j < n2; j++ {
			x, y := s2+int64(j)*d2, e2+int64(j)*d2
			if a < y && b > x {
				return true
			}
		}
	}
	return false
}

// resvOverlap is _resv_overlap: another whole-node reservation (not
// MAINT, not OVERLAP) shares a node during the window.
func (c *Controller) resvOverlap(start, end int64, flags uint64, nodes []string, self *resvRec) bool {
	if flags&(resvMaint|resvOverlap) != 0 || len(nodes) == 0 {
		return false
	}
	now := c.now().Unix()
	for _, r := range c.resv.list {
		if r == self || len(r.Nodes) == 0 || r.Flags&(resvMaint|resvOverlap) != 0 || !r.Full {
			continue
		}
		if !sharesNode(r.Nodes, nodes) {
			continue
		}
		rs, re := r.relTimes(now)
		if timeOverlap(start, end, flags, rs, re, r.Flags) {
			return true
		}
	}
	return false
}

func sharesNode(a, b []string) bool {
	for _, n := range a {
		if slices.Contains(b, n) {
			return true
		}
	}
	return false
}

// jobOverlap is _job_overlap: a running job (not of the reservation
// itself) on one of the nodes ends after start.
func (c *Controller) jobOverlap(start int64, flags uint64, nodes []string, self string) bool {
	if len(nodes) == 0 || flags&resvIgnJobs != 0 || c.jobs == nil {
		return false
	}
	if flags&resvTimeFloat != 0 {
		start += c.now().Unix()
	}
	for _, j := range c.jobs.m.Jobs() {
		if !j.Running() || j.EndTime <= start || (self != "" && j.Reservation == self) {
			continue
		}
		if sharesNode(j.Nodes, nodes) {
			return true
		}
	}
	return false
}

// resvUsed is _is_resv_used: a running job is in the reservation.
func (c *Controller) resvUsed(name string) bool {
	if c.jobs == nil {
		return false
	}
	for _, j := range c.jobs.m.Jobs() {
		if j.Running() && j.Reservation == name {
			return true
		}
	}
	return false
}

// resvHasJobs is delete_resv's _is_resv_used: a job not finished yet,
// pending ones included, names the reservation.
func (c *Controller) resvHasJobs(name string) bool {
	if c.jobs == nil {
		return false
	}
	for _, j := range c.jobs.m.Jobs() {
		if !j.Finished() && j.Reservation == name {
			return true
		}
	}
	return false
}

// pickNodes is _select_nodes for whole nodes: count nodes of the
// partition that are up and available, not in another reservation whose
// window meets this one (unless MAINT or OVERLAP), with the features
// asked for, and, without IGNORE_JOBS, not running a job that ends
// after the start; first ones in table order.
func (c *Controller) pickNodes(p *Partition, count uint32, start, end int64, flags uint64, feats []resvFeat) ([]string, error) {
	now := c.now().Unix()
	var cand []*Node
	for _, n := range p.Nodes {
		if !n.Available() {
			continue
		}
		if flags&(resvMaint|resvOverlap) == 0 && c.inOtherResv(n.Name, start, end, flags, now) {
			continue
		}
		cand = append(cand, n)
	}
	var with map[string]bool
	if len(feats) > 0 {
		var err error
		if with, err = featureFilter(feats, cand, count); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, n := range cand {
		if uint32(len(out)) == count {
			break
		}
		if with != nil && !with[n.Name] {
			continue
		}
		if c.jobOverlap(start, flags, []string{n.Name}, "") {
			continue
		}
		out = append(out, n.Name)
	}
	if uint32(len(out)) < count {
		return nil, resvErr(slurmerr.ESLURM_NODES_BUSY)
	}
	return out, nil
}

func (c *Controller) inOtherResv(node string, start, end int64, flags uint64, now int64) bool {
	for _, r := range c.resv.list {
		// Core reservations leave their nodes to whole-node ones
		// (_filter_resv without a core bitmap).
		if !r.Full || !slices.Contains(r.Nodes, node) {
			continue
		}
		rs, re := r.relTimes(now)
		if timeOverlap(start, end, flags, rs, re, r.Flags) {
			return true
		}
	}
	return false
}

// resvTRES is _set_tres_cnt for whole-node reservations: the cores and
// CPUs of the nodes.
func (c *Controller) resvTRES(r *resvRec) (cores uint32, tres string) {
	var cpus uint64
	if !r.Full {
		cores, cpus = c.coreTRES(r)
		if cpus > 0 {
			tres = fmt.Sprintf("cpu=%d", cpus)
		}
		return cores, tres
	}
	for _, name := range r.Nodes {
		if n := c.nodeIndex[name]; n != nil {
			cores += uint32(n.Sockets) * uint32(n.Cores)
			cpus += uint64(n.CPUs)
		}
	}
	if cpus > 0 {
		tres = fmt.Sprintf("cpu=%d", cpus)
	}
	return cores, tres
}

// createResv is create_resv. Called under the write lock; it returns the
// reservation's name.
func (c *Controller) createResv(d *msg.ReservationDesc) (string, error) {
	now := c.now().Unix()
	flags := d.Flags
	if flags == noVal64 {
		flags = 0
	} else {
		flags &= resvCreateMask
	}
	start := d.StartTime
	switch {
	case start == noVal32:
		start = now
	case flags&resvTimeFloat != 0:
		start = max(start, now)
	case start < now-maxResvDelay:
		return "", resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
	}
	var end int64
	switch {
	case d.EndTime != noVal32:
		if d.EndTime < now-maxResvDelay {
			return "", resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
		}
		end = d.EndTime
	case d.Duration == infinite32:
		end = start + yearSeconds
	case d.Duration != 0 && d.Duration != noVal32:
		end = start + int64(d.Duration)*60
	default:
		end = infiniteTime
	}
	if flags&(resvReplace|resvReplaceDown) != 0 {
		if d.NodeList.Valid {
			return "", resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		if d.CoreCnt != nil {
			return "", resvErr(slurmerr.ESLURM_INVALID_CPU_COUNT)
		}
	}
	var part *Partition
	if d.Partition.Valid {
		if part = c.findPart(d.Partition.Value); part == nil {
			return "", resvErr(slurmerr.ESLURM_INVALID_PARTITION_NAME)
		}
	} else if flags&resvPartNodes != 0 {
		return "", resvErr(slurmerr.ESLURM_INVALID_PARTITION_NAME)
	}
	if flags&resvPartNodes != 0 && !strings.EqualFold(d.NodeList.Value, "ALL") {
		return "", resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
	}
	switch {
	case d.Users.Valid && d.Groups.Valid:
		return "", resvErr(slurmerr.ESLURM_RESERVATION_USER_GROUP)
	case !d.Accounts.Valid && !d.Users.Valid && !d.Groups.Valid:
		return "", resvErr(slurmerr.ESLURM_RESERVATION_EMPTY)
	}
	r := &resvRec{Start: start, StartFirst: start, End: end, Duration: d.Duration, Full: true,
		PurgeCompTime: resvPurgeTime, Watts: d.Watts, BurstBuffer: d.BurstBuffer.Value}
	if d.PurgeCompTime != noVal32 {
		r.PurgeCompTime = d.PurgeCompTime
	}
	if d.MaxStartDelay != noVal32 {
		r.MaxStartDelay = d.MaxStartDelay
	}
	if d.Accounts.Valid {
		if err := r.setAccounts(d.Accounts.Value); err != nil {
			return "", err
		}
	}
	if d.Users.Valid {
		if err := r.setUsers(d.Users.Value); err != nil {
			return "", err
		}
	}
	if d.Groups.Valid {
		if err := r.setGroups(d.Groups.Value); err != nil {
			return "", err
		}
	}
	if d.Licenses.Valid && d.Licenses.Value != "" {
		if err := c.resvLicenses(d.Licenses.Value, "", start, end); err != nil {
			return "", err
		}
		r.Licenses = d.Licenses.Value
	}
	switch {
	case flags&resvTimeFloat != 0 && flags&resvReoccurring != 0:
		return "", resvErr(slurmerr.ESLURM_NOT_SUPPORTED)
	}
	cores := d.CoreCnt != nil
	// Features select NodeCnt= nodes; with Nodes= they are only kept.
	r.Features = d.Features.Value
	switch {
	case d.NodeList.Valid:
		flags |= resvSpecNodes
		var nodes []string
		if strings.EqualFold(d.NodeList.Value, "ALL") && part != nil && flags&resvPartNodes != 0 {
			for _, n := range part.Nodes {
				nodes = append(nodes, n.Name)
			}
		} else {
			if strings.EqualFold(d.NodeList.Value, "ALL") {
				flags |= resvAllNodes
			}
			flags &^= resvPartNodes
			var err error
			if nodes, err = c.resvNodes(d.NodeList.Value); err != nil {
				return "", err
			}
		}
		if len(nodes) == 0 {
			return "", resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		if flags&resvOverlap == 0 && c.resvOverlap(start, end, flags, nodes, nil) {
			return "", resvErr(slurmerr.ESLURM_RESERVATION_OVERLAP)
		}
		if !cores && c.jobOverlap(start, flags&^resvTimeFloat, nodes, "") {
			return "", resvErr(slurmerr.ESLURM_NODES_BUSY)
		}
		r.Nodes = nodes
		if cores {
			var err error
			if part, err = c.createCoreResv(r, d, part, nodes, flags); err != nil {
				return "", err
			}
		}
	case flags&resvAnyNodes == 0 && cores:
		flags &^= resvPartNodes
		var err error
		if part, err = c.createCoreResv(r, d, part, nil, flags); err != nil {
			return "", err
		}
	case flags&resvAnyNodes == 0:
		flags &^= resvPartNodes
		var count uint32
		for _, n := range d.NodeCnt {
			count += n
		}
		if count == 0 {
			return "", resvErr(slurmerr.ESLURM_INVALID_NODE_NAME)
		}
		if part == nil {
			if part = c.defaultPart(); part == nil {
				return "", resvErr(slurmerr.ESLURM_DEFAULT_PARTITION_NOT_SET)
			}
		}
		var feats []resvFeat
		if r.Features != "" {
			var err error
			if r.Features, feats, err = c.checkResvFeatures(r.Features); err != nil {
				return "", err
			}
		}
		nodes, err := c.pickNodes(part, count, start, end, flags, feats)
		if err != nil {
			return "", err
		}
		r.Nodes = nodes
	}
	if flags&resvAnyNodes != 0 && len(r.Nodes) == 0 && r.BurstBuffer == "" && r.Licenses == "" && (r.Watts == 0 || r.Watts == noVal32) {
		return "", resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	if part != nil {
		r.Partition = part.Name
	}
	id, err := c.resv.nextID()
	if err != nil {
		return "", err
	}
	name := d.Name.Value
	if name != "" {
		if c.resv.find(name) != nil {
			return "", resvErr(slurmerr.ESLURM_RESERVATION_NAME_DUP)
		}
	} else {
		for name = genName(d, id); c.resv.find(name) != nil; name = genName(d, id) {
			if id, err = c.resv.nextID(); err != nil {
				return "", err
			}
		}
	}
	r.ID, r.Name, r.Flags = id, name, flags
	if flags&resvTimeFloat != 0 {
		r.Start -= now
	}
	c.resv.list = append(c.resv.list, r)
	c.resvChanged(now)
	c.log.Info(fmt.Sprintf("Created reservation=%s nodes=%s start=%d end=%d", r.Name, hostlist.Compress(r.Nodes), r.Start, r.End))
	return name, nil
}

// updateResv is update_resv for whole-node reservations. Called under
// the write lock. On failure the reservation is left as it was.
func (c *Controller) updateResv(d *msg.ReservationDesc) error {
	now := c.now().Unix()
	if !d.Name.Valid {
		return resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	old := c.resv.find(d.Name.Value)
	if old == nil {
		return resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	if d.CoreCnt != nil || !old.Full && (d.NodeCnt != nil || d.NodeList.Valid) {
		return resvErr(slurmerr.ESLURM_CORE_RESERVATION_UPDATE)
	}
	r := *old
	r.Nodes = slices.Clone(old.Nodes)
	r.Cores = slices.Clone(old.Cores)
	skip := false
	if f := d.Flags; f != noVal64 {
		for _, p := range []struct{ on, off uint64 }{
			{resvFlex, resvNoFlex}, {resvMaint, resvNoMaint}, {resvOverlap, 0}, {resvIgnJobs, resvNoIgnJobs},
			{resvHourly, resvNoHourly}, {resvDaily, resvNoDaily}, {resvWeekday, resvNoWeekday},
			{resvWeekend, resvNoWeekend}, {resvWeekly, resvNoWeekly}, {resvAnyNodes, resvNoAnyNodes},
			{resvStatic, resvNoStatic}, {resvFirstCores, 0}, {resvPurgeComp, resvNoPurgeComp},
			{resvNoHoldJobs, 0}, {resvMagnetic, resvNoMagnetic},
		} {
			if f&p.on != 0 {
				r.Flags |= p.on
			}
			if p.off != 0 && f&p.off != 0 {
				r.Flags &^= p.on
			}
		}
		if f&resvNoPurgeComp != 0 && d.PurgeCompTime == noVal32 {
			r.PurgeCompTime = resvPurgeTime
		}
		switch {
		case f&(resvReplace|resvReplaceDown|resvPartNodes) != 0:
			return resvErr(slurmerr.ESLURM_NOT_SUPPORTED)
		case f&resvNoPartNodes != 0:
			r.Flags &^= resvPartNodes
		}
		if f&resvTimeFloat != 0 {
			return resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
		}
		if f&resvSkip != 0 {
			if r.Flags&resvReoccurring == 0 {
				return resvErr(slurmerr.ESLURM_RESERVATION_NO_SKIP)
			}
			skip = true
		}
	}
	if d.MaxStartDelay != noVal32 {
		r.MaxStartDelay = d.MaxStartDelay
	}
	if d.PurgeCompTime != noVal32 {
		r.PurgeCompTime = d.PurgeCompTime
	}
	if d.Partition.Valid {
		if d.Partition.Value == "" {
			r.Partition = ""
		} else if p := c.findPart(d.Partition.Value); p == nil {
			return resvErr(slurmerr.ESLURM_INVALID_PARTITION_NAME)
		} else {
			r.Partition = p.Name
		}
	}
	if d.Watts != noVal32 {
		r.Watts = d.Watts
	}
	if d.Accounts.Valid {
		s, not, err := updateList(r.Accounts, r.AcctNot, d.Accounts.Value)
		if err != nil {
			return resvErr(slurmerr.ESLURM_INVALID_ACCOUNT)
		}
		if err := r.setAccounts(s); err != nil {
			return err
		}
		r.AcctNot = not && s != ""
	}
	if d.BurstBuffer.Valid {
		r.BurstBuffer = d.BurstBuffer.Value
	}
	if err := c.updateResvLicenses(&r, d); err != nil {
		return err
	}
	if d.Features.Valid {
		// Features= "" clears them; new features would need the nodes
		// picked again, which Slurm does not do either.
		if d.Features.Value != "" {
			return resvErr(slurmerr.ESLURM_NOT_SUPPORTED)
		}
		r.Features = ""
	}
	if d.Groups.Valid {
		g, err := updateGroups(r.Groups, d.Groups.Value)
		if err != nil {
			return err
		}
		if err := r.setGroups(g); err != nil {
			return err
		}
	}
	if d.Users.Valid {
		s, not, err := updateList(r.Users, r.UsersNot, d.Users.Value)
		if err != nil {
			return err
		}
		if err := r.setUsers(s); err != nil {
			return err
		}
		r.UsersNot = not && s != ""
	}
	if r.Users != "" && r.Groups != "" {
		return resvErr(slurmerr.ESLURM_RESERVATION_USER_GROUP)
	}
	if r.Users == "" && r.Accounts == "" && r.Groups == "" {
		return resvErr(slurmerr.ESLURM_RESERVATION_EMPTY)
	}
	if d.StartTime != noVal32 {
		if r.Start <= now {
			return resvErr(slurmerr.ESLURM_RSV_ALREADY_STARTED)
		}
		if d.StartTime < now-60 {
			return resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
		}
		r.Start, r.StartFirst = d.StartTime, d.StartTime
		if r.Duration != noVal32 {
			r.End = r.StartFirst + int64(r.Duration)*60
		}
	}
	if d.EndTime != noVal32 {
		if d.EndTime < now-60 {
			return resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
		}
		r.End, r.Duration = d.EndTime, noVal32
	}
	switch {
	case d.Duration == infinite32:
		r.Duration = yearSeconds / 60
		r.End = r.StartFirst + yearSeconds
	case d.Duration != noVal32:
		cur := r.Duration
		if cur == noVal32 {
			// A reservation made with EndTime has no duration; its
			// window is the reference for +/-.
			cur = uint32(max(r.End-r.StartFirst, 0) / 60)
		}
		switch {
		case d.Flags == noVal64:
			r.Duration = d.Duration
		case d.Flags&resvDurPlus != 0:
			r.Duration = cur + d.Duration
		case d.Flags&resvDurMinus != 0:
			r.Duration = cur - min(cur, d.Duration)
		default:
			r.Duration = d.Duration
		}
		r.End = max(r.StartFirst+int64(r.Duration)*60, now)
	}
	if r.Start >= r.End {
		return resvErr(slurmerr.ESLURM_INVALID_TIME_VALUE)
	}
	if d.NodeList.Valid {
		if d.NodeList.Value == "" {
			return resvErr(slurmerr.ESLURM_RESERVATION_INVALID) // no nodes without ANY_NODES
		}
		nodes, err := c.resvNodes(d.NodeList.Value)
		if err != nil {
			return err
		}
		r.Flags |= resvSpecNodes
		r.Flags &^= resvPartNodes | resvAllNodes
		if strings.EqualFold(d.NodeList.Value, "ALL") {
			r.Flags |= resvAllNodes
		}
		r.Nodes = nodes
	}
	if d.NodeCnt != nil {
		var count uint32
		for _, n := range d.NodeCnt {
			count += n
		}
		r.Flags &^= resvPartNodes | resvAllNodes
		if err := c.resizeResv(&r, count); err != nil {
			return err
		}
	}
	if c.resvOverlap(r.Start, r.End, r.Flags, r.Nodes, old) {
		return resvErr(slurmerr.ESLURM_RESERVATION_OVERLAP)
	}
	if c.jobOverlap(r.Start, r.Flags, r.Nodes, r.Name) {
		return resvErr(slurmerr.ESLURM_NODES_BUSY)
	}
	if len(r.Nodes) == 0 && (r.Flags&resvAnyNodes == 0 ||
		r.Licenses == "" && r.BurstBuffer == "" && (r.Watts == 0 || r.Watts == noVal32)) {
		return resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	if skip {
		// Flags=SKIP: on to the next occurrence, unless running jobs
		// use this one.
		if c.resvUsed(r.Name) {
			return resvErr(slurmerr.ESLURM_RESERVATION_BUSY)
		}
		if !c.advanceOnce(&r, now) {
			return resvErr(slurmerr.ESLURM_RESERVATION_NO_SKIP)
		}
	}
	*old = r
	c.resvChanged(now)
	return nil
}

// resizeResv is _resize_resv: drop nodes from the end (idle ones
// first), or add nodes picked as create does.
func (c *Controller) resizeResv(r *resvRec, count uint32) error {
	have := uint32(len(r.Nodes))
	switch {
	case count == have:
		return nil
	case count < have:
		var busy, idle []string
		for _, name := range r.Nodes {
			if n := c.nodeIndex[name]; n != nil && n.RunJobs > 0 {
				busy = append(busy, name)
			} else {
				idle = append(idle, name)
			}
		}
		keep := append(busy, idle...)[:count]
		var out []string
		for _, name := range r.Nodes {
			if slices.Contains(keep, name) {
				out = append(out, name)
			}
		}
		r.Nodes = out
		return nil
	}
	p := c.findPart(r.Partition)
	if p == nil {
		if p = c.defaultPart(); p == nil {
			return resvErr(slurmerr.ESLURM_DEFAULT_PARTITION_NOT_SET)
		}
	}
	// Nodes of the reservation itself do not count as taken.
	saved := r.Nodes
	self := c.resv.find(r.Name)
	var selfNodes []string
	if self != nil {
		selfNodes, self.Nodes = self.Nodes, nil
	}
	var feats []resvFeat
	if r.Features != "" {
		var err error
		if _, feats, err = c.checkResvFeatures(r.Features); err != nil {
			return err
		}
	}
	more, err := c.pickNodesExcept(p, count-have, r.Start, r.End, r.Flags, saved, feats)
	if self != nil {
		self.Nodes = selfNodes
	}
	if err != nil {
		return err
	}
	all := append(slices.Clone(saved), more...)
	var out []string
	for _, n := range c.nodes {
		if slices.Contains(all, n.Name) {
			out = append(out, n.Name)
		}
	}
	r.Nodes = out
	return nil
}

func (c *Controller) pickNodesExcept(p *Partition, count uint32, start, end int64, flags uint64, except []string, feats []resvFeat) ([]string, error) {
	q := &Partition{Name: p.Name}
	for _, n := range p.Nodes {
		if !slices.Contains(except, n.Name) {
			q.Nodes = append(q.Nodes, n)
		}
	}
	return c.pickNodes(q, count, start, end, flags, feats)
}

// deleteResv is delete_resv: refused while a running job uses it.
func (c *Controller) deleteResv(name string) error {
	i := slices.IndexFunc(c.resv.list, func(r *resvRec) bool { return r.Name == name })
	if i < 0 {
		return resvErr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	if c.resvHasJobs(name) {
		return resvErr(slurmerr.ESLURM_RESERVATION_BUSY)
	}
	c.resv.list = slices.Delete(c.resv.list, i, i+1)
	c.resvChanged(c.now().Unix())
	return nil
}

// resvChanged records a change: info replies change, node flags follow,
// the state file is due. Called under the write lock.
func (c *Controller) resvChanged(now int64) {
	c.resv.lastUpdate = now
	c.resv.seq++
	c.setResvNodeFlags(now)
}
