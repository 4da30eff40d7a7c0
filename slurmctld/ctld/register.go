package ctld

import (
	"context"
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// Status codes a slurmd reports in a registration.
const (
	eslurmdPrologFailed   = 4022
	eslurmdSetupEnvFailed = 4014
)

// rpcNodeRegistration is _slurm_rpc_node_registration: validate the
// registration and answer RESPONSE_NODE_REGISTRATION (when asked) or RC 0.
// An invalid registration is still answered 0, so slurmd stops retrying.
func (c *Controller) rpcNodeRegistration(ctx context.Context, r *server.Request) *server.Response {
	reg := bodyOf[msg.NodeRegistration](r.Body)
	cfg := c.Config()
	if !cfg.SlurmUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, NODE_REGISTER RPC from uid=%d", r.Identity.UID))
		c.log.Error(fmt.Sprintf("_slurm_rpc_node_registration node=%s: %s", reg.NodeName.Value,
			slurmerr.Message(slurmerr.ESLURM_USER_ID_MISSING)))
		return server.RC(0)
	}
	if reg.DynamicType != msg.DynNodeNone {
		c.log.Error(fmt.Sprintf("_slurm_rpc_node_registration node=%s: dynamic nodes are not supported by goslurm's slurmctld", reg.NodeName.Value))
		return server.RC(0)
	}
	if reg.HashVal != noVal && cfg.HashVal != noVal && reg.HashVal != cfg.HashVal &&
		!c.debugFlagOn("NO_CONF_HASH") {
		c.log.Error(fmt.Sprintf("Node %s appears to have a different slurm.conf than the slurmctld.  This could cause issues with communication and functionality.  Please review both files and make sure they are the same.  If this is expected ignore, and set DebugFlags=NO_CONF_HASH in your slurm.conf.", reg.NodeName.Value))
	}
	newlyUp, out, err := c.registerNode(reg, uint16(r.Header.Version))
	c.waitResync(ctx, out)
	var resp *server.Response
	switch {
	case err != nil:
		c.log.Error(fmt.Sprintf("_slurm_rpc_node_registration node=%s: %v", reg.NodeName.Value, err))
		resp = server.RC(0)
	case reg.Flags&msg.SlurmdRegFlagResp == 0:
		resp = server.RC(0)
	default:
		resp = &server.Response{MsgType: msgtype.RESPONSE_NODE_REGISTRATION, Body: &msg.NodeRegResponse{Tres: c.clusterTres()}}
	}
	if newlyUp && c.opts.Hooks.NodeUp != nil {
		c.opts.Hooks.NodeUp(reg.NodeName.Value)
	}
	if len(out.Actions) > 0 {
		// The kills go out once slurmd has its answer (agent queue).
		acts := out.Actions
		c.jobs.acts.Add(1)
		resp.After = func(error) {
			defer c.jobs.acts.Done()
			c.carryOut(acts)
		}
	}
	return resp
}

// clusterTres is the cluster's TRES list, as assoc_mgr's TRES table is
// sent to a registering slurmd (without accounting: the built-in types).
func (c *Controller) clusterTres() []msg.TresRec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var cpus, mem uint64
	for _, n := range c.nodes {
		cpus += uint64(n.CPUsEfctv) // as 22.05's cluster TRES
		mem += n.RealMemory
	}
	return []msg.TresRec{
		{Count: cpus, ID: 1, Type: msg.Str("cpu")},
		{Count: mem, ID: 2, Type: msg.Str("mem")},
		{ID: 3, Type: msg.Str("energy")},
		{Count: uint64(len(c.nodes)), ID: 4, Type: msg.Str("node")},
		{Count: cpus, ID: 5, Type: msg.Str("billing")},
		{ID: 6, Name: msg.Str("disk"), Type: msg.Str("fs")},
		{ID: 7, Type: msg.Str("vmem")},
		{ID: 8, Type: msg.Str("pages")},
	}
}

// errUnknownNode is validate_node_specs' ENOENT, worded as Slurm logs it.
var errUnknownNode error = unknownNodeError{}

type unknownNodeError struct{}

func (unknownNodeError) Error() string { return "No such file or directory" }

