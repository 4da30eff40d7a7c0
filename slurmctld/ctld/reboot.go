package ctld

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Node reboot as 22.05 does it (scontrol reboot, cancel_reboot):
//
//   - REQUEST_REBOOT_NODES marks the nodes REBOOT_REQUESTED, with the
//     request's next state and reason ("reboot requested" by default);
//     ASAP also drains them ("Reboot ASAP") and makes the next state
//     RESUME, with UNDRAIN when they were not drained before.
//   - Every second, each requested node that is idle (no suspended job,
//     responding) or down is set DOWN+REBOOT_ISSUED, its reason gets
//     " : reboot issued", and slurmd is sent REQUEST_REBOOT_NODES (it
//     runs RebootProgram). Others wait; completing nodes too.
//   - A registration from a boot before the request is ignored (the node
//     has not rebooted yet). A later one returns the node to service
//     (register.go): IDLE, or DOWN with " : reboot complete" when the
//     next state is DOWN.
//   - Every PERIODIC_TIMEOUT (30 s from the controller's start) nodes
//     that did not come back within ResumeTimeout of the request go DOWN
//     with " : reboot timed out".
//   - cancel_reboot (REQUEST_UPDATE_NODE with CANCEL_REBOOT) clears a
//     request that was not issued yet (update.go, cancelReboot).

// rebootFlagASAP is REBOOT_FLAGS_ASAP.
const rebootFlagASAP uint16 = 0x0001

// periodicTimeout is PERIODIC_TIMEOUT: how often the reboot time-outs are
// checked (with the job time limits in 22.05).
const periodicTimeout = 30

// eacces is errno EACCES, the answer to a reboot request by an ordinary
// user ("Permission denied").
const eacces = 13

// rpcRebootNodes is _slurm_rpc_reboot_nodes: root/SlurmUser only.
func (c *Controller) rpcRebootNodes(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.RebootNodesRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, REBOOT_NODES RPC from uid=%d", r.Identity.UID))
		return server.RC(eacces)
	}
	return server.RC(c.RebootNodes(req, r.Identity.UID))
}

