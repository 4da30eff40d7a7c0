package ctld

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// Power saving as 22.05's power_save.c does it. The decisions are here
// (no programs run, no clock read: the caller gives now); running the
// programs and the loop are in powersave_run.go, scontrol's power
// requests in powersave_update.go.
//
//   - A node idle (or DOWN) for its SuspendTime, not excluded, is set
//     POWERING_DOWN and SuspendProgram runs with the hostlist; once its
//     SuspendTimeout is over it is POWERED_DOWN ("idle~"), usable again
//     by the scheduler.
//   - A job started on POWERED_DOWN nodes is CONFIGURING (POWER_UP_NODE);
//     the next pass sets them POWERING_UP (and NOT_RESPONDING) and runs
//     ResumeProgram. They are back when their slurmd registers with a
//     boot time after the request; then the job runs.
//   - A node not back within ResumeTimeout goes DOWN ("ResumeTimeout
//     reached"), POWERED_DOWN, and ResumeFailProgram runs for it.
//   - SuspendRate and ResumeRate cap the nodes per minute, counted with
//     the decaying counters of 22.05.

// powerCfg is _init_power_config's result: what the pass needs of the
// configuration, and whether power saving is on at all.
type powerCfg struct {
	enabled                 bool
	suspendRate, resumeRate int
	suspendProg, resumeProg string
	resumeFailProg          string
	excNodes                string
	excParts                []string
	interval, minInterval   int64
	idleOnSuspend           bool
	// maxTimeout is the longest Suspend/ResumeTimeout, which bounds the
	// wait for the programs at shutdown.
	maxTimeout int64
}

// psInfinite stands for a node SuspendTime of INFINITE or NO_VAL: never
// suspended for being idle.
const psInfinite = int64(-1)

// powerConfig is _init_power_config: nil errors and enabled when
// SuspendProgram and ResumeProgram are usable and some SuspendTime is set.
// valid checks a program (absolute, executable, not writable by group or
// others); it logs its own complaint. The messages returned are the ones
// 22.05 logs; debug ones come with debug=true.
func powerConfig(cf *conf.Config, parts []*Partition, valid func(string) bool) (pc powerCfg, logs []psLog) {
	pc = powerCfg{
		suspendRate: int(cf.SuspendRate), resumeRate: int(cf.ResumeRate),
		suspendProg: cf.SuspendProgram, resumeProg: cf.ResumeProgram, resumeFailProg: cf.ResumeFailProgram,
		excNodes: cf.SuspendExcNodes, excParts: cf.SuspendExcParts,
		interval: 10, maxTimeout: max(int64(cf.SuspendTimeout), int64(cf.ResumeTimeout)),
	}
	for _, o := range cf.SlurmctldParameters {
		v := o.Value
		switch strings.ToLower(o.Name) {
		case "idle_on_node_suspend":
			pc.idleOnSuspend = true
		case "power_save_interval":
			n, _ := strconv.ParseInt(v, 10, 64)
			pc.interval = n
		case "power_save_min_interval":
			n, _ := strconv.ParseInt(v, 10, 64)
			pc.minInterval = n
		}
	}
	partSet := false
	for _, part := range parts {
		p := part.Conf
		if p == nil {
			continue
		}
		if st := uint64(p.SuspendTime); st != conf.Infinite32 && st != conf.NoVal32 {
			partSet = true
		}
		if t := uint64(p.ResumeTimeout); t != conf.NoVal16 {
			pc.maxTimeout = max(pc.maxTimeout, int64(t))
		}
	}
	if uint64(cf.SuspendTime) == conf.Infinite32 && !partSet {
		return pc, []psLog{{debug: true, text: "power_save module disabled, SuspendTime < 0"}}
	}
	switch {
	case pc.suspendProg == "":
		return pc, []psLog{{text: "power_save module disabled, NULL SuspendProgram"}}
	case !valid(pc.suspendProg):
		return pc, []psLog{{text: "power_save module disabled, invalid SuspendProgram " + pc.suspendProg}}
	case pc.resumeProg == "":
		return pc, []psLog{{text: "power_save module disabled, NULL ResumeProgram"}}
	case !valid(pc.resumeProg):
		return pc, []psLog{{text: "power_save module disabled, invalid ResumeProgram " + pc.resumeProg}}
	}
	if pc.resumeFailProg != "" && !valid(pc.resumeFailProg) {
		pc.resumeFailProg = ""
	}
	pc.enabled = true
	return pc, nil
}

// psLog is a message of the pass for the caller to log: error level
// unless debug or info; flag: only with DebugFlags=Power (log_flag).
type psLog struct {
	debug, info, flag bool
	text              string
}

