package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// show_flags bits of the info requests.
const (
	showAll    uint16 = 0x01
	showFuture uint16 = 0x80
)

func (c *Controller) defaultMux() server.Mux {
	f := func(h func(context.Context, *server.Request) *server.Response) server.Handler {
		return server.HandlerFunc(h)
	}
	m := server.Mux{
		msgtype.REQUEST_PING:                     f(c.rpcPing),
		msgtype.MESSAGE_NODE_REGISTRATION_STATUS: f(c.rpcNodeRegistration),
		msgtype.REQUEST_NODE_INFO:                f(c.rpcNodeInfo),
		msgtype.REQUEST_NODE_INFO_SINGLE:         f(c.rpcNodeInfoSingle),
		msgtype.REQUEST_PARTITION_INFO:           f(c.rpcPartitionInfo),
		msgtype.REQUEST_BUILD_INFO:               f(c.rpcBuildInfo),
		msgtype.REQUEST_UPDATE_NODE:              f(c.rpcUpdateNode),
		msgtype.REQUEST_RECONFIGURE:              f(c.rpcReconfigure),
		msgtype.REQUEST_SHUTDOWN:                 f(c.rpcShutdown),
		msgtype.REQUEST_JOB_INFO:                 f(c.rpcJobInfoEmpty),
		msgtype.REQUEST_JOB_USER_INFO:            f(c.rpcJobInfoEmpty),
		msgtype.REQUEST_JOB_INFO_SINGLE:          f(c.rpcJobInfoSingleNone),
		msgtype.REQUEST_JOB_STEP_INFO:            f(c.rpcStepInfoEmpty),
		msgtype.REQUEST_FED_INFO:                 f(c.rpcFedInfo),
		msgtype.REQUEST_UPDATE_PARTITION:         f(c.rpcUpdatePartition),
		msgtype.REQUEST_CREATE_PARTITION:         f(c.rpcUpdatePartition),
		msgtype.REQUEST_DELETE_PARTITION:         f(c.rpcDeletePartition),
		msgtype.REQUEST_RESERVATION_INFO:         f(c.rpcResvInfo),
		msgtype.REQUEST_CREATE_RESERVATION:       f(c.rpcCreateResv),
		msgtype.REQUEST_UPDATE_RESERVATION:       f(c.rpcUpdateResv),
		msgtype.REQUEST_DELETE_RESERVATION:       f(c.rpcDeleteResv),
		msgtype.REQUEST_LICENSE_INFO:             f(c.rpcLicenseInfo),
		msgtype.REQUEST_REBOOT_NODES:             f(c.rpcRebootNodes),
		msgtype.REQUEST_STATS_INFO:               f(c.rpcStatsInfo),
	}
	c.addAdminRPCs(m)
	for _, t := range notYet {
		m[t] = f(c.rpcNotYet)
	}
	return m
}

// rpcPing is _slurm_rpc_ping: anyone may ask.
func (c *Controller) rpcPing(context.Context, *server.Request) *server.Response {
	return server.RC(0)
}

// noChange is the "no change since last update" test of the info RPCs.
func noChange(lastUpdate, changed int64) bool {
	return lastUpdate-1 >= changed
}

func (c *Controller) privileged(uid uint32) bool { return c.cfg.SuperUser(uid) }

// visibleParts is build_visible_parts without AllowGroups filtering:
// privileged users see every partition, others the non-hidden ones.
func (c *Controller) visibleParts(uid uint32, flags uint16) map[string]bool {
	vis := map[string]bool{}
	for _, p := range c.parts {
		if flags&showAll != 0 || c.privileged(uid) || p.Flags&msg.PartFlagHidden == 0 {
			vis[p.Name] = true
		}
	}
	return vis
}

func (c *Controller) rpcNodeInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.InfoRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if noChange(req.LastUpdate, max(c.lastNodeUpdate, c.lastPartUpdate)) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	vis := c.visibleParts(r.Identity.UID, req.ShowFlags)
	resp := &msg.NodeInfoResponse{LastUpdate: c.now().Unix(), Nodes: make([]msg.Node, len(c.nodes))}
	for i, n := range c.nodes {
		if c.nodeHidden(n, req.ShowFlags, r.Identity.UID, vis) {
			resp.Nodes[i] = c.blankNode()
		} else {
			resp.Nodes[i] = c.nodeRecord(n)
			c.nodeDetail(&resp.Nodes[i], n, req.ShowFlags)
		}
	}
	return &server.Response{MsgType: msgtype.RESPONSE_NODE_INFO, Body: resp}
}

func (c *Controller) rpcNodeInfoSingle(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.NodeInfoSingleRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	resp := &msg.NodeInfoResponse{LastUpdate: c.now().Unix()}
	n := c.nodeIndex[req.NodeName.Value]
	if !req.NodeName.Valid && len(c.nodes) > 0 {
		n = c.nodes[0]
	}
	// pack_one_node sends no record at all for a hidden node, and does not
	// hide a powered-down CLOUD node: it was asked for by name.
	if n != nil && !c.nodeHiddenByPart(n, req.ShowFlags, r.Identity.UID, c.visibleParts(r.Identity.UID, req.ShowFlags)) {
		resp.Nodes = []msg.Node{c.nodeRecord(n)}
		c.nodeDetail(&resp.Nodes[0], n, req.ShowFlags)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_NODE_INFO, Body: resp}
}

