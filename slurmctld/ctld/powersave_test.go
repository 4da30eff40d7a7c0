package ctld

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// psNodes builds n idle nodes n1..nN, busy until lastBusy, with the given
// power times, and one partition "p" holding them all.
func psNodes(count int, lastBusy, suspendTime int64) ([]*Node, map[string]*Node, []*Partition) {
	var nodes []*Node
	idx := map[string]*Node{}
	for i := range count {
		n := &Node{Index: i, Name: fmt.Sprintf("n%d", i+1), State: msg.NodeStateIdle, LastBusy: lastBusy,
			psSuspendTime: suspendTime, psSuspendTimeout: 5, psResumeTimeout: 20}
		nodes = append(nodes, n)
		idx[n.Name] = n
	}
	return nodes, idx, []*Partition{{Name: "p", Nodes: nodes}, {Name: "q", Nodes: nodes[:1]}}
}

// psStates shows each node's base state and flags, as "IDLE+POWERING_DOWN".
func psStates(nodes []*Node) string {
	bases := map[uint32]string{msg.NodeStateIdle: "IDLE", msg.NodeStateDown: "DOWN", msg.NodeStateAllocated: "ALLOCATED"}
	flags := []struct {
		f    uint32
		name string
	}{
		{msg.NodeStateNoRespond, "NOT_RESPONDING"}, {msg.NodeStateCompleting, "COMPLETING"}, {msg.NodeStateDrain, "DRAIN"},
		{msg.NodeStateFail, "FAIL"}, {msg.NodeStateRebootRequested, "REBOOT_REQUESTED"},
		{msg.NodeStatePoweredDown, "POWERED_DOWN"}, {msg.NodeStatePoweringDown, "POWERING_DOWN"},
		{msg.NodeStatePoweringUp, "POWERING_UP"}, {msg.NodeStatePowerDown, "POWER_DOWN"}, {msg.NodeStatePowerUp, "POWER_UP"},
	}
	var out []string
	for _, n := range nodes {
		s := bases[n.Base()]
		for _, f := range flags {
			if n.State&f.f != 0 {
				s += "+" + f.name
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestPowerPassSuspend(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       powerCfg
		prep      func(nodes []*Node)
		suspend   string
		after     string // states after the first pass
		logs      string
		suspended string // states once SuspendTimeout is over
	}{
		{name: "all idle", suspend: "n[1-3]",
			after:     "IDLE+POWERING_DOWN IDLE+POWERING_DOWN IDLE+POWERING_DOWN",
			suspended: "IDLE+POWERED_DOWN IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
		{name: "rate", cfg: powerCfg{suspendRate: 2}, suspend: "n[1-2]",
			after:     "IDLE+POWERING_DOWN IDLE+POWERING_DOWN IDLE",
			suspended: "IDLE+POWERED_DOWN IDLE+POWERED_DOWN IDLE"},
		{name: "busy recently", prep: func(nodes []*Node) { nodes[1].LastBusy = 99 }, suspend: "n[1,3]",
			after:     "IDLE+POWERING_DOWN IDLE IDLE+POWERING_DOWN",
			suspended: "IDLE+POWERED_DOWN IDLE IDLE+POWERED_DOWN"},
		{name: "allocated drained completing", prep: func(nodes []*Node) {
			nodes[0].State = msg.NodeStateAllocated
			nodes[1].State |= msg.NodeStateCompleting
			nodes[2].State |= msg.NodeStateRebootRequested
		}, after: "ALLOCATED IDLE+COMPLETING IDLE+REBOOT_REQUESTED", suspended: "ALLOCATED IDLE+COMPLETING IDLE+REBOOT_REQUESTED"},
		{name: "down node", prep: func(nodes []*Node) { nodes[2].State = msg.NodeStateDown }, suspend: "n[1-3]",
			after:     "IDLE+POWERING_DOWN IDLE+POWERING_DOWN DOWN+POWERING_DOWN",
			suspended: "IDLE+POWERED_DOWN IDLE+POWERED_DOWN DOWN+POWERED_DOWN"},
		{name: "never busy", prep: func(nodes []*Node) { nodes[0].LastBusy = 0 }, suspend: "n[2-3]",
			after:     "IDLE IDLE+POWERING_DOWN IDLE+POWERING_DOWN",
			suspended: "IDLE IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
		{name: "excluded nodes", cfg: powerCfg{excNodes: "n[1,3]"}, suspend: "n2",
			after: "IDLE IDLE+POWERING_DOWN IDLE", suspended: "IDLE IDLE+POWERED_DOWN IDLE"},
		{name: "excluded partition", cfg: powerCfg{excParts: []string{"q", "nosuch"}}, suspend: "n[2-3]",
			after: "IDLE IDLE+POWERING_DOWN IDLE+POWERING_DOWN", logs: "Invalid SuspendExcPart nosuch ignored",
			suspended: "IDLE IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
		{name: "keep one of three up", cfg: powerCfg{excNodes: "n[1-3]:1"}, suspend: "n[2-3]",
			after: "IDLE IDLE+POWERING_DOWN IDLE+POWERING_DOWN", suspended: "IDLE IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
		{name: "keep one, the first is busy", cfg: powerCfg{excNodes: "n[1-3]:1"},
			prep: func(nodes []*Node) { nodes[0].State = msg.NodeStateAllocated }, suspend: "n3",
			after: "ALLOCATED IDLE IDLE+POWERING_DOWN", suspended: "ALLOCATED IDLE IDLE+POWERED_DOWN"},
		{name: "bad exclusion", cfg: powerCfg{excNodes: "n[1-3]:4"}, suspend: "n[1-3]",
			after: "IDLE+POWERING_DOWN IDLE+POWERING_DOWN IDLE+POWERING_DOWN", logs: "Invalid SuspendExcNodes n[1-3]:4 ignored",
			suspended: "IDLE+POWERED_DOWN IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
		{name: "power_down asked, recently busy", prep: func(nodes []*Node) {
			for _, n := range nodes {
				n.LastBusy = 99
			}
			nodes[0].State |= msg.NodeStatePowerDown | msg.NodeStateDrain
		}, suspend: "n1", after: "IDLE+POWERING_DOWN IDLE IDLE", suspended: "IDLE+POWERED_DOWN IDLE IDLE"},
		{name: "idle_on_node_suspend", cfg: powerCfg{idleOnSuspend: true},
			prep:    func(nodes []*Node) { nodes[0].State = msg.NodeStateDown | msg.NodeStateFail },
			suspend: "n[1-3]", after: "IDLE+POWERING_DOWN IDLE+POWERING_DOWN IDLE+POWERING_DOWN",
			suspended: "IDLE+POWERED_DOWN IDLE+POWERED_DOWN IDLE+POWERED_DOWN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, idx, parts := psNodes(3, 50, 10)
			if tc.prep != nil {
				tc.prep(nodes)
			}
			ps := &powerState{cfg: tc.cfg}
			sus := make([]int, len(nodes))
			w := ps.pass(nodes, idx, parts, nil, sus, 100)
			if w.suspend != tc.suspend || w.resume != "" {
				t.Errorf("suspend %q resume %q, want suspend %q", w.suspend, w.resume, tc.suspend)
			}
			if got := psStates(nodes); got != tc.after {
				t.Errorf("after the pass: %s, want %s", got, tc.after)
			}
			var logs []string
			for _, l := range w.logs {
				if !l.debug {
					logs = append(logs, l.text)
				}
			}
			if got := strings.Join(logs, "; "); got != tc.logs {
				t.Errorf("logs %q, want %q", got, tc.logs)
			}
			// Still within SuspendTimeout: nothing more.
			if w := ps.pass(nodes, idx, parts, nil, sus, 105); w.suspend != "" {
				t.Errorf("second pass suspends %s", w.suspend)
			}
			w = ps.pass(nodes, idx, parts, nil, sus, 106)
			if got := psStates(nodes); got != tc.suspended {
				t.Errorf("after SuspendTimeout: %s, want %s", got, tc.suspended)
			}
			for _, n := range nodes {
				if n.Has(msg.NodeStatePoweredDown) && (n.LastBusy != 0 || n.PowerSaveReqTime != 0) {
					t.Errorf("%s powered down with last busy %d, request %d", n.Name, n.LastBusy, n.PowerSaveReqTime)
				}
			}
		})
	}
}

func TestPowerPassSuspendedJobs(t *testing.T) {
	nodes, idx, parts := psNodes(2, 50, 10)
	ps := &powerState{}
	w := ps.pass(nodes, idx, parts, nil, []int{1, 0}, 100)
	if w.suspend != "n2" {
		t.Errorf("suspend %q, want n2 (n1 holds a suspended job)", w.suspend)
	}
}

func TestPowerPassResume(t *testing.T) {
	nodes, idx, parts := psNodes(4, 0, 10)
	for _, n := range nodes {
		n.State |= msg.NodeStatePoweredDown
	}
	nodes[3].State |= msg.NodeStatePowerUp // scontrol power_up
	ps := &powerState{cfg: powerCfg{resumeRate: 3, resumeFailProg: "/fail"}}
	jobs := []psJob{{id: 7, nodes: []int{1, 0}}, {id: 8, nodes: []int{2}}}
	w := ps.pass(nodes, idx, parts, jobs, make([]int, 4), 1000)
	if w.resume != "n[1-3]" || w.suspend != "" {
		t.Errorf("resume %q suspend %q, want resume n[1-3] (rate 3)", w.resume, w.suspend)
	}
	wantJSON := `{"jobs":[{"job_id":7,"nodes":"n[1-2]"},{"job_id":8,"nodes":"n3"}],"all_nodes":"n[1-3]"}`
	if w.resumeJSON != wantJSON {
		t.Errorf("json %s, want %s", w.resumeJSON, wantJSON)
	}
	want := "IDLE+NOT_RESPONDING+POWERING_UP IDLE+NOT_RESPONDING+POWERING_UP IDLE+NOT_RESPONDING+POWERING_UP IDLE+POWERED_DOWN+POWER_UP"
	if got := psStates(nodes); got != want {
		t.Errorf("states %s, want %s", got, want)
	}
	if nodes[0].BootReqTime != 1000 || !nodes[0].psBooting {
		t.Errorf("boot request %d booting %v", nodes[0].BootReqTime, nodes[0].psBooting)
	}
	// 15 s on, the decayed count (3 * 45/60) allows the power_up request.
	w = ps.pass(nodes, idx, parts, nil, make([]int, 4), 1015)
	if w.resume != "n4" {
		t.Errorf("resume %q, want n4", w.resume)
	}
	// n1 registers; the others miss ResumeTimeout (20 s).
	nodes[0].State &^= msg.NodeStatePoweringUp | msg.NodeStateNoRespond
	nodes[0].psBooting = false
	if w := ps.pass(nodes, idx, parts, nil, make([]int, 4), 1020); len(w.timedOut) != 0 {
		t.Errorf("timed out at the limit: %v", w.timedOut)
	}
	w = ps.pass(nodes, idx, parts, nil, make([]int, 4), 1036)
	var down []string
	for _, n := range w.timedOut {
		down = append(down, n.Name)
	}
	if strings.Join(down, ",") != "n2,n3,n4" || w.failed != "n[2-4]" {
		t.Errorf("timed out %v, failed %q; want n2,n3,n4 (n4 woken at 1015)", down, w.failed)
	}
	for _, n := range nodes[1:3] {
		if !n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringUp) || n.BootReqTime != 0 {
			t.Errorf("%s after ResumeTimeout: %s boot request %d", n.Name, StateString(n.State), n.BootReqTime)
		}
	}
	if got := w.logs[0].text; got != "node n2 not resumed by ResumeTimeout(20) - marking down and power_save" {
		t.Errorf("log %q", got)
	}
}

func TestPowerConfig(t *testing.T) {
	ok := func(string) bool { return true }
	bad := func(p string) bool { return p != "/bad" }
	base := func() *conf.Config {
		return &conf.Config{SuspendTime: 10, SuspendProgram: "/s", ResumeProgram: "/r", SuspendRate: 60, ResumeRate: 300,
			SuspendTimeout: 30, ResumeTimeout: 60}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*conf.Config)
		parts []*Partition
		valid func(string) bool
		on    bool
		log   string
	}{
		{name: "on", on: true},
		{name: "no SuspendTime", edit: func(c *conf.Config) { c.SuspendTime = conf.Infinite32 },
			log: "power_save module disabled, SuspendTime < 0"},
		{name: "partition SuspendTime", edit: func(c *conf.Config) { c.SuspendTime = conf.Infinite32 },
			parts: []*Partition{{Name: "p", Conf: &conf.Partition{SuspendTime: 5, ResumeTimeout: conf.NoVal16}}}, on: true},
		{name: "no SuspendProgram", edit: func(c *conf.Config) { c.SuspendProgram = "" },
			log: "power_save module disabled, NULL SuspendProgram"},
		{name: "bad ResumeProgram", edit: func(c *conf.Config) { c.ResumeProgram = "/bad" }, valid: bad,
			log: "power_save module disabled, invalid ResumeProgram /bad"},
		{name: "bad ResumeFailProgram dropped", edit: func(c *conf.Config) { c.ResumeFailProgram = "/bad" }, valid: bad, on: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := base()
			if tc.edit != nil {
				tc.edit(cf)
			}
			v := tc.valid
			if v == nil {
				v = ok
			}
			pc, logs := powerConfig(cf, tc.parts, v)
			var got string
			if len(logs) > 0 {
				got = logs[0].text
			}
			if pc.enabled != tc.on || got != tc.log {
				t.Errorf("enabled %v log %q, want %v %q", pc.enabled, got, tc.on, tc.log)
			}
			if pc.enabled && pc.resumeFailProg == "/bad" {
				t.Error("invalid ResumeFailProgram kept")
			}
		})
	}
}

func TestSetPowerTimeouts(t *testing.T) {
	nodes, _, _ := psNodes(3, 0, 0)
	part := func(name string, st uint64, sto, rto uint64, members ...*Node) *Partition {
		return &Partition{Name: name, Nodes: members, Conf: &conf.Partition{
			SuspendTime: conf.Seconds(st), SuspendTimeout: conf.Seconds(sto), ResumeTimeout: conf.Seconds(rto)}}
	}
	parts := []*Partition{
		part("a", 30, conf.NoVal16, 100, nodes[0], nodes[1]),
		part("b", 50, 7, conf.NoVal16, nodes[1]),
		part("c", conf.NoVal32, conf.NoVal16, conf.NoVal16, nodes[2]),
		part("d", conf.Infinite32, conf.NoVal16, conf.NoVal16, nodes[0]),
	}
	cf := &conf.Config{SuspendTime: 10, SuspendTimeout: 30, ResumeTimeout: 60}
	setPowerTimeouts(cf, nodes, parts)
	var got []string
	for _, n := range nodes {
		got = append(got, fmt.Sprintf("%d/%d/%d", n.psSuspendTime, n.psSuspendTimeout, n.psResumeTimeout))
	}
	if want := "-1/30/100 50/7/100 10/30/60"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
}

func TestIsPowerRequest(t *testing.T) {
	for st, want := range map[uint32]bool{
		msg.NodeStatePowerDown: true, msg.NodeStatePowerUp: true,
		msg.NodeStatePowerDown | msg.NodeStatePoweredDown: true,
		msg.NodeStatePowerDown | msg.NodeStatePowerDrain:  true,
		msg.NodeStateDown: false, msg.NodeResume: false, msg.NodeStatePoweredDown: false,
	} {
		if isPowerRequest(st) != want {
			t.Errorf("%#x: %v", st, !want)
		}
	}
}

// A job whose node timed out (DOWN now) or was drained while powered down
// is killed at the next job tick; a pass that comes first must not wake
// its nodes again (real requeued the job when the node went down).
func TestPowerPassSkipsDoomedJobs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state uint32
	}{
		{"down", msg.NodeStateDown | msg.NodeStatePoweredDown | msg.NodeStateNoRespond},
		{"drained", msg.NodeStateIdle | msg.NodeStatePoweredDown | msg.NodeStateDrain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, idx, parts := psNodes(3, 0, 10)
			for _, n := range nodes {
				n.State |= msg.NodeStatePoweredDown
			}
			nodes[1].State = tc.state
			ps := &powerState{cfg: powerCfg{}}
			jobs := []psJob{{id: 2, nodes: []int{0, 1}}, {id: 3, nodes: []int{2}}}
			if w := ps.pass(nodes, idx, parts, jobs, make([]int, 3), 1000); w.resume != "n3" {
				t.Errorf("resume %q, want n3 (job 2 is being killed)", w.resume)
			}
		})
	}
}
