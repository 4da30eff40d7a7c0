package ctld

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// maxRegFrequency is MAX_REG_FREQUENCY: each node is asked to register
// again about every this many pings.
const maxRegFrequency = 20

// minCheckinTime is MIN_CHECKIN_TIME: the first ping cycle runs this long
// after start-up.
const minCheckinTime = 3 * time.Second

func (c *Controller) kickPing() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// pingInterval is SlurmdTimeout/3, or 100 s when SlurmdTimeout is 0.
func (c *Controller) pingInterval() time.Duration {
	t := c.Config().SlurmdTimeout
	if t == 0 {
		return 100 * time.Second
	}
	return t / 3
}

// pingCycle runs ping_nodes periodically, and at once when something asks
// for it (a resumed node that must register).
func (c *Controller) pingCycle(ctx context.Context) {
	timer := time.NewTimer(minCheckinTime)
	defer timer.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	busy := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			timer.Reset(c.pingInterval())
		case <-c.kick:
		}
		select {
		case busy <- struct{}{}:
		default:
			continue // a cycle is still running (is_ping_done)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-busy }()
			c.PingNodes(ctx)
		}()
	}
}

// PingNodes is one ping_nodes cycle: nodes silent for SlurmdTimeout go
// DOWN "Not responding", nodes in UNKNOWN state (or not booted, or in this
// cycle's slice) get REQUEST_NODE_REGISTRATION_STATUS, others that have
// not been heard from lately get REQUEST_PING; both through forwarding
// trees. It returns when every node answered or failed.
func (c *Controller) PingNodes(ctx context.Context) {
	ping, reg := c.planPing()
	var wg sync.WaitGroup
	for _, job := range []struct {
		t     msgtype.Type
		nodes []string
	}{{msgtype.REQUEST_PING, ping}, {msgtype.REQUEST_NODE_REGISTRATION_STATUS, reg}} {
		if len(job.nodes) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.sendPing(ctx, job.t, job.nodes)
		}()
	}
	wg.Wait()
}

func (c *Controller) planPing() (ping, reg []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg
	nowT := c.now()
	now := nowT.Unix()
	timeout := int64(cfg.SlurmdTimeout / time.Second)
	var deadTime int64
	if c.lastPing != 0 && c.lastPingTO != 0 {
		deadTime = c.lastPing - c.lastPingTO
	}
	stillLive := now - timeout/3
	c.lastPing, c.lastPingTO = now, timeout
	oldLoad := now - timeout

	maxReg := max(cfg.TreeWidth, 1)
	c.regOffset += maxReg
	if c.regOffset > len(c.nodes) && c.regOffset >= maxReg*maxRegFrequency {
		c.regOffset = 0
	}
	var down []string
	for _, n := range c.nodes {
		if n.IsFuture() || n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringDown) ||
			n.Has(msg.NodeStatePoweringUp) || n.Has(msg.NodeStateInvalidReg) || n.Has(msg.NodeStateRebootIssued) {
			continue
		}
		if timeout == 0 && !n.IsUnknown() && !n.IsNoRespond() {
			continue
		}
		if n.LastResponse != 0 && n.LastResponse <= deadTime && !n.IsDown() {
			down = append(down, n.Name)
			c.setNodeDown(n, "Not responding", now)
			continue
		}
		if n.IsUnknown() || n.BootTime == 0 || (n.Index >= c.regOffset && n.Index < c.regOffset+maxReg) {
			reg = append(reg, n.Name)
			continue
		}
		if !n.IsNoRespond() && n.LastResponse >= stillLive && n.CPULoadTime >= oldLoad && n.FreeMemTime >= oldLoad {
			continue
		}
		if n.IsNoRespond() && n.IsDown() {
			continue
		}
		ping = append(ping, n.Name)
	}
	if len(down) > 0 {
		c.log.Error(fmt.Sprintf("Nodes %s not responding, setting DOWN", hostlist.Compress(down)))
		c.lastNodeUpdate = now
	}
	c.pingNow = false
	return ping, reg
}