// nodeHidden is pack_all_node's test: nodes only in partitions the user
// cannot see, FUTURE nodes unless asked for, and powered-down CLOUD nodes
// (to everyone, root included, and whatever the flags) unless
// PrivateData=cloud, go out as blank records.
func (c *Controller) nodeHidden(n *Node, flags uint16, uid uint32, vis map[string]bool) bool {
	if c.nodeHiddenByPart(n, flags, uid, vis) {
		return true
	}
	return c.cfg.Conf.PrivateDataFlags&conf.PrivateCloud == 0 &&
		n.Has(msg.NodeStateCloud) && n.Has(msg.NodeStatePoweredDown)
}

// nodeHiddenByPart is the part of the test pack_one_node shares: partition
// visibility and FUTURE nodes.
func (c *Controller) nodeHiddenByPart(n *Node, flags uint16, uid uint32, vis map[string]bool) bool {
	if flags&showAll == 0 && !c.privileged(uid) && len(n.Partitions) > 0 {
		hidden := true
		for _, p := range n.Partitions {
			if vis[p] {
				hidden = false
			}
		}
		if hidden {
			return true
		}
	}
	return n.IsFuture() && flags&showFuture == 0
}

func (c *Controller) blankNode() msg.Node {
	return msg.Node{SelectNodeInfo: msg.SelectNodeInfo{PluginID: c.cfg.SelectPlugin}}
}

// nodeRecord is _pack_node's view of a node: configured resources, state,
// what the last registration and ping said.
func (c *Controller) nodeRecord(n *Node) msg.Node {
	return msg.Node{
		Name: msg.Str(n.Name), NodeHostname: msg.Str(n.Hostname), NodeAddr: msg.Str(n.Addr),
		BcastAddress: optStr(n.BcastAddr), Port: n.Port,
		NextState: n.NextState, NodeState: n.State, Version: optStr(n.Version),
		CPUs: n.CPUs, Boards: n.Boards, Sockets: n.Sockets, Cores: n.Cores, Threads: n.Threads,
		RealMemory: n.RealMemory, TmpDisk: n.TmpDisk,
		Owner: n.Owner, CoreSpecCnt: n.CoreSpecCnt, CPUBind: n.CPUBind, MemSpecLimit: n.MemSpecLimit,
		CPUSpecList: optStr(n.CPUSpecList), CPUsEfctv: n.CPUsEfctv,
		CPULoad: n.CPULoad, FreeMem: n.FreeMem, Weight: n.Weight, ReasonUID: n.ReasonUID,
		BootTime: n.BootTime, LastBusy: n.LastBusy, ReasonTime: n.ReasonTime, SlurmdStartTime: n.SlurmdStartTime,
		SelectNodeInfo: msg.SelectNodeInfo{PluginID: c.cfg.SelectPlugin, AllocCPUs: n.AllocCPUs, AllocMemory: n.AllocMem, TresAllocFmtStr: optStr(n.allocTres())},
		Arch:           optStr(n.Arch), Features: optStr(n.Features), FeaturesAct: n.featuresActRecord(),
		Gres: optStr(n.Gres), OS: optStr(n.OS), Comment: optStr(n.Comment), Extra: optStr(n.Extra),
		Reason:        optStr(n.Reason),
		ExtSensors:    msg.ExtSensors{ConsumedEnergy: noVal64, Temperature: noVal},
		PowerCapWatts: noVal,
		TresFmtStr:    msg.Str(n.TresFmtStr()),
	}
}

func (c *Controller) rpcPartitionInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.InfoRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if noChange(req.LastUpdate, c.lastPartUpdate) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	vis := c.visibleParts(r.Identity.UID, req.ShowFlags)
	resp := &msg.PartitionInfoResponse{LastUpdate: c.now().Unix()}
	for _, p := range c.parts {
		// _pack_part: operators see every partition, hidden ones too;
		// others what build_visible_parts lets them see.
		if !vis[p.Name] {
			continue
		}
		resp.Partitions = append(resp.Partitions, p.record(len(c.nodes)))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_PARTITION_INFO, Body: resp}
}

// rpcFedInfo: the cluster is not federated (one 0 byte).
func (c *Controller) rpcFedInfo(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_FED_INFO, Body: &msg.FedInfoResponse{}}
}

// rpcReconfigure is _slurm_rpc_reconfigure_controller: root/SlurmUser
// only; slurm.conf is read again and nodes are told to reconfigure.
func (c *Controller) rpcReconfigure(_ context.Context, r *server.Request) *server.Response {
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, RECONFIGURE RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	c.log.Info("Processing Reconfiguration Request")
	if err := c.Reconfigure(); err != nil {
		c.log.Error(fmt.Sprintf("_slurm_rpc_reconfigure_controller: %v", err))
		return server.RC(slurmerr.Code(err))
	}
	c.log.Info("_slurm_rpc_reconfigure_controller: completed")
	return &server.Response{MsgType: msgtype.RESPONSE_SLURM_RC, Body: rc0(), After: func(error) { c.ReconfigureNodes() }}
}

// rpcShutdown is _slurm_rpc_shutdown_controller: root/SlurmUser only.
// Options 0 also shuts the slurmd daemons down.
func (c *Controller) rpcShutdown(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.ShutdownRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, SHUTDOWN RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	c.log.Info("Shutdown request received")
	return &server.Response{MsgType: msgtype.RESPONSE_SLURM_RC, Body: rc0(), After: func(error) {
		if req.Options == 0 {
			c.broadcast(msgtype.REQUEST_SHUTDOWN, &msg.ShutdownRequest{})
		}
		if c.opts.Shutdown != nil {
			c.opts.Shutdown()
		}
	}}
}
