package ctld

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// The administrative RPCs of scontrol and strigger that change how the
// controller logs (setdebug, setdebugflags, schedloglevel) or report
// subsystems this controller does not have (front-end nodes, burst
// buffers, the accounting association manager, auth/jwt tokens,
// triggers), answered as 22.05 answers them.

// errno values some of these RPCs answer with, as Slurm sends them.
const (
	errnoESRCH  = 3
	errnoEACCES = 13
	errnoEINVAL = 22
)

// adminState holds what the debug RPCs changed. The values apply to the
// configuration they were set under (cfg): a reconfigure reads slurm.conf
// again and they lapse, as 22.05's reconfigure resets them.
type adminState struct {
	cfg        *Config
	level      *uint16 // SlurmctldDebug, log_level_t number
	flags      *uint64 // DebugFlags bits
	schedLevel *uint16 // SlurmSchedLogLevel
}

// topoCache is topology.conf as read for one configuration. It is kept
// in Controller.topo, outside the lock: rpcTopoInfo only reads the
// controller, so it holds the read lock, and two callers reading the file
// at once both store the same answer.
type topoCache struct {
	cfg      *Config
	switches []msg.TopoSwitch
}

// logControl is what slurmlog.Controlled offers: the running log's
// threshold and DebugFlags.
type logControl interface {
	SetLevel(slog.Level)
	SetDebugFlags([]string)
}

func (c *Controller) addAdminRPCs(m server.Mux) {
	f := func(h func(context.Context, *server.Request) *server.Response) server.Handler {
		return server.HandlerFunc(h)
	}
	m[msgtype.REQUEST_SET_DEBUG_LEVEL] = f(c.rpcSetDebugLevel)
	m[msgtype.REQUEST_SET_DEBUG_FLAGS] = f(c.rpcSetDebugFlags)
	m[msgtype.REQUEST_SET_SCHEDLOG_LEVEL] = f(c.rpcSetSchedLogLevel)
	m[msgtype.REQUEST_TOPO_INFO] = f(c.rpcTopoInfo)
	m[msgtype.REQUEST_FRONT_END_INFO] = f(c.rpcFrontEndInfo)
	m[msgtype.REQUEST_BURST_BUFFER_INFO] = f(c.rpcBurstBufferInfo)
	m[msgtype.REQUEST_BURST_BUFFER_STATUS] = f(c.rpcBurstBufferStatus)
	m[msgtype.REQUEST_UPDATE_FRONT_END] = f(c.rpcUpdateFrontEnd)
	m[msgtype.REQUEST_SHARE_INFO] = f(c.rpcShareInfo)
	m[msgtype.REQUEST_ASSOC_MGR_INFO] = f(c.rpcAssocMgrInfo)
	m[msgtype.REQUEST_AUTH_TOKEN] = f(c.rpcAuthToken)
	m[msgtype.REQUEST_TRIGGER_GET] = f(c.rpcTriggerGet)
	m[msgtype.REQUEST_TRIGGER_SET] = f(c.rpcTriggerSet)
	m[msgtype.REQUEST_TRIGGER_CLEAR] = f(c.rpcTriggerClear)
	m[msgtype.REQUEST_TRIGGER_PULL] = f(c.rpcTriggerPull)
}

// adminFresh returns the admin state for the current configuration,
// dropping what was set under an older one. Called under the write lock.
func (c *Controller) adminFresh() *adminState {
	if c.admin.cfg != c.cfg {
		c.admin = adminState{cfg: c.cfg}
	}
	return &c.admin
}

// logLevelNames are log_num2string's names of the log_level_t numbers.
var logLevelNames = []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}

// slurmctldDebug is SlurmctldDebug as scontrol show config reports it.
// Called under the read lock.
func (c *Controller) slurmctldDebug() uint16 {
	if c.admin.cfg == c.cfg && c.admin.level != nil {
		return *c.admin.level
	}
	return ctldDebugLevel(c.cfg.Conf.SlurmctldDebug, c.opts.Verbose)
}

