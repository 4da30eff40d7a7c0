package ctld

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rpcUpdateNode is _slurm_rpc_update_node.
func (c *Controller) rpcUpdateNode(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.UpdateNodeRequest](r.Body)
	// 22.05 notes a reconfig event after every node update RPC, refused
	// or not.
	defer c.trig.Reconfig()
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, UPDATE_NODE RPC from uid=%d", r.Identity.UID))
		c.log.Info(fmt.Sprintf("_slurm_rpc_update_node for %s: %s", req.NodeNames.Value, slurmerr.Message(slurmerr.ESLURM_USER_ID_MISSING)))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	rc, up, settle := c.updateNode(req, r.Identity.UID)
	if settle != nil {
		settle(ctx)
	}
	if rc != 0 {
		c.log.Info(fmt.Sprintf("_slurm_rpc_update_node for %s: %s", req.NodeNames.Value, slurmerr.Message(rc)))
	}
	if c.opts.Hooks.NodeUp != nil {
		for _, n := range up {
			c.opts.Hooks.NodeUp(n)
		}
	}
	if len(up) > 0 || rc == 0 {
		c.kickPing()
		// Features and weights count for the jobs still pending.
		c.kickScheduler()
	}
	return server.RC(rc)
}

// UpdateNode is update_node: state and reason, available and active
// features, weight, CpuBind, comment and extra (NodeAddr, NodeHostname
// and Gres are refused as not supported). It returns Slurm's error code
// and the nodes that became available. As in 22.05 the nodes are changed
// one after the other; an unknown node stops the update there.
func (c *Controller) UpdateNode(req *msg.UpdateNodeRequest, uid uint32) (int, []string) {
	rc, up, settle := c.updateNode(req, uid)
	if settle != nil {
		settle(context.Background())
	}
	return rc, up
}

// updateNode is UpdateNode; the jobs on nodes it set DOWN are killed
// before it releases the lock (as update_node's kill_running_job_by_node_name),
// so that no other update in between (a resume) leaves them running.
// settle, when not nil, does the rest outside the lock.
func (c *Controller) updateNode(req *msg.UpdateNodeRequest, uid uint32) (rc int, up []string, settle func(context.Context)) {
	if !req.NodeNames.Valid {
		c.log.Info("update_node: invalid node name")
		return slurmerr.ESLURM_INVALID_NODE_NAME, nil, nil
	}
	for _, unsupported := range []struct {
		set  bool
		what string
	}{
		{req.NodeAddr.Valid, "NodeAddr"}, {req.NodeHostname.Valid, "NodeHostname"}, {req.Gres.Valid, "Gres"},
	} {
		if unsupported.set {
			c.log.Error(fmt.Sprintf("update_node: changing %s is not supported by goslurm's slurmctld", unsupported.what))
			return slurmerr.ESLURM_NOT_SUPPORTED, nil, nil
		}
	}
	names, err := expandNodeSpec(req.NodeNames.Value)
	if err != nil || len(names) == 0 {
		c.log.Info(fmt.Sprintf("update_node: expansion of node specification '%s' resulted in zero nodes", req.NodeNames.Value))
		return slurmerr.ESLURM_INVALID_NODE_NAME, nil, nil
	}
	c.mu.Lock()
	defer func() {
		settle = c.settleDownNodesLocked() // jobs.go
		c.mu.Unlock()
	}()
	if strings.EqualFold(req.NodeNames.Value, "ALL") {
		names = names[:0]
		for _, n := range c.nodes {
			names = append(names, n.Name)
		}
	}
	now := c.now().Unix()
	// A features request found invalid is dropped for the remaining nodes
	// too (22.05 frees it in the request).
	feat, featAct := req.Features, req.FeaturesAct
	var updated []*Node
	for _, name := range names {
		n := c.nodeIndex[name]
		if n == nil {
			c.log.Error(fmt.Sprintf("update_node: node %s does not exist", name))
			rc = slurmerr.ESLURM_INVALID_NODE_NAME
			break
		}
		updated = append(updated, n)
		wasAvail := n.Available()
		if req.CPUBind != 0 {
			c.log.Info(fmt.Sprintf("update_node: setting CpuBind to %#x for node %s", req.CPUBind, n.Name))
			n.CPUBind = req.CPUBind
			if req.CPUBind == conf.CPUBindOff {
				n.CPUBind = 0
			}
		}
		if feat.Valid || featAct.Valid {
			act, avail := n.FeaturesAct, n.Features
			if featAct.Valid {
				act = featAct.Value
			}
			if feat.Valid {
				avail = feat.Value
			}
			if !validFeaturesAct(act, avail) {
				c.log.Info(fmt.Sprintf("update_node: Invalid ActiveFeatures ('%s' not subset of '%s' on node %s)", act, avail, n.Name))
				rc = slurmerr.ESLURM_ACTIVE_FEATURE_NOT_SUBSET
				feat, featAct = msg.NullString{}, msg.NullString{}
			}
		}
		if feat.Valid || featAct.Valid {
			avail, act := n.Features, n.FeaturesAct
			if feat.Valid {
				avail = feat.Value
				if !featAct.Valid {
					// No node_features plugin: the active features
					// follow the available ones.
					act = feat.Value
				}
			}
			if featAct.Valid {
				act = featAct.Value
				// update_node_active_features' code replaces the one
				// of the nodes before (22.05 does the same).
				rc = 0
			}
			n.setFeatures(avail, act)
			// Set from the request, the active features are a string
			// even when empty.
			n.actEmpty = act == ""
		}
		if req.Extra.Valid {
			n.Extra = req.Extra.Value
		}
		if req.Comment.Valid {
			n.Comment = req.Comment.Value
		}
		state := req.NodeState
		if equivalentState(n, state) && n.Reason == req.Reason.Value {
			continue
		}
		if req.Reason.Valid && req.Reason.Value != "" {
			n.Reason, n.ReasonTime, n.ReasonUID = req.Reason.Value, now, uid
			c.log.Info(fmt.Sprintf("update_node: node %s reason set to: %s", n.Name, n.Reason))
		}
		if isPowerRequest(state) && c.powerOn() {
			c.setPowerState(n, state, now) // powersave_update.go
			continue
		}
		nrc, acctUpdated := c.setNodeState(n, state, now)
		if nrc != 0 {
			rc = nrc
		}
		if !acctUpdated && !n.IsDown() && !n.IsDrain() && !n.IsFail() {
			nodeUp(n)
		}
		if !wasAvail && n.Available() {
			up = append(up, n.Name)
		}
	}
	c.lastNodeUpdate = now
	if rc == 0 && feat.Valid {
		c.log.Debug(fmt.Sprintf("update_node_avail_features: nodes %s available features set to: %s", req.NodeNames.Value, feat.Value))
	}
	// The weight belongs to the configuration record in 22.05: set once
	// every node was found, and only when nothing failed before.
	if rc == 0 && req.Weight != noVal {
		for _, n := range updated {
			n.Weight = req.Weight
		}
		c.log.Info(fmt.Sprintf("_update_node_weight: nodes %s weight set to: %d", req.NodeNames.Value, req.Weight))
	}
	return rc, up, nil
}

