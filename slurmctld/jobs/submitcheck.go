package jobs

import (
	"errors"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/hostlist"

	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Submission checks of 22.05's job_mgr.c that decide whether a request is
// refused, queued or tried at once: partition availability and alternates
// (_get_job_parts, _alt_part_test), access and limits (_part_access_check,
// _valid_job_part), and the test that the job could ever run in one of
// its partitions (job_limits_check plus the configuration part of
// select_nodes, as _select_nodes_parts runs them at submission).
//
// goslurm has no accounting database, so a job's association account is
// never known: as in slurmctld with AccountingStorageType=none, a
// partition with AllowAccounts takes no job (refused when limits are
// enforced, queued with a reason otherwise) and DenyAccounts refuses only
// through the job's own --account when limits are enforced.

// RejectError is a refusal that carries, besides Slurm's code, the text
// slurmctld sends with it (RESPONSE_SLURM_RC_MSG), which sbatch and srun
// print before the error line.
type RejectError struct {
	Code int
	Msg  string
}

func (e *RejectError) Error() string {
	if e.Msg == "" {
		return slurmerr.Message(e.Code)
	}
	return e.Msg + ": " + slurmerr.Message(e.Code)
}

// Unwrap gives the Slurm code to slurmerr.Code and errors.Is.
func (e *RejectError) Unwrap() error { return slurmerr.Error{Code: e.Code} }

// UserMessage is the text to send with a refused submission (empty for
// none): the controller answers RESPONSE_SLURM_RC_MSG when it is set.
func UserMessage(err error) string {
	var r *RejectError
	if errors.As(err, &r) {
		return r.Msg
	}
	return ""
}

// partSubmits: UP and DOWN partitions take new jobs (PARTITION_SUBMIT).
func partSubmits(p *sched.Partition) bool {
	return p.State == sched.PartUp || p.State == sched.PartDown
}

// partSchedules: UP and DRAIN partitions start jobs (PARTITION_SCHED);
// only those have their size and time limits checked.
func partSchedules(p *sched.Partition) bool {
	return p.State == sched.PartUp || p.State == sched.PartDrain
}

// altPart is _alt_part_test: p itself when it takes jobs, else the first
// partition of its Alternate chain that does.
func altPart(cl *Cluster, p *sched.Partition) (*sched.Partition, int) {
	if partSubmits(p) {
		return p, 0
	}
	alt := p.Alternate
	// slurmctld follows a chain that loops without coming back to p
	// forever; give up after visiting every partition instead.
	for n := 0; alt != "" && n <= len(cl.Partitions); n++ {
		a := cl.partition(alt)
		if a == nil {
			return nil, slurmerr.ESLURM_INVALID_PARTITION_NAME
		}
		if a == p {
			return nil, slurmerr.ESLURM_PARTITION_NOT_AVAIL
		}
		if partSubmits(a) {
			return a, 0
		}
		alt = a.Alternate
	}
	return nil, slurmerr.ESLURM_PARTITION_NOT_AVAIL
}

// submitParts replaces partitions that take no jobs by their alternates
// (dropping those without one when several were asked for); changed
// reports whether the list differs from parts.
func submitParts(cl *Cluster, parts []*sched.Partition) (out []*sched.Partition, changed bool, code int) {
	if len(parts) == 1 {
		p, rc := altPart(cl, parts[0])
		if rc != 0 {
			return nil, false, rc
		}
		return []*sched.Partition{p}, p != parts[0], 0
	}
	fail := 0
	for _, p := range parts {
		a, rc := altPart(cl, p)
		if rc != 0 {
			fail, changed = rc, true
			continue
		}
		changed = changed || a != p
		out = append(out, a)
	}
	if len(out) == 0 {
		if fail == 0 {
			fail = slurmerr.ESLURM_PARTITION_NOT_AVAIL
		}
		return nil, false, fail
	}
	return out, changed, 0
}

// accessReq is what _part_access_check looks at.
type accessReq struct {
	userID    uint32
	minCPUs   uint32 // NoVal: not checked
	minNodes  uint32 // NoVal: not checked
	maxNodes  uint32 // NoVal: not checked
	timeLimit uint32 // NoVal: not checked
	reqIdx    []int
	acct      string // "" is an account not known
	allocNode string
}

// partAccess is partAccessCheck for a job already in the table (an
// update moving it to p). AllocNodes is checked against the host the job
// was submitted from (slurmctld takes the updating host, normally the
// same).
func (m *Manager) partAccess(p *sched.Partition, j *Job, reqIdx []int, submitUID uint32, groups []uint32) int {
	a := accessReq{userID: j.UserID, minCPUs: NoVal, minNodes: j.MinNodes, maxNodes: j.MaxNodes,
		timeLimit: j.TimeLimit, reqIdx: reqIdx, acct: j.Account, allocNode: j.AllocNode}
	if a.maxNodes == 0 {
		a.maxNodes = NoVal
	}
	return m.partAccessCheck(nil, p, a, submitUID, groups, j.GroupID)
}

// partAccessCheck is _part_access_check: 0 or the Slurm code refusing
// p. cl (for the partition's CPU count) may be nil: no CPU check.
func (m *Manager) partAccessCheck(cl *Cluster, p *sched.Partition, a accessReq, submitUID uint32, groups []uint32, jobGID uint32) int {
	if p.RootOnly && !m.privileged(submitUID) {
		return slurmerr.ESLURM_ACCESS_DENIED
	}
	if a.userID == 0 && p.DisableRootJobs {
		return slurmerr.ESLURM_USER_ID_MISSING
	}
	if (len(p.AllowGIDs) > 0 || len(p.AllowGroups) > 0) && !m.inGroups(p, a.userID, jobGID, groups) {
		return slurmerr.ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP
	}
	if !allocNodeAllowed(p, a.allocNode) {
		return slurmerr.ESLURM_ACCESS_DENIED
	}
	sch := partSchedules(p)
	total := uint32(len(p.Nodes))
	if sch && a.minCPUs != NoVal && cl != nil {
		var cpus uint32
		for _, i := range p.Nodes {
			cpus += uint32(cl.Nodes[i].CPUs)
		}
		// The product wraps as slurmctld's 32-bit one does.
		if a.minCPUs > cpus || a.minCPUs > p.MaxCPUsPerNode*total {
			return slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS
		}
	}
	if sch && a.minNodes != NoVal && a.minNodes > total {
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	if len(a.reqIdx) > 0 && !subset(a.reqIdx, p.Nodes) {
		return slurmerr.ESLURM_REQUESTED_NODES_NOT_IN_PARTITION
	}
	if sch && a.minNodes != NoVal && a.minNodes < p.MinNodes {
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	if sch && a.maxNodes != NoVal && a.maxNodes > p.MaxNodes {
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	if sch && a.timeLimit != NoVal && a.timeLimit > p.MaxTime {
		return slurmerr.ESLURM_INVALID_TIME_LIMIT
	}
	if m.cfg.EnforcePartLimits != EnforceNo {
		if _, rc := acctPolicy(p, a.acct); rc != 0 {
			return rc
		}
	}
	return 0
}

// acctPolicy is part_policy_valid_acct: the reason text and code when
// p's account lists refuse acct ("" = not known).
func acctPolicy(p *sched.Partition, acct string) (string, int) {
	allow := strings.Join(p.AllowAccounts, ",")
	switch {
	case len(p.AllowAccounts) > 0 && acct == "":
		return "Job's account not known, so it can't use this partition (" + p.Name + " allows " + allow + ")",
			slurmerr.ESLURM_INVALID_ACCOUNT
	case len(p.AllowAccounts) > 0 && !contains(p.AllowAccounts, acct):
		return "Job's account not permitted to use this partition (" + p.Name + " allows " + allow + " not " + acct + ")",
			slurmerr.ESLURM_INVALID_ACCOUNT
	case len(p.AllowAccounts) == 0 && acct != "" && contains(p.DenyAccounts, acct):
		return "Job's account not permitted to use this partition (" + p.Name + " denies " +
				strings.Join(p.DenyAccounts, ",") + " including " + acct + ")",
			slurmerr.ESLURM_INVALID_ACCOUNT
	}
	return "", 0
}

// fatalAccess are the codes that refuse a partition whatever
// EnforcePartLimits says.
func fatalAccess(rc int) bool {
	return rc == slurmerr.ESLURM_ACCESS_DENIED || rc == slurmerr.ESLURM_USER_ID_MISSING ||
		rc == slurmerr.ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP
}

// validJobPart is _valid_job_part: access and limits of the job's
// partitions per EnforcePartLimits, then the node count and time limit
// defaults and the time checks. It sets j.MinNodes and j.TimeLimit.
func (m *Manager) validJobPart(cl *Cluster, j *Job, parts []*sched.Partition, multi bool, reqIdx []int,
	submitUID uint32, groups []uint32, zeroNodesOK bool, now int64) int {
	enforce := m.cfg.EnforcePartLimits
	a := accessReq{userID: j.UserID, minCPUs: j.MinCPUs, minNodes: j.MinNodes, maxNodes: j.MaxNodes,
		timeLimit: j.TimeLimit, reqIdx: reqIdx, allocNode: j.AllocNode}
	if a.maxNodes == 0 {
		a.maxNodes = NoVal
	}
	minOrig, maxOrig, maxTime := uint32(Infinite), uint32(1), uint32(0)
	if multi {
		fail, anyOK := 0, false
		for _, p := range parts {
			rc := m.partAccessCheck(cl, p, a, submitUID, groups, j.GroupID)
			if rc != 0 && (fatalAccess(rc) || enforce == EnforceAll) {
				fail = rc
				break
			} else if rc != 0 {
				fail = rc
			} else {
				anyOK = true
			}
			if anyOK && enforce == EnforceAny {
				fail = 0
			}
			minOrig, maxOrig, maxTime = min(minOrig, p.MinNodes), max(maxOrig, p.MaxNodes), max(maxTime, p.MaxTime)
		}
		if enforce != EnforceNo && fail != 0 {
			switch {
			case enforce == EnforceAll, enforce == EnforceAny && !anyOK:
				return fail
			default:
				return slurmerr.ESLURM_PARTITION_NOT_AVAIL
			}
		}
	} else {
		p := parts[0]
		minOrig, maxOrig, maxTime = p.MinNodes, p.MaxNodes, p.MaxTime
		rc := m.partAccessCheck(cl, p, a, submitUID, groups, j.GroupID)
		if rc != 0 && (fatalAccess(rc) || enforce != EnforceNo) {
			return rc
		}
	}

	switch {
	case j.MinNodes == NoVal:
		j.MinNodes = max(minOrig, 1)
	case j.MinNodes > maxOrig && enforce != EnforceNo:
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	case j.MinNodes < minOrig && (j.MaxNodes == NoVal || j.MaxNodes >= minOrig):
		j.MinNodes = minOrig
	}
	if j.MaxNodes != NoVal && enforce != EnforceNo && j.MaxNodes < minOrig {
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	if j.MinNodes == 0 && !zeroNodesOK {
		return slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	p := parts[0]
	if j.TimeLimit == NoVal && p.DefaultTime == 0 {
		return slurmerr.ESLURM_INVALID_TIME_LIMIT
	}
	if j.TimeLimit == NoVal && p.DefaultTime != NoVal {
		j.TimeLimit = p.DefaultTime
	}
	if j.TimeMin != NoVal && j.TimeMin > maxTime {
		return slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT
	}
	if j.TimeLimit != NoVal && j.TimeLimit > maxTime && j.TimeMin == NoVal && enforce != EnforceNo {
		return slurmerr.ESLURM_INVALID_TIME_LIMIT
	}
	if j.TimeMin != NoVal && j.TimeMin > j.TimeLimit {
		return slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT
	}
	if j.Deadline != 0 && j.Deadline != int64(NoVal) {
		switch {
		case j.Deadline < now:
			return slurmerr.ESLURM_INVALID_TIME_LIMIT
		case j.TimeMin != 0 && j.TimeMin != NoVal && j.Deadline < now+int64(j.TimeMin)*60:
			return slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT
		case j.TimeMin == 0 && j.TimeLimit != 0 && j.TimeLimit != NoVal && j.Deadline < now+int64(j.TimeLimit)*60:
			return slurmerr.ESLURM_INVALID_TIME_LIMIT
		}
	}
	return 0
}

// allocNodeAllowed is validate_alloc_node: host must be in p's
// AllocNodes when it has any.
func allocNodeAllowed(p *sched.Partition, host string) bool {
	if len(p.AllocNodes) == 0 {
		return true
	}
	if host == "" {
		return false
	}
	for _, expr := range p.AllocNodes {
		names, err := hostlist.Expand(expr)
		if err != nil {
			continue
		}
		if slices.Contains(names, host) {
			return true
		}
	}
	return false
}

func subset(idx, of []int) bool {
	in := make(map[int]bool, len(of))
	for _, i := range of {
		in[i] = true
	}
	for _, i := range idx {
		if !in[i] {
			return false
		}
	}
	return true
}

// inGroups: root and SlurmUser pass every AllowGroups (validate_group);
// otherwise the user must be a member of a listed group (AllowUIDs) or
// have one as primary group; without a member list, the user's primary
// or a supplementary group must be listed.
func (m *Manager) inGroups(p *sched.Partition, uid, gid uint32, groups []uint32) bool {
	if m.privileged(uid) {
		return true
	}
	if p.AllowUIDs != nil {
		return slices.Contains(p.AllowUIDs, uid) || slices.Contains(p.AllowGIDs, gid)
	}
	for _, g := range p.AllowGIDs {
		if g == gid {
			return true
		}
		for _, h := range groups {
			if g == h {
				return true
			}
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