// debugFlags is DebugFlags as bits. Called under the read lock.
func (c *Controller) debugFlags() uint64 {
	if c.admin.cfg == c.cfg && c.admin.flags != nil {
		return *c.admin.flags
	}
	return conf.DebugFlagMask(c.cfg.Conf.DebugFlags)
}

// debugFlagOn reports whether a DebugFlags flag is on now (slurm.conf's,
// or as setdebugflags left it). Takes the read lock.
func (c *Controller) debugFlagOn(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.debugFlags()&conf.DebugFlagMask([]string{name}) != 0
}

// schedLogLevel is SlurmSchedLogLevel. Called under the read lock.
func (c *Controller) schedLogLevel() uint16 {
	if c.admin.cfg == c.cfg && c.admin.schedLevel != nil {
		return *c.admin.schedLevel
	}
	return c.cfg.Conf.SlurmSchedLogLevel
}

// rpcSetDebugLevel is _slurm_rpc_set_debug_level (scontrol setdebug):
// root/SlurmUser only; the level is clamped to quiet..debug5.
func (c *Controller) rpcSetDebugLevel(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SetDebugLevelRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("set debug level request from non-super user uid=%d", r.Identity.UID))
		return server.RC(errnoEACCES)
	}
	n := min(req.Level, uint32(len(logLevelNames)-1))
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.adminFresh()
	if lc, ok := c.log.Handler().(logControl); ok {
		l, _ := slurmlog.ParseLevel(strconv.Itoa(int(n)))
		lc.SetLevel(l)
	}
	c.log.Info(fmt.Sprintf("Set debug level to '%s'", logLevelNames[n]))
	v := uint16(n)
	st.level = &v
	c.confUpdate = c.now().Unix()
	return server.RC(0)
}

// rpcSetDebugFlags is _slurm_rpc_set_debug_flags (scontrol
// setdebugflags): the minus bits are cleared, then the plus bits set.
func (c *Controller) rpcSetDebugFlags(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SetDebugFlagsRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("set debug flags request from non-super user uid=%d", r.Identity.UID))
		return server.RC(errnoEACCES)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.debugFlags()&^req.Minus | req.Plus
	st := c.adminFresh()
	st.flags = &v
	names := conf.DebugFlagNames(v)
	if lc, ok := c.log.Handler().(logControl); ok {
		lc.SetDebugFlags(names)
	}
	c.confUpdate = c.now().Unix()
	s := strings.Join(names, ",")
	if s == "" {
		s = "none"
	}
	c.log.Info("Set DebugFlags to " + s)
	return server.RC(0)
}

// rpcSetSchedLogLevel is _slurm_rpc_set_schedlog_level (scontrol
// schedloglevel): disabled without SlurmSchedLogFile; the level is 0 or 1.
// Level 1 writes the change to SlurmSchedLogFile, as 22.05 does.
func (c *Controller) rpcSetSchedLogLevel(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.SetDebugLevelRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("set scheduler log level request from non-super user uid=%d", r.Identity.UID))
		return server.RC(errnoEACCES)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.Conf.SlurmSchedLogFile == "" {
		c.log.Error("set scheduler log level failed: no log file!")
		return server.RC(slurmerr.ESLURM_DISABLED)
	}
	v := uint16(min(req.Level, 1))
	st := c.adminFresh()
	st.schedLevel = &v
	c.confUpdate = c.now().Unix()
	if v > 0 {
		// sched_log_alter reopens the file; sched_info writes there only
		// at level 1.
		line := fmt.Sprintf("sched: [%s] Set scheduler log level to %d\n", c.now().Format("2006-01-02T15:04:05.000"), v)
		if err := appendSchedLog(c.cfg.Conf.SlurmSchedLogFile, line); err != nil {
			c.log.Error(fmt.Sprintf("set scheduler log level: %v", err))
		}
	}
	return server.RC(0)
}