// setPowerTimeouts is power_save_set_timeouts: each node's SuspendTime,
// SuspendTimeout and ResumeTimeout are the largest its partitions set,
// else slurm.conf's.
func setPowerTimeouts(cf *conf.Config, nodes []*Node, parts []*Partition) {
	const unset = -2
	for _, n := range nodes {
		n.psSuspendTime, n.psSuspendTimeout, n.psResumeTimeout = unset, unset, unset
	}
	merge := func(cur *int64, v int64) {
		if *cur == unset || v > *cur {
			*cur = v
		}
	}
	for _, p := range parts {
		cp := p.Conf
		if cp == nil {
			continue
		}
		for _, n := range p.Nodes {
			if st := uint64(cp.SuspendTime); st != conf.NoVal32 {
				v := int64(st)
				if st == conf.Infinite32 {
					v = psInfinite
				}
				// INFINITE is the largest value there is.
				if n.psSuspendTime == psInfinite || v == psInfinite {
					n.psSuspendTime = psInfinite
				} else {
					merge(&n.psSuspendTime, v)
				}
			}
			if t := uint64(cp.SuspendTimeout); t != conf.NoVal16 {
				merge(&n.psSuspendTimeout, int64(t))
			}
			if t := uint64(cp.ResumeTimeout); t != conf.NoVal16 {
				merge(&n.psResumeTimeout, int64(t))
			}
		}
	}
	global := int64(cf.SuspendTime)
	if uint64(cf.SuspendTime) == conf.Infinite32 || uint64(cf.SuspendTime) == conf.NoVal32 {
		global = psInfinite
	}
	for _, n := range nodes {
		if n.psSuspendTime == unset {
			n.psSuspendTime = global
		}
		if n.psSuspendTimeout == unset {
			n.psSuspendTimeout = int64(cf.SuspendTimeout)
		}
		if n.psResumeTimeout == unset {
			n.psResumeTimeout = int64(cf.ResumeTimeout)
		}
	}
}

// excGroup is one "nodes:count" of SuspendExcNodes: count of the nodes
// stay up.
type excGroup struct {
	nodes []int
	count int
}

// powerState is the pass's memory between passes (power_save.c's
// statics).
type powerState struct {
	cfg          powerCfg
	lastWorkScan int64
	lastLog      int64
	suspendCntF  float64
	resumeCntF   float64
	exc          []bool // SuspendExcNodes (without counts) and SuspendExcParts
	partial      []excGroup
}

// psJob is a job CONFIGURING for nodes to power up (22.05's
// resume_job_list, rebuilt for each pass in the order the jobs started):
// its ID and node indices.
type psJob struct {
	id    uint32
	nodes []int
}

// psWork is what a pass decided: the programs to run (hostlists) and the
// nodes to set DOWN for a missed ResumeTimeout.
type psWork struct {
	suspend, resume, failed string
	resumeJSON              string
	timedOut                []*Node
	logs                    []psLog
}

// poweredDownish is power_node_bitmap: POWERED_DOWN or POWERING_DOWN.
func poweredDownish(n *Node) bool {
	return n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringDown)
}

// parseExclusions is the first pass's parse of SuspendExcNodes and
// SuspendExcParts.
func (ps *powerState) parseExclusions(nodeIndex map[string]*Node, nnodes int, parts []*Partition, logs *[]psLog) {
	ps.exc, ps.partial = nil, nil
	idx := func(expr string) ([]int, bool) {
		names, err := hostlist.Expand(expr)
		if err != nil {
			return nil, false
		}
		var out []int
		for _, name := range names {
			n := nodeIndex[name]
			if n == nil {
				return nil, false
			}
			out = append(out, n.Index)
		}
		return out, true
	}
	mark := func(list []int) {
		if ps.exc == nil {
			ps.exc = make([]bool, nnodes)
		}
		for _, i := range list {
			ps.exc[i] = true
		}
	}
	if e := ps.cfg.excNodes; e != "" {
		if !strings.Contains(e, ":") {
			list, ok := idx(e)
			if ok {
				mark(list)
			} else {
				*logs = append(*logs, psLog{text: "Invalid SuspendExcNodes " + e + " ignored"})
			}
		} else if groups, ok := parseExcGroups(e, idx); ok {
			ps.partial = groups
		} else {
			*logs = append(*logs, psLog{text: "Invalid SuspendExcNodes " + e + " ignored"})
		}
	}
	for _, name := range ps.cfg.excParts {
		var p *Partition
		for _, q := range parts {
			if q.Name == name {
				p = q
			}
		}
		if p == nil {
			*logs = append(*logs, psLog{text: "Invalid SuspendExcPart " + name + " ignored"})
			continue
		}
		var list []int
		for _, n := range p.Nodes {
			list = append(list, n.Index)
		}
		mark(list)
	}
}

