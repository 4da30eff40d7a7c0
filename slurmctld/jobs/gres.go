package jobs

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// GRES by device index (slurmctld/gres): a job's --gres (tres_per_node)
// is counted by the scheduler; when the job starts it gets the lowest
// free indices of each node's devices (Job.NodeGres), which its
// credentials carry (job_gres_list) so that slurmd exports
// CUDA_VISIBLE_DEVICES and friends and constrains the devices. A step
// takes a subset of its job's (Step.Gres, step_gres_list). What nodes
// hold is derived from the job table, so a restart rebuilds it.

// jobGresReqs is the job's per-node GRES request; a request that does not
// parse counts as none (submission checks it).
func jobGresReqs(tresPerNode string) []gres.Req {
	if tresPerNode == "" {
		return nil
	}
	reqs, err := gres.ParseTresPerNode(tresPerNode)
	if err != nil {
		return nil
	}
	return reqs
}

// jobGPUs is the GRES the job counts over all its nodes (tres_per_job,
// or gres_per_task x tasks, which _test_gres_cnt makes its gres_per_job):
// the name, count and type. cons_tres counts every such GRES, whatever
// its name; the scheduler counts one, GPUs (--gpus, --gpus-per-task)
// when the job has them, else the first other one (a site GRES through
// scontrol update's TresPerJob or TresPerTask).
func jobGPUs(j *Job) (name string, count uint64, typ string) {
	var reqs []gres.Req
	for _, r := range jobGresReqs(j.TresPerJob) {
		if r.Count > 0 {
			reqs = append(reqs, r)
		}
	}
	for _, r := range perTask(j.TresPerTask, jobTasks(j), nil) {
		if !slices.ContainsFunc(reqs, func(o gres.Req) bool { return o.Name == r.Name }) {
			reqs = append(reqs, r.Req)
		}
	}
	if len(reqs) == 0 {
		return "", 0, ""
	}
	r := reqs[0]
	if k := slices.IndexFunc(reqs, func(o gres.Req) bool { return o.Name == "gpu" }); k >= 0 {
		r = reqs[k]
	}
	return r.Name, r.Count, r.Type
}

// jobTasks is the job's task count for per-task GRES: -n, else one a
// node (what sbatch and srun imply without -n).
func jobTasks(j *Job) uint32 {
	if j.NumTasks != 0 && j.NumTasks != NoVal {
		return j.NumTasks
	}
	if j.MinNodes != 0 && j.MinNodes != NoVal {
		return j.MinNodes
	}
	return 1
}

// perTask are the requests of a tres_per_task string as counts over the
// job or step (tasks of them each), leaving out names already asked for
// over it (have): gres_per_job wins over gres_per_task x tasks, which
// must agree with it.
func perTask(tres string, tasks uint32, have []stepReq) []stepReq {
	var out []stepReq
	for _, r := range jobGresReqs(tres) {
		if r.Count == 0 || slices.ContainsFunc(have, func(h stepReq) bool { return h.perStep && h.Name == r.Name }) {
			continue
		}
		// Saturate rather than wrap (real's product wraps, but its
		// per-task count alone is then more than any node holds, so
		// such a job never runs there either).
		if hi, lo := bits.Mul64(r.Count, uint64(tasks)); hi != 0 {
			r.Count = math.MaxUint64
		} else {
			r.Count = lo
		}
		out = append(out, stepReq{r, true})
	}
	return out
}

// perNodeReqs are the job's GRES per node: --gres and --gpus-per-node,
// and --gpus-per-socket times --sockets-per-node for a name not asked
// for per node (_test_gres_cnt checks the two agree).
func perNodeReqs(j *Job) []gres.Req {
	out := jobGresReqs(j.TresPerNode)
	if j.SocketsPerNode == 0 || j.SocketsPerNode == NoVal16 {
		return out
	}
	for _, r := range jobGresReqs(j.TresPerSocket) {
		if !slices.ContainsFunc(out, func(o gres.Req) bool { return o.Name == r.Name }) {
			r.Count *= uint64(j.SocketsPerNode)
			out = append(out, r)
		}
	}
	return out
}

// gresRec is one record of a job's GRES request list as
// gres_job_state_validate builds it: the counts asked for of one name
// and type (cpus_per_gres, gres_per_job, _node, _socket, _task).
type gresRec struct {
	name, typ                                 string
	cpus, perJob, perNode, perSocket, perTask uint64
}

// jobGresRecs are the job's GRES request records, in the order real's
// list gets them: by first mention in cpus_per_tres, tres_per_job,
// tres_per_node, tres_per_socket, tres_per_task; a name with another
// type is a record of its own.
func jobGresRecs(j *Job) []*gresRec {
	var out []*gresRec
	for _, src := range []struct {
		tres string
		set  func(*gresRec, uint64)
	}{
		{j.CPUsPerTres, func(g *gresRec, n uint64) { g.cpus = n }},
		{j.TresPerJob, func(g *gresRec, n uint64) { g.perJob = n }},
		{j.TresPerNode, func(g *gresRec, n uint64) { g.perNode = n }},
		{j.TresPerSocket, func(g *gresRec, n uint64) { g.perSocket = n }},
		{j.TresPerTask, func(g *gresRec, n uint64) { g.perTask = n }},
	} {
		reqs, _ := gres.ParseJobRequest(src.tres)
		for _, r := range reqs {
			k := slices.IndexFunc(out, func(g *gresRec) bool { return g.name == r.Name && g.typ == r.Type })
			if k < 0 {
				k = len(out)
				out = append(out, &gresRec{name: r.Name, typ: r.Type})
			}
			src.set(out[k], r.Count)
		}
	}
	return out
}