// appendSchedLog adds a line to SlurmSchedLogFile. Only the level change
// is written there: this controller's scheduler does not log to it yet.
func appendSchedLog(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o640)
	if err != nil {
		return fmt.Errorf("unable to open logfile `%s': %w", path, err)
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rpcTopoInfo is _slurm_rpc_get_topo: the switches of topology.conf under
// TopologyPlugin=topology/tree, none otherwise.
func (c *Controller) rpcTopoInfo(context.Context, *server.Request) *server.Response {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.topo.Load()
	if t == nil || t.cfg != c.cfg {
		t = &topoCache{cfg: c.cfg, switches: c.loadTopology()}
		c.topo.Store(t)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_TOPO_INFO, Body: &msg.TopoInfoResponse{Switches: t.switches}}
}

// loadTopology reads topology.conf beside slurm.conf. 22.05 stops at
// start-up on a broken file; here the error is logged and no switch is
// reported.
func (c *Controller) loadTopology() []msg.TopoSwitch {
	if c.cfg.Conf.TopologyPlugin != "topology/tree" {
		return nil
	}
	path := filepath.Join(filepath.Dir(c.cfg.Path), "topology.conf")
	t, err := conf.LoadTopology(conf.OSFS{}, path)
	if err != nil {
		c.log.Error(fmt.Sprintf("topology/tree: %s: %v", path, err))
		return nil
	}
	nodes := c.switchNodes(t.Switches)
	out := make([]msg.TopoSwitch, len(t.Switches))
	for i, s := range t.Switches {
		out[i] = msg.TopoSwitch{Level: s.Level, LinkSpeed: s.LinkSpeed, Name: optStr(s.Name),
			Nodes: optStr(nodes[i]), Switches: optStr(s.Switches)}
	}
	return out
}

// switchNodes is what the topology/tree plugin reports as each switch's
// nodes: a leaf's Nodes= as written; for the others the configured nodes
// below them, in Slurm's sorted ranged form.
func (c *Controller) switchNodes(sw []conf.Switch) []string {
	idx := map[string]int{}
	for i, s := range sw {
		idx[s.Name] = i
	}
	below := make([]map[string]bool, len(sw))
	var invalid []string
	maxLevel := uint16(0)
	for i, s := range sw {
		maxLevel = max(maxLevel, s.Level)
		if s.Level != 0 {
			continue
		}
		below[i] = map[string]bool{}
		names, err := hostlist.Expand(s.Nodes)
		if err != nil {
			c.log.Error(fmt.Sprintf("Invalid node name (%s) in switch config (%s)", s.Nodes, s.Name))
			continue
		}
		for _, n := range names {
			if c.nodeIndex[n] != nil {
				below[i][n] = true
			} else {
				invalid = append(invalid, n)
			}
		}
	}
	if len(invalid) > 0 {
		c.log.Error("WARNING: Invalid hostnames in switch configuration: " + hostlist.Compress(invalid))
	}
	// Children sit on lower levels, so one pass per level fills them in.
	for l := uint16(1); l <= maxLevel; l++ {
		for i, s := range sw {
			if s.Level != l {
				continue
			}
			below[i] = map[string]bool{}
			children, _ := hostlist.Expand(s.Switches) // checked by LoadTopology
			for _, ch := range children {
				for n := range below[idx[ch]] {
					below[i][n] = true
				}
			}
		}
	}
	out := make([]string, len(sw))
	for i, s := range sw {
		if s.Level == 0 {
			out[i] = s.Nodes
			continue
		}
		var names []string
		for _, n := range c.nodes {
			if below[i][n.Name] {
				names = append(names, n.Name)
			}
		}
		out[i] = hostlist.CompressSorted(names)
	}
	return out
}

// rpcFrontEndInfo is _slurm_rpc_dump_front_end on a build without
// front-end nodes: no records.
func (c *Controller) rpcFrontEndInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.FrontEndInfoRequest](r.Body)
	// last_front_end_update stays 0 without front-end nodes, so every
	// request with a time is "no change".
	if req.LastUpdate-1 >= 0 {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_FRONT_END_INFO, Body: &msg.FrontEndInfoResponse{LastUpdate: c.now().Unix()}}
}

// rpcBurstBufferInfo is _slurm_rpc_burst_buffer_info without a burst
// buffer plugin: no plugin records.
func (c *Controller) rpcBurstBufferInfo(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_BURST_BUFFER_INFO, Body: &msg.BurstBufferInfoResponse{}}
}