// ValidateRegistration is validate_jobs_on_node plus validate_node_specs:
// the job steps the node reports are checked against the job table (when
// a job manager is attached; the resulting kills are sent in the
// background), the reported resources against the configuration, and the
// node's state moves. newlyUp is true when the node became available for
// jobs.
func (c *Controller) ValidateRegistration(reg *msg.NodeRegistration, protoVersion uint16) (newlyUp bool, err error) {
	newlyUp, out, err := c.registerNode(reg, protoVersion)
	c.waitResync(context.Background(), out)
	if len(out.Actions) > 0 {
		c.spawnActions(out.Actions)
	}
	return newlyUp, err
}

// registerNode does the work of a registration under the lock; the
// outcome's journal ticket and actions are the caller's.
func (c *Controller) registerNode(reg *msg.NodeRegistration, protoVersion uint16) (newlyUp bool, out jobs.Outcome, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now().Unix()
	n := c.nodeIndex[reg.NodeName.Value]
	if n == nil {
		c.log.Error(fmt.Sprintf("slurmd registered on unknown node %s", reg.NodeName.Value))
		return false, out, errUnknownNode
	}

	// validate_jobs_on_node: boot and start times, then the jobs.
	if n.UpTime > int64(reg.UpTime) {
		c.log.Log(context.Background(), levelVerbose, fmt.Sprintf("Node %s rebooted %d secs ago", n.Name, reg.UpTime))
	}
	if int64(reg.UpTime) <= now {
		n.UpTime = int64(reg.UpTime)
		n.BootTime = now - int64(reg.UpTime)
		n.SlurmdStartTime = reg.SlurmdStartTime
	} else {
		c.log.Error(fmt.Sprintf("Node up_time is invalid: %d>%d", reg.UpTime, now))
	}
	if waitingForNodeBoot(n) {
		// Told to reboot and not booted since: the registration is
		// from before the reboot (validate_node_specs keeps only the
		// version).
		c.log.Debug(fmt.Sprintf("Still waiting for boot of node %s", n.Name))
		n.ProtocolVersion, n.Version = protoVersion, reg.Version.Value
		return false, out, nil
	}
	if waitingForNodePowerDown(n, int64(c.cfg.Conf.SuspendTimeout)) {
		c.log.Debug(fmt.Sprintf("Still waiting for node '%s' to power off", n.Name))
		n.ProtocolVersion, n.Version = protoVersion, reg.Version.Value
		return false, out, nil
	}
	n.psBooting = false
	out = c.validateJobsOnNode(reg, n, now)
	return c.validateNodeSpecs(reg, protoVersion, n, now), out, nil
}