// RebootNodes marks the request's nodes (every node for none or "ALL")
// REBOOT_REQUESTED. Nodes that are FUTURE, powered down or already
// rebooting are left alone. It returns Slurm's error code: an unknown
// node refuses the whole request.
func (c *Controller) RebootNodes(req *msg.RebootNodesRequest, uid uint32) int {
	var names []string
	all := !req.NodeList.Valid || strings.EqualFold(req.NodeList.Value, "ALL")
	if !all {
		var err error
		names, err = hostlist.Expand(req.NodeList.Value)
		if err != nil || len(names) == 0 {
			c.log.Error(fmt.Sprintf("_slurm_rpc_reboot_nodes: Bad node list in REBOOT_NODES request: \"%s\"", req.NodeList.Value))
			return slurmerr.ESLURM_INVALID_NODE_NAME
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pick := make([]bool, len(c.nodes))
	if all {
		for i := range pick {
			pick[i] = true
		}
	}
	for _, name := range names {
		n := c.nodeIndex[name]
		if n == nil {
			c.log.Error(fmt.Sprintf("_slurm_rpc_reboot_nodes: Bad node list in REBOOT_NODES request: \"%s\"", req.NodeList.Value))
			return slurmerr.ESLURM_INVALID_NODE_NAME
		}
		pick[n.Index] = true
	}
	now := c.now().Unix()
	var queued []string
	for _, n := range c.nodes {
		if !pick[n.Index] {
			continue
		}
		if n.IsFuture() || n.State&(msg.NodeStateRebootRequested|msg.NodeStateRebootIssued|
			msg.NodeStatePowerDown|msg.NodeStatePoweredDown|msg.NodeStatePoweringDown) != 0 {
			continue
		}
		n.State |= msg.NodeStateRebootRequested
		n.NextState = req.NextState
		if req.NextState == msg.NodeResume {
			n.resuming = true
		}
		if req.Reason.Valid {
			n.Reason, n.ReasonTime, n.ReasonUID = req.Reason.Value, now, uid
		}
		if req.Flags&rebootFlagASAP != 0 {
			if n.NextState == noVal {
				n.NextState = msg.NodeResume
			}
			if !n.IsDrain() {
				n.NextState |= msg.NodeStateUndrain
			}
			n.State |= msg.NodeStateDrain
			if n.Reason == "" {
				n.Reason, n.ReasonTime, n.ReasonUID = "Reboot ASAP", now, uid
			}
		}
		if n.Reason == "" {
			n.Reason, n.ReasonTime, n.ReasonUID = "reboot requested", now, uid
		}
		queued = append(queued, n.Name)
	}
	if len(queued) > 0 {
		// 22.05 leaves last_node_update alone here; it is set so that
		// clients asking "changed since" see the new flags at once.
		c.lastNodeUpdate = now
		c.log.Info("reboot request queued for nodes " + hostlist.Compress(queued))
	}
	return 0
}

// setNodeRebootReason is set_node_reboot_reason: the message is appended
// to the node's reason (" : " between) unless the reason holds it
// already; the reason is then SlurmUser's, dated now.
func (c *Controller) setNodeRebootReason(n *Node, message string, now int64) {
	switch {
	case n.Reason != "" && !strings.Contains(n.Reason, message):
		n.Reason += " : " + message
	default:
		n.Reason = message
	}
	n.ReasonTime, n.ReasonUID = now, c.cfg.SlurmUID
}

// queueReboots is _queue_reboot_msg, under the lock: the requested nodes
// that can reboot now are set DOWN+REBOOT_ISSUED and returned; pending
// reports whether requested nodes are left waiting (busy, completing,
// not responding).
func (c *Controller) queueReboots(now int64) (send []string, pending bool) {
	suspended := c.suspendedJobsPerNode()
	for _, n := range c.nodes {
		if !n.Has(msg.NodeStateRebootRequested) {
			continue
		}
		if n.Has(msg.NodeStateRebootIssued) {
			c.log.Debug(fmt.Sprintf("_queue_reboot_msg: Still waiting for boot of node %s", n.Name))
			continue
		}
		if n.Has(msg.NodeStateCompleting) {
			pending = true
			continue
		}
		var want bool
		switch {
		case n.IsIdle():
			want = !n.IsNoRespond() && !n.Has(msg.NodeStatePoweringUp) && suspended[n.Index] == 0
		case n.IsFuture():
			want = n.LastResponse == 0
		case n.IsDown():
			want = true
		}
		if !want {
			pending = true
			continue
		}
		send = append(send, n.Name)
		n.State = msg.NodeStateDown | (n.State &^ msg.NodeStateBase)
		n.State &^= msg.NodeStateRebootRequested
		n.State |= msg.NodeStateRebootIssued
		n.BootReqTime = now
		c.setNodeRebootReason(n, "reboot issued", now)
	}
	if len(send) > 0 {
		c.log.Debug("Issuing reboot request for nodes " + hostlist.Compress(send))
		c.lastNodeUpdate = now
	}
	return send, pending
}

// suspendedJobsPerNode counts the suspended jobs on each node (the node
// record's sus_job_cnt): an idle node holding one is not rebooted.
func (c *Controller) suspendedJobsPerNode() []int {
	out := make([]int, len(c.nodes))
	if c.jobs == nil {
		return out
	}
	for _, j := range c.jobs.m.Jobs() {
		if j.Base() != msg.JobSuspended {
			continue
		}
		for _, i := range j.NodeIdx {
			if i >= 0 && i < len(out) {
				out[i]++
			}
		}
	}
	return out
}

// checkRebootNodes is check_reboot_nodes, under the lock: a node whose
// reboot was issued more than ResumeTimeout ago and that has not
// registered since goes DOWN, its reason ending " : reboot timed out".
// It reports whether reboots are still awaited.
func (c *Controller) checkRebootNodes(now int64) (waiting bool) {
	timeout := int64(c.cfg.Conf.ResumeTimeout)
	for _, n := range c.nodes {
		// With power saving on, its own pass times out the nodes it woke.
		booting := n.Has(msg.NodeStateRebootIssued) || (!c.powerOn() && n.Has(msg.NodeStatePoweringUp))
		if !booting || n.BootReqTime == 0 {
			continue
		}
		if n.BootReqTime+timeout >= now {
			waiting = true
			continue
		}
		c.setNodeRebootReason(n, "reboot timed out", now)
		n.State &^= msg.NodeStatePoweringUp | msg.NodeStateRebootIssued | msg.NodeStateDrain
		n.BootReqTime = 0
		n.resuming = false
		c.setNodeDown(n, "", now)
		c.log.Info(fmt.Sprintf("reboot of node %s timed out, setting it DOWN", n.Name))
	}
	return waiting
}

// waitingForNodeBoot is waiting_for_node_boot: the node was told to
// reboot (or power up) and the boot time it reports is older than the
// request, so it has not rebooted yet.
func waitingForNodeBoot(n *Node) bool {
	return (n.Has(msg.NodeStatePoweringUp) || n.Has(msg.NodeStateRebootIssued)) && n.BootTime < n.BootReqTime
}

// rebootWork reports whether any node has a reboot requested or under
// way (the loop must keep running). Called under the lock.
func (c *Controller) rebootWork() bool {
	for _, n := range c.nodes {
		if n.Has(msg.NodeStateRebootRequested) || (n.Has(msg.NodeStateRebootIssued) && n.BootReqTime != 0) {
			return true
		}
	}
	return false
}

// runReboots is the part of 22.05's background loop that handles
// reboots (want_nodes_reboot, check_reboot_nodes): every second the
// requested reboots whose nodes are free are issued, and the time-outs
// are checked every PERIODIC_TIMEOUT, until ctx ends. A pass with
// nothing requested or awaited is one look at the node table.
func (c *Controller) runReboots(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if send, _ := c.rebootStep(); len(send) > 0 {
			c.sendReboot(send)
		}
	}
}

// rebootStep is one pass of the loop under the lock: the reboots to send,
// the time-out check when a PERIODIC_TIMEOUT boundary (counted from the
// controller's start) was crossed, and whether work remains.
func (c *Controller) rebootStep() (send []string, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now().Unix()
	send, pending := c.queueReboots(now)
	since := c.boot + (now-c.boot)/periodicTimeout*periodicTimeout
	if c.rebootChecked < since {
		c.rebootChecked = since
		c.checkRebootNodes(now)
	}
	return send, pending || c.rebootWork()
}

// sendReboot sends REQUEST_REBOOT_NODES to the nodes (no reply expected;
// slurmd runs RebootProgram). The body is the empty request 22.05's agent
// packs (no features, next state NO_VAL).
func (c *Controller) sendReboot(nodes []string) {
	data, err := c.encode(msgtype.REQUEST_REBOOT_NODES, &msg.RebootNodesRequest{NextState: noVal})
	if err != nil {
		c.log.Error(fmt.Sprintf("agent: %v", err))
		return
	}
	cfg := c.Config()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.MessageTimeout+cfg.TCPTimeout)
	defer cancel()
	res, err := c.sendAgent(ctx, nodes, forward.Request{MsgType: msgtype.REQUEST_REBOOT_NODES, Body: data, RUID: auth.UIDAny})
	if err != nil {
		c.log.Error(fmt.Sprintf("agent: %v", err))
		return
	}
	for _, r := range res {
		if r.Failed() {
			c.log.Error(fmt.Sprintf("agent/is_node_resp: node:%s RPC:%s : %s", r.Node, msgtype.REQUEST_REBOOT_NODES, r))
		}
	}
}

// cancelReboot is update_node's CANCEL_REBOOT for one node: a reboot not
// issued yet is forgotten (with ASAP's drain and reason when the node was
// not drained before); one already issued cannot be cancelled.
func (c *Controller) cancelReboot(n *Node) (int, bool) {
	if n.Has(msg.NodeStateRebootIssued) {
		c.log.Info(fmt.Sprintf("REBOOT on node %s already in progress -- unable to cancel", n.Name))
		return slurmerr.ESLURM_REBOOT_IN_PROGRESS, false
	}
	n.State &^= msg.NodeStateRebootRequested
	// NO_VAL has the UNDRAIN bit too: a request without a next state
	// is undone as an ASAP one (as 22.05 does).
	if n.NextState&^msg.NodeStateBase&msg.NodeStateUndrain != 0 {
		n.State &^= msg.NodeStateDrain
		n.Reason, n.ReasonTime, n.ReasonUID = "", 0, noVal
	}
	n.NextState = noVal
	n.resuming = false
	c.log.Info(fmt.Sprintf("update_node: node %s state set to %s", n.Name, StateString(n.Base())))
	return 0, false
}