// rpcBurstBufferStatus is _slurm_rpc_burst_buffer_status without a burst
// buffer plugin: no status text.
func (c *Controller) rpcBurstBufferStatus(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_BURST_BUFFER_STATUS, Body: &msg.BBStatusResponse{}}
}

// rpcUpdateFrontEnd is _slurm_rpc_update_front_end on a build without
// front-end nodes: operators are told the name is not a node.
func (c *Controller) rpcUpdateFrontEnd(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.UpdateFrontEndRequest](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, UPDATE_FRONT_END RPC from uid=%d", r.Identity.UID))
		c.log.Info(fmt.Sprintf("_slurm_rpc_update_front_end for %s: %s", nullText(req.Name),
			slurmerr.Message(slurmerr.ESLURM_USER_ID_MISSING)))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	c.log.Info(fmt.Sprintf("_slurm_rpc_update_front_end for %s: %s", nullText(req.Name),
		slurmerr.Message(slurmerr.ESLURM_INVALID_NODE_NAME)))
	return server.RC(slurmerr.ESLURM_INVALID_NODE_NAME)
}

// rpcShareInfo is _slurm_rpc_get_shares without accounting: the
// association manager has no association, so the reply is empty (no TRES
// names either, as assoc_mgr_get_shares returns before filling them).
func (c *Controller) rpcShareInfo(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_SHARE_INFO, Body: &msg.SharesResponse{}}
}

// rpcAssocMgrInfo is _slurm_rpc_assoc_mgr_info without accounting: the
// association manager knows the TRES and holds no association, QOS or
// user.
func (c *Controller) rpcAssocMgrInfo(context.Context, *server.Request) *server.Response {
	c.mu.RLock()
	tres := c.cfg.Conf.AccountingStorageTRES
	c.mu.RUnlock()
	resp := &msg.AssocMgrInfoResponse{}
	for _, t := range assocTRES(tres) {
		resp.TRESNames = append(resp.TRESNames, msg.Str(t))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_ASSOC_MGR_INFO, Body: resp}
}

// assocTRES are the association manager's TRES names: the default ones,
// then those AccountingStorageTRES adds.
func assocTRES(extra []string) []string {
	out := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	for _, t := range extra {
		found := false
		for _, o := range out {
			if strings.EqualFold(o, t) {
				found = true
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// rpcAuthToken is _slurm_rpc_auth_token without auth/jwt: the requester's
// checks are made as 22.05 makes them, then no token can be generated, so
// the reply carries none (scontrol prints "Error fetching token"). With
// AuthAltTypes=auth/jwt it is the same, as goslurm has no auth/jwt yet.
func (c *Controller) rpcAuthToken(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.TokenRequest](r.Body)
	cfg := c.Config()
	uid := r.Identity.UID
	if cfg.Conf.AuthAltParameters.Has("disable_token_creation") && !cfg.SlurmUser(uid) {
		c.log.Error(fmt.Sprintf("_slurm_rpc_auth_token: attempt to retrieve a token while token creation disabled UID=%d", uid))
		return server.RC(slurmerr.ESLURM_ACCESS_DENIED)
	}
	name := ""
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		name = u.Username
	}
	switch {
	case req.Username.Valid && !cfg.SlurmUser(uid) && req.Username.Value != name:
		c.log.Error(fmt.Sprintf("_slurm_rpc_auth_token: attempt to retrieve a token for a different user=%s by UID=%d", req.Username.Value, uid))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	case !req.Username.Valid && name == "":
		c.log.Error(fmt.Sprintf("_slurm_rpc_auth_token: attempt to retrieve a token for a missing username by UID=%d", uid))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	if cfg.Conf.AuthAltTypes.Has("auth/jwt") {
		c.log.Error("_slurm_rpc_auth_token: auth/jwt is not supported by goslurm's slurmctld, no token generated")
	}
	return &server.Response{MsgType: msgtype.RESPONSE_AUTH_TOKEN, Body: &msg.TokenResponse{}}
}