// expandNodeSpec expands a node specification; "ALL" is resolved by the
// caller against the node table.
func expandNodeSpec(spec string) ([]string, error) {
	if strings.EqualFold(spec, "ALL") {
		return []string{"ALL"}, nil
	}
	return hostlist.Expand(spec)
}

// validFeaturesAct is _valid_features_act: every active feature must be
// one of the available ones.
func validFeaturesAct(act, avail string) bool {
	if act == "" {
		return true
	}
	if avail == "" {
		return false
	}
	have := strings.Split(avail, ",")
	for _, f := range strings.Split(act, ",") {
		if !slices.Contains(have, f) {
			return false
		}
	}
	return true
}

// requireNodeReg is _require_node_reg: mark the node not responding until
// it registers again, and ping now.
func (c *Controller) requireNodeReg(n *Node, now int64) {
	n.State |= msg.NodeStateNoRespond
	n.LastResponse = now
	n.BootTime = 0
	c.pingNow = true
}

func equivalentState(n *Node, st uint32) bool {
	switch {
	case st == noVal:
		return true
	case st == msg.NodeStateDown && n.IsDown(),
		st == msg.NodeStateDrain && n.IsDrain(),
		st == msg.NodeStateFail && n.IsFail():
		return true
	}
	return false
}

// validStateChange is _valid_node_state_change with power saving off (the
// POWER_* requests are refused; with it on UpdateNode takes them first).
func validStateChange(old, st uint32) bool {
	if old == st {
		return true
	}
	base := old & msg.NodeStateBase
	flags := old &^ msg.NodeStateBase
	switch st {
	case msg.NodeStateDown, msg.NodeStateDrain, msg.NodeStateFail, msg.NodeStateNoRespond:
		return true
	case msg.NodeStateUndrain:
		return flags&msg.NodeStateInvalidReg == 0
	case msg.NodeResume:
		if flags&msg.NodeStatePoweringDown != 0 {
			return true
		}
		if flags&msg.NodeStateInvalidReg != 0 {
			return false
		}
		return base == msg.NodeStateDown || base == msg.NodeStateFuture ||
			flags&(msg.NodeStateDrain|msg.NodeStateFail|msg.NodeStateRebootRequested) != 0
	case msg.NodeStateRebootCancel:
		return flags&msg.NodeStateRebootRequested != 0
	case msg.NodeStateFuture:
		return base == msg.NodeStateDown || base == msg.NodeStateIdle
	case msg.NodeStateIdle:
		return flags&msg.NodeStateInvalidReg == 0 && (base == msg.NodeStateDown || base == msg.NodeStateIdle)
	case msg.NodeStateAllocated:
		return base == msg.NodeStateAllocated
	}
	return false
}

