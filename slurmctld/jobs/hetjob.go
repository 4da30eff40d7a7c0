package jobs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Heterogeneous jobs: one job record per component, with consecutive ids
// when nothing else submits meanwhile. The first record is the leader
// (HetJobOffset 0, HetJobID its own id) and holds the list of every
// component (HetComps); every component carries the leader's id, its
// offset and the id set. They start together (backfill only), the batch
// script runs on the leader's first node, and the leader's end ends them
// all.

// hetComponents returns the components of the het job whose leader is
// leader, in offset order (nil when leader is none).
func (m *Manager) hetComponents(leader *Job) []*Job {
	if leader == nil || len(leader.HetComps) == 0 {
		return nil
	}
	out := make([]*Job, 0, len(leader.HetComps))
	for _, id := range leader.HetComps {
		if c := m.jobs[id]; c != nil && c.HetJobID == leader.ID {
			out = append(out, c)
		}
	}
	return out
}

// hetLeader returns the leader of j's het job (nil: not a het job, or the
// leader is gone).
func (m *Manager) hetLeader(j *Job) *Job {
	if j.HetJobID == 0 {
		return nil
	}
	l := m.jobs[j.HetJobID]
	if l == nil || len(l.HetComps) == 0 {
		return nil
	}
	return l
}

// hetIDSet is _create_het_job_id_set: the ids as a ranged list without
// brackets ("12-13", "12,14").
func hetIDSet(ids []uint32) string {
	var parts []string
	for i := 0; i < len(ids); {
		k := i
		for k+1 < len(ids) && ids[k+1] == ids[k]+1 {
			k++
		}
		if k > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[k]))
		} else {
			parts = append(parts, strconv.FormatUint(uint64(ids[i]), 10))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}

// excludeHetNodes is _exclude_het_job_nodes: nodes one component requires
// are excluded from every other component, so two components never wait
// for the same node.
func excludeHetNodes(descs []msg.JobDesc) {
	for i := range descs {
		req := strOf(descs[i].ReqNodes)
		if req == "" {
			continue
		}
		for k := range descs {
			if k == i || strOf(descs[k].ReqNodes) == req {
				continue
			}
			if ex := strOf(descs[k].ExcNodes); ex != "" {
				descs[k].ExcNodes = msg.Str(ex + "," + req)
			} else {
				descs[k].ExcNodes = msg.Str(req)
			}
		}
	}
}

// hetComponentScript is bb_g_build_het_job_script without a burst buffer
// plugin: the script's first line, then only the comment lines of the
// offset's component (the "#SBATCH hetjob" lines separate them), then
// the rest of the script for the leader alone.
func hetComponentScript(script string, offset uint32) string {
	lines := strings.Split(script, "\n")
	if len(lines) == 0 {
		return script
	}
	var b strings.Builder
	b.WriteString(lines[0] + "\n")
	cur := uint32(0)
	body := false
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		if !body && !strings.HasPrefix(l, "#") {
			body = true
		}
		if body {
			if offset == 0 {
				b.WriteString(l + "\n")
			}
			continue
		}
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "#SBATCH" && (f[1] == "hetjob" || f[1] == "packjob") {
			cur++
			continue
		}
		if cur == offset {
			b.WriteString(l + "\n")
		}
	}
	if offset != 0 {
		b.WriteString("exit 0\n")
	}
	return b.String()
}