// gresNamesValid is gres_job_state_validate's parsing of the job's GRES
// requests (_get_next_job_gres): each must read, and each item with a
// count name a GRES of GresTypes.
func (m *Manager) gresNamesValid(j *Job) bool {
	for _, tres := range []string{j.CPUsPerTres, j.TresPerJob, j.TresPerNode, j.TresPerSocket, j.TresPerTask, j.MemPerTres} {
		if tres == "" {
			continue
		}
		reqs, err := gres.ParseJobRequest(tres)
		if err != nil {
			return false
		}
		for _, r := range reqs {
			if m.cfg.GresTypes != nil && !slices.Contains(m.cfg.GresTypes, r.Name) {
				return false
			}
		}
	}
	return true
}

// memPerTresWithoutGPU is gres_job_state_validate's refusal of a
// mem_per_tres with no gpu asked for among the request's tres_per_job,
// _node, _socket and _task (in an update, the ones it gives only).
func memPerTresWithoutGPU(memPerTres string, tres ...string) bool {
	if mem, _ := gres.ParseJobRequest(memPerTres); len(mem) == 0 {
		return false
	}
	for _, s := range tres {
		reqs, _ := gres.ParseJobRequest(s)
		if slices.ContainsFunc(reqs, func(r gres.Req) bool { return r.Name == "gpu" }) {
			return false
		}
	}
	return true
}

// gresTypeMixed is gres_job_state_validate's last refusal
// (_merge_generic_data: ESLURM_INVALID_GRES_TYPE): a GRES asked for both
// with a type and without one, the one without a type giving a count
// (per job, node, socket or task) rather than only cpus or memory per
// GRES ("gpu:2,gpu:tesla:1").
func gresTypeMixed(j *Job) bool {
	typed := map[string]bool{}
	recs := jobGresRecs(j)
	mem, _ := gres.ParseJobRequest(j.MemPerTres)
	for _, r := range mem {
		typed[r.Name] = typed[r.Name] || r.Type != ""
	}
	for _, g := range recs {
		typed[g.name] = typed[g.name] || g.typ != ""
	}
	for _, g := range recs {
		if g.typ == "" && typed[g.name] && (g.perJob != 0 || g.perNode != 0 || g.perSocket != 0 || g.perTask != 0) {
			return true
		}
	}
	return false
}

// gresTestCounts is gres_job_state_validate's consistency part for a new
// job (_test_gres_cnt on each request record, whatever its GRES): it
// refuses counts that contradict each other (false: ESLURM_INVALID_GRES)
// and fills in what they imply and the job left unset: the task count
// (gres per job / gres per task), the node count (per job / per node),
// sockets per node, tasks per node and per socket, CPUs per task
// (cpus_per_gres x gres per task). A job asking per task, not per job,
// with no task count but a fixed node count gets a task count from it
// first.
func gresTestCounts(j *Job) bool {
	unset16 := func(v uint16) bool { return v == NoVal16 || v == 0 }
	// slurmctld's job has at least one node by then (_validate_job_desc).
	minNodes := j.MinNodes
	if minNodes == NoVal {
		minNodes = 1
	}
	if (j.TresPerTask != "" || j.NTasksPerTres != 0) && j.NumTasks == NoVal && minNodes == j.MaxNodes {
		switch {
		case j.NTasksPerTres != 0:
			j.NumTasks = minNodes * uint32(j.NTasksPerTres)
		case j.NTasksPerNode != NoVal16:
			j.NumTasks = minNodes * uint32(j.NTasksPerNode)
		case j.CPUsPerTask == NoVal16:
			j.NumTasks = minNodes
		}
	}
	for _, g := range jobGresRecs(j) {
		if !gresRecCounts(j, g, unset16) {
			return false
		}
	}
	return true
}