// parseExcGroups reads "nodes:count[,nodes:count]..." as 22.05 does: the
// hostlist runs to the ':', the count to the ',' (a group without a
// count keeps all its nodes up).
func parseExcGroups(e string, idx func(string) ([]int, bool)) ([]excGroup, bool) {
	var out []excGroup
	rest := e
	for rest != "" {
		hosts, after, found := strings.Cut(rest, ":")
		list, ok := idx(hosts)
		if !ok || len(list) == 0 {
			return nil, false
		}
		g := excGroup{nodes: list, count: len(list)}
		rest = ""
		if found {
			cnt, tail, _ := strings.Cut(after, ",")
			n, err := strconv.Atoi(cnt)
			if err != nil || n < 1 || n > len(list) {
				return nil, false
			}
			g.count, rest = n, tail
		}
		out = append(out, g)
	}
	return out, true
}

// avoid is the nodes not to suspend this pass: the exclusions, and of
// each counted group the first count nodes that are up and idle.
func (ps *powerState) avoid(nodes []*Node, sus []int) []bool {
	var out []bool
	if ps.exc != nil {
		out = append([]bool(nil), ps.exc...)
	}
	for _, g := range ps.partial {
		if out == nil {
			out = make([]bool, len(nodes))
		}
		if g.count >= len(g.nodes) {
			for _, i := range g.nodes {
				out[i] = true
			}
			continue
		}
		left := g.count
		for _, i := range g.nodes {
			n := nodes[i]
			if !n.IsIdle() || n.Has(msg.NodeStateCompleting) || n.IsDown() || n.IsDrain() ||
				n.Has(msg.NodeStatePoweringUp) || poweredDownish(n) || sus[i] > 0 {
				continue
			}
			out[i] = true
			if left--; left <= 0 {
				break
			}
		}
	}
	return out
}