// createHet validates and registers every component of a het job
// submission (kind kindBatch: REQUEST_SUBMIT_BATCH_HET_JOB, kindAlloc:
// REQUEST_HET_JOB_ALLOCATION). A component that is refused cancels the
// ones already made (_het_job_cancel: their records stay, CANCELLED), and
// the submission fails with its error.
func (m *Manager) createHet(descs []msg.JobDesc, c Caller, cl *Cluster, k kind, now int64) ([]*Job, error) {
	if len(descs) == 0 {
		return nil, serr(slurmerr.SLURM_ERROR)
	}
	if !cl.Config.Backfill {
		// Het jobs start from backfill only.
		return nil, serr(slurmerr.ESLURM_NOT_SUPPORTED)
	}
	descs = append([]msg.JobDesc(nil), descs...)
	excludeHetNodes(descs)
	if k == kindBatch {
		// validate_job_create_req runs on every component before any
		// record exists: the ids, and an array needs a script (sbatch
		// gives the later components none, and passes the leader's
		// options on to them).
		for i := range descs {
			if _, _, err := m.identity(&descs[i], c); err != nil {
				return nil, err
			}
			if strOf(descs[i].ArrayInx) != "" && strOf(descs[i].Script) == "" {
				return nil, serr(slurmerr.ESLURM_INVALID_ARRAY)
			}
		}
	}
	var made []*Job
	var script string
	fail := func(err error) ([]*Job, error) {
		for _, j := range made {
			m.hetCancel(j, now)
		}
		if len(made) > 0 {
			m.setHetIDs(made)
		}
		return nil, err
	}
	for i := range descs {
		d := &descs[i]
		if k == kindAlloc {
			if strOf(d.ArrayInx) != "" {
				return fail(serr(slurmerr.ESLURM_INVALID_ARRAY))
			}
			if d.Immediate != 0 {
				return fail(serr(slurmerr.ESLURM_CAN_NOT_START_IMMEDIATELY))
			}
		}
		ck := k
		if k == kindBatch {
			if i == 0 {
				script = strOf(d.Script)
			} else {
				// Components are allocations with the leader's script
				// split for them (job_allocate with allocate=1, then
				// batch_flag set).
				ck = kindAlloc
			}
		}
		if i > 0 {
			// Mail goes to the leader's user only.
			d.MailType, d.MailUser = 0, msg.NullString{}
		}
		j, err := m.build(d, c, cl, ck, now)
		if err != nil {
			return fail(err)
		}
		if k == kindBatch && i > 0 {
			j.Batch = true
			p := &Payload{Script: hetComponentScript(script, uint32(i))}
			for _, e := range d.Environment {
				p.Env = append(p.Env, e.Value)
			}
			j.Payload = p
		}
		if err := m.register(j, now); err != nil {
			return fail(err)
		}
		if j.Reason == ReasonPriority {
			// job_allocate tests no het component for a start, so none
			// has a reason until backfill looks at it.
			j.Reason = ReasonNone
		}
		made = append(made, j)
	}
	m.setHetIDs(made)
	return made, nil
}

// setHetIDs ties the records of one het job together.
func (m *Manager) setHetIDs(made []*Job) {
	ids := make([]uint32, len(made))
	for i, j := range made {
		ids[i] = j.ID
	}
	set := hetIDSet(ids)
	for i, j := range made {
		j.HetJobID, j.HetJobOffset, j.HetJobIDSet = made[0].ID, uint32(i), set
	}
	made[0].HetComps = ids
}

// hetCancel is _het_job_cancel: a component of a refused submission ends
// CANCELLED with exit code 1.
func (m *Manager) hetCancel(j *Job, now int64) {
	j.setBase(msg.JobCancelled)
	j.StartTime, j.EndTime, j.ExitCode = now, now, 1
	m.touch(j, now)
	m.ended(j, false, false, now)
}

// SubmitHet handles REQUEST_SUBMIT_BATCH_HET_JOB: the reply names the
// leader. The components start at a later backfill pass.
func (m *Manager) SubmitHet(descs []msg.JobDesc, c Caller, cl *Cluster, now int64) (*msg.SubmitResponse, Outcome, error) {
	made, out, err := m.createHetJournaled(descs, c, cl, kindBatch, now)
	if err != nil {
		return nil, out, err
	}
	return &msg.SubmitResponse{JobID: made[0].ID, StepID: msg.StepIDBatch}, out, nil
}

// AllocateHet handles REQUEST_HET_JOB_ALLOCATION (salloc and srun with
// ":"): the reply lists every component's allocation as it stands (none
// yet: the grant is pushed to the leader's alloc_resp_port when backfill
// starts them all, as RESPONSE_HET_JOB_ALLOCATION).
func (m *Manager) AllocateHet(descs []msg.JobDesc, c Caller, cl *Cluster, now int64) (*msg.HetAllocation, Outcome, error) {
	made, out, err := m.createHetJournaled(descs, c, cl, kindAlloc, now)
	if err != nil {
		return nil, out, err
	}
	resp := &msg.HetAllocation{}
	for _, j := range made {
		resp.Jobs = append(resp.Jobs, *m.allocation(j))
	}
	return resp, out, nil
}