// gresRecCounts is _test_gres_cnt for one record.
func gresRecCounts(j *Job, g *gresRec, unset16 func(uint16) bool) bool {
	// Only NO_VAL is unset: an update passes the job's stored 0.
	tasksUnset := func() bool { return j.NumTasks == NoVal }
	switch {
	case g.perJob > 0 && (g.perNode > g.perJob || g.perTask > g.perJob || g.perSocket > g.perJob),
		g.perNode > 0 && (g.perTask > g.perNode || g.perSocket > g.perNode),
		g.perSocket > 0 && j.SocketsPerNode == NoVal16:
		return false
	}
	if g.perJob > 0 && g.perNode > 0 {
		if g.perJob%g.perNode != 0 {
			return false
		}
		n := g.perJob / g.perNode
		// An update passes a job's stored max of 0 (never given),
		// which refuses any node count here.
		if n > math.MaxUint32 || (j.MinNodes != NoVal && uint32(n) < j.MinNodes) || uint32(n) > j.MaxNodes {
			return false
		}
		j.MinNodes, j.MaxNodes = uint32(n), uint32(n)
	}
	if g.perNode > 0 && g.perSocket > 0 {
		if g.perNode%g.perSocket != 0 {
			return false
		}
		n := g.perNode / g.perSocket
		switch {
		case j.SocketsPerNode == NoVal16 && n < uint64(NoVal16):
			j.SocketsPerNode = uint16(n)
		case uint64(j.SocketsPerNode) != n:
			return false
		}
	}
	if j.NTasksPerTres != 0 && j.NTasksPerTres != NoVal16 && j.NumTasks != NoVal && j.NumTasks%uint32(j.NTasksPerTres) != 0 {
		return false
	}
	if g.perTask > 0 {
		switch {
		case g.perJob > 0:
			if g.perJob%g.perTask != 0 {
				return false
			}
			n := g.perJob / g.perTask
			if tasksUnset() && n <= math.MaxUint32 {
				j.NumTasks = uint32(n)
			} else if uint64(j.NumTasks) != n {
				return false
			}
		case tasksUnset():
			return false
		default:
			// With a task count the record's gres per job is tasks x
			// gres per task, which the node counts are checked
			// against below (wrapping as real's product does).
			g.perJob = uint64(j.NumTasks) * g.perTask
		}
	}
	perTaskOf := func(total uint64, field *uint16) bool {
		if total%g.perTask != 0 {
			return false
		}
		n := total / g.perTask
		switch {
		case (unset16(*field) || *field == infinite16) && n < uint64(NoVal16):
			*field = uint16(n)
		case uint64(*field) != n:
			return false
		}
		return true
	}
	if g.perNode > 0 && g.perTask > 0 && !perTaskOf(g.perNode, &j.NTasksPerNode) {
		return false
	}
	if g.perSocket > 0 && g.perTask > 0 && !perTaskOf(g.perSocket, &j.NTasksPerSocket) {
		return false
	}
	if g.cpus > 0 && g.perTask > 0 {
		n := g.cpus * g.perTask
		switch {
		case unset16(j.CPUsPerTask) && n < uint64(NoVal16):
			j.CPUsPerTask = uint16(n)
		case uint64(j.CPUsPerTask) != n:
			return false
		}
	}
	if g.perJob > 0 {
		if j.MinNodes != NoVal && g.perJob < uint64(j.MinNodes) {
			return false
		}
		if j.MaxNodes != NoVal && g.perJob < uint64(j.MaxNodes) {
			j.MaxNodes = uint32(g.perJob)
		}
	}
	return true
}

// schedGres is the job's GRES request as the scheduler counts it.
func schedGres(j *Job) []sched.GresReq {
	var out []sched.GresReq
	for _, r := range perNodeReqs(j) {
		if r.Count > 0 {
			out = append(out, sched.GresReq{Name: r.Name, Type: r.Type, Count: r.Count})
		}
	}
	return out
}

// heldGres is what j holds on its k-th node for the scheduler.
func heldGres(j *Job, k int) []sched.Gres {
	if k >= len(j.NodeGres) {
		return nil
	}
	var out []sched.Gres
	for _, a := range j.NodeGres[k] {
		out = append(out, sched.Gres{Name: a.Name, Type: a.Type, Count: a.Count})
	}
	return out
}

// gresLayouts is node ni's GRES layout: slurm.conf's Gres= with what its
// slurmd registered (Cluster.GresRecs); before it registered, a name has
// device indices when jobs hold some of them.
func (m *Manager) gresLayouts(cl *Cluster, ni int) []gres.Layout {
	if ni < 0 || ni >= len(cl.Nodes) || len(cl.Nodes[ni].Gres) == 0 {
		return nil
	}
	var conf []gres.ConfGres
	for _, g := range cl.Nodes[ni].Gres {
		conf = append(conf, gres.ConfGres{Name: g.Name, Type: g.Type, Count: g.Count})
	}
	var recs []gres.Record
	if ni < len(cl.GresRecs) {
		recs = cl.GresRecs[ni]
	}
	var bits map[string]bool
	if recs == nil {
		bits = map[string]bool{}
		for _, a := range m.gresOnNode(ni, nil) {
			if a.Bits {
				bits[a.Name] = true
			}
		}
	}
	return gres.NewLayouts(conf, recs, bits)
}

// gresOnNode is what the jobs holding resources hold of GRES on node ni,
// skip left out.
func (m *Manager) gresOnNode(ni int, skip *Job) []gres.Alloc {
	var out []gres.Alloc
	for _, j := range m.jobs {
		if j == skip || len(j.NodeGres) == 0 || !j.holdsResources() {
			continue
		}
		for k, i := range j.NodeIdx {
			if i == ni && k < len(j.NodeGres) {
				out = append(out, j.NodeGres[k]...)
			}
		}
	}
	return out
}