func (c *Controller) sendPing(ctx context.Context, t msgtype.Type, nodes []string) {
	sent := c.now().Unix()
	cfg := c.Config()
	res, err := c.sendAgent(ctx, nodes, forward.Request{MsgType: t, RUID: cfg.SlurmdUID})
	if err != nil {
		c.log.Error(fmt.Sprintf("ping: %v", err))
		return
	}
	var failed []string
	for _, r := range res {
		if r.Failed() {
			failed = append(failed, r.Node)
			c.nodeNotResp(r.Node, sent, r.MsgType)
			continue
		}
		c.nodeDidResp(r)
	}
	if len(failed) > 0 {
		c.log.Error(fmt.Sprintf("Nodes %s not responding", hostlist.Compress(failed)))
	}
}

// nodeDidResp is _node_did_resp, with the ping reply's load and memory.
func (c *Controller) nodeDidResp(r forward.Result) {
	var up bool
	c.mu.Lock()
	n := c.nodeIndex[r.Node]
	if n == nil {
		c.mu.Unlock()
		return
	}
	now := c.now().Unix()
	wasAvail := n.Available()
	if p := pingReply(r.Body); p != nil {
		if n.CPULoad != p.CPULoad {
			n.CPULoad = p.CPULoad
			c.lastNodeUpdate = now
		}
		n.CPULoadTime = now
		if n.FreeMem != p.FreeMem {
			n.FreeMem = p.FreeMem
			c.lastNodeUpdate = now
		}
		n.FreeMemTime = now
	}
	if n.IsFuture() || waitingForNodePowerDown(n, int64(c.cfg.Conf.SuspendTimeout)) {
		c.mu.Unlock()
		return
	}
	n.LastResponse = now
	if waitingForNodeBoot(n) {
		// A reply from before the reboot: the node is back when it
		// registers with a newer boot time (_node_did_resp).
		c.mu.Unlock()
		return
	}
	if n.IsNoRespond() || n.Has(msg.NodeStatePoweringUp) {
		c.log.Info(fmt.Sprintf("Node %s now responding", n.Name))
		n.State &^= msg.NodeStateNoRespond | msg.NodeStatePoweringUp | msg.NodeStateMaint
		c.lastNodeUpdate = now
	}
	flags := n.State &^ msg.NodeStateBase
	if n.IsUnknown() {
		n.LastBusy = now
		if n.RunJobs > 0 {
			n.State = msg.NodeStateAllocated | flags
		} else {
			n.State = msg.NodeStateIdle | flags
		}
		c.lastNodeUpdate = now
		if !n.IsDrain() && !n.IsFail() {
			nodeUp(n)
		}
	}
	cfg := c.cfg
	if n.IsDown() && !n.Has(msg.NodeStateInvalidReg) &&
		(cfg.ReturnToService == 2 || (cfg.ReturnToService == 1 && n.Reason == "Not responding")) {
		n.LastBusy = now
		n.State = msg.NodeStateIdle | flags
		c.log.Info(fmt.Sprintf("node_did_resp: node %s returned to service", n.Name))
		c.trigNodeUp(n)
		c.lastNodeUpdate = now
		if !n.IsDrain() && !n.IsFail() {
			nodeUp(n)
		}
	}
	up = !wasAvail && n.Available()
	c.mu.Unlock()
	if up && c.opts.Hooks.NodeUp != nil {
		c.opts.Hooks.NodeUp(r.Node)
	}
}

// nodeNotResp is node_not_resp: the node gets NOT_RESPONDING; it goes DOWN
// only when silent for SlurmdTimeout (planPing).
func (c *Controller) nodeNotResp(name string, sent int64, t msgtype.Type) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeIndex[name]
	if n == nil {
		return
	}
	if t != msgtype.RESPONSE_FORWARD_FAILED {
		n.LastResponse = max(sent-1, n.LastResponse)
	}
	if n.IsNoRespond() || n.Has(msg.NodeStatePoweringDown) || n.Has(msg.NodeStatePoweredDown) {
		return
	}
	if n.LastResponse >= sent {
		return
	}
	n.State |= msg.NodeStateNoRespond
	c.lastNodeUpdate = c.now().Unix()
}

func pingReply(b any) *msg.PingSlurmdResponse {
	switch v := b.(type) {
	case *msg.PingSlurmdResponse:
		return v
	case msg.PingSlurmdResponse:
		return &v
	}
	return nil
}