// createHetJournaled is createHet with its records journaled, refused or
// not (a refusal may leave records behind: the leader cancelled, a
// component FAILED); a journal failure outranks the refusal.
func (m *Manager) createHetJournaled(descs []msg.JobDesc, c Caller, cl *Cluster, k kind, now int64) ([]*Job, Outcome, error) {
	made, err := m.createHet(descs, c, cl, k, now)
	out, ferr := m.finish(nil)
	if ferr != nil {
		return nil, out, ferr
	}
	if err != nil {
		return nil, out, err
	}
	return made, out, nil
}

// hetFilterStarts returns plan's starts less those of het components
// whose het job cannot start whole in this plan: every pending component
// must have a start (_het_job_start_test). The others wait for Resources
// where backfill planned them (they join plan.Pending).
func (m *Manager) hetFilterStarts(plan *sched.Plan, ids map[uint32]entry, now int64) []sched.Start {
	if !plan.Backfill {
		// The main pass stops at het jobs without a word: their reason
		// stays as backfill left it.
		for i, p := range plan.Pending {
			if e, ok := ids[p.JobID]; ok && e.job.HetJobID != 0 {
				plan.Pending[i].Reason, plan.Pending[i].Skipped = sched.Reason(e.job.Reason), false
			}
		}
	}
	starts := plan.Starts
	planned := map[uint32]bool{}
	for _, st := range starts {
		if e, ok := ids[st.JobID]; ok && e.job.HetJobID != 0 {
			planned[e.job.ID] = true
		}
	}
	if len(planned) == 0 {
		return starts
	}
	whole := map[uint32]bool{}
	kept := make([]sched.Start, 0, len(starts))
	for _, st := range starts {
		e, ok := ids[st.JobID]
		if !ok || e.job.HetJobID == 0 {
			kept = append(kept, st)
			continue
		}
		lid := e.job.HetJobID
		ok, seen := whole[lid]
		if !seen {
			ok = m.hetAllPlanned(lid, planned)
			whole[lid] = ok
		}
		if ok {
			kept = append(kept, st)
			continue
		}
		p := sched.Pending{JobID: st.JobID, Reason: sched.ReasonResources, StartTime: now, Partition: st.Partition}
		for _, na := range st.Alloc.Nodes {
			p.SchedNodes = append(p.SchedNodes, na.Node)
		}
		plan.Pending = append(plan.Pending, p)
	}
	return kept
}

func (m *Manager) hetAllPlanned(leaderID uint32, planned map[uint32]bool) bool {
	l := m.jobs[leaderID]
	comps := m.hetComponents(l)
	if len(comps) != len(l.HetComps) {
		return false
	}
	for _, c := range comps {
		if c.Pending() && !planned[c.ID] {
			return false
		}
		if !c.Pending() && !c.Running() {
			return false
		}
	}
	return true
}

// hetStarted is what follows the start of het component j: nothing until
// every component runs, then the batch launch of the leader (with the het
// environment, _set_het_job_env) or the grant of an interactive
// allocation to the leader's srun/salloc (srun_allocate).
func (m *Manager) hetStarted(j *Job, cl *Cluster, now int64) []Action {
	l := m.hetLeader(j)
	if l == nil {
		return nil
	}
	comps := m.hetComponents(l)
	for _, c := range comps {
		// _het_job_ready: every component runs, none is configuring
		// (PrologSlurmctld): the last one to be ready launches.
		if !c.Running() || c.State&msg.JobConfiguring != 0 {
			return nil
		}
	}
	if l.Batch {
		b := m.batchLaunch(l, cl, now)
		b.HetJobID = l.ID
		b.Environment = nsList(hetEnv(nsStrings(b.Environment), comps))
		return []Action{LaunchBatch{JobID: l.ID, Node: l.BatchHost, Msg: b}}
	}
	if l.AllocRespPort == 0 {
		return nil
	}
	resp := &msg.HetAllocation{}
	for _, c := range comps {
		resp.Jobs = append(resp.Jobs, *m.allocation(c))
	}
	return []Action{SrunMessage{JobID: l.ID, Host: l.RespHost, Port: l.AllocRespPort, UID: l.UserID,
		ProtocolVersion: l.ProtocolVersion, MsgType: msgtype.RESPONSE_HET_JOB_ALLOCATION, Msg: resp}}
}

