package jobs

import (
	"slices"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Step node selection (step_mgr's _pick_step_nodes). Sets of nodes are
// []bool over the job's node ranks; the job's nodes are in node table
// order, so rank order is the order Slurm walks its node bitmaps in.

// Task distribution bits the pick reads.
const (
	distArbitrary uint32 = 0x0003
	distPackNodes uint32 = 0x800000 // SLURM_DIST_PACK_NODES
)

// pickStepNodes chooses the job nodes (ranks) of a new step as
// _pick_step_nodes does:
//
//   - srun -x (exc_nodes) drops nodes; an unknown name is
//     ESLURM_INVALID_NODE_NAME, a -w node also excluded a refusal.
//   - A node whose CPUs (or, asked for, memory) the job's other steps
//     hold is not available.
//   - srun -w (node_list): every node must be the job's (else a
//     refusal) and available (else ESLURM_NODES_BUSY, srun waits). More
//     nodes than the step's minimum are a pool to pick from; fewer are
//     all taken and the rest picked as without -w.
//   - srun -r N (relative) drops the job's first N nodes, and the pick
//     goes in node order; without it, nodes no step runs on go first.
//   - A CPU count on nodes of equal CPUs is a node count; nodes are added
//     while CPUs are short and the maximum node count allows.
//
// Too few nodes or CPUs left but enough once other steps end is
// ESLURM_NODES_BUSY; never enough is a refusal.
func (m *Manager) pickStepNodes(j *Job, cl *Cluster, req *msg.StepCreateRequest, s stepSpec, u jobUse) ([]int, int) {
	n := len(j.Nodes)
	minNodes, maxNodes := req.MinNodes, req.MaxNodes
	if maxNodes == 0 {
		maxNodes = uint32(n)
	}
	if maxNodes < minNodes {
		return nil, slurmerr.ESLURM_INVALID_NODE_COUNT
	}
	avail := make([]bool, n)
	for k := range avail {
		avail[k] = true
	}
	// Nodes of the job that are DOWN take no step (up_node_bitmap);
	// NOT_RESPONDING, drained or powered down ones are still up.
	for k := range n {
		if node := nodeOf(j, cl, k); node != nil && !stepNodeUp(node) {
			avail[k] = false
		}
	}
	nodeList := strOf(req.NodeList)
	if exc := strOf(req.ExcNodes); exc != "" {
		excl, ok := clusterNodeNames(cl, exc)
		if !ok {
			return nil, slurmerr.ESLURM_INVALID_NODE_NAME
		}
		for k, name := range j.Nodes {
			if excl[name] {
				avail[k] = false
			}
		}
		if nodeList != "" {
			want, ok := clusterNodeNames(cl, nodeList)
			if !ok {
				return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
			}
			for name := range want {
				if excl[name] {
					return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
				}
			}
		}
	}
	if feat := strOf(req.Features); feat != "" && feat != j.Features {
		// One feature name, matched as is against the nodes' active
		// features ("a&b" matches none); the job's own constraint is
		// no step constraint. No node left makes the step wait below.
		for k := range n {
			if node := nodeOf(j, cl, k); node == nil || !slices.Contains(node.Features, feat) {
				avail[k] = false
			}
		}
	}
	if j.NextStepID == 0 {
		// The job's first step waits for nodes still booting or
		// silent (the job's nodes may have been powered down).
		for k := range n {
			if node := nodeOf(j, cl, k); node != nil && node.State&(sched.NodePoweredDown|sched.NodeFuture|sched.NodeNoRespond) != 0 {
				return nil, slurmerr.ESLURM_NODES_BUSY
			}
		}
	}
	if s.memResv && s.mem != 0 && s.mem&memPerCPU == 0 && j.PnMinMemory != NoVal64 && j.PnMinMemory != 0 &&
		j.PnMinMemory&memPerCPU == 0 && s.mem > j.PnMinMemory {
		return nil, slurmerr.ESLURM_INVALID_TASK_MEMORY
	}

	// What each available node offers: its CPUs less those the job's
	// running steps hold, less those its free memory cannot back.
	usable := make([]uint32, n)
	var jobBlockedNodes, jobBlockedCPUs, memBlockedNodes, memBlockedCPUs int
	for k := range n {
		if !avail[k] {
			continue
		}
		usable[k] = j.NodeCPUs[k]
		if !s.overlap {
			used := u.cpus[k]
			if s.whole && used > 0 {
				usable[k] = 0
			} else {
				usable[k] -= min(used, usable[k])
			}
			jobBlockedCPUs += int(used)
			if usable[k] == 0 {
				jobBlockedNodes++
			}
		}
		if usable[k] == 0 {
			avail[k] = false
			continue
		}
		if !s.memResv || s.mem == 0 {
			continue
		}
		availCPUs, totalCPUs := usable[k], usable[k]
		fail := slurmerr.ESLURM_NODES_BUSY
		var memAlloc uint64
		if k < len(j.NodeMem) {
			memAlloc = j.NodeMem[k]
		}
		free := memAlloc
		if !s.overlap {
			free -= min(u.mem[k], free)
		}
		if s.mem&memPerCPU != 0 {
			per := max(s.mem&^memPerCPU, 1)
			totalCPUs = min(totalCPUs, uint32(memAlloc/per))
			if c := uint32(free / per); c < availCPUs {
				availCPUs, usable[k] = c, c
				fail = slurmerr.ESLURM_INVALID_TASK_MEMORY
			}
		} else {
			if memAlloc < s.mem {
				totalCPUs = 0
			}
			if free < s.mem {
				availCPUs, usable[k] = 0, 0
				fail = slurmerr.ESLURM_INVALID_TASK_MEMORY
			}
		}
		availTasks, totalTasks := availCPUs, totalCPUs
		if s.cpt > 0 {
			availTasks /= s.cpt
			totalTasks /= s.cpt
		}
		memBlockedCPUs += int(totalCPUs - min(availCPUs, totalCPUs))
		if availTasks == 0 {
			if minNodes == sched32Infinite || int(minNodes) == n {
				if totalTasks == 0 {
					return nil, fail
				}
				return nil, slurmerr.ESLURM_NODES_BUSY
			}
			avail[k] = false
			memBlockedNodes++
		}
	}
	if minNodes == sched32Infinite {
		return ranksOf(avail), 0
	}

	picked := make([]bool, n)
	if nodeList != "" {
		want, ok := clusterNodeNames(cl, nodeList)
		if !ok {
			return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		}
		sel := make([]bool, n)
		for k, name := range j.Nodes {
			sel[k] = want[name]
		}
		if countOf(sel) != len(want) {
			return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE // not all the job's
		}
		for k := range n {
			if sel[k] && !avail[k] {
				switch {
				case jobBlockedNodes > 0:
					return nil, slurmerr.ESLURM_NODES_BUSY
				case memBlockedNodes == 0:
					return nil, slurmerr.ESLURM_INVALID_TASK_MEMORY
				default:
					return nil, slurmerr.ESLURM_NODES_BUSY
				}
			}
		}
		if req.TaskDist&distStateBase == distArbitrary {
			minNodes = uint32(len(want))
		}
		switch cnt := uint32(len(want)); {
		case cnt > maxNodes:
			return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		case minNodes != 0 && cnt > minNodes:
			avail = sel // pick minNodes of them below
		default:
			for k := range n {
				if sel[k] {
					picked[k], avail[k] = true, false
				}
			}
		}
	}

	var idle []bool
	if req.Relative != NoVal16 {
		// Counted from the job's first node; idle nodes are not
		// preferred.
		if int(req.Relative) > n {
			return nil, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		}
		for k := range int(req.Relative) {
			avail[k] = false
		}
	} else {
		idle = make([]bool, n)
		for k := range n {
			idle[k] = avail[k] && !u.busy[k]
		}
	}

	cpuCount := s.cpus
	if cpuCount != 0 && sameCPUs(j.NodeCPUs) {
		// A CPU count on nodes alike is a node count.
		cc, code := stepCPUsByThreads(j, cl, req, cpuCount)
		if code != 0 {
			return nil, code
		}
		minNodes = max(minNodes, (cc+j.NodeCPUs[0]-1)/j.NodeCPUs[0])
		if req.TaskDist&distPackNodes != 0 {
			maxNodes = minNodes
		}
		if maxNodes < minNodes {
			return nil, slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS
		}
	}

	pickedCnt := 0
	if minNodes != 0 {
		pickedCnt = countOf(picked)
		if countOf(avail)+pickedCnt < int(minNodes) {
			return nil, slurmerr.ESLURM_NODES_BUSY
		}
		// shortCode is the answer when the nodes left cannot hold the
		// step: too few CPUs in all of them, or too few now.
		shortCode := func(pickable int) int {
			switch {
			case int(maxNodes) <= pickable && memBlockedCPUs == 0 && jobBlockedCPUs == 0:
				return slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS
			case memBlockedCPUs > 0 || int(minNodes) <= pickable+memBlockedNodes+jobBlockedNodes:
				return slurmerr.ESLURM_NODES_BUSY
			}
			return downCode(j, cl)
		}
		needed := int(minNodes) - pickedCnt
		if idleCnt := countOf(idle); needed > 0 && idleCnt >= needed {
			want := optNodeCnt(minNodes, maxNodes, idleCnt, pickedCnt)
			if got := pickNodesCPUs(idle, want, optCPUCnt(cpuCount, picked, usable), usable); got != nil {
				for k := range n {
					if got[k] {
						picked[k], idle[k], avail[k] = true, false, false
					}
				}
				pickedCnt, needed = int(minNodes), 0
			}
		}
		availCnt := countOf(avail)
		switch {
		case needed > 0 && availCnt >= needed:
			want := optNodeCnt(minNodes, maxNodes, availCnt, pickedCnt)
			got := pickNodesCPUs(avail, want, optCPUCnt(cpuCount, picked, usable), usable)
			if got == nil {
				return nil, shortCode(availCnt + pickedCnt)
			}
			for k := range n {
				if got[k] {
					picked[k], avail[k] = true, false
				}
			}
			pickedCnt = int(minNodes)
		case needed > 0:
			return nil, shortCode(pickedCnt)
		}
	}
	if cpuCount != 0 {
		cpus := usableOf(usable, picked)
		if cpuCount > cpus && int(maxNodes) > pickedCnt {
			// More nodes, in order, while CPUs are short.
			pickedCnt = countOf(picked)
			for k := 0; k < n && cpuCount > cpus; k++ {
				if !avail[k] {
					continue
				}
				avail[k] = false
				if usable[k] == 0 {
					continue
				}
				picked[k] = true
				pickedCnt++
				cpus += usable[k]
				if pickedCnt >= int(maxNodes) {
					break
				}
			}
		}
		if cpuCount > cpus {
			if int(cpuCount) <= int(cpus)+memBlockedCPUs+jobBlockedCPUs {
				return nil, slurmerr.ESLURM_NODES_BUSY
			}
			return nil, downCode(j, cl)
		}
	}
	return ranksOf(picked), 0
}

// stepNodeUp is whether a node is in up_node_bitmap: any state but DOWN.
func stepNodeUp(node *sched.Node) bool { return node.State&sched.NodeDown == 0 }

// downCode is the refusal of a step the job's nodes cannot hold: with a
// node of the job DOWN, ESLURM_NODE_NOT_AVAIL when every such node is
// also NOT_RESPONDING, else ESLURM_NODES_BUSY (the step waits: the node
// may come back); with none, ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE.
func downCode(j *Job, cl *Cluster) int {
	code := slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
	for k := range j.Nodes {
		node := nodeOf(j, cl, k)
		if node == nil || stepNodeUp(node) {
			continue
		}
		if node.State&sched.NodeNoRespond == 0 {
			return slurmerr.ESLURM_NODES_BUSY
		}
		code = slurmerr.ESLURM_NODE_NOT_AVAIL
	}
	return code
}

// stepCPUsByThreads is the step's CPU count in whole cores' CPUs when it
// asks for fewer threads a core than its job got, as _pick_step_nodes
// widens it: a step may not ask for more threads than the nodes have.
func stepCPUsByThreads(j *Job, cl *Cluster, req *msg.StepCreateRequest, cpus uint32) (uint32, int) {
	reqTPC := uint16(NoVal16)
	switch {
	case req.ThreadsPerCore != 0 && req.ThreadsPerCore != NoVal16:
		reqTPC = req.ThreadsPerCore
	case j.ThreadsPerCore != 0 && j.ThreadsPerCore != NoVal16:
		reqTPC = j.ThreadsPerCore
	}
	node := nodeOf(j, cl, 0)
	if reqTPC == NoVal16 || node == nil {
		return cpus, 0
	}
	nodeTPC := uint16(max(node.ThreadsPerCore, 1))
	jobTPC := nodeTPC
	if j.ThreadsPerCore != 0 && j.ThreadsPerCore != NoVal16 && j.ThreadsPerCore < jobTPC {
		jobTPC = j.ThreadsPerCore
	}
	if reqTPC >= jobTPC {
		return cpus, 0
	}
	if reqTPC > nodeTPC {
		return 0, slurmerr.ESLURM_BAD_THREAD_PER_CORE
	}
	t := uint32(reqTPC)
	return (cpus + t - 1) / t * uint32(nodeTPC), 0
}

// optCPUCnt is how many CPUs the step still needs beyond those of the
// nodes picked (_opt_cpu_cnt): none once one picked node alone covers
// what is left.
func optCPUCnt(cpus uint32, picked []bool, usable []uint32) int {
	rem := int(cpus)
	for k, p := range picked {
		if !p {
			continue
		}
		if int(usable[k]) >= rem {
			return 0
		}
		rem -= int(usable[k])
	}
	return rem
}

// optNodeCnt is how many more nodes to pick (_opt_node_cnt): up to the
// maximum when it exceeds the minimum, no more than are available.
func optNodeCnt(minNodes, maxNodes uint32, avail, picked int) int {
	target := int64(minNodes)
	if maxNodes > minNodes && maxNodes != NoVal {
		target = int64(maxNodes)
	}
	target = max(target-int64(picked), 0)
	return int(min(target, int64(avail)))
}

// pickNodesCPUs picks cnt nodes of set that hold cpus CPUs between them
// (_pick_step_nodes_cpus): the first cnt when CPUs are no concern,
// else every node with at least its even share, then nodes with less,
// the largest shares counted first; nil when they cannot.
func pickNodesCPUs(set []bool, cnt, cpus int, usable []uint32) []bool {
	if cnt <= 0 {
		return nil
	}
	target := (cpus + cnt - 1) / cnt
	if cpus <= cnt || target > 1024 {
		return firstOf(set, cnt)
	}
	picked := make([]bool, len(set))
	below := make([]int, target) // nodes by usable CPUs, under the target
	remNodes, remCPUs := cnt, cpus
	for k, in := range set {
		if !in {
			continue
		}
		if int(usable[k]) < target {
			below[usable[k]]++
			continue
		}
		picked[k] = true
		remCPUs -= int(usable[k])
		remNodes--
		if remCPUs <= 0 && remNodes <= 0 {
			return picked
		}
		if remNodes == 0 {
			return nil // enough nodes, too few CPUs
		}
	}
	// How many nodes of each smaller size to take, largest first.
	saveNodes, saveCPUs := remNodes, remCPUs
	below[0] = 0
	for c := target - 1; c > 0; c-- {
		if below[c] == 0 {
			continue
		}
		below[c] = min(below[c], remNodes)
		if remNodes > 0 {
			remNodes -= below[c]
			remCPUs -= below[c] * c
		}
	}
	if remCPUs > 0 || remNodes > 0 {
		return nil
	}
	remNodes, remCPUs = saveNodes, saveCPUs
	for k, in := range set {
		if !in || int(usable[k]) >= target || below[usable[k]] == 0 {
			continue
		}
		below[usable[k]]--
		picked[k] = true
		remCPUs -= int(usable[k])
		remNodes--
		if remCPUs <= 0 && remNodes <= 0 {
			return picked
		}
		if remNodes == 0 {
			break
		}
	}
	return nil
}

// clusterNodeNames is a host list's names; false when one names no node
// of the cluster (node_name2bitmap fails).
func clusterNodeNames(cl *Cluster, list string) (map[string]bool, bool) {
	names, err := hostlist.Expand(list)
	if err != nil || len(names) == 0 {
		return nil, false
	}
	out := make(map[string]bool, len(names))
	for _, name := range names {
		if cl.nodeIndex(name) < 0 {
			return nil, false
		}
		out[name] = true
	}
	return out, true
}

func firstOf(set []bool, cnt int) []bool {
	out := make([]bool, len(set))
	for k, in := range set {
		if cnt == 0 {
			break
		}
		if in {
			out[k] = true
			cnt--
		}
	}
	if cnt > 0 {
		return nil
	}
	return out
}

func countOf(set []bool) int {
	c := 0
	for _, in := range set {
		if in {
			c++
		}
	}
	return c
}

func usableOf(usable []uint32, set []bool) uint32 {
	var t uint32
	for k, in := range set {
		if in {
			t += usable[k]
		}
	}
	return t
}

func ranksOf(set []bool) []int {
	var out []int
	for k, in := range set {
		if in {
			out = append(out, k)
		}
	}
	return out
}