// validateNodeSpecs is validate_node_specs, under the lock.
func (c *Controller) validateNodeSpecs(reg *msg.NodeRegistration, protoVersion uint16, n *Node, now int64) (newlyUp bool) {
	cfg := c.cfg
	wasAvail := n.Available()
	n.ProtocolVersion = protoVersion
	n.Version = reg.Version.Value

	var reasons []string
	if r := c.noteGres(n, reg.GresInfo); r != "" {
		reasons = append(reasons, r)
	}
	if !cfg.ConfigOverrides {
		got := uint32(reg.Sockets) * uint32(reg.Cores) * uint32(reg.Threads)
		want := uint32(n.Sockets) * uint32(n.Cores) * uint32(n.Threads)
		if got < want {
			c.log.Debug(fmt.Sprintf("Node %s has low socket*core*thread count (%d < %d)", n.Name, got, want))
			reasons = append(reasons, "Low socket*core*thread count")
		}
		if reg.CPUs < n.CPUs {
			c.log.Debug(fmt.Sprintf("Node %s has low cpu count (%d < %d)", n.Name, reg.CPUs, n.CPUs))
			reasons = append(reasons, "Low CPUs")
		}
		pct := regMemPercent(cfg, n)
		if n.RealMemory != 0 && float64(reg.RealMemory)/float64(n.RealMemory)*100 < pct {
			c.log.Debug(fmt.Sprintf("Node %s has low real_memory size (%d / %d) < %.2f%%", n.Name, reg.RealMemory, n.RealMemory, pct))
			reasons = append(reasons, fmt.Sprintf("Low RealMemory (reported:%d < %.2f%% of configured:%d)", reg.RealMemory, pct, n.RealMemory))
		}
		if reg.TmpDisk < n.TmpDisk {
			c.log.Debug(fmt.Sprintf("Node %s has low tmp_disk size (%d < %d)", n.Name, reg.TmpDisk, n.TmpDisk))
			reasons = append(reasons, "Low TmpDisk")
		}
	}
	if reg.CPUSpecList.Valid && n.CPUSpecList == "" {
		// _build_node_spec_bitmap: the slurmd's CPU IDs give the cores
		// (CPU / ThreadsPerCore); CPUEfctv stays as configured.
		n.CPUSpecList = reg.CPUSpecList.Value
		n.specCores = specCoresOf(n.CPUSpecList, int(max(n.Threads, 1)), int(n.Sockets)*int(n.Cores))
		n.CoreSpecCnt = uint16(len(n.specCores))
	}
	n.Arch, n.OS = reg.Arch.Value, reg.OS.Value
	if n.CPULoad != reg.CPULoad {
		n.CPULoad, n.CPULoadTime = reg.CPULoad, now
	}
	if n.FreeMem != reg.FreeMem {
		n.FreeMem, n.FreeMemTime = reg.FreeMem, now
	}
	if n.IsNoRespond() || n.Has(msg.NodeStatePoweringUp) || poweredDownish(n) {
		c.log.Info(fmt.Sprintf("Node %s now responding", n.Name))
		// Back from power saving (maybe out of band, or after
		// ResumeTimeout): idle from now on, for SuspendTime to count.
		if n.Has(msg.NodeStatePoweringUp) || n.Has(msg.NodeStatePoweredDown) {
			n.LastBusy = now
		}
		if n.Has(msg.NodeStatePoweringUp) {
			n.LastResponse = now
		}
		wasPoweredDown := n.Has(msg.NodeStatePoweredDown)
		n.State &^= msg.NodeStateNoRespond | msg.NodeStatePoweringUp | msg.NodeStatePoweredDown | msg.NodeStatePoweringDown
		c.lastNodeUpdate = now
		if wasPoweredDown {
			nodeUp(n) // accounting's node up clears the reason
		}
	}
	wasInvalid := n.Has(msg.NodeStateInvalidReg)
	n.State &^= msg.NodeStateInvalidReg
	flags := n.State &^ msg.NodeStateBase

	jobCount := n.RunJobs + n.CompletingJobs
	switch {
	case len(reasons) > 0:
		reason := strings.Join(reasons, ", ")
		n.State |= msg.NodeStateInvalidReg
		if !wasInvalid {
			c.log.Error(fmt.Sprintf("Setting node %s state to INVAL with reason:%s", n.Name, reason))
		}
		if !n.IsDown() && !n.IsDrain() && !n.IsFail() {
			c.drainNode(n, reason, cfg.SlurmUID, now)
		}
	case reg.Status == eslurmdPrologFailed || reg.Status == eslurmdSetupEnvFailed:
		if !n.IsDrain() && !n.IsFail() {
			c.log.Error(fmt.Sprintf("validate_node_specs: Prolog or job env setup failure on node %s, draining the node", n.Name))
			reason := "Prolog error"
			if reg.Status == eslurmdSetupEnvFailed {
				reason = "Job env setup error"
			}
			c.drainNode(n, reason, cfg.SlurmUID, now)
		}
	case n.IsUnknown() || n.IsFuture():
		c.log.Debug(fmt.Sprintf("validate_node_specs: node %s registered with %d jobs", n.Name, len(reg.Steps)))
		if n.IsFuture() {
			flags &^= msg.NodeStateRebootRequested | msg.NodeStateRebootIssued
		}
		if jobCount > 0 {
			n.State = msg.NodeStateAllocated | flags
		} else {
			n.State = msg.NodeStateIdle | flags
			n.LastBusy = now
		}
	case n.IsDown() && (cfg.ReturnToService == 2 || n.Has(msg.NodeStateRebootIssued) ||
		(cfg.ReturnToService == 1 && n.Reason == "Not responding" && n.BootTime < n.LastResponse)):
		flags &^= msg.NodeStateRebootIssued
		if n.NextState != noVal {
			flags &^= msg.NodeStateDrain
		}
		if n.NextState != noVal && n.NextState&msg.NodeStateBase == msg.NodeStateDown {
			n.State = msg.NodeStateDown | flags
			c.setNodeRebootReason(n, "reboot complete", now)
		} else if jobCount > 0 {
			n.State = msg.NodeStateAllocated | flags
		} else {
			n.State = msg.NodeStateIdle | flags
			n.LastBusy = now
		}
		n.NextState = noVal
		n.resuming = false
		c.log.Info(fmt.Sprintf("node %s returned to service", n.Name))
		c.trigNodeUp(n)
		if !n.IsDrain() && !n.IsDown() && !n.IsFail() {
			nodeUp(n)
		}
	case n.LastResponse != 0 && n.BootTime > n.LastResponse && cfg.ReturnToService != 2:
		if n.Reason == "" || n.Reason == "Not responding" {
			n.Reason, n.ReasonTime, n.ReasonUID = "Node unexpectedly rebooted", now, cfg.SlurmUID
		}
		c.log.Info(fmt.Sprintf("validate_node_specs: Node %s unexpectedly rebooted boot_time=%d last response=%d", n.Name, n.BootTime, n.LastResponse))
		c.makeNodeDown(n)
	case n.IsAllocated() && jobCount == 0:
		n.State = msg.NodeStateIdle | flags
		n.LastBusy = now
	case n.Has(msg.NodeStateCompleting) && jobCount == 0:
		n.State &^= msg.NodeStateCompleting
	}
	if n.IsIdle() {
		n.Owner = noVal
	}
	n.LastResponse = now
	n.BootReqTime = 0
	c.lastNodeUpdate = now
	return !wasAvail && n.Available()
}