func nsStrings(v []msg.NullString) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = s.Value
	}
	return out
}

// completeHetAllocation is job_complete for the leader of an interactive
// het job (salloc or srun exiting): every component ends with the shell's
// status; the answer is the last error.
func (m *Manager) completeHetAllocation(comps []*Job, rc uint32, cl *Cluster, now int64) (Outcome, error) {
	var actions []Action
	var last error
	for _, j := range comps {
		switch {
		case j.Finished():
			last = serr(slurmerr.ESLURM_ALREADY_DONE)
		case j.Pending():
			m.cancelPending(j, now, "", nil)
		default:
			base, reason := finalState(rc, false)
			j.ExitCode = rc
			m.endJob(j, base, reason, now)
			actions = append(actions, m.terminate(j, cl, msgtype.REQUEST_TERMINATE_JOB, now)...)
		}
	}
	out, err := m.finish(actions)
	if err != nil {
		return out, err
	}
	return out, last
}

// HetAllocationInfo answers REQUEST_HET_JOB_ALLOC_INFO (srun inside an
// allocation): the allocation of every component of a het job named by
// its leader, of the job alone otherwise; a component other than the
// leader answers ESLURM_NOT_HET_JOB_LEADER.
func (m *Manager) HetAllocationInfo(id uint32, c Caller) (*msg.HetAllocation, error) {
	a, err := m.AllocationInfo(id, c)
	if err != nil {
		return nil, err
	}
	j := m.jobs[id]
	comps := m.hetComponents(j)
	if j.HetJobID != 0 && comps == nil {
		return nil, serr(slurmerr.ESLURM_NOT_HET_JOB_LEADER)
	}
	if comps == nil {
		return &msg.HetAllocation{Jobs: []msg.Allocation{*a}}, nil
	}
	out := &msg.HetAllocation{}
	for _, comp := range comps {
		out.Jobs = append(out.Jobs, *m.allocation(comp))
	}
	return out, nil
}

// hetNodes is the union of the nodes of a het job's components, in node
// table order (bitmap2node_name), for an sbcast credential of the whole
// het job; each component must be running and the caller's.
func (m *Manager) hetNodes(comps []*Job, c Caller) (string, error) {
	byIdx := map[int]string{}
	for _, comp := range comps {
		if _, err := m.AllocationInfo(comp.ID, c); err != nil {
			return "", err
		}
		for k, n := range comp.Nodes {
			byIdx[comp.NodeIdx[k]] = n
		}
	}
	idx := make([]int, 0, len(byIdx))
	for i := range byIdx {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	names := make([]string, len(idx))
	for k, i := range idx {
		names[k] = byIdx[i]
	}
	return hostlist.Compress(names), nil
}

// hetOld is _purge_complete_het_job's test: the records of a het job
// leave the table together, once every one of them is old (a record whose
// leader is gone already goes on its own).
func (m *Manager) hetOld(j *Job, now int64) bool {
	l := m.hetLeader(j)
	if l == nil {
		return true
	}
	for _, c := range m.hetComponents(l) {
		if !m.old(c, now) {
			return false
		}
	}
	return true
}

// hetOnNode is _het_job_on_node: the job, or for a het job any of its
// components, has node (a node failure ends every component).
func (m *Manager) hetOnNode(j *Job, node string) bool {
	if indexOf(j.Nodes, node) >= 0 {
		return true
	}
	for _, c := range m.hetComponents(m.hetLeader(j)) {
		if c.Running() && indexOf(c.Nodes, node) >= 0 {
			return true
		}
	}
	return false
}

// hetSuspend is _job_suspend for a het job: only the leader may be named
// (ESLURM_NOT_WHOLE_HET_JOB otherwise), and every component is suspended
// or resumed; the answer is the last error.
func (m *Manager) hetSuspend(j *Job, op uint16, cl *Cluster, now int64, actions *[]Action) error {
	comps := m.hetComponents(j)
	if comps == nil {
		return serr(slurmerr.ESLURM_NOT_WHOLE_HET_JOB)
	}
	var last error
	for _, c := range comps {
		if err := m.suspendOne(c, op, cl, now, actions); err != nil {
			last = err
		}
	}
	return last
}