// setNodeState is update_node's state change for one node: Slurm's error
// code, and whether accounting was told the node is up (which clears the
// reason).
func (c *Controller) setNodeState(n *Node, state uint32, now int64) (int, bool) {
	if state == noVal {
		return 0, false
	}
	base := n.Base()
	if isPowerRequest(state) {
		c.log.Info("attempt to do power work on node but PowerSave is disabled")
	}
	if !validStateChange(n.State, state) {
		c.log.Info(fmt.Sprintf("Invalid node state transition requested for node %s from=%s to=%s",
			n.Name, StateString(n.State), StateString(state)))
		return slurmerr.ESLURM_INVALID_NODE_STATE, false
	}
	if state == msg.NodeStateRebootCancel {
		return c.cancelReboot(n)
	}
	flags := n.State &^ msg.NodeStateBase
	acctUpdated := false
	switch state {
	case msg.NodeResume:
		if n.IsIdle() && (n.IsDrain() || n.IsFail()) {
			nodeUp(n)
			acctUpdated = true
		}
		n.State &^= msg.NodeStateDrain | msg.NodeStateFail | msg.NodeStateRebootRequested | msg.NodeStateRebootIssued
		if n.Has(msg.NodeStatePoweringDown) {
			// No wait for SuspendTimeout: taken as powered down now.
			n.State &^= msg.NodeStateInvalidReg | msg.NodeStatePoweringDown
			n.State |= msg.NodeStatePoweredDown
			n.PowerSaveReqTime = 0
		}
		switch {
		case base == msg.NodeStateDown, base == msg.NodeStateFuture:
			state = msg.NodeStateIdle
			c.requireNodeReg(n, now)
		case flags&msg.NodeStateDrain != 0:
			state = base
			c.requireNodeReg(n, now)
		default:
			state = base
		}
	case msg.NodeStateUndrain:
		if n.IsIdle() && n.IsDrain() {
			nodeUp(n)
			acctUpdated = true
		}
		n.State &^= msg.NodeStateDrain
		c.requireNodeReg(n, now)
		state = base
	}
	switch {
	case state == msg.NodeStateDown:
		c.makeNodeDown(n)
	case state == msg.NodeStateFuture:
		c.makeNodeDown(n)
		n.State = msg.NodeStateFuture
	case state == msg.NodeStateIdle:
		if n.IsDown() {
			c.trigNodeUp(n)
		}
		if n.IsDown() || (n.IsIdle() && (n.IsDrain() || n.IsFail())) {
			nodeUp(n)
			acctUpdated = true
		}
		n.State &^= msg.NodeStateDrain | msg.NodeStateFail
		n.LastBusy = now
		if n.Has(msg.NodeStatePoweredDown) {
			n.LastBusy = 0 // as update_node: not busy since it was powered down
		}
	case state == msg.NodeStateAllocated:
	case state == msg.NodeStateDrain || state == msg.NodeStateFail:
		if (n.IsAllocated() || n.Base() == msg.NodeStateMixed) &&
			(n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringUp)) && c.jobs != nil {
			// Its jobs would wait for a node that is not coming: they
			// are killed (requeued when they can be) by the job tick.
			c.log.Info(fmt.Sprintf("update_node: DRAIN/FAIL request for node %s which is allocated and being powered up. Requeuing jobs", n.Name))
			c.powerKill = append(c.powerKill, n.Name)
		}
		n.State &^= msg.NodeStateDrain | msg.NodeStateFail
		n.State |= state
		state = n.State
		c.trigNodeDrained(n)
	case state == msg.NodeStateNoRespond:
		n.State |= msg.NodeStateNoRespond
		state = base
	case state&msg.NodeStateBase == state:
		// base states set as they are (after the cases above)
	default:
		c.log.Info(fmt.Sprintf("Invalid node state specified %d", state))
		return slurmerr.ESLURM_INVALID_NODE_STATE, false
	}
	n.State = state | (n.State &^ msg.NodeStateBase)
	if !n.Has(msg.NodeStateRebootRequested) && !n.Has(msg.NodeStateRebootIssued) {
		n.NextState = noVal
	}
	n.resuming = false
	c.log.Info(fmt.Sprintf("update_node: node %s state set to %s", n.Name, StateString(state)))
	return 0, acctUpdated
}