// pass is _do_power_work at now: node states change here; the programs
// to run come back. jobs are those waiting for nodes to power up, sus
// the count of suspended jobs on each node.
func (ps *powerState) pass(nodes []*Node, nodeIndex map[string]*Node, parts []*Partition,
	jobs []psJob, sus []int, now int64) psWork {
	var w psWork
	if ps.lastWorkScan == 0 {
		ps.parseExclusions(nodeIndex, len(nodes), parts, &w.logs)
	}
	if dt := now - ps.lastWorkScan; dt >= 60 {
		ps.suspendCntF, ps.resumeCntF = 0, 0
	} else {
		rate := float64(60-dt) / 60
		ps.suspendCntF *= rate
		ps.resumeCntF *= rate
	}
	suspendCnt, resumeCnt := int(ps.suspendCntF+0.5), int(ps.resumeCntF+0.5)
	ps.lastWorkScan = now
	avoid := ps.avoid(nodes, sus)
	sRate, rRate := ps.cfg.suspendRate, ps.cfg.resumeRate

	// Jobs waiting for nodes, in order, within ResumeRate.
	forJob := make([]bool, len(nodes))
	type jobNodes struct {
		JobID uint32 `json:"job_id"`
		Nodes string `json:"nodes"`
	}
	var jobList []jobNodes
	for _, j := range jobs {
		if rRate > 0 && resumeCnt >= rRate {
			w.logs = append(w.logs, psLog{flag: true, text: "POWER: resume rate reached"})
			break
		}
		if slices.ContainsFunc(j.nodes, func(i int) bool { return doomedNode(nodes[i]) }) {
			// Real kills (requeues) such a job when its node goes DOWN or
			// is drained; ours does at the next job tick, which may
			// come after this pass: waking its nodes again would be a
			// second ResumeProgram real never runs.
			continue
		}
		var picked []string
		need := false
		for _, i := range slices.Sorted(slices.Values(j.nodes)) {
			if !poweredDownish(nodes[i]) {
				continue
			}
			need = true
			if rRate == 0 || resumeCnt < rRate {
				resumeCnt++
				ps.resumeCntF++
				forJob[i] = true
				picked = append(picked, nodes[i].Name)
			}
		}
		if need {
			jobList = append(jobList, jobNodes{JobID: j.id, Nodes: hostlist.Compress(picked)})
		}
	}

	var sleep, wake, failed []string
	total := 0
	for _, n := range nodes {
		suspended := n.Has(msg.NodeStatePoweredDown)
		if suspended {
			total++
		}
		if forJob[n.Index] || (suspended && (rRate == 0 || resumeCnt < rRate) &&
			!n.Has(msg.NodeStatePoweringDown) && n.Has(msg.NodeStatePowerUp)) {
			if !forJob[n.Index] {
				resumeCnt++
				ps.resumeCntF++
			}
			n.State &^= msg.NodeStatePowerUp | msg.NodeStatePoweredDown
			n.State |= msg.NodeStatePoweringUp | msg.NodeStateNoRespond
			n.BootReqTime = now
			n.psBooting = true
			nodeUp(n) // accounting's node up clears the reason
			wake = append(wake, n.Name)
			forJob[n.Index] = false
		}
		if !suspended && (sRate == 0 || suspendCnt < sRate) && (n.IsIdle() || n.IsDown()) &&
			sus[n.Index] == 0 && !n.Has(msg.NodeStateCompleting) && !n.Has(msg.NodeStatePoweringUp) &&
			!n.Has(msg.NodeStatePoweringDown) && !n.Has(msg.NodeStateRebootIssued) &&
			!n.Has(msg.NodeStateRebootRequested) &&
			(n.Has(msg.NodeStatePowerDown) || (n.LastBusy != 0 && n.psSuspendTime != psInfinite &&
				n.LastBusy < now-n.psSuspendTime && (avoid == nil || !avoid[n.Index]))) {
			if n.Has(msg.NodeStatePowerDown) && n.IsDrain() {
				n.State &^= msg.NodeStateDrain // power_down_asap's drain is over
			}
			suspendCnt++
			ps.suspendCntF++
			n.State |= msg.NodeStatePoweringDown
			n.State &^= msg.NodeStatePowerDown | msg.NodeStateNoRespond
			n.PowerSaveReqTime = now
			sleep = append(sleep, n.Name)
			if ps.cfg.idleOnSuspend {
				n.State = msg.NodeStateIdle | n.State&^msg.NodeStateBase&^(msg.NodeStateDrain|msg.NodeStateFail)
			}
		}
		if n.Has(msg.NodeStatePoweringDown) && n.PowerSaveReqTime+n.psSuspendTimeout < now {
			n.State &^= msg.NodeStateInvalidReg | msg.NodeStatePoweringDown
			n.State |= msg.NodeStatePoweredDown
			n.LastBusy, n.PowerSaveReqTime = 0, 0
		}
		if n.psBooting && now > n.BootReqTime+n.psResumeTimeout && n.Has(msg.NodeStatePoweringUp) && n.IsNoRespond() {
			w.logs = append(w.logs, psLog{info: true, text: fmt.Sprintf(
				"node %s not resumed by ResumeTimeout(%d) - marking down and power_save", n.Name, n.psResumeTimeout)})
			n.State &^= msg.NodeStateDrain | msg.NodeStatePowerDown | msg.NodeStatePoweringUp
			n.State |= msg.NodeStatePoweredDown
			n.Reason = ""
			w.timedOut = append(w.timedOut, n)
			n.psBooting = false
			n.LastBusy, n.BootReqTime = 0, 0
			if ps.cfg.resumeFailProg != "" {
				failed = append(failed, n.Name)
			}
		}
	}
	if now-ps.lastLog > 600 && total > 0 {
		w.logs = append(w.logs, psLog{flag: true, text: fmt.Sprintf("POWER: Power save mode: %d nodes", total)})
		ps.lastLog = now
	}
	w.suspend = hostlist.Compress(sleep)
	w.resume = hostlist.Compress(wake)
	w.failed = hostlist.Compress(failed)
	if len(wake) > 0 {
		w.resumeJSON = resumeJSON(jobList, w.resume)
	}
	return w
}

// resumeJSON is SLURM_RESUME_FILE's content: the jobs each node is woken
// for, and every node woken in the pass.
func resumeJSON[T any](jobList []T, all string) string {
	if jobList == nil {
		jobList = []T{}
	}
	b, _ := json.Marshal(struct {
		Jobs     []T    `json:"jobs"`
		AllNodes string `json:"all_nodes"`
	}{jobList, all})
	return string(b)
}

// waitingForNodePowerDown is waiting_for_node_power_down: a node
// POWERING_DOWN whose registration reports a boot before the end of the
// power down (slurm.conf's SuspendTimeout after the request) is still
// going down; the registration is ignored.
func waitingForNodePowerDown(n *Node, suspendTimeout int64) bool {
	return n.Has(msg.NodeStatePoweringDown) && n.PowerSaveReqTime != 0 && n.BootTime < n.PowerSaveReqTime+suspendTimeout
}

// doomedNode is a node whose jobs are being killed: DOWN, or drained or
// failed while powered down or powering up (update_node kills their jobs).
func doomedNode(n *Node) bool {
	return n.IsDown() || ((n.IsDrain() || n.IsFail()) && poweredDownish(n))
}