// nodeUp is what clusteracct_storage_g_node_up does to the node record
// whatever the accounting plugin: the node is in service, so its reason is
// cleared.
func nodeUp(n *Node) {
	n.Reason, n.ReasonTime, n.ReasonUID = "", 0, noVal
}

// drainNode is _drain_node: set DRAIN, keeping an admin's reason (only
// "Not responding" is replaced).
func (c *Controller) drainNode(n *Node, reason string, uid uint32, now int64) {
	if n.IsDrain() {
		return
	}
	n.State |= msg.NodeStateDrain
	c.log.Info(fmt.Sprintf("drain_nodes: node %s state set to DRAIN", n.Name))
	c.trigNodeDrained(n)
	if n.Reason == "" || strings.HasPrefix(n.Reason, "Not responding") {
		n.Reason, n.ReasonTime, n.ReasonUID = reason, now, uid
	}
}

// regMemPercent is node_reg_mem_percent, or without it
// DEFAULT_CLOUD_REG_MEM_PERCENT for a CLOUD node (a cloud instance's
// memory is seldom exactly what was configured) and
// DEFAULT_NODE_REG_MEM_PERCENT for others.
func regMemPercent(cfg *Config, n *Node) float64 {
	switch {
	case cfg.NodeRegMemPercent != -1:
		return cfg.NodeRegMemPercent
	case n.Has(msg.NodeStateCloud):
		return 90
	default:
		return 100
	}
}

// makeNodeDown is _make_node_down (jobs on the node are the job manager's
// business; it learns through the node state).
func (c *Controller) makeNodeDown(n *Node) {
	n.State = msg.NodeStateDown | (n.State &^ msg.NodeStateBase &^ msg.NodeStateCompleting)
	n.Owner = noVal
	c.lastNodeUpdate = c.now().Unix()
	c.trigNodeDown(n)
}

// setNodeDown is set_node_down_ptr: DOWN with reason (kept if an admin
// gave one).
func (c *Controller) setNodeDown(n *Node, reason string, now int64) {
	if n.Reason == "" || strings.HasPrefix(n.Reason, "Not responding") {
		if reason != "" {
			n.Reason, n.ReasonTime, n.ReasonUID = reason, now, c.cfg.SlurmUID
		} else {
			n.Reason, n.ReasonTime, n.ReasonUID = "", 0, noVal
		}
	}
	c.makeNodeDown(n)
}

func hasFlag(l []string, f string) bool {
	for _, s := range l {
		if strings.EqualFold(s, f) {
			return true
		}
	}
	return false
}