// gresHeldOn is gresOnNode for every node of nodes at once, by position
// in nodes: one scan of the job table instead of one a node (the job
// table keeps no per-node index).
func (m *Manager) gresHeldOn(nodes []int, skip *Job) [][]gres.Alloc {
	out := make([][]gres.Alloc, len(nodes))
	pos := make(map[int]int, len(nodes))
	for k, ni := range nodes {
		pos[ni] = k
	}
	for _, j := range m.jobs {
		if j == skip || len(j.NodeGres) == 0 || !j.holdsResources() {
			continue
		}
		for k, i := range j.NodeIdx {
			if p, ok := pos[i]; ok && k < len(j.NodeGres) {
				out[p] = append(out[p], j.NodeGres[k]...)
			}
		}
	}
	return out
}

// pickGres gives a starting job its GRES indices on each node of its
// allocation. A node whose devices cannot satisfy the request by index
// (the scheduler counted by slurm.conf, the devices say otherwise) keeps
// the scheduler's counts without indices.
func (m *Manager) pickGres(j *Job, cl *Cluster, a sched.Allocation) [][]gres.Alloc {
	if j.Shared == 0 {
		return m.wholeNodeGres(cl, a)
	}
	perNode := perNodeReqs(j)
	gpuName, gpus, gpuType := jobGPUs(j)
	if len(perNode) == 0 && gpus == 0 {
		return nil
	}
	out := make([][]gres.Alloc, len(a.Nodes))
	gpusLeft := gpus
	nodes := make([]int, len(a.Nodes))
	for k, na := range a.Nodes {
		nodes[k] = na.Node
	}
	heldOn := m.gresHeldOn(nodes, j)
	for k, na := range a.Nodes {
		ls := m.gresLayouts(cl, na.Node)
		held := heldOn[k]
		reqs := perNode
		if gpus > 0 {
			// --gpus: the node's share is what the scheduler gave it
			// beyond the per-node requests (it rounds up on every
			// node), keeping one for each node after and the total
			// at what the job asked for.
			var share uint64
			for _, g := range na.Gres {
				if g.Name == gpuName {
					share += g.Count
				}
			}
			for _, r := range perNode {
				if r.Name == gpuName {
					share -= min(share, r.Count)
				}
			}
			share = min(share, gpusLeft-min(gpusLeft, uint64(len(a.Nodes)-k-1)))
			gpusLeft -= share
			reqs = append(slices.Clone(perNode), gres.Req{Name: gpuName, Type: gpuType, Count: share})
		}
		var got []gres.Alloc
		ok := true
		for _, r := range reqs {
			l := gres.Find(ls, r.Name)
			if l == nil || r.Count == 0 {
				continue
			}
			used := make([]bool, len(l.DevType))
			for _, h := range append(held, got...) {
				for _, i := range h.Idx {
					if h.Name == r.Name && i < len(used) {
						used[i] = true
					}
				}
			}
			var p []gres.Alloc
			if bound := m.boundOn(cl, na.Node); len(na.GresBind) > 0 && len(bound) == len(na.GresBind) {
				// The scheduler chose the records near the job's
				// cores (sched's gresbind.go).
				p = gres.PickBound(l, used, r.Type, r.Count, bound, na.GresBind)
			}
			if p == nil {
				p = gres.Pick(l, used, r.Type, r.Count)
			}
			if p == nil {
				ok = false
				break
			}
			got = append(got, p...)
		}
		if !ok {
			got = nil
			for _, g := range na.Gres {
				got = append(got, gres.Alloc{Name: g.Name, Type: g.Type, Count: g.Count})
			}
		}
		out[k] = got
	}
	return out
}

// boundOn is node ni's GRES records bound to cores (gres.Bound), nil
// when it has none.
func (m *Manager) boundOn(cl *Cluster, ni int) []gres.BoundRec {
	if ni < 0 || ni >= len(cl.Nodes) || len(cl.Nodes[ni].GresBind) == 0 {
		return nil
	}
	return gres.Bound(m.gresLayouts(cl, ni))
}

// wholeNodeGres is what a job with whole nodes (--exclusive: whole_node)
// gets: every GRES of its nodes, asked for or not
// (gres_ctld_job_select_whole_node and _alloc_whole_node), one
// allocation a slurm.conf type.
func (m *Manager) wholeNodeGres(cl *Cluster, a sched.Allocation) [][]gres.Alloc {
	var out [][]gres.Alloc
	some := false
	for _, na := range a.Nodes {
		var got []gres.Alloc
		for _, l := range m.gresLayouts(cl, na.Node) {
			if l.Count == 0 {
				continue
			}
			if !l.Bits {
				got = append(got, gres.Alloc{Name: l.Name, Count: l.Count})
				continue
			}
			got = append(got, gres.Pick(&l, nil, "", uint64(len(l.DevType)))...)
		}
		some = some || len(got) > 0
		out = append(out, got)
	}
	if !some {
		return nil
	}
	return out
}

type gresKey struct{ name, typ string }

// gresKeys are the (name, type) records of a per-node allocation, in
// first-seen order (gres_list_alloc's records).
func gresKeys(per [][]gres.Alloc) []gresKey {
	var keys []gresKey
	for _, as := range per {
		for _, a := range as {
			k := gresKey{a.Name, a.Type}
			seen := false
			for _, x := range keys {
				seen = seen || x == k
			}
			if !seen {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// gresBitmap is a node's allocation bitmap over its devices of the name.
func (m *Manager) gresBitmap(cl *Cluster, ni int, a gres.Alloc) *jobcred.Bitmap {
	if !a.Bits {
		return nil
	}
	size := 0
	if l := gres.Find(m.gresLayouts(cl, ni), a.Name); l != nil {
		size = len(l.DevType)
	}
	for _, i := range a.Idx {
		size = max(size, i+1)
	}
	return jobcred.BitmapOf(uint32(size), a.Idx...)
}

// jobGresRecs is the credential's job_gres_list: the job's gres_list_alloc
// records, one per GRES name and type, with per-node counts and bitmaps.
func (m *Manager) jobGresRecs(j *Job, cl *Cluster) []jobcred.JobGres {
	if len(j.NodeGres) == 0 {
		return nil
	}
	var out []jobcred.JobGres
	n := len(j.NodeIdx)
	for _, key := range gresKeys(j.NodeGres) {
		r := jobcred.JobGres{PluginID: jobcred.GresPluginID(key.name), NodeCnt: uint32(n),
			HasCntNodeAlloc: true, CntNodeAlloc: make([]uint64, n), HasBitAlloc: true, BitAlloc: make([]*jobcred.Bitmap, n)}
		if key.typ != "" {
			r.TypeName = jobcred.Str(key.typ)
		}
		for k := 0; k < n && k < len(j.NodeGres); k++ {
			for _, a := range j.NodeGres[k] {
				if a.Name != key.name || a.Type != key.typ {
					continue
				}
				r.CntNodeAlloc[k] += a.Count
				r.TotalGres += a.Count
				r.BitAlloc[k] = m.gresBitmap(cl, j.NodeIdx[k], a)
			}
		}
		out = append(out, r)
	}
	return out
}

// stepGresRecs is the credential's step_gres_list (the step's
// gres_list_alloc): per job node, what the step holds.
func (m *Manager) stepGresRecs(j *Job, st *Step, cl *Cluster) []jobcred.StepGres {
	if len(st.Gres) == 0 {
		return nil
	}
	var out []jobcred.StepGres
	n := len(j.NodeIdx)
	for _, key := range gresKeys(st.Gres) {
		r := jobcred.StepGres{PluginID: jobcred.GresPluginID(key.name), NodeCnt: uint32(n), NodeInUse: jobcred.NewBitmap(uint32(n)),
			HasCntNodeAlloc: true, CntNodeAlloc: make([]uint64, n), HasBitAlloc: true, BitAlloc: make([]*jobcred.Bitmap, n)}
		for k := 0; k < n && k < len(st.Gres); k++ {
			for _, a := range st.Gres[k] {
				if a.Name != key.name || a.Type != key.typ {
					continue
				}
				r.NodeInUse.Set(k)
				r.CntNodeAlloc[k] += a.Count
				r.TotalGres += a.Count
				r.BitAlloc[k] = m.gresBitmap(cl, j.NodeIdx[k], a)
			}
		}
		out = append(out, r)
	}
	return out
}

// stepReq is one GRES request of a step: per node (--gres), or over
// the step (--gpus, or a job's --gpus copied to its steps).
type stepReq struct {
	gres.Req
	perStep bool
}

// positive are the requests of a tres string with a count.
func positive(tres string, perStep bool) []stepReq {
	return positiveOf(jobGresReqs(tres), perStep)
}

func positiveOf(reqs []gres.Req, perStep bool) []stepReq {
	var out []stepReq
	for _, r := range reqs {
		if r.Count > 0 {
			out = append(out, stepReq{r, perStep})
		}
	}
	return out
}

// stepGresReqs is what a step asks for (_copy_job_tres_to_step): nothing
// with --gres=none, its own GRES when it names any, else its job's (a
// job's --gpus becomes the step's).
func stepGresReqs(j *Job, req *msg.StepCreateRequest) []stepReq {
	switch {
	case req.TresPerNode.Valid && strings.EqualFold(req.TresPerNode.Value, "NONE"):
		return nil
	case containsGres(req.TresPerNode) || containsGres(req.TresPerStep) ||
		containsGres(req.TresPerSocket) || containsGres(req.TresPerTask):
		reqs := append(positive(req.TresPerNode.Value, false), positive(req.TresPerStep.Value, true)...)
		// Per socket: the job's sockets a node (steps name none).
		sockets := uint64(1)
		if j.SocketsPerNode != 0 && j.SocketsPerNode != NoVal16 {
			sockets = uint64(j.SocketsPerNode)
		}
		for _, r := range positive(req.TresPerSocket.Value, false) {
			if !slices.ContainsFunc(reqs, func(h stepReq) bool { return !h.perStep && h.Name == r.Name }) {
				r.Count *= sockets
				reqs = append(reqs, r)
			}
		}
		return append(reqs, perTask(req.TresPerTask.Value, stepTasks(req), reqs)...)
	}
	reqs := append(positiveOf(perNodeReqs(j), false), positive(j.TresPerJob, true)...)
	return append(reqs, perTask(j.TresPerTask, stepTasks(req), reqs)...)
}

// stepTasks is a step's task count (srun always sends one; else one a
// node).
func stepTasks(req *msg.StepCreateRequest) uint32 {
	if req.NumTasks != 0 && req.NumTasks != NoVal {
		return req.NumTasks
	}
	return max(req.MinNodes, 1)
}

func containsGres(s msg.NullString) bool { return s.Valid && strings.Contains(s.Value, "gres") }

// pickStepGres gives a step its GRES on the job nodes ranks: for each
// request, the lowest of the job's indices on each node that its other
// steps do not hold (all of them may be shared with --overlap); a count
// over the step is taken node by node, leaving one for each node after
// (_step_get_gres_needed). It returns ESLURM_INSUFFICIENT_GRES when the
// job has too few, and ESLURM_NODES_BUSY when other steps hold what it
// needs.
func pickStepGres(j *Job, reqs []stepReq, ranks []int, overlap bool) ([][]gres.Alloc, int) {
	if len(reqs) == 0 || len(j.NodeGres) == 0 {
		if len(reqs) > 0 {
			return nil, slurmerr.ESLURM_INSUFFICIENT_GRES
		}
		return nil, 0
	}
	out := make([][]gres.Alloc, len(j.NodeIdx))
	for _, r := range reqs {
		left := r.Count
		var total uint64
		for i, k := range ranks {
			if k >= len(j.NodeGres) {
				continue
			}
			want := r.Count
			if r.perStep {
				want = left
				if rest := uint64(len(ranks) - i - 1); rest > 0 {
					want -= min(want, rest)
				}
			}
			got, have := takeOnNode(j, k, r.Req, want, overlap)
			out[k] = append(out[k], got...)
			total += have
			var n uint64
			for _, a := range got {
				n += a.Count
			}
			switch {
			case r.perStep:
				left -= min(left, n)
			case have < r.Count:
				return nil, slurmerr.ESLURM_INSUFFICIENT_GRES
			case n < r.Count:
				return nil, slurmerr.ESLURM_NODES_BUSY
			}
		}
		if r.perStep && left > 0 {
			if total < r.Count {
				return nil, slurmerr.ESLURM_INSUFFICIENT_GRES
			}
			return nil, slurmerr.ESLURM_NODES_BUSY
		}
	}
	return out, 0
}

// takeOnNode takes up to want of the job's GRES r on its k-th node that
// its other steps do not hold; have is how many of them the job has there.
func takeOnNode(j *Job, k int, r gres.Req, want uint64, overlap bool) (got []gres.Alloc, have uint64) {
	var mine []gres.Alloc
	for _, a := range j.NodeGres[k] {
		if a.Name == r.Name && (r.Type == "" || a.Type == r.Type) {
			mine = append(mine, a)
			have += a.Count
		}
	}
	taken := map[gresKey]uint64{}
	var takenIdx []bool
	if !overlap {
		for _, s := range j.Steps {
			if s.Alloc != nil && s.Alloc.Overlap || k >= len(s.Gres) {
				continue
			}
			for _, a := range s.Gres[k] {
				taken[gresKey{a.Name, a.Type}] += a.Count
				for _, i := range a.Idx {
					for len(takenIdx) <= i {
						takenIdx = append(takenIdx, false)
					}
					takenIdx[i] = true
				}
			}
		}
	}
	left := want
	for _, a := range mine {
		if left == 0 {
			break
		}
		if !a.Bits {
			t := min(a.Count-min(a.Count, taken[gresKey{a.Name, a.Type}]), left)
			if t > 0 {
				got = append(got, gres.Alloc{Name: a.Name, Type: a.Type, Count: t})
				left -= t
			}
			continue
		}
		idx, _ := gres.PickSubset(a.Idx, takenIdx, left)
		if len(idx) > 0 {
			got = append(got, gres.Alloc{Name: a.Name, Type: a.Type, Count: uint64(len(idx)), Bits: true, Idx: idx})
			left -= uint64(len(idx))
		}
	}
	return got, have
}

// gresDetail is the job record's gres_detail_str: per job node its GRES
// with indices (scontrol show job -d).
func gresDetail(j *Job) []msg.NullString {
	if len(j.NodeGres) == 0 {
		return nil
	}
	out := make([]msg.NullString, len(j.NodeGres))
	for k, as := range j.NodeGres {
		if s := gres.Detail(as); s != "" {
			out[k] = msg.Str(s)
		}
	}
	return out
}

// gresTotal is the job record's gres_used, which scontrol show job -d
// prints as JOB_GRES=: each allocation record's count over all nodes
// ("gpu:2", "gpu:tesla:1,gpu:k80:0").
func gresTotal(j *Job) string {
	var parts []string
	for _, k := range gresKeys(j.NodeGres) {
		var n uint64
		for _, as := range j.NodeGres {
			for _, a := range as {
				if a.Name == k.name && a.Type == k.typ {
					n += a.Count
				}
			}
		}
		s := k.name
		if k.typ != "" {
			s += ":" + k.typ
		}
		parts = append(parts, fmt.Sprintf("%s:%d", s, n))
	}
	return strings.Join(parts, ",")
}

// GresUsed is each node's GresUsed= for what the jobs hold now (nil for
// a node without GRES).
func (m *Manager) GresUsed(cl *Cluster) []string {
	out := make([]string, len(cl.Nodes))
	held := make([][]gres.Alloc, len(cl.Nodes))
	for _, j := range m.jobs {
		if len(j.NodeGres) == 0 || !j.holdsResources() {
			continue
		}
		for k, i := range j.NodeIdx {
			if i >= 0 && i < len(held) && k < len(j.NodeGres) {
				held[i] = append(held[i], j.NodeGres[k]...)
			}
		}
	}
	for i := range cl.Nodes {
		if len(cl.Nodes[i].Gres) == 0 {
			continue
		}
		out[i] = gres.Used(m.gresLayouts(cl, i), held[i])
	}
	return out
}

// jobGresInfo is the job_gres_info of REQUEST_LAUNCH_PROLOG and
// REQUEST_TERMINATE_JOB (gres_g_epilog_build_env over the job's request
// records): for each gpu request, the job's bitmap on each node, which
// slurmd turns into the prolog's and epilog's CUDA_VISIBLE_DEVICES and
// SLURM_JOB_GPUS. Only gres/gpu builds one in 22.05 (nic builds none;
// mps and shard are not handled here).
func (m *Manager) jobGresInfo(j *Job, cl *Cluster) []msg.GresJobAlloc {
	if len(j.NodeGres) == 0 {
		return nil
	}
	var out []msg.GresJobAlloc
	n := len(j.NodeIdx)
	for _, r := range jobReqList(j) {
		if r.Name != "gpu" || r.Count == 0 {
			continue
		}
		rec := msg.GresJobAlloc{PluginID: jobcred.GresPluginID(r.Name), NodeCnt: uint32(n), HasBitAlloc: true,
			BitAlloc: make([]msg.HexBitmap, n)}
		for k := range rec.BitAlloc {
			rec.BitAlloc[k] = msg.NullBitmap
			if k >= len(j.NodeGres) {
				continue
			}
			var idx []int
			bits := false
			for _, a := range j.NodeGres[k] {
				if a.Name == r.Name && (r.Type == "" || a.Type == r.Type) && a.Bits {
					bits = true
					idx = append(idx, a.Idx...)
				}
			}
			if !bits {
				continue
			}
			size := 0
			if l := gres.Find(m.gresLayouts(cl, j.NodeIdx[k]), r.Name); l != nil {
				size = len(l.DevType)
			}
			for _, i := range idx {
				size = max(size, i+1)
			}
			rec.BitAlloc[k] = msg.BitmapOf(size, idx...)
		}
		out = append(out, rec)
	}
	return out
}

// gresFits reports whether a node has, by its configuration, every GRES
// the job asks for per node (a type only when named).
func gresFits(n *sched.Node, reqs []sched.GresReq) bool {
	for _, r := range reqs {
		var have uint64
		for _, g := range n.Gres {
			if g.Name == r.Name && (r.Type == "" || g.Type == r.Type) {
				have += g.Count
			}
		}
		if have < r.Count {
			return false
		}
	}
	return true
}

// jobReqList is the job's GRES request records (gres_list_req): what it
// asked for per node and over the job (--gpus), or with whole nodes the
// nodes' GRES, a record a type, each as many as its first node has
// (gres_per_node).
func jobReqList(j *Job) []stepReq {
	if j.Shared != 0 || len(j.NodeGres) == 0 {
		reqs := append(positiveOf(perNodeReqs(j), false), positive(j.TresPerJob, true)...)
		return append(reqs, perTask(j.TresPerTask, jobTasks(j), reqs)...)
	}
	var out []stepReq
	for _, k := range gresKeys(j.NodeGres) {
		r := gres.Req{Name: k.name, Type: k.typ}
		for _, a := range j.NodeGres[0] {
			if a.Name == k.name && a.Type == k.typ {
				r.Count += a.Count
			}
		}
		out = append(out, stepReq{Req: r})
	}
	return out
}

// stepGresValid is _validate_step_counts: a step may ask only for GRES
// its job asked for, per node at most the job's per-node count, over the
// step at most the job's --gpus and at least one a node.
func stepGresValid(j *Job, reqs []stepReq, minNodes uint32) error {
	if len(reqs) == 0 {
		return nil
	}
	job := jobReqList(j)
	if len(job) == 0 {
		return &RejectError{Code: slurmerr.ESLURM_INVALID_GRES, Msg: "Step requested GRES but job doesn't have GRES"}
	}
	for _, r := range reqs {
		k := slices.IndexFunc(job, func(g stepReq) bool { return g.Name == r.Name && (r.Type == "" || g.Type == r.Type) })
		if k < 0 {
			typ := r.Type
			if typ == "" {
				typ = "(null)"
			}
			return &RejectError{Code: slurmerr.ESLURM_INVALID_GRES, Msg: fmt.Sprintf("Step requested GRES (%s:%s) not found in the job", r.Name, typ)}
		}
		g := job[k]
		switch {
		case r.perStep && minNodes != 0 && minNodes != NoVal && r.Count < uint64(minNodes):
			return &RejectError{Code: slurmerr.ESLURM_INVALID_GRES, Msg: fmt.Sprintf(
				"Step requested gres=%s:%d is less than the requested min nodes=%d", r.Name, r.Count, minNodes)}
		case r.perStep && g.perStep && r.Count > g.Count:
			return &RejectError{Code: slurmerr.ESLURM_INVALID_GRES, Msg: fmt.Sprintf(
				"Step requested gres=%s:%d is more than the job's gres=%s:%d", r.Name, r.Count, g.Name, g.Count)}
		case !r.perStep && !g.perStep && g.Count > 0 && r.Count > g.Count:
			return &RejectError{Code: slurmerr.ESLURM_INVALID_GRES, Msg: fmt.Sprintf(
				"Step requested gres_per_node=%s:%d is more than the job's gres_per_node=%s:%d", r.Name, r.Count, g.Name, g.Count)}
		}
	}
	return nil
}

// gresEnforceBind is GRES_ENFORCE_BIND of a job's bit flags
// (--gres-flags=enforce-binding).
const gresEnforceBind = 1 << 4

// gresBound is, for every node whose GRES have records bound to cores,
// those records (gres.Bound), by node index; nil for the others. It
// sets the scheduler's view of them (sched.Node.GresBind) on cl.Nodes.
func (m *Manager) gresBound(cl *Cluster) [][]gres.BoundRec {
	var out [][]gres.BoundRec
	for i := range cl.Nodes {
		cl.Nodes[i].GresBind = nil
		if i >= len(cl.GresRecs) || !slices.ContainsFunc(cl.GresRecs[i], func(r gres.Record) bool { return r.Cores != "" }) {
			continue
		}
		recs := gres.Bound(m.gresLayouts(cl, i))
		if len(recs) == 0 {
			continue
		}
		if out == nil {
			out = make([][]gres.BoundRec, len(cl.Nodes))
		}
		out[i] = recs
		bind := make([]sched.GresBind, len(recs))
		for k, r := range recs {
			bind[k] = sched.GresBind{Name: r.Name, Type: r.Type, Count: uint64(r.Count)}
			if r.Cores != nil {
				bind[k].Cores = make([]uint16, 0, len(r.Cores))
				for _, c := range r.Cores {
					if c >= 0 && c < 1<<16 {
						bind[k].Cores = append(bind[k].Cores, uint16(c))
					}
				}
			}
		}
		cl.Nodes[i].GresBind = bind
	}
	return out
}

// setSchedGres puts the job's GRES requests into its scheduler view:
// per node (--gres, --gpus-per-node) and --gpus over the job.
func setSchedGres(sj *sched.Job, j *Job) {
	sj.Gres = schedGres(j)
	sj.GresEnforceBind = j.Bitflags&gresEnforceBind != 0
	// cr_dist: a plane distribution, or block over a node's sockets
	// (block:block, cyclic:block), syncs the cores by block
	// (SLURM_DIST_NODESOCKMASK of task_dist).
	switch j.TaskDist & 0xF0FF {
	case 0x0004, 0x0021, 0x0022:
		sj.CoreBlock = true
	case 0x0011, 0x0012, 0x0031, 0x0032:
		// cyclic or fcyclic over the sockets: cyclic even under
		// CR_Core_Default_Dist_Block.
		sj.CoreCyclic = true
	}
	// --cpus-per-gpu (CpusPerTres of any GRES): a node's CPUs are at
	// least that many for each of the GRES the job asks for on it
	// (cons_tres' gres_min_cpus); only per-node counts are known before
	// GRES over the job are placed.
	for _, r := range sj.Gres {
		if c := tresCount(j.CPUsPerTres, r.Name); c > 0 {
			sj.MinCPUs = max(sj.MinCPUs, uint32(min(c*r.Count, uint64(^uint32(0)))))
		}
	}
	// --mem-per-gpu without --mem: a node's memory is that much a GPU on
	// it (gres_select_util_job_mem_set); per-node counts only, as above.
	if mpg := tresCount(j.MemPerTres, "gpu"); mpg > 0 && j.Bitflags&jobMemSet == 0 {
		var n uint64
		for _, r := range sj.Gres {
			if r.Name == "gpu" {
				n += r.Count
			}
		}
		if n > 0 {
			sj.MemPerNode, sj.MemPerCPU, sj.MemAll = mpg*n, 0, false
		}
	}
	if name, n, typ := jobGPUs(j); n > 0 {
		sj.GPUs, sj.GPUType, sj.JobGres = uint32(min(n, uint64(^uint32(0)))), typ, name
		sj.GPUsPerTask = uint32(min(tresCount(j.TresPerTask, name), uint64(^uint32(0))))
	}
}

// keptGres is a step's per-job-node GRES without the job nodes a shrink
// took out (out, by job node index), so it stays aligned with the job's.
func keptGres(per [][]gres.Alloc, out map[int]bool) [][]gres.Alloc {
	if per == nil {
		return nil
	}
	var kept [][]gres.Alloc
	for k, as := range per {
		if !out[k] {
			kept = append(kept, as)
		}
	}
	return kept
}

// tresCount is the count of GRES name in a tres string ("gres:gpu:2"),
// 0 when it has none.
func tresCount(tres, name string) uint64 {
	for _, r := range jobGresReqs(tres) {
		if r.Name == name {
			return r.Count
		}
	}
	return 0
}
